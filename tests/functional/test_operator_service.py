"""Operator drop-in, services: the systemd unit (systemd-analyze verify and security), the
NOTIFY_SOCKET protocol (a real unix datagram socket), and the metrics/health endpoint."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "ovn-northd-py.service"
INSTALLED = "/opt/ovn-northd-py/.venv/bin/ovn-northd-py"  # what the README's install produces


# --------------------------------------------------------------------------- the unit


def _unit_for_this_checkout(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at this checkout's venv (the same layout as /opt/ovn-northd-py)."""
    text = UNIT.read_text()
    assert INSTALLED in text
    local = Path(sys.executable).parent / "ovn-northd-py"
    assert local.exists()
    out = tmp_path / UNIT.name
    out.write_text(text.replace(INSTALLED, str(local)))
    return out


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="install the systemd package")
def test_unit_verifies_cleanly(tmp_path: Path):
    unit = _unit_for_this_checkout(tmp_path)
    r = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr
    text = UNIT.read_text()
    for line in ("Type=notify", "User=ovn-northd", "NoNewPrivileges=yes", "ProtectSystem=strict",
                 "CapabilityBoundingSet=\n", "WatchdogSec="):
        assert line in text, line
    assert not re.search(r"^Conflicts=", text, re.MULTILINE)


def _exposure(unit: Path) -> float:
    out = subprocess.run(["systemd-analyze", "security", "--offline=true", str(unit)], capture_output=True,
                         text=True, timeout=60, check=False).stdout
    m = re.search(r"Overall exposure level for \S+: ([\d.]+)", out)
    assert m, out[-500:]
    return float(m.group(1))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="install the systemd package")
def test_unit_exposure_is_far_below_debians(tmp_path: Path):
    ours = _exposure(_unit_for_this_checkout(tmp_path))
    assert ours <= 2.0, ours
    debian = Path("/lib/systemd/system/ovn-northd.service")
    if debian.exists():
        assert ours < _exposure(debian) - 5


# --------------------------------------------------------------------------- NOTIFY_SOCKET


class NotifySocket:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.messages: list[tuple[float, str]] = []

    def drain(self) -> list[str]:
        while True:
            try:
                data = self.sock.recv(4096)
            except (TimeoutError, BlockingIOError):
                break
            self.messages.append((time.monotonic(), data.decode()))
        return [m for _, m in self.messages]

    def fields(self) -> list[str]:
        return [f for m in self.drain() for f in m.split("\n")]

    def close(self) -> None:
        self.sock.close()


def _notified(env, name: str, notify: NotifySocket, *extra: str) -> OurNorthd:
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name=name, extra_args=list(extra))
    old = dict(os.environ)
    os.environ.update(NOTIFY_SOCKET=str(notify.path), WATCHDOG_USEC="1000000")
    try:
        return d.start()
    finally:
        os.environ.clear()
        os.environ.update(old)


def test_ready_after_the_first_sb_commit_then_watchdog_and_stopping(env, tmp_path: Path):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1")
    n1 = NotifySocket(tmp_path / "n1.sock")
    a = _notified(env, "a", n1)
    try:
        wait_until(lambda: "READY=1" in n1.fields(), 20, "READY=1")
        # READY=1 came after the first SB commit: SB already holds the translation of NB.
        assert any(dict(r["external_ids"][1]).get("name") == "sw0" for r in env.sb_rows("Datapath_Binding"))
        assert "STATUS=active" in n1.fields()
        assert f"MAINPID={a.pid}" in n1.fields()
        # WATCHDOG=1 from the main loop, at half of WATCHDOG_USEC, even with nothing to do.
        t0 = time.monotonic()
        wait_until(lambda: sum(f == "WATCHDOG=1" for f in n1.fields()) >= 4, 10, "watchdog pings")
        pings = [t for t, m in n1.messages if m == "WATCHDOG=1"]
        assert all(b - a_ > 0.2 for a_, b in itertools.pairwise(pings)), pings  # paced, not spinning
        assert time.monotonic() - t0 < 8
        # A standby instance is ready too, as standby.
        n2 = NotifySocket(tmp_path / "n2.sock")
        b = _notified(env, "b", n2)
        try:
            wait_until(lambda: "READY=1" in n2.fields(), 20, "READY=1 from the standby")
            assert "STATUS=standby" in n2.fields()
        finally:
            b.stop()
            n2.close()
        os.kill(a.pid, signal.SIGTERM)
        assert a.proc is not None and a.proc.wait(timeout=10) == 0
        assert "STOPPING=1" in n1.fields()
    finally:
        a.stop()
        n1.close()


