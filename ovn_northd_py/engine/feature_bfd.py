"""BFD sessions (NB ``BFD``) handled incrementally: SB ``BFD``, NB ``BFD.status`` and router flows.

What depends on what (see :mod:`ovn_northd_py.flows.lr_bfd` and :mod:`ovn_northd_py.sync.bfd`):

* SB BFD rows and both statuses read the NB BFD rows, the SB BFD rows (ovn-controller's status)
  and which rows the routes use (routes, router ports, router ``enabled``).  Every handler runs the
  full BFD sync, a pass over the BFD rows and the routes naming one (nothing without BFD rows):
  NB BFD changes (:func:`on_nb_sb`), route changes (the feature ``follows`` the ``routes``
  feature: sb_sync runs its ``on_nb_sb`` on their changes too), incremental northd runs (:func:`on_northd_sb`: router ports) and
  SB BFD changes (:func:`on_sb`: ovn-controller's status, edits, our own writes echoing back).
  The NB write-back is done by the nb_sync node on each of its runs (:func:`sync_nb_bfd_status`).
* Flows read only NB: the set of ports named by BFD rows (``FlowCtx.bfd_ports``: the ports' BFD
  ``lr_in_ip_input`` and connected-route flows, the routes out of them, and the BFD redirect flows
  of their peer switch ports, :mod:`ovn_northd_py.flows.ls_routing_redirect`) and the NB status of
  the rows routes use (a route whose session is down is not installed).  :func:`on_nb_flows`
  rebuilds the ports that joined or left ``bfd_ports``, and the route flows of their routers and
  of the routers whose routes name a changed row.  An SB status change reaches the flows through
  its NB write-back: the next run sees the NB ``BFD.status`` update and rebuilds those routes.
  So the lflow node needs no SB input for BFD, and nothing here recomputes a node.
"""

from __future__ import annotations

from ..flows import build_port_flows, datapath_enabled
from ..flows.context import bfd_ports_of
from ..flows.lr_pipeline import build_lr_route_and_policy_flows, route_and_policy_owners
from ..flows.owners import port_owner
from ..ovsdb.connection import RowChange
from ..sync.bfd import NB_TABLE, TABLE, sync_sb_bfd
from .features import FlowFeatureCtx, SbFeatureCtx


def sync_sb(h: SbFeatureCtx) -> None:
    sync_sb_bfd(h.sb_txn, h.nb, h.sb, h.nd, h.stats)


def on_nb_sb(_changes: list[RowChange], h: SbFeatureCtx) -> bool:
    sync_sb(h)
    return True


def on_northd_sb(_changes: list[RowChange], h: SbFeatureCtx) -> bool:
    if h.nb.rows(NB_TABLE) or h.sb.rows(TABLE):
        sync_sb(h)
    return True


def on_sb(_changes: list[RowChange], h: SbFeatureCtx) -> bool:
    sync_sb(h)
    return True


def on_nb_flows(changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    nd, table, fctx = h.nd, h.table, h.fctx
    new_ports = bfd_ports_of(h.nb)
    moved = fctx.bfd_ports ^ new_ports
    fctx.bfd_ports = new_ports
    changed = {str(c.uuid) for c in changes}
    routers: set[str] = set()
    ports = []
    for name in moved:
        p = nd.ports.get(name)
        if p is not None and p.kind == "lrp":
            ports.append(p)
            routers.add(p.dp.key)
            # (its peer switch port's routing-protocol-redirect flows: BFD cloned or not, 26.03)
            if p.peer is not None and p.peer.kind == "lsp" and p.nb.options.get("routing-protocol-redirect"):
                ports.append(p.peer)
    for dp in nd.routers():
        if dp.key not in routers and any(
                r.bfd and str(r.bfd[0].uuid) in changed for r in dp.nb.static_routes):
            routers.add(dp.key)
    for p in ports:
        table.remove_owner(port_owner(p))
        build_port_flows(p, fctx, table)
    for key in routers:
        dp = nd.datapaths[key]
        if not datapath_enabled(dp):
            continue
        for owner in route_and_policy_owners(dp, fctx):
            table.remove_owner(owner)
        build_lr_route_and_policy_flows(dp, fctx, table)
    return True
