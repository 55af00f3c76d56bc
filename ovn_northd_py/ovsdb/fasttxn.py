"""A cheaper ``ovs.db.idl.Transaction._substitute_uuids``.

When a transaction is committed, python-ovs walks the JSON of every column it writes, element by
element, to turn references to rows inserted in the same transaction into ``named-uuid``s.  The
sets and maps of a cold sync are large (address sets, port-binding options...) and hold no row
reference at all: the walk over their strings was 8% of a 100-node cold sync.  A column's atoms
all have one type, so a set (or map) whose first element (key and value) is not a ``["uuid",
...]`` pair has none: it is returned as is.  Anything else is walked as python-ovs walks it, without
a method call per element (sets of port references: multicast groups, datapath groups).
"""

from __future__ import annotations

import uuid
from typing import Any

import ovs.db.idl
import ovs.ovsuuid

_ORIG = ovs.db.idl.Transaction._substitute_uuids
_UUID_MATCH = ovs.ovsuuid.uuidRE.match
_uuid_name = ovs.db.idl._uuid_name_from_uuid
_state = {"installed": False}


def _fast_substitute_uuids(self: Any, json: Any) -> Any:
    if type(json) is list and len(json) == 2:
        kind, elems = json
        if kind == "set" and (not elems or type(elems[0]) is not list):
            return json
        if kind == "map" and (not elems or (type(elems[0][0]) is not list and type(elems[0][1]) is not list)):
            return json
    return _substitute(self._txn_rows, json, self)


def _substitute(txn_rows: Any, json: Any, txn: Any) -> Any:
    """python-ovs's walk (a ``["uuid", UUID]`` pair naming a row this transaction inserts becomes a
    ``named-uuid``; lists are copied, element by element), without a method call per element."""
    if type(json) is not list:
        return json if not isinstance(json, tuple) else _ORIG(txn, json)
    if len(json) == 2 and json[0] == "uuid":
        s = json[1]
        if type(s) is not str:
            return _ORIG(txn, json)
        if _UUID_MATCH(s):
            u = uuid.UUID(s)
            row = txn_rows.get(u, None)
            if row and row._data is None:
                return ["named-uuid", _uuid_name(u)]
            return json
    return [_substitute(txn_rows, e, txn) if type(e) is list or isinstance(e, tuple) else e for e in json]


def install() -> None:
    """Patch ``ovs.db.idl.Transaction`` (idempotent)."""
    if not _state["installed"]:
        ovs.db.idl.Transaction._substitute_uuids = _fast_substitute_uuids
        _state["installed"] = True
