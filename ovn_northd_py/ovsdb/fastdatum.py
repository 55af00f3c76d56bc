"""Cheaper python-ovs ``Datum`` parsing and serialisation, with the same results.

A cold sync parses the whole NB and the server's echo of the SB rows we insert through
``Datum.from_json``, and serialises every SB row it writes through ``Datum.to_json`` and
``Datum.is_default``.  python-ovs does it atom by atom with generic code: ``Atom.from_json``
rebuilds a tuple of accepted types and compares types per atom, constraint checks go through
``Datum`` membership, ``to_json`` sorts atoms with the Python-level ``Atom.__lt__`` and
``is_default`` builds a fresh default datum to compare with.  Here each column's base type gets
a small parser built once (the checks its constraints need, nothing else); anything it does not
recognise as plainly valid (a float, a named-uuid, a value outside the constraints, a duplicate)
goes to python-ovs's own code, which raises the same error as before.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from typing import Any

import ovs.db.data
import ovs.db.types
import ovs.ovsuuid

_Datum = ovs.db.data.Datum
_Atom = ovs.db.data.Atom
_T = ovs.db.types
_ORIG_FROM_JSON = _Datum.from_json
_ORIG_TO_JSON = _Datum.to_json
_ORIG_IS_DEFAULT = _Datum.is_default
_ORIG_FROM_PYTHON = _Datum.from_python
_UUID_MATCH = ovs.ovsuuid.uuidRE.match
_INTERN = sys.intern
_state = {"installed": False}


class _Slow(Exception):
    """Not plainly valid: python-ovs's own parser decides (and raises its own error)."""


_Parser = Callable[[Any], Any]


class _AtomPool:
    """One Atom per string or uuid value, shared by every datum that holds it.

    The IDLs keep every value they were sent, and most are repeated from row to row ("true",
    option and external-id keys, protocols, owners, the uuids of referenced rows): at 100 ovn-k
    nodes NB's 217,000 atoms hold 49,000 values, and its 180,000 strings 35,000 (11.5 MB as
    sent, 2.5 MB shared).  Atoms are never modified (python-ovs builds new datums for changes),
    so sharing them is safe.  Strings are also interned (freed with their last reference).

    The datums of a single value of a scalar column (at most one value: a name, a type, a
    reference) are shared too: ``Datum.diff`` (an update2 change) modifies a set, a map or an
    empty datum in place, but replaces a scalar's value with a new datum; nothing else modifies
    a datum.

    Bounded: past ``limit`` values a table is emptied and fills again (it would otherwise keep the
    values of deleted rows alive); a value parsed after that is simply not shared with earlier
    ones."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._strings: dict[str, Any] = {}
        self._uuids: dict[str, Any] = {}
        # (id(column type), id(atom)) -> the datum (which keeps its atom, hence the id, alive)
        self._scalars: dict[tuple[int, int], Any] = {}

    def string(self, s: str) -> Any:
        atom = self._strings.get(s)
        if atom is None:
            if len(self._strings) >= self.limit:
                self._strings.clear()
            atom = self._strings[s] = _Atom(_T.StringType, _INTERN(s))
        return atom

    def uuid(self, s: str) -> Any:
        """The atom of the uuid string ``s``; raises _Slow if ``s`` is not one."""
        atom = self._uuids.get(s)
        if atom is None:
            if not _UUID_MATCH(s):
                raise _Slow
            if len(self._uuids) >= self.limit:
                self._uuids.clear()
            atom = self._uuids[s] = _Atom(_T.UuidType, uuid.UUID(s))
        return atom

    def scalar(self, type_: Any, atom: Any) -> Any:
        """The datum holding just ``atom``, of ``type_`` (a set type of at most one value)."""
        key = (id(type_), id(atom))
        datum = self._scalars.get(key)
        if datum is None:
            if len(self._scalars) >= self.limit:
                self._scalars.clear()
            datum = self._scalars[key] = _Datum(type_, {atom: None})
        return datum


_POOL = _AtomPool(1 << 17)
_BOOLS = {True: _Atom(_T.BooleanType, True), False: _Atom(_T.BooleanType, False)}
# The atom types whose atoms are shared (:class:`_AtomPool`, _BOOLS): a scalar datum is shared
# only if its atom is (its key is the atom's id).
_POOLED = (_T.StringType, _T.UuidType, _T.BooleanType)

# id(BaseType) -> (the BaseType, kept alive so the id stays its own; its atom parser)
_parsers: dict[int, tuple[Any, _Parser]] = {}


def _base_parser(base: Any) -> _Parser:
    """An atom parser for ``base`` (a ``BaseType``): returns the Atom or raises _Slow."""
    at = base.type
    enum = None
    if base.enum is not None:
        enum = frozenset(a.value for a in base.enum.values)
    if at is _T.StringType:
        lo, hi = base.min_length, base.max_length

        def parse_str(j: Any) -> Any:
            if type(j) is not str or (enum is not None and j not in enum) or not lo <= len(j) <= hi:
                raise _Slow
            return _POOL.string(j)
        return parse_str
    if at is _T.IntegerType:
        imin, imax = base.min, base.max

        def parse_int(j: Any) -> Any:
            if (type(j) is not int or (enum is not None and j not in enum)
                    or (imin is not None and j < imin) or (imax is not None and j > imax)):
                raise _Slow
            return _Atom(at, j)
        return parse_int
    if at is _T.BooleanType and enum is None:
        def parse_bool(j: Any) -> Any:
            if type(j) is not bool:
                raise _Slow
            return _BOOLS[j]
        return parse_bool
    if at is _T.UuidType:
        def parse_uuid(j: Any) -> Any:
            if type(j) is not list or len(j) != 2 or j[0] != "uuid" or type(j[1]) is not str:
                raise _Slow
            return _POOL.uuid(j[1])
        return parse_uuid

    def slow(j: Any) -> Any:
        raise _Slow
    return slow


def _memo_parser(cache: dict[int, tuple[Any, _Parser]], base: Any, make: Callable[[Any], _Parser]) -> _Parser:
    """``make(base)``, kept in ``cache`` under the base type's id (with the base, so the id stays its own)."""
    hit = cache.get(id(base))
    if hit is None or hit[0] is not base:
        hit = cache[id(base)] = (base, make(base))
    return hit[1]


