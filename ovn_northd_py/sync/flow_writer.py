"""The flow writer: SB Logical_Flow, Logical_DP_Group and Load_Balancer.

It owns the cache of what SB holds in those three tables (``lflows.FlowCache``), its
load (one ``select`` per chunk, :meth:`FlowWriter.start_load` / :meth:`FlowWriter.poll_load`),
the raw monitor that watches them, the planning of every write (``lflows.plan_sync``:
operations plus the typed actions that replay them on the cache), the repair of foreign
changes, and, as a hot standby, following what another northd writes.  It sends no write
itself: the daemon attaches a plan to the SB IDL transaction of the same engine run
(``ovsdb/raw.SessionTap.attach_ops``), so one engine run is one SB transaction and SB
never holds a flow that names an address set, port group, meter or port the same
run deletes.  The ``table_id`` of each flow comes from the flow profile of the release
being served (``FlowCtx.profile``).

Invariants:

* The cache equals SB's three tables as of the last transaction of ours that
  committed, with every foreign change the monitor has reported folded in by
  :meth:`take_repairs`.  A plan is applied to the cache only when its transaction
  commits (:meth:`committed`); a failed transaction changed nothing in SB, so the
  cache stays valid, and the next plan compares every flow (:meth:`failed`).
* The monitor (started before the ``select`` that loads the cache, so nothing slips
  between them) reports inserts and deletes with no columns, so the echo of our
  own bulk inserts costs a few bytes per row, and modifications with the full
  new row.  Updates are folded in only while no write of ours is in flight: by
  then every row we inserted is in the cache, so a row the cache does not know
  is foreign.
* Foreign changes are undone from the cache (which holds what we want): a foreign
  row is deleted, a row of ours that was deleted is inserted again, a row of ours
  that was modified is written back.  A group that lost a datapath the server
  removed (weak reference to a deleted Datapath_Binding) is accepted as is.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from .lflow_desired import desired_changed_flows, desired_flows, desired_for_keys
from .lflows import (
    LB_COLUMNS,
    DeleteFlow,
    DeleteLb,
    FKey,
    FlowCache,
    FlowRow,
    InsertFlow,
    InsertLb,
    LbRow,
    Plan,
    ResizeGroup,
    UpdateFlow,
    UpdateLb,
    WantFlow,
    WantLb,
    _map,
    _norm_json,
    _opt_str,
    _uuid_of,
    _uuid_set,
    _where,
    apply_plan,
    chunked_select_ops,
    lb_group_columns,
    lb_row,
    load_rows,
    other_ls_group_column,
    plan_sync,
)
from .load_balancers import desired_sb_lb, desired_sb_lb_on, desired_sb_lbs

FLOW_COLUMNS = ("logical_datapath", "logical_dp_group", "pipeline", "table_id", "priority", "match", "actions",
                "controller_meter", "external_ids", "tags")


def monitor_requests(full: bool = False, split: bool = False, inserts: bool = True) -> dict[str, Any]:
    """Two requests per table (ovsdb-server filters the columns it sends by each one's
    ``select``): inserts and deletes with no columns, modifications with every column we own.
    ``full``: every change with every column (a hot standby follows what another northd writes).
    ``inserts`` False: no inserts (:meth:`FlowWriter.quiet_inserts`)."""
    def two(cols: list[str]) -> list[dict[str, Any]]:
        if full:
            return [{"columns": cols, "select": {"initial": False}}]
        return [{"columns": [], "select": {"initial": False, "insert": inserts, "delete": True, "modify": False}},
                {"columns": cols, "select": {"initial": False, "insert": False, "delete": False, "modify": True}}]

    return {
        "Logical_Flow": two(list(FLOW_COLUMNS)),
        "Logical_DP_Group": two(["datapaths"]),
        "Load_Balancer": two([*lb_group_columns(split), *LB_COLUMNS]),
    }


def _flow_equal(r: FlowRow, new: dict[str, Any]) -> bool:
    ext = _map(new.get("external_ids"))
    key: FKey = (ext.get("stage-name", ""), new.get("pipeline", ""), new.get("table_id", -1),
                 new.get("priority", -1), new.get("match", ""), new.get("actions", ""),
                 _opt_str(new.get("controller_meter")))
    return (key == r.key and _uuid_of(new.get("logical_datapath")) == r.dp
            and _uuid_of(new.get("logical_dp_group")) == r.group and ext == r.ext and _map(new.get("tags")) == r.tags)


def _lb_equal(lb: LbRow, new: dict[str, Any], split: bool = False) -> bool:
    if split:
        other = other_ls_group_column(lb.group_col)
        if (_uuid_of(new.get(lb.group_col)) != lb.group or _uuid_of(new.get("lr_datapath_group")) != lb.lr_group
                or _uuid_of(new.get(other)) is not None or _uuid_set(new.get("datapaths"))):
            return False
    elif _uuid_of(new.get("datapath_group")) != lb.group or _uuid_set(new.get("datapaths")):
        return False
    return all(_norm_json(new.get(c)) == _norm_json(lb.cols.get(c)) for c in LB_COLUMNS)


def _omap(d: dict[str, str]) -> list[Any]:
    return ["map", sorted([k, v] for k, v in d.items())]


@dataclass(slots=True)
class RepairStats:
    """What :meth:`FlowWriter.take_repairs` found, for logs and metrics."""

    foreign_inserts: int = 0
    foreign_deletes: int = 0
    foreign_modifies: int = 0

    @property
    def total(self) -> int:
        return self.foreign_inserts + self.foreign_deletes + self.foreign_modifies


@dataclass(slots=True)
class FlowWriter:
    cache: FlowCache = field(default_factory=FlowCache)
    full_sync_needed: bool = True  # the next plan compares every flow (after a load or a failure)
    load_req: Any = None  # the select (one chunk of the load) whose reply is awaited
    # After taking over from a hot standby: once our first write commits, the monitor goes from
    # following (full rows) to lean (foreign changes only).
    lean_after_write: bool = False
    # The first write into an empty SB is in flight under a monitor without inserts
    # (:meth:`quiet_inserts`); :meth:`watch_inserts_again` follows it.
    inserts_unwatched: bool = False
    _chunks: list[list[dict[str, Any]]] = field(default_factory=list)  # selects still to send
    _sent: list[dict[str, Any]] = field(default_factory=list)  # the select whose reply is awaited
    # Hot standby: the cache follows what another northd writes (full monitor), and ``dirty``
    # holds the flow identities / load-balancer keys where SB may differ from what we want, so
    # that taking over compares only those (``dirty_all``: not known yet, compare everything).
    following: bool = False
    dirty_all: bool = True
    dirty_keys: set[FKey] = field(default_factory=set)
    dirty_lbs: set[str] = field(default_factory=set)
    # The flow profile of the release being served (the daemon sets it once the servers' schema
    # versions chose it): table ids and SB Load_Balancer rows when no flow table was built yet.
    profile: FlowProfile = DEFAULT_PROFILE

    def _profile(self, lflow: Any) -> FlowProfile:
        """The flow profile the flow table was built for (that of the release being served)."""
        fctx = lflow.fctx
        return fctx.profile if fctx is not None else self.profile

    # ---- loading ----
    def reset(self) -> None:
        """Forget SB (a reconnection): the next :meth:`start_load` re-reads it (a load in flight
        is forgotten too)."""
        self.cache.reset()
        self.load_req = None
        self.full_sync_needed = True
        self.inserts_unwatched = False
        self.following = False
        self.dirty_all = True
        self.dirty_keys.clear()
        self.dirty_lbs.clear()

    @property
    def loaded(self) -> bool:
        return self.cache.loaded

    @property
    def holds_nothing(self) -> bool:
        """SB has been read and holds no logical flow, datapath group or load balancer."""
        c = self.cache
        return c.loaded and not (c.flows or c.groups or c.lbs)

    @property
    def loading(self) -> bool:
        """A select of the load is in flight (:meth:`poll_load` takes its reply)."""
        return self.load_req is not None

    def start_load(self, raw: Any, follow: bool = False) -> None:
        """Start the monitor, then read the three tables, a chunk at a time (``chunked_select_ops``,
        ``load_req`` the select in flight; :meth:`poll_load` takes each reply).  ``follow``: as a
        hot standby (see :meth:`follow`)."""
        if raw.monitor(monitor_requests(full=follow, split=self.cache.split_lbs)) is None:
            return
        self.cache.reset()
        self._chunks = chunked_select_ops(self.cache.split_lbs)
        self.following = follow
        self.load_req = self._send_chunk(raw)

    def poll_load(self, raw: Any) -> str | None:
        """Take the reply to the select in flight, if it came: fold it in and send the next one.
        Returns the error of a select that failed (the cache is then reset, to be read again)."""
        if self.load_req is None:
            return None
        done, result = raw.poll(self.load_req)
        if not done:
            return None
        self.load_req = None
        if isinstance(result, str):
            self.reset()
            return result
        self.load_req = self.loaded_chunk(raw, result)
        if self.load_req is None and not self.loaded:
            self.reset()  # (not connected: read again on reconnection)
        return None

    def _send_chunk(self, raw: Any) -> Any:
        self._sent = self._chunks.pop(0)
        return raw.send(self._sent, with_lock=False)

    def loaded_chunk(self, raw: Any, results: list[Any]) -> Any:
        """Fold one select's reply into the cache; returns the next request, or None when the
        cache is complete (``loaded``).  (Nobody else writes these tables while we hold the lock,
        and as a standby the monitor, started first, brings whatever changed between chunks.)"""
        for op, res in zip(self._sent, results, strict=True):
            load_rows(self.cache, op["table"], res["rows"])
        if self._chunks:
            return self._send_chunk(raw)
        self.cache.loaded = True
        self.full_sync_needed = True
        return None

    def lean_monitor(self, raw: Any) -> None:
        """After taking over: watch for foreign changes only (our own bulk writes echo cheaply).
        The new monitor starts before the old one is cancelled, so nothing falls between."""
        raw.monitor(monitor_requests(split=self.cache.split_lbs), cancel_old=True)

    def quiet_inserts(self, raw: Any) -> None:
        """Before the first write into an empty SB (66,000 flows at 100 ovn-kubernetes nodes): a
        monitor without inserts, so that the server does not notify us of each of ours, a quarter
        of its time on that transaction, on the path to ``--wait=sb``.  Deletes and modifications
        stay watched (the new monitor starts before the lean one is cancelled); rows others insert
        meanwhile are found by :meth:`watch_inserts_again` once the write is done."""
        if raw.monitor(monitor_requests(split=self.cache.split_lbs, inserts=False), cancel_old=True) is not None:
            self.inserts_unwatched = True

    def watch_inserts_again(self, raw: Any) -> Any:
        """After that write (committed or not): the lean monitor again, then a read of the three
        tables' uuids (after the monitor, on the same connection: an insert is in one or the
        other), whose reply :meth:`unknown_rows` turns into the inserts to repair.  Returns the
        read's request (None: not connected; a reconnection reads everything again anyway)."""
        self.inserts_unwatched = False
        if raw.monitor(monitor_requests(split=self.cache.split_lbs), cancel_old=True) is None:
            return None
        return raw.send([{"op": "select", "table": t, "where": [], "columns": ["_uuid"]} for t in _RAW_TABLES],
                        with_lock=False)

    def unknown_rows(self, results: list[Any]) -> dict[str, Any]:
        """The rows of that read the cache does not know, as monitor inserts (empty: none)."""
        cache = self.cache
        out: dict[str, Any] = {}
        for table, res in zip(_RAW_TABLES, results, strict=True):
            known: Collection[str] = (cache.flows if table == "Logical_Flow" else
                                      cache.groups if table == "Logical_DP_Group" else cache.lbs)
            rows: dict[str, Any] = {u: {"new": {}} for r in res.get("rows", ()) if (u := str(r["_uuid"][1])) not in known}
            if rows:
                out[table] = rows
        return out

    def take_over(self, updates: list[dict[str, Any]], compare_all: bool) -> None:
        """We got the lock while following another northd: what it wrote (``updates`` not yet
        folded in) is the truth we take over; from now on a change we did not make is foreign
        (repaired), and the monitor goes lean after our first write.  ``compare_all``: the first
        plan compares every flow (SB may lack rows the standby could not compare)."""
        self.follow(updates)
        self.lean_after_write = True
        if compare_all:
            self.full_sync_needed = True

    # ---- hot standby ----
    def follow(self, updates: list[dict[str, Any]]) -> None:
        """Fold what another northd wrote (full-row updates) into the cache, as the truth, and
        mark what it touched as dirty."""
        cache = self.cache
        for tu in updates:
            for u, ru in tu.get("Logical_DP_Group", {}).items():
                new = ru.get("new")
                self.dirty_keys.update(cache.flows[f].key for f in cache.group_users.get(u, ()))
                self.dirty_lbs.update(lb.key for lb in cache.lbs.values() if u in lb.groups())
                if new is None:
                    cache.del_group(u)
                else:
                    cache.set_group(u, _uuid_set(new.get("datapaths")))
            for u, ru in tu.get("Logical_Flow", {}).items():
                new = ru.get("new")
                old = cache.flows.get(u)
                if old is not None:
                    self.dirty_keys.add(old.key)
                    cache.del_flow(u)
                if new is not None:
                    ext = _map(new.get("external_ids"))
                    key: FKey = (ext.get("stage-name", ""), new.get("pipeline", ""), new.get("table_id", -1),
                                 new.get("priority", -1), new.get("match", ""), new.get("actions", ""),
                                 _opt_str(new.get("controller_meter")))
                    cache.add_flow(u, FlowRow(key, _uuid_of(new.get("logical_datapath")),
                                              _uuid_of(new.get("logical_dp_group")), ext, _map(new.get("tags"))))
                    self.dirty_keys.add(key)
            for u, ru in tu.get("Load_Balancer", {}).items():
                new = ru.get("new")
                old_lb = cache.lbs.pop(u, None)
                if old_lb is not None:
                    self.dirty_lbs.add(old_lb.key)
                if new is not None:
                    lb = lb_row(u, new, cache.split_lbs)
                    cache.lbs[u] = lb
                    self.dirty_lbs.add(lb.key)

    def _follow_chassis_features(self, lflow: Any) -> None:
        """Split load-balancer groups name their switches in ls_datapath_group, or in the older
        datapath_group while a chassis lacks the ls-dpg-column feature (as the reference: an older
        ovn-controller reads only that one); a change of column compares every load balancer."""
        fctx = lflow.fctx
        col = "ls_datapath_group" if fctx is None or fctx.features.ls_dpg_column else "datapath_group"
        if col != self.cache.ls_group_column:
            self.cache.ls_group_column = col
            if self.cache.split_lbs:
                self.full_sync_needed = True

    def track(self, lflow: Any, nd: Any, nb_lbs: Any, dp_uuid: Mapping[str, str]) -> None:
        """After a standby engine run: take the flow table's changes into ``dirty``, then keep
        only what really differs from SB (a plan over the dirty scope, never sent)."""
        self._follow_chassis_features(lflow)
        if self.dirty_all or self.full_sync_needed or lflow.full_sync_needed:
            plan, _ = self._full_plan(lflow, nd, dp_uuid)  # a full comparison, after a load or rebuild
            self.dirty_keys, self.dirty_lbs = self._plan_scope(plan)
            self.dirty_all = False
            return
        self._take_changes(lflow, nd, dp_uuid)
        plan = self._dirty_plan(lflow, nd, nb_lbs, dp_uuid)
        self.dirty_keys, self.dirty_lbs = self._plan_scope(plan)

    def _dirty_plan(self, lflow: Any, nd: Any, nb_lbs: Any, dp_uuid: Mapping[str, str]) -> Plan:
        want = desired_for_keys(lflow.table, nd, dp_uuid, self.dirty_keys, self._profile(lflow))
        want_lbs: dict[str, WantLb] = {}
        fctx = lflow.fctx
        for key in self.dirty_lbs:
            row = nb_lbs.get(uuid.UUID(key)) if not key.startswith("name:") else None
            if row is None or fctx is None:
                continue
            w = desired_sb_lb(row, [d.key for d in fctx.lbs.switches_of(key, nd)], dp_uuid,
                              [d.key for d in fctx.lbs.routers_of(key, nd)], fctx.profile)
            if w is not None:
                want_lbs[key] = w
        return plan_sync(self.cache, want, want_lbs, set(self.dirty_keys), lb_scope=set(self.dirty_lbs))

    def _plan_scope(self, plan: Plan) -> tuple[set[FKey], set[str]]:
        """The flow identities and load-balancer keys a (not applied) plan would change."""
        cache = self.cache
        keys: set[FKey] = set()
        lbs: set[str] = set()
        for a in plan.actions:
            if isinstance(a, InsertFlow):
                keys.add(a.key)
            elif isinstance(a, DeleteFlow | UpdateFlow):
                if a.uuid in cache.flows:
                    keys.add(cache.flows[a.uuid].key)
            elif isinstance(a, ResizeGroup):
                keys.update(cache.flows[f].key for f in cache.group_users.get(a.group, ()))
                lbs.update(lb.key for lb in cache.lbs.values() if a.group in lb.groups())
            elif isinstance(a, InsertLb):
                lbs.add(a.key)
            elif isinstance(a, DeleteLb | UpdateLb) and a.uuid in cache.lbs:
                lbs.add(cache.lbs[a.uuid].key)
        return keys, lbs


    # ---- planning ----
    def plan(self, lflow: Any, nd: Any, nb_lbs: Any, dp_uuid: Mapping[str, str],
             gone_dps: frozenset[str] = frozenset()) -> tuple[Plan, int | None]:
        """The operations that bring SB's flows, groups and load balancers to what the flow
        table and the load-balancer index want.  Returns the plan and, after a full diff, the
        number of desired flows.  ``gone_dps``: Datapath_Binding uuids this run's transaction
        deletes: every flow and load balancer naming one must be in the plan (an incremental plan
        that would leave one out gives way to a full one)."""
        self._follow_chassis_features(lflow)
        following, self.following = self.following, False
        if following and not (self.dirty_all or self.full_sync_needed or lflow.full_sync_needed):
            # Taking over from a hot standby: only what may differ, plus what changed since.
            self._take_changes(lflow, nd, dp_uuid)
            plan = self._dirty_plan(lflow, nd, nb_lbs, dp_uuid)
            self.dirty_keys, self.dirty_lbs = set(), set()
            return plan, None
        if self.full_sync_needed or lflow.full_sync_needed:
            return self._full_plan(lflow, nd, dp_uuid)
        # Incremental: compare only the flows (and load balancers) that changed since the last plan.
        changed, scope = desired_changed_flows(lflow.table, nd, dp_uuid, self._profile(lflow))
        want_lbs, lb_scope = _changed_lbs(lflow, nd, nb_lbs, dp_uuid)
        if gone_dps and not self._covers(gone_dps, scope, lb_scope):
            return self._full_plan(lflow, nd, dp_uuid)
        return plan_sync(self.cache, changed, want_lbs, scope, lb_scope=lb_scope), None

    def _covers(self, gone_dps: frozenset[str], scope: set[FKey], lb_scope: set[str] | None) -> bool:
        """Does an incremental plan over ``scope`` / ``lb_scope`` rewrite every cached flow and
        load balancer that names one of ``gone_dps`` (directly or through its group)?"""
        cache = self.cache
        bad = {g for g, dps in cache.groups.items() if not gone_dps.isdisjoint(dps)}
        for r in cache.flows.values():
            if (r.dp in gone_dps or r.group in bad) and r.key not in scope:
                return False
        lbs = lb_scope or set()
        return all(lb.key in lbs for lb in cache.lbs.values() if not bad.isdisjoint(lb.groups()))

    def _full_plan(self, lflow: Any, nd: Any, dp_uuid: Mapping[str, str]) -> tuple[Plan, int]:
        want = desired_flows(lflow.table, nd, dp_uuid, self._profile(lflow))
        lflow.table.take_changed()  # this plan covers every flow
        plan = plan_sync(self.cache, want, desired_sb_lbs(nd, dp_uuid, self._profile(lflow)))
        if lflow.fctx is not None:
            lflow.fctx.lbs.sb_dirty.clear()  # this plan covers every load balancer
        self.full_sync_needed = lflow.full_sync_needed = False
        return plan, len(want)

    def _take_changes(self, lflow: Any, nd: Any, dp_uuid: Mapping[str, str]) -> None:
        """The flow table's and load-balancer index's changes since the last plan, into ``dirty``."""
        _want, scope = desired_changed_flows(lflow.table, nd, dp_uuid, self._profile(lflow))
        self.dirty_keys |= scope
        fctx = lflow.fctx
        if fctx is not None:
            self.dirty_lbs |= fctx.lbs.sb_dirty
            fctx.lbs.sb_dirty.clear()

    def committed(self, plan: Plan, results: list[Any]) -> None:
        apply_plan(self.cache, plan, results)

    def write_succeeded(self, raw: Any) -> None:
        """A write of ours committed (with or without a plan of ours in it)."""
        if self.lean_after_write:
            self.lean_after_write = False
            self.lean_monitor(raw)

    def failed(self) -> None:
        """A plan did not commit: SB (and so the cache) is as before; compare everything next time."""
        self.full_sync_needed = True

    # ---- self-healing ----
    def take_repairs(self, updates: list[dict[str, Any]], live_dps: Collection[str]) -> tuple[Plan, RepairStats]:
        """Fold the monitor's updates into the cache and plan what undoes foreign changes.

        ``live_dps``: the Datapath_Binding uuids SB holds now (a group that lost only datapaths
        that no longer exist was trimmed by the server, not by someone else)."""
        r = _Repairs(self.cache, _ForeignChanges.of(updates))
        r.reinsert_deleted()
        r.delete_foreign_inserts()
        r.write_back_modified(live_dps)
        r.plan_reinserts()
        return r.plan, r.stats


