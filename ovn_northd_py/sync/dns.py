"""SB DNS: one row per NB DNS row that at least one logical switch uses.

Observed on the reference (23.03): ``records`` copied as they are (an empty map too),
``datapaths`` the switches whose ``dns_records`` name the row, ``external_ids`` only
``dns_id`` (the NB row's uuid); a row no switch uses has no SB row.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import Any

from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, sync_one_row, sync_table

TABLE = "DNS"


def dns_key(row: Any) -> str | None:
    """The NB DNS uuid an SB DNS row stands for (None: not ours)."""
    ids = getattr(row, "external_ids", None)
    return ids.get("dns_id") if ids else None


def dns_users(nd: Northd, only: Collection[str] | None = None) -> dict[str, tuple[Any, list[str]]]:
    """NB DNS uuid -> (NB row, keys of the switches using it), for every used row (or those in ``only``)."""
    out: dict[str, tuple[Any, list[str]]] = {}
    for dp in nd.switches():
        for row in dp.nb.dns_records:
            u = str(row.uuid)
            if only is None or u in only:
                out.setdefault(u, (row, []))[1].append(dp.key)
    return out


def _dp_rows(sb: Any) -> dict[str, Any]:
    return {k: r for r in sb.rows("Datapath_Binding").values() if (k := dp_nb_key(r))}


def _desired(users: dict[str, tuple[Any, list[str]]], dps: dict[str, Any]) -> dict[Hashable, dict[str, Any]]:
    out: dict[Hashable, dict[str, Any]] = {}
    for u, (row, keys) in users.items():
        rows = [dps[k] for k in keys if k in dps]
        if rows:
            out[u] = {"records": dict(row.records), "datapaths": rows, "external_ids": {"dns_id": u}}
    return out


def sync_sb_dns(txn: Any, sb: Any, nd: Northd, stats: SyncStats) -> None:
    """Full sync of the SB DNS table."""
    sync_table(txn, TABLE, sb.rows(TABLE), dns_key, _desired(dns_users(nd), _dp_rows(sb)), stats)


def sync_sb_dns_rows(txn: Any, sb: Any, nd: Northd, uuids: Collection[str], stats: SyncStats) -> None:
    """Sync only the SB rows of the NB DNS rows ``uuids`` (changed in NB)."""
    want = _desired(dns_users(nd, set(uuids)), _dp_rows(sb))
    have: dict[str, list[Any]] = {}
    for row in sb.rows(TABLE).values():
        k = dns_key(row)
        if k is not None and k in uuids:
            have.setdefault(k, []).append(row)
    for u in uuids:
        rows = have.get(u, [])
        for extra in rows[1:]:
            sync_one_row(txn, TABLE, extra, None, stats)
        sync_one_row(txn, TABLE, rows[0] if rows else None, want.get(u), stats)
