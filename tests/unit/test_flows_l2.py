"""Default (fallback) flows and the switch L2 stages, on small hand-built models.

Expected match/actions strings are copied from the reference ovn-northd 23.03's
Logical_Flow rows for the same configuration (each test names the NB it mirrors).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import pytest

from ovn_northd_py.flows import FlowCtx, build_datapath_flows, build_lflows, build_port_flows
from ovn_northd_py.lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_LOOKUP_NEIGHBOR,
    LR_OUT_DELIVERY,
    LS_IN_ACL,
    LS_IN_ACL_AFTER_LB,
    LS_IN_ACL_HINT,
    LS_IN_APPLY_PORT_SEC,
    LS_IN_CHECK_PORT_SEC,
    LS_IN_L2_LKUP,
    LS_IN_L2_UNKNOWN,
    LS_IN_LOOKUP_FDB,
    LS_IN_PUT_FDB,
    LS_OUT_ACL,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_CHECK_PORT_SEC,
    Stage,
)
from ovn_northd_py.lflow.table import FlowTable, LFlow
from ovn_northd_py.northd.model import LR, LS, Datapath, Northd, Port
from ovn_northd_py.northd.ovs_order import ovs_hash_string, sset_order

# --------------------------------------------------------------------------- a tiny model


class Net:
    """Datapaths and ports built the way ``northd.build`` builds them, over stand-in NB rows."""

    def __init__(self) -> None:
        self.nd = Northd()
        self._n = 0

    def _uuid(self) -> uuid.UUID:
        self._n += 1
        return uuid.UUID(f"{self._n:08x}-0000-4000-8000-000000000000")

    def _dp(self, kind: str, name: str, nb: SimpleNamespace) -> Datapath:
        dp = Datapath(str(nb.uuid), kind, name, nb)
        self.nd.add_datapath(dp)
        return dp

    def switch(self, name: str, acls: Iterable[Any] = (), lbs: Iterable[Any] = ()) -> Datapath:
        nb = SimpleNamespace(
            uuid=self._uuid(),
            name=name,
            acls=list(acls),
            load_balancer=list(lbs),
            load_balancer_group=[],
            other_config={},
            dns_records=[],
            forwarding_groups=[],
        )
        return self._dp(LS, name, nb)

    def router(
        self,
        name: str,
        nat: Iterable[Any] = (),
        lbs: Iterable[Any] = (),
        enabled: bool | None = None,
        chassis: str | None = None,
    ) -> Datapath:
        nb = SimpleNamespace(
            uuid=self._uuid(),
            name=name,
            nat=list(nat),
            load_balancer=list(lbs),
            load_balancer_group=[],
            enabled=[] if enabled is None else [enabled],
            options={"chassis": chassis} if chassis else {},
            static_routes=[],
            policies=[],
            ports=[],
        )
        return self._dp(LR, name, nb)

    def lsp(
        self,
        dp: Datapath,
        name: str,
        *addresses: str,
        ps: Iterable[str] = (),
        type: str = "",
        enabled: bool = True,
        options: dict[str, str] | None = None,
        dynamic: str | None = None,
    ) -> Port:
        nb = SimpleNamespace(
            uuid=self._uuid(),
            name=name,
            addresses=list(addresses),
            port_security=list(ps),
            type=type,
            options=dict(options or {}),
            enabled=[] if enabled else [False],
            dynamic_addresses=[dynamic] if dynamic else [],
            dhcpv4_options=[],
            dhcpv6_options=[],
            up=[],
            ha_chassis_group=[],
        )
        p = Port(
            name,
            "lsp",
            dp,
            nb,
            str(nb.uuid),
            sb_type=type if type != "router" else "patch",
            enabled=enabled,
            has_unknown="unknown" in addresses,
            is_router_lsp=type == "router",
            dynamic_addresses=dynamic,
        )
        p.options = dict(nb.options)  # the Port_Binding options, as northd.build copies them
        dp.ports.append(p)
        self.nd.ports[name] = p
        return p

    def lrp(
        self,
        dp: Datapath,
        name: str,
        mac: str,
        *networks: str,
        enabled: bool = True,
        options: dict[str, str] | None = None,
    ) -> Port:
        nb = SimpleNamespace(
            uuid=self._uuid(),
            name=name,
            mac=mac,
            networks=list(networks),
            options=dict(options or {}),
            enabled=[] if enabled else [False],
            ipv6_ra_configs={},
        )
        p = Port(name, "lrp", dp, nb, str(nb.uuid), sb_type="patch", enabled=enabled)
        dp.ports.append(p)
        dp.nb.ports.append(nb)
        self.nd.ports[name] = p
        return p

    def router_port(self, sw: Datapath, lrp: Port, name: str, *addresses: str, enabled: bool = True) -> Port:
        p = self.lsp(sw, name, *addresses, type="router", enabled=enabled, options={"router-port": lrp.name})
        p.peer, lrp.peer = lrp, p
        return p

    def gateway(self, lrp: Port) -> Port:
        crp = Port(
            "cr-" + lrp.name,
            "crp",
            lrp.dp,
            lrp.nb,
            lrp.nb_key,
            sb_type="chassisredirect",
            options={"distributed-port": lrp.name, "always-redirect": "true"},
        )
        lrp.dp.ports.append(crp)
        self.nd.ports[crp.name] = crp
        return crp

    def build(self, **ctx: Any) -> Flows:
        table = FlowTable(len(self.nd.by_index))
        build_lflows(self.nd, FlowCtx(self.nd, **ctx), table)
        return Flows(table, self.nd)


def nat(
    uid: str, type: str, external_ip: str, mac: str | None = None, lport: str | None = None,
    logical_ip: str = "192.168.100.10",
) -> SimpleNamespace:
    """A NAT row as the IDL presents it (every column present, optional ones as lists)."""
    return SimpleNamespace(
        uuid=uuid.UUID(uid),
        type=type,
        external_ip=external_ip,
        logical_ip=logical_ip,
        external_mac=[mac] if mac else [],
        logical_port=[lport] if lport else [],
        gateway_port=[],
        allowed_ext_ips=[],
        exempted_ext_ips=[],
        external_port_range="",
        options={},
        external_ids={},
    )


def lb(*vips: str) -> SimpleNamespace:
    return SimpleNamespace(vips=dict.fromkeys(vips, "192.168.0.5:80"), options={}, uuid=uuid.uuid4(), protocol=[],
                           health_check=[], selection_fields=[])


class Flows:
    def __init__(self, table: FlowTable, nd: Northd) -> None:
        self.table = table
        self.nd = nd

    def of(
        self, dp: Datapath, stage: Stage, priority: int | None = None
    ) -> dict[tuple[int, str, str], LFlow]:
        """(priority, match, actions) -> flow, for the flows of ``stage`` on ``dp``."""
        return {
            (f.priority, f.match, f.actions): f
            for f in self.table.flows()
            if f.stage == stage and dp.index in f.datapaths and (priority is None or f.priority == priority)
        }

    def keys(self, dp: Datapath, stage: Stage, priority: int | None = None) -> set[tuple[int, str, str]]:
        return set(self.of(dp, stage, priority))


def _hint(p: Port) -> str:
    return p.nb_key[:8]


# --------------------------------------------------------------------------- fallbacks


def test_switch_fallbacks() -> None:
    net = Net()
    sw = net.switch("sw")
    f = net.build()
    # Reference, an empty switch: no priority-0 flow in ls_in_check_port_sec.
    assert f.keys(sw, LS_IN_CHECK_PORT_SEC, 0) == set()
    assert f.keys(sw, LS_IN_APPLY_PORT_SEC, 0) == {(0, "1", "next;")}
    assert f.keys(sw, LS_IN_L2_LKUP, 0) == {(0, "1", "outport = get_fdb(eth.dst); next;")}
    assert f.keys(sw, LS_IN_L2_UNKNOWN, 0) == {(0, "1", "output;")}
    assert f.keys(sw, LS_OUT_CHECK_PORT_SEC, 0) == {(0, "1", "reg0[15] = check_out_port_sec(); next;")}
    assert f.keys(sw, LS_OUT_APPLY_PORT_SEC, 0) == {(0, "1", "output;")}
    # A switch with neither ACLs nor load balancers skips the ACL stages at 65535.
    assert f.keys(sw, LS_IN_ACL_HINT) == {(65535, "1", "next;")}
    assert f.keys(sw, LS_OUT_ACL, 65535) == {(65535, "1", "next;")}
    assert f.keys(sw, LS_IN_ACL_AFTER_LB, 0) == {(0, "1", "next;")}
    for flow in f.table.flows():
        assert flow.hint is None


def test_acl_fallbacks_with_acls_and_default_acl_drop() -> None:
    # Reference, NB_Global options:default_acl_drop=true; "aclsw" has an ACL, "lbsw" only a load balancer.
    net = Net()
    acl = SimpleNamespace(
        uuid=uuid.UUID("a0000000-0000-4000-8000-000000000000"), direction="to-lport", priority=100, match="ip4",
        action="allow", log=False, name=[], severity=[], meter=[], label=0, options={},
    )
    acl_sw = net.switch("aclsw", acls=[acl])
    lb_sw = net.switch("lbsw", lbs=[lb("10.0.0.10:80")])
    f = net.build(default_acl_drop=True)
    assert f.keys(acl_sw, LS_IN_ACL_HINT) == {(0, "1", "next;")}
    assert f.keys(acl_sw, LS_IN_ACL, 0) == {(0, "1", "drop;")}
    assert f.keys(acl_sw, LS_OUT_ACL, 0) == {(0, "1", "drop;")}
    assert f.keys(acl_sw, LS_IN_ACL_AFTER_LB, 0) == {(0, "1", "drop;")}
    assert f.keys(lb_sw, LS_IN_ACL, 0) == {(0, "1", "next;")}
    assert f.keys(lb_sw, LS_IN_ACL_AFTER_LB, 0) == {(0, "1", "next;")}


def test_router_fallbacks_and_delivery_needs_an_enabled_port() -> None:
    net = Net()
    empty = net.router("r-empty")
    dis = net.router("rdis")
    net.lrp(dis, "rdis-p", "00:00:00:00:01:01", "10.0.0.1/24", enabled=False)
    one = net.router("rnopeer")
    net.lrp(one, "rnopeer-p", "00:00:00:00:01:02", "10.0.1.1/24")
    f = net.build()
    # Reference: a router without ports still gets the router-wide admission and lookup flows.
    assert f.keys(empty, LR_IN_ADMISSION) == {(0, "1", "drop;"), (100, "vlan.present || eth.src[40]", "drop;")}
    assert (0, "1", "reg9[2] = 1; next;") in f.keys(empty, LR_IN_LOOKUP_NEIGHBOR)
    assert (100, "arp.op == 2", "reg9[2] = lookup_arp(inport, arp.spa, arp.sha); next;") in f.keys(
        empty, LR_IN_LOOKUP_NEIGHBOR
    )
    # Reference: "r-empty" and "rdis" have no lr_out_delivery flow at all.
    assert f.keys(empty, LR_OUT_DELIVERY) == set()
    assert f.keys(dis, LR_OUT_DELIVERY) == set()
    assert f.keys(one, LR_OUT_DELIVERY) == {(0, "1", "drop;"), (100, 'outport == "rnopeer-p"', "output;")}


def test_disabled_router_gets_no_flows() -> None:
    net = Net()
    r = net.router("r7", enabled=False)
    net.lrp(r, "r7-s7", "00:00:00:00:07:01", "10.7.0.1/24")
    f = net.build()
    assert not any(r.index in fl.datapaths for fl in f.table.flows())


# --------------------------------------------------------------------------- port security


def test_switch_port_security_flows() -> None:
    net = Net()
    sw = net.switch("sw0")
    f = net.build()
    # Reference, every switch.
    assert f.keys(sw, LS_IN_CHECK_PORT_SEC) == {
        (100, "vlan.present", "drop;"),
        (100, "eth.src[40]", "drop;"),
        (50, "1", "reg0[15] = check_in_port_sec(); next;"),
    }
    assert (50, "reg0[15] == 1", "drop;") in f.keys(sw, LS_IN_APPLY_PORT_SEC)
    assert (100, "eth.mcast", "reg0[15] = 0; next;") in f.keys(sw, LS_OUT_CHECK_PORT_SEC)
    assert (50, "reg0[15] == 1", "drop;") in f.keys(sw, LS_OUT_APPLY_PORT_SEC)


def test_disabled_vtep_and_queue_ports() -> None:
    net = Net()
    sw = net.switch("sw0")
    dis = net.lsp(sw, "p-dis", "00:00:00:00:00:a7 10.0.0.17", enabled=False)
    qd = net.lsp(sw, "p-qdisc", "00:00:00:00:00:ab", options={"qdisc_queue_id": "5"})
    ln = net.lsp(
        sw, "ln0", "unknown", type="localnet", options={"network_name": "phys", "qdisc_queue_id": "7"}
    )
    vt = net.lsp(sw, "vt0", "unknown", type="vtep")
    vq = net.lsp(sw, "qv", type="vtep", options={"qdisc_queue_id": "3"})
    f = net.build()
    check = f.of(sw, LS_IN_CHECK_PORT_SEC)
    # Reference, the l2 edge-case NB ("sw0" and "q").
    assert check[(100, 'inport == "p-dis"', "reg0[15] = 1; next;")].hint == _hint(dis)
    assert check[
        (70, 'inport == "p-qdisc"', "set_queue(5); reg0[15] = check_in_port_sec(); next;")
    ].hint == _hint(qd)
    assert (70, 'inport == "ln0"', "set_queue(7); reg0[15] = check_in_port_sec(); next;") in check
    assert check[(70, 'inport == "vt0"', "reg0[14] = 1; next(pipeline=ingress, table=16);")].hint == _hint(vt)
    assert check[
        (70, 'inport == "qv"', "set_queue(3); reg0[14] = 1; next(pipeline=ingress, table=16);")
    ].hint == _hint(vq)
    out = f.of(sw, LS_OUT_APPLY_PORT_SEC, 100)
    assert set(out) == {(100, 'outport == "ln0"', "set_queue(7); output;")}
    assert out[(100, 'outport == "ln0"', "set_queue(7); output;")].hint == _hint(ln)
    assert (50, 'outport == "p-dis"', "drop;") in f.keys(sw, LS_IN_L2_UNKNOWN)


# --------------------------------------------------------------------------- MAC learning


def test_fdb_flows_only_for_unknown_vifs_without_port_security() -> None:
    net = Net()
    sw = net.switch("sw0")
    unk = net.lsp(sw, "p-unk", "unknown")
    net.lsp(sw, "p-unk-ps", "unknown", "00:00:00:00:00:a4", ps=["00:00:00:00:00:a4"])
    dis = net.lsp(sw, "p-dis-unk", "unknown", enabled=False)
    net.lsp(sw, "ln0", "unknown", type="localnet")
    net.lsp(sw, "lp", "unknown", type="localport")
    f = net.build()
    # Reference, "sw0": only p-unk and the disabled p-dis-unk learn.
    lookup = f.of(sw, LS_IN_LOOKUP_FDB, 100)
    assert set(lookup) == {
        (100, 'inport == "p-unk"', "reg0[11] = lookup_fdb(inport, eth.src); next;"),
        (100, 'inport == "p-dis-unk"', "reg0[11] = lookup_fdb(inport, eth.src); next;"),
    }
    assert lookup[
        (100, 'inport == "p-dis-unk"', "reg0[11] = lookup_fdb(inport, eth.src); next;")
    ].hint == _hint(dis)
    put = f.of(sw, LS_IN_PUT_FDB, 100)
    assert put[(100, 'inport == "p-unk" && reg0[11] == 0', "put_fdb(inport, eth.src); next;")].hint == _hint(
        unk
    )
    assert len(put) == 2


# --------------------------------------------------------------------------- destination lookup


def test_switch_l2_lookup_dp_flows_and_unknown_group() -> None:
    net = Net()
    plain = net.switch("plain")
    net.lsp(plain, "p1", "00:00:00:00:30:01")
    unk = net.switch("u2")
    net.lsp(unk, "ln", "unknown", type="localnet")
    only_disabled = net.switch("u1")
    net.lsp(only_disabled, "u1d", "unknown", enabled=False)
    only_external = net.switch("u3")
    net.lsp(only_external, "u3e", "unknown", type="external")
    f = net.build()
    # Reference: every switch.
    assert {
        (110, "eth.dst == $svc_monitor_mac && (tcp || icmp || icmp6)", "handle_svc_check(inport);"),
        (70, "eth.mcast", 'outport = "_MC_flood"; output;'),
    } <= f.keys(plain, LS_IN_L2_LKUP)
    drop = (50, 'outport == "none"', "drop;")
    assert drop in f.keys(plain, LS_IN_L2_UNKNOWN)
    assert (50, 'outport == "none"', 'outport = "_MC_unknown"; output;') in f.keys(unk, LS_IN_L2_UNKNOWN)
    # _MC_unknown has neither disabled nor external ports.
    assert drop in f.keys(only_disabled, LS_IN_L2_UNKNOWN)
    assert drop in f.keys(only_external, LS_IN_L2_UNKNOWN)


def test_vif_mac_flows() -> None:
    net = Net()
    sw = net.switch("sw0")
    two = net.lsp(sw, "p-two", "00:00:00:00:00:a5", "00:00:00:00:00:a6 10.0.0.16")
    net.lsp(sw, "p-upper", "00:00:00:00:00:AA")
    net.lsp(sw, "p-bad", "00:00:00:00:00:a9, 10.0.0.19")
    net.lsp(sw, "p-short", "0:0:0:0:20:5")
    net.lsp(sw, "p-dis", "00:00:00:00:00:a7 10.0.0.17", enabled=False)
    net.lsp(sw, "ext0", "00:00:00:00:00:ad 10.0.0.31", type="external")
    net.lsp(sw, "dy1", "dynamic", dynamic="9e:4f:c9:09:00:03 10.9.0.3")
    net.lsp(sw, "p-noaddr")
    f = net.build()
    got = f.of(sw, LS_IN_L2_LKUP, 50)
    # Reference, "sw0" / "ip1" of the l2 edge-case NB.
    assert set(got) == {
        (50, "eth.dst == 00:00:00:00:00:a5", 'outport = "p-two"; output;'),
        (50, "eth.dst == 00:00:00:00:00:a6", 'outport = "p-two"; output;'),
        (50, "eth.dst == 00:00:00:00:00:aa", 'outport = "p-upper"; output;'),
        (50, "eth.dst == 00:00:00:00:00:a9", 'outport = "p-bad"; output;'),
        (50, "eth.dst == 00:00:00:00:20:05", 'outport = "p-short"; output;'),
        (50, "eth.dst == 00:00:00:00:00:a7", "drop;"),
        (50, "eth.dst == 9e:4f:c9:09:00:03", 'outport = "dy1"; output;'),
    }
    assert got[(50, "eth.dst == 00:00:00:00:00:a5", 'outport = "p-two"; output;')].hint == _hint(two)


def _router_setup(with_vif: bool = True) -> tuple[Net, Datapath, Port, Port]:
    """Reference "swA": switch with a VIF and router r1's port, r1 with NATs and load balancers."""
    net = Net()
    sw = net.switch("swA")
    if with_vif:
        net.lsp(sw, "a1", "00:00:00:00:0a:01 10.10.0.11")
    r1 = net.router(
        "r1",
        nat=[
            nat("00000000-0000-4000-8000-0000000000a1", "snat", "10.10.0.100"),
            nat("00000000-0000-4000-8000-0000000000a2", "dnat", "10.10.0.101"),
            nat("00000000-0000-4000-8000-0000000000a3", "dnat_and_snat", "10.10.0.102"),
            nat("00000000-0000-4000-8000-0000000000a4", "dnat_and_snat", "99.0.0.1"),
        ],
        lbs=[lb("10.10.0.200:80"), lb("88.0.0.1:80")],
    )
    lrp = net.lrp(r1, "r1-swA", "00:00:00:00:aa:01", "10.10.0.1/24")
    lsp = net.router_port(sw, lrp, "swA-r1", "router")
    return net, sw, lsp, lrp


