"""Operator drop-in, part 1: ovn-northd's command line, the ovn-appctl control socket, logging.

Everything runs against real ovsdb-servers; the control socket is driven with Debian's ovn-appctl,
and the C ovn-northd is the reference for the option list.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, pid_alive, stop_pid
from ovn_northd_py.devtools.testing import wait_until

PY = [sys.executable, "-m", "ovn_northd_py"]


@pytest.fixture
def started() -> Iterator[list]:
    ds: list = []
    try:
        yield ds
    finally:
        for d in reversed(ds):
            d.stop()


def appctl(ctl: Path | str, *args: str, timeout: int = 10) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ovn-appctl", "-T", str(timeout), "-t", str(ctl), *args], capture_output=True,
                          text=True, timeout=timeout + 5, check=False)


def ok(ctl: Path | str, *args: str) -> str:
    r = appctl(ctl, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def plan_when_idle(ctl: Path | str, timeout: float = 10) -> str:
    """`plan` answers "try again" while a write or the SB cache load is in flight (a standby loads
    SB's flows when it connects): ask again until it answers."""
    deadline = time.monotonic() + timeout
    while True:
        r = appctl(ctl, "plan")
        if r.returncode == 0:
            return r.stdout
        assert "try again" in r.stderr and time.monotonic() < deadline, (r.stdout, r.stderr)
        time.sleep(0.2)


def dp_names(env) -> set[str]:
    return {_name(r) for r in env.sb_rows("Datapath_Binding")}


def _name(row: dict) -> str:
    return dict(row["external_ids"][1]).get("name", "")


def records(path: Path) -> list[dict]:
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            out.append(json.loads(line))  # every line is JSON: a broken line fails the test
    return out


# --------------------------------------------------------------------------- command line


def _c_long_options() -> set[str]:
    out = subprocess.run(["/usr/bin/ovn-northd", "--options"], capture_output=True, text=True, check=True).stdout
    return {m.group(1) for m in re.finditer(r"^(--[a-z0-9-]+)", out, re.MULTILINE)}


def test_every_option_of_the_c_daemon_is_listed_and_documented():
    c_opts = _c_long_options()
    assert {"--ovnnb-db", "--dry-run", "--unixctl", "--monitor", "--ssl-ciphers"} <= c_opts
    ours = subprocess.run([*PY, "--options"], capture_output=True, text=True, check=True, timeout=30).stdout
    ours_opts = {m.group(1) for m in re.finditer(r"^(--[a-z0-9-]+)", ours, re.MULTILINE)}
    assert c_opts <= ours_opts, c_opts - ours_opts
    help_text = subprocess.run([*PY, "--help"], capture_output=True, text=True, check=True, timeout=30).stdout
    for opt in c_opts | {"--log-format", "--metrics-address", "--check-incremental"}:
        assert re.search(rf"(^|[\s,]){re.escape(opt)}([\s,=\[]|$)", help_text, re.MULTILINE), opt
    for short in ("-p", "-c", "-C", "-d", "-D", "-u", "-h", "-o", "-V", "-v"):
        assert re.search(rf"(^|\s){re.escape(short)}[\s,]", help_text, re.MULTILINE), short


def test_version_names_the_compatible_c_version():
    out = subprocess.run([*PY, "-V"], capture_output=True, text=True, check=True, timeout=30).stdout
    assert out.splitlines()[0].split()[-1] == "23.03.1"
    assert "Open vSwitch Library" in out


def test_debian_command_line_with_every_no_op_option_settles(env, started):
    """ovn-ctl's command line (-vconsole:emer -vsyslog:err -vfile:info ...) plus the options that only
    need to be accepted: the daemon runs, writes SB, logs --n-threads, and keeps stderr quiet."""
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, extra_args=[
        "-vconsole:emer", "-vsyslog:err", "-vfile:info", "--n-threads=4", "--no-self-confinement",
        "--no-chdir", "--syslog-method=null"]).start()
    started.append(d)
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    assert "sw0" in dp_names(env)
    recs = records(d.log_file)
    assert any("n-threads" in r.get("event", "") and r.get("n_threads") == 4 for r in recs)
    assert (env.workdir / "ours.err").read_text() == ""  # console at emer: nothing on stderr


