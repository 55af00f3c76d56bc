"""Flow rebuilds shared by the lflow node and the features (no feature imports another).

:func:`rebuild_router_scope` rebuilds every flow of a router and of the switch ports peering with
it; the lflow node (router ports changed), the load-balancer / NAT feature and the ACL feature
(address sets renamed under NAT rules) use it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Any

from ..flows import build_datapath_flows, build_port_flows
from ..flows.context import FlowCtx
from ..flows.lr_common import LR_INFO, router_info, router_nat_owned
from ..flows.lr_nat import remember_router_lb_facts
from ..flows.lr_pipeline import route_and_policy_owners
from ..flows.lr_routing import route_table_ids
from ..flows.owners import dp_owner, nat_owner, port_owner, router_lb_owner
from ..flows.router_addrs import router_addrs, router_lb_vip_set_names
from ..lflow.table import FlowTable
from ..northd.model import Datapath


def rebuild_router_scope(router: Datapath, fctx: FlowCtx, table: FlowTable, extra_owners: set[Hashable],
                         keep_lbs: frozenset[str] = frozenset(), only_ports: set[str] | None = None) -> set[str]:
    """Every flow of ``router`` and of the switch ports peering with it, rebuilt from scratch.

    ``extra_owners``: owners of this router's flows the present NB rows no longer name (deleted
    NAT rules, load balancers it lost).  ``keep_lbs``: load balancers whose per-router flows stay
    as they are (a load balancer's router flows read its own row and the router's NAT context --
    gateway, NAT external IPs, ``lb_force_snat_ip`` -- only, so when neither changed, adding a
    service to a group shared by every gateway router rebuilds one load balancer's flows per
    router, not all of them).

    NAT ``options:add_route`` puts flows on *other* routers (the neighbours on the switch of the
    rule's distributed gateway port: /32 routes, and ARP bindings on gateway routers).  They are
    owned by the router-type switch port peering with that DGP
    (:func:`~ovn_northd_py.flows.lr_nat.build_lsp_nat_add_route_flows`), which this function
    rebuilds below with the router's other peer ports: a NAT change on the router therefore needs
    no rebuild of the neighbour routers themselves.  The reverse direction is covered by the
    router-port handling (:mod:`ovn_northd_py.engine.nodes.lflow`): a neighbour attaching to,
    detaching from or changing its port on that switch in place rebuilds every port of the switch;
    a neighbour's ``options:chassis`` (gateway or not: bindings or not) is a router option, which
    recomputes.

    ``only_ports``: of the router's ports, rebuild only these (and their switch peers); the
    caller has checked the others read nothing that changed (:func:`ports_only_candidate`).

    Returns the names of the ports it rebuilt (the router's and their switch peers)."""
    nd = fctx.nd
    rebuilt: set[str] = set()
    for owner in extra_owners:
        table.remove_owner(owner)
    table.remove_owner(dp_owner(router))
    for owner in route_and_policy_owners(router, fctx):
        table.remove_owner(owner)
    for n in router.nb.nat:
        table.remove_owner(nat_owner(str(n.uuid), router.key))
    for lb in fctx.lbs.dp_lbs.get(router.key, ()):
        if lb not in keep_lbs:
            table.remove_owner(router_lb_owner(lb, router.key))
    fctx.forget(router.key)
    fctx.keep_router_lbs = keep_lbs
    try:
        build_datapath_flows(router, fctx, table)
    finally:
        fctx.keep_router_lbs = frozenset()
    for p in router.ports:
        if only_ports is not None and p.name not in only_ports:
            continue
        table.remove_owner(port_owner(p))
        build_port_flows(p, fctx, table)
        rebuilt.add(p.name)
        q = p.peer
        if p.kind == "lrp" and q is not None and q.kind == "lsp" and nd.ports.get(q.name) is q:
            table.remove_owner(port_owner(q))
            build_port_flows(q, fctx, table)
            rebuilt.add(q.name)
    remember_router_lb_facts(router, fctx)
    return rebuilt


# The memoised router-wide facts (``FlowCtx`` kinds under the router's key) the flows of a router's
# ports and of their switch peers read, besides each port's own rows: compared before and after a
# router gains or loses ports, to rebuild only those ports (:func:`ports_only_candidate`).
_FACTS: tuple[tuple[str, Callable[[Datapath, FlowCtx], Any]], ...] = (
    ("lr_nat_owned", router_nat_owned),
    ("router_addrs", router_addrs),
    ("rtr_lb_sets", router_lb_vip_set_names),
    ("lr_route_tables", route_table_ids),
)


@dataclasses.dataclass(slots=True)
class PortsOnly:
    """A router whose change is only ports added or removed: the facts its other ports read, as
    memoised before the change, and the ports to build."""

    facts: dict[str, Any]
    ports: set[str]


def ports_only_candidate(router: Datapath, fctx: FlowCtx, table: FlowTable, changed: set[str]
                         ) -> PortsOnly | None:
    """Before anything of this run forgets the router's memos: can the router be rebuilt without
    the flows of its unchanged ports and their switch peers?  Only when, conservatively, every
    changed port of the router is new (it owns no flow yet), no port is a gateway port or peers
    another router directly, none has ``gateway_mtu`` (its ``lr_in_larger_pkts`` flows name every
    other port) or ``route_table``, and the release numbers no ECMP chain across routers; the
    router-wide facts are then compared after the rebuild (:func:`ports_only_facts_same`)."""
    if fctx.profile.has("ecmp_route_chain_order"):
        return None
    new: set[str] = set()
    for p in router.ports:
        if p.kind != "lrp" or p.crp is not None or (p.peer is not None and p.peer.kind == "lrp"):
            return None
        opts = p.nb.options
        if "gateway_mtu" in opts or "route_table" in opts:
            return None
        if p.name in changed:
            if table.has_owner(port_owner(p)):
                return None  # changed in place
            new.add(p.name)
    facts: dict[str, Any] = {}
    for kind in (LR_INFO, *(k for k, _ in _FACTS)):
        if (kind, router.key) not in fctx.memo:
            return None
        facts[kind] = fctx.memo[(kind, router.key)]
    return PortsOnly(facts, new)


def ports_only_facts_same(router: Datapath, fctx: FlowCtx, cand: PortsOnly) -> bool:
    """After the router's rebuild: are the facts its unchanged ports read as they were?  (Its own
    ports' networks: the ports still there have theirs.)"""
    old = cand.facts[LR_INFO]
    new = router_info(router, fctx)
    if dataclasses.replace(old, nets={}) != dataclasses.replace(new, nets={}):
        return False
    if any(new.nets.get(name) != nets for name, nets in old.nets.items() if name in new.nets):
        return False
    return all(fn(router, fctx) == cand.facts[kind] for kind, fn in _FACTS)