_RAW_TABLES = ("Logical_Flow", "Logical_DP_Group", "Load_Balancer")


@dataclass(slots=True)
class _ForeignChanges:
    """The monitor's updates of the raw tables, net: per table the rows inserted, modified (their
    new contents) and deleted since the last repair (a row inserted then deleted is in none)."""

    ins: dict[str, set[str]]
    mods: dict[str, dict[str, dict[str, Any]]]
    dels: dict[str, set[str]]

    @classmethod
    def of(cls, updates: list[dict[str, Any]]) -> _ForeignChanges:
        ins: dict[str, set[str]] = {t: set() for t in _RAW_TABLES}
        mods: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in _RAW_TABLES}
        dels: dict[str, set[str]] = {t: set() for t in _RAW_TABLES}
        for tu in updates:
            for table, rows in tu.items():
                if table not in ins:
                    continue
                for u, ru in rows.items():
                    old, new = ru.get("old"), ru.get("new")
                    if old is None and new is not None:
                        ins[table].add(u)
                        dels[table].discard(u)
                    elif new is None:
                        if u in ins[table]:
                            ins[table].discard(u)  # inserted and deleted by someone else: gone
                        else:
                            dels[table].add(u)
                        mods[table].pop(u, None)
                    else:
                        mods[table][u] = new
        return cls(ins, mods, dels)