def test_bad_verbose_spec_and_unwritable_log_file_exit_1_with_a_message(tmp_path):
    r = subprocess.run([*PY, "-vconsole:loud"], capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 1 and "console:loud" in r.stderr
    r = subprocess.run([*PY, f"--log-file={tmp_path}/no/such/dir/x.log"], capture_output=True, text=True,
                       timeout=30, check=False)
    assert r.returncode == 1 and "No such file or directory" in r.stderr


# --------------------------------------------------------------------------- detach, pidfile, monitor, user


def _start_detached(env, *extra: str, name: str = "det") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PY, f"--ovnnb-db={env.nb.remote}", f"--ovnsb-db={env.sb.remote}", "--detach", "--no-chdir",
         f"--pidfile={env.workdir}/ovn-northd.pid", f"--log-file={env.workdir}/{name}.log",
         *extra], capture_output=True, text=True, timeout=60, check=False, env=dict(os.environ, OVN_RUNDIR=str(env.workdir)))


def test_detach_returns_and_the_locked_pidfile_refuses_a_second_instance(env):
    r = _start_detached(env)
    assert r.returncode == 0, r.stderr
    pidfile = env.workdir / "ovn-northd.pid"
    pid = int(pidfile.read_text())
    try:
        assert pid_alive(pid) and pid != os.getpid()
        assert Path(f"/proc/{pid}/comm").read_text().strip() == "ovn-northd"
        # The default control socket: <OVN_RUNDIR>/ovn-northd.<pid>.ctl, so `ovn-appctl -t ovn-northd` works.
        ctl = env.workdir / f"ovn-northd.{pid}.ctl"
        assert ctl.exists()
        r2 = subprocess.run(["ovn-appctl", "-t", "ovn-northd", "status"], capture_output=True, text=True,
                            env=dict(os.environ, OVN_RUNDIR=str(env.workdir)), timeout=15, check=False)
        assert r2.stdout in ("Status: active\n", "Status: standby\n"), r2
        second = _start_detached(env, name="second")
        assert second.returncode != 0
        assert "already running" in second.stderr
        assert int(pidfile.read_text()) == pid and pid_alive(pid)
    finally:
        stop_pid(pid)
    wait_until(lambda: not pidfile.exists(), 10, "the pidfile to be removed")


def test_overwrite_pidfile_starts_a_second_instance(env):
    assert _start_detached(env).returncode == 0
    pidfile = env.workdir / "ovn-northd.pid"
    first = int(pidfile.read_text())
    try:
        r = _start_detached(env, "--overwrite-pidfile", name="second")
        assert r.returncode == 0, r.stderr
        second = int(pidfile.read_text())
        assert second != first and pid_alive(first) and pid_alive(second)
        stop_pid(second)
    finally:
        stop_pid(first)


