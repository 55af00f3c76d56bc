"""New switches and routers (a tenant network, a node joining a cluster) are added incrementally:
the northd, lflow and sb_sync nodes do not recompute (the new Datapath_Binding / IP_Multicast rows
are inserted, and checked when they echo back), and under
``--check-incremental=1`` the result always equals a recompute.  Deleting switches and routers
whose ports take no surviving port's link with them is incremental too; deleting one that a
surviving port still links to takes the recompute path (checked too)."""

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
def net(env):
    build_mixed(env, 3, 3, 2)
    env.nbctl("lb-add", "lbshared", "10.9.9.9:80", "10.9.9.10:80", "--",
              "create", "address_set", "name=as1", "addresses=10.1.1.1", "--",
              "pg-add", "pg1")
    with checked_daemon(env) as ctx:
        yield ctx


def _switch(n: int, ports: int, rnd: random.Random) -> list[list[str]]:
    sw = f"nsw{n}"
    cmds = [["ls-add", sw]]
    for j in range(ports):
        p = f"{sw}-p{j}"
        mac, ip = f"02:aa:{n % 256:02x}:00:00:{j + 1:02x}", f"10.{100 + n % 100}.0.{j + 10}"
        cmds += [["lsp-add", sw, p], ["lsp-set-addresses", p, f"{mac} {ip}"]]
        if rnd.random() < 0.5:
            cmds.append(["lsp-set-port-security", p, f"{mac} {ip}"])
    if rnd.random() < 0.5:
        cmds.append(["acl-add", sw, "to-lport", "1001", f"ip4.src == 10.{n % 200}.0.0/16", "allow-related"])
    if rnd.random() < 0.4:
        cmds.append(["ls-lb-add", sw, "lbshared"])
    if rnd.random() < 0.3:
        cmds.append(["qos-add", sw, "from-lport", "100", "ip4", "dscp=12"])
    if rnd.random() < 0.3 and ports:
        cmds.append(["pg-set-ports", "pg1", f"{sw}-p0"])
    return cmds


def _router(n: int, rnd: random.Random, switches: list[str]) -> list[list[str]]:
    rt = f"nrt{n}"
    cmds = [["lr-add", rt]]
    if rnd.random() < 0.3:
        cmds.append(["set", "logical_router", rt, f"options:chassis=hv{n}"])
    for k, sw in enumerate(rnd.sample(switches, min(len(switches), rnd.randint(1, 2)))):
        lrp, lsp = f"{rt}-{sw}", f"{sw}-{rt}"
        cmds += [["lrp-add", rt, lrp, f"02:bb:{n % 256:02x}:00:{k:02x}:01", f"10.{150 + n % 100}.{k}.1/24"],
                 ["lsp-add", sw, lsp], ["lsp-set-type", lsp, "router"], ["lsp-set-addresses", lsp, "router"],
                 ["lsp-set-options", lsp, f"router-port={lrp}"]]
    if rnd.random() < 0.5:
        cmds.append(["lr-route-add", rt, f"10.{200 + n % 50}.0.0/16", f"10.{150 + n % 100}.0.254"])
    if rnd.random() < 0.4:
        cmds.append(["lr-lb-add", rt, "lbshared"])
    return cmds


def test_new_switch_and_router_need_no_recompute(net):
    env, d, port = net
    rnd = random.Random(7)
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    run_batch(env, _switch(1, 3, rnd))
    run_batch(env, _router(1, rnd, ["nsw1", "ls1"]))
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)
    assert "nsw1-p0" in env.sbctl("--bare", "--columns=logical_port", "list", "port_binding")


def test_new_switch_and_router_need_no_full_sb_sync(net):
    env, d, port = net
    rnd = random.Random(11)
    before = node_runs(port, "sb_sync", "recompute")
    run_batch(env, [*_switch(2, 2, rnd), ["lsp-set-type", "nsw2-p1", "localnet"], ["lsp-set-options", "nsw2-p1", "network_name=phys"]])
    run_batch(env, _router(2, rnd, ["nsw2", "ls2"]))
    assert node_runs(port, "sb_sync", "recompute") == before
    assert not mismatches(d)
    dp = env.sbctl("--bare", "--columns=_uuid", "find", "datapath_binding", "external_ids:name=nsw2").strip()
    assert dp and env.sbctl("--bare", "--columns=_uuid", "find", "ip_multicast", f"datapath={dp}").strip()


