"""SB DNS: one row per NB DNS row that at least one logical switch uses.

Observed on the reference (23.03): ``records`` copied as they are (an empty map too),
``datapaths`` the switches whose ``dns_records`` name the row, ``external_ids`` only
``dns_id`` (the NB row's uuid); a row no switch uses has no SB row.

25.03 (behaviour "sb_dns_nb_uuid", observed): the SB row has the NB row's uuid, no
``external_ids``, and ``options`` the NB row's with ``ovn-owned`` (default ``false``).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Hashable
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, sync_one_row, sync_table, update_row

TABLE = "DNS"


def dns_key(row: Any) -> str | None:
    """The NB DNS uuid an SB DNS row stands for (None: not ours): its ``dns_id``, or (25.03) its
    own uuid when it has ``options:ovn-owned``."""
    ids = getattr(row, "external_ids", None)
    if ids and "dns_id" in ids:
        return str(ids["dns_id"])
    options = getattr(row, "options", None)
    return str(row.uuid) if options and "ovn-owned" in options else None


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


def _desired(users: dict[str, tuple[Any, list[str]]], dps: dict[str, Any],
             profile: FlowProfile = DEFAULT_PROFILE) -> dict[Hashable, dict[str, Any]]:
    out: dict[Hashable, dict[str, Any]] = {}
    by_uuid = profile.has("sb_dns_nb_uuid")
    for u, (row, keys) in users.items():
        rows = [dps[k] for k in keys if k in dps]
        if not rows:
            continue
        if by_uuid:
            options = dict(getattr(row, "options", {}) or {})
            options.setdefault("ovn-owned", "false")
            out[u] = {"records": dict(row.records), "datapaths": rows, "external_ids": {}, "options": options}
        else:
            out[u] = {"records": dict(row.records), "datapaths": rows, "external_ids": {"dns_id": u}}
    return out


def _sync_by_uuid(txn: Any, sb: Any, want: dict[Hashable, dict[str, Any]], keys: Collection[str] | None,
                  stats: SyncStats) -> None:
    """25.03: rows keyed by their own uuid, the NB row's (``keys``: only these; None: every row)."""
    kept: set[str] = set()
    for row in list(sb.rows(TABLE).values()):
        k = dns_key(row)
        if k is None or (keys is not None and k not in keys):
            continue
        w = want.get(k)
        if w is None or str(row.uuid) != k or k in kept:
            row.delete()  # stale, keyed the 23.03 way, or a duplicate
            stats.bump(stats.deleted, TABLE)
            continue
        kept.add(k)
        if update_row(row, w):
            stats.bump(stats.updated, TABLE)
    for key, w in want.items():
        k = str(key)
        if k in kept:
            continue
        row = txn.insert(txn.idl.tables[TABLE], new_uuid=uuid.UUID(str(k)), persist_uuid=True)
        for col, val in w.items():
            setattr(row, col, val)
        stats.bump(stats.inserted, TABLE)


def sync_sb_dns(txn: Any, sb: Any, nd: Northd, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Full sync of the SB DNS table."""
    want = _desired(dns_users(nd), _dp_rows(sb), profile)
    if profile.has("sb_dns_nb_uuid"):
        _sync_by_uuid(txn, sb, want, None, stats)
        return
    sync_table(txn, TABLE, sb.rows(TABLE), dns_key, want, stats)


def sync_sb_dns_rows(txn: Any, sb: Any, nd: Northd, uuids: Collection[str], stats: SyncStats,
                     profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Sync only the SB rows of the NB DNS rows ``uuids`` (changed in NB)."""
    want = _desired(dns_users(nd, set(uuids)), _dp_rows(sb), profile)
    if profile.has("sb_dns_nb_uuid"):
        _sync_by_uuid(txn, sb, want, set(uuids), stats)
        return
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
