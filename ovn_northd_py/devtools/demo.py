"""The embedded default: local NB/SB ovsdb-servers, a sample network, and our daemon translating it.

    python -m ovn_northd_py.devtools.demo [--switches N] [--ports N] [--keep-running] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .sample import load_sample
from .servers import NB_SCHEMA, SB_SCHEMA, OvsdbServer, free_port, nbctl, sbctl, stop_pid

TABLES = ("Datapath_Binding", "Port_Binding", "Multicast_Group", "HA_Chassis_Group", "IP_Multicast",
          "Logical_Flow", "Logical_DP_Group", "Load_Balancer", "Address_Set")


def count_rows(sb_remote: str, table: str) -> int:
    out = sbctl(sb_remote, "--bare", "--columns=_uuid", "list", table)
    return sum(1 for line in out.splitlines() if line.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--switches", type=int, default=3, help="tenant switches in the sample network (default 3)")
    ap.add_argument("--ports", type=int, default=3, help="VM ports per switch (default 3)")
    ap.add_argument("--keep-running", action="store_true", help="keep everything running until Ctrl-C")
    ap.add_argument("--workdir", default=None, help="directory for databases, sockets and logs (default: temp)")
    a = ap.parse_args(argv)
    work = Path(a.workdir or tempfile.mkdtemp(prefix="ovn-northd-py-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    nb = OvsdbServer(work, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(work, "sb", SB_SCHEMA).start()
    proc = None
    try:
        load_sample(nb.remote, a.switches, a.ports)
        port = free_port()
        log_file = work / "ovn-northd-py.log"
        cmd = [sys.executable, "-m", "ovn_northd_py", f"--ovnnb-db={nb.remote}", f"--ovnsb-db={sb.remote}",
               f"--log-file={log_file}", "--log-format=json", f"--metrics-address=127.0.0.1:{port}",
               f"--pidfile={work / 'ovn-northd-py.pid'}", f"--unixctl={work / 'ovn-northd.ctl'}"]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd)
        nbctl(nb.remote, "sync", wait="sb", timeout=120)
        dt = time.monotonic() - t0
        print(f"ovn-northd-py settled in {dt:.2f}s (started, connected, took the lock, wrote SB)")
        print(f"work dir: {work}")
        print(f"  NB: {nb.remote}\n  SB: {sb.remote}\n  log: {log_file}")
        print(f"metrics: http://127.0.0.1:{port}/metrics (and /healthz, /readyz)")
        print(f"control: ovn-appctl -t {work / 'ovn-northd.ctl'} status  (list-commands for more)")
        print("SB rows written:")
        for t in TABLES:
            print(f"  {t:18s} {count_rows(sb.remote, t)}")
        if a.keep_running:
            print("running; Ctrl-C to stop")
            with contextlib.suppress(KeyboardInterrupt):
                proc.wait()
        return 0
    finally:
        if proc is not None:
            stop_pid(proc.pid)
            proc.wait()
        sb.stop()
        nb.stop()


if __name__ == "__main__":
    sys.exit(main())
