"""Flow rebuilds shared by the lflow node and the features (no feature imports another).

:func:`rebuild_router_scope` rebuilds every flow of a router and of the switch ports peering with
it; the lflow node (router ports changed), the load-balancer / NAT feature and the ACL feature
(address sets renamed under NAT rules) use it.  :func:`ports_only_candidate` and
:func:`router_switch_candidate` spare the lflow node the ports of a router, and of a switch of
router-type ports, that a router joining or leaving leaves as they were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Any

from ..flows import build_datapath_flows, build_port_flows
from ..flows.acl_index import ACL_FACTS, switch_acls
from ..flows.context import FlowCtx
from ..flows.lr_common import LR_INFO, router_info, router_nat_owned, switch_port_types
from ..flows.lr_nat import remember_router_lb_facts
from ..flows.lr_pipeline import attached_router_ports, build_lsp_flows_on_router_port, route_and_policy_owners
from ..flows.lr_routing import route_table_ids
from ..flows.ls_arp_rsp import has_arp_proxy
from ..flows.ls_l2 import switch_l2, switch_mcast
from ..flows.owners import dp_owner, nat_owner, port_owner, router_lb_owner
from ..flows.router_addrs import router_addrs, router_lb_vip_set_names
from ..lflow.table import FlowTable
from ..northd.incremental import Tracked
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


# The memoised switch-wide facts (``FlowCtx`` kinds under the switch's key) that the flows of a
# switch's router-type ports and of the router ports attached to it read, besides each port's own
# rows and the attached routers themselves; compared before and after a router joins or leaves a
# switch of router-type ports (:func:`router_switch_candidate`).
_SWITCH_FACTS: tuple[tuple[str, Callable[[Datapath, FlowCtx], Any]], ...] = (
    ("switch_l2", switch_l2),
    ("switch_mcast", switch_mcast),
    ("has_arp_proxy", has_arp_proxy),
    ("lr_sw_types", switch_port_types),
    (ACL_FACTS, switch_acls),
)
# What a router joining or leaving changes by design: the attached routers, and their bindings'
# texts (the bindings on and of the router that came or went are added or removed by themselves).
_ATTACH_KINDS = frozenset({"lr_attached", "lr_attached_texts"})


@dataclasses.dataclass(slots=True)
class RouterSwitchJoin:
    """A switch of router-type ports whose change is only routers joining or leaving it: the facts
    its ports read, as memoised before the change, and the router-type ports that joined."""

    facts: dict[str, Any]
    joined: list[str]


def _plain_router_lsp(p: Any) -> bool:
    q = p.peer
    return (p.kind == "lsp" and p.is_router_lsp and p.crp is None and q is not None and q.kind == "lrp"
            and q.crp is None and "routing-protocol-redirect" not in q.nb.options)


def router_switch_candidate(sw: Datapath, fctx: FlowCtx, table: FlowTable, t: Tracked) -> RouterSwitchJoin | None:
    """Before anything of this run forgets the switch's memos: may the ports of switch ``sw`` that
    did not change keep their flows?  Only when, conservatively, every port of the switch is a
    router-type port peering a router port, neither with a chassisredirect port, nor a
    ``routing-protocol-redirect`` (a join or transit switch: no VIF, localnet, vtep, virtual or
    external port reads the attached routers), and its change is only such ports joining (new: no
    flows yet) or leaving with their router (deleted in the same change: the flows the others put
    on it go with its datapath).  A port's flows then read the other ports only through the
    attached routers' bindings, which are built port by port (:func:`add_joined_router_flows`),
    and the switch facts, compared after the rebuild (:func:`router_switch_facts_same`)."""
    if not sw.is_switch:
        return None
    joined: list[str] = []
    for p in sw.ports:
        if not _plain_router_lsp(p):
            return None
        if p.name in t.ports_changed:
            if table.has_owner(port_owner(p)):
                return None  # changed in place
            joined.append(p.name)
    left = [name for name, key in t.ports_deleted.items() if key == sw.key]
    if any(t.detached_peers.get(name) not in t.dps_deleted for name in left):
        return None  # a port left without its router: the others' bindings on it stay
    if not joined and not left:
        return None
    key = sw.key
    known = {kind for kind, _ in _SWITCH_FACTS} | _ATTACH_KINDS
    if any(kind not in known and (kind, key) in fctx.memo for kind in fctx.kinds):
        return None  # a fact of the switch we do not know how to compare
    facts = {kind: fctx.memo[(kind, key)] for kind, _ in _SWITCH_FACTS if (kind, key) in fctx.memo}
    return RouterSwitchJoin(facts, joined)


def router_switch_facts_same(sw: Datapath, fctx: FlowCtx, cand: RouterSwitchJoin) -> bool:
    """After the rebuild of the switch's datapath flows and of its new ports: are the switch facts
    its other ports (and the router ports attached to it) read as they were?  A fact nobody had
    read before must still be unread."""
    for kind, fn in _SWITCH_FACTS:
        if kind not in cand.facts:
            if (kind, sw.key) in fctx.memo:
                return False
        elif fn(sw, fctx) != cand.facts[kind]:
            return False
    return True


def add_joined_router_flows(sw: Datapath, fctx: FlowCtx, table: FlowTable, cand: RouterSwitchJoin,
                            built: set[str]) -> None:
    """The flows each port of ``sw`` that was not rebuilt (not in ``built``) puts on the routers that
    joined: its bindings there (:func:`~ovn_northd_py.flows.lr_pipeline.build_lsp_flows_on_router_port`)."""
    nd = fctx.nd
    lrps = [p.peer for name in cand.joined if (p := nd.ports.get(name)) is not None and p.peer is not None]
    if not lrps:
        return
    for p in sw.ports:
        if p.name in built or p.name in cand.joined:
            continue
        for lrp in lrps:
            build_lsp_flows_on_router_port(p, lrp, fctx, table)


def rebuild_switch_ports(sw: Datapath, fctx: FlowCtx, table: FlowTable, built: set[str]) -> None:
    """Every port of ``sw`` and every router port attached to it not in ``built`` (which this adds
    them to), rebuilt: a router-type switch whose facts changed after all."""
    for p in (*sw.ports, *attached_router_ports(sw)):
        if p.name not in built:
            table.remove_owner(port_owner(p))
            build_port_flows(p, fctx, table)
            built.add(p.name)
