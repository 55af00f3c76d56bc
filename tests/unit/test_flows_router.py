"""Router pipeline builders on small hand-built models (expected strings from the reference 23.03)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.lr_common import hmap_mask, parse_ip_strict, smap_bool
from ovn_northd_py.flows.lr_pipeline import build_lr_route_and_policy_flows, route_and_policy_owners
from ovn_northd_py.lflow.stages import (
    LR_IN_IP_ROUTING,
    LR_IN_IP_ROUTING_ECMP,
    LR_IN_POLICY,
    LR_IN_POLICY_ECMP,
)
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.model import LR, Datapath, Northd, Port
from ovn_northd_py.northd.ovs_order import ovs_hash_string, sset_order


def test_smap_bool_reads_like_ovs() -> None:
    assert smap_bool({"a": "TRUE"}, "a", False) is True
    assert smap_bool({"a": "False"}, "a", True) is False
    assert smap_bool({"a": "yes"}, "a", True) is True
    assert smap_bool({}, "a", False) is False


def test_parse_ip_strict_is_inet_pton() -> None:
    assert str(parse_ip_strict("10.0.1.100")) == "10.0.1.100"
    assert parse_ip_strict("010.0.1.100") is None
    assert parse_ip_strict("bogus") is None
    assert parse_ip_strict("10.0.0.0/8") is None
    assert str(parse_ip_strict("fd01::1")) == "fd01::1"


def test_hmap_mask_matches_sset_growth() -> None:
    # sset_order simulates the same growth: the bucket order it yields follows hash & mask.
    assert [hmap_mask(n) for n in (0, 1, 2, 3, 7, 8, 16, 17)] == [0, 0, 3, 3, 3, 7, 15, 15]
    names = [f"p{i}" for i in range(40)]
    order = sset_order(names)
    mask = hmap_mask(len(names))
    buckets = [ovs_hash_string(n) & mask for n in order]
    assert buckets == sorted(buckets)


# --------------------------------------------------------------------------- static routes / policies


def _uuid(n: int) -> uuid.UUID:
    return uuid.UUID(f"{n:08x}-0000-4000-8000-000000000000")


def _router(routes: list[Any], policies: list[Any]) -> tuple[Northd, Datapath]:
    nd = Northd()
    nb = SimpleNamespace(uuid=_uuid(1), name="r1", nat=[], load_balancer=[], load_balancer_group=[], options={},
                         static_routes=routes, policies=policies, enabled=[], ports=[])
    r = Datapath(str(nb.uuid), LR, "r1", nb, index=0)
    nd.by_index.append(r)
    nd.datapaths[r.key] = r
    for n, (name, mac, nets) in enumerate(
        [("r1-a", "02:00:00:00:01:01", ["10.0.1.1/24", "fd01::1/64"]), ("r1-b", "02:00:00:00:01:02", ["10.0.2.1/24"])],
        start=2,
    ):
        lrp = SimpleNamespace(uuid=_uuid(n), name=name, mac=mac, networks=nets, options={}, enabled=[],
                              ipv6_ra_configs={})
        p = Port(name, "lrp", r, lrp, str(lrp.uuid))
        r.ports.append(p)
        nb.ports.append(lrp)
        nd.ports[name] = p
    return nd, r


def _route(n: int, prefix: str, nexthop: str, **kw: Any) -> SimpleNamespace:
    return SimpleNamespace(uuid=_uuid(n), ip_prefix=prefix, nexthop=nexthop, policy=kw.get("policy", []),
                           route_table=kw.get("route_table", ""), output_port=kw.get("output_port", []),
                           options=kw.get("options", {}))


def _flows(table: FlowTable, stage: Any) -> set[tuple[int, str, str]]:
    return {(f.priority, f.match, f.actions) for f in table.flows() if f.stage == stage}


def test_ecmp_groups_number_members_in_route_order_and_skip_unreachable() -> None:
    # Reference (23.03): group ids in the order groups get their second member; an unreachable
    # member is left out of the group.
    routes = [
        _route(0x10, "172.16.0.0/16", "10.0.1.10"),
        _route(0x11, "172.16.0.0/16", "10.77.0.1"),
        _route(0x12, "172.17.0.0/16", "10.0.1.20"),
        _route(0x13, "172.17.0.0/16", "10.0.2.21"),
        _route(0x14, "172.16.0.0/16", "10.0.2.12"),
        _route(0x15, "10.5.0.0/16", "10.0.2.5", policy=["src-ip"]),
    ]
    nd, r = _router(routes, [])
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd), table)
    routing = _flows(table, LR_IN_IP_ROUTING)
    assert (49, "reg7 == 0 && ip4.dst == 172.17.0.0/16",
            "ip.ttl--; flags.loopback = 1; reg8[0..15] = 1; reg8[16..31] = select(1, 2);") in routing
    assert (49, "reg7 == 0 && ip4.dst == 172.16.0.0/16",
            "ip.ttl--; flags.loopback = 1; reg8[0..15] = 2; reg8[16..31] = select(1, 2);") in routing
    assert (48, "ip4.src == 10.5.0.0/16",
            ('ip.ttl--; reg8[0..15] = 0; reg0 = 10.0.2.5; reg1 = 10.0.2.1; eth.src = 02:00:00:00:01:02; '
             'outport = "r1-b"; flags.loopback = 1; next;')) in routing
    ecmp = _flows(table, LR_IN_IP_ROUTING_ECMP)
    assert (100, "reg8[0..15] == 2 && reg8[16..31] == 2",
            'reg0 = 10.0.2.12; reg1 = 10.0.2.1; eth.src = 02:00:00:00:01:02; outport = "r1-b"; next;') in ecmp
    assert len(ecmp) == 4
    # Every flow is owned by a route: removing the owners empties the table.
    for owner in route_and_policy_owners(r, FlowCtx(nd)):
        table.remove_owner(owner)
    assert len(table) == 0


def test_ecmp_policies_take_a_group_id_even_when_invalid() -> None:
    def pol(n: int, prio: int, hops: list[str]) -> SimpleNamespace:
        return SimpleNamespace(uuid=_uuid(n), priority=prio, match="ip4", action="reroute", nexthops=hops,
                               nexthop=[], options={})

    policies = [pol(0x20, 1, ["10.0.1.100", "bogus"]), pol(0x21, 2, ["10.0.1.100", "9.9.9.9"]),
                pol(0x22, 3, ["10.0.1.100", "10.0.1.101"])]
    nd, r = _router([], policies)
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd), table)
    assert _flows(table, LR_IN_POLICY) == {(3, "ip4", "reg8[0..15] = 3; reg8[16..31] = select(1, 2);")}
    members = {m for _, m, _ in _flows(table, LR_IN_POLICY_ECMP)}
    assert members == {"reg8[0..15] == 2 && reg8[16..31] == 1", "reg8[0..15] == 3 && reg8[16..31] == 1",
                       "reg8[0..15] == 3 && reg8[16..31] == 2"}
