"""OVN 25.03's router pipeline (the draft profile's behaviours), expected strings observed on the
25.03 reference (Debian trixie's ovn-northd 25.03.0, parity runs mixed 10/5/5 and gen_ovnk 5);
the same builders under 23.03 keep 23.03's strings."""

from __future__ import annotations

from typing import Any

import pytest

from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.defaults import build_lr_default_flows
from ovn_northd_py.flows.lr_admission import build_lr_admission_flows
from ovn_northd_py.flows.lr_arp_resolve import build_lr_arp_resolve_flows
from ovn_northd_py.flows.lr_delivery import build_lr_delivery_flows
from ovn_northd_py.flows.lr_pipeline import build_lr_route_and_policy_flows
from ovn_northd_py.flows.lr_routing import build_lrp_routing_flows
from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03
from ovn_northd_py.lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_REQUEST,
    LR_IN_ARP_RESOLVE,
    LR_IN_DHCP_RELAY_REQ,
    LR_IN_DHCP_RELAY_RESP,
    LR_IN_DHCP_RELAY_RESP_CHK,
    LR_IN_IP_ROUTING,
    LR_IN_POST_UNSNAT,
)
from ovn_northd_py.lflow.table import FlowTable

from test_flows_router import _route, _router


def _flows(table: FlowTable, stage: Any) -> set[tuple[int, str, str]]:
    return {(f.priority, f.match, f.actions) for f in table.flows() if f.stage == stage}


def test_static_routes_25_03_priorities_registers_and_family_bit() -> None:
    # Observed (gen_ovnk): ``reg7 == 0 && ip4.dst == 10.128.0.0/14`` at 116 (8*14+4), source routes
    # at 8*L (``reg7 == 0 && ip4.src == 10.128.0.0/24`` at 192), reg5 for the port's address and
    # ``reg9[9] = 1;`` before ``next;``.
    routes = [_route(0x10, "10.128.0.0/14", "10.0.1.10"), _route(0x15, "10.5.0.0/24", "10.0.2.5", policy=["src-ip"])]
    nd, r = _router(routes, [])
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd, profile=OVN_25_03), table)
    routing = _flows(table, LR_IN_IP_ROUTING)
    assert (116, "reg7 == 0 && ip4.dst == 10.128.0.0/14",
            'ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.1.10; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; '
            'outport = "r1-a"; flags.loopback = 1; reg9[9] = 1; next;') in routing
    assert (192, "reg7 == 0 && ip4.src == 10.5.0.0/24",
            'ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.2.5; reg5 = 10.0.2.1; eth.src = 02:00:00:00:01:02; '
            'outport = "r1-b"; flags.loopback = 1; reg9[9] = 1; next;') in routing
    # 23.03 unchanged.
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd), table)
    assert (72, "ip4.src == 10.5.0.0/24",
            'ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.2.5; reg1 = 10.0.2.1; eth.src = 02:00:00:00:01:02; '
            'outport = "r1-b"; flags.loopback = 1; next;') in _flows(table, LR_IN_IP_ROUTING)


def test_connected_routes_25_03() -> None:
    # Observed (mixed): /16 at 134 (8*16+6), the link-local /64 at 518, reg9[9] 1 / 0.
    nd, r = _router([], [])
    table = FlowTable(1)
    build_lrp_routing_flows(r.ports[0], FlowCtx(nd, profile=OVN_25_03), table)
    routing = _flows(table, LR_IN_IP_ROUTING)
    assert (198, "ip4.dst == 10.0.1.0/24",
            'ip.ttl--; reg8[0..15] = 0; reg0 = ip4.dst; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; '
            'outport = "r1-a"; flags.loopback = 1; reg9[9] = 1; next;') in routing
    assert any(p == 518 and m == 'inport == "r1-a" && ip6.dst == fe80::/64' and a.endswith("reg9[9] = 0; next;")
               for p, m, a in routing)
    assert any(p == 518 and m == "ip6.dst == fd01::/64" for p, m, _ in routing)


@pytest.mark.parametrize("profile", [OVN_23_03, OVN_25_03])
def test_arp_resolve_and_request_25_03(profile: Any) -> None:
    nd, r = _router([], [])
    table = FlowTable(1)
    ctx = FlowCtx(nd, profile=profile)
    build_lr_arp_resolve_flows(r, ctx, table)
    build_lr_delivery_flows(r, ctx, table)
    resolve = {(p, m, a) for p, m, a in _flows(table, LR_IN_ARP_RESOLVE) if p == 1}
    request = {(p, m, a) for p, m, a in _flows(table, LR_IN_ARP_REQUEST) if p == 100}
    if profile is OVN_25_03:
        assert resolve == {(1, "reg9[9] == 1", "get_arp(outport, reg0); next;"),
                           (1, "reg9[9] == 0", "get_nd(outport, xxreg0); next;")}
        assert request == {
            (100, "eth.dst == 00:00:00:00:00:00 && reg9[9] == 1",
             "arp { eth.dst = ff:ff:ff:ff:ff:ff; arp.spa = reg5; arp.tpa = reg0; arp.op = 1; output; }; output;"),
            (100, "eth.dst == 00:00:00:00:00:00 && reg9[9] == 0", "nd_ns { nd.target = xxreg0; output; }; output;"),
        }
    else:
        assert resolve == {(1, "ip4", "get_arp(outport, reg0); next;"), (1, "ip6", "get_nd(outport, xxreg0); next;")}
        assert request == {
            (100, "eth.dst == 00:00:00:00:00:00 && ip4",
             "arp { eth.dst = ff:ff:ff:ff:ff:ff; arp.spa = reg1; arp.tpa = reg0; arp.op = 1; output; };"),
            (100, "eth.dst == 00:00:00:00:00:00 && ip6", "nd_ns { nd.target = xxreg0; output; };"),
        }


def test_new_stage_fallbacks_and_admission_25_03() -> None:
    nd, r = _router([], [])
    for profile, present in ((OVN_25_03, True), (OVN_23_03, False)):
        table = FlowTable(1)
        ctx = FlowCtx(nd, profile=profile)
        build_lr_default_flows(r, ctx, table)
        build_lr_admission_flows(r, ctx, table)
        for stage in (LR_IN_DHCP_RELAY_REQ, LR_IN_POST_UNSNAT, LR_IN_DHCP_RELAY_RESP_CHK, LR_IN_DHCP_RELAY_RESP):
            assert _flows(table, stage) == ({(0, "1", "next;")} if present else set())
        pmtud = (110, "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0))"
                      " && flags.tunnel_rx == 1", "drop;")
        assert (pmtud in _flows(table, LR_IN_ADMISSION)) is present
