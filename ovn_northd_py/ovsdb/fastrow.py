"""A read cache for python-ovs IDL row columns.

``ovs.db.idl.Row.__getattr__`` converts the stored datum to a Python value on every read, and for
set and map columns it first rebuilds the datum (``Datum.from_python`` with constraint checks)
and sorts referenced rows: reading a load-balancer group's ``load_balancer`` column for every
router that uses the group dominated a cold sync.  We keep the converted value per (row, column)
and hand out a shallow copy (so callers may still modify what they get); a column without
pending local changes is converted straight from its stored datum, without the rebuild.

Invalidation: the IDL updates a datum *in place* for update2 diffs, so the cache cannot key on
the datum object.  Instead every row the IDL reports as changed or deleted (our ``notify``
override in :mod:`.connection`) drops its cache, and nothing is cached while the IDL is
processing a server message (a referencing row may be read before a row it references is
created) or for a column with pending local changes in a transaction.
"""

from __future__ import annotations

from typing import Any

import ovs.db.data
import ovs.db.error
import ovs.db.idl

_ORIG_GETATTR = ovs.db.idl.Row.__getattr__
_ORIG_SETATTR = ovs.db.idl.Row.__setattr__
_ROW_TO_UUID = ovs.db.idl._row_to_uuid
_DEFAULT_DICT = ovs.db.idl.ColumnDefaultDict
_CACHE_ATTR = "_npy_cache"
# Values of the row's cache carried over to its next version by the IDL's diff (carry_set_diff).
_CARRY_ATTR = "_npy_carry"
_state = {"busy": 0, "installed": False}


def _fast_getattr(self: Any, name: str) -> Any:
    d = self.__dict__
    if _state["busy"] or name.startswith("_"):
        return _ORIG_GETATTR(self, name)
    data = d.get("_data")
    changes = d.get("_changes")
    mutations = d.get("_mutations")
    if data is None or (changes and name in changes):
        return _ORIG_GETATTR(self, name)
    # (``name in data``: a ColumnDefaultDict's membership is its table's columns, asked directly
    # rather than through its Python-level ``__contains__`` and ``keys``)
    if not (name in data._table.columns if type(data) is _DEFAULT_DICT else name in data):
        return _ORIG_GETATTR(self, name)
    if mutations:
        for kind in ("_inserts", "_removes"):
            m = mutations.get(kind)
            if m and name in m:
                return _ORIG_GETATTR(self, name)
    cache = d.get(_CACHE_ATTR)
    if cache is None:
        cache = d[_CACHE_ATTR] = {}
    try:
        value = cache[name]
    except KeyError:
        # No change or mutation pending on the column: the stored datum, converted once.  (The
        # IDL's own __getattr__ first rebuilds a set or map datum from its Python values, with
        # constraint checks, to merge pending mutations: the same value, at several times the
        # cost for a large set -- an address set of thousands, every load balancer's options.)
        value = cache[name] = _to_python(data[name], self)
    t = type(value)
    if t is list:
        return list(value)
    if t is dict:
        return dict(value)
    return value


def _to_python(datum: Any, row: Any) -> Any:
    """``datum.to_python(row._uuid_to_row)``: the same value, read straight from the atoms for a set
    or map of plain values (no row references), where python-ovs converts atom by atom through
    ``_uuid_to_row`` (a namespace's address set holds hundreds)."""
    t = datum.type
    if (t.n_max == 1 and t.value is None) or t.key.ref_table_name is not None:
        return datum.to_python(row._uuid_to_row)
    if t.value is None:
        return sorted([k.value for k in datum.values])
    if t.value.ref_table_name is not None:
        return datum.to_python(row._uuid_to_row)
    return {k.value: v.value for k, v in datum.values.items()}


_MISSING = object()


def uuid_str(row: Any) -> str:
    """``str(row.uuid)``, kept with the row (a row's uuid never changes; hot loops over every
    load balancer of every router convert the same uuids again and again)."""
    d = row.__dict__
    s: str | None = d.get("_npy_uuid_s")
    if s is None:
        s = d["_npy_uuid_s"] = str(d["uuid"])
    return s


def peek(row: Any, name: str, default: Any = _MISSING) -> Any:
    """``row.<name>`` for a caller that only reads it: the cached value itself, not the copy
    ``getattr`` hands out (a load balancer's ``options`` read for every router it is on).  The
    caller must not modify it.  ``default``: what a row without that attribute gives (as
    ``getattr``'s; without it, AttributeError)."""
    d: dict[str, Any] = getattr(row, "__dict__", None) or {}
    usable = (d.get("_data") is not None and not _state["busy"] and not d.get("_changes")
              and not d.get("_mutations"))
    if usable:
        cache = d.get(_CACHE_ATTR)
        if cache is not None and name in cache:
            return cache[name]
    value = getattr(row, name) if default is _MISSING else getattr(row, name, default)
    if usable:
        cache = d.get(_CACHE_ATTR)  # (the read filled it, when it may)
        if cache is not None:
            return cache.get(name, value)
    return value


