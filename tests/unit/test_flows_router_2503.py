"""OVN 25.03's router pipeline (the profile's behaviours), expected strings observed on the
25.03 reference (Debian trixie's ovn-northd 25.03.0, parity runs mixed 10/5/5 and gen_ovnk 5);
the same builders under 23.03 keep 23.03's strings."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from test_flows_router import _route, _router

from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.defaults import build_lr_default_flows
from ovn_northd_py.flows.lr_admission import build_lr_admission_flows
from ovn_northd_py.flows.lr_arp_resolve import build_lr_arp_resolve_flows
from ovn_northd_py.flows.lr_delivery import build_lr_delivery_flows
from ovn_northd_py.flows.lr_ip_input import build_lrp_ip_input_flows
from ovn_northd_py.flows.lr_lb import build_router_lb_flows
from ovn_northd_py.flows.lr_nat import EGR_LOOP, EGR_LOOP_NO_CZONE, NatGw, dnat_ct_flows
from ovn_northd_py.flows.lr_neighbor import build_lr_neighbor_flows
from ovn_northd_py.flows.lr_pipeline import build_lr_route_and_policy_flows
from ovn_northd_py.flows.lr_routing import build_lrp_routing_flows, chain_order_dependents
from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03
from ovn_northd_py.lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_REQUEST,
    LR_IN_ARP_RESOLVE,
    LR_IN_DHCP_RELAY_REQ,
    LR_IN_DHCP_RELAY_RESP,
    LR_IN_DHCP_RELAY_RESP_CHK,
    LR_IN_DNAT,
    LR_IN_IP_INPUT,
    LR_IN_IP_ROUTING,
    LR_IN_LB_AFF_CHECK,
    LR_IN_LB_AFF_LEARN,
    LR_IN_LEARN_NEIGHBOR,
    LR_IN_LOOKUP_NEIGHBOR,
    LR_IN_POLICY,
    LR_IN_POST_UNSNAT,
)
from ovn_northd_py.lflow.table import FlowTable


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
            ('ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.1.10; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; '
            'outport = "r1-a"; flags.loopback = 1; reg9[9] = 1; next;')) in routing
    assert (192, "reg7 == 0 && ip4.src == 10.5.0.0/24",
            ('ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.2.5; reg5 = 10.0.2.1; eth.src = 02:00:00:00:01:02; '
            'outport = "r1-b"; flags.loopback = 1; reg9[9] = 1; next;')) in routing
    # 23.03 unchanged.
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd), table)
    assert (72, "ip4.src == 10.5.0.0/24",
            ('ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.2.5; reg1 = 10.0.2.1; eth.src = 02:00:00:00:01:02; '
            'outport = "r1-b"; flags.loopback = 1; next;')) in _flows(table, LR_IN_IP_ROUTING)


def test_connected_routes_25_03() -> None:
    # Observed (mixed): /16 at 134 (8*16+6), the link-local /64 at 518, reg9[9] 1 / 0.
    nd, r = _router([], [])
    table = FlowTable(1)
    build_lrp_routing_flows(r.ports[0], FlowCtx(nd, profile=OVN_25_03), table)
    routing = _flows(table, LR_IN_IP_ROUTING)
    assert (198, "ip4.dst == 10.0.1.0/24",
            ('ip.ttl--; reg8[0..15] = 0; reg0 = ip4.dst; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; '
            'outport = "r1-a"; flags.loopback = 1; reg9[9] = 1; next;')) in routing
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
        pmtud = (110, ("((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0))"
                      " && flags.tunnel_rx == 1"), "drop;")
        assert (pmtud in _flows(table, LR_IN_ADMISSION)) is present


# ---- more 25.03 behaviours (observed on mixed 10/5/5, gen_ovnk 5, gen_neutron 3) ----

def test_lb_ct_flows_not_rpl_and_egress_loopback_25_03() -> None:
    nd, _ = _router([], [])
    flows = dnat_ct_flows(FlowCtx(nd, profile=OVN_25_03))
    assert (50, "ct.est && !ct.rel && !ct.new && !ct.rpl && ct_mark.natted", "next;") in flows
    assert (70, "ct.rel && !ct.est && !ct.new && !ct.rpl && ct_mark.skip_snat == 1",
            "flags.skip_snat_for_lb = 1; ct_commit_nat;") in flows
    assert (50, "ct.rel && !ct.est && !ct.new", "ct_commit_nat;") in dnat_ct_flows(FlowCtx(nd))
    assert "flags.use_snat_zone" in EGR_LOOP and "flags.use_snat_zone" not in EGR_LOOP_NO_CZONE


def test_neighbor_learning_25_03() -> None:
    nd, r = _router([], [])
    table = FlowTable(1)
    build_lr_neighbor_flows(r, FlowCtx(nd, profile=OVN_25_03), table)
    assert (100, "reg9[2] == 1", "mac_cache_use; next;") in _flows(table, LR_IN_LEARN_NEIGHBOR)
    r.nb.options["always_learn_from_arp_request"] = "false"
    table = FlowTable(1)
    build_lr_neighbor_flows(r, FlowCtx(nd, profile=OVN_25_03), table)
    assert (100, "reg9[2] == 1 || reg9[3] == 0", "mac_cache_use; next;") in _flows(table, LR_IN_LEARN_NEIGHBOR)
    assert (110, "nd_na && ip6.src == fe80::/10 && ip6.dst == ff00::/8",
            "reg9[2] = lookup_nd(inport, nd.target, nd.tll); reg9[3] = lookup_nd_ip(inport, nd.target); next;"
            ) in _flows(table, LR_IN_LOOKUP_NEIGHBOR)


def test_no_dhcpv6_reply_flows_25_03() -> None:
    nd, r = _router([], [])
    for profile, n in ((OVN_25_03, 0), (OVN_23_03, 2)):
        table = FlowTable(1)
        build_lrp_ip_input_flows(r.ports[0], FlowCtx(nd, profile=profile), table)
        assert sum("handle_dhcpv6_reply" in a for _, _, a in _flows(table, LR_IN_IP_INPUT)) == n


def test_reroute_policy_25_03() -> None:
    # Observed (gen_ovnk): ``reg0 = 10.128.0.2; reg5 = 10.128.0.1; eth.src = ...; outport = ...;
    # flags.loopback = 1; reg8[0..15] = 0; reg9[9] = 1; next;``
    pol = SimpleNamespace(uuid=_route(0x30, "0.0.0.0/0", "x").uuid, priority=1004, match="ip4.dst == 1.2.3.4",
                          action="reroute", nexthops=["10.0.1.2"], nexthop=[], options={})
    nd, r = _router([], [pol])
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd, profile=OVN_25_03), table)
    assert (1004, "ip4.dst == 1.2.3.4",
            ('reg0 = 10.0.1.2; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; outport = "r1-a"; flags.loopback = 1; '
            "reg8[0..15] = 0; reg9[9] = 1; next;")) in _flows(table, LR_IN_POLICY)


def test_router_lb_affinity_25_03() -> None:
    # Observed (gen_ovnk, GR_node0, 10.96.0.14:443, affinity, router forcing SNAT).
    lb = SimpleNamespace(uuid=_route(0x40, "0.0.0.0/0", "x").uuid, name="lb",
                         vips={"10.96.0.14:443": "10.128.1.10:8083"}, protocol=["tcp"],
                         options={"affinity_timeout": "10800"}, selection_fields=[], health_check=[],
                         ip_port_mappings={}, external_ids={})
    nd, r = _router([], [])
    table = FlowTable(1)
    ctx = FlowCtx(nd, profile=OVN_25_03)
    build_router_lb_flows(r, NatGw(None, None), lb, table, force_snat=True, ctx=ctx)
    assert (120, "ct.new && !ct.rel && ip4 && ip4.dst == 10.96.0.14 && tcp && tcp.dst == 443",
            ("flags.force_snat_for_lb = 1; reg4 = 10.96.0.14; reg2[0..15] = 443; "
            "ct_lb_mark(backends=10.128.1.10:8083; force_snat);")) in _flows(table, LR_IN_DNAT)
    assert (150, "reg9[6] == 1 && ct.new && ip4.dst == 10.96.0.14 && reg4 == 10.128.1.10 && reg2[0..15] == 8083",
            "flags.force_snat_for_lb = 1; ct_lb_mark(backends=10.128.1.10:8083; force_snat);") in _flows(table, LR_IN_DNAT)
    assert (100, "ct.new && !ct.rel && ip4 && ip4.dst == 10.96.0.14 && tcp && tcp.dst == 443",
            "reg9[6] = chk_lb_aff(); next;") in _flows(table, LR_IN_LB_AFF_CHECK)
    assert (100, ("reg9[6] == 0 && ct.new && ip4 && reg4 == 10.96.0.14 && reg2[0..15] == 443 && "
                 "ip4.dst == 10.128.1.10 && tcp.dst == 8083"),
            ('commit_lb_aff(vip = "10.96.0.14:443", backend = "10.128.1.10:8083", proto = tcp, timeout = 10800); '
            "/* drop */")) in _flows(table, LR_IN_LB_AFF_LEARN)


def test_ecmp_members_25_03() -> None:
    # Observed (probe: two IPv4 and two IPv6 next hops on a gateway router): reg5 / xxreg1 and
    # reg9[9] = 1 / 0 in lr_in_ip_routing_ecmp.
    from ovn_northd_py.lflow.stages import LR_IN_IP_ROUTING_ECMP

    routes = [_route(0x10, "192.168.0.0/16", "10.0.1.10"), _route(0x11, "192.168.0.0/16", "10.0.1.11")]
    nd, r = _router(routes, [])
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd, profile=OVN_25_03), table)
    assert (100, "reg8[0..15] == 1 && reg8[16..31] == 1",
            'reg0 = 10.0.1.10; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; outport = "r1-a"; reg9[9] = 1; next;'
            ) in _flows(table, LR_IN_IP_ROUTING_ECMP)


def test_router_with_one_route_per_prefix_does_not_depend_on_other_routers_ecmp_numbering() -> None:
    # ovn-k gateway routers: several static routes, one per prefix (host bits and all): no ECMP
    # group, so a change of another router does not rebuild them (chain_order_dependents).
    nd, _ = _router([_route(0x10, "10.244.0.0/16", "100.64.0.1"), _route(0x11, "10.245.0.0/16", "100.64.0.1"),
                     _route(0x12, "0.0.0.0/0", "172.18.0.1"), _route(0x13, "10.244.0.0/16", "10.0.1.9",
                                                                      policy=["src-ip"])], [])
    assert chain_order_dependents(nd) == []


def test_router_with_two_routes_of_one_normalized_prefix_depends_on_other_routers_ecmp_numbering() -> None:
    nd, r = _router([_route(0x10, "10.244.0.0/16", "10.0.1.9"), _route(0x11, "10.244.7.7/16", "10.0.2.9",
                                                                        route_table="other")], [])
    assert chain_order_dependents(nd) == [r]


def test_router_with_a_symmetric_reply_route_depends_on_other_routers_ecmp_numbering() -> None:
    nd, r = _router([_route(0x10, "10.244.0.0/16", "10.0.1.9", options={"ecmp_symmetric_reply": "true"})], [])
    assert chain_order_dependents(nd) == [r]
