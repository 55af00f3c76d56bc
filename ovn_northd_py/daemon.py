"""The daemon's main loop, on asyncio (uvloop).

One iteration: let both IDLs process what the servers sent; finish transactions
in flight; when we hold the SB lock, both databases are in sync and something
changed, run the engine, which writes into one SB and one NB transaction; then
sleep until a socket is readable, a timer fires or a stop/recompute is asked.

Write ordering: one engine run is ONE SB transaction.  The IDL changes (address
sets, port groups, ports, datapaths, ...) and the flow writer's plan for
Logical_Flow / Logical_DP_Group / Load_Balancer (plus ``Ctx.sb_extra_ops`` and
SB_Global.nb_cfg) travel in the same ``transact``, so no SB state ever has a flow
naming a row the run deletes or has yet to insert, and ``nb_cfg`` is written only
with what it covers.  At most one SB write is in flight; foreign edits of the raw
tables, reported by the flow writer's monitor, are repaired between writes.  A
failed write committed nothing: the next run recomputes, after the back-off of
``txn_failures.TxnFailures``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ovs.db.idl
import ovs.jsonrpc

from . import log as logmod
from .engine.engine import EngineCtx as Ctx
from .engine.engine import Node
from .engine.graph import Graph, build_graph
from .engine.passthrough import PassCtx
from .engine.passthrough import plan as plan_passthrough
from .memtrim import BulkGc, MemoryTrimmer, trim_timeout_ms
from .metrics import Metrics
from .ovsdb import fastrow
from .ovsdb.aiopoll import AsyncPoller, FdWatch, WakeEvent
from .ovsdb.connection import DbConnection, column_touched
from .ovsdb.raw import RawRequest, RawSb, is_reply_to, transact_committed, update_sets
from .ovsdb.schema_check import SchemaMismatch, fetch_server_schema
from .release import DEFAULT_RELEASE, Release, select_release
from .sync.aging import Aging
from .sync.aging import inputs_changed as aging_inputs_changed
from .sync.datapaths import LazyDpUuids
from .sync.flow_writer import FlowWriter
from .sync.foreign import cleanup_ops, deleted_rows, referential_integrity_rows, referrer_cleanup_ops
from .sync.globals import (
    CfgReport,
    nb_global_row,
    nb_monitored_columns,
    northd_probe_interval,
    sb_counters,
    sb_global_row,
)
from .sync.lflows import FlowCache, Plan
from .txn_failures import TxnFailures

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
# The default release's schemas; the daemon uses those of the release it serves (self.release).
NB_SCHEMA = DEFAULT_RELEASE.nb_schema
SB_SCHEMA = DEFAULT_RELEASE.sb_schema
LOCK_NAME = "ovn_northd"
# Engine nodes that write (SB and NB): skipped by a hot standby, recomputed when it takes over.
WRITER_NODES = frozenset({"sb_sync", "nb_sync"})

# SB tables we read (None: all columns); Logical_Flow & co. are handled by the flow writer.
SB_TABLES: dict[str, Any] = {**dict.fromkeys((
    "SB_Global", "Chassis", "Encap", "Chassis_Private", "Datapath_Binding", "Port_Binding",
    "Multicast_Group", "HA_Chassis_Group", "HA_Chassis", "IP_Multicast", "Address_Set", "RBAC_Role",
    "RBAC_Permission", "DHCP_Options", "DHCPv6_Options", "DNS", "Port_Group", "Meter", "Meter_Band",
    "Static_MAC_Binding", "Chassis_Template_Var", "Mirror", "Service_Monitor", "BFD",
)),
    # ovn-controller's learned MACs and neighbours: what tells a stale (sync/fdb.py) or aged row (sync/aging.py)
    "FDB": ("dp_key", "port_key", "timestamp"), "MAC_Binding": ("datapath", "timestamp", "ip"),
    # Tables and columns of newer releases (ACL_ID, ECMP_Nexthop: 25.03 on): DbConnection registers
    # only what the connected schema has.
    "ACL_ID": None, "ECMP_Nexthop": None, "Advertised_Route": None, "Learned_Route": None,
    "Advertised_MAC_Binding": None}

Txn = ovs.db.idl.Transaction
# The SB tables whose rows the flow node reads that a cold start's IDL part may write (the
# ACL ids of persist-established ACLs): while it writes any, the part is not sent before the
# flows are built (committing takes its inserts out of the IDL's tables, and its updates till
# they echo back).
_FLOWS_READ_WRITES = frozenset({"ACL_ID"})


def _writes_into(txn: Any, tables: frozenset[str]) -> bool:
    """Does the IDL transaction ``txn`` write a row of one of ``tables``?"""
    return any(r._table.name in tables for r in txn._txn_rows.values())


@dataclass(slots=True)
class _IdlPart:
    """An engine run's IDL transaction once closed (:meth:`Daemon._close_idl_part`): the
    Datapath_Binding rows it deletes, our datapaths' uuids, and whether it went alone."""

    dps: LazyDpUuids
    gone: frozenset[str] = frozenset()
    closed: bool = False
    alone: bool = False


@dataclass(slots=True)
class Options:
    nb_remote: str
    sb_remote: str
    log_format: str = "console"
    log_level: str = "info"
    log_file: str | None = None
    pidfile: str | None = None
    metrics_address: str | None = None
    probe_interval_ms: int | None = None
    check_incremental: int = 0  # shadow recompute every N incremental runs (0: off)
    exit_after_sync: bool = False  # for tooling: stop after the first settled run
    hot_standby: bool = True  # without the lock: keep model and flows current, write nothing
    passthrough: bool = True  # copy pass-through NB changes into SB before the engine runs (engine/passthrough.py)
    ovn_release: str | None = None  # --ovn-release: the profile to use (default: from the schema versions)


@dataclass(slots=True)
class LoopState:
    """What the loop remembers between iterations about the engine and the connections."""

    force_recompute: bool = True  # the next engine run recomputes every node
    runs: int = 0  # engine runs that wrote
    last_report: Any = None  # the last such run's engine report
    incremental_since_check: int = 0  # incremental runs since the last --check-incremental
    had_lock: bool = False  # whether we held the SB lock at the last iteration
    sb_connects_seen: int = 0  # SB (re)connections handled
    nb_connects_seen: int = 0  # NB (re)connections handled
    probe_applied: dict[str, int] = field(default_factory=dict)  # db -> probe interval (ms) we last set


# Once sb_cfg is written, the loop stands aside this long (s) before it reads on: the NB server
# and the clients waiting on sb_cfg (``ovn-nbctl --wait``) run on our CPU first, rather than
# after our processing of the write's echoes.  The kernel tends to put the NB server, woken by
# our write, on our CPU, and there it waited for the echoes' engine run (about 0.15 ms more from
# our write to nbctl's return, measured against the reference's tail).  Nothing is read, computed
# or written meanwhile (a recompute request waits for the rest of it); a stop ends it at once.
CFG_YIELD_S = 0.001


