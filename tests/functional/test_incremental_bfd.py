"""BFD sessions are handled incrementally (no recompute of any node), and incremental equals recompute:
NB BFD rows, routes naming them, router ports, and statuses ovn-controller reports in SB."""

from __future__ import annotations

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
    wait_until,
)

NODES = ("northd", "lflow", "sb_sync", "nb_sync")


@pytest.fixture
def mixed(env):
    build_mixed(env, 3, 2, 2)
    with checked_daemon(env) as ctx:
        yield ctx


def _uuid(env, table: str, *conds: str) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", table, *conds).strip().split("\n")[0]


def _sb_bfd(env, dst: str) -> str:
    return env.sb_get("BFD", f'dst_ip="{dst}"', "_uuid")


def _route_flows(env, prefix: str) -> int:
    return sum(prefix in line for line in env.sbctl("lflow-list", "lr1").splitlines())


def test_session_status_drives_the_route(mixed):
    env, d, port = mixed
    before = {n: node_runs(port, n, "recompute") for n in NODES}
    run_batch(env, [["--id=@b", "create", "bfd", "logical_port=lr1-join", "dst_ip=172.16.0.77"],
                    ["--id=@r", "create", "logical_router_static_route", 'ip_prefix="10.77.0.0/24"',
                     "nexthop=172.16.0.77", "bfd=@b"],
                    ["add", "logical_router", "lr1", "static_routes", "@r"]])
    b = _uuid(env, "bfd", "dst_ip=172.16.0.77")
    assert env.sb_get("BFD", "dst_ip=172.16.0.77", "status") == "down"
    assert env.sb_get("BFD", "dst_ip=172.16.0.77", "src_port") == "49152"
    assert env.nbctl("get", "bfd", b, "status").strip() == "down"
    assert _route_flows(env, "10.77.0.0/24") == 0  # session down: no route
    assert _route_flows(env, "udp.dst == 3784") > 0  # lr1-join is a BFD port
    env.sbctl("set", "bfd", _sb_bfd(env, "172.16.0.77"), "status=up")
    wait_until(lambda: env.nbctl("get", "bfd", b, "status").strip() == "up", 10, "NB status up")
    wait_until(lambda: _route_flows(env, "10.77.0.0/24") == 2, 10, "route installed (and its BFD copy)")
    env.sbctl("set", "bfd", _sb_bfd(env, "172.16.0.77"), "status=admin_down")  # NB status (up) wins
    wait_until(lambda: env.sb_get("BFD", "dst_ip=172.16.0.77", "status") == "up", 10, "SB status repaired")
    env.sbctl("set", "bfd", _sb_bfd(env, "172.16.0.77"), "status=down")
    wait_until(lambda: _route_flows(env, "10.77.0.0/24") == 0, 10, "route removed")
    run_batch(env, [["clear", "logical_router_static_route", _uuid(env, "logical_router_static_route",
                                                                  'ip_prefix="10.77.0.0/24"'), "bfd"]])
    assert env.sb_get("BFD", "dst_ip=172.16.0.77", "status") == "admin_down"
    wait_until(lambda: env.nbctl("get", "bfd", b, "status").strip() == "admin_down", 10, "NB admin_down")
    assert _route_flows(env, "10.77.0.0/24") == 2
    run_batch(env, [["destroy", "bfd", b]])
    assert not env.sb_rows("BFD") and _route_flows(env, "udp.dst == 3784") == 0
    assert {n: node_runs(port, n, "recompute") for n in NODES} == before
    assert not mismatches(d)


PORTS = ["lr1-join", "lr2-join", "lr1-ls1", "lrgw1-join", "nope"]
ROUTERS = {"lr1": "172.16.0", "lr2": "172.16.0", "lrgw1": "172.16.1"}


