"""Faults (issue 16): active/standby hand-overs.  Two instances of ours (kill -9 of the active;
SIGSTOP/SIGCONT of the active over TCP, where the SB server's inactivity probe takes its lock away),
and ours beside the C ovn-northd in both directions.  Each test ends with SB equal to what a fresh
northd writes from the final NB, no duplicate rows and the tunnel keys of the rows that existed
before the fault unchanged (``ovn_northd_py.parity.faults``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ovn_northd_py.devtools.servers import (
    NB_SCHEMA,
    SB_SCHEMA,
    OurNorthd,
    OvsdbServer,
    ReferenceNorthd,
    appctl,
    nbctl,
    sbctl,
)
from ovn_northd_py.devtools.testing import build_mixed, flows_not_of_profile, free_port, metric, wait_until
from ovn_northd_py.parity.faults import assert_converged, assert_keys_kept, sb_state

LOCK_HELD = "ovn_northd_py_sb_lock_held"
LOCK_CONTENDED = "ovn_northd_py_sb_lock_contended"
SERVER_PROBE_MS = 1000  # the SB server's inactivity probe towards its TCP clients


def _metric(port: int, name: str, labels: str = "") -> float | None:
    try:
        return metric(port, name, labels)
    except OSError:
        return None  # not serving (yet)


def _ours(workdir: Path, nb: str, sb: str, name: str, *extra: str) -> tuple[OurNorthd, int]:
    port = free_port()
    d = OurNorthd(workdir, nb, sb, name=name, extra_args=[f"--metrics-address=127.0.0.1:{port}", *extra]).start()
    return d, port


def _kill9(d: OurNorthd) -> None:
    assert d.proc is not None
    os.kill(d.proc.pid, signal.SIGKILL)
    d.proc.wait()
    d.proc = None


@dataclass
class TcpEnv:
    """NB on a unix socket; SB also on ptcp:PORT:127.0.0.1 through a Connection row with a short
    ``inactivity_probe``, so a frozen client loses its connection (and the lock) in ~2 s."""

    workdir: Path
    nb: OvsdbServer
    sb: OvsdbServer
    sb_tcp: str

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout)

    def sync(self, timeout: int = 30) -> None:
        self.nbctl("sync", wait="sb", timeout=timeout)


@pytest.fixture
def tcp_env(tmp_path: Path) -> Iterator[TcpEnv]:
    nb = OvsdbServer(tmp_path, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(tmp_path, "sb", SB_SCHEMA, db_remotes=True).start()
    try:
        port = free_port()
        sbctl(sb.remote, "set-connection", f"ptcp:{port}:127.0.0.1", "--", "set", "connection", ".",
              f"inactivity_probe={SERVER_PROBE_MS}")
        wait_until(lambda: "LISTEN" in sbctl(sb.remote, "--bare", "--columns=status", "list", "connection")
                   or _tcp_open(port), 10, "the SB server to listen on tcp")
        yield TcpEnv(tmp_path, nb, sb, f"tcp:127.0.0.1:{port}")
    finally:
        sb.stop()
        nb.stop()


def _tcp_open(port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


# --------------------------------------------------------------------------- two instances of ours


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_kill_9_of_the_active_the_standby_takes_over(env: Any, tmp_path: Path) -> None:
    """(Under each release: SB ends equal to what a fresh northd writes for that release's servers.)"""
    build_mixed(env, 4, 3, 2)
    a, pa = _ours(env.workdir, env.nb.remote, env.sb.remote, "a")
    b: OurNorthd | None = None
    try:
        env.sync()
        wait_until(lambda: _metric(pa, LOCK_HELD) == 1, 20, "a to hold the lock")
        b, pb = _ours(env.workdir, env.nb.remote, env.sb.remote, "b")
        wait_until(lambda: _metric(pb, LOCK_CONTENDED) == 1, 20, "b to stand by")
        env.nbctl("lsp-add", "ls1", "before-kill", wait="sb")
        # b has computed (and followed the change) as a hot standby: it takes over with that state.
        wait_until(lambda: (_metric(pb, "ovn_northd_py_engine_runs_total", 'kind="standby-') or 0) >= 1, 20,
                   "b to compute as a standby")
        before = sb_state(env.sb.remote, env.release).keys
        _kill9(a)
        t0 = time.monotonic()
        env.nbctl("lsp-add", "ls2", "after-kill", "--", "lsp-del", "lsp1-1", wait="sb", timeout=30)
        took = time.monotonic() - t0
        assert _metric(pb, LOCK_HELD) == 1
        st = assert_converged(env.nb.remote, env.sb.remote, tmp_path, before, gone={"pb:lsp1-1"},
                              release=env.release)
        assert "pb:after-kill" in st.keys and "pb:lsp1-1" not in st.keys
        assert not flows_not_of_profile(env.sb_rows("Logical_Flow"), env.profile)
        print(f"kill -9 of the active: the --wait=sb change returned after {took:.2f}s")
        assert took < 20, f"the --wait=sb change took {took:.1f}s after the kill"
    finally:
        if b is not None:
            b.stop()
        a.stop()


def test_sigstop_of_the_active_over_tcp_the_resumed_one_stays_standby(tcp_env: TcpEnv, tmp_path: Path) -> None:
    env = tcp_env
    build_mixed(env, 4, 3, 2)
    # Both talk to SB over TCP; their own probes are long, so only the server's probe decides.
    a, pa = _ours(env.workdir, env.nb.remote, env.sb_tcp, "a", "--probe-interval=30000")
    b: OurNorthd | None = None
    try:
        env.sync()
        wait_until(lambda: _metric(pa, LOCK_HELD) == 1, 20, "a to hold the lock")
        b, pb = _ours(env.workdir, env.nb.remote, env.sb_tcp, "b", "--probe-interval=30000")
        wait_until(lambda: _metric(pb, LOCK_CONTENDED) == 1, 20, "b to stand by")
        before = sb_state(env.sb.remote).keys
        a_commits = _metric(pa, "ovn_northd_py_sb_commits_total")
        assert a.proc is not None
        os.kill(a.proc.pid, signal.SIGSTOP)
        try:
            env.nbctl("lsp-add", "ls1", "while-stopped")
            # The server's probe (2 x 1 s) drops a's connection and with it the lock.
            t_stop = time.monotonic()
            wait_until(lambda: _metric(pb, LOCK_HELD) == 1, 15, "b to take the lock from the frozen a")
            print(f"SIGSTOP of the active: the standby held the lock after {time.monotonic() - t_stop:.2f}s")
            env.nbctl("lsp-add", "ls2", "while-stopped-2", wait="sb", timeout=30)
            # NB changes reach a (its NB connection is alive) but it must not try to write them.
            env.nbctl("lsp-add", "ls3", "while-stopped-3", wait="sb", timeout=30)
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)
        # Resumed: a finds its connection gone and reconnects as a standby; it must not claim the
        # lock (not even before it has reconnected), nor try to write.
        resumed = time.monotonic()
        seen = []
        while time.monotonic() < resumed + 2.0:
            time.sleep(0.1)
            seen.append(_metric(pa, LOCK_HELD))
        assert 1 not in seen, f"the resumed instance reported the lock held: {seen}"
        wait_until(lambda: _metric(pa, LOCK_CONTENDED) == 1, 20, "a to see the lock contended")
        samples = []
        for i in range(10):
            env.nbctl("lsp-add", "ls3", f"after-resume-{i}", wait="sb", timeout=30)
            samples.append((_metric(pa, LOCK_HELD), _metric(pb, LOCK_HELD)))
        assert set(samples) == {(0, 1)}, samples
        # Not a single SB transaction, not even one failing on the dead connection.
        assert _metric(pa, "ovn_northd_py_sb_commits_total") == a_commits, "the resumed instance tried to write"
        st = assert_converged(env.nb.remote, env.sb.remote, tmp_path, before, skip=frozenset({"Connection"}))
        assert {"pb:while-stopped", "pb:while-stopped-2", "pb:after-resume-9"} <= set(st.keys)
        assert a.proc.poll() is None and b.proc is not None and b.proc.poll() is None
    finally:
        if a.proc is not None:
            os.kill(a.proc.pid, signal.SIGCONT)
        if b is not None:
            b.stop()
        a.stop()


