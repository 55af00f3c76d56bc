"""Router port updates (addresses, MAC, options, RA configs, enabled) are applied in place: no
recompute of the northd or lflow nodes, and incremental always equals recompute."""

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

# (router port, its router) in mixed.py 3 4 2: lr1-ls1 is on a tenant switch, lr1-join and
# lrgw1-join on the shared join switch, lrp-lrgw1 is a distributed gateway port.
PORTS = ("lr1-ls1", "lr2-ls2", "lr1-join", "lrgw1-join", "lrp-lrgw1", "lrp-lrgw2")


@pytest.fixture
def rports(env):
    build_mixed(env, 3, 4, 2)
    # Multicast: snooping switches next to a relaying router read its ports' enabled / mcast_flood.
    env.nbctl("set", "logical_router", "lr1", "options:mcast_relay=true", "--",
              "set", "logical_switch", "ls1", "other_config:mcast_snoop=true", "--",
              "set", "logical_switch", "join", "other_config:mcast_snoop=true")
    with checked_daemon(env) as ctx:
        yield ctx


def _set(port: str, *cols: str) -> list[str]:
    return ["set", "logical_router_port", port, *cols]


def random_router_port_batches(seed: int, total: int) -> list[list[list[str]]]:
    rnd = random.Random(seed)
    batches: list[list[list[str]]] = []
    for n in range(1, total + 1):
        p = rnd.choice(PORTS)
        k = rnd.random()
        if k < 0.25:
            nets = [f'"10.{n % 200}.{n % 7}.1/24"']
            if rnd.random() < 0.5:
                nets.append(f'"fd{n % 90:02x}::1/64"')
            batch = [_set(p, f"networks=[{','.join(nets)}]")]
        elif k < 0.4:
            batch = [_set(p, f'mac="02:00:00:{n % 256:02x}:{rnd.randrange(256):02x}:01"')]
        elif k < 0.55:
            batch = [_set(p, f"options:gateway_mtu={rnd.choice([1400, 1500, 9000])}")]
        elif k < 0.6:
            batch = [["remove", "logical_router_port", p, "options", "gateway_mtu"]]
        elif k < 0.75:
            mode = rnd.choice(["slaac", "dhcpv6_stateless", "dhcpv6_stateful"])
            batch = [_set(p, f'networks=["10.{n % 200}.9.1/24","fd{n % 90:02x}::1/64"]'),
                     _set(p, f"ipv6_ra_configs:address_mode={mode}",
                          f"ipv6_ra_configs:send_periodic={rnd.choice(['true', 'false'])}",
                          f"ipv6_ra_configs:mtu={rnd.choice([1280, 1450])}")]
        elif k < 0.8:
            batch = [["clear", "logical_router_port", p, "ipv6_ra_configs"]]
        elif k < 0.85:
            batch = [_set(p, f"enabled={rnd.choice(['true', 'false'])}")]
        elif k < 0.9:
            batch = [_set(p, f"options:mcast_flood={rnd.choice(['true', 'false'])}")]
        else:
            batch = [_set(p, f"external_ids:note=n{n}")]
        batches.append(batch)
    return batches


def random_attach_batches(seed: int, total: int) -> list[list[list[str]]]:
    """Router ports added and removed: on a new router, on existing routers (gateway routers too),
    attached to tenant switches or to join, peered router-to-router, or left without a peer."""
    rnd = random.Random(seed)
    batches: list[list[list[str]]] = [[["lr-add", "rx"]]]
    live: list[tuple[str, str | None]] = []  # (router port, its switch port or None)
    for n in range(1, total + 1):
        k = rnd.random()
        if k < 0.45 or not live:
            rtr = rnd.choice(["rx", "lr2", "lrgw1", "lr3"])
            lrp = f"{rtr}-a{n}"
            net = f"10.{100 + n % 100}.{n % 250}.1/24"
            cmds = [["lrp-add", rtr, lrp, f"02:00:00:{n % 256:02x}:00:01", net]]
            sw = rnd.choice(["ls1", "ls2", "join", None, None])
            lsp = None
            if sw is not None:
                lsp = f"{sw}-a{n}"
                cmds += [["lsp-add", sw, lsp], ["lsp-set-type", lsp, "router"],
                         ["lsp-set-addresses", lsp, "router"], ["lsp-set-options", lsp, f"router-port={lrp}"]]
            live.append((lrp, lsp))
            batches.append(cmds)
        elif k < 0.55 and len(live) >= 2:
            (a, la), (b, lb) = live[-1], live[-2]
            if la is None and lb is None:
                batches.append([["set", "logical_router_port", a, f"peer={b}"],
                                ["set", "logical_router_port", b, f"peer={a}"]])
            else:
                batches.append([["set", "logical_router_port", a, f"networks=10.{n % 200}.77.1/24"]])
        elif k < 0.8:
            lrp, lsp = live.pop(rnd.randrange(len(live)))
            cmds = [["lrp-del", lrp]]
            if lsp is not None and rnd.random() < 0.7:
                cmds.append(["lsp-del", lsp])
            batches.append(cmds)
        else:
            lrp, lsp = rnd.choice(live)
            if lsp is not None:
                batches.append([["lsp-del", lsp]])
                live[live.index((lrp, lsp))] = (lrp, None)
            else:
                batches.append([["set", "logical_router_port", lrp, f"external_ids:n=n{n}"]])
    return batches