def test_router_port_flows() -> None:
    net, sw, lsp, _ = _router_setup()
    f = net.build()
    got = f.of(sw, LS_IN_L2_LKUP)
    to_router = 'clone {outport = "swA-r1"; output; }; outport = "_MC_flood_l2"; output;'
    # Reference, "swA": snat IPs and VIPs outside the port's networks are left out.
    expected = {
        (80, f"flags[1] == 0 && arp.op == 1 && arp.tpa == {ip}", to_router)
        for ip in ("10.10.0.1", "10.10.0.101", "10.10.0.102", "10.10.0.200", "99.0.0.1")
    } | {
        (80, "flags[1] == 0 && nd_ns && nd.target == fe80::200:ff:fe00:aa01", to_router),
        (
            75,
            "eth.src == {00:00:00:00:aa:01} && (arp.op == 1 || rarp.op == 3 || nd_ns)",
            'outport = "_MC_flood_l2"; output;',
        ),
        (50, "eth.dst == 00:00:00:00:aa:01", 'outport = "swA-r1"; output;'),
    }
    assert {k for k in got if k[0] in (50, 75, 80) and "a1" not in k[2]} - {
        (50, "eth.dst == 00:00:00:00:0a:01", 'outport = "a1"; output;')
    } == expected
    assert got[(50, "eth.dst == 00:00:00:00:aa:01", 'outport = "swA-r1"; output;')].hint == _hint(lsp)
    assert got[(80, "flags[1] == 0 && arp.op == 1 && arp.tpa == 99.0.0.1", to_router)].hint == _hint(lsp)
    assert (
        got[
            (
                75,
                "eth.src == {00:00:00:00:aa:01} && (arp.op == 1 || rarp.op == 3 || nd_ns)",
                'outport = "_MC_flood_l2"; output;',
            )
        ].hint
        is None
    )


