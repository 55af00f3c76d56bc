"""Resilience and operability: reconnects, the SB lock, schema checks, metrics, signals, --help."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OurNorthd, OvsdbServer, ReferenceNorthd
from ovn_northd_py.devtools.testing import free_port, wait_until

# --------------------------------------------------------------------------- helpers


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
    """Samples of http://127.0.0.1:PORT/metrics as {(name, sorted labels): value}; None if not serving."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as r:
            text = r.read().decode()
    except OSError:
        return None
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def metric(samples, name: str, **labels: str) -> float | None:
    if samples is None:
        return None
    return samples.get((name, tuple(sorted(labels.items()))))


LOCK_HELD = "ovn_northd_py_sb_lock_held"
LOCK_CONTENDED = "ovn_northd_py_sb_lock_contended"


def with_metrics(env, name: str) -> tuple[OurNorthd, int]:
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name=name,
                  extra_args=[f"--metrics-address=127.0.0.1:{port}"])
    return d, port


@pytest.fixture
def started() -> Iterator[list]:
    """Daemons started by a test, stopped (by PID) at the end whatever happens."""
    ds: list = []
    try:
        yield ds
    finally:
        for d in reversed(ds):
            d.stop()


def build_topology(env) -> None:
    cmds: list[str] = []
    for i in range(3):
        cmds += ["--", "ls-add", f"sw{i}"]
        for j in range(3):
            cmds += ["--", "lsp-add", f"sw{i}", f"p{i}-{j}"]
    cmds += ["--", "lr-add", "lr0", "--", "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24",
             "--", "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router",
             "--", "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0"]
    env.nbctl(*cmds[1:], wait="sb")


def dp_keys(env) -> dict[str, int]:
    rows = env.sb_rows("Datapath_Binding")
    names = [dict(r["external_ids"][1])["name"] for r in rows]
    assert len(names) == len(set(names)), f"duplicate Datapath_Binding rows: {sorted(names)}"
    return {dict(r["external_ids"][1])["name"]: r["tunnel_key"] for r in rows}


def pb_keys(env) -> dict[str, int]:
    rows = env.sb_rows("Port_Binding")
    dups = [n for n, c in Counter(r["logical_port"] for r in rows).items() if c > 1]
    assert not dups, f"duplicate Port_Binding rows for {dups}"
    return {r["logical_port"]: r["tunnel_key"] for r in rows}


def nb_datapath_count(env) -> int:
    ls = env.nbctl("--bare", "--columns=_uuid", "list", "logical_switch").split()
    lr = env.nbctl("--bare", "--columns=_uuid", "list", "logical_router").split()
    return len(ls) + len(lr)


def assert_keys_kept(before: dict[str, int], after: dict[str, int]) -> None:
    changed = {n: (k, after.get(n)) for n, k in before.items() if after.get(n) != k}
    assert not changed, f"tunnel keys changed or rows lost: {changed}"


def schema_with_version(src: Path, dest: Path, version: str) -> Path:
    doc = json.loads(src.read_text())
    doc["version"] = version
    doc.pop("cksum", None)
    dest.write_text(json.dumps(doc))
    return dest


# --------------------------------------------------------------------------- reconnects


def test_reconnects_after_sb_server_restart_without_duplicates(env, ours):
    build_topology(env)
    dp_before, pb_before = dp_keys(env), pb_keys(env)
    env.sb.stop()
    env.nbctl("lsp-add", "sw1", "new-port", "--", "ls-add", "sw-new", "--", "lsp-add", "sw-new", "q0")
    env.sb.start()  # same database file
    env.sync(timeout=20)
    dp_after, pb_after = dp_keys(env), pb_keys(env)
    assert set(dp_after) == set(dp_before) | {"sw-new"}
    assert set(pb_after) == set(pb_before) | {"new-port", "q0"}
    assert len(env.sb_rows("Datapath_Binding")) == nb_datapath_count(env)
    assert_keys_kept(dp_before, dp_after)
    assert_keys_kept(pb_before, pb_after)
    assert ours.proc.poll() is None


