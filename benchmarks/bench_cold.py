"""Cold sync, repeated: ours against the reference ovn-northd, alternating, medians and ratios.

usage: bench_cold.py [--workload mixed|ovnk|neutron] [--scales 100:30:500:20] [--rounds N]
                     [--release 23.03|25.03|26.03] [--chassis N] [--seed-dir DIR] [--json FILE]

``bench_latency.py`` measures a side's cold sync once, and on a shared two-core machine one sample
moves by a fifth from run to run (the same commit measured 0.87 and 1.17 of 23.03 at 100 ovn-k
nodes within the hour).  Here each round cold-syncs every side in turn -- the order reversed every
other round (A B, B A, ...) -- on a fresh copy of the scale's NB and an empty SB (with
``--chassis`` chassis), each side alone on the machine: memory prefaulted (``--prefault-mb``, see
``bench_latency.prefault_memory``), servers and daemon started, ``ovn-nbctl --wait=sb sync``,
then the daemon's CPU seconds, its RSS after ``--settle`` seconds, and everything stopped.  Printed:
each sample, and per side the median, min and max of the wall time, the daemon's CPU and the
settled RSS, with the ratios of the medians (ours / reference).

The NB of each scale is built as ``bench_latency.py`` builds it (``--seed-dir`` shares its backups).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ovn_northd_py
from ovn_northd_py.devtools.tools import Tools, ToolsUnavailable, tools_for
from ovn_northd_py.parity.harness import reference_available, tools_workdir
from ovn_northd_py.release import DEFAULT_RELEASE, RELEASES, Release

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_latency import (
    SIDE_ERRORS,
    WORKLOADS,
    Scale,
    add_chassis,
    make_side,
    prefault_memory,
    proc_cpu_s,
    proc_status_mb,
    round_order,
    seed_for,
    wait_sync,
)


@dataclass(slots=True)
class ColdSamples:
    """One side's cold syncs: wall seconds, the daemon's CPU seconds, settled RSS MB."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, dict[str, float]]:
        return {name: _stats(values) for name, values in (("wall_s", self.wall), ("cpu_s", self.cpu),
                                                           ("rss_mb", self.rss)) if values}


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def cold_once(label: str, workdir: Path, seed: Path, ref_tools: Tools, release: Release, chassis: int,
              settle: float, sync_timeout: float, prefault_mb: int) -> tuple[float, float, float]:
    """One cold sync of side ``label`` in ``workdir``: (wall s, daemon CPU s, settled RSS MB)."""
    side = make_side(label, workdir, seed, ref_tools, ref_tools, release)
    with tools_workdir(side.tools, side.workdir):
        try:
            prefault_memory(prefault_mb)
            side.nb.start()
            side.sb.start()
            if chassis:
                add_chassis(side.sb.remote, chassis)
            t0 = time.monotonic()
            side.pid = side.start_daemon(side)
            wait_sync(side, sync_timeout)
            wall = time.monotonic() - t0
            cpu = proc_cpu_s(side.pid)
            time.sleep(settle)
            return wall, cpu, proc_status_mb(side.pid, "VmRSS")
        finally:
            side.stop()