def test_router_only_switch_neither_clones_nor_floods() -> None:
    net, sw, _, _ = _router_setup(with_vif=False)
    f = net.build()
    # Reference, "swB" (only router ports).
    assert (
        80,
        "flags[1] == 0 && arp.op == 1 && arp.tpa == 10.10.0.1",
        'outport = "swA-r1"; output;',
    ) in f.keys(sw, LS_IN_L2_LKUP)
    assert f.keys(sw, LS_IN_L2_LKUP, 75) == set()


def test_disabled_router_port_keeps_only_its_mac_flow() -> None:
    net = Net()
    sw = net.switch("swG")
    net.lsp(sw, "g1", "00:00:00:00:10:01")
    r2 = net.router("r2")
    off = net.lrp(r2, "r2-swG4", "00:00:00:00:10:05", "10.73.0.2/24", enabled=False)
    net.router_port(sw, off, "swG-r2d", "router")
    on = net.lrp(r2, "r2-swG3", "00:00:00:00:10:04", "10.72.0.2/24")
    net.router_port(sw, on, "swG-r2c", "router", enabled=False)
    f = net.build()
    got = f.keys(sw, LS_IN_L2_LKUP)
    # Reference, "swG": a disabled router port has no ARP/ND flows; a disabled switch port drops.
    assert (50, "eth.dst == 00:00:00:00:10:05", 'outport = "swG-r2d"; output;') in got
    assert not any('"swG-r2d"' in k[2] for k in got if k[0] == 80)
    assert (50, "eth.dst == 00:00:00:00:10:04", "drop;") in got
    assert (
        80,
        "flags[1] == 0 && arp.op == 1 && arp.tpa == 10.72.0.2",
        'clone {outport = "swG-r2c"; output; }; outport = "_MC_flood_l2"; output;',
    ) in got