# --------------------------------------------------------------------------- ours and the C daemon


def _c_status(workdir: Path) -> str:
    """``ovn-appctl status`` of the C daemon: active, standby or paused ('' if it does not answer)."""
    try:
        out = appctl(workdir / "ref-northd.ctl", "status", timeout=5)
    except subprocess.SubprocessError:
        return ""
    return out.split(":", 1)[-1].strip()


def test_hand_over_from_the_c_daemon_to_ours_and_back(env: Any, tmp_path: Path) -> None:
    """C active -> kill -9 -> ours takes over; then a new C stands by, ours is killed -9 -> C takes
    over.  No key moves at either hand-over and each end state equals a fresh recompute."""
    build_mixed(env, 4, 3, 2)
    ref = ReferenceNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    ours: OurNorthd | None = None
    try:
        env.sync()
        assert _c_status(env.workdir) == "active"
        ours, port = _ours(env.workdir, env.nb.remote, env.sb.remote, "ours")
        wait_until(lambda: _metric(port, LOCK_CONTENDED) == 1, 20, "ours to stand by behind C")
        for i in range(3):  # keys chosen by C while ours follows
            env.nbctl("ls-add", f"c{i}", "--", "lsp-add", f"c{i}", f"cp{i}", "--", "lsp-add", "ls1", f"cx{i}",
                      wait="sb")
        env.nbctl("ls-del", "c1", wait="sb")
        before = sb_state(env.sb.remote).keys
        assert ref.pid is not None
        os.kill(ref.pid, signal.SIGKILL)
        wait_until(lambda: _metric(port, LOCK_HELD) == 1, 20, "ours to take the lock from C")
        ref.pid = None
        env.nbctl("lsp-add", "c2", "ours-p1", "--", "ls-add", "ours-sw", wait="sb", timeout=30)
        mid = assert_converged(env.nb.remote, env.sb.remote, tmp_path / "1", before)

        # The other way: C stands by, ours is killed.
        ref = ReferenceNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
        wait_until(lambda: _c_status(env.workdir) == "standby", 20, "C to stand by behind ours")
        env.nbctl("lsp-add", "ours-sw", "ours-p2", wait="sb")
        keys = sb_state(env.sb.remote).keys
        _kill9(ours)
        env.nbctl("lsp-add", "ours-sw", "c-p3", "--", "lsp-del", "cx0", wait="sb", timeout=30)
        # C wrote the end state: compared with a fresh C run and with a fresh run of ours.
        assert_converged(env.nb.remote, env.sb.remote, tmp_path / "2", keys, gone={"pb:cx0"}, fresh="c")
        st = assert_converged(env.nb.remote, env.sb.remote, tmp_path / "3", keys, gone={"pb:cx0"})
        assert_keys_kept(mid.keys, st.keys, gone={"pb:cx0"})
        assert "pb:c-p3" in st.keys and _c_status(env.workdir) == "active"
    finally:
        if ours is not None:
            ours.stop()
        ref.stop()
