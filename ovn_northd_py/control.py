"""The unixctl control socket, compatible with ``ovn-appctl`` (python-ovs' ``ovs.unixctl.server``).

The commands of the C ovn-northd, with its output formats where tools parse them (``status``
prints ``Status: active``, ``Status: standby`` or ``Status: paused``), plus our own:

- ``recompute``: a full recompute (as ``inc-engine/recompute``, or SIGUSR1);
- ``plan``: what a full recompute would write to SB now, without writing it;
- ``explain UUID|TEXT``: the NB rows (flow owners) behind an SB Logical_Flow (by uuid, or flows
  whose match contains TEXT), the NB port behind a Port_Binding (by uuid or logical_port).

The server runs as its own task on the daemon's event loop (python-ovs' poll interface bridged
by :class:`~ovn_northd_py.ovsdb.aiopoll.AsyncPoller`); commands that change the daemon's state
set its flags and events, and the daemon applies them in its loop.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import resource
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import ovs.unixctl
import ovs.unixctl.server
import ovs.util
import ovs.version

from . import __version__
from . import log as logmod
from .flows.chassis_features import chassis_features, features_text
from .ovsdb.aiopoll import AsyncPoller

# The first line ends with the ovn-northd version we are compatible with: ovn-ctl's stop_northd reads it
# (`ovs-appctl version | awk 'NR==1{print $NF}'`) to decide whether `exit` may be used.
VERSION_TEXT = (f"ovn-northd-py {__version__}, compatible with ovn-northd 23.03.1\n"
                f"Open vSwitch Library {ovs.version.VERSION}")


# --------------------------------------------------------------------------- stopwatches


class Stopwatch:
    """Samples of one timing, reported as ovn-northd's ``stopwatch/show`` does."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reset()

    def reset(self) -> None:
        self.count = 0
        self.max_ms = 0.0
        self.min_ms = 0.0
        self.short_avg = 0.0  # EWMA, alpha 0.50 (as OVS)
        self.long_avg = 0.0  # EWMA, alpha 0.01
        self.recent: deque[float] = deque(maxlen=100)

    def add(self, seconds: float) -> None:
        ms = seconds * 1000.0
        if self.count == 0:
            self.max_ms = self.min_ms = self.short_avg = self.long_avg = ms
        else:
            self.max_ms = max(self.max_ms, ms)
            self.min_ms = min(self.min_ms, ms)
            self.short_avg = 0.5 * ms + 0.5 * self.short_avg
            self.long_avg = 0.01 * ms + 0.99 * self.long_avg
        self.count += 1
        self.recent.append(ms)

    @property
    def p95(self) -> float:
        if not self.recent:
            return 0.0
        s = sorted(self.recent)
        return s[min(len(s) - 1, int(0.95 * len(s)))]

    def show(self) -> str:
        return (f"Statistics for '{self.name}'\n"
                f"  Total samples: {self.count}\n"
                f"  Maximum: {self.max_ms:.0f} msec\n"
                f"  Minimum: {self.min_ms:.0f} msec\n"
                f"  95th percentile: {self.p95:f} msec\n"
                f"  Short term average: {self.short_avg:f} msec\n"
                f"  Long term average: {self.long_avg:f} msec\n")


class _Tee:
    """Wraps a prometheus Histogram: every observation also goes to a Stopwatch."""

    def __init__(self, hist: Any, sw: Stopwatch) -> None:
        self._hist = hist
        self._sw = sw

    def observe(self, v: float) -> None:
        self._hist.observe(v)
        self._sw.add(v)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hist, name)


# --------------------------------------------------------------------------- coverage


