"""Faults (issue 16): database servers restarted under ours, and ours killed -9 in the middle of a
large cold write.  Each test ends with SB equal to what a fresh northd writes from the final NB, no
duplicate Datapath_Binding / Port_Binding / Multicast_Group rows and the tunnel keys of the rows
that existed before the fault unchanged (``ovn_northd_py.parity.faults``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import build_mixed, wait_until
from ovn_northd_py.parity.faults import assert_converged, assert_keys_kept, sb_state


def _changes(env: Any, tag: str) -> None:
    """A few NB transactions of different kinds (not waited for)."""
    env.nbctl("ls-add", f"new-{tag}", "--", "lsp-add", f"new-{tag}", f"np-{tag}", "--",
              "lsp-set-addresses", f"np-{tag}", "00:00:00:99:00:01 10.99.0.1")
    env.nbctl("lsp-add", "ls1", f"x-{tag}", "--", "lsp-set-addresses", f"x-{tag}", "00:00:00:99:00:02 192.168.1.99")
    env.nbctl("acl-add", "ls2", "to-lport", "1000", f"ip4.src == 10.99.{len(tag)}.1", "drop")
    env.nbctl("lsp-del", "lsp1-2")


def test_sb_server_killed_and_restarted_with_nb_changes_while_down(env: Any, ours: OurNorthd, tmp_path: Path) -> None:
    build_mixed(env, 4, 3, 2)
    env.sync()
    before = sb_state(env.sb.remote).keys
    env.sb.kill()  # kill -9; the database file stays
    _changes(env, "sbdown")
    time.sleep(1.0)  # ours notices and retries meanwhile
    env.sb.start()
    st = assert_converged(env.nb.remote, env.sb.remote, tmp_path, before, gone={"pb:lsp1-2"})
    assert {"pb:np-sbdown", "pb:x-sbdown"} <= set(st.keys) and "pb:lsp1-2" not in st.keys
    assert ours.proc is not None and ours.proc.poll() is None


def test_nb_server_restarted_then_sb_restarted_with_changes(env: Any, ours: OurNorthd, tmp_path: Path) -> None:
    build_mixed(env, 4, 3, 2)
    env.sync()
    before = sb_state(env.sb.remote).keys
    env.nb.stop()
    time.sleep(0.5)
    env.nb.start()  # same database file
    _changes(env, "nbre")
    mid = assert_converged(env.nb.remote, env.sb.remote, tmp_path / "1", before, gone={"pb:lsp1-2"})
    env.sb.stop()
    env.nbctl("lsp-del", "x-nbre", "--", "lsp-add", "ls3", "y-nbre")
    env.nbctl("ls-del", "new-nbre")
    env.sb.start()
    st = assert_converged(env.nb.remote, env.sb.remote, tmp_path / "2", mid.keys,
                          gone={"pb:x-nbre", "pb:np-nbre", f"dp:{_nb_uuid(mid, 'new-nbre')}",
                                f"mg:{_nb_uuid(mid, 'new-nbre')}/_MC_flood", f"mg:{_nb_uuid(mid, 'new-nbre')}/_MC_mrouter_flood",
                                f"mg:{_nb_uuid(mid, 'new-nbre')}/_MC_flood_l2", f"mg:{_nb_uuid(mid, 'new-nbre')}/_MC_unknown",
                                f"mg:{_nb_uuid(mid, 'new-nbre')}/_MC_static"})
    assert "pb:y-nbre" in st.keys
    assert ours.proc is not None and ours.proc.poll() is None


def _nb_uuid(state: Any, name: str) -> str:
    for r in state.dump.rows("Datapath_Binding").values():
        ext = r["external_ids"].as_dict()
        if ext.get("name") == name:
            return str(ext.get("logical-switch") or ext.get("logical-router"))
    raise AssertionError(f"no datapath {name}")


def _small_network(env: Any) -> None:
    cmds = ["lr-add", "pre-lr"]
    for i in range(2):
        cmds += ["--", "ls-add", f"pre-ls{i}"]
        for j in range(3):
            cmds += ["--", "lsp-add", f"pre-ls{i}", f"pre-p{i}-{j}", "--", "lsp-set-addresses", f"pre-p{i}-{j}",
                     f"00:00:00:aa:0{i}:0{j} 10.20.{i}.{j + 10}"]
        cmds += ["--", "lrp-add", "pre-lr", f"pre-lrp{i}", f"00:00:00:aa:ff:0{i}", f"10.20.{i}.1/24",
                 "--", "lsp-add", f"pre-ls{i}", f"pre-ls{i}-lr", "--", "lsp-set-type", f"pre-ls{i}-lr", "router",
                 "--", "lsp-set-options", f"pre-ls{i}-lr", f"router-port=pre-lrp{i}"]
    env.nbctl(*cmds)


def test_kill_9_in_the_middle_of_a_large_cold_write_then_restart(env: Any, tmp_path: Path) -> None:
    """A small network is synced (keys recorded); ours stops; NB grows to a network whose cold write
    takes about a second; ours starts again and is killed -9 once its big transaction went out; a
    new instance converges, keeping every key."""
    _small_network(env)
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="first").start()
    try:
        env.sync()
    finally:
        d.stop()
    before = sb_state(env.sb.remote).keys
    from ovn_northd_py.parity.harness import workload

    workload("mixed", 30, 5, 30)(env.nb.remote)
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="killed", extra_args=["-v"]).start()
    try:
        # The engine run's debug record is logged right before its SB transaction is sent.
        wait_until(lambda: any(r.get("event") == "engine run" for r in d.log_records()), 120,
                   "the cold engine run")
        time.sleep(0.05)
        assert d.proc is not None and d.proc.poll() is None, "ours exited before the kill"
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait()
        d.proc = None
        killed_in_write = not any(r.get("event") == "first sync committed" for r in d.log_records())
    finally:
        d.stop()
    assert killed_in_write, "the cold write finished before the kill: grow the network"
    # The transaction committed whole or not at all (3 or 94 datapaths), never in part; whatever
    # keys SB holds now (the killed one's too, if its write committed) must stay.
    after_kill = sb_state(env.sb.remote)
    assert after_kill.count("Datapath_Binding") in (3, 3 + 30 + 30 * 2 + 1)
    print(f"SB after the kill: {after_kill.count('Datapath_Binding')} datapaths")
    assert_keys_kept(before, after_kill.keys)
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="restarted").start()
    try:
        st = assert_converged(env.nb.remote, env.sb.remote, tmp_path, after_kill.keys)
        assert st.count("Datapath_Binding") == 3 + 30 + 30 * 2 + 1
    finally:
        d.stop()