@dataclass(slots=True)
class WriteState:
    """One SB write at a time: the engine run's IDL transaction with its flow plan attached
    (``sb_txn`` + ``sb_plan``), or a plan that went alone (``flow_req`` + ``sb_plan``: a run with
    no IDL changes, or the repair of foreign changes); and when a failed write is retried."""

    sb_txn: Any = None
    nb_txn: Any = None
    sb_plan: Plan | None = None
    flow_req: RawRequest | None = None
    started: float = 0.0  # perf_counter() when the SB write went out
    pending_nb_cfg: int | None = None  # NB_Global.nb_cfg the write in flight covers
    carries_nb_cfg: bool = False  # the plan of the write in flight sets SB_Global.nb_cfg
    nb_cfg_op: int = 0  # (the index of that operation among the plan's; it sets pending_nb_cfg)
    # NB_Global nb_cfg_timestamp of the run that wrote nb_cfg into SB, when that run had nothing
    # else to write into NB: it goes with sb_cfg (:meth:`Daemon._report_sb_cfg`), one NB
    # transaction per change instead of two.
    nb_cfg_timestamp: int | None = None
    # The read of the raw tables' uuids after a write under a monitor without inserts.
    insert_check: RawRequest | None = None
    # The raw NB write of sb_cfg / hv_cfg in flight (:meth:`Daemon._write_sb_cfg`), and what
    # those counters hold in NB as far as our writes say.
    cfg_req: RawRequest | None = None
    cfg: CfgReport = field(default_factory=CfgReport)
    # A pass-through write in flight (:meth:`Daemon._pass_through`): no engine run till it is done.
    pass_req: RawRequest | None = None
    # monotonic(): the loop stands aside till then once sb_cfg is written (:data:`CFG_YIELD_S`).
    yield_until: float = 0.0
    retry_at: float = 0.0  # monotonic(): no engine run before (back-off after a failure)
    # After a referential-integrity failure: the deletions of referrers the retry adds.
    ri_retry_ops: list[dict[str, Any]] = field(default_factory=list)
    # MAC_Binding / FDB rows aged out (sync/aging.py), to delete in the next engine run's transaction.
    aging_ops: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class StandbyState:
    """Hot standby: while another northd holds the lock, the computing nodes run (no writes)."""

    warm: bool = False  # their state is current, so taking the lock recomputes only the writers
    takeover: bool = False  # the next run is a takeover from a warm standby
    # Once things are quiet (at ``verify_at``), a standby checks that its writer nodes would write
    # nothing; then (``writers_clean``) taking over needs no recompute at all.
    writers_clean: bool = False
    verify_at: float = 0.0


