"""Static routes and router policies are handled incrementally, and incremental equals recompute."""

from __future__ import annotations

import os
import random

import pytest

from ovn_northd_py.devtools.testing import (
    apply_checked,
    build_mixed,
    checked_daemon,
    metric,
    mismatches,
    node_runs,
    run_batch,
)


@pytest.fixture
def routed(env):
    build_mixed(env, 4, 3, 3)
    with checked_daemon(env) as ctx:
        yield ctx


def random_route_batches(seed: int, total: int) -> list[list[list[str]]]:
    rnd = random.Random(seed)
    routers = ["lr1", "lr2", "lr3", "lrgw1", "lrgw2"]
    routes: list[tuple[str, str]] = []
    nexthops: dict[tuple[str, str], set[str]] = {}
    policies: list[tuple[str, str]] = []
    batches: list[list[list[str]]] = []
    hops = ["172.16.0.100", "172.16.0.101", "172.16.0.102", "10.0.0.200"]
    n = 0
    while n < total:
        n += 1
        r = rnd.choice(routers)
        k = rnd.random()
        if k < 0.3 or not routes:
            prefix = f"10.{100 + n % 100}.{n % 7}.0/24"
            nexthop = rnd.choice(hops)
            if (r, prefix) in nexthops:
                continue
            routes.append((r, prefix))
            nexthops[(r, prefix)] = {nexthop}
            policy = ["--policy=src-ip"] if rnd.random() < 0.2 else []
            batches.append([[*policy, "lr-route-add", r, prefix, nexthop]])
        elif k < 0.4:
            # ECMP: one more nexthop for an existing prefix (symmetric reply on the gateway routers).
            r, prefix = rnd.choice(routes)
            free = [h for h in hops if h not in nexthops[(r, prefix)]]
            if not free:
                continue
            nexthops[(r, prefix)].add(free[0])
            sym = ["--ecmp-symmetric-reply"] if r.startswith("lrgw") else ["--ecmp"]
            batches.append([[*sym, "lr-route-add", r, prefix, free[0]]])
        elif k < 0.55:
            r, prefix = routes.pop(rnd.randrange(len(routes)))
            del nexthops[(r, prefix)]
            batches.append([["--if-exists", "lr-route-del", r, prefix]])
        elif k < 0.75:
            prio = str(100 + n % 50)
            match = f"ip4.src == 10.{n % 200}.0.0/16"
            action = rnd.choice([["allow"], ["drop"], ["reroute", "172.16.0.100"]])
            policies.append((r, prio))
            batches.append([["--may-exist", "lr-policy-add", r, prio, match, *action]])
        elif policies:
            r, prio = policies.pop(rnd.randrange(len(policies)))
            batches.append([["--if-exists", "lr-policy-del", r, prio]])
    return batches


def test_route_and_policy_changes_need_no_recompute(routed):
    env, d, port = routed
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow", "sb_sync")}
    run_batch(env, [["lr-route-add", "lr1", "10.200.0.0/24", "172.16.0.100"]])
    run_batch(env, [["lr-policy-add", "lr1", "150", "ip4.src == 10.0.0.0/8", "drop"]])
    run_batch(env, [["lr-route-del", "lr1", "10.200.0.0/24"]])
    run_batch(env, [["lr-policy-del", "lr1", "150"]])
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_random_route_changes_incremental_equals_recompute(routed):
    env, d, port = routed
    seed = int(os.environ.get("OVN_TEST_SEED", "20261130"))
    batches = random_route_batches(seed, 150)
    done: list[list[list[str]]] = []
    for batch in batches:
        apply_checked(env, d, batch, done, seed)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= len(batches) // 2
    assert node_runs(port, "northd", "recompute") <= 1
