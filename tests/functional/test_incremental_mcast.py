"""Multicast: port option changes on snooping switches are incremental, and incremental equals recompute
(switch flows and the _MC_static / _MC_mrouter_flood groups)."""

from __future__ import annotations

import random

import pytest

from ovn_northd_py.devtools.testing import (
    apply_checked,
    checked_daemon,
    mismatches,
    node_runs,
    run_batch,
)

SWITCHES = ["m1", "m2", "m3"]


@pytest.fixture
def mcast_env(env):
    cmds: list[list[str]] = []
    for i, sw in enumerate(SWITCHES):
        cmds += [["ls-add", sw], ["set", "Logical_Switch", sw, "other_config:mcast_snoop=true"]]
        cmds += [["lsp-add", sw, f"{sw}-p0"], ["lsp-set-addresses", f"{sw}-p0", f"00:00:00:00:0{i}:01"]]
    cmds += [["set", "Logical_Switch", "m3", "other_config:mcast_flood_unregistered=true"]]
    cmds += [["lr-add", "r"], ["set", "Logical_Router", "r", "options:mcast_relay=true"],
             ["lrp-add", "r", "r-m1", "00:00:00:00:ff:01", "10.0.1.1/24"],
             ["lsp-add", "m1", "m1-r"], ["lsp-set-type", "m1-r", "router"], ["lsp-set-addresses", "m1-r", "router"],
             ["lsp-set-options", "m1-r", "router-port=r-m1"]]
    for c in cmds:
        env.nbctl(*c)
    with checked_daemon(env) as ctx:
        yield ctx


def groups(env) -> set[tuple[str, int]]:
    return {(r["name"], r["tunnel_key"]) for r in env.sb_rows("Multicast_Group")}


def test_mcast_option_changes_incremental(mcast_env):
    env, d, port = mcast_env
    before = node_runs(port, "northd", "recompute")
    run_batch(env, [["lsp-set-options", "m2-p0", "mcast_flood=true"]])
    assert ("_MC_static", 32771) in groups(env)
    rnd = random.Random(20261202)
    done: list[list[list[str]]] = []
    ports = [f"{sw}-p0" for sw in SWITCHES]
    for n in range(60):
        k = rnd.random()
        if k < 0.5:
            p = rnd.choice(ports)
            opts = [o for o in ("mcast_flood=true", "mcast_flood_reports=true") if rnd.random() < 0.5]
            batch = [["lsp-set-options", p, *opts]] if opts else [["clear", "Logical_Switch_Port", p, "options"]]
        elif k < 0.7:
            batch = [["lsp-set-enabled", rnd.choice(ports), rnd.choice(["enabled", "disabled"])]]
        elif k < 0.85 or len(ports) <= 3:
            sw = rnd.choice(SWITCHES)
            p = f"{sw}-n{n}"
            ports.append(p)
            batch = [["lsp-add", sw, p], ["lsp-set-options", p, rnd.choice(["mcast_flood=TRUE", "mcast_flood_reports=true"])]]
        else:
            p = rnd.choice(ports[3:])
            ports.remove(p)
            batch = [["lsp-del", p]]
        apply_checked(env, d, batch, done, 20261202)
    assert node_runs(port, "northd", "recompute") == before
    assert not mismatches(d)
