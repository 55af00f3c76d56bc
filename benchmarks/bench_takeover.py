#!/usr/bin/env python3
"""Takeover after kill -9 of the active northd: ours (hot standby) against the reference.

usage: bench_takeover.py [--scales 10,50,200] [--rounds N] [--no-hot-standby]

For each scale, the mixed workload (``../shared/workloads/mixed.py NB S 10 S``) is built once;
then each side in turn (two reference ``ovn-northd`` processes, then two of ours) runs an active
and a standby on the same NB/SB.  Each round: kill -9 the active, then at once run one
``ovn-nbctl --wait=sb`` transaction (a new logical switch port); the time from the kill to that
command returning is the takeover time.  The killed one is restarted as the new standby and given
time to settle before the next round.  Also reported: the standby's CPU seconds and RSS while it
stands by (ours computes the model and flows as a hot standby; the reference idles).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.servers import (
    NB_SCHEMA,
    SB_SCHEMA,
    OurNorthd,
    OvsdbServer,
    ReferenceNorthd,
    nbctl,
    pid_alive,
)

MIXED = Path(__file__).resolve().parent.parent.parent / "shared" / "workloads" / "mixed.py"


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Pair:
    """Two northds of one kind on the same databases; ``active`` holds the lock."""

    def __init__(self, kind: str, d: Path, nb: str, sb: str, extra: list[str]) -> None:
        self.kind, self.d, self.nb, self.sb, self.extra = kind, d, nb, sb, extra
        self.n = 0

    def start(self) -> Any:
        self.n += 1
        sub = self.d / f"{self.kind}{self.n}"
        sub.mkdir()
        if self.kind == "ours":
            return OurNorthd(sub, self.nb, self.sb, extra_args=self.extra).start()
        return ReferenceNorthd(sub, self.nb, self.sb).start()


def pid_of(daemon: Any) -> int:
    return int(daemon.pid)


def kill9(daemon: Any) -> None:
    os.kill(pid_of(daemon), signal.SIGKILL)
    if getattr(daemon, "proc", None) is not None:
        daemon.proc.wait()
        daemon.proc = None
    else:
        while pid_alive(pid_of(daemon)):  # (a zombie counts as gone)
            time.sleep(0.001)
        daemon.pid = None


def run_side(kind: str, scale: int, args: argparse.Namespace, base: Path) -> dict[str, Any]:
    d = base / f"{kind}-{scale}"
    d.mkdir()
    nb = OvsdbServer(d, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(d, "sb", SB_SCHEMA).start()
    extra = ["--no-hot-standby"] if args.no_hot_standby else []
    pair = Pair(kind, d, nb.remote, sb.remote, extra)
    active = standby = None
    try:
        subprocess.run([sys.executable, str(MIXED), nb.remote, str(scale), "10", str(scale)], check=True,
                       capture_output=True)
        active = pair.start()
        nbctl(nb.remote, "sync", wait="sb", timeout=900)
        settle = args.settle + scale * args.settle_per_switch
        standby = pair.start()
        time.sleep(settle)
        cpu0, t0 = cpu_seconds(pid_of(standby)), time.monotonic()
        nbctl(nb.remote, "lsp-add", "ls1", "warm0", wait="sb", timeout=900)
        time.sleep(settle)
        standby_cpu = (cpu_seconds(pid_of(standby)) - cpu0) / (time.monotonic() - t0)
        standby_rss = rss_mb(pid_of(standby))
        times: list[float] = []
        for i in range(args.rounds):
            t = time.monotonic()
            kill9(active)
            nbctl(nb.remote, "lsp-add", "ls1", f"take{i}", wait="sb", timeout=900)
            times.append(time.monotonic() - t)
            active, standby = standby, pair.start()
            time.sleep(settle)
        return {"times": times, "standby_cpu": standby_cpu, "standby_rss": standby_rss}
    finally:
        for x in (active, standby):
            if x is not None and getattr(x, "pid", None):
                x.stop()
        sb.stop()
        nb.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="10,50,200")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--settle", type=float, default=3.0, help="seconds for a restarted standby to settle")
    ap.add_argument("--settle-per-switch", type=float, default=0.25,
                    help="plus this many seconds per switch of the scale (a standby's first full compute)")
    ap.add_argument("--no-hot-standby", action="store_true", help="run ours with --no-hot-standby")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in [int(s) for s in args.scales.split(",")]:
            ref = run_side("reference", scale, args, Path(tmp))
            ours = run_side("ours", scale, args, Path(tmp))
            rows.append((scale, ref, ours))
            r50, o50 = statistics.median(ref["times"]), statistics.median(ours["times"])
            print(f"mixed {scale}/10/{scale}: takeover p50 ref {r50 * 1000:.0f} ms, ours {o50 * 1000:.0f} ms, "
                  f"ratio {o50 / r50:.2f}; max ref {max(ref['times']) * 1000:.0f} ms, ours "
                  f"{max(ours['times']) * 1000:.0f} ms; standby CPU ref {ref['standby_cpu']:.3f}, ours "
                  f"{ours['standby_cpu']:.3f} (fraction of a core); standby RSS ref {ref['standby_rss']:.0f} MB, "
                  f"ours {ours['standby_rss']:.0f} MB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
