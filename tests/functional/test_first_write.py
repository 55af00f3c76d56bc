"""The first write into an SB without flows goes as two transactions; every later one as one.

Into an SB holding no logical flow, datapath group or load balancer (a cold start), the daemon
sends its IDL changes (datapaths, port bindings, groups, ...) first and its flows, datapath groups
and load balancers after them (the server executes the first while the daemon builds the second).
Read from the SB server's own transaction log; a second SB client checks that no state in between
holds a flow naming a missing row.  Anywhere else (a change, a restart onto a populated SB) a new
datapath and its flows commit together.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.sb_watch import SbWatcher
from ovn_northd_py.devtools.servers import OurNorthd

FLOW_TABLES = ("Logical_Flow", "Logical_DP_Group", "Load_Balancer")


def _commits(db: Path) -> list[dict[str, Any]]:
    """The server's committed transactions, oldest first: {table: {uuid: row or null}}."""
    out = []
    for line in db.read_bytes().split(b"\n"):
        if line.startswith(b"{"):
            rec = json.loads(line)
            if "_date" in rec:
                out.append({t: v for t, v in rec.items() if isinstance(v, dict)})
    return out


def _network(env: Any) -> None:
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", "--", "lr-add", "lr0",
              "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "10.0.0.1/24",
              "--", "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router",
              "--", "lsp-set-addresses", "sw0-lr0", "router", "--", "lsp-set-options", "sw0-lr0", "router-port=lrp0",
              "--", "lsp-add", "sw0", "p0", "--", "lsp-set-addresses", "p0", "00:00:00:00:00:01 10.0.0.10",
              "--", "lsp-add", "sw1", "p1", "--", "lsp-set-addresses", "p1", "00:00:00:00:00:02 10.0.1.10",
              "--", "lb-add", "lb0", "10.0.0.100:80", "10.0.0.10:8080", "tcp", "--", "ls-lb-add", "sw0", "lb0",
              "--", "acl-add", "sw0", "to-lport", "1001", "ip4 && tcp.dst == 22", "drop")


def test_first_write_into_empty_sb_commits_datapaths_before_flows(env: Any, started: list[OurNorthd]) -> None:
    _network(env)
    watcher = SbWatcher(str(env.sb.sock)).start()
    started.append(OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start())
    env.sync()
    watcher.stop()
    assert watcher.dangling == []
    commits = _commits(env.sb.db_path)
    first_dp = next(i for i, c in enumerate(commits) if c.get("Datapath_Binding"))
    first_flow = next(i for i, c in enumerate(commits) if c.get("Logical_Flow"))
    assert first_dp < first_flow
    assert not any(commits[first_dp].get(t) for t in FLOW_TABLES)
    assert commits[first_flow].get("Load_Balancer")  # (the flows' transaction carries the rest)
    assert len(env.sb_rows("Datapath_Binding")) == 3


def test_a_new_switch_later_commits_with_its_flows(env: Any, ours: OurNorthd) -> None:
    _network(env)
    env.sync()
    before = len(_commits(env.sb.db_path))
    env.nbctl("ls-add", "sw2", "--", "lsp-add", "sw2", "p2", "--", "lsp-set-addresses", "p2", "00:00:00:00:00:03")
    env.sync()
    later = _commits(env.sb.db_path)[before:]
    with_dp = [c for c in later if c.get("Datapath_Binding")]
    assert len(with_dp) == 1
    assert with_dp[0].get("Logical_Flow")


def test_a_restart_onto_a_populated_sb_writes_new_datapaths_with_their_flows(env: Any, started: list[OurNorthd]) -> None:
    _network(env)
    first = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    env.sync()
    first.stop()
    env.nbctl("ls-add", "sw2", "--", "lsp-add", "sw2", "p2", "--", "lsp-set-addresses", "p2", "00:00:00:00:00:03")
    before = len(_commits(env.sb.db_path))
    started.append(OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start())
    env.sync()
    later = _commits(env.sb.db_path)[before:]
    with_dp = [c for c in later if c.get("Datapath_Binding")]
    assert len(with_dp) == 1
    assert with_dp[0].get("Logical_Flow")
