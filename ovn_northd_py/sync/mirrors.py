"""SB Mirror and Port_Binding.mirror_rules.

Observed on the reference (23.03): every NB Mirror gets an SB Mirror (used by a port or
not) with ``name``, ``filter``, ``sink``, ``type`` and ``index`` copied and empty
``external_ids`` (the NB ones are not copied); both tables are keyed by ``name``.  A switch
port's Port_Binding ``mirror_rules`` names the SB rows of its NB ``mirror_rules`` (weak
references in both databases: deleting a mirror drops it from the ports).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import Any

from .rows import SyncStats, sync_one_row, sync_table

TABLE = "Mirror"
NB_TABLE = "Mirror"


def mirror_key(row: Any) -> str:
    return str(row.name)


def _want(row: Any) -> dict[str, Any]:
    return {"name": row.name, "filter": row.filter, "sink": row.sink, "type": row.type, "index": row.index,
            "external_ids": {}}


def sync_sb_mirrors(txn: Any, nb: Any, sb: Any, stats: SyncStats) -> dict[Hashable, Any]:
    """Full sync of the SB Mirror table; returns name -> SB row."""
    want: dict[Hashable, dict[str, Any]] = {}
    for row in nb.rows(NB_TABLE).values():
        want.setdefault(mirror_key(row), _want(row))
    return sync_table(txn, TABLE, sb.rows(TABLE), mirror_key, want, stats)


def sync_sb_mirrors_of(txn: Any, nb: Any, sb: Any, names: Collection[str], stats: SyncStats) -> None:
    """Sync only the SB Mirror rows named ``names``."""
    names = set(names)
    want = {mirror_key(r): _want(r) for r in nb.rows(NB_TABLE).values() if mirror_key(r) in names}
    have: dict[str, list[Any]] = {}
    for row in sb.rows(TABLE).values():
        k = mirror_key(row)
        if k in names:
            have.setdefault(k, []).append(row)
    for k in names:
        rows = have.get(k, [])
        for extra in rows[1:]:
            sync_one_row(txn, TABLE, extra, None, stats)
        sync_one_row(txn, TABLE, rows[0] if rows else None, want.get(k), stats)


def sb_mirror_rows(sb: Any) -> dict[str, Any]:
    """name -> SB Mirror row (rows inserted by the transaction being built included)."""
    return {mirror_key(r): r for r in sb.rows(TABLE).values() if getattr(r, "name", None) is not None}
