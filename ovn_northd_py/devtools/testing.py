"""Small helpers shared by the functional tests, the demo and the benchmarks."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .servers import OurNorthd, free_port

# The shared NB workload scripts (``mixed.py NB_REMOTE S P G``...), for the tests, the benchmarks
# and the parity harness (``parity.sources.workload``).
WORKLOAD_DIR = Path(
    os.environ.get("OVN_PARITY_WORKLOADS", Path(__file__).resolve().parents[3] / "shared" / "workloads")
)


def wait_until(pred: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``pred`` until it returns something true; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def metric(port: int, name: str, labels: str = "") -> float:
    """Sum of the samples of metric ``name`` (whose label text contains ``labels``) on our /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    total = 0.0
    for line in text.splitlines():
        if (line.startswith(name + ("{" if labels else "")) and labels in line) or (not labels and re.match(rf"^{re.escape(name)} ", line)):
            total += float(line.rsplit(" ", 1)[1])
    return total


def node_runs(port: int, node: str, result: str) -> float:
    """How often engine node ``node`` ended with ``result`` (recompute, incremental, ...)."""
    return metric(port, "ovn_northd_py_engine_node_runs_total", f'node="{node}",result="{result}"')


def mismatches(daemon: Any) -> list[dict[str, Any]]:
    """The --check-incremental mismatch records in an OurNorthd's JSON log."""
    return [r for r in daemon.log_records() if r.get("event", "").startswith("incremental state differs")]


def flows_not_of_profile(flows: list[dict[str, Any]], profile: Any) -> list[str]:
    """The SB Logical_Flow rows (``Env.sb_rows`` dicts) whose stage-name, pipeline or table id are
    not those of ``profile`` (a FlowProfile): what a daemon serving another release would write."""
    bad = []
    for r in flows:
        name = dict(r["external_ids"][1]).get("stage-name", "")
        st = profile.stage_named(name)
        if st is None or st.pipeline != r["pipeline"] or profile.table_id(st) != r["table_id"]:
            bad.append(f"{name} {r['pipeline']} table {r['table_id']}: {r['match'][:80]}")
    return bad


def run_batch(env: Any, batch: list[list[str]]) -> None:
    """One ovn-nbctl transaction of several commands, waited for with --wait=sb."""
    args: list[str] = []
    for i, cmd in enumerate(batch):
        if i:
            args.append("--")
        args += cmd
    env.nbctl(*args, wait="sb")


def start_checked_daemon(env: Any) -> tuple[Any, int]:
    """Our daemon on ``env``'s databases with --check-incremental=1 and a metrics port."""
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    return d, port


def apply_checked(env: Any, daemon: Any, batch: list[list[str]], done: list[list[list[str]]], seed: int) -> None:
    """Apply one NB transaction, waited for, and fail (printing the whole sequence so far) as soon as
    the daemon's --check-incremental reports incremental state differing from a recompute."""
    run_batch(env, batch)
    done.append(batch)
    bad = mismatches(daemon)
    if bad:
        seq = "\n".join(json.dumps(b) for b in done)
        raise AssertionError(f"incremental != recompute after {len(done)} transactions (seed {seed}):\n"
                             f"{bad[0].get('differences')}\nsequence:\n{seq}")


@contextlib.contextmanager
def checked_daemon(env: Any) -> Iterator[tuple[Any, Any, int]]:
    """Our daemon with ``--check-incremental=1`` on ``env``'s databases, synced: ``(env, daemon,
    metrics port)``; stopped (by PID) on exit.  The random-sequence tests' fixtures use it."""
    d, port = start_checked_daemon(env)
    try:
        env.sync()
        yield env, d, port
    finally:
        d.stop()


def build_mixed(env: Any, switches: int, ports: int, gateways: int) -> None:
    """The shared "mixed" workload (``mixed.py NB S P G``) in ``env``'s NB."""
    argv = [sys.executable, str(WORKLOAD_DIR / "mixed.py"), env.nb.remote, str(switches), str(ports), str(gateways)]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"NB builder {' '.join(argv)} failed: {proc.stderr[-2000:]}")


def ovsdb_transact(remote: str, db: str, *ops: dict[str, Any]) -> list[Any]:
    """One ``ovsdb-client transact`` of raw operations (for columns the host's ovn-nbctl /
    ovn-sbctl do not know, e.g. a newer release's); the server's results."""
    out = subprocess.run(["ovsdb-client", "transact", remote, json.dumps([db, *ops])],
                         check=True, capture_output=True, text=True).stdout
    results: list[Any] = json.loads(out)
    return results


def ovsdb_select(remote: str, db: str, table: str, columns: list[str] | None = None) -> list[dict[str, Any]]:
    """Every row of ``table`` (ovsdb JSON values) through :func:`ovsdb_transact`."""
    op: dict[str, Any] = {"op": "select", "table": table, "where": []}
    if columns is not None:
        op["columns"] = columns
    rows: list[dict[str, Any]] = ovsdb_transact(remote, db, op)[0]["rows"]
    return rows
