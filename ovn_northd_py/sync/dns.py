"""SB DNS: one row per NB DNS row that at least one logical switch uses.

Observed on the reference (23.03): ``records`` copied as they are (an empty map too),
``datapaths`` the switches whose ``dns_records`` name the row, ``external_ids`` only
``dns_id`` (the NB row's uuid); a row no switch uses has no SB row.

Behaviour ``dns_nb_uuid`` (25.03 and 26.03, observed): the SB row's uuid is the NB row's, ``external_ids``
empty, ``options`` the NB row's with ``ovn-owned`` (default ``false``); such a row is recognised
as ours by its ``ovn-owned`` option.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Hashable
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, sync_one_row, sync_table

TABLE = "DNS"


def dns_key(row: Any) -> str | None:
    """The NB DNS uuid an SB DNS row stands for (None: not ours): its ``external_ids:dns_id``, or
    (``dns_nb_uuid``) its own uuid when it has an ``ovn-owned`` option."""
    ids = getattr(row, "external_ids", None)
    if ids and "dns_id" in ids:
        return str(ids["dns_id"])
    opts = getattr(row, "options", None)
    return str(row.uuid) if opts and "ovn-owned" in opts else None


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
    nb_uuid = profile.has("dns_nb_uuid")
    out: dict[Hashable, dict[str, Any]] = {}
    for u, (row, keys) in users.items():
        rows = [dps[k] for k in keys if k in dps]
        if not rows:
            continue
        if nb_uuid:
            opts = dict(getattr(row, "options", None) or {})
            opts.setdefault("ovn-owned", "false")
            out[u] = {"records": dict(row.records), "datapaths": rows, "external_ids": {}, "options": opts}
        else:
            out[u] = {"records": dict(row.records), "datapaths": rows, "external_ids": {"dns_id": u}}
    return out


def _uuid_of(profile: FlowProfile) -> Callable[[Hashable], uuid.UUID] | None:
    """With ``dns_nb_uuid``: a new SB row gets its NB row's uuid."""
    return (lambda k: uuid.UUID(str(k))) if profile.has("dns_nb_uuid") else None


def sync_sb_dns(txn: Any, sb: Any, nd: Northd, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Full sync of the SB DNS table."""
    sync_table(txn, TABLE, sb.rows(TABLE), dns_key, _desired(dns_users(nd), _dp_rows(sb), profile), stats,
               uuid_of=_uuid_of(profile))


def sync_sb_dns_rows(txn: Any, sb: Any, nd: Northd, uuids: Collection[str], stats: SyncStats,
                     profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Sync only the SB rows of the NB DNS rows ``uuids`` (changed in NB)."""
    want = _desired(dns_users(nd, set(uuids)), _dp_rows(sb), profile)
    new_uuid = _uuid_of(profile)
    have: dict[str, list[Any]] = {}
    for row in sb.rows(TABLE).values():
        k = dns_key(row)
        if k is not None and k in uuids:
            have.setdefault(k, []).append(row)
    for u in uuids:
        rows = have.get(u, [])
        for extra in rows[1:]:
            sync_one_row(txn, TABLE, extra, None, stats)
        sync_one_row(txn, TABLE, rows[0] if rows else None, want.get(u), stats,
                     new_uuid=new_uuid(u) if new_uuid is not None else None)
