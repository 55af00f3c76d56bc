"""SB DNS: one row per NB DNS row that at least one logical switch uses.

Observed on the reference (23.03): ``records`` copied as they are (an empty map too),
``datapaths`` the switches whose ``dns_records`` name the row, ``external_ids:dns_id`` the NB row's
uuid (written on insert only: other keys someone adds stay); a row no switch uses has no SB row.
An SB row is the NB row its ``dns_id`` names: every SB row naming a used NB row is kept and
repaired (duplicates too), every other one (no ``dns_id``, or one naming no used NB row) is
deleted.

25.03 and 26.03 (profile behaviour ``dns_nb_uuid``; ``ovn-sb(5)`` adds ``options:ovn-owned``): the SB row
*is* the NB row of the same uuid (inserted with that uuid); ``external_ids`` is not written (empty
on insert; a foreign edit stays); ``options:ovn-owned`` is ``true`` when the NB row's
``options:ovn-owned`` is true (any case) and ``false`` otherwise (an SB edit of that key is put
back, other keys stay); ``records`` and ``datapaths`` as in 23.03; every SB row whose uuid is no
used NB row's is deleted.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, insert_row, update_row

TABLE = "DNS"
BY_UUID = "dns_nb_uuid"  # the profile behaviour (25.03 and 26.03)


def dns_key(row: Any) -> str | None:
    """The NB DNS uuid an SB DNS row names in ``external_ids:dns_id`` (23.03; None: none)."""
    ids = getattr(row, "external_ids", None)
    return ids.get("dns_id") if ids else None


def sb_dns_key(row: Any, profile: FlowProfile) -> str | None:
    """The NB DNS uuid SB DNS ``row`` stands for in ``profile``'s release (None: none, to delete)."""
    return str(row.uuid) if profile.has(BY_UUID) else dns_key(row)


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


def _ovn_owned(row: Any) -> str:
    """The SB ``options:ovn-owned`` of NB DNS ``row`` (25.03): its own, read as a boolean."""
    opts = getattr(row, "options", None) or {}
    return "true" if opts.get("ovn-owned", "").lower() == "true" else "false"


def _desired(users: dict[str, tuple[Any, list[str]]], dps: dict[str, Any],
             profile: FlowProfile) -> dict[str, dict[str, Any]]:
    """NB DNS uuid -> the columns its SB row(s) must have (``ovn-owned``: that options key)."""
    by_uuid = profile.has(BY_UUID)
    out: dict[str, dict[str, Any]] = {}
    for u, (row, keys) in users.items():
        rows = [dps[k] for k in keys if k in dps]
        if rows:
            w: dict[str, Any] = {"records": dict(row.records), "datapaths": rows}
            if by_uuid:
                w["ovn-owned"] = _ovn_owned(row)
            out[u] = w
    return out


def _repair(row: Any, want: dict[str, Any]) -> bool:
    """Write ``want``'s columns that differ into ``row`` (``ovn-owned`` into its options, keeping
    their other keys); True if any did."""
    changed = update_row(row, {"records": want["records"], "datapaths": want["datapaths"]})
    owned = want.get("ovn-owned")
    if owned is not None and row.options.get("ovn-owned") != owned:
        row.options = {**row.options, "ovn-owned": owned}
        changed = True
    return changed


def _insert(txn: Any, u: str, want: dict[str, Any], profile: FlowProfile) -> None:
    if profile.has(BY_UUID):
        row = insert_row(txn, TABLE, uuid.UUID(u))
        row.options = {"ovn-owned": want["ovn-owned"]}
    else:
        row = insert_row(txn, TABLE)
        row.external_ids = {"dns_id": u}
    row.records, row.datapaths = want["records"], want["datapaths"]


def _sync(txn: Any, sb: Any, want: Mapping[str, dict[str, Any]], stats: SyncStats, profile: FlowProfile,
          keys: Collection[str] | None = None, rows_too: Collection[Any] = ()) -> None:
    """Make the SB DNS rows equal ``want``: all of them, or (``keys``) those standing for these NB
    uuids and the rows ``rows_too`` (uuids of changed SB rows, whatever they stand for)."""
    present: set[str] = set()
    for row in list(sb.rows(TABLE).values()):
        k = sb_dns_key(row, profile)
        if keys is not None and k not in keys and row.uuid not in rows_too:
            continue
        w = want.get(k) if k is not None else None
        if k is None or w is None:
            row.delete()
            stats.bump(stats.deleted, TABLE)
            continue
        present.add(k)
        if _repair(row, w):
            stats.bump(stats.updated, TABLE)
    for u, w in want.items():
        if u not in present and (keys is None or u in keys):
            _insert(txn, u, w, profile)
            stats.bump(stats.inserted, TABLE)


def sync_sb_dns(txn: Any, sb: Any, nd: Northd, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Full sync of the SB DNS table."""
    _sync(txn, sb, _desired(dns_users(nd), _dp_rows(sb), profile), stats, profile)


def sync_sb_dns_rows(txn: Any, sb: Any, nd: Northd, uuids: Collection[str], stats: SyncStats,
                     profile: FlowProfile = DEFAULT_PROFILE, rows_too: Collection[Any] = ()) -> None:
    """Sync only the SB rows standing for the NB DNS rows ``uuids`` (changed in NB, or their SB
    rows changed), and the SB rows ``rows_too`` (changed SB rows standing for none)."""
    keys = set(uuids)
    _sync(txn, sb, _desired(dns_users(nd, keys), _dp_rows(sb), profile), stats, profile, keys, rows_too)
