"""IGMP/MLD snooping: switch multicast flows, Multicast_Group members, IP_Multicast columns.

Expected strings and values are the reference ovn-northd 23.03's for the same NB (the
parity test tests/parity/test_mcast.py runs the reference on such NBs).
"""

from __future__ import annotations

from test_flows_l2 import Flows, Net

from ovn_northd_py.lflow.stages import LS_IN_L2_LKUP, LS_OUT_PRE_LB
from ovn_northd_py.northd.model import Datapath, Port
from ovn_northd_py.sync.datapaths import ip_multicast_config, smap_ullong
from ovn_northd_py.sync.mcast import desired_groups_of

SNOOP_FLOWS = {
    (100, "igmp", "igmp;"),
    (100, "mldv1 || mldv2", "igmp;"),
    (85, "ip4.mcast && ip4.dst == 224.0.0.0/24", 'outport = "_MC_flood_l2"; output;'),
    (85, "ip6.mcast_flood", 'outport = "_MC_flood"; output;'),
}
MROUTER = 'clone { outport = "_MC_mrouter_flood"; output; }; '
STATIC = 'outport ="_MC_static"; output;'


def _mcast_keys(f: Flows, sw: Datapath) -> set[tuple[int, str, str]]:
    return {k for k in f.keys(sw, LS_IN_L2_LKUP) if k[0] in (100, 85) or k[:2] == (80, "ip4.mcast || ip6.mcast")}


def _relay_router(
    net: Net, sw: Datapath, name: str, lrp_options: dict[str, str] | None = None, lsp_enabled: bool = True
) -> tuple[Datapath, Port]:
    r = net.router(name)
    r.nb.options["mcast_relay"] = "true"
    lrp = net.lrp(r, f"{name}-{sw.name}", "00:00:00:00:ff:01", "10.0.0.1/24", options=lrp_options)
    net.router_port(sw, lrp, f"{sw.name}-{name}", "router", enabled=lsp_enabled)
    return r, lrp


def test_no_snoop_no_flows_but_groups() -> None:
    net = Net()
    sw = net.switch("sw")
    net.lsp(sw, "p1", "00:00:00:00:00:01", options={"mcast_flood": "true", "mcast_flood_reports": "true"})
    f = net.build()
    assert _mcast_keys(f, sw) == set()
    groups = desired_groups_of(sw)
    assert groups[(sw.key, "_MC_static")] == (32771, ["p1"])
    assert groups[(sw.key, "_MC_mrouter_flood")] == (32770, ["p1"])


def test_unregistered_multicast_action_combinations() -> None:
    net = Net()
    plain = net.switch("plain")
    static = net.switch("static")
    relay = net.switch("relay")
    both = net.switch("both")
    unreg = net.switch("unreg")
    for sw in (plain, static, relay, both, unreg):
        sw.nb.other_config["mcast_snoop"] = "TRUE"  # smap_get_bool: case-insensitive
        net.lsp(sw, f"{sw.name}-p1", "00:00:00:00:00:01",
                options={"mcast_flood": "true"} if sw in (static, both, unreg) else {})
    unreg.nb.other_config["mcast_flood_unregistered"] = "true"
    # A disabled port's mcast_flood does not count; mcast_flood_reports alone is no relay.
    net.lsp(plain, "plain-p2", options={"mcast_flood": "true"}, enabled=False)
    net.lsp(plain, "plain-p3", options={"mcast_flood_reports": "true"})
    _relay_router(net, relay, "r1")
    _relay_router(net, both, "r2")
    f = net.build()
    unreg_flow = (80, "ip4.mcast || ip6.mcast")
    assert _mcast_keys(f, plain) == SNOOP_FLOWS | {(*unreg_flow, "drop;")}
    assert _mcast_keys(f, static) == SNOOP_FLOWS | {(*unreg_flow, STATIC)}
    assert _mcast_keys(f, relay) == SNOOP_FLOWS | {(*unreg_flow, MROUTER)}
    assert _mcast_keys(f, both) == SNOOP_FLOWS | {(*unreg_flow, MROUTER + STATIC)}
    assert _mcast_keys(f, unreg) == SNOOP_FLOWS
    assert (plain.key, "_MC_static") not in desired_groups_of(plain)
    assert desired_groups_of(plain)[(plain.key, "_MC_mrouter_flood")] == (32770, ["plain-p3"])
    assert desired_groups_of(relay)[(relay.key, "_MC_mrouter_flood")] == (32770, ["relay-r1"])