def _parser(base: Any) -> _Parser:
    return _memo_parser(_parsers, base, _base_parser)


def _fast_from_json(type_: Any, json: Any, symtab: Any = None) -> Any:
    if symtab is not None:
        return _ORIG_FROM_JSON(type_, json, symtab)
    try:
        key = _parser(type_.key)
        if type_.value is not None:  # a map
            if type(json) is not list or len(json) != 2 or json[0] != "map" or type(json[1]) is not list:
                raise _Slow
            inner = json[1]
            if not type_.n_min <= len(inner) <= type_.n_max:
                raise _Slow
            value = _parser(type_.value)
            values = {}
            for pair in inner:
                if type(pair) is not list or len(pair) != 2:
                    raise _Slow
                values[key(pair[0])] = value(pair[1])
        elif type(json) is list and json and json[0] == "set":
            if len(json) != 2 or type(json[1]) is not list:
                raise _Slow
            inner = json[1]
            if not type_.n_min <= len(inner) <= type_.n_max:
                raise _Slow
            values = dict.fromkeys(map(key, inner))
        elif type_.n_max == 1 and type_.key.type in _POOLED:
            return _POOL.scalar(type_, key(json))
        else:
            return _Datum(type_, {key(json): None})
        if len(values) != len(inner):
            raise _Slow  # a duplicate: python-ovs reports it
        return _Datum(type_, values)
    except _Slow:
        return _ORIG_FROM_JSON(type_, json, symtab)


def _py_base_parser(base: Any) -> _Parser:
    """An atom maker for ``base`` from a Python value (``Datum.from_python``'s, after
    ``row_to_uuid``): the Atom, or raises _Slow."""
    at = base.type
    if at is _T.UuidType and base.enum is None:
        def make_uuid(v: Any) -> Any:
            if type(v) is not uuid.UUID:
                raise _Slow
            return _Atom(at, v)
        return make_uuid
    return _parser(base)  # (str, int and bool values are their own JSON)


_py_parsers: dict[int, tuple[Any, _Parser]] = {}


def _py_parser(base: Any) -> _Parser:
    return _memo_parser(_py_parsers, base, _py_base_parser)


def _fast_from_python(type_: Any, value: Any, row_to_uuid: Any) -> Any:
    """``Datum.from_python`` for plain values (str, int, bool, uuid.UUID; rows through
    ``row_to_uuid``), with its checks: anything else is python-ovs's."""
    try:
        key = _py_parser(type_.key)
        vt = type(value)
        if vt is dict:
            if type_.value is None:
                raise _Slow
            val = _py_parser(type_.value)
            d = {key(row_to_uuid(k)): val(row_to_uuid(v)) for k, v in value.items()}
        elif type_.value is not None:
            raise _Slow  # (a map's value not a dict)
        elif vt is list or vt is set or vt is tuple:
            d = {}
            for k in value:
                a = key(row_to_uuid(k))
                if a in d:
                    raise _Slow
                d[a] = None
        else:
            d = {key(row_to_uuid(value)): None}
        if not type_.n_min <= len(d) <= type_.n_max or (vt is dict and len(d) != len(value)):
            raise _Slow
        return _Datum(type_, d)
    except _Slow:
        return _ORIG_FROM_PYTHON(type_, value, row_to_uuid)


def _atom_value(a: Any) -> Any:
    return a.value


def _kv_value(kv: Any) -> Any:
    return kv[0].value


def _fast_to_json(self: Any) -> Any:
    t = self.type
    values = self.values
    kuuid = t.key.type is _T.UuidType
    if t.value is not None:
        vuuid = t.value.type is _T.UuidType
        items = sorted(values.items(), key=_kv_value) if len(values) > 1 else values.items()
        return ["map", [[["uuid", str(k.value)] if kuuid else k.value,
                         ["uuid", str(v.value)] if vuuid else v.value] for k, v in items]]
    if len(values) == 1:
        for k in values:
            return ["uuid", str(k.value)] if kuuid else k.value
    keys = sorted(values, key=_atom_value)
    if kuuid:
        return ["set", [["uuid", str(k.value)] for k in keys]]
    return ["set", [k.value for k in keys]]


# id(Type) -> (the Type, its default datum: never handed out, only compared with)
_defaults: dict[int, tuple[Any, Any]] = {}


def _fast_is_default(self: Any) -> bool:
    t = self.type
    if t.n_min == 0:
        return not self.values
    hit = _defaults.get(id(t))
    if hit is None or hit[0] is not t:
        hit = _defaults[id(t)] = (t, _Datum.default(t))
    return bool(self.values == hit[1].values)


def install() -> None:
    """Patch ``ovs.db.data.Datum`` (idempotent)."""
    if not _state["installed"]:
        _Datum.from_json = staticmethod(_fast_from_json)
        _Datum.from_python = staticmethod(_fast_from_python)
        _Datum.to_json = _fast_to_json
        _Datum.is_default = _fast_is_default
        _state["installed"] = True