def _children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                stat = (p / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                out.append(int(p.name))
    return out


def test_monitor_restarts_a_crashed_daemon(env):
    r = _start_detached(env, "--monitor")
    assert r.returncode == 0, r.stderr
    pidfile = env.workdir / "ovn-northd.pid"
    child = int(pidfile.read_text())
    monitor = int(Path(f"/proc/{child}/stat").read_text().rpartition(")")[2].split()[1])
    try:
        assert monitor != 1 and pid_alive(monitor)
        env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
        os.kill(child, signal.SIGSEGV)  # a crash: the monitor restarts the daemon
        new = wait_until(lambda: (p := _read_pid(pidfile)) and p != child and pid_alive(p) and p, 20,
                         "a restarted daemon")
        assert new in _children(monitor)
        env.nbctl("ls-add", "sw1", wait="sb", timeout=30)  # and the new daemon writes SB
        assert {"sw0", "sw1"} <= dp_names(env)
        os.kill(new, signal.SIGTERM)  # a clean exit: the monitor exits too
        wait_until(lambda: not pid_alive(monitor), 15, "the monitor to exit")
    finally:
        for p in (monitor, _read_pid(pidfile) or 0):
            if p and pid_alive(p):
                stop_pid(p)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def test_user_drops_privileges_after_creating_the_pidfile():
    import shutil
    import tempfile

    from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OvsdbServer

    nobody = pwd.getpwnam("nobody")
    work = Path(tempfile.mkdtemp(prefix="ovn-northd-py-user-"))  # reachable by nobody (pytest's tmp is not)
    work.chmod(0o777)
    nb = OvsdbServer(work, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(work, "sb", SB_SCHEMA).start()
    pid = None
    try:
        for sock in (nb.sock, sb.sock):
            sock.chmod(0o777)

        class E:
            workdir = work

        E.nb, E.sb = nb, sb  # type: ignore[attr-defined]
        r = _start_detached(E, "--user=nobody:nogroup")
        assert r.returncode == 0, r.stderr
        pid = int((work / "ovn-northd.pid").read_text())
        status = Path(f"/proc/{pid}/status").read_text()
        uids = re.search(r"^Uid:\s+(\d+)\s+(\d+)\s+(\d+)", status, re.MULTILINE)
        assert uids is not None and {int(u) for u in uids.groups()} == {nobody.pw_uid}
        subprocess.run(["ovn-nbctl", f"--db={nb.remote}", "--timeout=30", "--wait=sb", "ls-add", "sw0"],
                       check=True, timeout=40)
        rows = subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--bare", "--columns=external_ids", "list",
                               "Datapath_Binding"], check=True, capture_output=True, text=True).stdout
        assert "name=sw0" in rows
        stop_pid(pid)
        wait_until(lambda: not (work / "ovn-northd.pid").exists(), 10, "nobody to remove its pidfile")
    finally:
        if pid is not None and pid_alive(pid):
            stop_pid(pid)
        sb.stop()
        nb.stop()
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------- the control socket


def test_status_is_active_on_the_lock_holder_and_standby_on_the_other(env, started):
    a = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="a").start()
    started.append(a)
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    b = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="b").start()
    started.append(b)
    wait_until(lambda: b.ctl.exists() and ok(b.ctl, "sb-connection-status") == "connected\n", 15, "b to connect")
    assert ok(a.ctl, "status") == "Status: active\n"
    assert ok(b.ctl, "status") == "Status: standby\n"
    for d in (a, b):
        assert ok(d.ctl, "is-paused") == "false\n"
        assert ok(d.ctl, "nb-connection-status") == "connected\n"
    # The hot standby's plan (it reads SB's flow tables for it) is empty: the active one wrote it all.
    wait_until(lambda: plan_when_idle(b.ctl).startswith(
        "Logical_Flow/Logical_DP_Group/Load_Balancer: 0 to insert, 0 to update, 0 to delete\n"
        "SB tables written through the IDL: 0 to insert, 0 to update, 0 to delete"), 10, "an empty plan on b")
    # Pausing the active one releases the lock: the other takes over (as ovn-northd).
    ok(a.ctl, "pause")
    assert ok(a.ctl, "status") == "Status: paused\n"
    assert ok(a.ctl, "is-paused") == "true\n"
    wait_until(lambda: ok(b.ctl, "status") == "Status: active\n", 15, "b to take over")
    env.nbctl("ls-add", "sw1", wait="sb", timeout=30)  # b writes
    assert {"sw0", "sw1"} <= dp_names(env)