@dataclass(slots=True)
class _Repairs:
    """One :meth:`FlowWriter.take_repairs`: the plan that undoes foreign changes, built in steps."""

    cache: FlowCache
    seen: _ForeignChanges
    plan: Plan = field(default_factory=Plan)
    stats: RepairStats = field(default_factory=RepairStats)
    # Rows of ours to insert again, as the cache had them (planned by plan_sync at the end).
    want: dict[FKey, WantFlow] = field(default_factory=dict)
    want_lbs: dict[str, WantLb] = field(default_factory=dict)

    def _reinsert_flow(self, u: str, r: FlowRow) -> None:
        cache = self.cache
        dps = frozenset((r.dp,) if r.dp else ()) if r.group is None else cache.groups.get(r.group, frozenset())
        kind = cache.group_kinds.get(r.group, "") if r.group is not None else ""
        self.want[r.key] = WantFlow(dps, dict(r.ext), dict(r.tags), kind)
        cache.del_flow(u)

    def _reinsert_lb(self, u: str, lb: LbRow) -> None:
        cache = self.cache
        self.want_lbs[lb.key] = WantLb(cache.groups.get(lb.group or "", frozenset()), dict(lb.cols),
                                       cache.groups.get(lb.lr_group or "", frozenset()),
                                       u if cache.split_lbs else None)
        del cache.lbs[u]

    def reinsert_deleted(self) -> None:
        """Rows of ours that someone deleted are inserted again, as the cache had them; so is a
        row someone modified so that its group went away (garbage-collected)."""
        cache, seen, st, ops = self.cache, self.seen, self.stats, self.plan.ops
        gone_groups = seen.dels["Logical_DP_Group"]
        for u in seen.dels["Logical_Flow"]:
            r = cache.flows.get(u)
            if r is not None:  # (else: our own delete)
                self._reinsert_flow(u, r)
                st.foreign_deletes += 1
        for u in seen.dels["Load_Balancer"]:
            lb = cache.lbs.get(u)
            if lb is not None:
                self._reinsert_lb(u, lb)
                st.foreign_deletes += 1
        flow_mods, lb_mods = seen.mods["Logical_Flow"], seen.mods["Load_Balancer"]
        for u, new in list(flow_mods.items()):
            r = cache.flows.get(u)
            if r is not None and r.group in gone_groups and not _flow_equal(r, new):
                ops.append({"op": "delete", "table": "Logical_Flow", "where": _where(u)})
                self._reinsert_flow(u, r)
                del flow_mods[u]
                st.foreign_modifies += 1
        for u, new in list(lb_mods.items()):
            lb = cache.lbs.get(u)
            if lb is not None and any(g in gone_groups for g in lb.groups()) and not _lb_equal(
                    lb, new, cache.split_lbs):
                ops.append({"op": "delete", "table": "Load_Balancer", "where": _where(u)})
                self._reinsert_lb(u, lb)
                del lb_mods[u]
                st.foreign_modifies += 1
        lb_groups = {g for lb in cache.lbs.values() for g in lb.groups()}
        for g in gone_groups:
            if g in cache.groups and not cache.group_users.get(g) and g not in lb_groups:
                cache.del_group(g)

    def delete_foreign_inserts(self) -> None:
        """Rows someone inserted: not ours, delete them."""
        cache, plan = self.cache, self.plan
        for table, us in self.seen.ins.items():
            if table == "Logical_DP_Group":
                continue  # an unreferenced group is garbage-collected by the server
            known: Collection[str] = cache.flows if table == "Logical_Flow" else cache.lbs
            for u in sorted(us):
                if u not in known:  # (else: the echo of our own insert)
                    plan.ops.append({"op": "delete", "table": table, "where": _where(u)})
                    plan.deleted += 1
                    self.stats.foreign_inserts += 1

    def write_back_modified(self, live_dps: Collection[str]) -> None:
        """Rows of ours that someone modified: write back what the cache holds."""
        cache, plan, st, mods = self.cache, self.plan, self.stats, self.seen.mods
        for u, new in mods["Logical_Flow"].items():
            r = cache.flows.get(u)
            if r is not None and not _flow_equal(r, new):
                plan.ops.append({"op": "update", "table": "Logical_Flow", "where": _where(u), "row": _flow_row(r)})
                plan.updated += 1
                st.foreign_modifies += 1
        for g, new in mods["Logical_DP_Group"].items():
            cur = cache.groups.get(g)
            got = _uuid_set(new.get("datapaths"))
            if cur is None or got == cur:
                continue
            if got < cur and not (cur - got) & frozenset(live_dps):
                cache.set_group(g, got)  # the server dropped datapaths that were deleted
                continue
            plan.ops.append({"op": "update", "table": "Logical_DP_Group", "where": _where(g),
                             "row": {"datapaths": ["set", [["uuid", d] for d in sorted(cur)]]}})
            plan.updated += 1
            st.foreign_modifies += 1
        for u, new in mods["Load_Balancer"].items():
            lb = cache.lbs.get(u)
            if lb is not None and not _lb_equal(lb, new, cache.split_lbs):
                row = dict(lb.cols)
                row["datapath_group"] = ["uuid", lb.group] if lb.group and not cache.split_lbs else ["set", []]
                row["datapaths"] = ["set", []]
                if cache.split_lbs:
                    row["ls_datapath_group"] = ["set", []]
                    row[lb.group_col] = ["uuid", lb.group] if lb.group else ["set", []]
                    row["lr_datapath_group"] = ["uuid", lb.lr_group] if lb.lr_group else ["set", []]
                plan.ops.append({"op": "update", "table": "Load_Balancer", "where": _where(u), "row": row})
                plan.updated += 1
                st.foreign_modifies += 1

    def plan_reinserts(self) -> None:
        """The rows taken out of the cache by :meth:`reinsert_deleted`, planned as our own writes."""
        if self.want or self.want_lbs:
            self.plan.extend(plan_sync(self.cache, self.want, self.want_lbs or None, set(self.want),
                                       lb_scope=set(self.want_lbs)))


