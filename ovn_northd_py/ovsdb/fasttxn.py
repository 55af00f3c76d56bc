"""A cheaper ``ovs.db.idl.Transaction._substitute_uuids``.

When a transaction is committed, python-ovs walks the JSON of every column it writes, element by
element, to turn references to rows inserted in the same transaction into ``named-uuid``s.  The
sets and maps of a cold sync are large (address sets, port-binding options...) and hold no row
reference at all: the walk over their strings was 8% of a 100-node cold sync.  A column's atoms
all have one type, so a set (or map) whose first element (key and value) is not a ``["uuid",
...]`` pair has none: it is returned as is.  Anything else goes to python-ovs's own walk.
"""

from __future__ import annotations

from typing import Any

import ovs.db.idl

_ORIG = ovs.db.idl.Transaction._substitute_uuids
_state = {"installed": False}


def _fast_substitute_uuids(self: Any, json: Any) -> Any:
    if type(json) is list and len(json) == 2:
        kind, elems = json
        if kind == "set" and (not elems or type(elems[0]) is not list):
            return json
        if kind == "map" and (not elems or (type(elems[0][0]) is not list and type(elems[0][1]) is not list)):
            return json
    return _ORIG(self, json)


def install() -> None:
    """Patch ``ovs.db.idl.Transaction`` (idempotent)."""
    if not _state["installed"]:
        ovs.db.idl.Transaction._substitute_uuids = _fast_substitute_uuids
        _state["installed"] = True
