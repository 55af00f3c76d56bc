"""OVN 26.03's flows (the draft profile ``OVN_26_03``): conntrack-extraction load-balancer matches,
the new stages' flows, ACL hints that commit new connections, network functions, per-port TTL
exceeded, network ids and the stateful-ECMP egress commit.

Expected strings are the reference ovn-northd 26.03's (Debian sid), observed on the mixed 10/5/5,
ovn-k-like (gen_ovnk 5) and Neutron-like (gen_neutron 3) networks.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from test_flows_acl import Nb, _port, _switch, acl
from test_flows_router import _router

from ovn_northd_py.flows import FlowCtx, build_lflows
from ovn_northd_py.flows.acl_index import build_acl_index
from ovn_northd_py.flows.acl_rules import acl_flows
from ovn_northd_py.flows.defaults import build_lr_default_flows
from ovn_northd_py.flows.lr_delivery import (
    build_lr_delivery_flows,
    build_lrp_ecmp_egr_flows,
    build_lrp_network_id_flows,
)
from ovn_northd_py.flows.lr_ip_input import build_lr_ip_input_flows, build_lrp_ip_input_flows
from ovn_northd_py.flows.lr_lb import build_router_lb_flows
from ovn_northd_py.flows.lr_nat import NatGw
from ovn_northd_py.flows.ls_lb import switch_lb_specs
from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03, OVN_26_03
from ovn_northd_py.lflow.stages import (
    LR_IN_ARP_REQUEST,
    LR_IN_CT_EXTRACT,
    LR_IN_DNAT,
    LR_IN_ECMP_STATEFUL_EGR,
    LR_IN_IP_INPUT,
    LR_IN_NETWORK_ID,
    LR_OUT_DELIVERY,
    LS_IN_LB,
    LS_IN_LB_AFF_CHECK,
)
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.model import Northd


def _flows(table: FlowTable, stage: Any) -> set[tuple[int, str, str]]:
    return {(f.priority, f.match, f.actions) for f in table.flows() if f.stage == stage}


def _lb(vips: dict[str, str], options: dict[str, str] | None = None, proto: str = "tcp") -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=7), name="lb", vips=vips, protocol=[proto], options=options or {},
                           selection_fields=[], health_check=[], ip_port_mappings={}, external_ids={})


# ---- load balancers: ct_extract_lb_match ----

def test_switch_vip_matches_the_ct_extract_registers() -> None:
    ctx = FlowCtx(Northd(), profile=OVN_26_03)
    specs = {(st, p, m, a) for st, p, m, a, _ in switch_lb_specs(_lb({"10.96.0.1:80": "10.128.1.5:8080"}), ctx)}
    assert (LS_IN_LB, 120, "ct.new && ip4.dst == 10.96.0.1 && reg1[16..23] == 6 && reg1[0..15] == 80",
            "reg4 = 10.96.0.1; reg2[0..15] = 80; ct_lb_mark(backends=10.128.1.5:8080);") in specs


def test_udp_vip_matches_protocol_17() -> None:
    ctx = FlowCtx(Northd(), profile=OVN_26_03)
    specs = {(st, m) for st, _, m, _, _ in switch_lb_specs(_lb({"10.96.0.11:443": "10.128.3.3:8080"}, proto="udp"),
                                                         ctx)}
    assert (LS_IN_LB, "ct.new && ip4.dst == 10.96.0.11 && reg1[16..23] == 17 && reg1[0..15] == 443") in specs


def test_switch_affinity_check_matches_the_ct_extract_registers() -> None:
    ctx = FlowCtx(Northd(), profile=OVN_26_03)
    lb = _lb({"10.96.0.14:443": "10.128.4.8:8083"}, {"affinity_timeout": "60"})
    specs = {(st, p, m) for st, p, m, _, _ in switch_lb_specs(lb, ctx)}
    assert (LS_IN_LB_AFF_CHECK, 100, "ct.new && ip4 && ip4.dst == 10.96.0.14 && reg1[16..23] == 6 && reg1[0..15] == 443"
            ) in specs


def test_25_03_vip_match_keeps_the_l4_port() -> None:
    ctx = FlowCtx(Northd(), profile=OVN_25_03)
    specs = {(st, m) for st, _, m, _, _ in switch_lb_specs(_lb({"10.96.0.1:80": "10.128.1.5:8080"}), ctx)}
    assert (LS_IN_LB, "ct.new && ip4.dst == 10.96.0.1 && tcp.dst == 80") in specs


def test_router_vip_matches_the_ct_extract_registers() -> None:
    nd, r = _router([], [])
    table = FlowTable(1)
    build_router_lb_flows(r, NatGw(None, None), _lb({"50.0.4.1:80": "192.168.0.4:80"}), table,
                          ctx=FlowCtx(nd, profile=OVN_26_03))
    assert (120, "ct.new && !ct.rel && ip4 && ip4.dst == 50.0.4.1 && reg1[16..23] == 6 && reg1[0..15] == 80",
            "ct_lb_mark(backends=192.168.0.4:80);") in _flows(table, LR_IN_DNAT)


def test_switch_with_vip_extracts_conntrack_fields_of_new_connections() -> None:
    nd = Northd()
    sw = _switch(nd, "sw", [])
    sw.nb.load_balancer = [_lb({"10.96.0.1:80": "10.128.1.5:8080"})]
    _port(nd, sw, "p1")
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, FlowCtx(nd, profile=OVN_26_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={}))), table)
    keys = {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}
    assert ("ls_in_ct_extract", 100, "ct.new && ip", "reg1[16..23] = ct_proto(); reg1[0..15] = ct_tp_dst(); next;") in keys
    assert ("ls_in_ct_extract", 0, "1", "next;") in keys
    assert ("ls_in_lb", 110, "ct.trk && ct.est && !ct.rpl && reg0[19] == 1 && ip4",
            "reg4 = ct_nw_dst(); reg2[0..15] = ct_tp_dst(); next;") in keys


# ---- switch: new stages, ACL hints, network functions, L2 ----

def _switch_keys(stateful_acl: bool = True) -> set[tuple[str, int, str, str]]:
    nd = Northd()
    sw = _switch(nd, "sw", [acl(action="allow-related" if stateful_acl else "allow", match="ip4")])
    _port(nd, sw, "p1")
    ctx = FlowCtx(nd, profile=OVN_26_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})))
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    return {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}


def test_new_switch_stages_fall_back_to_next() -> None:
    keys = _switch_keys()
    for stage in ("ls_in_mirror", "ls_out_mirror", "ls_in_ct_extract", "ls_in_pre_network_function",
                  "ls_out_pre_network_function", "ls_in_network_function", "ls_out_network_function"):
        assert (stage, 0, "1", "next;") in keys


def test_network_function_stages_without_network_functions() -> None:
    keys = _switch_keys()
    for pre, nf in (("ls_in_pre_network_function", "ls_in_network_function"),
                    ("ls_out_pre_network_function", "ls_out_network_function")):
        assert (pre, 1, "reg8[21] == 1 && reg8[22] == 1", "reg0[22..29] = 0; next;") in keys
        assert (nf, 100, "reg8[21] == 1 && eth.mcast", "next;") in keys
        assert (nf, 1, "reg8[21] == 1", "drop;") in keys


def test_stateful_commits_the_network_function_label() -> None:
    keys = _switch_keys()
    base = "ct_mark.blocked = 0; ct_mark.allow_established = reg0[20]; ct_label.acl_id = reg2[16..31]; "
    assert ("ls_in_stateful", 100, "reg0[1] == 1 && reg0[13] == 0",
            f"ct_commit {{ {base}ct_label.nf = 0; ct_label.nf_id = 0; }}; next;") in keys
    assert ("ls_out_stateful", 110, "reg0[1] == 1 && reg0[13] == 0 && reg8[21] == 1",
            f"ct_commit {{ {base}ct_label.nf = 1; ct_label.nf_id = reg0[22..29]; }}; next;") in keys


def test_acl_hints_commit_new_connections() -> None:
    keys = _switch_keys()
    assert ("ls_in_acl_hint", 7, "ct.new && !ct.est", "reg0[7] = 1; reg0[9] = 1; reg0[1] = 1; next;") in keys
    assert ("ls_out_acl_hint", 6, "!ct.new && ct.est && !ct.rpl && ct_mark.blocked == 1",
            "reg0[7] = 1; reg0[9] = 1; reg0[1] = 1; next;") in keys
    assert ("ls_in_acl_eval", 1, "ip && !ct.est", "next;") in keys
    assert ("ls_in_acl_eval", 1, "ip && ct.est && ct_mark.blocked == 1", "reg8[16] = 1; next;") in keys


def test_acl_conntrack_flows_restore_the_network_function_bit() -> None:
    keys = _switch_keys()
    assert ("ls_in_acl_eval", 65532, "ct.est && !ct.rel && ct.rpl && ct_mark.blocked == 0",
            "reg0[9] = 0; reg0[10] = 0; reg0[17] = 1; reg8[21] = ct_label.nf; reg8[16] = 1; next;") in keys
    assert ("ls_out_acl_eval", 65532, "!ct.est && ct.rel && !ct.new && ct_mark.blocked == 0",
            "reg8[21] = ct_label.nf; reg8[16] = 1; ct_commit_nat;") in keys


def test_allow_new_acl_flow_leaves_the_commit_to_the_hint() -> None:
    got = {(f.match, f.actions) for f in acl_flows(acl(match="tcp", label=1234), "k", True, True, frozenset(),
                                                   OVN_26_03)}
    label = "reg0[13] = 1; reg3 = 1234; reg9 = 1234; reg8[0..7] = 0; reg8[8..15] = 0; reg8[19..20] = 2; "
    assert ("reg0[7] == 1 && (tcp)", f"reg8[16] = 1; {label}next;") in got
    assert ("reg0[8] == 1 && (tcp)", f"reg8[16] = 1; reg0[1] = 1; {label}next;") in got


def test_multicast_floods_l2_but_arp_and_nd_reach_routers() -> None:
    keys = _switch_keys(stateful_acl=False)
    assert ("ls_in_l2_lkup", 70, "eth.mcast", 'outport = "_MC_flood_l2"; output;') in keys
    assert ("ls_in_l2_lkup", 71, "eth.mcast && arp", 'outport = "_MC_flood"; output;') in keys
    assert ("ls_in_l2_lkup", 71, "eth.mcast && ip", 'outport = "_MC_flood_l2"; output;') in keys
    assert ("ls_in_l2_lkup", 72, "eth.mcast && (nd_na || nd_rs || nd_ra)", 'outport = "_MC_flood"; output;') in keys
    assert ("ls_in_l2_lkup", 100, "reg8[23] == 1", "output;") in keys


# ---- router ----

def test_new_router_stages_and_arp_request_going_on() -> None:
    nd, r = _router([], [])
    table = FlowTable(1)
    ctx = FlowCtx(nd, profile=OVN_26_03)
    build_lr_default_flows(r, ctx, table)
    build_lr_delivery_flows(r, ctx, table)
    assert _flows(table, LR_IN_CT_EXTRACT) == {(0, "1", "next;")}
    assert _flows(table, LR_IN_NETWORK_ID) == {(0, "1", "next;"), (105, "1", "flags.network_id = 0; next;")}
    assert _flows(table, LR_IN_ECMP_STATEFUL_EGR) == {(0, "1", "output;")}
    assert (0, "1", "next;") in _flows(table, LR_IN_ARP_REQUEST)
    assert (100, "eth.dst == 00:00:00:00:00:00 && reg9[9] == 0", "nd_ns { nd.target = xxreg0; output; }; next;"
            ) in _flows(table, LR_IN_ARP_REQUEST)


def test_router_without_ports_drops_in_lr_out_delivery() -> None:
    nd, r = _router([], [])
    r.ports.clear()
    table = FlowTable(1)
    build_lr_default_flows(r, FlowCtx(nd, profile=OVN_26_03), table)
    assert _flows(table, LR_OUT_DELIVERY) == {(0, "1", "drop;")}
    table = FlowTable(1)
    build_lr_default_flows(r, FlowCtx(nd, profile=OVN_25_03), table)
    assert _flows(table, LR_OUT_DELIVERY) == {(0, "1", "drop;")}  # (25.03 already: lr_delivery_default)
    table = FlowTable(1)
    build_lr_default_flows(r, FlowCtx(nd, profile=OVN_23_03), table)
    assert _flows(table, LR_OUT_DELIVERY) == set()


def test_network_id_per_port_network() -> None:
    nd, r = _router([], [])
    table = FlowTable(1)
    build_lrp_network_id_flows(r.ports[0], FlowCtx(nd, profile=OVN_26_03), table)
    assert _flows(table, LR_IN_NETWORK_ID) == {
        (110, 'outport == "r1-a" && ip4 && reg0 == 10.0.1.1/24', "flags.network_id = 0; next;"),
        (110, 'outport == "r1-a" && ip6 && xxreg0 == fd01::1/64', "flags.network_id = 0; next;"),
    }


def test_ecmp_stateful_egress_commit_per_port() -> None:
    nd, r = _router([], [])
    r.ports[1].tunnel_key = 2
    table = FlowTable(1)
    build_lrp_ecmp_egr_flows(r.ports[1], FlowCtx(nd, profile=OVN_26_03), table)
    assert _flows(table, LR_IN_ECMP_STATEFUL_EGR) == {
        (100, 'reg9[10] == 1 && ip && outport == "r1-b"',
         "ct_commit { ct_label.ecmp_reply_eth = eth.dst; ct_mark.ecmp_reply_port = 2;}; output;")}


def test_ttl_exceeded_per_port_and_per_source_network() -> None:
    nd, r = _router([], [])
    table = FlowTable(1)
    ctx = FlowCtx(nd, profile=OVN_26_03)
    build_lr_ip_input_flows(r, ctx, table)
    build_lrp_ip_input_flows(r.ports[1], ctx, table)
    flows = _flows(table, LR_IN_IP_INPUT)
    assert (29, "ip.ttl == {0, 1}", "drop;") in flows
    assert (30, 'inport == "r1-b" && ip4 && ip.ttl == {0, 1} && !ip.later_frag',
            ('icmp4 {eth.dst <-> eth.src; icmp4.type = 11; /* Time exceeded */ icmp4.code = 0; /* TTL exceeded in '
             'transit */ ip4.dst = ip4.src; ip4.src = 10.0.2.1; ip.ttl = 254; outport = "r1-b"; flags.loopback = 1; '
             'output; };')) in flows
    assert (31, 'inport == "r1-b" && ip4 && ip4.src == 10.0.2.0/24 && ip.ttl == {0, 1} && !ip.later_frag',
            ('icmp4 {eth.dst <-> eth.src; icmp4.type = 11; /* Time exceeded */ icmp4.code = 0; /* TTL exceeded in '
             'transit */ ip4.dst = ip4.src; ip4.src = 10.0.2.1 ; ip.ttl = 254; outport = "r1-b"; flags.loopback = 1; '
             'output; };')) in flows
    assert any(p == 30 and m == 'inport == "r1-b" && ip6 && ip.ttl == {0, 1} && !ip.later_frag' for p, m, _ in flows)


# ---- distributed gateway ports, localnet ARP filtering, gateway MTU (Neutron-like, observed) ----

def _dgp_net(localnet: bool = True, mtu: bool = False) -> tuple[Any, Any, Any, Any]:
    from test_flows_l2 import Net, nat

    net = Net()
    fip = nat("00000000-0000-0000-0000-0000000000f1", "dnat_and_snat", "172.24.0.16", "fa:16:3e:33:f3:cb", "vm1",
              logical_ip="10.0.2.10")
    r = net.router("r1", nat=[fip])
    pub = net.switch("public")
    opts = {"gateway_mtu": "1500"} if mtu else {}
    dgp = net.lrp(r, "lrp-gw", "fa:16:3e:63:5e:3f", "172.24.0.15/16", options=opts)
    dgp.crp = net.gateway(dgp)
    net.router_port(pub, dgp, "pub-r1", "router")
    inner = net.lrp(r, "lrp-in", "fa:16:3e:23:71:24", "10.0.2.1/24")
    sw = net.switch("tenant")
    net.router_port(sw, inner, "tenant-r1", "router")
    net.lsp(sw, "vm1", "fa:16:3e:00:00:01 10.0.2.10")
    if localnet:
        net.lsp(pub, "provnet", "unknown", type="localnet").nb.tag_request = []
    return net, r, pub, dgp


def test_localnet_arp_requests_pass_only_where_a_gateway_is() -> None:
    from ovn_northd_py.lflow.stages import LS_IN_APPLY_PORT_SEC, LS_IN_CHECK_PORT_SEC

    net, _, pub, _ = _dgp_net()
    flows = net.build(profile=OVN_26_03)
    assert flows.keys(pub, LS_IN_CHECK_PORT_SEC, 75) == {
        (75, 'arp.op == 1 && inport == "provnet"', "reg0[22] = 1; next;")}
    assert flows.keys(pub, LS_IN_APPLY_PORT_SEC) >= {
        (70, "reg0[22] == 1", "drop;"),
        (75, 'reg0[22] == 1 && is_chassis_resident("cr-lrp-gw")', "next;"),
        (85, 'reg0[22] == 1 && arp.tpa == 172.24.0.16 && is_chassis_resident("vm1")', "next;"),
    }
    assert not net.build(profile=OVN_25_03).keys(pub, LS_IN_CHECK_PORT_SEC, 75)


def test_no_localnet_arp_filter_without_a_localnet_port() -> None:
    from ovn_northd_py.lflow.stages import LS_IN_APPLY_PORT_SEC

    net, _, pub, _ = _dgp_net(localnet=False)
    assert not net.build(profile=OVN_26_03).keys(pub, LS_IN_APPLY_PORT_SEC, 70)


def test_dgp_arp_lookups_on_every_chassis() -> None:
    from ovn_northd_py.lflow.stages import LR_IN_LOOKUP_NEIGHBOR

    net, r, _, _ = _dgp_net()
    keys = net.build(profile=OVN_26_03).keys(r, LR_IN_LOOKUP_NEIGHBOR)
    assert (100, 'inport == "lrp-gw" && arp.spa == 172.24.0.0/16 && arp.op == 1',
            "reg9[2] = lookup_arp(inport, arp.spa, arp.sha); next;") in keys
    assert (120, 'inport == "lrp-gw" && (nd_na || nd_ns) && eth.mcast && !is_chassis_resident("cr-lrp-gw")',
            "reg9[2] = 1; next;") in keys


def test_dgp_dnat_and_snat_reverse_direction_in_the_dnat_zone() -> None:
    from ovn_northd_py.lflow.stages import LR_OUT_POST_SNAT, LR_OUT_POST_UNDNAT, LR_OUT_SNAT

    net, r, _, _ = _dgp_net()
    flows = net.build(profile=OVN_26_03)
    res = 'is_chassis_resident("vm1")'
    assert (75, f'ip && ip4.src == 10.0.2.10 && outport == "lrp-gw" && {res} && (!ct.trk || !ct.rpl)',
            "ct_next(dnat);") in flows.keys(r, LR_OUT_POST_UNDNAT)
    assert (166, f'ip && ip4.dst == 10.0.2.10 && inport == "lrp-gw" && {res} && (!ct.trk || !ct.rpl)',
            "ct_dnat;") in flows.keys(r, LR_OUT_SNAT)
    assert (166, f'ip && ip4.dst == 10.0.2.10 && inport == "lrp-gw" && {res} && ct.new',
            "ct_commit_to_zone(dnat);") in flows.keys(r, LR_OUT_POST_SNAT)
    assert not net.build(profile=OVN_25_03).keys(r, LR_OUT_POST_UNDNAT, 75)


def test_gateway_mtu_saves_the_conntrack_state_and_lets_arp_bypass() -> None:
    from ovn_northd_py.lflow.stages import LR_IN_ADMISSION, LR_IN_CHK_PKT_LEN, LR_IN_LARGER_PKTS

    net, r, _, _ = _dgp_net(mtu=True)
    flows = net.build(profile=OVN_26_03)
    assert flows.keys(r, LR_IN_CHK_PKT_LEN) >= {
        (50, 'outport == "lrp-gw"', "reg9[1] = check_pkt_larger(1514); reg4[0..7] = ct_state_save(); next;"),
        (55, 'outport == "lrp-gw" && (arp)', "reg4[0..7] = ct_state_save(); next;"),
    }
    assert (50, 'eth.mcast && inport == "lrp-gw"', "xreg0[0..47] = fa:16:3e:63:5e:3f; next;") in flows.keys(
        r, LR_IN_ADMISSION)
    assert any(m.endswith("reg4[5] && reg4[3] && reg4[7]") for _, m, _ in flows.keys(r, LR_IN_LARGER_PKTS, 160))


def test_symmetric_ecmp_replies_by_ct_mark_alone() -> None:
    # Observed (gen_random, ecmp_symmetric_reply on a gateway router's routes).
    from test_flows_router import _route

    from ovn_northd_py.flows.lr_pipeline import build_lr_route_and_policy_flows
    from ovn_northd_py.lflow.stages import (
        LR_IN_DEFRAG,
        LR_IN_ECMP_STATEFUL,
        LR_IN_IP_ROUTING,
        LR_IN_IP_ROUTING_ECMP,
    )

    sym = {"ecmp_symmetric_reply": "true"}
    routes = [_route(0x10, "198.51.100.0/24", "10.0.1.10", options=sym),
              _route(0x11, "198.51.100.0/24", "10.0.1.11", options=sym)]
    nd, r = _router(routes, [])
    r.nb.options["chassis"] = "hv1"
    r.ports[0].tunnel_key = 1
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd, profile=OVN_26_03), table)
    assert _flows(table, LR_IN_DEFRAG) == {
        (100, "reg7 == 0 && ip4.dst == 198.51.100.0/24", "ct_next;"),
        (100, 'inport == "r1-a" && ip4.src == 198.51.100.0/24', "ct_next;")}
    assert _flows(table, LR_IN_ECMP_STATEFUL) == {
        (100, 'inport == "r1-a" && ip4.src == 198.51.100.0/24 && (ct.new || ct.est)',
         "ct_commit { ct_label.ecmp_reply_eth = eth.src; ct_mark.ecmp_reply_port = 1;}; next;")}
    assert (10300, "ct_mark.ecmp_reply_port == 1 && reg7 == 0 && ip4.dst == 198.51.100.0/24",
            'ip.ttl--; flags.loopback = 1; eth.src = 02:00:00:00:01:01; reg5 = 10.0.1.1; outport = "r1-a"; next;'
            ) in _flows(table, LR_IN_IP_ROUTING)
    members = [a for p, _, a in _flows(table, LR_IN_IP_ROUTING_ECMP) if p == 100]
    assert len(members) == 2 and all(a.endswith("reg9[9] = 1; reg9[10] = 1; next;") for a in members)


def test_localport_not_bound_on_a_bridged_distributed_gateway_port() -> None:
    # Observed (gen_neutron 10): the metadata localport of the public network.
    from test_flows_l2 import Net

    from ovn_northd_py.lflow.stages import LR_IN_ARP_RESOLVE

    def bindings(profile: Any) -> set[tuple[int, str, str]]:
        net = Net()
        r = net.router("r1")
        pub = net.switch("public")
        dgp = net.lrp(r, "lrp-gw", "fa:16:3e:1d:c0:d1", "172.24.0.27/16", options={"redirect-type": "bridged"})
        dgp.crp = net.gateway(dgp)
        net.router_port(pub, dgp, "pub-r1", "router")
        net.lsp(pub, "ovnmeta", "fa:16:3e:f8:cf:9b 172.24.0.10", type="localport")
        return net.build(profile=profile).keys(r, LR_IN_ARP_RESOLVE, 100)

    flow = (100, 'outport == "lrp-gw" && reg0 == 172.24.0.10', "eth.dst = fa:16:3e:f8:cf:9b; next;")
    assert flow not in bindings(OVN_26_03)
    assert flow in bindings(OVN_25_03)
