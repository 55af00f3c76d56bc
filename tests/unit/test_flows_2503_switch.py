"""OVN 25.03's switch pipeline (the profile ``OVN_25_03``): ACL eval/sample/action tiers,
stateful commits, merged QoS, egress FDB fallbacks, PMTU discovery, ARP/ND responder and L2 matches.

Expected strings are the reference ovn-northd 25.03's (Debian trixie), for the NB each test names
(tests/parity/test_acl.py, test_qos.py builders, the ``mixed`` and ovn-k-like workloads).
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from test_flows_acl import ACL_KEY, Nb, _port, _switch, acl

from ovn_northd_py.flows import FlowCtx, build_lflows
from ovn_northd_py.flows.acl_index import build_acl_index
from ovn_northd_py.flows.acl_rules import acl_flows
from ovn_northd_py.flows.ls_arp_rsp import nd_ns_match
from ovn_northd_py.flows.ls_qos import qos_flows
from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.model import Northd

CLEAR = "reg8[16] = 0; reg8[17] = 0; reg8[18] = 0; "
REJECT_IN = (
    "reg0 = 0; reject { /* eth.dst <-> eth.src; ip.dst <-> ip.src; is implicit. */ outport <-> inport; "
    "next(pipeline=egress,table=9); };"
)
CT_BLOCK = "ct_commit { ct_mark.blocked = 1; ct_label.obs_point_id = 0; }; "


def flows(a: SimpleNamespace, stateful: bool, inv: bool = True) -> set[Any]:
    return {(f.stage.name, f.priority, f.match, f.actions)
            for f in acl_flows(a, ACL_KEY, stateful, inv, frozenset(), OVN_25_03)}


def test_acls_set_verdict_bits_in_acl_eval() -> None:
    # Reference: switches "sl" (stateless) and "sf" (stateful) of build_switch_acls_nb.
    assert flows(acl(priority=304, match="tcp.dst == 304"), False) == {
        ("ls_out_acl_eval", 1304, "(tcp.dst == 304)", "reg8[16] = 1; next;")}
    assert flows(acl(action="drop", direction="from-lport", priority=302, match="tcp.dst == 302"), False) == {
        ("ls_in_acl_eval", 1302, "(tcp.dst == 302)", "reg8[17] = 1; next;")}
    assert flows(acl(action="reject", direction="from-lport", priority=303, match="tcp.dst == 303",
                     options={"apply-after-lb": "true"}), False) == {
        ("ls_in_acl_after_lb_eval", 1303, "(tcp.dst == 303)", "reg8[18] = 1; next;")}
    assert flows(acl(action="allow-related", direction="from-lport", priority=100, match="tcp.dst == 100"), True) == {
        ("ls_in_acl_eval", 1100, "reg0[7] == 1 && (tcp.dst == 100)", "reg8[16] = 1; reg0[1] = 1; next;"),
        ("ls_in_acl_eval", 1100, "reg0[8] == 1 && (tcp.dst == 100)", "reg8[16] = 1; next;")}
    assert flows(acl(action="allow-stateless", direction="from-lport", priority=101, match="tcp.dst == 101"),
                 True) == {
        ("ls_in_pre_acl", 1101, "tcp.dst == 101", "reg0[16] = 1; next;"),
        ("ls_in_acl_eval", 1101, "(tcp.dst == 101)", "reg8[16] = 1; next;")}
    assert flows(acl(action="reject", priority=107, match="tcp.dst == 107"), True) == {
        ("ls_out_acl_eval", 1107, "reg0[10] == 1 && (tcp.dst == 107)", "reg8[18] = 1; " + CT_BLOCK + "next;"),
        ("ls_out_acl_eval", 1107, "reg0[9] == 1 && (tcp.dst == 107)", "reg8[18] = 1; next;")}


def test_labels_load_the_observation_registers_and_log_related() -> None:
    # Reference: switch "sw0" of build_logging_nb.
    label = "reg0[13] = 1; reg3 = 9; reg9 = 9; reg8[0..7] = 0; reg8[8..15] = 0; reg8[19..20] = 2; "
    assert flows(acl(action="drop", priority=111, match="udp", label=9), True) == {
        ("ls_out_acl_eval", 1111, "reg0[10] == 1 && (udp)", f"reg8[17] = 1; {label}{CT_BLOCK}next;"),
        ("ls_out_acl_eval", 1111, "reg0[9] == 1 && (udp)", f"reg8[17] = 1; {label}next;")}
    assert ("ls_out_acl_eval", 1110, "(udp)", f"reg8[16] = 1; {label}next;") in flows(
        acl(action="allow-stateless", priority=110, match="udp", label=9), True)
    after = acl(direction="from-lport", priority=121, match="udp.dst==8", log=True, label=43, meter=["m2"],
                severity=["notice"], options={"log-related": "true", "apply-after-lb": "true"})
    log = 'log(severity=notice, verdict=allow, meter="m2"); '
    got = flows(after, True)
    assert ("ls_in_acl_after_lb_eval", 1121, "reg0[8] == 1 && (udp.dst==8)",
            (f"{log}reg8[16] = 1; reg0[1] = 1; reg0[13] = 1; reg3 = 43; reg9 = 43; reg8[0..7] = 0; "
            "reg8[8..15] = 0; reg8[19..20] = 1; next;")) in got
    assert ("ls_out_acl_eval", 65533,
            "ct.est && !ct.rel && !ct.new && !ct.inv && ct.rpl && ct_mark.blocked == 0 && ct_label.label == 43",
            f"{log}reg8[16] = 1; next;") in got


def test_23_03_acl_flows_unchanged() -> None:
    got = {(f.stage.name, f.actions) for f in acl_flows(acl(), ACL_KEY, True, True, frozenset(), OVN_23_03)}
    assert got == {("ls_out_acl", "reg0[1] = 1; next;"), ("ls_out_acl", "next;")}


def _build(stateful_acl: bool, default_acl_drop: bool = False) -> set[Any]:
    nd = Northd()
    acls = [acl(action="allow-related" if stateful_acl else "allow", match="ip4")]
    sw = _switch(nd, "sw", acls)
    _switch(nd, "none", [])
    _port(nd, sw, "p1")
    nb = Nb(NB_Global={}, Meter={})
    ctx = FlowCtx(nd, profile=OVN_25_03, acl=build_acl_index(nd, nb), default_acl_drop=default_acl_drop)
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    return {(f.stage.name, f.priority, f.match, f.actions, d) for f in table.flows() for d in f.datapaths}


def test_switch_wide_acl_tiers_and_stateful_commits() -> None:
    # Reference: "ls1" (stateful) and "join" (no ACL) of mixed 10/5/5 and the ovn-k-like network.
    keys = _build(True)
    for stage in ("ls_in_acl_action", "ls_in_acl_after_lb_action", "ls_out_acl_action"):
        assert (stage, 1000, "reg8[16] == 1", CLEAR + "next;", 0) in keys
        assert (stage, 1000, "reg8[17] == 1", CLEAR + "/* drop */", 0) in keys
        assert (stage, 0, "1", CLEAR + "next;", 0) in keys
        assert (stage, 0, "1", "next;", 1) in keys  # no ACL
    assert ("ls_in_acl_action", 1000, "reg8[18] == 1", CLEAR + REJECT_IN, 0) in keys
    for stage in ("ls_in_acl_sample", "ls_in_acl_after_lb_sample", "ls_out_acl_sample"):
        assert (stage, 0, "1", "next;", 0) in keys
    assert ("ls_in_acl_eval", 65532, "ct.est && ct_mark.allow_established == 1",
            "reg0[21] = 1; reg8[16] = 1; next;", 0) in keys
    assert ("ls_in_acl_eval", 65532, "ct.inv || (ct.est && ct.rpl && ct_mark.blocked == 1)",
            "reg8[17] = 1; next;", 0) in keys
    assert ("ls_out_acl_eval", 1, "ip && ct.est && ct_mark.blocked == 1", "reg0[1] = 1; reg8[16] = 1; next;", 0) in keys
    assert ("ls_in_acl_after_lb_eval", 65532, "reg0[21] == 1", "reg8[16] = 1; next;", 0) in keys
    assert ("ls_in_acl_eval", 65535, "1", "next;", 1) in keys
    assert ("ls_in_acl_eval", 65532, "nd || nd_ra || nd_rs || mldv1 || mldv2", "reg8[16] = 1; next;", 1) in keys
    assert ("ls_in_stateful", 100, "reg0[1] == 1 && reg0[13] == 0",
            ("ct_commit { ct_mark.blocked = 0; ct_mark.allow_established = reg0[20]; "
            "ct_label.acl_id = reg2[16..31]; }; next;"), 0) in keys
    assert ("ls_in_qos", 0, "1", "next;", 0) in keys and ("ls_out_lookup_fdb", 0, "1", "next;", 1) in keys
    assert not any(k[0] in ("ls_in_acl", "ls_out_acl", "ls_in_qos_mark", "ls_out_qos_meter") for k in keys)
    # Reference: build_options_nb (NB_Global options:default_acl_drop=true).
    drop = _build(True, default_acl_drop=True)
    assert ("ls_out_acl_action", 0, "1", CLEAR + "/* drop */", 0) in drop
    assert ("ls_out_acl_eval", 1, "ip && !ct.est", "next;", 0) in drop


def test_pmtud_flows() -> None:
    keys = _build(True)
    pmtud = "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0))"
    assert ("ls_in_check_port_sec", 105, f"{pmtud} && flags.tunnel_rx == 1", "drop;", 0) in keys
    assert ("ls_in_pre_acl", 110, f"{pmtud} && flags.tunnel_rx == 1", "next;", 0) in keys
    assert ("ls_in_pre_lb", 110, f"{pmtud.replace('|| (ip6', '||(ip6')} && flags.tunnel_rx == 1", "next;", 1) in keys


def test_merged_qos() -> None:
    # Reference: build_qos_nb.
    def q(**cols: Any) -> SimpleNamespace:
        base = {"uuid": uuid.uuid4(), "direction": "from-lport", "priority": 150, "match": "ip6 && udp",
                "action": {}, "bandwidth": {}}
        return SimpleNamespace(**{**base, **cols})
    got = qos_flows(q(action={"dscp": 10}, bandwidth={"rate": 100, "burst": 10}), OVN_25_03)
    assert [(f.stage.name, f.actions) for f in got] == [("ls_in_qos", "set_meter(100, 10); ip.dscp = 10; next;")]
    assert [f.actions for f in qos_flows(q(direction="to-lport", bandwidth={"burst": 2000}), OVN_25_03)] == ["next;"]
    assert [f.actions for f in qos_flows(q(), OVN_25_03)] == ["next;"]  # a row with neither column too


def test_merged_qos_packet_mark() -> None:
    # Reference: a switch with QoS rows using action:mark (25.03's NB schema), with and without
    # dscp / a meter.
    def q(**cols: Any) -> SimpleNamespace:
        base = {"uuid": uuid.uuid4(), "direction": "to-lport", "priority": 14, "match": "ip4.src == 1.1.1.3",
                "action": {}, "bandwidth": {}}
        return SimpleNamespace(**{**base, **cols})
    assert [f.actions for f in qos_flows(q(action={"mark": 7}), OVN_25_03)] == ["pkt.mark = 7; next;"]
    assert [f.actions for f in qos_flows(q(action={"mark": 0}), OVN_25_03)] == ["pkt.mark = 0; next;"]
    assert [f.actions for f in qos_flows(q(action={"mark": 7, "dscp": 3}), OVN_25_03)] == [
        "ip.dscp = 3; pkt.mark = 7; next;"]
    assert [f.actions for f in qos_flows(q(action={"mark": 8}, bandwidth={"rate": 100, "burst": 5}), OVN_25_03)] == [
        "set_meter(100, 5); pkt.mark = 8; next;"]


def test_nd_ns_responder_matches_multicast_only() -> None:
    assert nd_ns_match("fe80::1", "ff02::1:ff00:1", True) == "nd_ns_mcast && ip6.dst == ff02::1:ff00:1 && nd.target == fe80::1"
    assert nd_ns_match("fe80::1", "ff02::1:ff00:1") == "nd_ns && ip6.dst == {fe80::1, ff02::1:ff00:1} && nd.target == fe80::1"


def test_dhcp_replies_set_the_allow_bit() -> None:
    # Reference: build_dhcp_reply_nb: "reg8[16] = 1; next;" on every switch (stateful "sf" too),
    # not for the disabled port.
    from ovn_northd_py.flows.ls_acl import build_lsp_dhcp_reply_flows

    nd = Northd()
    sw = _switch(nd, "sf", [acl(action="allow-related")])
    v4 = SimpleNamespace(uuid=uuid.uuid4(), cidr="10.0.0.0/24", options={
        "server_id": "10.0.0.254", "server_mac": "00:00:00:00:ff:ff", "lease_time": "3600"})
    ports = []
    # Reference (gen_random.py 2): no flow for a port without an address in the cidr either.
    for name, enabled, ip in (("sf-p", [], "10.0.0.1"), ("sf-d", [False], "10.0.0.3"), ("sf-o", [], "10.9.0.1")):
        p = _port(nd, sw, name)
        p.nb.addresses = [f"00:00:00:00:00:01 {ip}"]
        p.nb.dhcpv4_options = [v4]
        p.nb.enabled = enabled
        p.enabled = not enabled  # what the model derives from the NB column
        ports.append(p)
    ctx = FlowCtx(nd, profile=OVN_25_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})))
    table = FlowTable(len(nd.by_index))
    for p in ports:
        build_lsp_dhcp_reply_flows(p, ctx, table)
    assert {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()} == {
        ("ls_out_acl_eval", 34000, ('outport == "sf-p" && eth.src == 00:00:00:00:ff:ff && ip4.src == 10.0.0.254 '
         "&& udp && udp.src == 67 && udp.dst == 68"), "reg8[16] = 1; next;")}


def test_tiers_and_pass() -> None:
    # Reference: switches "tf" (stateful) / "tl" of an NB with ACL tiers and pass ACLs.
    def tiered(a: SimpleNamespace, stateful: bool) -> set[Any]:
        return {(f.stage.name, f.priority, f.match, f.actions)
                for f in acl_flows(a, ACL_KEY, stateful, True, frozenset(), OVN_25_03, tiered=True)}
    assert tiered(acl(action="pass", direction="from-lport", priority=201, match="udp.dst == 1", tier=1), True) == {
        ("ls_in_acl_eval", 1201, "reg8[30..31] == 1 && (udp.dst == 1)", "next;")}
    assert tiered(acl(action="allow-related", direction="from-lport", priority=100, match="tcp"), True) == {
        ("ls_in_acl_eval", 1100, "reg8[30..31] == 0 && reg0[7] == 1 && (tcp)", "reg8[16] = 1; reg0[1] = 1; next;"),
        ("ls_in_acl_eval", 1100, "reg8[30..31] == 0 && reg0[8] == 1 && (tcp)", "reg8[16] = 1; next;")}
    assert tiered(acl(action="drop", priority=204, match="udp.dst == 4", tier=3), False) == {
        ("ls_out_acl_eval", 1204, "reg8[30..31] == 3 && (udp.dst == 4)", "reg8[17] = 1; next;")}
    nd = Northd()
    sw = _switch(nd, "tf", [acl(action="drop", priority=204, match="udp.dst == 4", tier=2)])
    _port(nd, sw, "tf-p1")
    ctx = FlowCtx(nd, profile=OVN_25_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})))
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    keys = {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}
    assert ("ls_out_acl_action", 500, "reg8[30..31] == 1", "reg8[30..31] = 2; next(pipeline=egress,table=6);") in keys
    assert ("ls_out_acl_action", 1000, "reg8[16] == 1", CLEAR + "reg8[30..31] = 0; next;") in keys
    assert ("ls_in_acl_action", 1000, "reg8[16] == 1", CLEAR + "next;") in keys  # no tier in this stage
    assert not any(k[0] == "ls_in_acl_action" and k[1] == 500 for k in keys)


def test_dhcp_matches() -> None:
    # Reference: the Neutron-like network (gen_neutron.py 3).
    from ovn_northd_py.flows.ls_dhcp import _dhcp4_flows, _dhcp6_flows, dhcp4_config, dhcp6_config
    from ovn_northd_py.northd.addresses import extract_lport_addresses

    nd = Northd()
    sw = _switch(nd, "n", [])
    p = _port(nd, sw, "vm")
    entry = extract_lport_addresses("fa:16:3e:0e:e7:67 10.0.5.14 fd00::5").addresses
    assert entry is not None
    v4 = dhcp4_config(SimpleNamespace(uuid=uuid.uuid4(), cidr="10.0.5.0/24", options={
        "server_id": "10.0.5.1", "server_mac": "fa:16:3e:f5:3b:fe", "lease_time": "43200"}), p)
    v6 = dhcp6_config(SimpleNamespace(uuid=uuid.uuid4(), cidr="fd00::/64", options={"server_id": "fa:16:3e:f5:3b:fe"}))
    assert v4 is not None and v6 is not None
    table = FlowTable(len(nd.by_index))
    _dhcp4_flows(p, entry, "vm", "", v4, table, None, merged=True)
    _dhcp6_flows(p, entry, "vm", "", v6, table, None, merged=True)
    matches = {(f.stage.name, f.match) for f in table.flows()}
    head = 'inport == "vm" && eth.src == fa:16:3e:0e:e7:67 && '
    assert ("ls_in_dhcp_options", head + "(ip4.src == {10.0.5.14, 0.0.0.0} && ip4.dst == {10.0.5.1, 255.255.255.255})"
            " && udp.src == 68 && udp.dst == 67") in matches
    assert ("ls_in_dhcp_options", head + "ip6.mcast && ip6.dst == ff02::1:2 && udp.src == 546 && udp.dst == 547"
            ) in matches
    assert len([m for m in matches if m[0] == "ls_in_dhcp_options"]) == 2


def test_pmtud_per_port_and_dns() -> None:
    # Reference: gen_neutron.py 3 (localport "ovnmeta-..." gets the 110 flow; DNS replies).
    nd = Northd()
    sw = _switch(nd, "n", [acl(action="allow-related")])
    sw.nb.dns_records = [SimpleNamespace(records={"vm": "10.0.0.1"})]
    lp = _port(nd, sw, "ovnmeta", type="localport")
    lp.nb.addresses = ["fa:16:3e:55:c0:2c 10.0.5.2"]
    ctx = FlowCtx(nd, profile=OVN_25_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})))
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    keys = {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}
    pmtud = "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0))"
    assert ("ls_in_check_port_sec", 110, (f'{pmtud} && eth.src == fa:16:3e:55:c0:2c && outport == "ovnmeta" && '
            '!is_chassis_resident("ovnmeta") && flags.tunnel_rx == 1'), "outport <-> inport; next;") in keys
    assert ("ls_out_acl_eval", 34000, "flags.from_ctrl && udp.src == 53", "reg8[16] = 1; ct_commit; next;") in keys


def test_localnet_fdb_lookup_sets_flags_localnet() -> None:
    # Reference: build_ls_options_nb (localnet "ln" with options:localnet_learn_fdb=true).
    nd = Northd()
    sw = _switch(nd, "sw0", [])
    ln = _port(nd, sw, "ln", type="localnet")
    ln.nb.addresses = ["unknown"]
    ln.nb.options = {"localnet_learn_fdb": "true"}
    ln.has_unknown = True
    ctx = FlowCtx(nd, profile=OVN_25_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})))
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    assert ("ls_in_lookup_fdb", 100, 'inport == "ln"', "flags.localnet = 1; reg0[11] = lookup_fdb(inport, eth.src); next;"
            ) in {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}


def test_router_flood_lists_the_router_mac_first() -> None:
    # Reference: gen_neutron.py 3: eth.src == {<router port MAC>, <NAT external MAC>} at 75; router
    # ports are reached by their MAC even without "router" in their addresses (mixed 10/5/5).
    from test_flows_l2 import Net, nat

    from ovn_northd_py.lflow.stages import LS_IN_L2_LKUP

    net = Net()
    sw = net.switch("pub")
    net.lsp(sw, "vm", "00:00:00:00:00:10 172.16.0.10")
    r = net.router("r", nat=[nat("00000000-0000-4000-8000-0000000000b1", "dnat_and_snat", "172.16.0.100",
                                 "00:00:00:00:00:01", "vm")])
    lrp = net.lrp(r, "r-pub", "fa:16:3e:ac:af:3f", "172.16.0.1/24")
    net.router_port(sw, lrp, "pub-r")
    got = net.build(profile=OVN_25_03).keys(sw, LS_IN_L2_LKUP)
    assert (75, "eth.src == {fa:16:3e:ac:af:3f, 00:00:00:00:00:01} && (arp.op == 1 || rarp.op == 3 || nd_ns)",
            'outport = "_MC_flood_l2"; output;') in got
    assert (50, "eth.dst == fa:16:3e:ac:af:3f", 'outport = "pub-r"; output;') in got