# NAT uuids and MACs from the reference run whose "pub" switch is mirrored below.
PUB_NATS = [
    ("5d7026f2-7230-436b-a758-a99a35b349ef", "00:00:00:00:ee:01", "v1"),
    ("4cadfe25-2f0b-4cb1-9ace-f1328d6838c7", "00:00:00:00:ee:02", "v2"),
    ("6bedff7f-e016-4a9d-847d-dad91b2cbe1c", "00:00:00:00:ee:03", "v3"),
    ("d23fbe86-f2c7-4d9d-bdc6-ec3eb7850f05", "00:00:00:00:ee:04", "v4"),
    ("b66db37c-fe2e-4b2b-9dee-7b34f3e4e11d", "00:00:00:00:ee:05", "v5"),
]


def test_gateway_port_on_localnet_switch() -> None:
    net = Net()
    pub = net.switch("pub")
    net.lsp(pub, "ln", "unknown", type="localnet")
    r = net.router(
        "r",
        nat=[
            nat(u, "dnat_and_snat", f"172.16.0.{100 + i}", mac, lp)
            for i, (u, mac, lp) in enumerate(PUB_NATS, 1)
        ],
    )
    gw = net.lrp(r, "r-pub", "00:00:00:00:aa:01", "172.16.0.1/24")
    net.gateway(gw)
    net.router_port(pub, gw, "pub-r-pub", "router")
    f = net.build()
    got = f.keys(pub, LS_IN_L2_LKUP)
    # Reference, "pub": the gateway port's MAC only where the gateway is, the NAT MACs where their port is,
    # and the NAT MACs in the 75 flow in the reference's (string-set) order.
    assert (
        50,
        'eth.dst == 00:00:00:00:aa:01 && is_chassis_resident("cr-r-pub")',
        'outport = "pub-r-pub"; output;',
    ) in got
    assert (
        50,
        'eth.dst == 00:00:00:00:ee:03 && is_chassis_resident("v3")',
        'outport = "pub-r-pub"; output;',
    ) in got
    macs = ", ".join(f"00:00:00:00:{m}" for m in ("ee:05", "ee:04", "ee:01", "ee:02", "ee:03", "aa:01"))
    assert (
        75,
        f"eth.src == {{{macs}}} && (arp.op == 1 || rarp.op == 3 || nd_ns)",
        'outport = "_MC_flood_l2"; output;',
    ) in got