def test_reconnects_after_nb_server_restart_without_duplicates(env, ours):
    build_topology(env)
    dp_before, pb_before = dp_keys(env), pb_keys(env)
    env.nb.stop()
    env.nb.start()  # same database file
    env.nbctl("lsp-add", "sw2", "new-port", "--", "ls-add", "sw-new", "--", "lsp-del", "p0-0", wait="sb",
              timeout=20)
    dp_after, pb_after = dp_keys(env), pb_keys(env)
    assert set(dp_after) == set(dp_before) | {"sw-new"}
    assert set(pb_after) == (set(pb_before) - {"p0-0"}) | {"new-port"}
    assert_keys_kept(dp_before, dp_after)
    assert_keys_kept({n: k for n, k in pb_before.items() if n != "p0-0"}, pb_after)
    assert ours.proc.poll() is None


def test_sb_is_left_alone_while_nb_is_down(env, ours):
    """A lost NB connection must not look like an empty NB: SB keeps its rows."""
    build_topology(env)
    dp_before, pb_before = dp_keys(env), pb_keys(env)
    env.nb.stop()
    try:
        time.sleep(1.5)  # several loop iterations and a reconnect attempt with NB gone
        assert dp_keys(env) == dp_before
        assert pb_keys(env) == pb_before
    finally:
        env.nb.start()
    env.sync(timeout=20)
    assert dp_keys(env) == dp_before
    assert pb_keys(env) == pb_before


def test_sb_rows_deleted_behind_our_back_are_restored_after_sb_restart(env, ours):
    build_topology(env)
    dp_before, pb_before = dp_keys(env), pb_keys(env)
    env.sb.stop()
    env.sb.start()
    env.sbctl("--", "--if-exists", "destroy", "port_binding", "p2-1")
    env.sync(timeout=20)
    after = pb_keys(env)
    assert set(after) == set(pb_before)
    assert_keys_kept({n: k for n, k in pb_before.items() if n != "p2-1"}, after)
    assert dp_keys(env) == dp_before


# --------------------------------------------------------------------------- the SB lock


def test_two_instances_only_one_holds_the_lock_and_the_other_takes_over(env, started):
    a, pa = with_metrics(env, "a")
    b, pb = with_metrics(env, "b")
    started += [a.start(), b.start()]
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2", wait="sb", timeout=20)

    def lock_states():
        sa, sb = scrape(pa), scrape(pb)
        st = ((metric(sa, LOCK_HELD), metric(sa, LOCK_CONTENDED)), (metric(sb, LOCK_HELD), metric(sb, LOCK_CONTENDED)))
        return st if st in (((1, 0), (0, 1)), ((0, 1), (1, 0))) else None

    # Exactly one holds the lock; the other sees it contended.
    (ha, _), _ = wait_until(lock_states, 10, "one instance holding the lock and the other contended")
    holder, other, other_port = (a, b, pb) if ha == 1 else (b, a, pa)
    assert set(pb_keys(env)) == {"p1", "p2"}
    assert len(env.sb_rows("Datapath_Binding")) == 1
    keys_before = pb_keys(env)

    holder.stop()
    wait_until(lambda: metric(scrape(other_port), LOCK_HELD) == 1, 10, "the standby to take the lock")
    assert metric(scrape(other_port), LOCK_CONTENDED) == 0
    env.nbctl("lsp-add", "sw0", "p3", "--", "ls-add", "sw1", wait="sb", timeout=20)
    after = pb_keys(env)
    assert set(after) == {"p1", "p2", "p3"}
    assert_keys_kept(keys_before, after)
    assert len(env.sb_rows("Datapath_Binding")) == 2
    assert other.proc.poll() is None


def test_standby_instance_does_not_write_to_sb(env, started):
    """The instance without the lock leaves SB alone even when it disagrees with it."""
    a, pa = with_metrics(env, "a")
    started.append(a.start())
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb", timeout=20)
    wait_until(lambda: metric(scrape(pa), LOCK_HELD) == 1, 10, "a to hold the lock")
    b, pb = with_metrics(env, "b")
    started.append(b.start())
    wait_until(lambda: metric(scrape(pb), LOCK_CONTENDED) == 1, 10, "b to see the lock contended")
    # Freeze the holder: NB changes now reach only the standby, which must not act on them.
    os.kill(a.pid, signal.SIGSTOP)
    try:
        env.nbctl("lsp-add", "sw0", "p2")
        time.sleep(1.0)
        assert set(pb_keys(env)) == {"p1"}
        assert metric(scrape(pb), LOCK_HELD) == 0
    finally:
        os.kill(a.pid, signal.SIGCONT)
    env.sync(timeout=20)
    assert set(pb_keys(env)) == {"p1", "p2"}


