#!/usr/bin/env python3
"""The SB flow writer (sync/lflows.py): diff cost, a real ovsdb-server's transact time, datapath groups.

usage: bench_sb_writer.py [--scale F] [--seed N] [--skip-server]

Scenarios (at --scale 1):

a) diff: 300,000 flows over 1,000 datapaths in a FlowTable (250 single-datapath
   flows per datapath, 100 flows on every datapath, 49,900 flows on one of 2,000
   random datapath sets of 2..20), converted with ``desired_flows``.  Timed:
   ``plan_sync`` from an empty cache (cold: every row an insert), ``apply_plan``
   with fake server uuids, ``load_cache`` from a fake ``select`` reply (what a
   reconnect costs), ``plan_sync`` again on the unchanged flows (asserted to
   produce zero operations, from the applied and from the re-read cache), and
   ``plan_sync`` after 1% of the flows changed (a third deleted, a third replaced
   by new flows, a third moved to other datapaths).  The baseline is a plain dict
   diff: flow key -> (uuid, frozenset of datapaths, external_ids, tags), groups
   matched by frozenset, no resizing.
b) server: the cold plan for 30,000 and 300,000 flows sent as one ``transact`` to
   a real ovsdb-server (SB schema, 1,000 Datapath_Binding rows created first),
   through a plain-socket JSON-RPC client and through ``RawSb`` on a python-ovs
   IDL (the daemon's path), then the ``select`` that re-reads the flows after a
   reconnect, through ``RawSb``, with ``load_cache``.  A fresh server for each.
c) groups: 30,000 load balancers on 250 switches, ovn-kubernetes style (60%
   cluster-wide services on every switch, 30% per-node on one switch, 10% on one
   of 20 node pools of 10..100 switches), two flows per load balancer on its
   switches, 60 flows on every switch and 3 flows for each of 110 ports per
   switch.  One plan with flows and load balancers against a flows-only plan plus
   a load-balancers-only plan: Logical_DP_Group rows and JSON bytes of the insert
   operations.  Like the reference, flows and load balancers never share a group
   (each kind is deduplicated among its own groups), so both variants write the
   same groups; what differs is the cost of planning them together.

--scale multiplies the flow counts of (a) and (b) and the load balancers of (c).
CPU seconds (this process's, and ovsdb-server's from /proc) are the figures to
compare on a shared machine; wall seconds are shown beside them.  Peak memory is
from a second run under tracemalloc (inputs are built beforehand, so not
counted); ``kept`` is what the result keeps alive (the cache, for apply/load).
The default run takes about 3.5 minutes of CPU; ``--skip-server`` leaves out (b).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import socket
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np
import ovs.db.idl
import ovs.poller

from ovn_northd_py.devtools.servers import SB_SCHEMA, OvsdbServer
from ovn_northd_py.lflow.profile import OVN_23_03
from ovn_northd_py.lflow.stages import (
    LS_IN_ACL,
    LS_IN_CHECK_PORT_SEC,
    LS_IN_L2_LKUP,
    LS_IN_LB,
    LS_IN_PRE_LB,
    LS_IN_PRE_STATEFUL,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_PRE_ACL,
)
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.model import LS, Datapath, Northd
from ovn_northd_py.ovsdb.raw import RawSb
from ovn_northd_py.sync.lflow_desired import desired_flows
from ovn_northd_py.sync.lflows import (
    FKey,
    FlowCache,
    Plan,
    WantFlow,
    WantLb,
    _omap,
    apply_plan,
    load_cache,
    plan_sync,
    select_ops,
)

Op = dict[str, Any]

# --------------------------------------------------------------------------- measuring


NAN = float("nan")


@dataclass(slots=True)
class Meas:
    cpu: float  # seconds of this process's CPU time: what to compare on a busy machine
    wall: float
    peak_mib: float = NAN
    retained_mib: float = NAN


@dataclass(slots=True)
class Result:
    scenario: str
    impl: str
    m: Meas
    note: str
    nogc_cpu: float = NAN


def timed(fn: Callable[[], Any], gc_off: bool = False) -> tuple[Meas, Any]:
    if gc_off:
        gc.disable()
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        return Meas(time.process_time() - c0, time.perf_counter() - w0), out
    finally:
        gc.enable()


def measure(fn: Callable[[], Any], memory: bool = True) -> tuple[Meas, Any]:
    """Times without tracemalloc, then peak and retained MiB from a second run under tracemalloc.

    Returns the result of the timed run.
    """
    m, out = timed(fn)  # (no gc.collect() first: at these heap sizes each costs a second or two)
    if not memory:
        return m, out
    del out  # no cycles in what we measure: freed right away
    tracemalloc.start()
    out = fn()
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    m.peak_mib, m.retained_mib = peak / 2**20, cur / 2**20
    return m, out


# --------------------------------------------------------------------------- workloads


def _hex(rng: np.random.Generator) -> str:
    return f"{int(rng.integers(0, 2**32)):08x}"


def northd_of(ndp: int) -> Northd:
    dps = [Datapath(key=f"ls-{i}", kind=LS, name=f"sw{i}", nb=None, index=i) for i in range(ndp)]
    return Northd(by_index=dps)


def build_table(scale: float, ndp: int, rng: np.random.Generator) -> FlowTable:
    """About 300,000 * scale flows over ``ndp`` datapaths (see the module docstring)."""
    per_dp, everywhere = max(1, int(250 * scale)), 100
    shared, nsets = max(10, int(49_900 * scale)), max(10, int(2000 * scale))
    t = FlowTable(ndp)
    for dp in range(ndp):
        for j in range(per_dp):
            port = f"p{dp}-{j}"
            hint = _hex(rng)
            mac = f"0a:00:{dp >> 8:02x}:{dp & 255:02x}:{j >> 8:02x}:{j & 255:02x}"
            kind = j % 5
            if kind == 0:
                t.add(dp, LS_IN_L2_LKUP, 50, f"eth.dst == {mac}", f'outport = "{port}"; output;', hint=hint)
            elif kind == 1:
                t.add(dp, LS_IN_CHECK_PORT_SEC, 50, f'inport == "{port}"',
                      "reg0[15] = check_in_port_sec(); next;", io_port=port, hint=hint)
            elif kind == 2:
                t.add(dp, LS_OUT_APPLY_PORT_SEC, 50, f'outport == "{port}" && eth.dst == {{{mac}}}',
                      "output;", io_port=port, hint=hint)
            elif kind == 3:
                ip = f"10.{dp >> 8}.{dp & 255}.{j & 255}"
                t.add(dp, LS_IN_ACL, 1000 + j % 1000, f'outport == "{port}" && ip4 && ip4.src == {ip}',
                      "reg0[1] = 1; next;", hint=hint)
            else:
                t.add(dp, LS_IN_PRE_LB, 110, f'ip && inport == "{port}"', "next;", io_port=port, hint=hint)
    all_dps = np.arange(ndp, dtype=np.int64)
    for j in range(everywhere):
        stage = (LS_IN_PRE_STATEFUL, LS_OUT_PRE_ACL, LS_IN_ACL)[j % 3]
        t.add_many(all_dps, stage, j, f"reg0[{j % 32}] == 1 && ip{4 + 2 * (j % 2)}", "next;")
    sets = [rng.choice(ndp, size=int(rng.integers(2, 21)), replace=False) for _ in range(nsets)]
    choice = rng.integers(0, nsets, size=shared)
    for j in range(shared):
        vip = f"172.{16 + (j >> 16)}.{(j >> 8) & 255}.{j & 255}"
        t.add_many(sets[int(choice[j])], LS_IN_LB, 120, f"ct.new && ip4.dst == {vip} && tcp.dst == 80",
                   f"reg0[1] = 0; ct_lb_mark(backends=10.{(j >> 8) & 255}.{j & 255}.1:8080);", hint=_hex(rng))
    return t


def fake_results(plan: Plan) -> list[Any]:
    return [{"uuid": ["uuid", str(uuid.uuid4())]} if op["op"] == "insert" else {} for op in plan.ops]


def fake_select(cache: FlowCache) -> list[Any]:
    """What a ``select_ops()`` reply would hold for the rows in ``cache``."""
    flows = []
    for u, r in cache.flows.items():
        _stage, pipeline, table_id, priority, match, actions, meter = r.key
        flows.append({
            "_uuid": ["uuid", u],
            "logical_datapath": ["uuid", r.dp] if r.dp else ["set", []],
            "logical_dp_group": ["uuid", r.group] if r.group else ["set", []],
            "pipeline": pipeline, "table_id": table_id, "priority": priority, "match": match,
            "actions": actions, "controller_meter": meter or ["set", []],
            "external_ids": _omap(r.ext), "tags": _omap(r.tags),
        })
    groups = [{"_uuid": ["uuid", g], "datapaths": ["set", [["uuid", d] for d in sorted(s)]]}
              for g, s in cache.groups.items()]
    return [{"rows": flows}, {"rows": groups}, {"rows": []}]


def change_one_percent(want: dict[FKey, WantFlow], dps: list[str], rng: np.random.Generator
                       ) -> dict[FKey, WantFlow]:
    """A copy of ``want`` with 1% of the flows deleted, replaced or moved (a third each)."""
    out = dict(want)
    keys = list(want)
    pick = rng.choice(len(keys), size=max(3, len(keys) // 100), replace=False)
    for n, i in enumerate(pick.tolist()):
        k = keys[i]
        w = out.pop(k)
        if n % 3 == 0:
            continue  # deleted
        if n % 3 == 1:
            nk: FKey = (k[0], k[1], k[2], k[3], k[4], k[5] + " /* changed */", k[6])
            out[nk] = w
        else:
            extra = dps[int(rng.integers(0, len(dps)))]
            new = frozenset([extra]) if len(w.dps) == 1 else w.dps | {extra}
            out[k] = WantFlow(new, w.ext, w.tags)
    return out


# --------------------------------------------------------------------------- the plain baseline


BaseRow = tuple[str, frozenset[str], dict[str, str], dict[str, str]]


@dataclass(slots=True)
class BaseCache:
    """Flow key -> (row uuid, datapath set, external_ids, tags); group set -> group uuid."""

    flows: dict[FKey, BaseRow] = field(default_factory=dict)
    groups: dict[frozenset[str], str] = field(default_factory=dict)


def base_plan(cache: BaseCache, want: dict[FKey, WantFlow]) -> list[Op]:
    """The plain dict-of-frozensets diff (no group resizing, no duplicate handling)."""
    ops: list[Op] = []
    named: dict[frozenset[str], list[Any]] = {}

    def ref(dps: frozenset[str]) -> dict[str, Any]:
        if len(dps) == 1:
            (d,) = dps
            return {"logical_datapath": ["uuid", d], "logical_dp_group": ["set", []]}
        g = cache.groups.get(dps)
        if g is not None:
            return {"logical_datapath": ["set", []], "logical_dp_group": ["uuid", g]}
        r = named.get(dps)
        if r is None:
            name = f"g{len(named)}"
            ops.append({"op": "insert", "table": "Logical_DP_Group", "uuid-name": name,
                        "row": {"datapaths": ["set", [["uuid", d] for d in sorted(dps)]]}})
            r = named[dps] = ["named-uuid", name]
        return {"logical_datapath": ["set", []], "logical_dp_group": r}

    for k, have in cache.flows.items():
        if k not in want:
            ops.append({"op": "delete", "table": "Logical_Flow",
                        "where": [["_uuid", "==", ["uuid", have[0]]]]})
    for k, w in want.items():
        cur = cache.flows.get(k)
        if cur is None:
            row = {"pipeline": k[1], "table_id": k[2], "priority": k[3], "match": k[4], "actions": k[5],
                   "external_ids": _omap(w.ext), "tags": _omap(w.tags), **ref(w.dps)}
            if k[6]:
                row["controller_meter"] = k[6]
            ops.append({"op": "insert", "table": "Logical_Flow", "row": row})
            continue
        upd: dict[str, Any] = {}
        if cur[1] != w.dps:
            upd.update(ref(w.dps))
        if cur[2] != w.ext:
            upd["external_ids"] = _omap(w.ext)
        if cur[3] != w.tags:
            upd["tags"] = _omap(w.tags)
        if upd:
            ops.append({"op": "update", "table": "Logical_Flow", "where": [["_uuid", "==", ["uuid", cur[0]]]],
                        "row": upd})
    return ops


def base_apply(want: dict[FKey, WantFlow], ops: list[Op], results: list[Any]) -> BaseCache:
    """The baseline's cache after committing a cold plan."""
    c = BaseCache()
    names: dict[str, str] = {}
    flow_results = []
    for op, r in zip(ops, results, strict=True):
        if op["table"] == "Logical_DP_Group":
            names[op["uuid-name"]] = g = str(r["uuid"][1])
            c.groups[frozenset(d[1] for d in op["row"]["datapaths"][1])] = g
        else:
            flow_results.append(str(r["uuid"][1]))
    for (k, w), u in zip(want.items(), flow_results, strict=True):
        c.flows[k] = (u, w.dps, w.ext, w.tags)
    return c


