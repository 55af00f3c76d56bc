"""Pass-through writes (engine/passthrough.py): an NB address set's addresses changed while the
daemon is idle go into SB as soon as the NB update is read; the engine, run afterwards on the same
change, writes nothing more.  What passing through must not change: SB's contents."""

from __future__ import annotations

import time
from typing import Any

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import free_port, metric, wait_until

PASSED = "ovn_northd_py_passthrough_writes_total"
COMMITS = "ovn_northd_py_sb_commits_total"
RUNS = "ovn_northd_py_engine_runs_total"


def _daemon(env: Any, started: list[OurNorthd], *extra: str, name: str = "ours") -> int:
    port = free_port()
    started.append(OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name=name,
                             extra_args=[f"--metrics-address=127.0.0.1:{port}", *extra]).start())
    return port


def _metric_or_none(port: int, name: str) -> float | None:
    try:
        return metric(port, name)
    except OSError:  # (not serving yet)
        return None


def _sb_addresses(env: Any, name: str) -> set[str]:
    return set(env.sb_get("Address_Set", f"name={name}", "addresses").replace('"', "").split())


def _counters(port: int) -> dict[str, float]:
    return {"passed": metric(port, PASSED), "passed_ok": metric(port, COMMITS, 'status="passthrough-success"'),
            "engine_writes": metric(port, COMMITS, 'status="success"'), "runs": metric(port, RUNS)}


def _settled_after(port: int, runs_before: float) -> dict[str, float]:
    """The counters once the engine has run on the change (it runs once the write is done)."""
    wait_until(lambda: metric(port, RUNS) > runs_before, 10, "the engine run after the change")
    time.sleep(0.2)
    return _counters(port)


def _setup(env: Any) -> None:
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p0",
              "--", "create", "Address_Set", "name=as1", 'addresses="10.0.0.1","10.0.0.2"',
              "--", "acl-add", "sw0", "to-lport", "1001", "ip4.src == $as1", "allow", wait="sb")


def test_an_address_joining_a_set_passes_through_and_the_engine_writes_nothing_after(env, started):
    port = _daemon(env, started)
    _setup(env)
    before = _counters(port)
    env.nbctl("add", "Address_Set", "as1", "addresses", '"10.0.0.3"', wait="sb")
    assert _sb_addresses(env, "as1") == {"10.0.0.1", "10.0.0.2", "10.0.0.3"}  # (--wait=sb: already there)
    after = _settled_after(port, before["runs"])
    assert after["passed"] - before["passed"] == 1
    assert after["passed_ok"] - before["passed_ok"] == 1
    assert after["engine_writes"] == before["engine_writes"], "the engine wrote after the pass-through"
    assert int(env.sbctl("get", "SB_Global", ".", "nb_cfg").strip()) == int(
        env.nbctl("get", "NB_Global", ".", "sb_cfg").strip()) == int(env.nbctl("get", "NB_Global", ".", "nb_cfg").strip())


def test_addresses_leaving_and_joining_in_one_change_pass_through(env, started):
    port = _daemon(env, started)
    _setup(env)
    before = _counters(port)
    env.nbctl("remove", "Address_Set", "as1", "addresses", '"10.0.0.1"',
              "--", "add", "Address_Set", "as1", "addresses", '"10.0.0.7"', '"10.0.0.8"', wait="sb")
    assert _sb_addresses(env, "as1") == {"10.0.0.2", "10.0.0.7", "10.0.0.8"}
    after = _settled_after(port, before["runs"])
    assert after["passed"] - before["passed"] == 1
    assert after["engine_writes"] == before["engine_writes"]


def test_a_change_with_anything_else_in_it_is_the_engines(env, started):
    port = _daemon(env, started)
    _setup(env)
    before = _counters(port)
    env.nbctl("add", "Address_Set", "as1", "addresses", '"10.0.0.3"', "--", "lsp-add", "sw0", "p1", wait="sb")
    assert _sb_addresses(env, "as1") == {"10.0.0.1", "10.0.0.2", "10.0.0.3"}
    assert env.sb_get("Port_Binding", "logical_port=p1", "logical_port") == "p1"
    after = _settled_after(port, before["runs"])
    assert after["passed"] == before["passed"]
    assert after["engine_writes"] - before["engine_writes"] == 1


def test_a_port_groups_own_set_of_that_name_is_not_passed_through(env, started):
    """An NB Address_Set named like a port group's own set (``pg1_ip4``) does not reach SB: the port
    group's addresses stay (warned once); a change of its addresses must not pass through."""
    port = _daemon(env, started)
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p0",
              "--", "lsp-set-addresses", "p0", "00:00:00:00:00:01 10.0.0.11",
              "--", "pg-add", "pg1", "p0",
              "--", "create", "Address_Set", "name=pg1_ip4", 'addresses="192.0.2.1"', wait="sb")
    assert _sb_addresses(env, "pg1_ip4") == {"10.0.0.11"}
    before = _counters(port)
    env.nbctl("add", "Address_Set", "pg1_ip4", "addresses", '"192.0.2.2"', wait="sb")
    time.sleep(0.3)
    assert _sb_addresses(env, "pg1_ip4") == {"10.0.0.11"}
    assert metric(port, PASSED) == before["passed"]


def test_no_passthrough_leaves_every_change_to_the_engine(env, started):
    port = _daemon(env, started, "--no-passthrough")
    _setup(env)
    env.nbctl("add", "Address_Set", "as1", "addresses", '"10.0.0.3"', wait="sb")
    assert _sb_addresses(env, "as1") == {"10.0.0.1", "10.0.0.2", "10.0.0.3"}
    assert metric(port, PASSED) == 0


def test_a_hot_standby_passes_nothing_through(env, started):
    active = _daemon(env, started)
    _setup(env)
    wait_until(lambda: _metric_or_none(active, "ovn_northd_py_sb_lock_held") == 1, 10, "the first instance active")
    standby = _daemon(env, started, name="standby")
    wait_until(lambda: (_metric_or_none(standby, RUNS) or 0) > 0, 20, "the standby's first run")
    env.nbctl("add", "Address_Set", "as1", "addresses", '"10.0.0.3"', wait="sb")
    time.sleep(0.3)
    assert metric(standby, PASSED) == 0
    assert metric(active, PASSED) == 1
