"""Pass-through writes: an NB change whose whole SB effect is a verbatim copy, written as soon as the
NB server's update is read, before the IDL parses it and the engine runs.

ovn-kubernetes' most frequent NB change is a namespace's address set gaining or losing a pod's IP;
with ``--wait=sb`` it is one transaction that changes ``Address_Set.addresses`` and bumps
``NB_Global.nb_cfg``.  SB Address_Set holds an NB address set's addresses verbatim, and no logical
flow reads them (flows name the set: ``$name``).  So the SB effect of that change can be read off
the update message itself: a ``mutate`` of the SB row by the toggled addresses, and
SB_Global.nb_cfg.  When the daemon is idle (:meth:`~ovn_northd_py.daemon.Daemon._pass_through`:
everything read so far is computed and written, nothing is in flight), that write goes out at once.
The engine runs on the same change once the write has committed and its echo has been read, and
finds SB as it wants it: it writes nothing.

Contract of a feature's hook (``Feature.passthrough``, for the NB columns it declares in
``Feature.passthrough_columns``): given the ``modify`` of one NB row that changes only those
columns, return the SB operations that make SB what the engine would make it, or None when it
cannot tell (SB does not mirror the NB row now, the row's name is shared with a set northd
derives...): the engine's path then, for the whole message.  The columns must feed no logical
flow and no other SB row, so that the engine, run afterwards on the same change, has nothing else
to write.

A message with anything else in it (another table, another column, an insert or a delete) is
left to the engine.  ``NB_Global`` may change ``nb_cfg`` only: it is copied to SB_Global in the
same transaction, so ``ovn-nbctl --wait=sb`` returns once the copy has committed, as with the
engine's write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ovsdb.connection import DbConnection
from .nodes.inputs import RowIndex

PassHook = Callable[[str, str, Mapping[str, Any], "PassCtx"], list[dict[str, Any]] | None]


@dataclass(slots=True)
class PassCtx:
    """What a pass-through hook reads: the IDLs (the NB one not yet holding the change) and the SB
    row indexes the engine keeps (current: the daemon is idle)."""

    nb: DbConnection
    sb: DbConnection
    sb_indexes: Mapping[str, RowIndex]


@dataclass(slots=True)
class PassPlan:
    """The SB operations of a pass-through write; ``nb_cfg``: the NB_Global.nb_cfg it copies
    (the last operation sets it), or None."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    nb_cfg: int | None = None


def _modify(row_update: Any, allowed: frozenset[str]) -> Mapping[str, Any] | None:
    """The ``modify`` of an update2/update3 row update that changes only ``allowed`` columns."""
    if not isinstance(row_update, dict) or len(row_update) != 1:
        return None
    mod = row_update.get("modify")
    if not isinstance(mod, dict) or not mod or not mod.keys() <= allowed:
        return None
    return mod


_NB_CFG = frozenset({"nb_cfg"})


def plan(hooks: Mapping[str, tuple[frozenset[str], PassHook]], table_updates: Any, ctx: PassCtx,
         sb_global_uuid: str | None) -> PassPlan | None:
    """The pass-through write of one NB update message's ``table_updates`` (update2/update3), or None
    if any part of it is not for a pass-through.  ``hooks``: NB table -> (its columns that may pass
    through, the hook); ``sb_global_uuid``: the SB_Global row (None: none yet, no pass-through)."""
    if not isinstance(table_updates, dict) or not table_updates or sb_global_uuid is None:
        return None
    out = PassPlan()
    for table, rows in table_updates.items():
        if not isinstance(rows, dict):
            return None
        if table == "NB_Global":
            for ru in rows.values():
                mod = _modify(ru, _NB_CFG)
                value = mod.get("nb_cfg") if mod is not None else None
                if type(value) is not int:
                    return None
                out.nb_cfg = value
            continue
        hook = hooks.get(table)
        if hook is None:
            return None
        columns, fn = hook
        for u, ru in rows.items():
            mod = _modify(ru, columns)
            got = fn(table, u, mod, ctx) if mod is not None else None
            if got is None:
                return None
            out.ops += got
    if out.nb_cfg is not None:
        out.ops.append({"op": "update", "table": "SB_Global", "row": {"nb_cfg": out.nb_cfg},
                        "where": [["_uuid", "==", ["uuid", sb_global_uuid]]]})
    return out if out.ops else None


def set_atoms(datum_json: Any) -> list[Any] | None:
    """The atoms of a set column's update2 diff (one atom, or ``["set", [...]]``); None if it is
    neither (a reference, a map)."""
    if isinstance(datum_json, (str, int, float, bool)):
        return [datum_json]
    if (isinstance(datum_json, list) and len(datum_json) == 2 and datum_json[0] == "set"
            and isinstance(datum_json[1], list)
            and all(isinstance(a, (str, int, float, bool)) for a in datum_json[1])):
        return datum_json[1]
    return None
