"""SB ECMP_Nexthop (25.03): one row per next hop of a static route with
``options:ecmp_symmetric_reply``, when NB_Global ``options:ecmp_nexthop_monitor_enable`` is true.

Observed on the 25.03 reference (``ovn-sb(5)``: the rows ovn-controller uses to flush the
connection-tracking entries of next hops that went away): ``datapath`` the router, ``port`` the
Port_Binding of the router port the next hop is reached through, ``nexthop`` the address, ``mac``
empty on insert (left alone afterwards), no ``external_ids``; one row per (router, port, next hop)
even for a route without an ECMP sibling and on routers that are not gateway routers.  Without the
option the table is empty.  The table exists from 25.03's SB schema on: with an older one nothing
is done.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..flows.context import FlowCtx
from ..flows.lr_routing import symmetric_nexthops
from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, dangling, sync_table

TABLE = "ECMP_Nexthop"


def ecmp_nexthop_key(row: Any) -> tuple[str | None, str, str] | None:
    dp, port = getattr(row, "datapath", None), getattr(row, "port", None)
    if dp is None or port is None:
        return None
    if dangling(dp, port):  # its router or port is being deleted: a key nothing wants (deleted)
        return ("", str(row.uuid), "")
    return (dp_nb_key(dp), str(port.logical_port), str(row.nexthop))


def monitor_enabled(nb: Any) -> bool:
    return any(str(r.options.get("ecmp_nexthop_monitor_enable", "")).lower() == "true"
               for r in nb.rows("NB_Global").values())


def desired(nb: Any, sb: Any, nd: Northd) -> dict[Hashable, dict[str, Any]]:
    if not monitor_enabled(nb):
        return {}
    dps = {k: r for r in sb.rows("Datapath_Binding").values() if (k := dp_nb_key(r))}
    pbs = {r.logical_port: r for r in sb.rows("Port_Binding").values()}
    ctx = FlowCtx(nd)
    out: dict[Hashable, dict[str, Any]] = {}
    for router in nd.routers():
        dp = dps.get(router.key)
        if dp is None:
            continue
        for port, nexthop in symmetric_nexthops(router, ctx):
            pb = pbs.get(port.name)
            if pb is not None:
                out.setdefault((router.key, port.name, nexthop),
                               {"datapath": dp, "port": pb, "nexthop": nexthop, "external_ids": {}})
    return out


def sync_sb_ecmp_nexthops(txn: Any, nb: Any, sb: Any, nd: Northd, stats: SyncStats) -> None:
    """Full sync of the SB ECMP_Nexthop table (when the connected SB schema has it)."""
    if TABLE not in sb.idl.tables:
        return
    sync_table(txn, TABLE, sb.rows(TABLE), ecmp_nexthop_key, desired(nb, sb, nd), stats, on_insert={"mac": ""})