def test_relay_counts_disabled_router_ports_but_groups_do_not() -> None:
    net = Net()
    sw = net.switch("sw")
    sw.nb.other_config["mcast_snoop"] = "true"
    net.lsp(sw, "p1", "00:00:00:00:00:01")
    _relay_router(net, sw, "r1", lsp_enabled=False)
    f = net.build()
    assert (80, "ip4.mcast || ip6.mcast", MROUTER) in _mcast_keys(f, sw)
    assert (sw.key, "_MC_mrouter_flood") not in desired_groups_of(sw)


def test_router_static_group_has_enabled_flooding_ports() -> None:
    net = Net()
    sw1, sw2 = net.switch("sw1"), net.switch("sw2")
    r = net.router("r")  # no mcast_relay: the group exists anyway
    lrp1 = net.lrp(r, "r-sw1", "00:00:00:00:ff:01", "10.0.1.1/24", options={"mcast_flood": "True"})
    lrp2 = net.lrp(r, "r-sw2", "00:00:00:00:ff:02", "10.0.2.1/24", options={"mcast_flood": "true"},
                   enabled=False)
    net.router_port(sw1, lrp1, "sw1-r", "router")
    net.router_port(sw2, lrp2, "sw2-r", "router")
    assert desired_groups_of(r) == {(r.key, "_MC_static"): (32771, ["r-sw1"])}
    lrp1.crp = net.gateway(lrp1)  # a distributed gateway port is a member as its cr- port
    assert desired_groups_of(r) == {(r.key, "_MC_static"): (32771, ["cr-r-sw1"])}
    # Router-type switch ports of a router without mcast_relay are no mrouters.
    assert (sw1.key, "_MC_mrouter_flood") not in desired_groups_of(sw1)


def test_interconnect_remote_ports_punt_igmp() -> None:
    net = Net()
    ic = net.switch("ic")
    ic.nb.other_config.update({"mcast_snoop": "true", "interconn-ts": "ts1"})
    rem = net.lsp(ic, "rem", type="remote", enabled=False)
    net.lsp(ic, "vif", "00:00:00:00:00:01")
    nosnoop = net.switch("nosnoop")
    nosnoop.nb.other_config["interconn-ts"] = "ts2"
    net.lsp(nosnoop, "rem2", type="remote")
    f = net.build()
    assert f.keys(ic, LS_OUT_PRE_LB, 120) == {
        (120, 'inport == "rem" && igmp', "clone { igmp; }; next;"),
        (120, 'inport == "rem" && (mldv1 || mldv2)', "clone { igmp; }; next;"),
    }
    assert f.keys(nosnoop, LS_OUT_PRE_LB, 120) == set()
    assert all(flow.hint is None for flow in f.of(ic, LS_OUT_PRE_LB, 120).values())
    assert rem.name not in desired_groups_of(ic)[(ic.key, "_MC_flood")][1]


def test_smap_ullong_like_strtoull() -> None:
    assert smap_ullong({"k": " 40"}, "k", 7) == 40
    assert smap_ullong({"k": "+5"}, "k", 7) == 5
    assert smap_ullong({"k": "-1"}, "k", 7) == (1 << 64) - 1
    for bad in ("abc", "12abc", "0x10", "", "40 ", "99999999999999999999999"):
        assert smap_ullong({"k": bad}, "k", 7) == 7
    assert smap_ullong({}, "k", 7) == 7


def test_ip_multicast_columns() -> None:
    # Values the reference wrote for these other_config settings.
    assert ip_multicast_config({}) == {
        "enabled": False, "querier": True, "eth_src": "", "ip4_src": "", "ip6_src": "", "table_size": 2048,
        "idle_timeout": 300, "query_interval": 150, "query_max_resp": 1,
    }
    c = ip_multicast_config({"mcast_snoop": "yes", "mcast_querier": "FALSE", "mcast_idle_timeout": "5",
                             "mcast_query_interval": "1000", "mcast_query_max_response": "20",
                             "mcast_table_size": "abc", "mcast_eth_src": "foo"})
    assert (c["enabled"], c["querier"], c["idle_timeout"], c["query_interval"]) == (False, False, 15, 1000)
    assert (c["query_max_resp"], c["table_size"], c["eth_src"]) == (20, 2048, "foo")
    c = ip_multicast_config({"mcast_idle_timeout": "-1", "mcast_query_interval": "0", "mcast_table_size": "-5",
                             "mcast_query_max_response": "-1"})
    assert (c["idle_timeout"], c["query_interval"], c["table_size"], c["query_max_resp"]) == (3600, 1, -5, -1)
    c = ip_multicast_config({"mcast_idle_timeout": "abc", "mcast_query_interval": "-3", "mcast_table_size": "0"})
    assert (c["idle_timeout"], c["query_interval"], c["table_size"]) == (300, 3600, 0)
    assert ip_multicast_config({"mcast_idle_timeout": "15"})["query_interval"] == 7