def _derived_key(kind: str) -> tuple[str, str]:
    """Where :func:`derived` keeps a value of ``kind`` in the row's cache."""
    return ("derived", kind)


def _set_kind(column: str) -> str:
    """The :func:`derived` kind of :func:`set_values` of ``column``."""
    return "set:" + column


def derived(row: Any, kind: str, compute: Any) -> Any:
    """``compute(row)``, a value derived from ``row``'s columns alone, kept with the row's column
    cache (so dropped whenever the row changes).  Not cached while the IDL processes a message or
    for a row with pending local changes.  The value is shared: callers must not modify it."""
    d = row.__dict__
    if _state["busy"] or d.get("_data") is None or d.get("_changes") or d.get("_mutations"):
        return compute(row)
    cache = d.get(_CACHE_ATTR)
    if cache is None:
        cache = d[_CACHE_ATTR] = {}
    key = _derived_key(kind)
    try:
        return cache[key]
    except KeyError:
        value = cache[key] = compute(row)
        return value


def set_values(row: Any, column: str) -> frozenset[Any]:
    """The atoms of committed set column ``column`` of ``row`` as a frozenset, kept with the row
    (:func:`derived`: dropped when the server changes the row).  No sort and no copy: an address set
    or port group of thousands is compared with what it should hold on every change to it, and
    the SB copy read once after our write's echo is the base the next change compares with."""
    values: frozenset[Any] = derived(row, _set_kind(column),
                                     lambda r: frozenset(a.value for a in r._data[column].values))
    return values


def _ref_uuids(row: Any, column: str) -> frozenset[Any]:
    d = row.__dict__
    data = d.get("_data")
    datum = data.get(column) if data is not None and not d.get("_changes") and not d.get("_mutations") else None
    if datum is None:
        return frozenset(r.uuid for r in getattr(row, column))
    # The raw set: a referenced row that is gone is dropped, as the IDL's own read drops it.
    name = row._table.columns[column].type.key.ref_table_name
    table = plain_rows(row._idl.tables[name].rows) if name in row._idl.tables else None
    if table is None:
        return frozenset(r.uuid for r in getattr(row, column))
    return frozenset(u for atom in datum.values if (u := atom.value) in table)


def plain_rows(rows: Any) -> Any:
    """An IDL table's ``rows`` as the plain dict underneath (the IDL's is a ``UserDict``, whose
    ``get`` and ``in`` are Python calls: for loops over hundreds of references)."""
    data = getattr(rows, "data", None)
    return data if isinstance(data, dict) else rows


def scalar(row: Any, column: str) -> Any:
    """``row.<column>`` for a column of exactly one plain value (a name), read from the committed
    datum without the cache's bookkeeping: for loops over every row of a large table."""
    d = row.__dict__
    data = d.get("_data")
    if data is not None and not d.get("_changes"):
        datum = dict.get(data, column)
        if datum is not None and len(datum.values) == 1 and datum.type.is_scalar() and not datum.type.key.ref_table_name:
            for atom in datum.values:
                return atom.value
    return getattr(row, column)


def raw_ref_uuids(row: Any, column: str) -> frozenset[Any] | None:
    """The uuids a reference-set column of ``row`` holds, rows that are gone included, read from the
    committed datum; None when the row has pending changes (read the column then)."""
    d = row.__dict__
    data = d.get("_data")
    datum = data.get(column) if data is not None and not d.get("_changes") and not d.get("_mutations") else None
    if datum is None:
        return None
    return frozenset(atom.value for atom in datum.values)


def names_gone_row(row: Any, column: str) -> bool:
    """Does ``row``'s committed value of ``column`` (a reference column) name a row that is gone
    from the IDL, typically one deleted earlier in this run's transaction?  python-ovs leaves such
    a reference out when the column is read, so the column looks as if it did not name the row
    (while the server, asked to delete it, refuses: the strong reference remains).  False for
    other columns and for a column with pending changes."""
    col = row._table.columns.get(column)
    if col is None:
        return False
    ref = (col.type.key.ref_table_name, col.type.value.ref_table_name if col.type.value is not None else None)
    if ref == (None, None):
        return False
    d = row.__dict__
    data = d.get("_data")
    changes = d.get("_changes")
    if data is None or (changes and column in changes):
        return False
    datum = dict.get(data, column)
    if datum is None or not datum.values:
        return False
    tables = row._idl.tables
    for i, name in enumerate(ref):
        if name is None or name not in tables:
            continue
        rows = plain_rows(tables[name].rows)
        atoms = datum.values if i == 0 else datum.values.values()
        if any(a.value not in rows for a in atoms):
            return True
    return False