class Coverage:
    """Event counters with ovn-northd's ``coverage/show`` rates (5 s, 1 min, 1 h)."""

    def __init__(self, sources: dict[str, Callable[[], float]]) -> None:
        self.sources = sources
        self.history: deque[tuple[float, dict[str, float]]] = deque(maxlen=721)  # 1 h of 5 s samples

    def totals(self) -> dict[str, float]:
        return {k: f() for k, f in self.sources.items()}

    def sample(self) -> None:
        self.history.append((time.monotonic(), self.totals()))

    def _rate(self, name: str, now: float, cur: float, window: float) -> float:
        past = None
        for t, tot in self.history:
            if now - t <= window + 0.5:
                past = (t, tot)
                break
        if past is None or now - past[0] <= 0:
            return 0.0
        return (cur - past[1].get(name, 0.0)) / max(window, now - past[0])

    def show(self) -> str:
        now = time.monotonic()
        cur = self.totals()
        lines = ["Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=00000000:"]
        never = 0
        for name, total in cur.items():
            if not total:
                never += 1
                continue
            lines.append(f"{name:<26s} {self._rate(name, now, total, 5):5.1f}/sec "
                         f"{self._rate(name, now, total, 60):9.3f}/sec "
                         f"{self._rate(name, now, total, 3600):13.4f}/sec   total: {int(total)}")
        lines.append(f"{never} events never hit")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the server


def default_ctl_path(rundir: str) -> str:
    """As ovn-northd: <rundir>/ovn-northd.<pid>.ctl."""
    return f"{rundir}/ovn-northd.{os.getpid()}.ctl"