def test_deleted_switch_and_router_need_no_recompute(net):
    env, d, port = net
    rnd = random.Random(13)
    run_batch(env, [*_switch(3, 3, rnd), ["pg-set-ports", "pg1", "nsw3-p1"], ["ls-lb-add", "nsw3", "lbshared"]])
    run_batch(env, [*_router(3, rnd, ["nsw3"]), ["lr-lb-add", "nrt3", "lbshared"]])
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow", "sb_sync")}
    run_batch(env, [["ls-del", "nsw3"], ["lr-del", "nrt3"]])
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)
    names = env.sbctl("--bare", "--columns=external_ids", "list", "datapath_binding")
    assert "nsw3" not in names and "nrt3" not in names


def test_deleted_switch_keeps_other_datapaths_keys(net):
    env, d, _port = net
    rnd = random.Random(17)
    run_batch(env, _switch(4, 2, rnd))
    keys = env.sbctl("--bare", "--columns=tunnel_key,external_ids", "list", "datapath_binding")
    run_batch(env, [["ls-del", "nsw4"]])
    after = env.sbctl("--bare", "--columns=tunnel_key,external_ids", "list", "datapath_binding")
    kept = [b.strip() for b in keys.split("\n\n") if "nsw4" not in b]
    assert sorted(kept) == sorted(b.strip() for b in after.split("\n\n"))
    assert not mismatches(d)


def test_random_datapath_creation_incremental_equals_recompute(net):
    env, d, port = net
    seed = int(os.environ.get("OVN_TEST_SEED", "20261130"))
    rnd = random.Random(seed)
    done: list[list[list[str]]] = []
    switches = ["ls1", "ls2", "ls3", "join"]
    recomputed: list[list[list[str]]] = []
    for n in range(1, 41):
        k = rnd.random()
        if k < 0.45:
            batch = _switch(n, rnd.randint(0, 4), rnd)
            switches.append(f"nsw{n}")
        elif k < 0.8:
            batch = _router(n, rnd, switches)
        elif k < 0.9 and len(switches) > 4:
            sw = switches.pop(rnd.randrange(4, len(switches)))
            batch = [["ls-del", sw]]
        else:
            batch = [["--may-exist", "ls-add", f"empty{n}"]]
        before = node_runs(port, "northd", "recompute")
        apply_checked(env, d, batch, done, seed)
        if node_runs(port, "northd", "recompute") != before and batch[0][0] != "ls-del":
            recomputed.append(batch)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= len(done) // 2
    assert recomputed == []


def _port_key(env, name: str) -> str:
    return env.sbctl("--bare", "--columns=tunnel_key", "find", "port_binding", f"logical_port={name}").strip()


def _dp_key(env, name: str) -> str:
    return env.sbctl("--bare", "--columns=tunnel_key", "find", "datapath_binding", f"external_ids:name={name}").strip()


def test_deleted_port_frees_the_key_another_port_requested(net):
    """Two ports requesting the same key: one gets it; deleting that one gives it to the other (OVN
    26.03's ovn-northd.at "port requested-tnl-key -- conflict resolved on deletion")."""
    env, d, _port = net
    run_batch(env, [["ls-add", "rk"], ["lsp-add", "rk", "rk1"], ["lsp-set-options", "rk1", "requested-tnl-key=1"],
                    ["lsp-add", "rk", "rk2"], ["lsp-set-options", "rk2", "requested-tnl-key=1"]])
    holder, other = ("rk1", "rk2") if _port_key(env, "rk1") == "1" else ("rk2", "rk1")
    assert _port_key(env, other) != "1"
    run_batch(env, [["lsp-del", holder]])
    assert _port_key(env, other) == "1"
    assert not mismatches(d)


def test_deleted_switch_frees_the_key_another_switch_requested(net):
    env, d, _port = net
    run_batch(env, [["ls-add", "rq1"], ["set", "logical_switch", "rq1", "other_config:requested-tnl-key=300"],
                    ["ls-add", "rq2"], ["set", "logical_switch", "rq2", "other_config:requested-tnl-key=300"]])
    holder, other = ("rq1", "rq2") if _dp_key(env, "rq1") == "300" else ("rq2", "rq1")
    assert _dp_key(env, other) != "300"
    run_batch(env, [["ls-del", holder]])
    assert _dp_key(env, other) == "300"
    assert not mismatches(d)
