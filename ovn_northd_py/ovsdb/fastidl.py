"""A cheaper python-ovs ``Idl`` row update (the initial NB snapshot, SB's echo of our inserts) and
row diff (every later change: an address set of hundreds gaining one address).

For every row the server sends, python-ovs's ``Idl.__add_default`` walks every column of the
table (with the read-only checks) to add the omitted single-valued ones back as their defaults,
and ``Idl.__row_update`` compares each parsed column with the row's current value, which for a
new row means building a fresh default datum per column (``ColumnDefaultDict.__missing__``).
Here the per-table list of columns ``__add_default`` fills is computed once per IDL, and a column
the row does not hold yet is compared with its type's default without building one.  The result,
warnings included, is python-ovs's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ovs.db.data
import ovs.db.error
import ovs.db.idl
import ovs.db.types
import ovs.ovsuuid

from . import fastrow

_Idl = ovs.db.idl.Idl
_ORIG_ROW_UPDATE = _Idl._Idl__row_update
_ORIG_ADD_DEFAULT = _Idl._Idl__add_default
_ORIG_APPLY_DIFF = _Idl._Idl__apply_diff
_CACHE = "_npy_add_default"
_state = {"installed": False}


def _defaults_of(idl: Any, table: Any) -> list[tuple[str, Any, bool]]:
    """(column, the JSON ``__add_default`` puts for it when omitted, whether that JSON is a list)
    for ``table``'s columns that python-ovs fills in."""
    cache = idl.__dict__.get(_CACHE)
    if cache is None:
        cache = idl.__dict__[_CACHE] = {}
    hit = cache.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]  # type: ignore[no-any-return]
    readonly = idl.readonly
    out = []
    for column in table.columns.values():
        if table.name in readonly and column.name in readonly[table.name]:
            continue
        if column.type.n_min != 0 and not column.type.is_map():
            atype = column.type.key.type
            if atype == ovs.db.types.UuidType:
                out.append((column.name, ovs.ovsuuid.to_json(atype.default), True))
            else:
                out.append((column.name, atype.default, False))
    cache[id(table)] = (table, out)
    return out


def _fast_add_default(self: Any, table: Any, row_update: Any) -> None:
    for name, default, is_list in _defaults_of(self, table):
        if name not in row_update:
            row_update[name] = list(default) if is_list else default


def _parsed_columns(table: Any, row_json: Any) -> Iterator[tuple[str, Any, Any]]:
    """(column name, column, parsed datum) of each column of ``row_json`` (a row, or a diff), with
    python-ovs' warnings for an unknown column or one that does not parse (those are skipped).
    The name is the schema's string, not the message's: the rows' column dicts share their keys
    (one string per column, not one per row and column: 6 MB of a 100-node NB)."""
    columns = table.columns
    from_json = ovs.db.data.Datum.from_json
    vlog = ovs.db.idl.vlog
    for column_name, datum_json in row_json.items():
        column = columns.get(column_name)
        if not column:
            vlog.warn(f"unknown column {column_name} updating table {table.name}")
            continue
        try:
            datum = from_json(column.type, datum_json)
        except ovs.db.error.Error as e:
            vlog.warn(f"error parsing column {column_name} in table {table.name}: {e}")
            continue
        yield column.name, column, datum


def _fast_row_update(self: Any, table: Any, row: Any, row_json: Any) -> bool:
    changed = False
    data = row._data
    for column_name, column, datum in _parsed_columns(table, row_json):
        old = dict.get(data, column_name)  # (without the default a ColumnDefaultDict builds)
        if old is None:
            if datum.is_default():
                continue
        elif datum == old:
            continue
        data[column_name] = datum
        if column.alert:
            changed = True
    return changed


def _fast_apply_diff(self: Any, table: Any, row: Any, row_diff: Any) -> dict[str, Any]:
    """python-ovs' ``__apply_diff`` (an update2/3 ``modify``), without two passes over every element
    of a changed set or map: ``Datum.diff`` changes a set or map datum in place and returns it, and
    python-ovs then compared it with itself; and the old value handed to ``notify`` is a copy only
    for the tables in the IDL's ``old_value_tables`` (all tables when it has none), the others get
    the column's datum itself (their consumer reads which columns changed, not what they held)."""
    keep = getattr(self, "old_value_tables", None)
    copy_old = keep is None or table.name in keep
    data = row._data
    old_row: dict[str, Any] = {}
    for column_name, column, datum_diff in _parsed_columns(table, row_diff):
        stored = dict.get(data, column_name)  # (None: the column's default, built afresh on each read)
        cur = stored if stored is not None else data[column_name]
        old_row[column_name] = cur.copy() if copy_old else cur
        ctype = column.type
        if ctype.value is None and ctype.n_max > 1:  # a set: its atoms toggle (Datum.diff)
            fastrow.carry_set_diff(row, column_name, datum_diff.values)
        datum = cur.diff(datum_diff)
        if stored is None:
            if datum != data[column_name]:
                data[column_name] = datum
        elif datum is not stored and datum != stored:  # (a single value: the new datum)
            data[column_name] = datum
    return old_row


def install() -> None:
    """Patch ``ovs.db.idl.Idl`` (idempotent)."""
    if not _state["installed"]:
        _Idl._Idl__row_update = _fast_row_update
        _Idl._Idl__add_default = _fast_add_default
        _Idl._Idl__apply_diff = _fast_apply_diff
        _state["installed"] = True