# --------------------------------------------------------------------------- metrics and health


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def _sample(text: str, name: str) -> float | None:
    m = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
    return float(m.group(1)) if m else None


def test_operator_metrics_health_and_readiness(env, tmp_path: Path):
    pa, pb = free_port(), free_port()
    env.nbctl("ls-add", "sw0")
    a = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="a", extra_args=[f"--metrics-address={pa}"])
    a.start()
    try:
        wait_until(lambda: _get(pa, "/readyz")[0] == 200, 20, "a ready")
        b = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="b",
                      extra_args=[f"--metrics-address=127.0.0.1:{pb}", "--probe-interval=7000"]).start()
        try:
            wait_until(lambda: _get(pb, "/readyz") == (200, "standby\n"), 20, "b ready as standby")
            code, text = _get(pa, "/metrics")
            assert code == 200
            assert _sample(text, "ovn_northd_status") == 1
            assert _sample(text, "ovn_northd_nb_connection_status") == 1
            assert _sample(text, "ovn_northd_sb_connection_status") == 1
            assert re.search(r'^ovn_northd_build_info\{.*version="[^"]+".*\} 1\.0$', text, re.MULTILINE)
            assert _sample(text, "ovn_northd_stopwatch_samples_total") is not None
            assert re.search(r'^ovn_northd_coverage_total\{event="txn_success"\} [1-9]', text, re.MULTILINE)
            assert _sample(text, "ovn_northd_py_sb_lock_held") == 1  # ours are kept
            # The sample Grafana dashboard only uses names we export.
            dash = (ROOT / "docs" / "grafana-ovn-northd-py.json").read_text()
            used = set(re.findall(r"\b(ovn_northd_[a-z0-9_]+)", dash))
            assert len(used) > 10
            for name in used:
                family = re.sub(r"_(total|bucket)$", "", name)
                assert re.search(rf"^# TYPE ({family}|{name}) ", text, re.MULTILINE), name
            _, tb = _get(pb, "/metrics")
            assert _sample(tb, "ovn_northd_status") == 0
            assert _sample(tb, "ovn_northd_probe_interval") == 7000
            assert _get(pa, "/healthz") == (200, "ok\n")
            assert _get(pa, "/nothing")[0] == 404
            a.appctl("pause")
            wait_until(lambda: _sample(_get(pa, "/metrics")[1], "ovn_northd_status") == 2, 10, "paused status")
            if shutil.which("promtool"):
                r = subprocess.run(["promtool", "check", "metrics"], input=_get(pa, "/metrics")[1],
                                   capture_output=True, text=True, timeout=30, check=False)
                assert r.returncode == 0, r.stdout + r.stderr
        finally:
            b.stop()
    finally:
        a.stop()
    # Bound to the loopback only: not reachable on another local address.
    other = _non_loopback_ip()
    if other:
        c = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="c", extra_args=[f"--metrics-address={pa}"])
        c.start()
        try:
            wait_until(lambda: _get(pa, "/healthz")[0] == 200, 20, "c serving")
            with pytest.raises(OSError):
                socket.create_connection((other, pa), timeout=2).close()
        finally:
            c.stop()


def _non_loopback_ip() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent
            ip: str = s.getsockname()[0]
            return None if ip.startswith("127.") else ip
    except OSError:
        return None


def test_watchdog_keeps_beating_without_a_control_socket(env, tmp_path: Path):
    """The default control socket cannot be created (no such rundir): a warning, and the main loop is
    still woken for the watchdog."""
    n = NotifySocket(tmp_path / "n.sock")
    e = dict(os.environ, NOTIFY_SOCKET=str(n.path), WATCHDOG_USEC="1000000", OVN_RUNDIR=str(tmp_path / "none"))
    log = tmp_path / "noctl.log"
    proc = subprocess.Popen([sys.executable, "-m", "ovn_northd_py", f"--ovnnb-db={env.nb.remote}",
                             f"--ovnsb-db={env.sb.remote}", f"--log-file={log}", "--log-format=json"], env=e,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: "READY=1" in n.fields(), 20, "READY=1")
        before = sum(f == "WATCHDOG=1" for f in n.fields())
        time.sleep(2.5)
        assert sum(f == "WATCHDOG=1" for f in n.fields()) >= before + 3
        assert '"event": "no control socket"' in log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        n.close()
