"""SB ``ACL_ID`` (OVN 25.03, SB 20.41): the ids of persist-established ACLs.

An ``allow-related`` ACL with ``options:persist-established=true`` commits its id in conntrack
(``ct_label.acl_id``, :mod:`ovn_northd_py.flows.acl_rules`), so that ovn-controller can flush
the sessions of an ACL that goes away.  Observed on the reference (and ``ovn-sb(5)``):

* one row per such ACL, its uuid the NB ACL's uuid, ``id`` between 1 and 32767;
* an id, once given, stays with its ACL as long as the ACL qualifies (across restarts: the rows
  in SB are the memory); a row whose ACL is gone or no longer qualifies is deleted and its id
  freed;
* new ACLs take the lowest free ids, in the order the reference's IDL walks the ACL table (after
  a cold start: :func:`ovn_northd_py.northd.build.idl_row_order` of all ACLs), each after the previous
  one.

The flows read the ids back from SB (the rows of this transaction included), so the same rows
drive both.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..flows.acl_index import smap_bool
from ..northd.build import idl_row_order
from .rows import SyncStats, update_row

TABLE: Final = "ACL_ID"
MAX_ACL_ID: Final = 32767  # the SB schema's maximum


def persists(acl: Any) -> bool:
    """Does NB ACL ``acl`` need an id (``allow-related`` with ``persist-established=true``)?"""
    return bool(acl.action == "allow-related" and smap_bool(acl.options, "persist-established", False))


def desired_acl_ids(
    acls: Mapping[Any, Any], existing: Mapping[str, int], warn: Callable[..., None] | None = None,
) -> dict[str, int]:
    """acl uuid -> id for the NB ACL rows ``acls`` (uuid -> row), keeping the ids of ``existing``
    (acl uuid -> id, the SB rows) whose ACL still qualifies."""
    out: dict[str, int] = {}
    used: set[int] = set()
    wanted = [str(u) for u, a in acls.items() if persists(a)]
    for key in wanted:
        old = existing.get(key)
        if old is not None and 1 <= old <= MAX_ACL_ID and old not in used:
            out[key] = old
            used.add(old)
    fresh = {k for k in wanted if k not in out}
    if not fresh:
        return out
    nxt = 1
    # (The walk order of the whole table: hmap positions depend on every row.)
    for key in (k for k in idl_row_order([str(u) for u in acls]) if k in fresh):
        while nxt in used:
            nxt += 1
        if nxt > MAX_ACL_ID:
            if warn is not None:
                warn("acl_ids_exhausted", table="ACL", row=key, reason="all ACL ids are in use")
            break
        out[key] = nxt
        used.add(nxt)
        nxt += 1
    return out


def has_acl_ids(sb: Any) -> bool:
    """Does the connected SB have the ACL_ID table (and do we monitor it)?"""
    return TABLE in sb.idl.tables


def sync_acl_ids(txn: Any, sb: Any, nb: Any, stats: SyncStats, warn: Callable[..., None] | None = None) -> None:
    """Make SB ACL_ID what the NB ACLs ask for (nothing when the SB has no such table)."""
    if not has_acl_ids(sb):
        return
    rows = sb.rows(TABLE)
    existing = {str(u): int(r.id) for u, r in rows.items()}
    want = desired_acl_ids(nb.rows("ACL"), existing, warn)
    for u, row in list(rows.items()):
        key = str(u)
        if key not in want:
            row.delete()
            stats.bump(stats.deleted, TABLE)
        elif update_row(row, {"id": want[key]}):
            stats.bump(stats.updated, TABLE)
    for key, value in want.items():
        if key in existing:
            continue
        row = txn.insert(txn.idl.tables[TABLE], new_uuid=uuid.UUID(key), persist_uuid=True)
        row.id = value
        stats.bump(stats.inserted, TABLE)