def test_pause_stops_sb_writes_and_resume_catches_up(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    wait_until(ours.ctl.exists, 10, "the control socket")
    assert ok(ours.ctl, "pause") == ""
    n_flows = len(env.sb_rows("Logical_Flow"))
    env.nbctl("ls-add", "sw1", "--", "acl-add", "sw0", "to-lport", "1001", "tcp.dst == 4242", "drop")
    time.sleep(1.5)
    assert "sw1" not in dp_names(env)  # paused: nothing written
    assert len(env.sb_rows("Logical_Flow")) == n_flows
    plan = plan_when_idle(ours.ctl)
    assert re.search(r"SB tables written through the IDL: [1-9]\d* to insert", plan), plan
    assert "Datapath_Binding: 1 to insert" in plan
    assert re.search(r"^Logical_Flow\S*: [1-9]\d* to insert", plan, re.MULTILINE), plan
    assert "tcp.dst == 4242" in plan  # the ACL's flows, listed
    assert re.search(r"and [1-9]\d* flows on 1 datapaths not yet in SB", plan), plan
    assert "sw1" not in dp_names(env)  # plan wrote nothing either
    assert len(env.sb_rows("Logical_Flow")) == n_flows
    ok(ours.ctl, "resume")
    env.sync()
    assert {"sw0", "sw1"} <= dp_names(env)
    after = plan_when_idle(ours.ctl)
    assert after.startswith("Logical_Flow/Logical_DP_Group/Load_Balancer: 0 to insert, 0 to update, 0 to delete")
    assert "IDL: 0 to insert, 0 to update, 0 to delete" in after


def test_dry_run_starts_paused(env, started):
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, extra_args=["--dry-run"]).start()
    started.append(d)
    env.nbctl("ls-add", "sw0")
    wait_until(lambda: d.ctl.exists() and ok(d.ctl, "nb-connection-status") == "connected\n", 15, "connect")
    assert ok(d.ctl, "status") == "Status: paused\n"
    time.sleep(1.0)
    assert env.sb_rows("Datapath_Binding") == []
    ok(d.ctl, "resume")
    env.sync()
    assert "sw0" in dp_names(env)