def test_reside_on_redirect_chassis() -> None:
    net = Net()
    priv = net.switch("a-priv")
    net.lsp(priv, "ln", "unknown", type="localnet")
    ra = net.router("ra")
    net.gateway(net.lrp(ra, "ra-pub", "00:00:00:00:0a:01", "172.17.0.1/24"))
    rp = net.lrp(
        ra, "ra-priv", "00:00:00:00:0a:02", "10.0.1.1/24", options={"reside-on-redirect-chassis": "true"}
    )
    net.router_port(priv, rp, "a-priv-ra-priv", "router")
    rp2 = net.lrp(ra, "ra-priv2", "00:00:00:00:0a:03", "10.0.2.1/24")
    net.router_port(priv, rp2, "a-priv-ra-priv2", "router")
    f = net.build()
    got = f.keys(priv, LS_IN_L2_LKUP, 50)
    # Reference, "a-priv".
    assert got == {
        (
            50,
            'eth.dst == 00:00:00:00:0a:02 && is_chassis_resident("cr-ra-pub")',
            'outport = "a-priv-ra-priv"; output;',
        ),
        (50, "eth.dst == 00:00:00:00:0a:03", 'outport = "a-priv-ra-priv2"; output;'),
    }


def test_owners_remove_exactly_one_entitys_flows() -> None:
    net, sw, lsp, _ = _router_setup()
    f = net.build()
    before = len(f.table)
    n = f.table.remove_owner(("port", lsp.name))
    # L2: 6 ARP/ND, the 75 flood and the MAC flow; ARP responder: 50 and 100 for 10.10.0.1 and the LLA.
    assert n == 12
    assert len(f.table) == before - 12
    ctx = FlowCtx(net.nd)
    build_port_flows(lsp, ctx, f.table)
    assert len(f.table) == before
    f.table.remove_owner(("dp", sw.key))
    assert f.keys(sw, LS_IN_CHECK_PORT_SEC, 100) == set()
    build_datapath_flows(sw, ctx, f.table)
    assert len(f.table) == before


