"""Incremental handling of dynamic routing (behaviour ``dynamic_routing``, 25.03 on).

* SB ``Learned_Route`` (ovn-controller's rows, an SB input: ``sb_watch``): an inserted, deleted or
  updated row re-reads the table (``FlowCtx.learned_routes``) and rebuilds the route and policy
  flows of the routers whose learned routes changed (their learned routes share the ECMP group
  numbering of the static routes: :mod:`ovn_northd_py.flows.dynamic_routing`); nothing else is
  recomputed.
* SB ``Advertised_Route`` (ours, :mod:`ovn_northd_py.sync.advertised_routes`) and 26.03's
  ``Advertised_MAC_Binding`` (:mod:`ovn_northd_py.sync.evpn`): few rows, derived
  from router ports, static routes, NAT and load balancers: synced in full after any change of
  those (NB: the ``routes`` and ``lb_nat`` features' tables, which this feature follows; northd:
  ports; SB: someone touched our rows).  A router's ``options`` (``dynamic-routing``,
  ``-redistribute``, ``-vrf-name``) change recomputes (as every router option does); a router
  port's ``options`` are updated in place by the northd node.
"""

from __future__ import annotations

from ..flows import datapath_enabled
from ..flows.dynamic_routing import read_learned_routes
from ..flows.lr_pipeline import build_lr_route_and_policy_flows, route_and_policy_owners
from ..ovsdb.connection import RowChange
from ..sync.advertised_routes import sync_sb_advertised_routes
from ..sync.evpn import sync_sb_advertised_mac_bindings
from .engine import HandlerResult, handled
from .features import FlowFeatureCtx, SbFeatureCtx


def on_learned_routes(_changes: list[RowChange], h: FlowFeatureCtx) -> HandlerResult:
    """``on_sb_flows``: Learned_Route rows changed (or SB was read again)."""
    fctx, table, nd = h.fctx, h.table, h.nd
    if not fctx.profile.has("dynamic_routing"):
        return handled(False)
    old = fctx.learned_routes
    new = read_learned_routes(h.sb, nd)
    routers = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if not routers:
        return handled(False)
    for key in routers:  # the flows of the rows as they were
        router = nd.datapaths.get(key)
        if router is not None:
            for owner in route_and_policy_owners(router, fctx):
                table.remove_owner(owner)
    fctx.learned_routes = new
    for key in routers:
        router = nd.datapaths.get(key)
        if router is None or not datapath_enabled(router):
            continue
        for owner in route_and_policy_owners(router, fctx):
            table.remove_owner(owner)
        fctx.forget(key)
        build_lr_route_and_policy_flows(router, fctx, table)
    return handled(True)


def sync_advertised_routes(h: SbFeatureCtx) -> None:
    sync_sb_advertised_routes(h.sb_txn, h.sb, h.nd, h.profile, h.stats)
    sync_sb_advertised_mac_bindings(h.sb_txn, h.sb, h.nd, h.profile, h.stats)


def on_advertised_route_changes(_changes: list[RowChange], h: SbFeatureCtx) -> bool:
    """NB routes / NAT / load balancers changed, ports changed (northd), or our rows were touched."""
    sync_advertised_routes(h)
    return True
