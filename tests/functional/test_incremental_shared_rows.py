"""NB rows listed by two parents (a route, policy or NAT rule on two routers, a port on two
switches: the schema allows it) are handled incrementally as a recompute handles them.

Each test shares a row, then takes it off one parent; ``--check-incremental=1`` compares every
incremental run with a full recompute (found by the random mutations of
``devtools/mutate_nb.py``: flows owned per row lost the other parent's copy).
"""

from __future__ import annotations

from typing import Any

import pytest

from ovn_northd_py.devtools.testing import build_mixed, checked_daemon, mismatches, run_batch


@pytest.fixture
def routed(env):
    build_mixed(env, 2, 2, 2)  # routers lr1, lr2, lrgw1, lrgw2 on switch "join"
    with checked_daemon(env) as ctx:
        yield ctx


def _uuid(env: Any, table: str, *cond: str) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", table, *cond).strip()


def _flows_on(env: Any, stage: str, needle: str) -> set[str]:
    """The SB datapaths (uuids, via the flows' datapath or group) with a flow of ``stage`` matching
    ``needle``."""
    groups = {r["_uuid"][1]: _uuids(r["datapaths"]) for r in env.sb_rows("Logical_DP_Group")}
    out: set[str] = set()
    for r in env.sb_rows("Logical_Flow"):
        if dict(r["external_ids"][1]).get("stage-name") == stage and needle in r["match"]:
            out |= _uuids(r["logical_datapath"])
            for g in _uuids(r["logical_dp_group"]):
                out |= groups[g]
    return out


def _uuids(datum: list) -> set[str]:
    """The uuids of an OVSDB JSON reference datum (``["uuid", U]`` or ``["set", [...]]``)."""
    return {datum[1]} if datum[0] == "uuid" else {u for _, u in datum[1]}


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_policy_and_route_on_two_routers_keep_both_routers_flows(routed):
    env, d, _port = routed
    run_batch(env, [["lr-policy-add", "lr1", "150", "ip4.src == 10.99.0.0/16", "drop"],
                    ["lr-route-add", "lr1", "10.98.0.0/24", "172.16.0.100"]])
    policy = _uuid(env, "Logical_Router_Policy", "priority=150")
    route = _uuid(env, "Logical_Router_Static_Route", "ip_prefix=\"10.98.0.0/24\"")
    run_batch(env, [["add", "Logical_Router", "lr2", "policies", policy],
                    ["add", "Logical_Router", "lr2", "static_routes", route]])
    assert len(_flows_on(env, "lr_in_policy", "10.99.0.0/16")) == 2
    run_batch(env, [["set", "Logical_Router_Policy", policy, "priority=160"]])  # a row update, both routers
    run_batch(env, [["remove", "Logical_Router", "lr1", "policies", policy],
                    ["remove", "Logical_Router", "lr1", "static_routes", route]])
    assert len(_flows_on(env, "lr_in_policy", "10.99.0.0/16")) == 1
    assert len(_flows_on(env, "lr_in_ip_routing", "10.98.0.0/24")) == 1
    assert not mismatches(d)


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_nat_rule_on_two_routers_keeps_both_routers_flows(routed):
    env, d, _port = routed
    run_batch(env, [["lr-nat-add", "lrgw1", "dnat_and_snat", "172.16.0.240", "10.0.0.240"]])
    nat = _uuid(env, "NAT", "external_ip=172.16.0.240")
    run_batch(env, [["add", "Logical_Router", "lrgw2", "nat", nat]])
    assert len(_flows_on(env, "lr_in_unsnat", "172.16.0.240")) == 2
    run_batch(env, [["set", "NAT", nat, "logical_ip=10.0.0.241"]])  # a row update, both routers
    run_batch(env, [["remove", "Logical_Router", "lrgw1", "nat", nat]])
    assert len(_flows_on(env, "lr_in_unsnat", "172.16.0.240")) == 1
    assert not mismatches(d)


def test_port_listed_by_two_switches_stays_where_recompute_puts_it(routed):
    env, d, _port = routed
    run_batch(env, [["ls-add", "extra"], ["lsp-add", "extra", "twice"],
                    ["lsp-set-addresses", "twice", "0a:00:00:00:99:01 10.1.0.99"]])
    port = _uuid(env, "Logical_Switch_Port", "name=twice")
    run_batch(env, [["add", "Logical_Switch", "ls1", "ports", port]])
    run_batch(env, [["remove", "Logical_Switch", "extra", "ports", port]])
    run_batch(env, [["add", "Logical_Switch", "extra", "ports", port]])
    run_batch(env, [["remove", "Logical_Switch", "ls1", "ports", port]])
    assert "twice" in {r["logical_port"] for r in env.sb_rows("Port_Binding")}
    assert not mismatches(d)
