"""Incremental handling of static routes and router policies.

Their flows are owned by ``("route", uuid, router key)`` / ``("policy", uuid, router key)``
(see ``flows/lr_pipeline.py``): a row may be listed by several routers.  A change to a route or
policy row, or to a router's ``static_routes`` / ``policies`` columns, rebuilds exactly the route
and policy flows of the routers concerned, dropping first those of the rows the router listed
before (the old values of its columns); the northd model (datapaths, ports, keys) does not depend
on them, so nothing else is recomputed.  25.03's SB ``ECMP_Nexthop`` rows (next hops of
symmetric-reply routes, :mod:`ovn_northd_py.sync.ecmp_nexthop`) are synced in full on any route,
port or own-row change: they are few.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..flows.lr_pipeline import build_lr_route_and_policy_flows, route_and_policy_owners
from ..flows.lr_routing import chain_order_dependents
from ..flows.owners import policy_owner, route_owner
from ..ovsdb.connection import RowChange
from ..sync.ecmp_nexthop import sync_sb_ecmp_nexthops
from .features import FlowFeatureCtx, SbFeatureCtx

ROUTE_TABLE = "Logical_Router_Static_Route"
POLICY_TABLE = "Logical_Router_Policy"


def on_nb_flows(changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    nd, table, fctx = h.nd, h.table, h.fctx
    routers: set[str] = set()
    stale: list[Hashable] = []  # owners of rows a router listed before this change
    listed_before: set[str] = set()
    deleted: list[tuple[str, str]] = []
    changed_rows: set[str] = set()
    for c in changes:
        if c.table == "Logical_Router":
            if c.event != "update":
                return False
            key = str(c.uuid)
            routers.add(key)
            old = c.old or {}
            for u in old.get("static_routes", ()):
                stale.append(route_owner(str(u), key))
                listed_before.add(str(u))
            for u in old.get("policies", ()):
                stale.append(policy_owner(str(u), key))
                listed_before.add(str(u))
        elif c.event == "delete":
            deleted.append((c.table, str(c.uuid)))
        else:
            changed_rows.add(str(c.uuid))
    if changed_rows:
        for dp in nd.routers():
            uuids = {str(r.uuid) for r in dp.nb.static_routes} | {str(p.uuid) for p in dp.nb.policies}
            if uuids & changed_rows:
                routers.add(dp.key)
    if routers and fctx.profile.has("ecmp_route_chain_order"):
        # 25.03: a router's ECMP numbering counts the routes of the routers before it.
        routers |= {r.key for r in chain_order_dependents(nd)}
    if h.scoped_routers:
        # A router the lflow node rebuilt whole keeps its present rows' flows (built then).
        built = _built_owners(h)
        stale = [o for o in stale if o not in built]
    for owner in stale:
        table.remove_owner(owner)
    # A deleted row left the lists of the routers that had it in the same transaction (strong
    # references): the old values above name it, and its flows go from those routers.
    for tbl, uuid in deleted:
        if uuid not in listed_before:
            make = route_owner if tbl == ROUTE_TABLE else policy_owner
            for key in routers:
                table.remove_owner(make(uuid, key))
    for key in routers:
        router = nd.datapaths.get(key)
        if router is None or key in h.scoped_routers:
            continue  # a disabled or deleted router: nothing of it is built; or already rebuilt
        for owner in route_and_policy_owners(router, fctx):
            table.remove_owner(owner)
        fctx.forget(key)
        build_lr_route_and_policy_flows(router, fctx, table)
    return True


def _built_owners(h: FlowFeatureCtx) -> set[Hashable]:
    """The route and policy owners of the present rows of the routers in ``h.scoped_routers``
    (their flows were built by the lflow node in this run)."""
    out: set[Hashable] = set()
    for key in h.scoped_routers:
        router = h.nd.datapaths.get(key)
        if router is not None:
            out.update(route_and_policy_owners(router, h.fctx))
    return out


# ---- SB ECMP_Nexthop (25.03): the next hops of symmetric-reply routes (few rows: always a full sync)


def sync_ecmp_nexthops(h: SbFeatureCtx) -> None:
    sync_sb_ecmp_nexthops(h.sb_txn, h.nb, h.sb, h.nd, h.stats)


def on_ecmp_nexthop_changes(_changes: list[RowChange], h: SbFeatureCtx) -> bool:
    """Routes changed (NB), ports changed (northd), or someone touched our rows (SB)."""
    sync_sb_ecmp_nexthops(h.sb_txn, h.nb, h.sb, h.nd, h.stats)
    return True