class Control:
    """The commands, bound to one Daemon."""

    def __init__(self, daemon: Any, path: str) -> None:
        self.d = daemon
        self.path = path
        self.received = 0
        self.stopwatches = {n: Stopwatch(n) for n in ("ovn-northd-loop", "northd-engine", "sb-commit")}
        m = daemon.metrics
        m.loop_seconds = _Tee(m.loop_seconds, self.stopwatches["ovn-northd-loop"])
        m.compute_seconds = _Tee(m.compute_seconds, self.stopwatches["northd-engine"])
        m.commit_seconds = _Tee(m.commit_seconds, self.stopwatches["sb-commit"])

        def counter(metric: Any, **labels: str) -> Callable[[], float]:
            def total() -> float:
                for fam in metric.collect():
                    for smp in fam.samples:
                        if smp.name.endswith("_total") and smp.labels == labels:
                            return float(smp.value)
                return 0.0

            return total

        self.coverage = Coverage({
            "engine_run_recompute": counter(m.runs, kind="recompute"),
            "engine_run_incremental": counter(m.runs, kind="incremental"),
            "txn_success": counter(m.commits, status="success"),
            "txn_unchanged": counter(m.commits, status="unchanged"),
            "txn_error": counter(m.commits, status="error"),
            "txn_try_again": counter(m.commits, status="try again"),
            "flow_txn_success": counter(m.commits, status="flow-success"),
            "flow_txn_error": counter(m.commits, status="flow-error"),
            "nb_bad_rows": counter(m.bad_rows, kind="any"),
            "unixctl_received": lambda: float(self.received),
        })
        self.server: Any = None
        # parallel-build/set-n-threads: recorded and reported (ours computes in one thread).
        self.n_threads = 1
        self.pending_plans: list[tuple[Any, Any, int]] = []
        self._register()

    # ---- set-up ----
    def _register(self) -> None:
        cmds: list[tuple[str, str, int, int, Callable[[list[str]], str | None]]] = [
            ("status", "", 0, 0, lambda a: f"Status: {self.d.status()}"),
            ("pause", "", 0, 0, self._pause),
            ("resume", "", 0, 0, self._resume),
            ("is-paused", "", 0, 0, lambda a: "true" if self.d.paused else "false"),
            ("nb-connection-status", "", 0, 0, lambda a: self._conn_status(self.d.nb)),
            ("sb-connection-status", "", 0, 0, lambda a: self._conn_status(self.d.sb)),
            ("nb-cluster-state-reset", "", 0, 0, lambda a: self._cluster_reset(self.d.nb)),
            ("sb-cluster-state-reset", "", 0, 0, lambda a: self._cluster_reset(self.d.sb)),
            ("inc-engine/show-stats", "[NODE [STAT]]", 0, 2, self._show_stats),
            ("inc-engine/clear-stats", "", 0, 0, self._clear_stats),
            ("inc-engine/recompute", "", 0, 0, self._recompute),
            ("recompute", "", 0, 0, self._recompute),
            ("exit", "", 0, 0, self._exit),
            ("version", "", 0, 0, lambda a: f"{VERSION_TEXT}\nOVN release profile: {self.d.release.describe()}"),
            ("memory/show", "", 0, 0, lambda a: self._memory()),
            ("coverage/show", "", 0, 0, lambda a: self.coverage.show()),
            ("stopwatch/show", "[NAME]", 0, 1, self._stopwatch_show),
            ("stopwatch/reset", "[NAME]", 0, 1, self._stopwatch_reset),
            ("explain", "UUID|TEXT", 1, 1, lambda a: explain(self.d, a[0])),
            ("list-commands", "", 0, 0, lambda a: self._list()),
            ("parallel-build/get-n-threads", "", 0, 0, lambda a: str(self.n_threads)),
            ("parallel-build/set-n-threads", "N_THREADS", 1, 1, self._set_n_threads),
            ("debug/chassis-features-list", "", 0, 0, self._chassis_features),
        ]
        for name, usage, lo, hi, fn in cmds:
            ovs.unixctl.commands.pop(name, None)  # ours replace python-ovs' defaults (e.g. version)
            ovs.unixctl.command_register(name, usage, lo, hi, self._wrap(fn), None)
        ovs.unixctl.commands.pop("plan", None)
        ovs.unixctl.command_register("plan", "[N]", 0, 1, self._plan_cmd, None)

    def _wrap(self, fn: Callable[[list[str]], str | None]) -> Callable[[Any, list[str], Any], None]:
        def callback(conn: Any, argv: list[str], _aux: Any) -> None:
            self.received += 1
            try:
                out = fn(argv)
            except _CommandError as e:
                conn.reply_error(str(e))
                return
            except Exception as e:  # a bug in a command must not take the daemon down
                logmod.get("ovn_northd_py").exception("unixctl command failed", argv=argv)
                conn.reply_error(f"internal error: {e}")
                return
            conn.reply(out)

        return callback

    def start(self) -> None:
        """Create the socket (ovs.unixctl.server); raises OSError if it cannot."""
        err, server = ovs.unixctl.server.UnixctlServer.create(self.path, version=VERSION_TEXT)
        if err:
            raise OSError(err, f"could not initialize control socket {self.path}: {os.strerror(err)}")
        self.server = server

    async def serve(self, tick: float = 5.0) -> None:
        """Serve requests until cancelled; every ``tick`` seconds, sample coverage and wake the main loop
        (so that its per-iteration hooks, e.g. the systemd watchdog, run even when nothing happens)."""
        assert self.server is not None
        next_tick = time.monotonic()
        try:
            while True:
                self.server.run()
                if self.pending_plans:
                    self._poll_plans()
                now = time.monotonic()
                if now >= next_tick:
                    self.coverage.sample()
                    self.d.wake_event.set()
                    next_tick = now + tick
                p = AsyncPoller()
                self.server.wait(p)
                p.timer_wait(max(0.0, (next_tick - time.monotonic()) * 1000))
                if self.pending_plans:
                    p.timer_wait(20)  # the reply arrives through the daemon's SB connection
                await p.block()
        finally:
            self.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    # ---- commands ----
    def _pause(self, _a: list[str]) -> None:
        self.d.pause()
        logmod.get("ovn_northd_py").info("paused (unixctl)")

    def _resume(self, _a: list[str]) -> None:
        self.d.resume()
        logmod.get("ovn_northd_py").info("resumed (unixctl)")

    def _recompute(self, _a: list[str]) -> None:
        self.d.recompute_event.set()

    def _set_n_threads(self, a: list[str]) -> None:
        """As the C daemon: 1..256 (C's atoi: what does not start with a number is 0)."""
        m = re.match(r"\s*([-+]?\d+)", a[0])
        n = int(m.group(1)) if m else 0
        if not 1 <= n <= 256:
            raise _CommandError(f"invalid n_threads: {n}")
        self.n_threads = n

    def _chassis_features(self, _a: list[str]) -> str:
        """What every local chassis supports (SB Chassis other_config), as the C daemon lists it."""
        profile = self.d.release.profile
        latch = self.d.graph.lflow.feature_latch if self.d.graph is not None else None
        return features_text(chassis_features(self.d.sb, profile, latch), profile)

    def _exit(self, _a: list[str]) -> None:
        self.d.stop_event.set()

    @staticmethod
    def _conn_status(db: Any) -> str:
        return "connected" if db is not None and db.connected else "not connected"

    @staticmethod
    def _cluster_reset(db: Any) -> None:
        """As ovn-northd: forget the highest cluster index seen (after a cluster was rebuilt)."""
        if db is not None:
            db.idl._min_index = 0
            db.idl.force_reconnect()

    def _nodes(self) -> list[Any]:
        g = self.d.graph
        return list(g.engine.nodes) if g is not None else []

    def _show_stats(self, argv: list[str]) -> str:
        out = []
        nodes = self._nodes()
        if argv:
            nodes = [n for n in nodes if n.name == argv[0]]
            if not nodes:
                raise _CommandError(f"Unknown node {argv[0]}")
        for n in nodes:
            st = n.stats
            values = {"recompute": st.recompute, "compute": st.incremental, "abort": st.unhandled}
            if len(argv) == 2:
                if argv[1] not in values:
                    raise _CommandError(f"Invalid stat {argv[1]}")
                out.append(str(values[argv[1]]))
                continue
            out.append(f"Node: {n.name}\n- recompute: {st.recompute:12d}\n- compute: {st.incremental:14d}\n"
                       f"- abort: {st.unhandled:16d}\n- unchanged: {st.unchanged:12d}\n"
                       f"- seconds: {st.seconds:14.6f}")
        return "\n".join(out)

    def _clear_stats(self, _a: list[str]) -> None:
        from .engine.engine import NodeStats

        for n in self._nodes():
            n.stats = NodeStats()

    def _memory(self) -> str:
        parts = []
        for label, db in (("OVN_Northbound", self.d.nb), ("OVN_Southbound", self.d.sb)):
            if db is not None:
                cells = sum(len(t.rows) * len(t.columns) for t in db.idl.tables.values())
                parts.append(f"idl-cells-{label}:{cells}")
        fc = self.d.flow_cache
        parts.append(f"sb-logical-flows:{len(fc.flows)}")
        parts.append(f"sb-dp-groups:{len(fc.groups)}")
        parts.append(f"rss-kb:{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")
        return " ".join(parts)

    def _stopwatch_show(self, argv: list[str]) -> str:
        sws = list(self.stopwatches.values())
        if argv:
            sws = [s for s in sws if s.name == argv[0]]
            if not sws:
                raise _CommandError(f"No such stopwatch {argv[0]}")
        return "".join(s.show() for s in sws)

    def _stopwatch_reset(self, argv: list[str]) -> None:
        for s in self.stopwatches.values():
            if not argv or s.name == argv[0]:
                s.reset()

    def _plan_cmd(self, conn: Any, argv: list[str], _aux: Any) -> None:
        """plan [N].  SB's flow tables are read first (a select on the daemon's SB connection, so the
        plan compares with SB as it is, whatever copy the flow writer keeps); the reply waits for it."""
        self.received += 1
        try:
            limit = int(argv[0]) if argv else 20
        except ValueError:
            conn.reply_error(f"plan: N must be a number, not {argv[0]!r}")
            return
        d = self.d
        why = _not_ready(d)
        if why is None:  # compare with SB as it is now, not with a copy
            from .sync.lflows import select_ops

            req = d.raw.send(select_ops(d.writer.cache.split_lbs), with_lock=False) if d.raw is not None else None
            if req is None:
                conn.reply_error("plan: SB is not connected")
                return
            self.pending_plans.append((conn, req, limit))
            return
        self._reply_plan(conn, limit, None)

    def _reply_plan(self, conn: Any, limit: int, cache: Any) -> None:
        try:
            conn.reply(plan(self.d, limit, cache))
        except _CommandError as e:
            conn.reply_error(str(e))
        except Exception as e:  # a bug in a command must not take the daemon down
            logmod.get("ovn_northd_py").exception("unixctl command failed", argv=["plan"])
            conn.reply_error(f"internal error: {e}")

    def _poll_plans(self) -> None:
        from .sync.lflows import FlowCache, load_cache

        for item in list(self.pending_plans):
            conn, req, limit = item
            done, result = self.d.raw.poll(req)
            if not done:
                continue
            self.pending_plans.remove(item)
            if isinstance(result, str):
                conn.reply_error(f"plan: reading SB's flow tables failed: {result}")
                continue
            cache = FlowCache(split_lbs=self.d.writer.cache.split_lbs,
                              ls_group_column=self.d.writer.cache.ls_group_column)
            load_cache(cache, result)
            self._reply_plan(conn, limit, cache)

    def _list(self) -> str:
        lines = ["The available commands are:"]
        for name in sorted(ovs.unixctl.commands):
            usage = ovs.unixctl.commands[name].usage
            lines.append(f"  {name:<23s} {usage}" if usage else f"  {name}")
        return "\n".join(lines)


