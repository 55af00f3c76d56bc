"""Load-balancer health checks under ``--check-incremental=1``: random health-check, mapping, VIP and
port changes on NB, and Service_Monitor ``status`` / Port_Binding ``up`` flips on SB (standing in for
ovn-controller): the incremental state (flows and SB rows) equals a full recompute after each one,
and none of them recomputes the northd or lflow nodes."""

from __future__ import annotations

import os
import random
import time

import pytest

from ovn_northd_py.devtools.testing import (
    apply_checked,
    checked_daemon,
    metric,
    mismatches,
    node_runs,
    run_batch,
    wait_until,
)

LBS = {"lb1": "tcp", "lb2": "udp", "lb3": "tcp", "lb4": "sctp"}
PORTS = ("p1", "p2", "p3", "q1", "q2", "ghost", "ls2-lr1")
BACKENDS = tuple(f"10.1.0.{i}" for i in range(1, 7))


@pytest.fixture
def hc_env(env):
    cmds: list[list[str]] = [
        ["ls-add", "ls1"], ["ls-add", "ls2"],
        *(["lsp-add", "ls1", p] for p in ("p1", "p2", "p3")), *(["lsp-add", "ls2", p] for p in ("q1", "q2")),
        ["lr-add", "lr1"], ["lrp-add", "lr1", "lr1-ls2", "00:00:00:00:ff:01", "10.1.0.254/24"],
        ["lsp-add", "ls2", "ls2-lr1"], ["lsp-set-type", "ls2-lr1", "router"],
        ["lsp-set-addresses", "ls2-lr1", "router"], ["lsp-set-options", "ls2-lr1", "router-port=lr1-ls2"],
    ]
    for lb, proto in LBS.items():
        cmds.append(["lb-add", lb, "10.2.0.1:80", "10.1.0.1:80,10.1.0.2:80", proto])
    cmds += [["ls-lb-add", "ls1", "lb1"], ["ls-lb-add", "ls2", "lb1"], ["ls-lb-add", "ls1", "lb2"],
             ["lr-lb-add", "lr1", "lb3"], ["ls-lb-add", "ls2", "lb4"]]
    args: list[str] = []
    for c in cmds:
        args += [*(["--"] if args else []), *c]
    env.nbctl(*args)  # no daemon yet: no --wait
    for lb, maps in (("lb1", ("p1", "q1")), ("lb2", ("p2", "p3")), ("lb3", ("q2", "p1"))):
        env.nbctl("--id=@hc", "create", "load_balancer_health_check", 'vip="10.2.0.1:80"', "options:interval=5",
                  "--", "add", "load_balancer", lb, "health_check", "@hc",
                  "--", "set", "load_balancer", lb, f'ip_port_mappings:"10.1.0.1"="{maps[0]}:10.1.0.200"',
                  f'ip_port_mappings:"10.1.0.2"="{maps[1]}:10.1.0.200"')
    with checked_daemon(env) as ctx:
        yield ctx


def _engine_failures(d) -> list[dict]:
    return [r for r in d.log_records() if r.get("event") == "engine run failed; will recompute"]


def apply_sb_checked(env, d, cmd: list[str], done: list, seed: int) -> None:
    """One ovn-sbctl command (ovn-controller's part), then settle, then the same check as apply_checked."""
    env.sbctl(*cmd)
    done.append([["sbctl", *cmd]])
    time.sleep(0.05)
    env.sync()
    bad = mismatches(d)
    if bad:
        raise AssertionError(f"incremental != recompute after {len(done)} steps (seed {seed}):\n"
                             f"{bad[0].get('differences')}\nsequence:\n" + "\n".join(map(str, done)))


def _monitors(env) -> list[str]:
    return env.sbctl("--bare", "--columns=_uuid", "list", "service_monitor").split()


def random_step(env, rnd: random.Random, n: int) -> tuple[str, list[list[str]] | list[str]] | None:
    lb = rnd.choice(tuple(LBS))
    r = rnd.random()
    if r < 0.12:
        vip = rnd.choice(("10.2.0.1:80", f"10.2.0.{n % 50 + 2}:80", "10.2.0.99"))
        backends = ",".join(f"{b}:80" if ":" in vip else b for b in rnd.sample(BACKENDS, rnd.randint(0, 4)))
        return "nb", [["--may-exist", "lb-add", lb, vip, backends, *([LBS[lb]] if ":" in vip else [])]]
    if r < 0.24:
        vips = env.nbctl("--bare", "--columns=vips", "list", "load_balancer", lb).split()
        keys = [v.partition("=")[0].strip('"') for v in vips] or ["10.2.0.1:80"]
        vip = rnd.choice([*keys, *keys, "10.9.9.9:80"])
        return "nb", [["--id=@hc", "create", "load_balancer_health_check", f'vip="{vip}"',
                       f"options:interval={rnd.randint(1, 9)}"], ["add", "load_balancer", lb, "health_check", "@hc"]]
    if r < 0.42:
        ip, p = rnd.choice(BACKENDS[:4]), rnd.choice((*PORTS, "p1", "p2", "q1"))
        src = rnd.choice(("10.1.0.200", "10.1.0.201", "10.1.0.200", "bad"))
        return "nb", [["set", "load_balancer", lb, f'ip_port_mappings:"{ip}"="{p}:{src}"']]
    if r < 0.47:
        return "nb", [["remove", "load_balancer", lb, "ip_port_mappings", f'"{rnd.choice(BACKENDS)}"']]
    if r < 0.49:
        return "nb", [["clear", "load_balancer", lb, "health_check"]]
    if r < 0.55:
        hcs = env.nbctl("--bare", "--columns=_uuid", "list", "load_balancer_health_check").split()
        if not hcs:
            return None
        return "nb", [["set", "load_balancer_health_check", rnd.choice(hcs), f"options:timeout={rnd.randint(1, 9)}",
                       "options:failure_count=3"]]
    if r < 0.6:
        return "nb", [["--if-exists", "lsp-del", "ghost"]] if rnd.random() < 0.5 else \
            [["--may-exist", "lsp-add", "ls2", "ghost"]]
    if r < 0.62:
        return "nb", [["--if-exists", "lb-del", lb], ["--may-exist", "lb-add", lb, "10.2.0.1:80", "10.1.0.3:80",
                                                       LBS[lb]]]
    if r < 0.85:
        rows = _monitors(env)
        if not rows:
            return None
        row = rnd.choice(rows)
        status = rnd.choice(("online", "online", "offline", "error", None))
        return "status", (["clear", "service_monitor", row, "status"] if status is None else
                          ["set", "service_monitor", row, f"status={status}"])
    name = rnd.choice(("p1", "p2", "q1", "ghost", "ls2-lr1"))
    if not env.sbctl("--bare", "--columns=_uuid", "find", "port_binding", f"logical_port={name}").strip():
        return None
    return "sb", ["set", "port_binding", name, f"up={rnd.choice(('true', 'false'))}"]


