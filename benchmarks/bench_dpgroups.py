#!/usr/bin/env python3
"""Datapath groups: the numpy bitmap flow table against plain Python sets.

usage: bench_dpgroups.py [--scale F] [--seed N]

Scenarios (at --scale 1):

* build: 300,000 flows over 1,000 datapaths, added one (flow, datapath) at a time
  as builders do: 250 single-datapath flows per datapath, 100 flows on every
  datapath, and 49,900 flows each on one of 2,000 random datapath sets of 2..20.
  Done without owners, and with an owner per datapath (the incremental case).
* groups: datapath-group dedup of the flows built above.
* dedup: 200,000 bitmaps over 1,000 datapaths drawn from 5,000 distinct sets.
* lbs: 30,000 load balancers on 250 switches, two flows each, added per LB on its
  datapath set (a third on all switches, the rest on one of 500 random sets),
  then grouped.

Each is timed without tracemalloc, then run again under tracemalloc for peak
memory (the input strings are built beforehand and shared, so not counted).  The
baseline is a dict of flow key -> set of datapath ids, and frozenset dict dedup;
its owner tracking is a list of (key, dp) per owner plus a Counter of references.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ovn_northd_py.lflow.bitmap import dedup_rows, pack
from ovn_northd_py.lflow.stages import LS_IN_L2_LKUP, LS_IN_LB, LS_IN_PRE_STATEFUL, Stage
from ovn_northd_py.lflow.table import FlowTable

Key = tuple[Stage, int, str, str, str | None]


# -- the baseline ----------------------------------------------------------------


@dataclass(slots=True)
class SetTable:
    """The plain-Python way: flow key -> set of datapath ids."""

    flows: dict[Key, set[int]] = field(default_factory=dict)
    meta: dict[Key, tuple[str | None, str | None]] = field(default_factory=dict)
    owners: dict[Hashable, list[tuple[Key, int]]] = field(default_factory=dict)
    refs: Counter[tuple[Key, int]] = field(default_factory=Counter)

    def add(
        self,
        dp: int,
        stage: Stage,
        priority: int,
        match: str,
        actions: str,
        io_port: str | None = None,
        hint: str | None = None,
        controller_meter: str | None = None,
        owner: Hashable | None = None,
    ) -> None:
        key = (stage, priority, match, actions, controller_meter)
        dps = self.flows.get(key)
        if dps is None:
            dps = self.flows[key] = set()
            self.meta[key] = (hint, io_port)
        dps.add(dp)
        if owner is not None:
            self.owners.setdefault(owner, []).append((key, dp))
            self.refs[key, dp] += 1

    def add_many(self, dps: list[int], stage: Stage, priority: int, match: str, actions: str) -> None:
        key = (stage, priority, match, actions, None)
        cur = self.flows.get(key)
        if cur is None:
            self.flows[key] = set(dps)
            self.meta[key] = (None, None)
        else:
            cur.update(dps)

    def groups(self) -> tuple[dict[Key, int], int]:
        ids: dict[frozenset[int], int] = {}
        out: dict[Key, int] = {}
        for key, dps in self.flows.items():
            if len(dps) >= 2:
                out[key] = ids.setdefault(frozenset(dps), len(ids))
        return out, len(ids)


def set_dedup(sets: list[set[int]]) -> int:
    ids: dict[frozenset[int], int] = {}
    for s in sets:
        ids.setdefault(frozenset(s), len(ids))
    return len(ids)


# -- workloads ----------------------------------------------------------------------


@dataclass(slots=True)
class FlowSpec:
    stage: Stage
    priority: int
    match: str
    actions: str
    dps: list[int]


def build_workload(scale: float, rng: np.random.Generator) -> tuple[int, list[FlowSpec]]:
    ndp = max(10, int(1000 * scale))
    per_dp, everywhere, shared, nsets = int(250 * scale), 100, int(49_900 * scale), max(10, int(2000 * scale))
    specs: list[FlowSpec] = []
    for dp in range(ndp):
        for j in range(per_dp):
            specs.append(
                FlowSpec(
                    LS_IN_L2_LKUP,
                    50,
                    f'eth.dst == 00:00:{dp:04x}:{j:04x} && inport == "p{dp}-{j}"',
                    f'outport = "p{dp}-{j}"; output;',
                    [dp],
                )
            )
    all_dps = list(range(ndp))
    for j in range(everywhere):
        specs.append(FlowSpec(LS_IN_PRE_STATEFUL, j, f"reg0[{j % 32}] == 1", "ct_next;", all_dps))
    sets = [
        sorted(rng.choice(ndp, size=int(rng.integers(2, 21)), replace=False).tolist()) for _ in range(nsets)
    ]
    choice = rng.integers(0, nsets, size=shared)
    for j in range(shared):
        specs.append(
            FlowSpec(
                LS_IN_LB,
                100,
                f"ip4.dst == 10.{j >> 16}.{(j >> 8) & 255}.{j & 255}",
                f"ct_lb_mark(backends=20.0.{j & 255}.1:80);",
                sets[int(choice[j])],
            )
        )
    return ndp, specs


def build_lbs(scale: float, rng: np.random.Generator) -> list[FlowSpec]:
    nsw, nlb, nsets = 250, int(30_000 * scale), 500
    all_sw = list(range(nsw))
    sets = [
        sorted(rng.choice(nsw, size=int(rng.integers(1, nsw + 1)), replace=False).tolist())
        for _ in range(nsets)
    ]
    specs: list[FlowSpec] = []
    for i in range(nlb):
        dps = all_sw if i % 3 == 0 else sets[int(rng.integers(0, nsets))]
        vip = f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"
        specs.append(
            FlowSpec(
                LS_IN_PRE_STATEFUL, 120, f"reg1 == {vip} && reg2[0..15] == 80", "reg0[2] = 1; next;", dps
            )
        )
        specs.append(
            FlowSpec(
                LS_IN_LB,
                120,
                f"ct.new && ip4.dst == {vip} && tcp.dst == 80",
                f"reg0[1] = 0; ct_lb_mark(backends=10.{i >> 8 & 255}.{i & 255}.1:8080);",
                dps,
            )
        )
    return specs


# -- runners ---------------------------------------------------------------------------


def fill(table: FlowTable | SetTable, specs: list[FlowSpec], owners: bool) -> None:
    add = table.add
    for s in specs:
        st, pr, m, a = s.stage, s.priority, s.match, s.actions
        if owners:
            for dp in s.dps:
                add(dp, st, pr, m, a, owner=("ls", dp))
        else:
            for dp in s.dps:
                add(dp, st, pr, m, a)


def fill_many(table: FlowTable | SetTable, specs: list[FlowSpec]) -> None:
    for s in specs:
        table.add_many(s.dps, s.stage, s.priority, s.match, s.actions)


def ngroups(table: FlowTable | SetTable) -> int:
    if isinstance(table, FlowTable):
        return len(table.groups())
    return table.groups()[1]


@dataclass(slots=True)
class Result:
    scenario: str
    impl: str
    seconds: float
    peak_mib: float
    note: str


def measure(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(seconds without tracemalloc, peak MiB under tracemalloc, result of the timed run)."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    secs = time.perf_counter() - t0
    del out
    gc.collect()
    tracemalloc.start()
    out = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return secs, peak / 2**20, out


def bench_build(scale: float, rng: np.random.Generator) -> list[Result]:
    ndp, specs = build_workload(scale, rng)
    nflows, npairs = len(specs), sum(len(s.dps) for s in specs)
    print(f"build workload: {nflows:,} flows, {npairs:,} (flow, datapath) adds over {ndp:,} datapaths")
    results: list[Result] = []
    makers: list[tuple[str, Callable[[], FlowTable | SetTable]]] = [
        ("numpy", lambda: FlowTable(ndp)),
        ("sets", SetTable),
    ]
    for owners in (False, True):
        label = "build+owners" if owners else "build"
        for impl, make in makers:

            def run(make: Callable[[], FlowTable | SetTable] = make, owners: bool = owners) -> Any:
                t = make()
                fill(t, specs, owners)
                return t

            secs, peak, table = measure(run)
            size = len(table) if isinstance(table, FlowTable) else len(table.flows)
            assert size == nflows, (size, nflows)
            results.append(Result(label, impl, secs, peak, f"{nflows:,} flows"))
            if not owners:

                def group(table: FlowTable | SetTable = table) -> int:
                    return ngroups(table)

                gsecs, gpeak, n = measure(group)
                results.append(Result("groups", impl, gsecs, gpeak, f"{n:,} groups"))
            del table
    return results


def bench_dedup(scale: float, rng: np.random.Generator, ndp: int = 1000) -> list[Result]:
    nrows, nsets = int(200_000 * scale), 5_000
    base_sets = [
        set(rng.choice(ndp, size=int(rng.integers(2, 64)), replace=False).tolist()) for _ in range(nsets)
    ]
    pick = rng.integers(0, nsets, size=nrows)
    matrix = np.stack([pack(s, ndp) for s in base_sets])[pick]
    py_sets = [base_sets[int(i)] for i in pick]

    def numpy_dedup() -> int:
        return int(dedup_rows(matrix)[0].shape[0])

    def sets_dedup() -> int:
        return set_dedup(py_sets)

    out = []
    for impl, fn in (("numpy", numpy_dedup), ("sets", sets_dedup)):
        secs, peak, n = measure(fn)
        out.append(Result("dedup", impl, secs, peak, f"{n:,} groups of {nrows:,}"))
    return out


def bench_lbs(scale: float, rng: np.random.Generator) -> list[Result]:
    lb_specs = build_lbs(scale, rng)
    print(f"lb workload: {len(lb_specs) // 2:,} load balancers, {len(lb_specs):,} flows over 250 switches")
    out = []
    makers: list[tuple[str, Callable[[], FlowTable | SetTable]]] = [
        ("numpy", lambda: FlowTable(250)),
        ("sets", SetTable),
    ]
    for impl, make in makers:

        def run_lb(make: Callable[[], FlowTable | SetTable] = make) -> int:
            t = make()
            fill_many(t, lb_specs)
            return ngroups(t)

        secs, peak, n = measure(run_lb)
        out.append(Result("lbs+groups", impl, secs, peak, f"{n:,} groups"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    results = bench_build(args.scale, rng) + bench_dedup(args.scale, rng) + bench_lbs(args.scale, rng)
    print()
    print(f"{'scenario':<14} {'impl':<6} {'time s':>8} {'peak MiB':>9} {'time x':>7} {'mem x':>7}  note")
    by = {(r.scenario, r.impl): r for r in results}
    for r in results:
        base = by[r.scenario, "sets"]
        tx = base.seconds / r.seconds if r.seconds else float("inf")
        mx = base.peak_mib / r.peak_mib if r.peak_mib else float("inf")
        print(
            f"{r.scenario:<14} {r.impl:<6} {r.seconds:>8.3f} {r.peak_mib:>9.1f} {tx:>7.2f} {mx:>7.2f}  {r.note}"
        )
    print("\n(time x, mem x: the sets baseline divided by this row; > 1 means numpy is better)")
    print(f"total wall time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