class _CommandError(Exception):
    pass


# --------------------------------------------------------------------------- plan


def _not_ready(d: Any) -> str | None:
    if d.graph is None or d.nb is None or d.sb is None:
        return "not connected yet"
    if getattr(d.graph.northd, "data", None) is None:
        return "the engine has not run yet"
    if d._busy():
        return "a transaction is in flight; try again"
    return None


def plan(d: Any, limit: int = 20, cache: Any = None) -> str:
    """What a full recompute from the current NB would write to SB now (nothing is written).

    The same shadow recompute as ``--check-incremental``: the model and the flows are built from
    scratch, the raw tables (Logical_Flow, Logical_DP_Group, Load_Balancer) are diffed against what
    SB holds, and the IDL-written tables are synced in a transaction that is then aborted."""
    why = _not_ready(d)
    if why:
        raise _CommandError(f"plan: {why}")
    cache = cache if cache is not None else d.flow_cache
    if not cache.loaded:
        raise _CommandError("plan: the SB flows have not been read yet")
    import ovs.db.idl

    from .engine.check import _Silent, shadow_sb_sync
    from .engine.engine import EngineCtx
    from .flows import build_lflows
    from .flows.context import flow_ctx_from_nb
    from .flows.owners import new_flow_table
    from .northd.build import build_northd
    from .sync.datapaths import dp_uuids
    from .sync.lflow_desired import desired_flows
    from .sync.lflows import plan_sync
    from .sync.load_balancers import desired_sb_lbs

    nb, sb, graph = d.nb, d.sb, d.graph
    northd = graph.northd
    gopts = northd.gopts
    shadow = build_northd(nb, sb, copy.deepcopy(northd.keys), _Silent(),  # type: ignore[arg-type]
                          mac_prefix=gopts.mac_prefix if gopts else "", profile=d.release.profile)
    table = new_flow_table(len(shadow.slots))
    fctx = flow_ctx_from_nb(shadow, nb, mac_prefix=gopts.mac_prefix if gopts else "",
                            svc_monitor_mac=gopts.svc_monitor_mac if gopts else "", sb=sb,
                            profile=d.release.profile, feature_latch=graph.lflow.feature_latch)
    build_lflows(shadow, fctx, table)
    dp_uuid = dp_uuids(sb)
    fplan = plan_sync(cache, desired_flows(table, shadow, dp_uuid, fctx.profile), desired_sb_lbs(shadow, dp_uuid, fctx.profile))
    lines = [(f"Logical_Flow/Logical_DP_Group/Load_Balancer: {fplan.inserted} to insert, {fplan.updated} to "
             f"update, {fplan.deleted} to delete")]
    unbound = {i for i, dp in enumerate(shadow.slots) if dp is not None and dp.key not in dp_uuid}
    if unbound:
        n = sum(1 for f in table.flows() if unbound.intersection(f.datapaths))
        lines.append(f"  and {n} flows on {len(unbound)} datapaths not yet in SB (written once their "
                     f"Datapath_Binding exists)")
    for op in fplan.ops[:limit]:
        lines.append("  " + _describe_op(op))
    if len(fplan.ops) > limit:
        lines.append(f"  ... {len(fplan.ops) - limit} more operations")
    txn = ovs.db.idl.Transaction(sb.idl)
    rows: list[str] = []
    try:
        stats = shadow_sb_sync(EngineCtx(nb, sb, d.warn, profile=d.release.profile), shadow, graph, txn)
        for row in list(txn._txn_rows.values()):
            if row._data is None:
                what = "insert"
            elif row._changes is None:
                what = "delete"
            elif row._changes:
                what = "update " + ",".join(sorted(row._changes))
            else:
                continue
            rows.append(f"  {row._table.name} {row.uuid}: {what}")
    finally:
        txn.abort()
    lines.append(f"SB tables written through the IDL: {sum(stats.inserted.values())} to insert, "
                 f"{sum(stats.updated.values())} to update, {sum(stats.deleted.values())} to delete")
    for what, per in (("insert", stats.inserted), ("update", stats.updated), ("delete", stats.deleted)):
        for t, n in sorted(per.items()):
            lines.append(f"  {t}: {n} to {what}")
    lines += rows[:limit]
    if len(rows) > limit:
        lines.append(f"  ... {len(rows) - limit} more rows")
    return "\n".join(lines)