def test_random_health_check_changes_incremental_equals_recompute(hc_env):
    env, d, port = hc_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261203"))
    rnd = random.Random(seed)
    done: list = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    kinds: dict[str, int] = {}
    for n in range(1, 161):
        step = random_step(env, rnd, n)
        if step is None:
            continue
        kind, cmd = step
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "nb":
            apply_checked(env, d, cmd, done, seed)  # type: ignore[arg-type]
        else:
            apply_sb_checked(env, d, cmd, done, seed)  # type: ignore[arg-type]
    assert not _engine_failures(d)
    assert kinds.get("status", 0) >= 10 and kinds.get("sb", 0) >= 10, kinds  # the SB paths were exercised
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    checks = metric(port, "ovn_northd_py_incremental_checks_total")
    assert checks >= len(done) // 2, f"only {checks} checks for {len(done)} steps"


def _lb_flow(env, vip: str) -> str:
    out = env.sbctl("lflow-list", "ls1")
    lines = [ln for ln in out.splitlines() if "ls_in_lb " in ln and f"ip4.dst == {vip}" in ln and "ct.new" in ln]
    return "\n".join(lines)


def test_status_flip_rebuilds_only_the_load_balancer(hc_env):
    env, d, port = hc_env
    run_batch(env, [["lb-add", "lbx", "10.3.0.1:80", "10.1.0.11:80,10.1.0.12:80", "tcp"], ["ls-lb-add", "ls1", "lbx"],
                    ["--id=@hc", "create", "load_balancer_health_check", 'vip="10.3.0.1:80"'],
                    ["add", "load_balancer", "lbx", "health_check", "@hc"],
                    ["set", "load_balancer", "lbx", 'ip_port_mappings:"10.1.0.11"="p1:10.1.0.200"',
                     'ip_port_mappings:"10.1.0.12"="p2:10.1.0.200"']])
    assert "backends=10.1.0.11:80,10.1.0.12:80)" in _lb_flow(env, "10.3.0.1")
    count = len(_monitors(env))
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow", "sb_sync")}
    row = env.sb_get("service_monitor", 'ip="10.1.0.11"', "_uuid")
    env.sbctl("set", "service_monitor", row, "status=offline")
    wait_until(lambda: "backends=10.1.0.12:80)" in _lb_flow(env, "10.3.0.1"), 10, "10.1.0.11 to leave the VIP")
    # online on a port that is not up: northd sets it offline, the backend stays out.
    env.sbctl("set", "service_monitor", row, "status=online")
    wait_until(lambda: env.sb_get("service_monitor", 'ip="10.1.0.11"', "status") == "offline", 10, "status reset")
    env.sbctl("set", "port_binding", "p1", "up=true", "--", "set", "service_monitor", row, "status=online")
    wait_until(lambda: "backends=10.1.0.11:80,10.1.0.12:80)" in _lb_flow(env, "10.3.0.1"), 10, "10.1.0.11 back")
    env.sbctl("set", "port_binding", "p1", "up=false")
    wait_until(lambda: env.sb_get("service_monitor", 'ip="10.1.0.11"', "status") == "offline", 10, "down port")
    wait_until(lambda: "backends=10.1.0.12:80)" in _lb_flow(env, "10.3.0.1"), 10, "10.1.0.11 out again")
    env.sync()
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d) and not _engine_failures(d)
    # Someone else's row is not kept (the table is northd's), ours are repaired.
    env.sbctl("create", "service_monitor", "ip=1.2.3.4", "port=1", "protocol=tcp", "logical_port=zz",
              "src_mac=x", "src_ip=y")
    env.sbctl("set", "service_monitor", row, "src_ip=9.9.9.9", "options:interval=3")
    wait_until(lambda: len(_monitors(env)) == count and env.sb_get("service_monitor", 'ip="10.1.0.11"', "src_ip")
               == "10.1.0.200", 10, "repair")
    env.sync()
    assert not mismatches(d) and not _engine_failures(d)
