#!/usr/bin/env python3
"""The floor of a one-shot ``ovn-nbctl --wait=sb`` change: ``ovn-nbctl``'s own time, with no northd.

usage: bench_nbctl_floor.py [--workload ovnk] [--scale 100:30:500:20] [--changes node-add,...]
                            [--rounds N] [--seed-dir DIR] [--release 23.03|25.03|26.03]
                            [--compare BENCH.json]

A one-shot ``ovn-nbctl`` connects, reads the tables its commands name (for the ovn-kubernetes-like
network most of the NB), commits, and with ``--wait=sb`` waits for NB_Global ``sb_cfg``.  Its own
part is paid whichever daemon runs, and bounds the ratio ``bench_latency.py`` can show without
``--nbctl-daemon``: a daemon taking no time at all would be at ``floor / reference``.

For each change kind of ``bench_latency.py`` (same scales, seeds, commands and rounds), on an NB
server alone (no SB, no northd): the kind's ``prepare`` once, then per round its ``setup``, its
``change`` timed without ``--wait`` (process start to exit: connect, read, commit) and its
``undo``.  ``--compare`` takes a ``bench_latency.py --json`` file of the same scale and release
(one-shot mode) and prints, per kind, the reference's and our p50 beside the floor, with
``floor / reference`` (the best ratio a daemon could reach) and ``ours / reference``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import bench_latency as bl

from ovn_northd_py.devtools.servers import OvsdbServer
from ovn_northd_py.devtools.tools import Tools
from ovn_northd_py.release import DEFAULT_RELEASE, RELEASES


def _names(nb_remote: str, tools: Tools, base: dict[str, str]) -> dict[str, str]:
    names = dict(base)
    if "lb_group" in names:  # (ovnk: the cluster-wide groups by uuid, as bench_latency's lb_group_uuids)
        for key, name in (("lbg_cluster", "clusterLBGroup"), ("lbg_switch", "clusterSwitchLBGroup"),
                          ("lbg_router", "clusterRouterLBGroup")):
            out = subprocess.run(tools.cmd("ovn-nbctl", f"--db={tools.remote(nb_remote)}", "--bare",
                                           "--columns=_uuid", "find", "load_balancer_group", f"name={name}"),
                                 capture_output=True, text=True, check=True).stdout
            names[key] = out.strip()
    return names


def _timed(nb_remote: str, tools: Tools, commands: bl.CommandsOf, params: dict[str, str], timeout: int) -> float:
    cmds = commands(params) if callable(commands) else commands
    argv = tools.cmd("ovn-nbctl", f"--db={tools.remote(nb_remote)}", f"--timeout={timeout}")
    for n, cmd in enumerate(cmds):
        argv += (["--"] if n else []) + [word.format(**params) for word in cmd]
    t0 = time.perf_counter()
    subprocess.run(argv, capture_output=True, text=True, check=True, timeout=timeout + 10)
    return (time.perf_counter() - t0) * 1000


def floors(args: argparse.Namespace) -> dict[str, float]:
    release = RELEASES[args.release]
    tools = bl.tools_for(release, None)
    scale = bl.Scale.parse(args.scale, args.workload)
    workdir = tools.scratch_dir("nbctl-floor-")
    try:
        seed, _ = bl.seed_for(scale, workdir, args.seed_dir, release)
        db = workdir / "nb.db"
        shutil.copyfile(seed, db)
        nb = OvsdbServer(workdir, "nb", release.nb_schema, db_file=db, tools=tools).start()
        try:
            names = _names(nb.remote, tools, bl.WORKLOADS[args.workload].names())
            out: dict[str, float] = {}
            for kind_name in args.changes.split(","):
                kind = bl.CHANGE_KINDS[kind_name]
                if kind.prepare:
                    _timed(nb.remote, tools, kind.prepare, bl.round_params(0, names), args.timeout)
                lat = bl.Latency()
                for r in range(args.warmup + args.rounds):
                    params = bl.round_params(r + 1, names)
                    if kind.setup:
                        _timed(nb.remote, tools, kind.setup, params, args.timeout)
                    ms = _timed(nb.remote, tools, kind.change, params, args.timeout)
                    if kind.undo:
                        _timed(nb.remote, tools, kind.undo, params, args.timeout)
                    if r >= args.warmup:
                        lat.samples_ms.append(ms)
                out[kind_name] = lat.p50
                print(f"  {kind_name:<22} ovn-nbctl alone p50 {lat.p50:8.1f} ms  p90 {lat.p90:8.1f} ms", flush=True)
            return out
        finally:
            nb.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def compare(floor: dict[str, float], path: Path) -> None:
    doc = json.loads(path.read_text())
    sides = doc["scales"][0]["sides"]
    ref, ours = sides.get("reference", {}).get("changes", {}), sides.get("ours", {}).get("changes", {})
    print(f"\n{'kind':<22} {'floor':>9} {'reference':>10} {'ours':>9} {'floor/ref':>10} {'ours/ref':>9}")
    for kind, f in floor.items():
        r = ref.get(kind, {}).get("p50_ms")
        o = ours.get(kind, {}).get("p50_ms")
        fr = f"{f / r:10.3f}" if r else f"{'-':>10}"
        orr = f"{o / r:9.3f}" if r and o else f"{'-':>9}"
        print(f"{kind:<22} {f:9.1f} {r or float('nan'):10.1f} {o or float('nan'):9.1f} {fr} {orr}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=list(bl.WORKLOADS), default="ovnk", help="NB builder (default ovnk)")
    ap.add_argument("--scale", default="100:30:500:20", help="one scale, as bench_latency's --scales")
    ap.add_argument("--changes", default=",".join(k.name for k in bl._OVNK_KINDS),
                    help="change kinds, comma-separated (bench_latency's; default: the ovn-kubernetes ones)")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per kind (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds per kind first (default 1)")
    ap.add_argument("--timeout", type=int, default=300, help="ovn-nbctl timeout per command, seconds")
    ap.add_argument("--seed-dir", type=Path, default=None, help="reuse bench_latency's NB backups from here")
    ap.add_argument("--release", choices=list(RELEASES), default=DEFAULT_RELEASE.name,
                    help="OVN release of the NB schema and ovn-nbctl (default %(default)s)")
    ap.add_argument("--compare", type=Path, default=None, help="a bench_latency.py --json file to set beside")
    args = ap.parse_args(argv)
    floor = floors(args)
    if args.compare is not None:
        compare(floor, args.compare)
    return 0


if __name__ == "__main__":
    sys.exit(main())