def test_mutually_exclusive_with_reference_northd(env, started):
    ref = ReferenceNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    started.append(ref)
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb", timeout=20)  # ref holds the lock
    d, port = with_metrics(env, "ours")
    started.append(d.start())
    wait_until(lambda: metric(scrape(port), LOCK_CONTENDED) == 1, 10, "ours to see the lock contended")
    s = scrape(port)
    assert metric(s, LOCK_HELD) == 0
    assert metric(s, "ovn_northd_py_db_connected", db="sb") == 1
    # Still standing by after more NB changes handled by the reference.
    env.nbctl("lsp-add", "sw0", "p2", wait="sb", timeout=20)
    s = scrape(port)
    assert metric(s, LOCK_HELD) == 0 and metric(s, LOCK_CONTENDED) == 1
    assert d.proc.poll() is None
    assert not any(r.get("event") == "sb lock" and r.get("held") for r in d.log_records())


# --------------------------------------------------------------------------- schema checks


def test_nb_schema_of_other_major_version_exits_2_naming_both_versions(env, tmp_path):
    schema = schema_with_version(NB_SCHEMA, tmp_path / "nb-8.ovsschema", "8.0.0")
    nb8 = OvsdbServer(tmp_path / "nb8", "nb", schema).start()
    d = OurNorthd(tmp_path, nb8.remote, env.sb.remote).start()
    try:
        rc = d.proc.wait(timeout=15)
        errors = [r for r in d.log_records() if r.get("level") == "error"]
    finally:
        d.stop()
        nb8.stop()
    assert rc == 2
    assert errors, "no error was logged"
    text = json.dumps(errors)
    assert "7.0.0" in text and "8.0.0" in text, errors


def test_sb_schema_of_other_major_version_exits_2_naming_both_versions(env, tmp_path):
    ours_v = json.loads(SB_SCHEMA.read_text())["version"]
    schema = schema_with_version(SB_SCHEMA, tmp_path / "sb-99.ovsschema", "99.0.0")
    sb99 = OvsdbServer(tmp_path / "sb99", "sb", schema).start()
    d = OurNorthd(tmp_path, env.nb.remote, sb99.remote).start()
    try:
        rc = d.proc.wait(timeout=15)
        errors = [r for r in d.log_records() if r.get("level") == "error"]
    finally:
        d.stop()
        sb99.stop()
    assert rc == 2
    text = json.dumps(errors)
    assert ours_v in text and "99.0.0" in text, errors


