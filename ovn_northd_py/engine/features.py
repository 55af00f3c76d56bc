"""Features: NB tables that feed only flows (and SB tables derived from them).

A pipeline feature (ACLs, port groups, address sets, QoS, DHCP, DNS, load balancers, ...) whose
NB tables do not change the northd model (datapaths, ports, tunnel keys) is described by a
:class:`Feature` record: the tables and columns it takes and its hooks.  The records are built
and listed in :mod:`ovn_northd_py.engine.graph` (one :class:`FeatureSet` per graph: a feature's
state -- e.g. the ACL feature's uuid -> name maps -- lives in the object its hooks are bound
to, one per graph); nothing registers itself at import.  Then a change to those tables:

* does not recompute the northd node (the model is unaffected; ``FeatureSet.flow_only_tables``);
* is offered to the feature's ``on_nb_flows`` hook (lflow node), which removes and rebuilds the
  flows owned by the changed entities (owner keys of its own) and returns True, or returns False
  to make the lflow node recompute;
* is offered to ``on_nb_sb`` (sb_sync node) for the SB tables the feature writes (e.g.
  Port_Group, Address_Set), with ``sync_sb`` as the full version run by every SB recompute.

Hook contract (as the engine's, :mod:`ovn_northd_py.engine.engine`): return False *before*
changing anything you cannot finish.  Hooks see ``changes`` (the RowChange list of the
feature's tables and columns only) and a typed context: :class:`FlowFeatureCtx` for the flow
hooks (the lflow node's table and flow context), :class:`SbFeatureCtx` for the SB hooks (the
run's SB transaction and statistics, the SB row indexes).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..ovsdb.connection import DbConnection, RowChange
from .engine import HandlerResult

if TYPE_CHECKING:
    from ..flows.context import FlowCtx
    from ..lflow.table import FlowTable
    from ..northd.incremental import Tracked
    from ..northd.model import Northd
    from ..sync.rows import SyncStats
    from .nodes.inputs import RowIndex
    from .passthrough import PassHook


@dataclass(slots=True)
class FlowFeatureCtx:
    """What flow hooks get: the lflow node's flow table and flow context (never patched by hooks:
    ``fctx.nd is nd``)."""

    nb: DbConnection
    sb: DbConnection
    nd: Northd
    table: FlowTable
    fctx: FlowCtx
    tracked: Tracked | None = None  # on_northd_flows: the northd node's tracked changes
    # on_nb_flows: keys of the datapaths deleted in this run (each also comes as an update of its
    # switch / router row: what was built on it goes; the lflow node then purges its bit).
    deleted: frozenset[str] = frozenset()
    sb_resynced: bool = False  # on_sb_flows: SB was read again from scratch
    sb_indexes: Mapping[str, RowIndex] = field(default_factory=dict)
    # on_nb_flows: routers whose every flow (routes and policies too) the lflow node's on_northd
    # rebuilt earlier in this run, from the same NB rows (:func:`~.flow_rebuild.rebuild_router_scope`).
    scoped_routers: frozenset[str] = frozenset()


@dataclass(slots=True)
class SbFeatureCtx:
    """What SB hooks get."""

    nb: DbConnection
    sb: DbConnection
    nd: Northd
    sb_txn: Any  # the run's SB IDL transaction (ovs.db.idl.Transaction)
    stats: SyncStats
    sb_indexes: Mapping[str, RowIndex]  # Feature.sb_indexes (and the sb_sync node's), by name
    warn: Callable[..., None] | None = None  # WarnOnce.warn, for bad NB rows (None: do not warn)
    svc_monitor_mac: str = ""
    svc_monitor_macs: list[str] | None = None  # the svc_monitor_mac Address_Set (None: [svc_monitor_mac])
    profile: FlowProfile = DEFAULT_PROFILE  # the release served
    tracked: Tracked | None = None  # on_northd_sb: the northd node's tracked changes


FlowHook = Callable[[list[RowChange], FlowFeatureCtx], bool]
SbFlowHook = Callable[[list[RowChange], FlowFeatureCtx], HandlerResult]
SbHook = Callable[[list[RowChange], SbFeatureCtx], bool]
SbSync = Callable[[SbFeatureCtx], None]
KeyOf = Callable[[Any], Hashable | None]


@dataclass(slots=True, frozen=True)
class Feature:
    name: str
    nb_tables: frozenset[str]
    # Columns of tables the northd model reads (e.g. Logical_Switch.acls) that feed only this
    # feature: an update touching nothing else does not recompute the northd node, and is
    # offered to this feature's hooks (with the feature's own tables' changes).
    nb_columns: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # SB tables only this feature writes (besides its full sync_sb): a change to them (our own
    # writes echoing back, or someone else's) is offered to ``on_sb``, which checks and repairs
    # the changed rows; None (or False) makes sb_sync recompute.
    sb_tables: frozenset[str] = frozenset()
    # SB tables owned by others whose changes ``on_sb`` / ``on_sb_flows`` also see (e.g.
    # Port_Binding ``up`` for health checks).
    sb_watch: frozenset[str] = frozenset()
    # SB row indexes the SB hooks read: name -> (table, key_of); sb_sync keeps them current and
    # hands them over in SbFeatureCtx.sb_indexes.
    sb_indexes: Mapping[str, tuple[str, KeyOf]] = field(default_factory=dict)
    # Features whose NB changes also run this feature's ``on_nb_sb`` (with no changes of its own).
    follows: tuple[str, ...] = ()
    # ---- flow hooks (lflow node) ----
    on_nb_flows: FlowHook | None = None  # None: a change recomputes the lflow node
    on_northd_flows: FlowHook | None = None  # after an incremental northd run (FlowFeatureCtx.tracked)
    on_sb_flows: SbFlowHook | None = None  # SB changes of sb_tables | sb_watch (or a resync)
    on_flows_recomputed: Callable[[FlowFeatureCtx], None] | None = None  # after a full flow build
    # ---- SB hooks (sb_sync node) ----
    on_nb_sb: SbHook | None = None  # None: a change recomputes the sb_sync node
    sync_sb: SbSync | None = None  # full sync of the feature's SB tables (None: it writes none)
    sync_sb_first: bool = False  # the full sync runs before Port_Binding's (rows the bindings name)
    # After an incremental northd run (SbFeatureCtx.tracked: ports and switches that changed), for
    # SB rows derived from ports (e.g. port-group address sets).  None: nothing to do.
    on_northd_sb: SbHook | None = None
    on_sb: SbHook | None = None
    # ---- pass-through (:mod:`.passthrough`) ----
    # NB table -> columns whose change the feature can copy into SB itself, before the engine runs
    # (columns no flow and no other SB row reads), and the hook that writes that copy.
    passthrough_columns: Mapping[str, frozenset[str]] = field(default_factory=dict)
    passthrough: PassHook | None = None


def no_flows(_changes: list[RowChange], _h: FlowFeatureCtx) -> bool:
    """``on_nb_flows`` of a feature whose tables feed no logical flow (only SB rows that
    ovn-controller reads): its changes leave the flow table alone."""
    return True


class FeatureSet:
    """The features of one graph, in the order their hooks run."""

    def __init__(self, features: Sequence[Feature]) -> None:
        self.features: tuple[Feature, ...] = tuple(features)
        self._by_name: dict[str, Feature] = {}
        for f in self.features:
            if f.name in self._by_name:
                raise ValueError(f"feature {f.name!r} declared twice")
            self._by_name[f.name] = f
        self._table_owner: dict[str, str] = {}
        for f in self.features:
            for t in f.nb_tables:
                if t in self._table_owner:
                    raise ValueError(f"NB table {t} taken by {self._table_owner[t]} and {f.name}")
                self._table_owner[t] = f.name
        self._by_column = [(f.name, t, cols) for f in self.features for t, cols in f.nb_columns.items()]
        self.sb_owner: dict[str, Feature] = {}
        for f in self.features:
            for t in f.sb_tables:
                if t in self.sb_owner:
                    raise ValueError(f"SB table {t} taken by {self.sb_owner[t].name} and {f.name}")
                self.sb_owner[t] = f
        self._sb_readers: dict[str, list[str]] = {}
        for f in self.features:
            for t in sorted(f.sb_tables | f.sb_watch):
                self._sb_readers.setdefault(t, []).append(f.name)

    def __iter__(self) -> Iterator[Feature]:
        return iter(self.features)

    def get(self, name: str) -> Feature:
        return self._by_name[name]

    def flow_only_tables(self) -> frozenset[str]:
        return frozenset(self._table_owner)

    def flow_only_columns(self, table: str) -> frozenset[str]:
        """The columns of ``table`` (a table of the northd model) that feed only features."""
        out: set[str] = set()
        for f in self.features:
            out |= f.nb_columns.get(table, frozenset())
        return frozenset(out)

    def sb_index_specs(self) -> Iterator[tuple[str, str, KeyOf]]:
        for f in self.features:
            for name, (table, key_of) in f.sb_indexes.items():
                yield name, table, key_of

    def split_changes(self, changes: list[RowChange]) -> dict[str, list[RowChange]]:
        """Changes grouped by the feature owning their table (tables of no feature are left out),
        plus updates of other tables touching columns a feature owns (``Feature.nb_columns``)."""
        out: dict[str, list[RowChange]] = {}
        for c in changes:
            name = self._table_owner.get(c.table)
            if name is not None:
                out.setdefault(name, []).append(c)
                continue
            for fname, t, cols in self._by_column:
                if c.table == t and c.event == "update" and c.columns & cols:
                    out.setdefault(fname, []).append(c)
        return out

    def add_followers(self, by_feature: dict[str, list[RowChange]]) -> None:
        """Features that follow one of ``by_feature`` join it (with no changes of their own)."""
        for f in self.features:
            if any(n in by_feature for n in f.follows):
                by_feature.setdefault(f.name, [])

    def passthrough_hooks(self) -> dict[str, tuple[frozenset[str], PassHook]]:
        """NB table -> (the columns that may pass through, the hook): :mod:`.passthrough`."""
        out: dict[str, tuple[frozenset[str], PassHook]] = {}
        for f in self.features:
            if f.passthrough is None:
                continue
            for table, cols in f.passthrough_columns.items():
                if table in out:
                    raise ValueError(f"NB table {table} passed through by two features")
                out[table] = (cols, f.passthrough)
        return out

    def sb_read_tables(self) -> frozenset[str]:
        """The SB tables some feature owns or watches (their changes go to its hooks)."""
        return frozenset(self._sb_readers)

    def split_sb_changes(self, changes: list[RowChange]) -> dict[str, list[RowChange]]:
        """SB changes of the features' ``sb_tables`` and ``sb_watch`` tables, by feature."""
        out: dict[str, list[RowChange]] = {}
        for c in changes:
            for name in self._sb_readers.get(c.table, ()):
                out.setdefault(name, []).append(c)
        return {f.name: out[f.name] for f in self.features if f.name in out}  # (in the features' order)