# --------------------------------------------------------------------------- (a) the diff


@dataclass(slots=True)
class Cold:
    """The cold plan of (a), re-sent to a real server in (b) (same Datapath_Binding uuids)."""

    dp_uuid: dict[str, str]
    want: dict[FKey, WantFlow]
    plan: Plan


def bench_diff(scale: float, rng: np.random.Generator) -> tuple[list[Result], Cold]:
    ndp = 1000
    t0 = time.perf_counter()
    table = build_table(scale, ndp, rng)
    build_s = time.perf_counter() - t0
    nd = northd_of(ndp)
    dp_uuid = {dp.key: str(uuid.uuid4()) for dp in nd.by_index}
    print(f"diff workload: {len(table):,} flows over {ndp:,} datapaths (FlowTable built in {build_s:.1f} s)")
    out: list[Result] = []

    m, want = measure(lambda: desired_flows(table, nd, dp_uuid, OVN_23_03))
    nflows = len(want)
    ngroups = len({w.dps for w in want.values() if len(w.dps) > 1})
    out.append(Result("desired_flows", "ours", m, f"{nflows:,} flows, {ngroups:,} groups"))

    # Cold: every row an insert.
    m, plan = measure(lambda: plan_sync(FlowCache(), want, {}))
    assert plan.inserted == nflows + ngroups and not plan.updated and not plan.deleted, plan
    out.append(Result("plan cold", "ours", m, f"{len(plan.ops):,} ops",
                      timed(lambda: plan_sync(FlowCache(), want, {}), gc_off=True)[0].cpu))
    m, bops = measure(lambda: base_plan(BaseCache(), want))
    assert len(bops) == len(plan.ops), (len(bops), len(plan.ops))
    out.append(Result("plan cold", "base", m, f"{len(bops):,} ops",
                      timed(lambda: base_plan(BaseCache(), want), gc_off=True)[0].cpu))

    results = fake_results(plan)
    bresults = fake_results(Plan(ops=bops))

    def ours_apply() -> FlowCache:
        c = FlowCache()
        apply_plan(c, plan, results)
        c.loaded = True
        return c

    m, cache = measure(ours_apply)
    out.append(Result("apply", "ours", m, f"{len(cache.flows):,} flows cached"))
    m, bcache = measure(lambda: base_apply(want, bops, bresults))
    out.append(Result("apply", "base", m, f"{len(bcache.flows):,} flows cached"))

    # The cache as re-read after a reconnect: fresh dicts per row (apply_plan shares them with `want`).
    sel = fake_select(cache)  # (kept to the end of the function: ours_load refers to it)

    def ours_load() -> FlowCache:
        c = FlowCache()
        load_cache(c, sel)
        return c

    m, loaded = measure(ours_load)
    assert len(loaded.flows) == nflows and len(loaded.groups) == ngroups
    out.append(Result("load_cache", "ours", m, "from a select reply"))

    # Warm, unchanged: nothing to write (from the re-read cache too: checked, not timed).
    assert not plan_sync(loaded, want, {}).ops
    del loaded
    m, again = measure(lambda: plan_sync(cache, want, {}))
    assert not again.ops, f"unchanged flows produced {len(again.ops)} ops"
    out.append(Result("plan unchanged", "ours", m, "0 ops (asserted)"))
    m, bagain = measure(lambda: base_plan(bcache, want), memory=False)
    assert not bagain
    out.append(Result("plan unchanged", "base", m, "0 ops"))

    # 1% of the flows changed.
    want2 = change_one_percent(want, list(dp_uuid.values()), rng)
    m, p2 = measure(lambda: plan_sync(cache, want2, {}))
    out.append(Result("plan 1% changed", "ours", m,
                      f"{len(p2.ops):,} ops (+{p2.inserted:,} ~{p2.updated:,} -{p2.deleted:,})"))
    m, bops2 = measure(lambda: base_plan(bcache, want2), memory=False)
    out.append(Result("plan 1% changed", "base", m, f"{len(bops2):,} ops"))
    return out, Cold(dp_uuid, want, plan)