def test_nb_schema_of_newer_patch_version_is_accepted(env, tmp_path):
    # A newer minor version belongs to another OVN release: refused (tests/functional/test_release_profile.py).
    schema = schema_with_version(NB_SCHEMA, tmp_path / "nb-7.0.9.ovsschema", "7.0.9")
    nb79 = OvsdbServer(tmp_path / "nb79", "nb", schema).start()
    d = OurNorthd(tmp_path, nb79.remote, env.sb.remote).start()
    try:
        from ovn_northd_py.devtools.servers import nbctl

        nbctl(nb79.remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb", timeout=20)
        assert set(pb_keys(env)) == {"p1"}
        wait_until(lambda: any(r.get("event") == "first sync committed" for r in d.log_records()), 5,
                   "the daemon to settle")
        assert d.proc.poll() is None
        assert not [r for r in d.log_records() if r.get("level") == "error"]
    finally:
        d.stop()
        nb79.stop()


# --------------------------------------------------------------------------- metrics


def test_metrics_endpoint_exposes_state_durations_and_row_counts(env, started):
    d, port = with_metrics(env, "ours")
    started.append(d.start())
    build_topology(env)  # 3 switches + 1 router; 10 LSPs + 1 LRP
    env.sync()

    def settled():
        s = scrape(port)
        if metric(s, "ovn_northd_py_sb_rows", table="Port_Binding") == 11:
            return s
        return None

    s = wait_until(settled, 10, "sb_rows to reach the SB contents")
    assert metric(s, "ovn_northd_py_db_connected", db="nb") == 1
    assert metric(s, "ovn_northd_py_db_connected", db="sb") == 1
    assert metric(s, LOCK_HELD) == 1
    assert metric(s, LOCK_CONTENDED) == 0
    assert metric(s, "ovn_northd_py_sb_rows", table="Datapath_Binding") == 4
    assert metric(s, "ovn_northd_py_sb_rows", table="Port_Binding") == len(env.sb_rows("Port_Binding"))
    for h in ("loop_seconds", "compute_seconds", "commit_seconds"):
        n = metric(s, f"ovn_northd_py_{h}_count")
        total = metric(s, f"ovn_northd_py_{h}_sum")
        inf = metric(s, f"ovn_northd_py_{h}_bucket", le="+Inf")
        assert n is not None and n >= 1, h
        assert inf == n, h
        assert total is not None and 0 <= total < 60 * n, h


def test_metrics_show_sb_disconnected_while_sb_is_down(env, started):
    d, port = with_metrics(env, "ours")
    started.append(d.start())
    env.nbctl("ls-add", "sw0", wait="sb", timeout=20)
    wait_until(lambda: metric(scrape(port), "ovn_northd_py_db_connected", db="sb") == 1, 5, "sb connected")
    env.sb.stop()
    try:
        wait_until(lambda: metric(scrape(port), "ovn_northd_py_db_connected", db="sb") == 0, 10,
                   "sb reported disconnected")
        assert metric(scrape(port), "ovn_northd_py_db_connected", db="nb") == 1
    finally:
        env.sb.start()
    wait_until(lambda: metric(scrape(port), "ovn_northd_py_db_connected", db="sb") == 1, 15, "sb reconnected")
    env.sync(timeout=20)


# --------------------------------------------------------------------------- signals and command line


def test_sigterm_exits_0_and_removes_pidfile(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb")
    pidfile = env.workdir / "ours-northd.pid"
    assert pidfile.read_text().strip() == str(ours.pid)
    os.kill(ours.pid, signal.SIGTERM)
    assert ours.proc.wait(timeout=10) == 0
    assert not pidfile.exists()
    assert any(r.get("event") == "stopped" for r in ours.log_records())


def test_sigterm_while_waiting_for_unreachable_databases_exits_0(tmp_path):
    d = OurNorthd(tmp_path, f"unix:{tmp_path / 'no-nb.sock'}", f"unix:{tmp_path / 'no-sb.sock'}").start()
    try:
        pidfile = tmp_path / "ours-northd.pid"
        wait_until(pidfile.exists, 10, "the pidfile")
        wait_until(lambda: any(r.get("event") == "waiting for database" for r in d.log_records()), 10,
                   "the daemon to wait for the databases")
        os.kill(d.pid, signal.SIGTERM)
        assert d.proc.wait(timeout=10) == 0
        assert not pidfile.exists()
    finally:
        d.stop()


def test_sighup_forces_a_recompute_and_keeps_running(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb")
    before = pb_keys(env)
    os.kill(ours.pid, signal.SIGHUP)
    wait_until(lambda: any(r.get("event") == "recompute requested" for r in ours.log_records()), 5,
               "the recompute to be logged")
    env.nbctl("lsp-add", "sw0", "p2", wait="sb")
    assert_keys_kept(before, pb_keys(env))
    assert ours.proc.poll() is None


def test_help_documents_every_flag():
    r = subprocess.run([sys.executable, "-m", "ovn_northd_py", "--help"], check=False, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0
    import re

    for flag in ("--ovnnb-db", "--ovnsb-db", "--pidfile", "--log-file", "--log-format", "--metrics-address",
                 "-v", "--verbose", "--check-incremental"):
        assert re.search(rf"(^|[\s\[,]){re.escape(flag)}([\s,=\]]|$)", r.stdout, re.MULTILINE), flag


def test_unknown_flag_is_rejected():
    r = subprocess.run([sys.executable, "-m", "ovn_northd_py", "--no-such-flag"], check=False, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2
    assert "--no-such-flag" in r.stderr
