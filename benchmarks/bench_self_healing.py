#!/usr/bin/env python3
"""Time to repair foreign edits of SB rows northd owns: ours against the reference ovn-northd.

usage: bench_self_healing.py [--switches N] [--ports N] [--gw-routers N] [--rounds N]

Each side in turn gets an NB built by ``../shared/workloads/mixed.py`` and an empty SB, settles,
and then, for each kind of edit and each round, the edit is made with ``ovn-sbctl`` (behind the
daemon's back) and SB is polled until it holds again exactly what it held before.  Kinds:
a logical flow deleted, a foreign logical flow inserted, a flow's actions set to ``drop;``, a
datapath group losing a member, a load balancer's VIPs changed, an address set's addresses
changed.  Prints p50/max per kind and the ratio ours/reference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.servers import (
    NB_SCHEMA,
    SB_SCHEMA,
    OurNorthd,
    OvsdbServer,
    ReferenceNorthd,
    nbctl,
)

MIXED = Path(__file__).resolve().parent.parent.parent / "shared" / "workloads" / "mixed.py"


def sbctl(remote: str, *args: str) -> str:
    return subprocess.run(["ovn-sbctl", f"--db={remote}", "--timeout=30", *args],
                          check=True, capture_output=True, text=True).stdout


def dump(remote: str, table: str, cols: list[str]) -> tuple[Any, ...]:
    out = subprocess.run(["ovsdb-client", "dump", "--format=json", remote, "OVN_Southbound", table, *cols],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    tbl = doc[0] if isinstance(doc, list) else doc
    return tuple(sorted(json.dumps(r, sort_keys=True) for r in tbl["data"]))


def rows(remote: str, table: str) -> list[dict[str, Any]]:
    out = subprocess.run(["ovsdb-client", "dump", "--format=json", remote, "OVN_Southbound", table],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    tbl = doc[0] if isinstance(doc, list) else doc
    return [dict(zip(tbl["headings"], r, strict=True)) for r in tbl["data"]]


FLOW = ["pipeline", "table_id", "priority", "match", "actions", "logical_datapath", "logical_dp_group"]
Edit = Callable[[str, int], None]


def _flow(remote: str, i: int) -> str:
    fl = [r for r in rows(remote, "Logical_Flow") if "ls_in_acl" in str(r["external_ids"])]
    return str(fl[i % len(fl)]["_uuid"][1])


def del_flow(remote: str, i: int) -> None:
    sbctl(remote, "destroy", "Logical_Flow", _flow(remote, i))


def add_flow(remote: str, i: int) -> None:
    dp = rows(remote, "Datapath_Binding")[0]["_uuid"][1]
    sbctl(remote, "create", "Logical_Flow", f"logical_datapath={dp}", "pipeline=ingress", "table_id=0",
          "priority=65535", f'match="udp.dst == {i}"', 'actions="drop;"')


def mod_flow(remote: str, i: int) -> None:
    sbctl(remote, "set", "Logical_Flow", _flow(remote, i), 'actions="drop;"')


def mod_group(remote: str, i: int) -> None:
    gs = [g for g in rows(remote, "Logical_DP_Group") if len(g["datapaths"][1]) > 1]
    g = gs[i % len(gs)]
    sbctl(remote, "remove", "Logical_DP_Group", str(g["_uuid"][1]), "datapaths", g["datapaths"][1][0][1])


def mod_lb(remote: str, i: int) -> None:
    lbs = rows(remote, "Load_Balancer")
    sbctl(remote, "set", "Load_Balancer", str(lbs[i % len(lbs)]["_uuid"][1]), f'vips={{"6.6.6.6:{i + 1}"="7.7.7.7:1"}}')


def mod_as(remote: str, i: int) -> None:
    ass = rows(remote, "Address_Set")
    sbctl(remote, "set", "Address_Set", str(ass[i % len(ass)]["_uuid"][1]), f"addresses=6.6.6.{i % 250}")


KINDS: list[tuple[str, str, list[str], Edit]] = [
    ("flow-delete", "Logical_Flow", FLOW, del_flow),
    ("flow-insert", "Logical_Flow", FLOW, add_flow),
    ("flow-modify", "Logical_Flow", FLOW, mod_flow),
    ("group-modify", "Logical_DP_Group", ["datapaths"], mod_group),
    ("lb-modify", "Load_Balancer", ["name", "vips", "protocol"], mod_lb),
    ("address-set-modify", "Address_Set", ["name", "addresses"], mod_as),
]


def measure(sb_remote: str, rounds: int, timeout: float) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for name, table, cols, edit in KINDS:
        times: list[float] = []
        for i in range(rounds):
            want = dump(sb_remote, table, cols)
            try:
                edit(sb_remote, i)
            except (ZeroDivisionError, IndexError):
                break  # no row of that kind on this network (e.g. 23.03 has no SB row for router-only LBs)
            t0 = time.monotonic()
            while dump(sb_remote, table, cols) != want:
                if time.monotonic() - t0 > timeout:
                    times.append(float("inf"))
                    break
                time.sleep(0.005)
            else:
                times.append(time.monotonic() - t0)
        out[name] = times
    return out


def run_side(kind: str, args: argparse.Namespace, base: Path) -> dict[str, list[float]]:
    d = base / kind
    d.mkdir()
    nb = OvsdbServer(d, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(d, "sb", SB_SCHEMA).start()
    daemon: Any = None
    try:
        subprocess.run([sys.executable, str(MIXED), nb.remote, str(args.switches), str(args.ports),
                        str(args.gw_routers)], check=True, capture_output=True)
        daemon = (OurNorthd(d, nb.remote, sb.remote) if kind == "ours" else
                  ReferenceNorthd(d, nb.remote, sb.remote)).start()
        nbctl(nb.remote, "sync", wait="sb", timeout=300)
        return measure(sb.remote, args.rounds, args.timeout)
    finally:
        if daemon is not None:
            daemon.stop()
        sb.stop()
        nb.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--switches", type=int, default=10)
    ap.add_argument("--ports", type=int, default=10)
    ap.add_argument("--gw-routers", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=10.0, help="give up on one repair after this many seconds")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ref = run_side("reference", args, Path(tmp))
        ours = run_side("ours", args, Path(tmp))
    print(f"repair time, mixed {args.switches}/{args.ports}/{args.gw_routers}, {args.rounds} rounds (ms)")
    print(f"{'edit':20} {'ref p50':>9} {'ref max':>9} {'ours p50':>9} {'ours max':>9} {'ratio p50':>9}")
    for name, *_ in KINDS:
        r, o = ref[name], ours[name]
        if not r or not o:
            print(f"{name:20} {'n/a (no such rows)':>40}")
            continue
        rp, op = statistics.median(r), statistics.median(o)
        print(f"{name:20} {rp * 1000:9.1f} {max(r) * 1000:9.1f} {op * 1000:9.1f} {max(o) * 1000:9.1f} "
              f"{(op / rp if rp else float('nan')):9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