# --------------------------------------------------------------------------- (b) a real ovsdb-server


class JsonRpc:
    """A blocking JSON-RPC client on a unix socket: enough for one big transact."""

    def __init__(self, remote: str) -> None:
        assert remote.startswith("unix:")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(remote[5:])
        self.buf = b""
        self.ids = 0

    def close(self) -> None:
        self.sock.close()

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def encode(self, method: str, params: list[Any]) -> tuple[int, bytes]:
        self.ids += 1
        msg = {"id": self.ids, "method": method, "params": params}
        return self.ids, json.dumps(msg, separators=(",", ":")).encode()

    def wait_reply(self, rid: int) -> Any:
        dec = json.JSONDecoder()
        while True:
            if self.buf.rstrip().endswith(b"}"):
                text = self.buf.decode()
                pos = 0
                try:
                    while pos < len(text):
                        msg, end = dec.raw_decode(text, pos)
                        pos = end
                        while pos < len(text) and text[pos].isspace():
                            pos += 1
                        if msg.get("method") == "echo":
                            self.send_bytes(json.dumps({"id": msg["id"], "result": msg["params"],
                                                        "error": None}).encode())
                        elif msg.get("id") == rid:
                            self.buf = text[pos:].encode()
                            if msg.get("error"):
                                raise RuntimeError(f"json-rpc error: {msg['error']}")
                            return msg["result"]
                    self.buf = b""
                except json.JSONDecodeError:
                    self.buf = text[pos:].encode()  # incomplete: read more
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk

    def call(self, method: str, params: list[Any]) -> Any:
        rid, data = self.encode(method, params)
        self.send_bytes(data)
        return self.wait_reply(rid)