def _ratio(ours: dict[str, Any], ref: dict[str, Any], key: str) -> float | None:
    o, r = ours.get(key), ref.get(key)
    return o["median"] / r["median"] if o and r and r["median"] else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="ovnk", choices=sorted(WORKLOADS), help="the NB builder (default ovnk)")
    ap.add_argument("--scales", default="100:30:500:20", help="comma-separated scales, as bench_latency.py's "
                    "(default 100:30:500:20)")
    ap.add_argument("--rounds", type=int, default=5, help="cold syncs per side (default 5)")
    ap.add_argument("--release", choices=list(RELEASES), default=DEFAULT_RELEASE.name,
                    help=f"OVN release of the reference and the schemas (default {DEFAULT_RELEASE.name})")
    ap.add_argument("--from-chroot", action="store_true", default=None,
                    help="run the reference from the release's chroot even when the host's OVN is that release")
    ap.add_argument("--chassis", type=int, default=0, metavar="N", help="N chassis in SB before each start")
    ap.add_argument("--settle", type=float, default=2.0, help="seconds after the sync before reading RSS")
    ap.add_argument("--sync-timeout", type=float, default=900.0, help="cold sync timeout, seconds")
    ap.add_argument("--prefault-mb", type=int, default=6144, metavar="MB",
                    help="memory touched before each cold sync (default 6144; 0: none)")
    ap.add_argument("--sides", default="reference,ours", help="which sides, in order (default reference,ours)")
    ap.add_argument("--seed-dir", type=Path, default=None, help="keep/reuse the NB backups per scale here")
    ap.add_argument("--json", type=Path, default=None, help="write the results to this JSON file")
    args = ap.parse_args(argv)
    release = RELEASES[args.release]
    if not reference_available(release, args.from_chroot):
        print(f"reference ovn-northd of OVN {release.name} not installed (scripts/chroots.sh {release.suite})",
              file=sys.stderr)
        return 2
    try:
        ref_tools = tools_for(release, args.from_chroot)
        scales = [Scale.parse(s, args.workload) for s in args.scales.split(",") if s]
    except (ToolsUnavailable, argparse.ArgumentTypeError) as exc:
        print(exc, file=sys.stderr)
        return 2
    labels = [s for s in args.sides.split(",") if s]
    if not labels or not set(labels) <= {"reference", "ours"}:
        ap.error("--sides: reference and/or ours")
    compileall.compile_dir(str(Path(ovn_northd_py.__file__).parent), quiet=1)
    print(f"reference: {ref_tools.describe()}", flush=True)
    report: dict[str, Any] = {"host": {"cpus": os.cpu_count(), "python": platform.python_version()},
                              "args": {k: str(v) for k, v in vars(args).items()},
                              "reference": ref_tools.describe(), "scales": []}
    wd = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    try:
        for scale in scales:
            seed, _ = seed_for(scale, wd / scale.slug, args.seed_dir, release)
            print(f"{scale.workload} {scale}: {args.rounds} cold syncs per side, alternating", flush=True)
            samples = {label: ColdSamples() for label in labels}
            for r in range(args.rounds):
                for label in round_order(labels, r):  # (A B, B A, ...)
                    s = samples[label]
                    try:
                        wall, cpu, rss = cold_once(label, wd / scale.slug / f"r{r}", seed, ref_tools, release,
                                                   args.chassis, args.settle, args.sync_timeout, args.prefault_mb)
                    except SIDE_ERRORS as exc:
                        s.errors.append(str(exc))
                        print(f"  round {r} {label:<9} ERROR {exc}", flush=True)
                        continue
                    s.wall.append(wall)
                    s.cpu.append(cpu)
                    s.rss.append(rss)
                    print(f"  round {r} {label:<9} {wall:7.2f} s  CPU {cpu:6.2f} s  RSS {rss:7.1f} MB", flush=True)
            summary = {label: s.summary() for label, s in samples.items()}
            entry: dict[str, Any] = {"scale": str(scale), "sides": {k: {**v, "samples": {
                "wall_s": samples[k].wall, "cpu_s": samples[k].cpu, "rss_mb": samples[k].rss,
                "errors": samples[k].errors}} for k, v in summary.items()}}
            print(f"{'median (min-max)':<18}" + "".join(f"{label:>28}" for label in labels) + "   ours/ref")
            for key, unit in (("wall_s", "s"), ("cpu_s", "s"), ("rss_mb", "MB")):
                cells = []
                for label in labels:
                    st = summary[label].get(key)
                    cells.append(f"{st['median']:.2f} ({st['min']:.2f}-{st['max']:.2f}) {unit}" if st else "-")
                rat = _ratio(summary.get("ours", {}), summary.get("reference", {}), key)
                entry.setdefault("ratios", {})[key] = rat
                print(f"{key:<18}" + "".join(f"{c:>28}" for c in cells) + (f"   {rat:.2f}" if rat else ""))
            report["scales"].append(entry)
            if args.json:
                args.json.write_text(json.dumps(report, indent=1) + "\n")
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
