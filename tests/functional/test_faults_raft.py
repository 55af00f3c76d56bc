"""Faults (issue 16): RAFT.  NB and SB are 3-member clusters on 127.0.0.1 TCP ports and every
client (ours, ovn-nbctl) is given the three remotes.  The SB leader, then (in another test) the NB
leader, is killed -9 in the middle of a burst of NB changes and restarted on its database file.
Each test ends with SB equal to what a fresh northd writes from the final NB, no duplicate
Datapath_Binding / Port_Binding / Multicast_Group rows and the tunnel keys of the rows that
existed before the fault unchanged (``ovn_northd_py.parity.faults``)."""

from __future__ import annotations

import functools
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OurNorthd, OvsdbCluster, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, wait_until
from ovn_northd_py.parity.faults import (
    assert_converged,
    monitor_cond_since_resumes,
    sb_state,
    writes_off_leader,
)
from ovn_northd_py.parity.harness import workload

BURST = 30  # NB transactions in the burst
KILL_AFTER = 8  # the leader dies after this many


@dataclass
class Raft:
    workdir: Path
    nb: OvsdbCluster
    sb: OvsdbCluster

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 60) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout)


@pytest.fixture
def raft(tmp_path: Path) -> Iterator[Raft]:
    # Every member logs its jsonrpc traffic: which member got our writes, how we resumed monitoring.
    nb = OvsdbCluster(tmp_path / "nbc", "nb", NB_SCHEMA, server_args=["-vjsonrpc:file:dbg"]).start()
    try:
        sb = OvsdbCluster(tmp_path / "sbc", "sb", SB_SCHEMA, server_args=["-vjsonrpc:file:dbg"]).start()
    except BaseException:
        nb.stop()
        raise
    try:
        yield Raft(tmp_path, nb, sb)
    finally:
        sb.stop()
        nb.stop()


class Burst(threading.Thread):
    """``BURST`` NB transactions (idempotent, so that a retry after a lost reply is harmless), each
    retried while the NB cluster elects a leader; ``reached`` is set after ``KILL_AFTER`` of them."""

    def __init__(self, remote: str) -> None:
        super().__init__(daemon=True)
        self.remote = remote
        self.reached = threading.Event()
        self.errors: list[str] = []
        self.retries = 0

    def run(self) -> None:
        for k in range(BURST):
            sw = f"ls{1 + k % 4}"
            cmd = ["--may-exist", "lsp-add", sw, f"burst{k}", "--", "lsp-set-addresses", f"burst{k}",
                   f"00:00:00:bb:00:{k:02x} 192.168.{1 + k % 4}.{100 + k}"]
            if k % 5 == 4:
                cmd += ["--", "--if-exists", "lsp-del", f"burst{k - 2}"]
            for attempt in range(5):
                try:
                    # (A transaction sent to the leader as it is killed gets no reply: ovn-nbctl waits
                    # out its timeout.  8 s, not more: the recovery measured below includes it.)
                    nbctl(self.remote, *cmd, timeout=8)
                    break
                except subprocess.CalledProcessError as e:
                    self.retries += 1
                    if attempt == 4:
                        self.errors.append(f"burst{k}: {e.stderr}")
                    time.sleep(0.5)
            if k + 1 == KILL_AFTER:
                self.reached.set()


def _deleted_in_burst() -> set[str]:
    return {f"pb:burst{k - 2}" for k in range(BURST) if k % 5 == 4}


def _start(raft: Raft) -> tuple[OurNorthd, int]:
    workload("mixed", 4, 3, 2)(raft.nb.remote)
    port = free_port()
    d = OurNorthd(raft.workdir, raft.nb.remote, raft.sb.remote,
                  extra_args=[f"--metrics-address=127.0.0.1:{port}"]).start()
    raft.nbctl("sync", wait="sb")
    return d, port


def _lock_held(port: int) -> bool:
    try:
        return metric(port, "ovn_northd_py_sb_lock_held") == 1
    except OSError:
        return False