def _flow_row(r: FlowRow) -> dict[str, Any]:
    k = r.key
    row: dict[str, Any] = {
        "pipeline": k[1], "table_id": k[2], "priority": k[3], "match": k[4], "actions": k[5],
        "controller_meter": k[6] if k[6] else ["set", []], "external_ids": _omap(r.ext), "tags": _omap(r.tags),
        "logical_datapath": ["uuid", r.dp] if r.group is None and r.dp else ["set", []],
        "logical_dp_group": ["uuid", r.group] if r.group is not None else ["set", []],
    }
    return row


def _changed_lbs(lflow: Any, nd: Any, nb_lbs: Any, dp_uuid: Mapping[str, str]
                 ) -> tuple[dict[str, WantLb] | None, set[str] | None]:
    """The SB Load_Balancer rows an incremental plan compares: those of the load balancers
    the handlers marked (``LbIndex.sb_dirty``).  (None, None): none."""
    fctx = lflow.fctx
    if fctx is None or not fctx.lbs.sb_dirty:
        return None, None
    idx = fctx.lbs
    want: dict[str, WantLb] = {}
    # Load balancers on the same datapaths (a cluster-wide group's) share their SB datapath sets
    # (switches; routers too with lb_split_datapath_groups): resolved once, not per load balancer.
    lists: dict[frozenset[str], tuple[frozenset[str], frozenset[str]]] = {}
    split = fctx.profile.has("lb_split_datapath_groups")
    for key in idx.sb_dirty:
        dps = frozenset(idx.lb_dps.get(key, ()))
        got = lists.get(dps)
        if got is None:
            ls = frozenset(dp_uuid[d.key] for d in idx.switches_of(key, nd) if d.key in dp_uuid)
            lr = (frozenset(dp_uuid[d.key] for d in idx.routers_of(key, nd) if d.key in dp_uuid)
                  if split else frozenset())
            got = lists[dps] = (ls, lr)
        w = desired_sb_lb_on(nb_lbs.get(uuid.UUID(key)), got[0], got[1], fctx.profile)
        if w is not None:
            want[key] = w
    scope = set(idx.sb_dirty)
    idx.sb_dirty.clear()
    return want, scope
