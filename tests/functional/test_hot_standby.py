"""Hot standby: without the SB lock, ours keeps its model and flows current and writes nothing;
taking over recomputes only the writer nodes, keeps every tunnel key and converges."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, ReferenceNorthd
from ovn_northd_py.devtools.testing import (
    build_mixed,
    flows_not_of_profile,
    free_port,
    metric,
    node_runs,
    wait_until,
)


def _keys(env: Any) -> dict[str, int]:
    out = {}
    for r in env.sb_rows("Datapath_Binding"):
        ids = dict(r["external_ids"][1])
        out[ids.get("name", "")] = r["tunnel_key"]
    for r in env.sb_rows("Port_Binding"):
        out["port:" + r["logical_port"]] = r["tunnel_key"]
    return out


def _flows(env: Any) -> set[tuple[Any, ...]]:
    return {(r["pipeline"], r["table_id"], r["priority"], r["match"], r["actions"])
            for r in env.sb_rows("Logical_Flow")}


def _ours(env: Any, name: str, *extra: str) -> tuple[OurNorthd, int]:
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name=name,
                  extra_args=[f"--metrics-address=127.0.0.1:{port}", *extra]).start()
    return d, port


def _lock_held(port: int) -> bool:
    try:
        return metric(port, "ovn_northd_py_sb_lock_held") == 1
    except OSError:
        return False  # (metrics not served yet)


def _contended(port: int) -> bool:
    try:
        return metric(port, "ovn_northd_py_sb_lock_contended") == 1
    except OSError:
        return False


def _standby_runs(port: int) -> float:
    try:
        return metric(port, "ovn_northd_py_engine_runs_total", 'kind="standby-')
    except OSError:
        return 0.0


def _active_then_warm_standby(env: Any, started: list[OurNorthd]) -> tuple[OurNorthd, int, OurNorthd, int]:
    """``a`` holds the lock (started first, synced), then ``b`` has computed once as a standby."""
    a, aport = _ours(env, "a")
    started.append(a)
    env.sync()
    wait_until(lambda: _lock_held(aport), 20, "a to hold the lock")
    b, bport = _ours(env, "b")
    started.append(b)
    wait_until(lambda: _standby_runs(bport) >= 1, 20, "b to compute as a standby")
    return a, aport, b, bport


def _kill9(d: OurNorthd) -> None:
    assert d.proc is not None
    os.kill(d.proc.pid, signal.SIGKILL)
    d.proc.wait()
    d.proc = None


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_standby_computes_without_writing_and_takes_over_without_recompute(env: Any, started: list[OurNorthd]) -> None:
    """(Under each release: the standby's model and flow table are of the release's profile, which
    the flows it writes on taking over, without recomputing them, show.)"""
    build_mixed(env, 3, 2, 2)
    a, _aport, _b, bport = _active_then_warm_standby(env, started)
    assert metric(bport, "ovn_northd_py_sb_lock_held") == 0
    # NB changes while b stands by: b follows them, a writes them.
    env.nbctl("lsp-add", "ls1", "hs1", "--", "lsp-set-addresses", "hs1", "00:00:00:00:77:01 10.0.0.77",
              wait="sb")
    env.nbctl("ls-add", "hsw", "--", "lsp-add", "hsw", "hs2", wait="sb")
    before_keys, before_flows = _keys(env), _flows(env)
    wait_until(lambda: node_runs(bport, "northd", "incremental") + node_runs(bport, "northd", "recompute") >= 2,
               20, "b to follow the NB changes")
    assert metric(bport, "ovn_northd_py_sb_commits_total") == 0  # a standby writes nothing
    northd_recomputes = node_runs(bport, "northd", "recompute")
    lflow_recomputes = node_runs(bport, "lflow", "recompute")
    _kill9(a)
    wait_until(lambda: _lock_held(bport), 30, "b to take the lock")
    env.nbctl("lsp-add", "hsw", "hs3", wait="sb")
    # Taking over recomputed only the writers: the model and the flow table were current.
    assert node_runs(bport, "northd", "recompute") == northd_recomputes
    assert node_runs(bport, "lflow", "recompute") == lflow_recomputes
    assert metric(bport, "ovn_northd_py_sb_commits_total") >= 1
    after = _keys(env)
    assert {k: v for k, v in after.items() if k in before_keys} == before_keys
    assert "port:hs3" in after
    assert before_flows <= _flows(env) | {f for f in before_flows if "hs3" in f[3]}
    assert metric(bport, "ovn_northd_py_release_info", f'release="{env.release.name}"') == 1
    assert not flows_not_of_profile(env.sb_rows("Logical_Flow"), env.profile)


def test_standby_behind_the_reference_keeps_its_tunnel_keys(env: Any) -> None:
    """The C daemon chooses the keys while ours stands by; after the hand-over no key moves."""
    build_mixed(env, 3, 2, 2)
    ref = ReferenceNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    env.sync()
    ours, port = _ours(env, "ours")
    try:
        wait_until(lambda: _standby_runs(port) >= 1, 20, "ours to compute as a standby")
        # New entities get their keys from the reference, in whatever order it picks them.
        for i in range(4):
            env.nbctl("ls-add", f"r{i}", "--", "lsp-add", f"r{i}", f"rp{i}", "--", "lsp-add", "ls1", f"x{i}",
                      wait="sb")
        env.nbctl("ls-del", "r1", wait="sb")
        env.nbctl("ls-add", "r9", "--", "lsp-add", "r9", "rp9", "--", "create", "Address_Set", "name=hs_as",
                  "addresses=10.1.1.1", wait="sb")
        # A foreign edit the reference leaves alone: ours must find it (its writers are not clean)
        # and repair it when it takes over.
        env.sbctl("set", "Address_Set", "hs_as", "addresses=6.6.6.6")
        before = _keys(env)
        wait_until(lambda: _standby_runs(port) >= 2, 20, "ours to follow as a standby")
        ref.stop()
        wait_until(lambda: _lock_held(port), 30, "ours to take the lock")
        env.nbctl("lsp-add", "r9", "rp10", wait="sb")
        after = _keys(env)
        assert {k: v for k, v in after.items() if k in before} == before
        assert env.sb_get("Address_Set", "name=hs_as", "addresses") == "10.1.1.1"
    finally:
        ours.stop()
        ref.stop()


def test_no_hot_standby_stays_idle(env: Any) -> None:
    build_mixed(env, 2, 1, 1)
    a, aport = _ours(env, "a")
    env.sync()
    wait_until(lambda: _lock_held(aport), 20, "a to hold the lock")
    b, bport = _ours(env, "b", "--no-hot-standby")
    try:
        wait_until(lambda: _contended(bport), 20, "b to see the lock taken")
        env.nbctl("lsp-add", "ls1", "idle1", wait="sb")
        assert _standby_runs(bport) == 0
        assert node_runs(bport, "northd", "recompute") == 0
    finally:
        b.stop()
        a.stop()


def test_takeover_writes_what_nobody_wrote_while_standing_by(env: Any, started: list[OurNorthd]) -> None:
    """The active stops writing (SIGSTOP keeps its lock on a unix socket), a switch is added: the
    standby computes its flows but SB has no datapath for them yet.  Taking over writes them."""
    build_mixed(env, 2, 1, 1)
    a, _aport, _b, bport = _active_then_warm_standby(env, started)
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGSTOP)
    env.nbctl("ls-add", "late", "--", "lsp-add", "late", "late1", "--",
              "lsp-set-addresses", "late1", "00:00:00:00:88:01 10.88.0.1")
    wait_until(lambda: _standby_runs(bport) >= 2, 20, "b to follow the new switch")
    time.sleep(1.0)  # (b's quiet check of its writers runs)
    _kill9(a)
    wait_until(lambda: _lock_held(bport), 30, "b to take the lock")
    env.sync()
    late = next(r for r in env.sb_rows("Datapath_Binding") if dict(r["external_ids"][1]).get("name") == "late")
    groups = {str(g["_uuid"][1]) for g in env.sb_rows("Logical_DP_Group")
              if late["_uuid"] in list(g["datapaths"][1]) or g["datapaths"] == late["_uuid"]}
    flows = [r for r in env.sb_rows("Logical_Flow") if r["logical_datapath"] == late["_uuid"]
             or (r["logical_dp_group"] != ["set", []] and str(r["logical_dp_group"][1]) in groups)]
    assert len(flows) > 40, f"only {len(flows)} flows on the switch added while nobody wrote"