def _describe_op(op: Mapping[str, Any]) -> str:
    table = op.get("table", "?")
    row = op.get("row") or {}
    where = op.get("where")
    target = f" {where[0][2][1]}" if where and isinstance(where[0][2], list) else ""
    if table == "Logical_Flow" and row.get("match") is not None:
        ext = dict(row.get("external_ids", ["map", []])[1]) if isinstance(row.get("external_ids"), list) else {}
        return (f"{op['op']} Logical_Flow{target} stage={ext.get('stage-name', '?')} priority={row.get('priority')} "
                f"match=({row.get('match')}) actions=({row.get('actions')})")
    cols = ",".join(sorted(row)) if row else ""
    return f"{op['op']} {table}{target}" + (f" ({cols})" if cols else "")


# --------------------------------------------------------------------------- explain


def _parse_uuid(s: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(s)
    except ValueError:
        return None


def _nb_row_name(d: Any, key: str) -> str | None:
    """'<table> <uuid> (name)' for an NB row uuid, if there is one."""
    u = _parse_uuid(key)
    if u is None or d.nb is None:
        return None
    for tname, t in d.nb.idl.tables.items():
        row = t.rows.get(u)
        if row is not None:
            name = getattr(row, "name", None) if "name" in t.columns else None
            return f"NB {tname} {u}" + (f" (name {name!r})" if name else "")
    return None


def _describe_owner(d: Any, owner: Any) -> str:
    parts = owner if isinstance(owner, tuple) else (owner,)
    named = [n for p in parts if isinstance(p, str) and (n := _nb_row_name(d, p))]
    if parts and parts[0] == "port" and len(parts) > 1:
        named.append(f"NB port {parts[1]!r}")
    return f"{owner!r}" + (": " + "; ".join(named) if named else "")


def _owners_of(table: Any, fids: list[int]) -> dict[int, list[Any]]:
    """The owners of each flow in ``fids``: one pass over every owner's references (numpy), so that
    explaining flows of a large table does not stall the main loop."""
    import numpy as np

    from .lflow.table import PAIR_SHIFT

    want = np.array(sorted(set(fids)), dtype=np.int64)
    out: dict[int, list[Any]] = {f: [] for f in fids}
    for owner, log in table._owners.items():
        if not len(log):
            continue
        hit = np.intersect1d(np.frombuffer(log, dtype=np.int64) >> PAIR_SHIFT, want)
        for f in hit.tolist():
            out[f].append(owner)
    return out


def _explain_flow(d: Any, fid: int, sb_uuid: str | None = None, owners: list[Any] | None = None) -> list[str]:
    table = d.graph.lflow.table
    f = table.flow(fid)
    nd = d.graph.northd.data
    names = []
    for i in f.datapaths:
        dp = nd.slots[i] if i < len(nd.slots) else None
        if dp is not None:
            names.append(f"{dp.name or dp.key}")
    head = f"Logical_Flow {sb_uuid}" if sb_uuid else "logical flow"
    out = [f"{head}: stage {f.stage.name} priority {f.priority}",
           f"  match: {f.match}", f"  actions: {f.actions}",
           f"  datapaths ({len(names)}): {', '.join(names[:10])}" + (" ..." if len(names) > 10 else "")]
    if owners is None:
        owners = _owners_of(table, [fid])[fid]
    if owners:
        out.append("  produced by:")
        out += [f"    {_describe_owner(d, o)}" for o in owners]
    else:
        out.append("  produced by: no NB row (a default flow of its datapaths)")
    if f.hint:
        n = _nb_row_name_prefix(d, f.hint)
        out.append(f"  stage-hint: {f.hint}" + (f" -> {n}" if n else ""))
    return out


def _nb_row_name_prefix(d: Any, prefix: str) -> str | None:
    if d.nb is None:
        return None
    for tname, t in d.nb.idl.tables.items():
        for u in t.rows:
            if str(u).startswith(prefix):
                return f"NB {tname} {u}"
    return None


def explain(d: Any, arg: str) -> str:
    if d.graph is None or d.sb is None or getattr(d.graph.northd, "data", None) is None:
        raise _CommandError("explain: the engine has not run yet")
    table = d.graph.lflow.table
    nd = d.graph.northd.data
    u = _parse_uuid(arg)
    if u is not None:
        row = d.flow_cache.flows.get(str(u))
        if row is not None:
            k = row.key
            fid = table._index.get((k[0], k[3], k[4], k[5], k[6] or None))
            if fid is None or fid not in table:
                return f"Logical_Flow {u}: not produced by the current NB (a recompute would delete it)"
            return "\n".join(_explain_flow(d, fid, str(u)))
        pb = d.sb.rows("Port_Binding").get(u)
        if pb is not None:
            return _explain_port(d, nd, pb.logical_port, str(u))
        owned = [fid for o, _log in table._owners.items() if str(u) in o for fid in _fids_of(table, o)]
        if owned:
            out = [f"{_nb_row_name(d, str(u)) or u} produces {len(set(owned))} logical flows:"]
            first = sorted(set(owned))[:20]
            owners = _owners_of(table, first)
            for fid in first:
                out += _explain_flow(d, fid, owners=owners[fid])
            return "\n".join(out)
        raise _CommandError(f"explain: no SB Logical_Flow, Port_Binding or flow-owning NB row {u}")
    for pb in d.sb.rows("Port_Binding").values():
        if pb.logical_port == arg:
            return _explain_port(d, nd, arg, str(pb.uuid))
    hits = [fid for fid in table if arg in table.flow(fid).match or table.flow(fid).stage.name == arg]
    if not hits:
        raise _CommandError(f"explain: no logical flow whose match contains {arg!r} (or in stage {arg!r})")
    out = [f"{len(hits)} logical flows whose match contains {arg!r} (or in stage {arg!r})"
           + (" (first 20)" if len(hits) > 20 else "")]
    owners = _owners_of(table, hits[:20])
    for fid in hits[:20]:
        out += _explain_flow(d, fid, owners=owners[fid])
    return "\n".join(out)


def _fids_of(table: Any, owner: Any) -> set[int]:
    from .lflow.table import PAIR_SHIFT

    return {p >> PAIR_SHIFT for p in table._owners.get(owner, ())} & set(table)


def _explain_port(d: Any, nd: Any, name: str, sb_uuid: str) -> str:
    p = nd.ports.get(name)
    if p is None:
        return f"Port_Binding {sb_uuid} ({name}): no NB port of that name (a recompute would delete it)"
    table = "Logical_Router_Port" if p.kind in ("lrp", "crp") else "Logical_Switch_Port"
    out = [(f"Port_Binding {sb_uuid} (logical_port {name!r}): NB {table} {p.nb_key} (name {p.nb.name!r}), "
           f"kind {p.kind}, on datapath {p.dp.name or p.dp.key}")]
    out.append(f"  produces {len(_fids_of(d.graph.lflow.table, ('port', name)))} logical flows (owner ('port', {name!r}))")
    return "\n".join(out)
