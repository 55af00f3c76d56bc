"""Feature registry: NB tables that feed only flows (and SB tables derived from them).

A pipeline feature (ACLs, port groups, address sets, QoS, DHCP, DNS, ...) whose NB
tables do not change the northd model (datapaths, ports, tunnel keys) registers
here.  Then a change to those tables:

* does not recompute the northd node (the model is unaffected);
* is offered to the feature's ``on_nb_flows`` handler, which removes and rebuilds
  the flows owned by the changed entities (owner keys of its own) and returns
  True, or returns False to make the lflow node recompute;
* is offered to ``on_nb_sb`` for the SB tables the feature writes (e.g. Port_Group,
  Address_Set), with ``sync_sb`` as the full version run by every SB recompute.

Handler contract: return False *before* changing anything you cannot finish.
Handlers see ``changes`` (the RowChange list of the feature's tables only) and a
context with ``nb``, ``sb``, ``nd`` (the northd model), ``table`` (the FlowTable),
``fctx`` (the FlowCtx), ``sb_txn`` and ``stats`` where relevant.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..ovsdb.connection import RowChange

Handler = Callable[[list[RowChange], Any], bool]


@dataclass(slots=True)
class Feature:
    name: str
    nb_tables: frozenset[str]
    on_nb_flows: Handler | None = None  # None: a change recomputes the lflow node
    on_nb_sb: Handler | None = None  # None: a change recomputes the sb_sync node
    sync_sb: Callable[[Any], None] | None = None  # full sync of the feature's SB tables
    extra: dict[str, Any] = field(default_factory=dict)
    # Columns of tables the northd model reads (e.g. Logical_Switch.acls) that feed only this
    # feature: an update touching nothing else does not recompute the northd node, and is
    # offered to this feature's handlers (with the feature's own tables' changes).
    nb_columns: dict[str, frozenset[str]] = field(default_factory=dict)
    # After an incremental northd run (FeatureCtx.tracked: ports and switches that changed), for
    # SB rows derived from ports (e.g. port-group address sets).  None: nothing to do.
    on_northd_sb: Handler | None = None
    # SB row indexes the SB handlers read: name -> (table, key_of); sb_sync keeps them current
    # and hands them over in FeatureCtx.sb_indexes.
    sb_indexes: dict[str, tuple[str, Callable[[Any], Hashable | None]]] = field(default_factory=dict)
    # SB tables only this feature writes (besides its full sync_sb): a change to them (our own
    # writes echoing back, or someone else's) is offered to ``on_sb``, which checks and repairs
    # the changed rows; None (or False) makes sb_sync recompute.
    sb_tables: frozenset[str] = frozenset()
    on_sb: Handler | None = None


FEATURES: list[Feature] = []


def no_flows(_changes: list[RowChange], _h: Any) -> bool:
    """``on_nb_flows`` of a feature whose tables feed no logical flow (only SB rows that
    ovn-controller reads): its changes leave the flow table alone."""
    return True


def register(feature: Feature) -> Feature:
    if any(f.name == feature.name for f in FEATURES):
        raise ValueError(f"feature {feature.name!r} registered twice")
    FEATURES.append(feature)
    return feature


def flow_only_tables() -> frozenset[str]:
    out: set[str] = set()
    for f in FEATURES:
        out |= f.nb_tables
    return frozenset(out)


def flow_only_columns(table: str) -> frozenset[str]:
    """The columns of ``table`` (a table of the northd model) that feed only registered features."""
    out: set[str] = set()
    for f in FEATURES:
        out |= f.nb_columns.get(table, frozenset())
    return frozenset(out)


def split_changes(changes: list[RowChange]) -> dict[str, list[RowChange]]:
    """Changes grouped by the feature owning their table (tables of no feature are left out), plus
    updates of other tables touching columns a feature owns (``Feature.nb_columns``)."""
    owner: dict[str, str] = {t: f.name for f in FEATURES for t in f.nb_tables}
    by_column = [(f.name, t, cols) for f in FEATURES for t, cols in f.nb_columns.items()]
    out: dict[str, list[RowChange]] = {}
    for c in changes:
        name = owner.get(c.table)
        if name is not None:
            out.setdefault(name, []).append(c)
            continue
        for fname, t, cols in by_column:
            if c.table == t and c.event == "update" and c.columns & cols:
                out.setdefault(fname, []).append(c)
    return out


def feature(name: str) -> Feature:
    for f in FEATURES:
        if f.name == name:
            return f
    raise KeyError(name)


@dataclass(slots=True)
class FeatureCtx:
    """What feature handlers get."""

    nb: Any
    sb: Any
    nd: Any
    table: Any = None
    fctx: Any = None
    sb_txn: Any = None
    stats: Any = None
    tracked: Any = None  # on_northd_sb: the northd node's Tracked changes
    sb_indexes: dict[str, Any] = field(default_factory=dict)  # Feature.sb_indexes, by name (RowIndex)
    warn: Any = None  # WarnOnce.warn, for bad NB rows found by SB handlers (None: do not warn)