class Daemon:
    def __init__(self, opts: Options, metrics: Metrics | None = None) -> None:
        self.opts = opts
        self.log = logmod.get("ovn_northd_py")
        self.metrics = metrics or Metrics()
        self._rows_metric_tables: frozenset[str] = frozenset()
        self._loop_options_seen: Any = None  # the NB_Global options last applied (_apply_loop_options)
        self._loop_options_dirty = True  # NB_Global options may have changed since (_look_at_changes)
        self.warn = logmod.WarnOnce(self.log)
        self.release: Release = DEFAULT_RELEASE  # set by check_schemas from the servers' versions
        # Connections and what runs on them (set by connect()).
        self.nb: DbConnection | None = None
        self.sb: DbConnection | None = None
        self.graph: Graph | None = None
        self.raw: RawSb | None = None
        self.raw_nb: RawSb | None = None  # raw requests on the NB IDL's session (the cfg counters)
        # NB table -> (columns, hook) of the pass-through writes (:meth:`_pass_through`), from the graph.
        self._pass_hooks: dict[str, tuple[frozenset[str], Any]] = {}
        self.writer = FlowWriter()  # the raw tables' cache, their load, plans and repairs
        # The loop's state, by concern.
        self.state = LoopState()
        self.write = WriteState()
        self.standby = StandbyState()
        self.failures = TxnFailures(self.log, self.metrics)
        self.trimmer = MemoryTrimmer()  # NB_Global options:northd_trim_timeout
        self.aging = Aging()  # MAC_Binding / FDB aging: when to look again
        self._changes_seen: dict[str, tuple[list[Any], int]] = {}  # db -> (its tracked changes, how many read)
        # Signals, operator control (ovn_northd_py.control: pause/resume, a wake-up, per-iteration
        # hooks) and tooling (``settled``: the first sync committed).
        self.stop_event = WakeEvent()
        self.recompute_event = WakeEvent()
        self.wake_event = WakeEvent()
        self.settled = asyncio.Event()
        self.paused = False
        self.loop_hooks: list[Any] = []
        self.fd_watch = FdWatch()  # the main loop's sockets, registered from one turn to the next
        # The servers' release, asked again after every (re)connection (an upgrade converts the
        # databases to the next release's schemas): (connects seen, the task asking, its answer).
        self._release_conns: tuple[int, int] = (0, 0)
        self._release_check: asyncio.Future[Any] | None = None
        self._release_change: tuple[Release, dict[str, str]] | None = None
        self._direct_done: _DirectTurn | BaseException | None = None  # a turn run by _direct_turn

    @property
    def flow_cache(self) -> FlowCache:
        return self.writer.cache

    # ---- set-up ----
    async def server_versions(self) -> dict[str, str]:
        """The NB and SB schema versions the servers report (the first remote of each that answers;
        {} when none does)."""
        versions: dict[str, str] = {}
        for name, remote, path in (("nb", self.opts.nb_remote, NB_SCHEMA), ("sb", self.opts.sb_remote, SB_SCHEMA)):
            db = json.loads(path.read_text())["name"]
            for r in remote.split(","):
                with contextlib.suppress(TimeoutError, OSError, ValueError, ConnectionError):
                    versions[name] = (await fetch_server_schema(r.strip(), db))["version"]
                    break
        return versions if len(versions) == 2 else {}

    def _check_release_after_connect(self) -> None:
        """After a (re)connection to both databases, ask the servers their schema versions again:
        databases converted to another release's schemas (an upgrade of the central nodes) switch
        the daemon to that release's profile (:meth:`_switch_release`)."""
        assert self.nb is not None and self.sb is not None
        conns = (self.nb.connects, self.sb.connects)
        if conns == self._release_conns or not (self.nb.connected and self.sb.connected):
            return
        if self._release_check is not None and not self._release_check.done():
            return
        self._release_conns = conns
        self._release_check = asyncio.ensure_future(self._ask_release())

    async def _ask_release(self) -> None:
        """The servers' release, until it is one we have a profile for: while an upgrade converts
        NB and SB one after the other (or to a release we cannot serve), the daemon goes on with
        the profile it has, warns once per answer and asks again every 2 s."""
        warned: set[str] = set()
        while not self.stop_event.is_set():
            versions = await self.server_versions()
            if not versions:
                return
            try:
                chosen = select_release(versions["nb"], versions["sb"], self.opts.ovn_release)
            except SchemaMismatch as e:
                if str(e) not in warned:
                    warned.add(str(e))
                    self.log.warning("no profile for the databases' schemas: still serving the previous "
                                     "release, asking again", release=self.release.name, error=str(e))
                await asyncio.sleep(2.0)
                continue
            if chosen.name != self.release.name:
                self._release_change = (chosen, versions)
                self.wake_event.set()
            return

    def _switch_release(self, release: Release, versions: dict[str, str]) -> None:
        """Serve ``release`` from now on: new connections with its schemas, a new engine graph and
        a full recompute, as if the daemon had just started (the SB lock is asked for again)."""
        assert self.nb is not None and self.sb is not None
        self.log.warning("the databases are another OVN release's now: switching profile",
                         old=self.release.name, new=release.name, nb_schema=versions["nb"],
                         sb_schema=versions["sb"])
        self.nb.close()
        self.sb.close()
        self.metrics.release_info.labels(release=self.release.name).set(0)
        self.writer = FlowWriter()
        self.state = LoopState()
        self.write = WriteState()
        self.standby = StandbyState()
        self.aging = Aging()
        self._release_conns = (0, 0)
        self.use_release(release, versions)
        self.connect()

    async def check_schemas(self) -> None:
        versions: dict[str, str] = {}
        for name, remote, path in (("nb", self.opts.nb_remote, NB_SCHEMA), ("sb", self.opts.sb_remote, SB_SCHEMA)):
            ours = json.loads(path.read_text())
            delay = 0.1
            while not self.stop_event.is_set():
                errors: list[str] = []
                for r in remote.split(","):
                    try:
                        theirs = await fetch_server_schema(r.strip(), ours["name"])
                        versions[name] = theirs["version"]
                        errors = []
                        break
                    except SchemaMismatch:
                        raise
                    except (TimeoutError, OSError, ValueError, ConnectionError) as e:
                        errors.append(f"{r}: {e}")
                if not errors:
                    break
                self.log.info("waiting for database", db=name, remote=remote, errors=errors)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        if len(versions) == 2:
            self.use_release(select_release(versions["nb"], versions["sb"], self.opts.ovn_release), versions)

    def use_release(self, release: Release, versions: dict[str, str]) -> None:
        self.release = release
        # Load_Balancer rows of this release name ls/lr datapath groups (columns of its schema).
        self.writer.cache.split_lbs = release.profile.has("lb_split_datapath_groups")
        self.writer.profile = release.profile
        self.metrics.release_info.labels(release=release.name).set(1)
        self.log.info("ovn release profile", release=release.name, nb_schema=versions["nb"],
                      sb_schema=versions["sb"], chosen_by="--ovn-release" if self.opts.ovn_release else "schemas")

    def connect(self) -> None:
        nb_schema, sb_schema = self.release.nb_schema, self.release.sb_schema
        nb_schema_tables = json.loads(nb_schema.read_text())["tables"]
        nb_tables: dict[str, Any] = dict.fromkeys(nb_schema_tables)
        nb_tables["NB_Global"] = nb_monitored_columns(nb_schema_tables["NB_Global"]["columns"])
        self.nb = DbConnection("nb", self.opts.nb_remote, nb_schema, nb_tables,
                               probe_interval_ms=self.opts.probe_interval_ms)
        self.sb = DbConnection("sb", self.opts.sb_remote, sb_schema, SB_TABLES, lock_name=LOCK_NAME,
                               probe_interval_ms=self.opts.probe_interval_ms)
        self.graph = build_graph(self.nb, self.sb)
        self._pass_hooks = self.graph.features.passthrough_hooks()
        self.graph.engine.on_node = self.metrics.nodes.add
        self.raw = RawSb(self.sb.idl, "OVN_Southbound", LOCK_NAME)
        self.raw_nb = RawSb(self.nb.idl, "OVN_Northbound", None)
        self._loop_options_seen = None
        self._loop_options_dirty = True
        self._wire_conn_metrics()

    def _wire_conn_metrics(self) -> None:
        """The connections' gauges (connected, lock, probe interval, SB row counts) read their
        values when scraped, from whichever connections the daemon has then: nothing to update
        on each loop step."""
        m = self.metrics
        for name in ("nb", "sb"):
            m.db_connected.labels(db=name).set_function(functools.partial(self._conn_gauge, name, "connected"))
            m.probe_interval.labels(db=name).set_function(functools.partial(self._conn_gauge, name, "probe"))
        m.lock_held.set_function(functools.partial(self._conn_gauge, "sb", "lock"))
        m.lock_contended.set_function(functools.partial(self._conn_gauge, "sb", "contended"))
        assert self.sb is not None
        tables = frozenset(self.sb.idl.tables)  # (the connected schema's)
        for t in self._rows_metric_tables - tables:
            m.sb_rows.remove(t)
        for t in tables:
            m.sb_rows.labels(table=t).set_function(functools.partial(self._sb_rows_gauge, t))
        self._rows_metric_tables = tables

    def _conn_gauge(self, db: str, what: str) -> float:
        c = self.nb if db == "nb" else self.sb
        if c is None:
            return 0.0
        if what == "probe":
            return c.probe_interval / 1000.0
        up = c.connected if what == "connected" else c.has_lock if what == "lock" else c.lock_contended
        return 1.0 if up else 0.0

    def _sb_rows_gauge(self, table: str) -> float:
        sb = self.sb
        return float(len(sb.rows(table))) if sb is not None and table in sb.idl.tables else 0.0

    # ---- loop ----
    async def run(self) -> None:
        await self.check_schemas()
        if self.stop_event.is_set():
            return
        self.connect()
        assert self.nb is not None and self.sb is not None
        self.log.info("started", nb=self.opts.nb_remote, sb=self.opts.sb_remote, lock=LOCK_NAME)
        # A socket that becomes ready runs the next turn at once, from the event loop's callback
        # (:meth:`_direct_turn`, only while this task blocks); the task then blocks on what it prepared.
        self.fd_watch.direct = self._direct_turn
        try:
            poller = self._turn()
            while poller is not None:
                await poller.block(self.fd_watch)
                done, self._direct_done = self._direct_done, None
                if done is None:
                    poller = self._turn()
                elif isinstance(done, BaseException):
                    raise done
                else:
                    poller = done.poller
        finally:
            self.fd_watch.direct = None
            self.fd_watch.clear(asyncio.get_running_loop())  # (before the sockets close)
            if self._release_check is not None:
                self._release_check.cancel()
            self.nb.close()
            self.sb.close()
            self.log.info("stopped")

    def _turn(self) -> AsyncPoller | None:
        """One turn of the main loop, up to what it waits on next: None to stop."""
        assert self.nb is not None and self.sb is not None
        if self.stop_event.is_set():
            return None
        t0 = time.perf_counter()
        self.wake_event.clear()
        if self._release_change is not None:
            change, self._release_change = self._release_change, None
            self._switch_release(*change)
        with _gc_paused(self.trimmer.gc):  # (the IDLs' parsing and commits allocate as much as the engine)
            self.step()
        self._check_release_after_connect()
        self.metrics.loop_seconds.observe(time.perf_counter() - t0)
        for hook in self.loop_hooks:
            hook()
        if self.opts.exit_after_sync and self.settled.is_set():
            return None
        poller = AsyncPoller()
        poller.wake_on(self.stop_event)
        poller.wake_on(self.recompute_event)
        poller.wake_on(self.wake_event)
        if self._standing_aside():
            poller.timer_wait((self.write.yield_until - time.monotonic()) * 1000)
            return poller
        self.nb.wait(poller)
        self.sb.wait(poller)
        self._trim_memory(poller)
        self._aging_wait(poller)
        for txn in (self.write.sb_txn, self.write.nb_txn):
            if txn is not None:
                txn.wait(poller)
        if self._ready_for_more():
            poller.immediate_wake()
        elif self.write.retry_at > time.monotonic():
            poller.timer_wait((self.write.retry_at - time.monotonic()) * 1000)
        elif self.standby.verify_at:
            poller.timer_wait(max(0.0, self.standby.verify_at - time.monotonic()) * 1000)
        return poller

    def _standing_aside(self) -> bool:
        """Has sb_cfg just gone out (:data:`CFG_YIELD_S`)?"""
        return self.write.yield_until > time.monotonic()

    def _direct_turn(self) -> AsyncPoller | None:
        """The next turn, run by the event loop's callback for a socket that became ready
        (:attr:`FdWatch.direct`), rather than after this task has been resumed: the wake-up of an
        NB change or an SB reply reaches the IDL that much sooner.  What it returns (or raises) is
        handed to :meth:`run`, which blocks on it; the task resumes after the work is done."""
        try:
            poller = self._turn()
        except BaseException as e:  # (re-raised by run(), as if the turn had run there)
            self._direct_done = e
            return None
        self._direct_done = _DirectTurn(poller)
        return poller

    def step(self) -> None:
        nb, sb = self.nb, self.sb
        assert nb is not None and sb is not None and self.graph is not None and self.raw is not None
        self._report_sb_cfg_ahead()
        if self._standing_aside():
            return  # (sb_cfg went out: what was read comes next turn, CFG_YIELD_S)
        self._pass_through()
        nb_changed = nb.run()
        sb_changed = sb.run()
        self._poll_txns()  # (first: a committed nb_cfg is reported to NB_Global at once)
        if nb_changed or sb_changed:
            self._look_at_changes()
        self._apply_loop_options()
        self._poll_flows()
        if sb.connects != self.state.sb_connects_seen:
            # A (re)connection: requests in flight and our monitor went with the old connection, and
            # the writer's cache may be stale.
            self.state.sb_connects_seen = sb.connects
            self.raw.tap.forget()
            self.writer.reset()
        if nb.connects != self.state.nb_connects_seen and self.raw_nb is not None:
            self.state.nb_connects_seen = nb.connects
            self.raw_nb.tap.forget()
            self.write.cfg_req = None  # (gone with the connection; a resync writes sb_cfg again)
            self.write.cfg.forget()

        if sb.has_lock != self.state.had_lock:
            self.log.info("sb lock", held=sb.has_lock, lock=LOCK_NAME, connected=sb.connected)
            self.state.had_lock = sb.has_lock
            if sb.has_lock and self.standby.warm and self.standby.writers_clean and not self.state.force_recompute:
                pass  # everything is current and SB holds what we would write: just go on
            elif sb.has_lock and self.standby.warm and not self.state.force_recompute:
                self.standby.takeover = True  # the model is current: recompute only what writes
            elif sb.has_lock:
                self.state.force_recompute = True
            if sb.has_lock and self.writer.following:
                # What the last active wrote is the truth we take over.  Unless the writers were
                # checked clean, SB may lack rows we would write (e.g. the Datapath_Binding of a
                # switch added while nobody wrote): flows on such datapaths could not be compared
                # while standing by, so compare every flow now.
                self.writer.take_over(self.raw.tap.updates, compare_all=not self.standby.writers_clean)
                self.raw.tap.updates = []
            elif not sb.has_lock:
                # Someone else writes now: our view of the raw tables goes stale (a hot standby
                # reads them again, following the new active's writes).
                self.raw.cancel_monitor()
                self.writer.reset()
            self.standby.warm = self.standby.writers_clean = False
            self.standby.verify_at = 0.0
        if self.recompute_event.is_set():
            self.recompute_event.clear()
            self.state.force_recompute = True
            # A forced recompute also re-reads the raw tables.
            if not self._busy():
                self.writer.reset()
            self.log.info("recompute requested")
        if self._paused_gate():
            return
        if not (nb.synced and sb.synced):
            return
        if not sb.has_lock:
            self._standby_step(nb_changed or sb_changed)
            return
        self._maybe_check()
        if self._busy():
            return
        if not self.writer.loaded:
            self.writer.start_load(self.raw)
            return
        if self.raw.tap.updates and self._start_repairs():
            return
        pending = nb.idl.changes or sb.idl.changes or nb.resynced or sb.resynced
        if self.aging.due(time.time() * 1000):
            # (A rescan that finds nothing to delete runs no engine: the loop stays quiet.)
            self.write.aging_ops += self._aging_ops()
        if not (pending or nb_changed or sb_changed or self.state.force_recompute or self.writer.full_sync_needed
                or self.write.aging_ops):
            return
        if time.monotonic() < self.write.retry_at:
            return
        if nb.resynced or sb.resynced:
            self.state.force_recompute = True
        self.run_engine()

    def _standby_step(self, changed: bool) -> None:
        """Hot standby: run the computing nodes on what changed, write nothing."""
        assert self.nb is not None and self.sb is not None and self.graph is not None
        assert self.raw is not None
        if not self.opts.hot_standby or self._busy():
            return
        if not self.writer.loaded:
            self.writer.start_load(self.raw, follow=True)
            return
        if self.raw.tap.updates:
            self.writer.follow(self.raw.tap.updates)
            self.raw.tap.updates = []
        pending = self.nb.idl.changes or self.sb.idl.changes or self.nb.resynced or self.sb.resynced
        if not (pending or changed or self.state.force_recompute or not self.standby.warm):
            if self.standby.verify_at and time.monotonic() >= self.standby.verify_at:
                self._verify_writers()
            return
        ctx = self._engine_ctx()
        force = self.state.force_recompute or not self.standby.warm or self.nb.resynced or self.sb.resynced
        try:
            with _gc_paused():
                rep = self.graph.engine.run(ctx, force=force, skip=WRITER_NODES)
                self.writer.track(self.graph.lflow, self.graph.northd.data, self.nb.rows("Load_Balancer"),
                                  self._dp_uuid())
        except Exception:
            self.log.exception("standby engine run failed; will recompute")
            self.state.force_recompute = True
            self.standby.warm = False
            return
        finally:
            ctx.sb_txn.abort()
            ctx.nb_txn.abort()
        self.state.force_recompute = False
        self.standby.warm = True
        self.standby.writers_clean = False
        self.standby.verify_at = time.monotonic() + 0.5
        self.metrics.runs.labels(kind="standby-recompute" if force else "standby-incremental").inc()
        self.log.debug("standby engine run", recomputed=rep.recomputed, incremental=rep.incremental,
                       ms=round(rep.seconds * 1000, 2))

    def _verify_writers(self) -> None:
        """Quiet standby: would the writer nodes, recomputed, write anything?  (Never sent.)"""
        assert self.nb is not None and self.sb is not None and self.graph is not None
        self.standby.verify_at = 0.0
        ctx = self._engine_ctx()
        try:
            with _gc_paused():
                self.graph.engine.run(ctx, recompute=WRITER_NODES)
            self.standby.writers_clean = not (ctx.sb_txn._txn_rows or ctx.nb_txn._txn_rows or ctx.sb_extra_ops)
        except Exception:
            self.log.exception("standby check of the writers failed")
            self.standby.writers_clean = False
        finally:
            ctx.sb_txn.abort()
            ctx.nb_txn.abort()
        self.log.debug("standby writers checked", clean=self.standby.writers_clean)

    def _engine_ctx(self) -> Ctx:
        """The context of one engine run, with fresh SB and NB transactions."""
        assert self.nb is not None and self.sb is not None
        ctx = Ctx(self.nb, self.sb, self.warn, profile=self.release.profile)
        ctx.sb_txn = Txn(self.sb.idl)
        ctx.nb_txn = Txn(self.nb.idl)
        return ctx

    def _busy(self) -> bool:
        """A write or the cache load is in flight."""
        return (self.write.sb_txn is not None or self.write.nb_txn is not None or self.write.flow_req is not None
                or self.write.cfg_req is not None or self.write.pass_req is not None or self.writer.loading)

    # ---- pause / resume (unixctl `pause`, `resume`, --dry-run) ----
    def pause(self) -> None:
        """As ovn-northd paused: the IDLs follow NB and SB, nothing is computed or written.  Nobody may
        write SB meanwhile, so the hot-standby state is not trusted on resume: a full recompute."""
        self.paused = True
        self.standby.warm = False
        self.wake_event.set()

    def resume(self) -> None:
        self.paused = False
        self.wake_event.set()

    def status(self) -> str:
        """As ovn-northd's `status` command: paused, active (holds the SB lock) or standby."""
        if self.paused:
            return "paused"
        return "active" if self.sb is not None and self.sb.has_lock else "standby"

    def _paused_gate(self) -> bool:
        """While paused, compute and write nothing and give up the SB lock (as ovn-northd does, so
        another instance takes over); on resume, ask for the lock again (then a full recompute).
        The lock changes once no IDL transaction is in flight.  True: skip this run."""
        assert self.sb is not None
        idl = self.sb.idl
        idle = not self._busy() and not idl._outstanding_txns and idl.txn is None
        if self.paused:
            if idl.lock_name and idle:
                idl.set_lock(None)
            return True
        if idl.lock_name is None and idle:
            idl.set_lock(LOCK_NAME)
        return False

    def _maybe_check(self) -> None:
        """--check-incremental: once SB is written, compare incremental state with a recompute."""
        n = self.opts.check_incremental
        if not n or self.state.incremental_since_check < n or self.graph is None:
            return
        if self._busy() or not self.writer.loaded or self.writer.full_sync_needed:
            return
        if self.nb is None or self.nb.idl.changes or self.sb is None or self.sb.idl.changes:
            return
        from .engine.check import check_consistency

        self.state.incremental_since_check = 0
        self.metrics.incremental_checks.inc()
        res = check_consistency(self.graph, Ctx(self.nb, self.sb, self.warn, profile=self.release.profile),
                                self.flow_cache)
        if res.ok:
            self.log.debug("incremental check passed")
            return
        self.metrics.incremental_mismatches.inc()
        self.log.warning("incremental state differs from a full recompute; repairing by recompute",
                         differences=res.differences[:20])
        self.state.force_recompute = True

    def _ready_for_more(self) -> bool:
        """Work we can do now without waiting for the network (else the poller would sleep on it).
        Nothing runs before both databases are in sync (:meth:`step`): a recompute pending while NB
        is down must wait on the connections, not wake the loop at once again."""
        sb, nb = self.sb, self.nb
        if sb is None or not sb.has_lock or not sb.synced or self.raw is None or nb is None or not nb.synced:
            return False
        if self._busy():
            return False
        if not self.writer.loaded or self.raw.tap.updates:
            return True
        if time.monotonic() < self.write.retry_at:
            return False
        check_due = bool(self.opts.check_incremental) and self.state.incremental_since_check >= self.opts.check_incremental
        return self.writer.full_sync_needed or self.state.force_recompute or check_due

    def run_engine(self) -> None:
        assert self.nb is not None and self.sb is not None and self.graph is not None and self.raw is not None
        ctx = self._engine_ctx()
        force = self.state.force_recompute
        self.state.force_recompute = False
        # Taking over from a warm standby: the writers compare everything with what SB holds.
        recompute = WRITER_NODES if self.standby.takeover and not force else frozenset()
        self.standby.takeover = False
        t0 = time.perf_counter()
        started_ms = int(time.time() * 1000)  # NB_Global nb_cfg_timestamp, if this run writes nb_cfg
        part = _IdlPart(self._dp_uuid())
        lflow = self.graph.lflow

        def before(node: Node) -> None:
            # A cold start sends the IDL's part before the flows are built (the server commits
            # it while we build them): the flow node writes no IDL row, and reads none the IDL
            # part writes but ACL_ID rows (:data:`_FLOWS_READ_WRITES`).
            if node is lflow and self._idl_part_may_go(ctx) and not _writes_into(ctx.sb_txn, _FLOWS_READ_WRITES):
                self._close_idl_part(ctx, part)

        try:
            with _gc_paused():
                rep = self.graph.engine.run(ctx, force=force, recompute=recompute, before=before)
                if not part.closed:
                    self._close_idl_part(ctx, part)
                plan = self._plan_flows(part.gone, started_ms, part.dps, after_idl_part=part.alone)
        except Exception:
            self.log.exception("engine run failed; will recompute")
            if part.alone:  # (the IDL's part is on its way: no other run before it completes)
                self.write.sb_txn = ctx.sb_txn
            else:
                ctx.sb_txn.abort()
            ctx.nb_txn.abort()
            self.state.force_recompute = True
            self.writer.failed()
            self.write.retry_at = time.monotonic() + 1.0  # don't spin on a persistent failure
            return
        computed = time.perf_counter() - t0
        self.state.runs += 1
        self.state.last_report = rep
        self.write.ri_retry_ops = []
        self.write.aging_ops = []
        # One run, one SB transaction: the flow plan and the extra operations ride on the IDL's
        # (but for the first write into an SB without flows: :meth:`_send_idl_part_first`).
        ops = plan.ops + ctx.sb_extra_ops
        self.write.sb_plan = plan
        self.write.started = time.perf_counter()
        self.write.sb_txn = ctx.sb_txn
        if part.alone:
            if ops:
                self.writer.quiet_inserts(self.raw)
                self.write.flow_req = self.raw.send(ops)
                if self.write.flow_req is None:
                    self.write.sb_plan = None
                    self._write_failed("flow", "not connected", None)
                    self._watch_inserts_again()
        else:
            self.raw.tap.attach_ops = ops or None
            self.sb.expect_inserts(ctx.sb_txn)  # (their echo is recognised as ours: RowChange.own)
        self.write.nb_txn = ctx.nb_txn
        self._poll_txns()
        # The server may have executed the write during our send (the kernel tends to run it on
        # our CPU as soon as the request is written): its reply, if it is there, reports sb_cfg
        # before the bookkeeping below and a turn of the event loop.
        self._report_sb_cfg_ahead()
        if not self.write.carries_nb_cfg:
            # (Else the write's commit reports them: _report_sb_cfg.)  hv_cfg after Chassis_Private
            # changed, sb_cfg after a (re)connection.
            self._write_sb_cfg()
        # (The bookkeeping once the transaction is on its way: ``--wait=sb`` waits on it.)
        self.metrics.compute_seconds.observe(computed)
        self.metrics.runs.labels(kind="recompute" if force else "incremental").inc()
        if not force and rep.incremental and not rep.recomputed:
            self.state.incremental_since_check += 1
        self.log.debug("engine run", recomputed=rep.recomputed, incremental=rep.incremental,
                       unhandled=rep.unhandled, ms=round(rep.seconds * 1000, 2), dp_scan=part.dps.scanned)
        self.trimmer.active()
        if self.warn.count:
            self.metrics.bad_rows.labels(kind="any").inc(self.warn.count)
            self.warn.count = 0
        if ctx.stats.total:
            self.log.debug("sb changes", inserted=ctx.stats.inserted, updated=ctx.stats.updated,
                           deleted=ctx.stats.deleted)

    def _aging_ops(self) -> list[dict[str, Any]]:
        """The MAC_Binding / FDB rows aged out by now (sync/aging.py), to delete in this run's transaction."""
        assert self.nb is not None and self.sb is not None and self.graph is not None
        now = time.time() * 1000  # (the caller asked aging.due first)
        nbg = nb_global_row(self.nb)
        before = dict(self.aging.deleted)
        profile = self.release.profile
        ops = self.aging.run(self.sb, self.graph.northd.data, self._dp_uuid(), nbg.options if nbg is not None else {},
                             now, cidrs=profile.has("mac_binding_age_cidrs"), fdb=profile.has("fdb_aging"))
        for table, n in self.aging.deleted.items():
            if n > before.get(table, 0):
                self.metrics.aged_rows.labels(table=table).inc(n - before.get(table, 0))
                self.log.info("aged out", table=table, rows=n - before.get(table, 0))
        return ops

    def _look_at_changes(self) -> None:
        """What the changes the IDLs tracked since the last look touch, for the loop's own concerns
        (a resync: anything may have): what aging reads, and NB_Global's options
        (:meth:`_apply_loop_options`).  Each tracked list is read once (``_changes_seen``: up to where)."""
        aging = False
        for conn in (self.nb, self.sb):
            assert conn is not None
            changes = conn.idl.changes
            seen = self._changes_seen.get(conn.name)
            start = seen[1] if seen is not None and seen[0] is changes else 0
            self._changes_seen[conn.name] = (changes, len(changes))
            aging = aging or conn.resynced or aging_inputs_changed(changes, start)
            if conn is self.nb and (conn.resynced or column_touched(changes, "NB_Global", "options", start)):
                self._loop_options_dirty = True
        if aging:
            self.aging.changed()

    def _aging_wait(self, poller: AsyncPoller) -> None:
        """Wake the loop when aging is due: only when the next step can run the engine (the active
        instance, both databases in sync, nothing in flight, not paused, no back-off); anything else
        that makes that true wakes the loop itself, so a due aging never spins it."""
        nb, sb = self.nb, self.sb
        if (nb is None or sb is None or not sb.has_lock or not (nb.synced and sb.synced) or self.paused
                or self._busy() or time.monotonic() < self.write.retry_at):
            return
        now = time.time() * 1000
        at = self.aging.wake_at(now)
        if at is not None:
            poller.timer_wait(at - now)

    def _close_idl_part(self, ctx: Ctx, part: _IdlPart) -> None:
        """What goes with the run's IDL transaction, read from it once every node that writes it
        has run (and before it may be committed): the deletes of others' rows (MAC_Binding, FDB,
        IGMP_Group) naming the datapaths and ports it deletes, the retried and aged-out deletes,
        the NB nb_cfg this run covers, the Datapath_Binding rows it deletes and our datapaths'
        uuids (``part.dps``); then, on a cold start, the transaction sent alone
        (:meth:`_send_idl_part_first`, ``part.alone``)."""
        assert self.nb is not None and self.graph is not None
        part.closed = True
        ctx.sb_extra_ops += cleanup_ops(ctx.sb_txn, self.sb, self.graph.northd.data)
        ctx.sb_extra_ops += self.write.ri_retry_ops
        ctx.sb_extra_ops += self.write.aging_ops
        nbg = nb_global_row(self.nb)
        self.write.pending_nb_cfg = nbg.nb_cfg if nbg is not None else None
        # Every flow, group and load balancer on a deleted datapath must go in this same
        # transaction (the writer checks its plan covers them, else compares them all).
        part.gone = frozenset(str(r.uuid) for r in deleted_rows(ctx.sb_txn, "Datapath_Binding")) \
            if ctx.stats.deleted.get("Datapath_Binding") else frozenset()
        part.alone = self._send_idl_part_first(ctx, part)

    def _idl_part_may_go(self, ctx: Ctx) -> bool:
        """May this run's IDL changes go in a transaction of their own (:meth:`_send_idl_part_first`)?"""
        return self.writer.full_sync_needed and self.writer.holds_nothing and bool(ctx.sb_txn._txn_rows)

    def _send_idl_part_first(self, ctx: Ctx, part: _IdlPart) -> bool:
        """The first write into an SB that holds none of our flows, datapath groups or load
        balancers (a cold start): the run's IDL changes (datapaths, port bindings, multicast and
        port groups, address sets, ...) are sent now, in a transaction of their own, and the flow
        plan follows as a second one.  Sent before the flow node runs (:meth:`run_engine`), the
        server executes the first while we build, plan and encode the flows, and we read its
        echo while the server executes the second.  True if the first went out.

        Only then is it safe: until the second commits, SB holds datapaths without a single flow
        (every packet dropped, as before any northd wrote), and no flow can name a row the first
        did not commit (the server refuses the second: both are retried).  Anywhere else a run
        stays one transaction.  Our datapaths' uuids (``part.dps``) are read before the commit,
        which takes the IDL's uncommitted inserts out of its tables; any other run reads them
        only if its plan needs them (a scan of every Datapath_Binding, ms at 100 nodes)."""
        if not self._idl_part_may_go(ctx):
            return False
        len(part.dps)  # (read now)
        assert self.sb is not None
        self.sb.expect_inserts(ctx.sb_txn)
        if ctx.sb_txn.commit() != Txn.INCOMPLETE:
            return False
        assert self.raw is not None
        self.raw.flush(2.0)  # (all of it to the server now, not after the plan)
        return True

    def _plan_flows(self, gone_dps: frozenset[str], started_ms: int, dps: LazyDpUuids,
                    after_idl_part: bool = False) -> Plan:
        """This run's plan for the raw tables, plus SB_Global.nb_cfg (written with them, so
        ``--wait=sb`` returns only once what this run wrote has committed).  As the reference,
        copying nb_cfg stamps NB_Global nb_cfg_timestamp with the run's start (``started_ms``;
        ovn-nb(5), ovn-nbctl --print-wait-time's "ovn-northd delay before processing"), written
        with sb_cfg once SB has committed (the reference writes it at once, in a transaction of
        its own; the value is the same, and nbctl reads it after its wait).
        ``after_idl_part``: the plan goes after the run's IDL transaction, already sent
        (:meth:`_send_idl_part_first`)."""
        assert self.sb is not None and self.nb is not None and self.graph is not None
        lflow = self.graph.lflow
        plan, nwant = self.writer.plan(lflow, self.graph.northd.data, self.nb.rows("Load_Balancer"), dps, gone_dps)
        self.metrics.lflows.set(nwant if nwant is not None else len(lflow.table))
        self.metrics.flow_plans.labels(kind="incremental" if nwant is None else "full").inc()
        sbg = sb_global_row(self.sb)
        pending = self.write.pending_nb_cfg
        where: list[Any] | None = None
        if sbg is not None and sbg._data is not None and pending is not None and sbg.nb_cfg != pending:
            where = [["_uuid", "==", ["uuid", str(sbg.uuid)]]]
        elif after_idl_part and sbg is None and pending is not None:
            # The IDL's transaction, already sent, creates SB_Global: the plan that follows it
            # updates the (one) row it committed.
            where = []
        # (Else, while SB_Global is being created with the plan, its echo triggers another run
        # that writes nb_cfg.)
        self.write.carries_nb_cfg = where is not None
        if where is not None:
            self.write.nb_cfg_op = len(plan.ops)
            plan.ops.append({"op": "update", "table": "SB_Global", "where": where, "row": {"nb_cfg": pending}})
            self.write.nb_cfg_timestamp = started_ms
        return plan

    def _dp_uuid(self) -> LazyDpUuids:
        """NB datapath key -> SB Datapath_Binding uuid (read when first used)."""
        assert self.sb is not None
        return LazyDpUuids(self.sb)

    def _poll_txns(self) -> None:
        if self.write.sb_txn is not None:
            self._poll_sb_txn()
        if self.write.nb_txn is not None:
            st = self.write.nb_txn.commit()
            if st != Txn.INCOMPLETE:
                if st not in (Txn.SUCCESS, Txn.UNCHANGED):
                    self.failures.failed("nb", Txn.status_to_string(st), self.write.nb_txn.get_error())
                    self.state.force_recompute = True
                self.write.nb_txn = None
                self._maybe_settled()
        if self.write.cfg_req is not None:
            self._poll_cfg_req()
        if self.write.pass_req is not None:
            self._poll_pass()

    def _poll_cfg_req(self) -> None:
        assert self.raw_nb is not None and self.write.cfg_req is not None
        done, result = self.raw_nb.poll(self.write.cfg_req)
        if not done:
            return
        self.write.cfg_req = None
        if isinstance(result, str):  # (an operation's error too: RawSb.poll)
            self.write.cfg.forget()  # (written again after the next engine run)
            if result != "connection lost":
                self.failures.failed("nb", "error", result)
                self.state.force_recompute = True
        self._maybe_settled()

    def _poll_sb_txn(self) -> None:
        assert self.raw is not None
        tap = self.raw.tap
        st = self.write.sb_txn.commit()
        if tap.attach_ops is not None:
            # The IDL sent nothing (no IDL changes, or it could not send): the plan goes alone.
            ops, tap.attach_ops = tap.attach_ops, None
            if st == Txn.UNCHANGED:
                self.write.sb_txn = None
                self.write.flow_req = self.raw.send(ops)
                if self.write.flow_req is None:
                    self._write_failed("flow", "not connected", None)
                return
        if st == Txn.INCOMPLETE:
            return
        self.write.sb_txn, txn = None, self.write.sb_txn
        plan = None
        if self.write.flow_req is None:  # (a plan sent alone after this transaction is _poll_flows')
            plan, self.write.sb_plan = self.write.sb_plan, None
        took = time.perf_counter() - self.write.started
        results = tap.attached_results.pop(getattr(txn, "_request_id", None), None)
        if st in (Txn.SUCCESS, Txn.UNCHANGED):
            if plan is not None and plan.ops:
                if not isinstance(results, list):
                    # Committed, but the reply to our part went missing: re-read rather than guess.
                    self.log.warning("sb transaction committed without results for the flow plan; re-reading")
                    self.writer.reset()
                else:
                    self._report_sb_cfg()  # (first: nbctl --wait=sb waits on it)
                    with _gc_paused():
                        self.writer.committed(plan, results)
            self._write_succeeded()
        else:
            self._write_failed("sb", Txn.status_to_string(st), txn.get_error())
        self.metrics.commits.labels(status=Txn.status_to_string(st)).inc()
        self.metrics.commit_seconds.observe(took)
        self._maybe_settled()

    def _report_sb_cfg_ahead(self) -> None:
        """The SB write carrying nb_cfg: once its echo shows SB_Global.nb_cfg at the value it set,
        or its reply says committed, report sb_cfg now, before the IDL parses what was read (as
        the reference, which reports on the IDL's SB_Global).  A monitor sees committed
        transactions only, and only this write sets that value, so its echo says it committed:
        the server sends the echo before the reply, at times a turn of ours earlier.
        ``--wait=sb`` waits on the commit, not on our reading it back: the value reported is the
        one the committed write set.  The reply counts for a write that is one transaction (the
        plan attached to the IDL's, or alone)."""
        w = self.write
        if not w.carries_nb_cfg or self.raw is None or w.pending_nb_cfg is None:
            return
        tap = self.raw.tap
        rid: Any = None
        pos = 0
        if w.pass_req is not None:
            rid, pos = w.pass_req.id, w.pass_req.nops + w.nb_cfg_op
        elif w.flow_req is not None:
            if w.sb_txn is None:  # (else the IDL's part went first, in a transaction of its own)
                rid, pos = w.flow_req.id, w.flow_req.nops + w.nb_cfg_op
        elif w.sb_txn is not None:
            rid = getattr(w.sb_txn, "_request_id", None)
            offset = tap.attached.get(rid) if rid is not None else None
            if offset is None:
                rid = None
            else:
                pos = offset + w.nb_cfg_op
        else:
            return
        pending = w.pending_nb_cfg

        def found(msg: Any) -> bool:
            return (rid is not None and is_reply_to(msg, rid)) or update_sets(msg, "SB_Global", "nb_cfg", pending)

        msg = tap.scan_ahead(found)
        if msg is None:
            return
        if msg.type == ovs.jsonrpc.Message.T_NOTIFY or transact_committed(msg, pos):
            self._report_sb_cfg(committed=pending)

    # ---- pass-through writes (engine/passthrough.py) ----
    def _may_pass_through(self) -> bool:
        """Is the daemon idle, so that an NB change may pass through (:meth:`_pass_through`): the
        active instance, in sync, with every change read so far computed and written (nothing
        tracked and not consumed, no write in flight, no recompute or repair pending, no back-off)."""
        nb, sb, st = self.nb, self.sb, self.state
        assert nb is not None and sb is not None and self.raw is not None
        return (self.opts.passthrough and not self.paused and st.runs > 0 and sb.has_lock and st.had_lock
                and nb.synced and sb.synced and nb.connects == st.nb_connects_seen
                and sb.connects == st.sb_connects_seen and not self._busy() and self.writer.loaded
                and not self.writer.full_sync_needed and not self.raw.tap.updates and not st.force_recompute
                and not self.standby.takeover and not self.recompute_event.is_set()
                and not (nb.idl.changes or sb.idl.changes or nb.resynced or sb.resynced)
                and not self.write.aging_ops and time.monotonic() >= self.write.retry_at)

    def _pass_through(self) -> None:
        """Idle, the next NB message read is a change that passes through (:mod:`.engine.passthrough`:
        an address set's addresses, with nb_cfg): its SB write goes out now, before the IDL parses
        the message and the engine runs.  The IDL then reads the message as usual; the engine runs
        once the write is done (:meth:`_busy`), its echo read, and finds nothing to write."""
        if self.raw_nb is None or self.graph is None or not self._pass_hooks or not self._may_pass_through():
            return
        assert self.nb is not None and self.sb is not None and self.raw is not None
        msg = self.raw_nb.tap.scan_ahead(lambda _m: True, limit=1)  # (the next message, read ahead)
        if (msg is None or msg.type != ovs.jsonrpc.Message.T_NOTIFY or msg.method not in ("update2", "update3")
                or not isinstance(msg.params, list) or not msg.params):
            return
        sbg = sb_global_row(self.sb)
        ctx = PassCtx(self.nb, self.sb, self.graph.sb_in.indexes)
        plan = plan_passthrough(self._pass_hooks, msg.params[-1], ctx, str(sbg.uuid) if sbg is not None else None)
        if plan is None:
            return
        started_ms = int(time.time() * 1000)
        req = self.raw.send(plan.ops)
        if req is None:
            return
        w = self.write
        w.pass_req, w.started = req, time.perf_counter()
        w.carries_nb_cfg = plan.nb_cfg is not None
        if plan.nb_cfg is not None:
            w.pending_nb_cfg, w.nb_cfg_op, w.nb_cfg_timestamp = plan.nb_cfg, len(plan.ops) - 1, started_ms
        self.metrics.passthrough_writes.inc()
        self._report_sb_cfg_ahead()  # (the server may have run during our send)

    def _poll_pass(self) -> None:
        assert self.raw is not None and self.write.pass_req is not None
        done, result = self.raw.poll(self.write.pass_req)
        if not done:
            return
        self.write.pass_req = None
        took = time.perf_counter() - self.write.started
        if isinstance(result, str) or any(r != {"count": 1} for r in result):
            # (A row gone meanwhile: count 0.)  Recompute and compare everything.
            self.metrics.commits.labels(status="passthrough-error").inc()
            self._write_failed("passthrough", "error", result)
            return
        self._report_sb_cfg()  # (if not reported ahead)
        self.failures.succeeded()
        self.metrics.commits.labels(status="passthrough-success").inc()
        self.metrics.commit_seconds.observe(took)
        self._maybe_settled()

    def _report_sb_cfg(self, committed: int | None = None) -> None:
        """A write that set SB_Global.nb_cfg committed: NB_Global.sb_cfg (and hv_cfg) now, rather
        than in the engine run that SB's echo triggers: that run comes one NB round trip later and
        finds them written.  sb_cfg is ``committed`` (the value the write set, its echo or reply
        read ahead of the IDL: :meth:`_report_sb_cfg_ahead`), else what the SB IDL holds (the
        server sends a transaction's updates before its reply)."""
        if not self.write.carries_nb_cfg:
            return
        self.write.carries_nb_cfg = False
        self._write_sb_cfg(committed)

    def _write_sb_cfg(self, committed: int | None = None) -> None:
        """NB_Global sb_cfg / hv_cfg from SB (and the nb_cfg_timestamp held back for them), in a
        raw NB transaction of their own (``raw_nb``): not the IDL's, which has one transaction in
        flight at a time (an engine run's may be) and builds it in Python, column by column; and
        which cannot write them: we do not monitor them (:class:`~.sync.globals.CfgReport`).
        Written after an engine transaction still in flight, it lands after it: the counters never
        go back.  ``committed``: the nb_cfg a write just committed into SB, which the SB IDL has not
        read back yet.  One such write at a time (:attr:`WriteState.cfg_req`)."""
        if (self.nb is None or self.sb is None or self.raw_nb is None or sb_global_row(self.sb) is None
                or self.write.cfg_req is not None):
            return
        row = nb_global_row(self.nb)
        if row is None:
            return
        ts, self.write.nb_cfg_timestamp = self.write.nb_cfg_timestamp, None
        cfg = self.write.cfg
        ops = cfg.ops(str(row.uuid), *sb_counters(self.sb, committed), int(time.time() * 1000), nb_cfg_timestamp=ts)
        if not ops:
            return
        self.write.cfg_req = self.raw_nb.send(ops)
        if self.write.cfg_req is None:
            cfg.forget()
        else:
            self.write.yield_until = time.monotonic() + CFG_YIELD_S

    def _write_succeeded(self) -> None:
        self.failures.succeeded()
        self.writer.write_succeeded(self.raw)
        self.metrics.dp_groups.set(len(self.flow_cache.groups))

    def _write_failed(self, what: str, status: str, error: Any) -> None:
        """Nothing of the write committed: recompute and compare every flow again, after a back-off."""
        self.state.force_recompute = True
        self.aging.changed()  # (aged rows it was to delete are still there: look again)
        self.writer.failed()
        self.write.retry_at = time.monotonic() + self.failures.failed(what, status, error)
        self._after_referential_error(error)

    def _after_referential_error(self, error: Any) -> None:
        """A row we delete is still referenced: the retry also deletes the rows of tables we do not
        own that reference it strongly (the list comes from the SB schema), and re-reads the flow
        tables (a row someone else inserted there may be the referrer)."""
        rows = referential_integrity_rows(error)
        for table, row_uuid in rows:
            self.write.ri_retry_ops += referrer_cleanup_ops(table, row_uuid)
        if rows and not self._busy():
            self.writer.reset()

    # ---- the raw path alone: loading the cache, plans without IDL changes, repairs ----
    def _watch_inserts_again(self) -> None:
        """The first write into an empty SB went out under a monitor without inserts
        (:meth:`FlowWriter.quiet_inserts`): watch them again, and read which rows others
        inserted meanwhile (:meth:`_poll_insert_check`)."""
        if self.writer.inserts_unwatched:
            assert self.raw is not None
            self.write.insert_check = self.writer.watch_inserts_again(self.raw)

    def _poll_insert_check(self) -> None:
        """Rows others inserted while inserts were not watched go to the repairs, as the monitor's
        inserts would have."""
        assert self.raw is not None
        if self.write.insert_check is None:
            return
        done, result = self.raw.poll(self.write.insert_check)
        if not done:
            return
        self.write.insert_check = None
        if isinstance(result, list):
            unknown = self.writer.unknown_rows(result)
            if unknown:
                self.raw.tap.updates.append(unknown)
        elif result != "connection lost":  # (a reconnection reads the raw tables again anyway)
            # As a requested recompute: the raw tables are read again, unless a write is in flight.
            self.log.warning("reading the raw tables' uuids failed; recomputing", error=result)
            self.recompute_event.set()

    def _poll_flows(self) -> None:
        assert self.raw is not None
        self._poll_insert_check()
        if self.writer.loading:
            with _gc_paused():
                error = self.writer.poll_load(self.raw)
            if error is not None:
                self.log.warning("reading the flow tables failed; retrying", error=error)
        if self.write.flow_req is None:
            return
        done, result = self.raw.poll(self.write.flow_req)
        if not done:
            return
        self.write.flow_req = None
        self._watch_inserts_again()
        plan, self.write.sb_plan = self.write.sb_plan, None
        if isinstance(result, str):
            self.metrics.commits.labels(status="flow-error").inc()
            self._write_failed("flow", "error", result)
            return
        if plan is not None:
            self._report_sb_cfg()  # (first: nbctl --wait=sb waits on it)
            with _gc_paused():
                self.writer.committed(plan, result)
        self.metrics.commits.labels(status="flow-success").inc()
        self.metrics.commit_seconds.observe(time.perf_counter() - self.write.started)
        self._write_succeeded()
        self._maybe_settled()

    def _start_repairs(self) -> bool:
        """Undo what others changed in our raw tables (the monitor's updates); True if a write went out."""
        assert self.raw is not None and self.sb is not None
        updates, self.raw.tap.updates = self.raw.tap.updates, []
        live = {str(u) for u in self.sb.rows("Datapath_Binding")}
        plan, st = self.writer.take_repairs(updates, live)
        if not plan:
            return False
        self.metrics.repairs.inc(st.total)
        self.log.warning("repairing foreign changes to logical flows, datapath groups or load balancers",
                         inserted=st.foreign_inserts, deleted=st.foreign_deletes, modified=st.foreign_modifies)
        self.write.sb_plan = plan
        self.write.started = time.perf_counter()
        self.write.flow_req = self.raw.send(plan.ops)
        if self.write.flow_req is None:
            self.write.sb_plan = None
            self.writer.reset()  # not connected: re-read on reconnection
        return True

    def _maybe_settled(self) -> None:
        idle = (not self._busy() and self.state.runs and not self.state.force_recompute and not self.writer.full_sync_needed)
        if idle and not self.settled.is_set():
            self.settled.set()
            self.trimmer.gc.armed = True
            self.trimmer.trim_now()
            self._report_settled()

    def _report_settled(self) -> None:
        assert self.sb is not None
        counts = {t: len(self.sb.rows(t)) for t in ("Datapath_Binding", "Port_Binding", "Multicast_Group")}
        self.log.info("first sync committed", **counts, Logical_Flow=len(self.flow_cache.flows),
                      Logical_DP_Group=len(self.flow_cache.groups), Load_Balancer=len(self.flow_cache.lbs))

    def _apply_loop_options(self) -> None:
        """NB_Global options for the daemon's own loop, as the reference reads them:
        northd_probe_interval (else --probe-interval, else the default) on both connections, and
        northd_trim_timeout.  Read from NB only while NB is in sync."""
        assert self.nb is not None and self.sb is not None
        if not self._loop_options_dirty:
            return  # (every step: only a change of NB_Global's options, or a resync, sets it)
        if not self.nb.synced and self.state.probe_applied:
            return
        nbg = nb_global_row(self.nb) if self.nb.synced else None
        self._loop_options_dirty = nbg is None
        # (Only after NB_Global's options changed, or a resync; and the row's cached options, which
        # fastrow drops whenever the server updates the row, are the same object till then.)
        options = fastrow.peek(nbg, "options") if nbg is not None else None
        if options is not None and options is self._loop_options_seen:
            return
        self._loop_options_seen = options
        options = options or {}
        self.trimmer.timeout_ms = trim_timeout_ms(options)
        for conn in (self.nb, self.sb):
            want = northd_probe_interval(options, conn.default_probe_interval_ms())
            if self.state.probe_applied.get(conn.name) != want:
                conn.set_probe_interval(want)
                self.state.probe_applied[conn.name] = want
                self.log.info("probe interval", db=conn.name, ms=conn.probe_interval)

    def _trim_memory(self, poller: AsyncPoller) -> None:
        """After northd_trim_timeout ms without an engine run, return freed heap to the system once."""
        inactive_ms = self.trimmer.maybe_trim()
        if inactive_ms is not None:
            self.log.info("trimming memory", inactive_ms=inactive_ms)
        due = self.trimmer.due_in()
        if due is not None:
            poller.timer_wait(due * 1000)

    # ---- control ----
    def install_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.add_signal_handler(signal.SIGTERM, self.stop_event.set)
        loop.add_signal_handler(signal.SIGINT, self.stop_event.set)
        loop.add_signal_handler(signal.SIGHUP, self.stop_event.set)  # as ovn-northd: SIGHUP terminates
        loop.add_signal_handler(signal.SIGUSR1, self.recompute_event.set)


@dataclass(slots=True)
class _DirectTurn:
    """A turn :meth:`Daemon._direct_turn` ran: what to wait on next (None: stop)."""

    poller: AsyncPoller | None


@contextlib.contextmanager
def _gc_paused(bulk: BulkGc | None = None) -> Any:
    """Bulk work allocates hundreds of thousands of long-lived containers; the cyclic GC would
    rescan them over and over while they are built (2-3x the CPU of a cold flow plan).  Pause
    it for the duration; ``bulk``: then move what a bulk step left out of the GC's generations
    (:class:`.memtrim.BulkGc`, collected when the frozen heap doubles or the daemon is quiet)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if bulk is not None:
                bulk.after_step()
            gc.enable()


def write_pidfile(path: str) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"{os.getpid()}\n")


def remove_pidfile(path: str) -> None:
    try:
        if Path(path).read_text().strip() == str(os.getpid()):
            Path(path).unlink()
    except OSError:
        pass
