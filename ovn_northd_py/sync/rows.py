"""Generic diff of desired rows against the IDL's rows, written into an IDL transaction.

Only columns named in the desired row are compared and written; other columns
(those ovn-controller owns, such as Port_Binding.chassis) are left alone.
Rows for which ``key_of`` returns None are not ours and are never touched.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import ovs.db.idl

from ..ovsdb.fastrow import names_gone_row, set_values


@dataclass(slots=True)
class SyncStats:
    inserted: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)

    def bump(self, what: dict[str, int], table: str, n: int = 1) -> None:
        what[table] = what.get(table, 0) + n

    @property
    def total(self) -> int:
        return sum(self.inserted.values()) + sum(self.updated.values()) + sum(self.deleted.values())


def norm(v: Any) -> Any:
    """A comparable form of an IDL value: rows become their uuids, sets become sorted tuples.

    A one-element set equals its element, so optional columns may be given as bare scalars.
    """
    if hasattr(v, "_table") and hasattr(v, "uuid"):
        return ("@", v.uuid)
    if isinstance(v, list):
        if len(v) == 1:  # an optional column's value compares equal to the bare scalar
            return norm(v[0])
        if all(type(x) is str for x in v):  # (address sets of hundreds: no repr)
            return tuple(sorted(v))
        return tuple(sorted((norm(x) for x in v), key=repr))
    if isinstance(v, dict):
        return tuple(sorted(((k, norm(x)) for k, x in v.items()), key=repr))
    return v


def insert_row(txn: Any, table: str, row_uuid: uuid.UUID | None = None) -> Any:
    """A new row whose uuid is final already (the server is asked to keep it), so raw operations
    in the same SB transaction (flows on a new datapath) can reference it; ``row_uuid``: that
    uuid (e.g. the NB row's), else a random one."""
    return txn.insert(txn.idl.tables[table], new_uuid=row_uuid or uuid.uuid4(), persist_uuid=True)


def dangling(*refs: Any) -> bool:
    """Does one of these values of a row's (non-optional) reference columns name a row that is
    gone, typically deleted earlier in this run's transaction?  python-ovs then gives the column's
    default atom instead of a Row.  A row of ours with such a reference must go with it (the
    server would refuse the transaction: a strong reference to a deleted row)."""
    return any(r is not None and not isinstance(r, ovs.db.idl.Row) for r in refs)


ROW_UUID = "_uuid"  # a desired row's key for the uuid a new row gets (existing rows keep theirs)


def update_row(row: Any, want: Mapping[str, Any]) -> bool:
    """Write the columns of ``want`` that differ from ``row``; True if any did.  A reference
    column naming a row this transaction deleted differs (whatever the IDL's read of it says)."""
    changed = False
    for col, val in want.items():
        if col == ROW_UUID:
            continue
        if norm(getattr(row, col)) != norm(val) or names_gone_row(row, col):
            setattr(row, col, val)
            changed = True
    return changed


def sync_table(
    txn: Any,
    table: str,
    rows: Mapping[Any, Any],
    key_of: Callable[[Any], Hashable | None],
    desired: Mapping[Any, dict[str, Any]],
    stats: SyncStats,
    delete_stale: bool = True,
    on_insert: Mapping[str, Any] | None = None,
) -> dict[Hashable, Any]:
    """Make the rows we own in ``table`` equal ``desired``.  Returns key -> Row (existing or new).

    ``on_insert`` gives initial values for columns someone else owns afterwards
    (e.g. Port_Binding.up, which ovn-controller maintains); a desired row's :data:`ROW_UUID` is the
    uuid its new row gets (default: a random one).
    """
    out: dict[Hashable, Any] = {}
    claimed = _claim_by_uuid(rows, desired)
    for k, row in claimed.items():  # (a row with a desired uuid is that key's, whatever its columns say)
        if update_row(row, desired[k]):
            stats.bump(stats.updated, table)
        out[k] = row
    taken = {id(r) for r in claimed.values()}
    for row in list(rows.values()):
        if id(row) in taken:
            continue
        k = key_of(row)
        if k is None:
            continue
        want = desired.get(k)
        if want is None or k in out:
            # Stale, or a duplicate of a row we already keep.
            if delete_stale or k in out:
                row.delete()
                stats.bump(stats.deleted, table)
            continue
        if update_row(row, want):
            stats.bump(stats.updated, table)
        out[k] = row
    for k, want in desired.items():
        if k in out:
            continue
        out[k] = _insert(txn, table, want, on_insert, stats)
    return out


def _claim_by_uuid(rows: Mapping[Any, Any], desired: Mapping[Any, dict[str, Any] | None]) -> dict[Hashable, Any]:
    """Key -> the existing row whose uuid the key's desired row names (:data:`ROW_UUID`)."""
    out: dict[Hashable, Any] = {}
    for k, want in desired.items():
        u = want.get(ROW_UUID) if want else None
        if u is not None and (row := rows.get(u)) is not None:
            out[k] = row
    return out


def _insert(txn: Any, table: str, want: Mapping[str, Any], on_insert: Mapping[str, Any] | None,
            stats: SyncStats) -> Any:
    """A new row of ``table`` with ``want`` (and ``on_insert``, columns others own afterwards)."""
    row = insert_row(txn, table, want.get(ROW_UUID))
    for col, val in (on_insert or {}).items():
        setattr(row, col, val)
    for col, val in want.items():
        if col != ROW_UUID:
            setattr(row, col, val)
    stats.bump(stats.inserted, table)
    return row


def sync_one_row(txn: Any, table: str, row: Any | None, want: dict[str, Any] | None, stats: SyncStats,
                 on_insert: Mapping[str, Any] | None = None) -> Any | None:
    """Make one row match ``want`` (insert, with the uuid its :data:`ROW_UUID` names if any; update; or, with ``want``
    None, delete)."""
    if want is None:
        if row is not None:
            row.delete()
            stats.bump(stats.deleted, table)
        return None
    if row is None:
        return _insert(txn, table, want, on_insert, stats)
    if update_row(row, want):
        stats.bump(stats.updated, table)
    return row


def update_set_column(row: Any, col: str, want: Collection[Any]) -> bool | None:
    """Make the set column ``col`` of committed row ``row`` hold ``want`` (atoms: str, int...) with a
    ``mutate`` of what differs (insert / delete), not a rewrite of the whole set: a cluster-wide
    address set or port group of thousands gains one address.  True if anything differs, False if
    nothing does; None when the row cannot take it (inserted or deleted in this transaction, or the
    column already written whole in it): the caller writes the whole value then.  A second call in
    the same transaction replaces the first one's mutation (computed against the committed value)."""
    d = row.__dict__
    data, changes, muts = d.get("_data"), d.get("_changes"), d.get("_mutations")
    if data is None or changes is None or muts is None or col in changes:
        return None
    base = set_values(row, col) if data.get(col) is not None else frozenset()
    want_s = want if isinstance(want, (set, frozenset)) else set(want)
    add, rem = want_s - base, base - want_s
    for kind in ("_inserts", "_removes"):
        m = muts.get(kind)
        if m is not None:
            m.pop(col, None)
            if not m:
                del muts[kind]
    if not add and not rem:
        return False
    row._idl.txn._txn_rows[row.uuid] = row
    if add:
        muts.setdefault("_inserts", {})[col] = add
    if rem:
        muts.setdefault("_removes", {})[col] = rem
    return True


def sync_keyed_rows(txn: Any, table: str, rows: Any, key_of: Callable[[Any], Hashable | None],
                    keys: Collection[Any], want: Mapping[Any, dict[str, Any] | None],
                    stats: SyncStats) -> None:
    """Make the SB rows of ``table`` keyed ``keys`` match ``want`` (a missing key: delete), leaving
    every other row alone; duplicates of a key are deleted.  (The incremental counterpart of
    :func:`sync_table` for one feature's changed keys.)"""
    have: dict[Hashable, list[Any]] = {}
    claimed = _claim_by_uuid(rows, {k: want.get(k) for k in keys})
    taken = {id(r) for r in claimed.values()}
    for k, row in claimed.items():
        have[k] = [row]
    for row in rows.values():
        if id(row) in taken:
            continue
        k = key_of(row)
        if k in keys:
            have.setdefault(k, []).append(row)
    for k in keys:
        found = have.get(k, [])
        for extra in found[1:]:
            sync_one_row(txn, table, extra, None, stats)
        sync_one_row(txn, table, found[0] if found else None, want.get(k), stats)