def test_random_router_port_attach_detach_incremental_equals_recompute(rports):
    env, d, port = rports
    seed = int(os.environ.get("OVN_TEST_SEED", "20261201"))
    done: list[list[list[str]]] = []
    batches = random_attach_batches(seed, 100)
    run_batch(env, batches[0])  # a new router: a recompute
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    recomputed = []
    for batch in batches[1:]:
        apply_checked(env, d, batch, done, seed)
        if node_runs(port, "northd", "recompute") != before["northd"]:
            recomputed.append(batch)
            before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= len(done) // 2
    assert recomputed == []


def test_router_port_updates_need_no_recompute(rports):
    env, d, port = rports
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    run_batch(env, [_set("lr1-ls1", 'networks=["10.1.0.1/16","fd00:1::1/64"]')])
    run_batch(env, [_set("lr1-ls1", "ipv6_ra_configs:address_mode=slaac", "ipv6_ra_configs:send_periodic=true")])
    run_batch(env, [_set("lrp-lrgw1", "options:gateway_mtu=1400")])
    run_batch(env, [_set("lrgw1-join", 'mac="02:00:00:00:aa:01"')])
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)


def test_random_router_port_updates_incremental_equals_recompute(rports):
    env, d, port = rports
    seed = int(os.environ.get("OVN_TEST_SEED", "20261130"))
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    for batch in random_router_port_batches(seed, 120):
        apply_checked(env, d, batch, done, seed)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= len(done) // 2
    assert {n: node_runs(port, n, "recompute") for n in before} == before


def test_random_ports_on_a_router_with_nat_and_lbs_incremental_equals_recompute(rports):
    """Ports added to and removed from a router with SNAT rules and load balancers, their networks
    sometimes holding a VIP or an SNAT IP (the router-wide facts its other ports and their peers
    read: the lflow node then rebuilds them all, else only the new port): incremental equals
    recompute."""
    env, d, port = rports
    seed = int(os.environ.get("OVN_TEST_SEED", "20261203"))
    rnd = random.Random(seed)
    env.nbctl("lr-add", "rf", "--", "lrp-add", "rf", "rf-base", "02:00:00:f0:00:01", "10.200.0.1/24",
              "--", "lsp-add", "ls1", "ls1-rf", "--", "lsp-set-type", "ls1-rf", "router",
              "--", "lsp-set-addresses", "ls1-rf", "router", "--", "lsp-set-options", "ls1-rf", "router-port=rf-base",
              "--", "lr-nat-add", "rf", "snat", "10.200.3.1", "10.0.0.0/8",
              "--", "lb-add", "rf-lb", "10.200.4.10:80", "10.200.0.5:8080", "tcp", "--", "lr-lb-add", "rf", "rf-lb")
    env.sync()
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    done: list[list[list[str]]] = []
    live: list[tuple[str, str | None]] = []
    for n in range(1, 31):
        if live and rnd.random() < 0.4:
            lrp, lsp = live.pop(rnd.randrange(len(live)))
            batch = [["lrp-del", lrp]] + ([["lsp-del", lsp]] if lsp is not None else [])
        else:
            third = rnd.choice([3, 4, 5 + n, 5 + n, 5 + n])  # 3: the SNAT IP's, 4: the VIP's network
            host = 1 if third != 3 or rnd.random() < 0.5 else 2
            lrp = f"rf-p{n}"
            batch = [["lrp-add", "rf", lrp, f"02:00:00:f0:{n:02x}:01", f"10.200.{third}.{host}/24"]]
            lsp = None
            if rnd.random() < 0.6:
                sw = rnd.choice(["ls1", "ls2"])
                lsp = f"{sw}-rf{n}"
                batch += [["lsp-add", sw, lsp], ["lsp-set-type", lsp, "router"],
                          ["lsp-set-addresses", lsp, "router"], ["lsp-set-options", lsp, f"router-port={lrp}"]]
            if rnd.random() < 0.2:
                batch.append(["lr-route-add", "rf", f"10.201.{n}.0/24", f"10.200.{third}.9"])
            live.append((lrp, lsp))
        apply_checked(env, d, batch, done, seed)
    assert {n: node_runs(port, n, "recompute") for n in before} == before
