#!/usr/bin/env python3
"""RAFT leader failover: how long until an NB change reaches SB after the SB (or NB) leader is killed.

usage: bench_raft_failover.py [--northd ours|c|both] [--db sb|nb] [--rounds N] [--switches S]
                              [--jsonrpc-log]

NB and SB are 3-member clusters on 127.0.0.1 (``OvsdbCluster``), the mixed workload
(``mixed.py NB S 3 S``) is in NB and one northd (given the three remotes of each) has written SB.
Each round: kill -9 the leader of ``--db``, then at once run one ``ovn-nbctl --wait=sb``
transaction (a new logical switch port; ovn-nbctl retries while NB elects); the time from the kill
to that command returning is the recovery time.  The killed member is restarted and rejoins
before the next round.  ``--jsonrpc-log`` turns on the SB servers' jsonrpc debug log and counts,
after the run, the monitor requests the servers received (``monitor_cond_since`` with or without a
hit, plain ``monitor_cond``), the transactions each member received from the northd and the
selects of Logical_Flow (the lean flow writer's re-reads).
"""

from __future__ import annotations

import argparse
import re
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
    OvsdbCluster,
    ReferenceNorthd,
    appctl,
    nbctl,
)
from ovn_northd_py.parity.harness import workload


def one_side(kind: str, db: str, rounds: int, switches: int, jsonrpc_log: bool) -> list[float]:
    wd = Path(tempfile.mkdtemp(prefix=f"raft-{kind}-"))
    nb = OvsdbCluster(wd / "nbc", "nb", NB_SCHEMA).start()
    sb = OvsdbCluster(wd / "sbc", "sb", SB_SCHEMA).start()
    d: Any = None
    times: list[float] = []
    try:
        workload("mixed", switches, 3, switches)(nb.remote)
        if jsonrpc_log:
            for m in sb.members:
                appctl(m.ctl, "vlog/set", "jsonrpc:file:dbg")
        d = (OurNorthd(wd, nb.remote, sb.remote) if kind == "ours" else ReferenceNorthd(wd, nb.remote, sb.remote))
        d.start()
        nbctl(nb.remote, "sync", wait="sb", timeout=300)
        cluster = sb if db == "sb" else nb
        for r in range(rounds):
            time.sleep(1.0)
            leader = cluster.wait_leader()
            leader.kill()
            t0 = time.monotonic()
            while True:  # (ovn-nbctl gives up when it cannot connect: retry it while NB elects)
                try:
                    nbctl(nb.remote, "--may-exist", "lsp-add", "ls1", f"failover{r}", wait="sb", timeout=120)
                    break
                except subprocess.CalledProcessError:
                    if time.monotonic() - t0 > 120:
                        raise
                    time.sleep(0.05)
            times.append(time.monotonic() - t0)
            leader.start()
            if jsonrpc_log and cluster is sb:
                appctl(leader.ctl, "vlog/set", "jsonrpc:file:dbg")
            deadline = time.monotonic() + 60
            while leader.role() != "follower" and time.monotonic() < deadline:
                time.sleep(0.1)
        if jsonrpc_log:
            report_jsonrpc(sb)
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()
    print(f"  work dir: {wd}")
    return times


def report_jsonrpc(sb: OvsdbCluster) -> None:
    for m in sb.members:
        text = m.log_file.read_text(errors="replace")
        since = len(re.findall(r'received request, method="monitor_cond_since"', text))
        cond = len(re.findall(r'received request, method="monitor_cond"', text))
        found = len(re.findall(r'send reply, result=\[true,"', text))
        transacts = len(re.findall(r'received request, method="transact", params=\["OVN_Southbound"', text))
        lf_selects = len(re.findall(r'"op":"select","table":"Logical_Flow"', text))
        print(f"  {m.name}: monitor_cond_since {since} (found: {found}), monitor_cond {cond}, "
              f"transact {transacts}, Logical_Flow selects {lf_selects}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--northd", choices=("ours", "c", "both"), default="both")
    p.add_argument("--db", choices=("sb", "nb"), default="sb")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--switches", type=int, default=10)
    p.add_argument("--jsonrpc-log", action="store_true")
    a = p.parse_args()
    kinds = ["c", "ours"] if a.northd == "both" else [a.northd]
    for kind in kinds:
        print(f"{kind}: {a.db} leader killed, mixed {a.switches}, {a.rounds} rounds")
        try:
            times = one_side(kind, a.db, a.rounds, a.switches, a.jsonrpc_log)
        except subprocess.CalledProcessError as e:
            print(f"  failed: {e} {e.stderr}")
            continue
        print(f"  recovery s: {' '.join(f'{t:.2f}' for t in times)}  p50 {statistics.median(times):.2f}"
              f"  max {max(times):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