def next_batch(env, rnd: random.Random, n: int, state: dict[str, set]) -> list[list[str]] | None:
    """One random NB transaction, or None after an SB status change (ovn-controller's part)."""
    bfds, routes = state["bfd"], state["route"]
    k = rnd.random()
    if k < 0.2:
        p, dst = rnd.choice(PORTS), f"172.16.{rnd.randrange(2)}.{rnd.randrange(50, 56)}"
        if (p, dst) in bfds:
            cols = [f"min_tx={rnd.randrange(100, 2000)}", f"detect_mult={rnd.randrange(1, 9)}"]
            if rnd.random() < 0.3:
                cols.append(f"status={rnd.choice(['up', 'down', 'admin_down', 'init'])}")
            return [["set", "bfd", _uuid(env, "bfd", f"logical_port={p}", f"dst_ip={dst}"), *cols]]
        bfds.add((p, dst))
        return [["create", "bfd", f"logical_port={p}", f"dst_ip={dst}"]]
    if k < 0.3 and bfds:
        p, dst = rnd.choice(sorted(bfds))
        bfds.discard((p, dst))
        return [["destroy", "bfd", _uuid(env, "bfd", f"logical_port={p}", f"dst_ip={dst}")]]
    if k < 0.5:  # a route with a session (new or existing), in one transaction
        r = rnd.choice(sorted(ROUTERS))
        hop = f"{ROUTERS[r]}.{rnd.randrange(50, 56)}"
        prefix = f"10.{100 + n % 50}.{n % 3}.0/24"
        if (r, prefix) in routes:
            return None
        routes.add((r, prefix))
        port = rnd.choice(PORTS)
        route = ["--id=@r", "create", "logical_router_static_route", f'ip_prefix="{prefix}"', f"nexthop={hop}"]
        if (port, hop) in bfds:
            route.append(f"bfd={_uuid(env, 'bfd', f'logical_port={port}', f'dst_ip={hop}')}")
            return [route, ["add", "logical_router", r, "static_routes", "@r"]]
        bfds.add((port, hop))
        return [["--id=@b", "create", "bfd", f"logical_port={port}", f"dst_ip={hop}"], [*route, "bfd=@b"],
                ["add", "logical_router", r, "static_routes", "@r"]]
    if k < 0.6 and routes:
        r, prefix = rnd.choice(sorted(routes))
        route = _uuid(env, "logical_router_static_route", f'ip_prefix="{prefix}"')
        if rnd.random() < 0.5:
            routes.discard((r, prefix))
            return [["remove", "logical_router", r, "static_routes", route]]
        if bfds and rnd.random() < 0.6:
            p, dst = rnd.choice(sorted(bfds))
            return [["set", "logical_router_static_route", route, f"bfd={_uuid(env, 'bfd', f'logical_port={p}', f'dst_ip={dst}')}"]]
        return [["clear", "logical_router_static_route", route, "bfd"]]
    if k < 0.85 and bfds:  # ovn-controller reports a status
        p, dst = rnd.choice(sorted(bfds))
        sb = env.sbctl("--bare", "--columns=_uuid", "find", "bfd", f"logical_port={p}", f"dst_ip={dst}").strip()
        if sb:
            env.sbctl("set", "bfd", sb, f"status={rnd.choice(['up', 'up', 'down', 'init', 'admin_down'])}")
        return None
    if k < 0.93:  # a router port whose networks change which routes resolve
        net = rnd.choice(["172.16.0.1/16", "172.17.0.1/16"])
        return [["set", "logical_router_port", "lr1-join", f'networks="{net}"']]
    return [["set", "logical_router_port", "lr2-join", f"enabled={rnd.choice(['true', 'false'])}"]]


def test_random_bfd_changes_incremental_equals_recompute(mixed):
    env, d, port = mixed
    seed = 20261130
    rnd = random.Random(seed)
    before = {n: node_runs(port, n, "recompute") for n in NODES}
    state: dict[str, set] = {"bfd": set(), "route": set()}
    done: list[list[list[str]]] = []
    for n in range(150):
        batch = next_batch(env, rnd, n, state)
        apply_checked(env, d, batch if batch is not None else [["sync"]], done, seed)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 100
    assert {n: node_runs(port, n, "recompute") for n in NODES} == before
    assert len(env.sb_rows("BFD")) == len(state["bfd"])