@pytest.mark.parametrize("which", ["sb", "nb"])
def test_leader_killed_during_a_burst_of_nb_changes_then_restarted(raft: Raft, tmp_path: Path, which: str) -> None:
    d, port = _start(raft)
    try:
        before = sb_state(raft.sb.wait_leader().remote).keys
        cluster = raft.sb if which == "sb" else raft.nb
        burst = Burst(raft.nb.remote)
        burst.start()
        assert burst.reached.wait(60), "the burst did not get going"
        leader = cluster.wait_leader()
        leader.kill()
        t_kill = time.monotonic()
        new_leader = cluster.wait_leader()
        assert new_leader is not leader
        burst.join(120)
        assert not burst.is_alive() and not burst.errors, burst.errors
        raft.nbctl("sync", wait="sb", timeout=60)
        recovered = time.monotonic() - t_kill
        wait_until(lambda: _lock_held(port), 10, "ours to hold the lock")
        # The killed member comes back on its database file and catches up as a follower.
        leader.start()
        wait_until(lambda: leader.role() == "follower", 30, f"{leader.name} to rejoin as a follower")
        raft.nbctl("lsp-add", "ls1", "after-restart", wait="sb", timeout=60)
        st = assert_converged(raft.nb.wait_leader().remote, raft.sb.wait_leader().remote, tmp_path, before,
                              gone=_deleted_in_burst(), sync_remote=raft.nb.remote)
        assert {f"pb:burst{BURST - 1}", "pb:after-restart"} <= set(st.keys)
        # Every member holds the same SB (the restarted one caught up).
        counts = {m.name: len(sb_state(m.remote).keys) for m in raft.sb.members}
        assert len(set(counts.values())) == 1, counts
        assert d.proc is not None and d.proc.poll() is None
        # Our writes went only to leaders; after the leader change we resumed monitoring the new
        # one with monitor_cond_since from our last transaction id.  (Whether the new leader can
        # answer with only the changes depends on its transaction history: usually for SB, not
        # always for NB; see bench_raft_failover.py --jsonrpc-log.)
        for m in raft.sb.members + raft.nb.members:
            assert not writes_off_leader(m.log_file.read_text(errors="replace")), m.name
        assert monitor_cond_since_resumes(new_leader.log_file.read_text(errors="replace")) >= 1
        print(f"{which}: recovered {recovered:.2f}s, burst retries {burst.retries}")
        assert recovered < 15, f"SB caught up with NB {recovered:.1f}s after the {which} leader was killed"
    finally:
        d.stop()


def test_standbys_on_a_cluster_never_claim_the_lock_and_one_takes_over(tmp_path: Path) -> None:
    """Every member of a cluster grants its own local lock: a standby whose IDL first reaches a
    follower gets "the lock" there before it finds the follower is not the leader and moves on.
    Standbys must never report (or act on) such a lock; after kill -9 of the active, one of them
    takes over through the leader."""
    nb = OvsdbServer(tmp_path, "nb", NB_SCHEMA).start()
    sb = OvsdbCluster(tmp_path / "sbc", "sb", SB_SCHEMA).start()
    started: list[OurNorthd] = []
    try:
        workload("mixed", 3, 2, 2)(nb.remote)
        pa = free_port()
        a = OurNorthd(tmp_path, nb.remote, sb.remote, name="a", extra_args=[f"--metrics-address=127.0.0.1:{pa}"])
        started.append(a.start())
        nbctl(nb.remote, "sync", wait="sb")
        wait_until(lambda: _lock_held(pa), 20, "a to hold the lock")
        leader = sb.wait_leader()
        followers = [m.remote for m in sb.members if m is not leader]
        standbys = []
        for i in range(3):  # (python-ovs shuffles the remotes: three standbys, three chances)
            port = free_port()
            remotes = ",".join([*followers[i % 2:], *followers[:i % 2], leader.remote])
            b = OurNorthd(tmp_path, nb.remote, remotes, name=f"b{i}", extra_args=[f"--metrics-address=127.0.0.1:{port}"])
            started.append(b.start())
            standbys.append((b, port))
        for b, port in standbys:
            wait_until(functools.partial(_contended, port), 30, f"{b.name} to stand by")
        nbctl(nb.remote, "lsp-add", "ls1", "while-standing-by", wait="sb")
        for b, _ in standbys:
            claims = [r for r in b.log_records() if r.get("event") == "sb lock" and r.get("held")]
            assert not claims, f"{b.name} claimed the lock while a held it: {claims}"
        before = sb_state(leader.remote).keys
        assert a.proc is not None
        a.proc.kill()
        a.proc.wait()
        a.proc = None
        nbctl(nb.remote, "lsp-add", "ls2", "after-takeover", wait="sb", timeout=30)
        holders = [b.name for b, port in standbys if _lock_held(port)]
        assert len(holders) == 1, holders
        st = assert_converged(nb.remote, sb.wait_leader().remote, tmp_path, before)
        assert "pb:after-takeover" in st.keys
    finally:
        for d in reversed(started):
            d.stop()
        sb.stop()
        nb.stop()


def _contended(port: int) -> bool:
    try:
        return metric(port, "ovn_northd_py_sb_lock_contended") == 1
    except OSError:
        return False
