"""Learned routes (SB Learned_Route) in lr_in_ip_routing, on a small hand-built router (expected
strings from 25.03's ovn-northd.at "dynamic-routing - learning routes from sb" / "route learning
ecmp" and our parity tests against the 25.03 / 26.03 references)."""

from __future__ import annotations

from test_flows_router import _route, _router

from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.dynamic_routing import LearnedRoute
from ovn_northd_py.flows.lr_pipeline import build_lr_route_and_policy_flows, route_and_policy_owners
from ovn_northd_py.lflow.profile import OVN_25_03, OVN_26_03, FlowProfile
from ovn_northd_py.lflow.stages import LR_IN_IP_ROUTING, LR_IN_IP_ROUTING_ECMP
from ovn_northd_py.lflow.table import FlowTable


def _flows(learned: list[LearnedRoute], profile: FlowProfile = OVN_25_03, statics: list | None = None,
           dynamic: bool = True) -> tuple[set[tuple[int, str, str]], set[tuple[int, str, str]], FlowTable, FlowCtx]:
    nd, r = _router(statics or [], [])
    if dynamic:
        r.nb.options["dynamic-routing"] = "true"
    ctx = FlowCtx(nd, profile=profile, learned_routes={r.key: tuple(learned)})
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, ctx, table)

    def of(stage) -> set[tuple[int, str, str]]:
        return {(f.priority, f.match, f.actions) for f in table.flows() if f.stage == stage}
    return of(LR_IN_IP_ROUTING), of(LR_IN_IP_ROUTING_ECMP), table, ctx


def test_a_learned_route_is_routed_below_static_routes_through_its_port() -> None:
    routing, _, _, _ = _flows([LearnedRoute("l1", "r1-a", "172.16.0.0/24", "10.0.1.11")])
    assert routing == {(194, "reg7 == 0 && ip4.dst == 172.16.0.0/24",
                        ('ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.1.11; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; '
                        'outport = "r1-a"; flags.loopback = 1; reg9[9] = 1; next;'))}


def test_the_next_hop_family_picks_the_registers() -> None:
    routing, _, _, _ = _flows([LearnedRoute("l1", "r1-a", "172.16.1.0/24", "fd01::30")])
    assert routing == {(194, "reg7 == 0 && ip4.dst == 172.16.1.0/24",
                        ("ip.ttl--; reg8[0..15] = 0; xxreg0 = fd01::30; xxreg1 = fd01::1; eth.src = 02:00:00:00:01:01; "
                        'outport = "r1-a"; flags.loopback = 1; reg9[9] = 0; next;'))}


def test_a_next_hop_outside_the_port_networks_gives_no_flow_in_25_03_and_the_first_address_in_26_03() -> None:
    learned = [LearnedRoute("l1", "r1-a", "172.16.2.0/24", "10.0.2.5")]
    assert _flows(learned)[0] == set()
    routing = _flows(learned, OVN_26_03)[0]
    assert {(p, m) for p, m, _ in routing} == {(194, "reg7 == 0 && ip4.dst == 172.16.2.0/24")}
    assert "reg0 = 10.0.2.5; reg5 = 10.0.1.1;" in next(iter(routing))[2]


def test_26_03_builds_no_learned_route_of_a_router_without_dynamic_routing() -> None:
    learned = [LearnedRoute("l1", "r1-a", "172.16.0.0/24", "10.0.1.11")]
    assert _flows(learned, OVN_25_03, dynamic=False)[0] != set()
    assert _flows(learned, OVN_26_03, dynamic=False)[0] == set()


def test_learned_routes_of_one_prefix_are_a_group_of_their_own_after_the_static_groups() -> None:
    statics = [_route(0x10, "192.168.0.0/24", "10.0.1.10"), _route(0x11, "192.168.0.0/24", "10.0.2.10")]
    learned = [LearnedRoute("l1", "r1-a", "192.168.0.0/24", "10.0.1.30"),
               LearnedRoute("l2", "r1-b", "192.168.0.0/24", "10.0.2.30")]
    routing, ecmp, table, ctx = _flows(learned, statics=statics)
    assert (196, "reg7 == 0 && ip4.dst == 192.168.0.0/24",
            "ip.ttl--; flags.loopback = 1; reg8[0..15] = 1; reg8[16..31] = select(1, 2);") in routing
    assert (194, "reg7 == 0 && ip4.dst == 192.168.0.0/24",
            "ip.ttl--; flags.loopback = 1; reg8[0..15] = 2; reg8[16..31] = select(1, 2);") in routing
    assert len([f for f in ecmp if f[1].startswith("reg8[0..15] == 2 ")]) == 2
    # Every flow is owned by a static or learned route: removing the owners empties the table.
    for owner in route_and_policy_owners(next(iter(ctx.nd.routers())), ctx):
        table.remove_owner(owner)
    assert not [f for f in table.flows() if f.stage in (LR_IN_IP_ROUTING, LR_IN_IP_ROUTING_ECMP)]


def test_bad_learned_rows_give_no_flow() -> None:
    routing = _flows([LearnedRoute("l1", "r1-a", "bad", "10.0.1.11"),
                      LearnedRoute("l2", "r1-a", "172.16.0.0/24", "bad"),
                      LearnedRoute("l3", "gone", "172.16.0.0/24", "10.0.1.11")])[0]
    assert routing == set()
