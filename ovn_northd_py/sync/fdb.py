"""Stale SB FDB rows: MACs ovn-controller learned on a port that no longer exists.

ovn-controller writes ``FDB`` rows (``mac``, ``dp_key``, ``port_key``) for the MACs it learns
on ports with ``unknown`` addresses; ovn-northd does not own the table, but deletes the rows
that point at nothing, as the reference does (OVN's ovn-northd.at "FDB cleanup": a row whose
``dp_key`` is no datapath's tunnel key, or whose ``port_key`` is no port's key on that datapath,
is deleted as soon as it is seen, on insert as well as after the port or switch went away).

Only ``dp_key``, ``port_key`` (and, for aging, ``timestamp``) are monitored (``daemon.SB_TABLES``), so a large FDB costs a few
integers a row.  The rows of a port or datapath deleted by a run are also deleted in that run's
own transaction by where-clauses (``sync/foreign.py``), before their echo arrives here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..northd.model import Northd
from .rows import SyncStats

TABLE = "FDB"


def live_port_keys(nd: Northd) -> dict[int, frozenset[int]]:
    """Datapath tunnel key -> the tunnel keys of its ports (chassisredirect ports included)."""
    out: dict[int, frozenset[int]] = {}
    for dp in nd.datapaths.values():
        keys: set[int] = set()
        for p in dp.ports:
            keys.add(p.tunnel_key)
            if p.crp is not None:
                keys.add(p.crp.tunnel_key)
        out[dp.tunnel_key] = frozenset(keys)
    return out


def is_stale(row: Any, live: dict[int, frozenset[int]]) -> bool:
    """The row names a datapath key no datapath has, or a port key no port of that datapath has."""
    ports = live.get(row.dp_key)
    return ports is None or row.port_key not in ports


def delete_stale(sb: Any, nd: Northd, stats: SyncStats, uuids: Iterable[Any] | None = None) -> int:
    """Delete (in the run's SB transaction) the stale rows among ``uuids`` (None: every row).
    Returns how many went."""
    rows = sb.rows(TABLE)
    live = live_port_keys(nd)
    # (a list first: deleting a row in the IDL transaction removes it from ``rows``)
    todo = list(rows.values()) if uuids is None else [rows.get(u) for u in uuids]
    n = 0
    for row in todo:
        if row is None or row._data is None or not is_stale(row, live):
            continue
        row.delete()
        n += 1
    if n:
        stats.bump(stats.deleted, TABLE, n)
    return n