def test_engine_stats_recompute_and_clear(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb", timeout=30)
    out = ok(ours.ctl, "inc-engine/show-stats")
    nodes = re.findall(r"^Node: (\S+)$", out, re.MULTILINE)
    assert {"northd", "lflow", "sb_sync"} <= set(nodes)
    before = int(ok(ours.ctl, "inc-engine/show-stats", "northd", "recompute"))
    assert before >= 1
    ok(ours.ctl, "inc-engine/recompute")
    wait_until(lambda: int(ok(ours.ctl, "inc-engine/show-stats", "northd", "recompute")) > before, 10,
               "a recompute")
    ok(ours.ctl, "inc-engine/clear-stats")
    assert re.search(r"^Node: northd\n- recompute: +0\n- compute: +0\n- abort: +0$",
                     ok(ours.ctl, "inc-engine/show-stats"), re.MULTILINE)
    ok(ours.ctl, "recompute")
    wait_until(lambda: int(ok(ours.ctl, "inc-engine/show-stats", "northd", "recompute")) == 1, 10,
               "our recompute command")


def test_informational_commands(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    assert ok(ours.ctl, "version").splitlines()[0].split()[-1] == "23.03.1"
    mem = ok(ours.ctl, "memory/show")
    cells = dict(kv.split(":") for kv in mem.split())
    assert int(cells["idl-cells-OVN_Southbound"]) > 0 and int(cells["sb-logical-flows"]) > 0
    sw = ok(ours.ctl, "stopwatch/show", "ovn-northd-loop")
    assert re.search(r"Statistics for 'ovn-northd-loop'\n  Total samples: [1-9]", sw), sw
    cov = ok(ours.ctl, "coverage/show")
    assert cov.startswith("Event coverage, avg rate over last: 5 seconds, last minute, last hour")
    assert re.search(r"^txn_success +\S+/sec +\S+/sec +\S+/sec +total: [1-9]", cov, re.MULTILINE), cov
    cmds = ok(ours.ctl, "list-commands")
    for c in ("status", "pause", "resume", "is-paused", "nb-cluster-state-reset", "sb-cluster-state-reset",
              "inc-engine/show-stats", "exit", "vlog/set", "vlog/list", "vlog/reopen", "plan", "explain"):
        assert re.search(rf"^  {re.escape(c)}\b", cmds, re.MULTILINE), c
    assert ok(ours.ctl, "sb-cluster-state-reset") == ""
    env.nbctl("ls-add", "sw1", wait="sb", timeout=30)  # reconnected and still writing
    assert "sw1" in dp_names(env)
    bad = appctl(ours.ctl, "no-such-command")
    assert bad.returncode != 0 and "is not a valid command" in bad.stderr


def test_parallel_build_threads_and_chassis_features_as_the_c_daemon(env, ours):
    # OVN's ovn-northd.at "northd-parallelization unixctl" and "Chassis-feature compatibitility".
    env.sync()
    assert ok(ours.ctl, "parallel-build/get-n-threads") == "1\n"
    assert ok(ours.ctl, "parallel-build/set-n-threads", "4") == ""
    assert ok(ours.ctl, "parallel-build/get-n-threads") == "4\n"
    for bad in ("0", "-1", "300"):
        r = appctl(ours.ctl, "parallel-build/set-n-threads", bad)
        assert r.returncode == 2 and r.stderr.startswith(f"invalid n_threads: {bad}\n"), r.stderr
    every = "ct_no_masked_label:    true\nct_lb_related:         true\nmac_binding_timestamp: true\n"
    assert ok(ours.ctl, "debug/chassis-features-list") == every
    env.sbctl("chassis-add", "hv1", "geneve", "127.0.0.1")
    assert ok(ours.ctl, "debug/chassis-features-list") == every.replace("true", "false")


def test_explain_names_the_nb_rows_behind_a_flow_and_a_port_binding(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-set-addresses", "p1",
              "00:00:00:00:00:01 10.0.0.1", "--", "acl-add", "sw0", "to-lport", "1001", "tcp.dst == 4242",
              "drop", wait="sb", timeout=30)
    acl_uuid = env.nbctl("--bare", "--columns=_uuid", "find", "ACL", "priority=1001").strip()
    lsp_uuid = env.nbctl("--bare", "--columns=_uuid", "find", "Logical_Switch_Port", "name=p1").strip()
    flows = [r for r in env.sb_rows("Logical_Flow") if "4242" in r["match"]]
    assert flows
    out = ok(ours.ctl, "explain", flows[0]["_uuid"][1])
    assert f"NB ACL {acl_uuid}" in out, out
    assert "tcp.dst == 4242" in out
    out = ok(ours.ctl, "explain", "tcp.dst == 4242")
    assert f"NB ACL {acl_uuid}" in out
    pb = env.sbctl("--bare", "--columns=_uuid", "find", "Port_Binding", "logical_port=p1").strip()
    out = ok(ours.ctl, "explain", pb)
    assert f"NB Logical_Switch_Port {lsp_uuid}" in out, out
    assert "sw0" in out
    assert appctl(ours.ctl, "explain", "no flow matches this").returncode != 0


def test_exit_stops_cleanly_and_removes_the_socket_and_pidfile(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    assert appctl(ours.ctl, "exit").returncode == 0
    assert ours.proc.wait(timeout=10) == 0
    assert not ours.ctl.exists()
    assert not (env.workdir / "ours-northd.pid").exists()


# --------------------------------------------------------------------------- logging


def test_vlog_set_changes_levels_at_run_time(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    assert re.search(r"^ovn_northd +off +info +info$", ok(ours.ctl, "vlog/list"), re.MULTILINE)
    n_dbg = sum(r["level"] == "debug" for r in records(ours.log_file))
    assert n_dbg == 0
    ok(ours.ctl, "vlog/set", "ovn_northd:file:dbg")
    assert re.search(r"^ovn_northd +off +info +dbg$", ok(ours.ctl, "vlog/list"), re.MULTILINE)
    env.nbctl("ls-add", "sw1", wait="sb", timeout=30)
    assert any(r["level"] == "debug" and r["event"] == "engine run" for r in records(ours.log_file))
    ok(ours.ctl, "vlog/set", "ovn_northd:file:warn")
    n = len(records(ours.log_file))
    ok(ours.ctl, "pause")  # logs at info: filtered out now
    ok(ours.ctl, "resume")
    env.nbctl("ls-add", "sw2", wait="sb", timeout=30)
    assert len(records(ours.log_file)) == n
    bad = appctl(ours.ctl, "vlog/set", "nosuchmodule:file:dbg")
    assert "nosuchmodule" in bad.stdout + bad.stderr


def test_logrotate_with_vlog_reopen_loses_no_line(env, ours):
    """As logrotate does: rename the file, then `vlog/reopen`.  Each pause/resume logs one line;
    every one of them is in the rotated or in the new file, in order, none twice."""
    env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
    wait_until(ours.ctl.exists, 10, "the control socket")
    rotated = ours.log_file.with_suffix(".log.1")
    for i in range(30):
        ok(ours.ctl, "pause" if i % 2 == 0 else "resume")
        if i == 10:
            ours.log_file.rename(rotated)  # lines 11..14 still go to the renamed file
        if i == 14:
            ok(ours.ctl, "vlog/reopen")
    old, new = records(rotated), records(ours.log_file)
    events = [r["event"] for r in old + new if r["event"] in ("paused (unixctl)", "resumed (unixctl)")]
    assert events == ["paused (unixctl)" if i % 2 == 0 else "resumed (unixctl)" for i in range(30)]
    new_events = [r["event"] for r in new if r["event"].endswith("(unixctl)")]
    assert len(new_events) == 15  # 15..29 went to the reopened file
    env.nbctl("ls-add", "sw1", wait="sb", timeout=30)
    assert "sw1" in dp_names(env)


def test_vlog_reopen_without_a_log_file_says_so(env, started):
    import sys as _sys

    ctl = env.workdir / "nolog.ctl"
    proc = subprocess.Popen([_sys.executable, "-m", "ovn_northd_py", f"--ovnnb-db={env.nb.remote}",
                             f"--ovnsb-db={env.sb.remote}", f"--unixctl={ctl}", "-vconsole:off"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    class _P:
        def stop(self) -> None:
            stop_pid(proc.pid)
            proc.wait()

    started.append(_P())
    wait_until(ctl.exists, 15, "the control socket")
    assert ok(ctl, "vlog/reopen") == "Logging to file not configured\n"


def test_remotes_default_to_ovn_nb_db_and_ovn_sb_db_from_the_environment(env, tmp_path):
    """As ovn-nbctl does (and the container image relies on): no --ovnnb-db/--ovnsb-db, remotes from
    OVN_NB_DB / OVN_SB_DB."""
    ctl = tmp_path / "envd.ctl"
    e = dict(os.environ, OVN_NB_DB=env.nb.remote, OVN_SB_DB=env.sb.remote)
    proc = subprocess.Popen([*PY, f"--unixctl={ctl}", "-vconsole:off"], env=e, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
        assert "sw0" in dp_names(env)
        assert ok(ctl, "status") == "Status: active\n"
    finally:
        stop_pid(proc.pid)
        proc.wait()


def test_syslog_target_and_method_send_to_udp(env, tmp_path):
    """--syslog-target=HOST:PORT (and --syslog-method=udp:IP:PORT) send the syslog destination's lines
    over UDP, at the -vsyslog: level."""
    import socket

    socks = []
    for _ in range(2):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(0.2)
        socks.append(s)
    target, method = (s.getsockname()[1] for s in socks)
    ctl = tmp_path / "sys.ctl"
    proc = subprocess.Popen([*PY, f"--ovnnb-db={env.nb.remote}", f"--ovnsb-db={env.sb.remote}", f"--unixctl={ctl}",
                             "-vconsole:off", "-vsyslog:info", f"--syslog-target=127.0.0.1:{target}",
                             f"--syslog-method=udp:127.0.0.1:{method}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
        for s in socks:
            got = []
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any("first sync committed" in g for g in got):
                with contextlib.suppress(TimeoutError):
                    got.append(s.recv(65536).decode())
            line = next(g for g in got if "first sync committed" in g)
            assert "ovn-northd|ovn_northd|INFO|" in line
        ok(ctl, "vlog/set", "syslog:off")
        ok(ctl, "pause")
        time.sleep(0.3)
        for s in socks:
            with pytest.raises(TimeoutError):
                while "paused" not in s.recv(65536).decode():
                    pass
    finally:
        stop_pid(proc.pid)
        proc.wait()
        for s in socks:
            s.close()