# --------------------------------------------------------------------------- OVS string-set order


@pytest.mark.parametrize(
    ("added", "iterated"),
    [
        # Reference 75-flow MAC lists: router port MAC first, then NAT external MACs in NAT uuid order.
        (["00:00:00:00:02:01", "00:00:00:00:02:99"], ["00:00:00:00:02:01", "00:00:00:00:02:99"]),
        (["00:00:00:00:06:01", "00:00:00:00:02:99"], ["00:00:00:00:02:99", "00:00:00:00:06:01"]),
        (["00:00:00:00:06:02", "00:00:00:00:02:99"], ["00:00:00:00:06:02", "00:00:00:00:02:99"]),
        (
            ["00:00:00:00:ab:01", "00:00:00:00:21:bb", "00:00:00:00:21:AA"],
            ["00:00:00:00:21:bb", "00:00:00:00:21:AA", "00:00:00:00:ab:01"],
        ),
        (
            ["00:00:00:00:99:01"]
            + [f"00:00:00:00:fe:{m}" for m in ("23", "0e", "31", "15", "07", "2a", "38", "3f", "1c")],
            ["00:00:00:00:99:01"]
            + [f"00:00:00:00:fe:{m}" for m in ("07", "1c", "2a", "23", "0e", "3f", "31", "15", "38")],
        ),
    ],
)
def test_sset_order_matches_reference(added: list[str], iterated: list[str]) -> None:
    assert sset_order(added) == iterated


def test_ovs_hash_is_32_bit_and_deterministic() -> None:
    h = ovs_hash_string("00:00:00:00:aa:01")
    assert 0 <= h < 2**32
    assert h == ovs_hash_string("00:00:00:00:aa:01")
    assert sset_order(["a", "a", "b"]) == sset_order(["a", "b"])