def check_results(results: list[Any], nops: int) -> None:
    errors = [r for r in results if isinstance(r, dict) and "error" in r]
    assert not errors, errors[:3]
    assert len(results) >= nops, (len(results), nops)


def create_datapaths(remote: str, dp_uuid: dict[str, str]) -> None:
    """One Datapath_Binding row per NB key, with the given row uuid (the ``uuid`` of an insert)."""
    c = JsonRpc(remote)
    try:
        ops = [{"op": "insert", "table": "Datapath_Binding", "uuid": u,
                "row": {"tunnel_key": i + 1,
                        "external_ids": ["map", [["logical-switch", key], ["name", f"sw{i}"]]]}}
               for i, (key, u) in enumerate(dp_uuid.items())]
        res = c.call("transact", ["OVN_Southbound", *ops])
        check_results(res, len(ops))
        assert [r["uuid"][1] for r in res] == list(dp_uuid.values())
    finally:
        c.close()


class IdlDriver:
    """A python-ovs IDL on SB (SB_Global only) driven synchronously, with RawSb on its session."""

    def __init__(self, remote: str) -> None:
        helper = ovs.db.idl.SchemaHelper(location=str(SB_SCHEMA))
        helper.register_table("SB_Global")
        self.idl = ovs.db.idl.Idl(remote, helper)
        self.raw = RawSb(self.idl, "OVN_Southbound", None)
        self.spin(lambda: self.idl.has_ever_connected() and self.idl.state == self.idl.IDL_S_MONITORING, 30)

    def spin(self, done: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.idl.run()
            if done():
                return
            if time.monotonic() > deadline:
                raise TimeoutError("idl")
            p = ovs.poller.Poller()
            self.idl.wait(p)
            p.timer_wait(100)
            p.block()

    def transact(self, ops: list[Op], timeout: float = 600) -> list[Any]:
        req = self.raw.send(ops, with_lock=False)
        assert req is not None
        box: list[Any] = []

        def done() -> bool:
            ok, res = self.raw.poll(req)
            if ok:
                box.append(res)
            return ok

        self.spin(done, timeout)
        if isinstance(box[0], str):
            raise RuntimeError(box[0])
        return list(box[0])

    def close(self) -> None:
        self.idl.close()


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(slots=True)
class Span:
    """Wall time, our CPU time and the server's CPU time over a piece of work."""

    server_pid: int
    wall: float = 0.0
    cpu: float = 0.0
    server_cpu: float = 0.0
    _t: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __enter__(self) -> Self:
        self._t = (time.perf_counter(), time.process_time(), proc_cpu(self.server_pid))
        return self

    def __exit__(self, *exc: object) -> None:
        w, c, sc = self._t
        self.wall = time.perf_counter() - w
        self.cpu = time.process_time() - c
        self.server_cpu = proc_cpu(self.server_pid) - sc


@dataclass(slots=True)
class ServerResult:
    flows: int
    client: str
    ops: int
    mib: float
    span: Span
    note: str = ""


def bench_server(scale: float, rng: np.random.Generator, big: Cold) -> list[ServerResult]:
    out: list[ServerResult] = []
    ndp = len(big.dp_uuid)
    small_table = build_table(0.1 * scale, ndp, rng)
    small_want = desired_flows(small_table, northd_of(ndp), big.dp_uuid, OVN_23_03)
    del small_table
    small = Cold(big.dp_uuid, small_want, plan_sync(FlowCache(), small_want, {}))
    for cold in (small, big):
        want, plan, n = cold.want, cold.plan, len(cold.want)
        with tempfile.TemporaryDirectory(prefix="bench-sb-") as tmp:
            for client in ("socket", "RawSb"):
                srv = OvsdbServer(Path(tmp) / client, "sb", SB_SCHEMA).start()
                assert srv.pid is not None
                try:
                    create_datapaths(srv.remote, cold.dp_uuid)
                    print(f"server: {n:,} flows ({len(plan.ops):,} ops) via {client} ...", flush=True)
                    if client == "socket":
                        c = JsonRpc(srv.remote)
                        try:
                            with Span(srv.pid) as enc:
                                rid, data = c.encode("transact", ["OVN_Southbound", *plan.ops])
                            with Span(srv.pid) as sp:
                                c.send_bytes(data)
                                res = c.wait_reply(rid)
                        finally:
                            c.close()
                        check_results(res, len(plan.ops))
                        out.append(ServerResult(n, "socket", len(plan.ops), len(data) / 2**20, sp,
                                                f"+ json.dumps {enc.cpu:.2f} s cpu"))
                        if cold is small:
                            c = JsonRpc(srv.remote)
                            try:
                                with Span(srv.pid) as sp:
                                    sel = c.call("transact", ["OVN_Southbound", *select_ops()])
                            finally:
                                c.close()
                            assert len(sel[0]["rows"]) == n
                            out.append(ServerResult(n, "socket select", 3, NAN, sp,
                                                    "(compare: RawSb select)"))
                    else:
                        d = IdlDriver(srv.remote)
                        try:
                            with Span(srv.pid) as sp:
                                res = d.transact(plan.ops)
                            check_results(res, len(plan.ops))
                            cache = FlowCache()
                            with Span(srv.pid) as ap:
                                apply_plan(cache, plan, res)
                            out.append(ServerResult(n, "RawSb", len(plan.ops), NAN, sp,
                                                    f"+ apply_plan {ap.cpu:.2f} s cpu"))
                            with Span(srv.pid) as sp:
                                sel = d.transact(select_ops())
                            loaded = FlowCache()
                            with Span(srv.pid) as ld:
                                load_cache(loaded, sel)
                            assert len(loaded.flows) == n, (len(loaded.flows), n)
                            again = plan_sync(loaded, want, {})
                            assert not again.ops, f"re-read cache: {len(again.ops)} ops for unchanged flows"
                            out.append(ServerResult(n, "RawSb select", 3, NAN, sp,
                                                    f"+ load_cache {ld.cpu:.2f} s cpu; re-plan: 0 ops"))
                        finally:
                            d.close()
                finally:
                    srv.stop()
    return out


# --------------------------------------------------------------------------- (c) datapath groups


@dataclass(slots=True)
class ShareResult:
    variant: str
    seconds: float
    groups: int
    group_bytes: int
    insert_bytes: int


def build_lb_network(
    scale: float, rng: np.random.Generator
) -> tuple[FlowTable, Northd, list[tuple[str, Any]]]:
    """The FlowTable, the datapaths and (lb name, datapath indices) of an ovn-kubernetes-like network."""
    nsw, nlb, ports = 250, max(10, int(30_000 * scale)), 110
    t = FlowTable(nsw)
    all_sw = np.arange(nsw, dtype=np.int64)
    for j in range(60):
        t.add_many(all_sw, (LS_IN_PRE_STATEFUL, LS_OUT_PRE_ACL, LS_IN_ACL)[j % 3], j, f"reg0[{j % 32}] == 1",
                   "next;")
    for sw in range(nsw):
        for p in range(ports):
            port = f"pod-{sw}-{p}"
            mac = f"0a:58:{sw >> 8:02x}:{sw & 255:02x}:00:{p:02x}"
            t.add(sw, LS_IN_CHECK_PORT_SEC, 50, f'inport == "{port}"',
                  "reg0[15] = check_in_port_sec(); next;", io_port=port)
            t.add(sw, LS_IN_L2_LKUP, 50, f"eth.dst == {mac}", f'outport = "{port}"; output;')
            t.add(sw, LS_OUT_APPLY_PORT_SEC, 50, f'outport == "{port}"', "output;", io_port=port)
    pools = [rng.choice(nsw, size=int(rng.integers(10, 101)), replace=False) for _ in range(20)]
    lbs: list[tuple[str, Any]] = []
    for i in range(nlb):
        r = i % 10
        if r < 6:
            dps: Any = all_sw
        elif r < 9:
            dps = np.array([(i // 10) % nsw], dtype=np.int64)  # spread over all the nodes
        else:
            dps = pools[(i // 10) % len(pools)]
        vip = f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"
        name = f"Service_ns{i % 50}/svc{i}_TCP_cluster"
        lbs.append((name, dps))
        t.add_many(dps, LS_IN_PRE_STATEFUL, 120, f"reg1 == {vip} && reg2[0..15] == 80",
                   "reg0[2] = 1; ct_lb_mark;")
        t.add_many(dps, LS_IN_LB, 120, f"ct.new && ip4.dst == {vip} && tcp.dst == 80",
                   f"reg0[1] = 0; ct_lb_mark(backends=10.{(i >> 8) & 255}.{i & 255}.1:8080);")
    return t, northd_of(nsw), lbs


def want_lbs_of(lbs: list[tuple[str, Any]], dp_uuid: dict[str, str], nd: Northd) -> dict[str, WantLb]:
    out: dict[str, WantLb] = {}
    for i, (name, dps) in enumerate(lbs):
        key = str(uuid.UUID(int=i + 1))
        vip = f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"
        backend = f"10.{(i >> 8) & 255}.{i & 255}"
        cols = {
            "name": name,
            "vips": _omap({f"{vip}:80": f"{backend}.1:8080,{backend}.2:8080"}),
            "protocol": "tcp",
            "options": _omap({"hairpin_orig_tuple": "true", "event": "false", "reject": "true"}),
            "external_ids": _omap({"k8s.ovn.org/kind": "Service", "k8s.ovn.org/owner": name, "lb_id": key}),
        }
        out[key] = WantLb(frozenset(dp_uuid[nd.by_index[int(d)].key] for d in dps), cols)
    return out


def plan_bytes(plan: Plan) -> tuple[int, int, int]:
    """(groups inserted, bytes of the group inserts, bytes of all inserts)."""
    groups = gbytes = total = 0
    for op in plan.ops:
        if op["op"] != "insert":
            continue
        n = len(json.dumps(op, separators=(",", ":")))
        total += n
        if op["table"] == "Logical_DP_Group":
            groups += 1
            gbytes += n
    return groups, gbytes, total


def bench_sharing(scale: float, rng: np.random.Generator) -> list[ShareResult]:
    table, nd, lbs = build_lb_network(scale, rng)
    dp_uuid = {dp.key: str(uuid.uuid4()) for dp in nd.by_index}
    want = desired_flows(table, nd, dp_uuid, OVN_23_03)
    want_lbs = want_lbs_of(lbs, dp_uuid, nd)
    print(f"sharing workload: {len(want_lbs):,} load balancers, {len(want):,} flows over 250 switches")
    out: list[ShareResult] = []
    gc.collect()
    m, shared = timed(lambda: plan_sync(FlowCache(), want, want_lbs))
    out.append(ShareResult("one plan", m.cpu, *plan_bytes(shared)))
    del shared
    gc.collect()
    m, p_flows = timed(lambda: plan_sync(FlowCache(), want, {}))
    m2, p_lbs = timed(lambda: plan_sync(FlowCache(), {}, want_lbs))
    f, lb = plan_bytes(p_flows), plan_bytes(p_lbs)
    both = [x + y for x, y in zip(f, lb, strict=True)]
    out.append(ShareResult("separate (flows + lbs)", m.cpu + m2.cpu, both[0], both[1], both[2]))
    out.append(ShareResult("  of which flows", m.cpu, *f))
    out.append(ShareResult("  of which lbs", m2.cpu, *lb))
    return out


# --------------------------------------------------------------------------- main


def _f(v: float, width: int, prec: int) -> str:
    return f"{'-':>{width}}" if math.isnan(v) else f"{v:{width}.{prec}f}"


def print_diff(diff: list[Result]) -> None:
    print()
    print("(a) SB flow diff")
    print(f"{'scenario':<16} {'impl':<5} {'cpu s':>7} {'wall s':>7} {'no-gc s':>7} {'peak MiB':>8} "
          f"{'kept MiB':>8} {'cpu x':>6} {'mem x':>6}  note")
    by = {(r.scenario, r.impl): r for r in diff}
    for r in diff:
        base = by.get((r.scenario, "base"))
        m = r.m
        tx = base.m.cpu / m.cpu if base and m.cpu > 0 else NAN
        mx = base.m.peak_mib / m.peak_mib if base and m.peak_mib > 0 else NAN
        print(f"{r.scenario:<16} {r.impl:<5} {_f(m.cpu, 7, 3)} {_f(m.wall, 7, 3)} {_f(r.nogc_cpu, 7, 3)} "
              f"{_f(m.peak_mib, 8, 1)} {_f(m.retained_mib, 8, 1)} {_f(tx, 6, 2)} {_f(mx, 6, 2)}  {r.note}")
    print("(cpu x, mem x: base divided by this row, > 1 means ours is better; no-gc: cpu s with the cyclic"
          "\n GC disabled; kept: memory the result holds)")


def print_server(srv: list[ServerResult]) -> None:
    print()
    print("(b) one cold transact against a real ovsdb-server (1,000 Datapath_Binding rows)")
    print(f"{'flows':>9} {'client':<13} {'ops':>9} {'MiB':>6} {'wall s':>7} {'cpu s':>7} {'srv cpu s':>9} "
          f"{'flows/s':>8}  note")
    for s in srv:
        sp = s.span
        rate = s.flows / sp.wall if sp.wall else 0.0
        print(f"{s.flows:>9,} {s.client:<13} {s.ops:>9,} {_f(s.mib, 6, 1)} {sp.wall:>7.2f} {sp.cpu:>7.2f} "
              f"{sp.server_cpu:>9.2f} {rate:>8,.0f}  {s.note}")
    print("(wall s: first byte sent to the parsed reply; cpu s: ours in that time (RawSb: its encoding"
          "\n included); srv cpu s: ovsdb-server's)")


def print_sharing(share: list[ShareResult]) -> None:
    print()
    print("(c) Logical_DP_Group rows of flows and load balancers (cold plans; never shared, as the reference)")
    print(f"{'variant':<24} {'cpu s':>7} {'groups':>7} {'group KiB':>10} {'insert MiB':>11}")
    for s in share:
        secs = _f(s.seconds, 7, 2)
        print(f"{s.variant:<24} {secs} {s.groups:>7,} {s.group_bytes / 1024:>10.1f} "
              f"{s.insert_bytes / 2**20:>11.2f}")
    sh, sep = share[0], share[1]
    print(f"separate minus one plan: {sep.groups - sh.groups:,} groups "
          f"({(sep.groups - sh.groups) / sep.groups:.1%} of groups, ratio {sep.groups / sh.groups:.2f}x), "
          f"{(sep.insert_bytes - sh.insert_bytes) / 1024:,.1f} KiB "
          f"({(sep.insert_bytes - sh.insert_bytes) / sep.insert_bytes:.2%} of insert bytes; "
          f"group bytes ratio {sep.group_bytes / sh.group_bytes:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-server", action="store_true", help="skip (b), the real ovsdb-server")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t_start = time.perf_counter()
    diff, cold = bench_diff(args.scale, rng)
    t_diff = time.perf_counter() - t_start
    print_diff(diff)
    t0 = time.perf_counter()
    if not args.skip_server:
        print_server(bench_server(args.scale, rng, cold))
    t_server = time.perf_counter() - t0
    del cold
    t0 = time.perf_counter()
    print_sharing(bench_sharing(args.scale, rng))
    t_share = time.perf_counter() - t0
    print(f"\nsections: (a) {t_diff:.0f} s, (b) {t_server:.0f} s, (c) {t_share:.0f} s")
    print(f"\ntotal wall time {time.perf_counter() - t_start:.1f} s (pid {os.getpid()})")


if __name__ == "__main__":
    main()
