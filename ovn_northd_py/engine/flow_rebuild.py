"""Flow rebuilds shared by the lflow node and the features (no feature imports another).

:func:`rebuild_router_scope` rebuilds every flow of a router and of the switch ports peering with
it; the lflow node (router ports changed), the load-balancer / NAT feature and the ACL feature
(address sets renamed under NAT rules) use it.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..flows import build_datapath_flows, build_port_flows
from ..flows.context import FlowCtx
from ..flows.lr_nat import remember_router_lb_facts
from ..flows.lr_pipeline import route_and_policy_owners
from ..flows.owners import dp_owner, nat_owner, port_owner, router_lb_owner
from ..lflow.table import FlowTable
from ..northd.model import Datapath


def rebuild_router_scope(router: Datapath, fctx: FlowCtx, table: FlowTable, extra_owners: set[Hashable],
                         keep_lbs: frozenset[str] = frozenset()) -> set[str]:
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