def ref_uuids(row: Any, column: str) -> frozenset[Any]:
    """The uuids of the rows a reference-set column of ``row`` names (kept with the row until it
    changes), without the IDL's conversion (which sorts the referenced rows in Python: hundreds
    for a cluster-wide load-balancer or port group)."""
    uuids: frozenset[Any] = derived(row, "ref_uuids:" + column, lambda r: _ref_uuids(r, column))
    return uuids


def stamp(row: Any) -> Any:
    """An object that stays the same (``is``) while ``row`` does not change, or None (not known):
    callers keeping values derived from a row check it to skip deriving them again."""
    d = row.__dict__
    if _state["busy"] or d.get("_data") is None or d.get("_changes") or d.get("_mutations"):
        return None
    cache = d.get(_CACHE_ATTR)
    if cache is None:
        cache = d[_CACHE_ATTR] = {}
    return cache


def carry_set_diff(row: Any, column: str, atoms: Any) -> None:
    """Before an update2 diff of set column ``column`` (more than one value allowed) is applied to
    ``row``: its ``atoms`` toggle (present ones leave, others join), so the frozenset
    :func:`set_values` keeps for the column is carried over to the row's next version as the
    symmetric difference (restored by :func:`invalidate`), instead of built again from every atom:
    an address set of thousands changed by one address, on each change and on its echo."""
    d = row.__dict__
    carry = d.get(_CARRY_ATTR)  # column -> its set's values after the diffs applied so far
    base = carry.get(column) if carry is not None else None
    if base is None:
        cache = d.get(_CACHE_ATTR)
        base = cache.get(_derived_key(_set_kind(column))) if cache is not None else None
        if base is None:
            return
    if carry is None:
        carry = d[_CARRY_ATTR] = {}
    carry[column] = base.symmetric_difference([a.value for a in atoms])


def invalidate(row: Any) -> None:
    """Forget the cached columns of ``row`` (it changed, or was deleted), but for the set values
    :func:`carry_set_diff` carried over to its new version (each only if it holds as many atoms
    as the column now does)."""
    d = row.__dict__
    d.pop(_CACHE_ATTR, None)
    carry = d.pop(_CARRY_ATTR, None)
    if not carry:
        return
    data = d.get("_data")
    kept = {}
    for column, values in carry.items():
        datum = dict.get(data, column) if data is not None else None
        if datum is not None and len(datum.values) == len(values):
            kept[_derived_key(_set_kind(column))] = values
    if kept:
        d[_CACHE_ATTR] = kept


class busy:
    """Context manager: no caching while the IDL processes server messages."""

    def __enter__(self) -> None:
        _state["busy"] += 1

    def __exit__(self, *_exc: object) -> None:
        _state["busy"] -= 1


def _fast_setattr(self: Any, column_name: str, value: Any) -> None:
    """``Row.__setattr__`` (a write in the IDL's transaction) for a table without indexes and a
    writable column: python-ovs' datum, checks and bookkeeping, without reading the column back
    first (``hasattr``, only to update indexes) and without copying the fresh datum it stores.
    Anything else, python-ovs' own."""
    table = self._table
    idl = self._idl
    column = table.columns.get(column_name)
    if (column is None or table.rows.indexes or table.name in idl.readonly or idl.txn is None
            or self._changes is None):
        _ORIG_SETATTR(self, column_name, value)
        return
    try:
        datum = ovs.db.data.Datum.from_python(column.type, value, _ROW_TO_UUID)
    except ovs.db.error.Error:
        _ORIG_SETATTR(self, column_name, value)  # (its error log)
        return
    name = column.name
    changes = self._changes
    if not column.alert and self._data is not None and self._data.get(name) == datum:
        new_value = changes.get(name)
        if new_value is None or new_value == datum:
            return  # (python-ovs' _write: an unchanged write-only column)
    idl.txn._txn_rows[self.uuid] = self
    mutations = self._mutations
    if "_inserts" in mutations:
        mutations["_inserts"].pop(name, None)
    if "_removes" in mutations:
        mutations["_removes"].pop(name, None)
    changes[name] = datum


def install() -> None:
    """Patch ``ovs.db.idl.Row`` (idempotent)."""
    if not _state["installed"]:
        ovs.db.idl.Row.__getattr__ = _fast_getattr
        ovs.db.idl.Row.__setattr__ = _fast_setattr
        _state["installed"] = True
