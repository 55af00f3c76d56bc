"""Load balancers and NAT under ``--check-incremental=1``: after random Load_Balancer, group, switch
and router attachment, NAT and port changes the incremental state equals a full recompute, and none
of these changes recomputes the northd or lflow nodes (engine/feature_lb.py)."""

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

SWITCHES = ("ls1", "ls2", "ls3")
ROUTERS = ("lrgw1", "lrgw2", "lr1")  # two with a distributed gateway port, one without
LBS = ("lba", "lbb", "lbc", "lbd")


@pytest.fixture
def lb_env(env):
    build_mixed(env, 3, 4, 2)
    env.nbctl("lb-add", "lba", "10.0.0.100:80", "10.0.0.2:80,10.0.0.3:80", "--", "ls-lb-add", "ls1", "lba",
              "--", "lb-add", "lbb", "[fd00::100]:443", "[fd00::2]:443", "--", "ls-lb-add", "ls2", "lbb",
              "--", "create", "load_balancer_group", "name=grp")
    # NAT address sets, and a second distributed gateway port on lrgw1 (NAT rules then go to the DGP
    # named by gateway_port, or whose network holds their external IP).
    env.nbctl("create", "address_set", "name=nat_as1", "addresses=10.77.0.1,10.77.0.2",
              "--", "create", "address_set", "name=nat_as2", "addresses=10.78.0.1",
              "--", "lrp-add", "lrgw1", "lrgw1-ext2", "00:00:aa:00:00:01", "60.0.0.254/8",
              "--", "lrp-set-gateway-chassis", "lrgw1-ext2", "hv9", "10")
    # A Copp on ls1 and lrgw1 metering controller events and rejects (empty VIPs with options:event).
    env.nbctl("meter-add", "m-elb", "drop", "10", "pktps", "--", "meter-add", "m-rej", "drop", "10", "pktps")
    copp = env.nbctl("create", "copp", "name=c1", "meters:event-elb=m-elb", "meters:reject=m-rej").strip()
    env.nbctl("set", "logical_switch", "ls1", f"copp={copp}", "--", "set", "logical_router", "lrgw1", f"copp={copp}")
    with checked_daemon(env) as ctx:
        yield ctx


def assert_sequence_stayed_incremental(d, port: int, done: list, before: dict[str, float]) -> None:
    """After a random sequence: no northd / lflow recompute, the consistency check ran for at least
    every other transaction, and the daemon is still up."""
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    checks = metric(port, "ovn_northd_py_incremental_checks_total")
    assert checks >= len(done) // 2, f"only {checks} checks for {len(done)} transactions"
    assert d.proc is not None and d.proc.poll() is None


def _lrp_exists(env, name: str) -> bool:
    return bool(env.nbctl("--bare", "--columns=name", "find", "logical_router_port", f"name={name}").strip())


def random_lb_batches(seed: int, total: int) -> list[list[list[str]]]:
    rnd = random.Random(seed)
    batches: list[list[list[str]]] = []
    count = 0
    n = 0
    while count < total:
        n += 1
        sw, lb = rnd.choice(SWITCHES), rnd.choice(LBS)
        r = rnd.random()
        if r < 0.15:
            proto = rnd.choice(("tcp", "udp", "sctp"))
            batch = [["--may-exist", "lb-add", lb, f"10.{n % 200}.0.1:{n % 1000 + 1}", f"10.9.0.{n % 200}:80",
                      proto]]
        elif r < 0.25:
            batch = [["--may-exist", "lb-add", lb, f"10.{n % 200}.0.2", ""]]
        elif r < 0.35:
            batch = [["--if-exists", "lb-del", lb]]
        elif r < 0.5:
            batch = [["--may-exist", "lb-add", lb, "10.1.1.1:8080", "10.1.1.2:80"],
                     ["--may-exist", "ls-lb-add", sw, lb]]
        elif r < 0.55:
            batch = [["--may-exist", "lb-add", lb, "10.1.1.1:8080", "10.1.1.2:80"], ["--if-exists", "ls-lb-del", sw, lb]]
        elif r < 0.64:
            key = rnd.choice(("reject=true", "affinity_timeout=30", "skip_snat=true", "reject=false", "event=true",
                              "event=false"))
            batch = [["--may-exist", "lb-add", lb, "10.1.1.3:81", "10.1.1.4:81"], ["set", "load_balancer", lb,
                                                                                    f"options:{key}"]]
        elif r < 0.68:
            # Template load balancers (options:template, address-family, ^VAR VIPs and backends).
            fam = rnd.choice(("ipv4", "ipv6"))
            batch = [["--may-exist", "lb-add", lb, "10.1.1.9:84", "10.1.1.10:84"],
                     ["set", "load_balancer", lb, f'vips:"^v{n % 3}:^p"="^b{n % 2}:^bp,^b9"',
                      rnd.choice(("options:template=true", "options:template=false")),
                      f"options:address-family={fam}", rnd.choice(("options:event=true", "options:reject=true",
                                                                    "options:affinity_timeout=20"))]]
        elif r < 0.72:
            batch = [["--may-exist", "lb-add", lb, "10.1.1.5:82", "10.1.1.6:82"],
                     ["add", "load_balancer_group", "grp", "load_balancer", f"@{lb}"],
                     ["add", "logical_switch", sw, "load_balancer_group", "@grp"]]
        elif r < 0.76:
            rt = rnd.choice(ROUTERS)
            batch = [["--may-exist", "lb-add", lb, "10.1.1.7:83", "10.1.1.8:83"], ["--may-exist", "lr-lb-add", rt, lb]]
        elif r < 0.79:
            batch = [["--may-exist", "lb-add", lb, "10.1.1.7:83", "10.1.1.8:83"],
                     ["--if-exists", "lr-lb-del", rnd.choice(ROUTERS), lb]]
        elif r < 0.81:
            batch = [["add", "logical_router", rnd.choice(ROUTERS), "load_balancer_group", "@grp"]]
        elif r < 0.86:
            rt = rnd.choice(ROUTERS)
            kind = rnd.choice(("snat", "dnat", "dnat_and_snat"))
            ext = f"60.{n % 200}.0.{rnd.randrange(1, 4)}"
            logical = f"192.{n % 200}.1.0/24" if kind == "snat" else f"192.168.1.{n % 250 + 1}"
            batch = [["--may-exist", "lr-nat-add", rt, kind, ext, logical]]
            if kind == "dnat_and_snat" and rnd.random() < 0.4:
                batch = [["--may-exist", "lr-nat-add", rt, kind, ext, logical, "lsp1-1", f"00:00:00:cc:00:{n % 256:02x}"]]
        elif r < 0.9:
            batch = [["--if-exists", "lr-nat-del", rnd.choice(ROUTERS)]]
        elif r < 0.93:
            batch = _nat_option_batch(rnd, n)
        elif r < 0.96:
            batch = [["--may-exist", "lsp-add", sw, f"p{n}"], ["lsp-set-addresses", f"p{n}",
                                                               f"00:00:00:bb:00:{n % 256:02x} 192.168.9.{n % 250}"]]
        elif r < 0.97:
            batch = [["--if-exists", "lsp-del", f"p{rnd.randrange(1, n + 1)}"]]
        else:
            batch = _nat_option_batch(rnd, n)
        batches.append(batch)
        count += len(batch)
    return batches


def _nat_option_batch(rnd: random.Random, n: int) -> list[list[str]]:
    """A NAT rule with options: stateless, external_port_range, allowed/exempted address sets (one, the
    other or both), gateway_port (a DGP, a non-DGP port of the router, on a gateway-less router)."""
    rt = rnd.choice(ROUTERS)
    ext = f"60.{n % 200}.0.{rnd.randrange(4, 8)}"
    logical = f"192.168.2.{n % 250 + 1}"
    k = rnd.randrange(5)
    if k == 0:
        return [["--may-exist", "--stateless", "lr-nat-add", rt, "dnat_and_snat", ext, logical]]
    if k == 1:
        kind = rnd.choice(("snat", "dnat", "dnat_and_snat"))
        return [["--may-exist", "--portrange", "lr-nat-add", rt, kind, ext,
                 f"192.{n % 200}.2.0/24" if kind == "snat" else logical, "1000-2000"]]
    cols = [f"type={rnd.choice(('snat', 'dnat', 'dnat_and_snat'))}", f"external_ip={ext}",
            f"logical_ip={logical}"]
    if k == 2:
        cols += rnd.choice((["allowed_ext_ips=@nat_as1"], ["exempted_ext_ips=@nat_as2"],
                            ["allowed_ext_ips=@nat_as1", "exempted_ext_ips=@nat_as2"]))
        if cols[0] == "type=dnat_and_snat" and rnd.random() < 0.5:
            cols.append("options:stateless=true")
        return [["--id=@n", "create", "NAT", *cols], ["add", "logical_router", rt, "nat", "@n"]]
    port = rnd.choice(("lrp-lrgw1", "lrgw1-ext2", "lrgw1-join"))
    return [["--id=@p", "get", "logical_router_port", port],
            ["--id=@n", "create", "NAT", *cols, "gateway_port=@p"], ["add", "logical_router", "lrgw1", "nat", "@n"]]


def _resolve(env, batch: list[list[str]]) -> list[list[str]]:
    """Replace ``@name`` by the row's uuid (groups and load balancers are referenced by uuid)."""
    out: list[list[str]] = []
    for cmd in batch:
        args = list(cmd)
        for i, a in enumerate(args):
            if "_ext_ips=@" in a:
                col, _, name = a.partition("=@")
                u = env.nbctl("--bare", "--columns=_uuid", "find", "address_set", f"name={name}").strip()
                args[i] = f"{col}={u}"
        if args and args[0] == "add" and args[-1][1:] in (*LBS, "grp"):
            table = "load_balancer_group" if args[-1] == "@grp" else "load_balancer"
            u = env.nbctl("--bare", "--columns=_uuid", "find", table, f"name={args[-1][1:]}").strip()
            if not u:
                continue
            args[-1] = u.splitlines()[0]
        out.append(args)
    return out


def test_lb_and_nat_changes_need_no_recompute(lb_env):
    env, d, port = lb_env
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    run_batch(env, [["lb-add", "lbn", "10.7.0.1:80", "10.7.0.2:80", "tcp"], ["ls-lb-add", "ls3", "lbn"]])
    run_batch(env, [["lb-add", "lbn", "10.7.0.3:80", "10.7.0.4:80", "tcp"]])
    run_batch(env, [["lr-lb-add", "lrgw1", "lbn"]])
    run_batch(env, [["lr-nat-add", "lrgw2", "dnat_and_snat", "60.9.0.1", "192.168.1.9"]])
    run_batch(env, [["lr-nat-del", "lrgw2", "dnat_and_snat", "60.9.0.1"]])
    run_batch(env, [["lb-del", "lbn"]])
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_random_lb_changes_incremental_equals_recompute(lb_env):
    env, d, port = lb_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261201"))
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    for batch in random_lb_batches(seed, 160):
        cmds = _resolve(env, batch)
        if not cmds:
            continue
        apply_checked(env, d, cmds, done, seed)
    assert_sequence_stayed_incremental(d, port, done, before)


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_random_nat_option_changes_incremental_equals_recompute(lb_env):
    """NAT rules with options (stateless, port ranges, address sets, gateway_port on a router with two
    DGPs) come and go: incremental equals recompute, without recomputing northd or lflow."""
    env, d, port = lb_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261202"))
    rnd = random.Random(seed)
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    env.nbctl("lr-lb-add", "lrgw1", "lba", "--", "lr-lb-add", "lrgw2", "lbb", wait="sb")
    for n in range(1, 61):
        if rnd.random() < 0.2:
            batch = [["--if-exists", "lr-nat-del", rnd.choice(ROUTERS)]]
        else:
            batch = _nat_option_batch(rnd, n)
        cmds = _resolve(env, batch)
        if cmds:
            apply_checked(env, d, cmds, done, seed)
    assert len(done) >= 50
    assert_sequence_stayed_incremental(d, port, done, before)


def test_renaming_an_address_set_used_by_a_nat_rule_rebuilds_its_router(lb_env):
    """NAT matches embed the allowed_ext_ips set's name: a rename must reach the router's flows."""
    env, d, port = lb_env
    u = env.nbctl("--bare", "--columns=_uuid", "find", "address_set", "name=nat_as1").strip()
    run_batch(env, [["lr-nat-add", "lrgw1", "dnat_and_snat", "60.55.0.1", "192.168.1.55"]])
    nat = env.nbctl("--bare", "--columns=_uuid", "find", "nat", "external_ip=60.55.0.1").strip()
    run_batch(env, [["set", "nat", nat, f"allowed_ext_ips={u}"]])
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    run_batch(env, [["set", "address_set", u, "name=nat_as1_renamed"]])
    assert "$nat_as1_renamed" in env.sbctl("lflow-list")
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)


def test_random_event_and_template_changes_incremental_equals_recompute(lb_env):
    """Controller events (options:event, empty VIPs, Copp event-elb on ls1 / lrgw1) and template load
    balancers (^VAR VIPs, address families, template on and off) attached to switches and routers,
    with nat-addresses=router on the router-type ports: incremental equals recompute."""
    env, d, port = lb_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261203"))
    rnd = random.Random(seed)
    for name in env.nbctl("--bare", "--columns=name", "find", "logical_switch_port", "type=router").split():
        env.nbctl("set", "logical_switch_port", name, "options:nat-addresses=router")
    env.nbctl("--may-exist", "lr-lb-add", "lrgw1", "lba", "--", "--may-exist", "lr-lb-add", "lr1", "lba",
              wait="sb")
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    for n in range(1, 51):
        lb = rnd.choice(LBS)
        k = rnd.randrange(6)
        if k == 0:
            batch = [["--may-exist", "lb-add", lb, f"10.3.{n}.1:80", ""],
                     ["set", "load_balancer", lb, f"options:event={rnd.choice(('true', 'false'))}"]]
        elif k in (1, 2):
            fam = rnd.choice(("ipv4", "ipv6"))
            backends = rnd.choice(("^b1:^bp,^b2", "", "10.0.0.9:80,^b3", "[fd00::9]:80,^b1"))
            batch = [["--may-exist", "lb-add", lb, "10.1.1.9:84", "10.1.1.10:84"],
                     ["set", "load_balancer", lb, f'vips:"^v{n % 4}:^p{n % 2}"="{backends}"',
                      "options:template=true", f"options:address-family={fam}",
                      rnd.choice(("options:affinity_timeout=20", "options:reject=true", "options:event=true",
                                  "options:neighbor_responder=all"))]]
        elif k == 3:
            batch = [["--may-exist", "lb-add", lb, "10.1.1.9:84", "10.1.1.10:84"],
                     ["set", "load_balancer", lb, f"options:template={rnd.choice(('true', 'false'))}"]]
        elif k == 4:
            target = rnd.choice((("ls-lb-add", rnd.choice(SWITCHES)), ("lr-lb-add", rnd.choice(ROUTERS))))
            batch = [["--may-exist", "lb-add", lb, "10.1.1.11:85", "10.1.1.12:85"], ["--may-exist", *target, lb]]
        else:
            batch = [["--if-exists", "lb-del", lb]]
        apply_checked(env, d, _resolve(env, batch), done, seed)
    assert_sequence_stayed_incremental(d, port, done, before)


def _rport(sw: str, name: str, lrp: str) -> list[list[str]]:
    return [["lsp-add", sw, name], ["lsp-set-type", name, "router"], ["lsp-set-addresses", name, "router"],
            ["lsp-set-options", name, f"router-port={lrp}"]]


def test_random_nat_add_route_changes_incremental_equals_recompute(lb_env):
    """NAT options:add_route on a router with a distributed gateway port: its rules come and go, the
    neighbour routers on the DGP's switch (a gateway router, a plain one) attach, detach and change
    their port in place, and the DGP's MAC changes: incremental equals recompute, with no northd or
    lflow recompute (the neighbours' routes and bindings are owned by the DGP's peer switch port)."""
    env, d, port = lb_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261204"))
    rnd = random.Random(seed)
    setup = [["ls-add", "xpub"], ["ls-add", "xint"], ["lsp-add", "xint", "xvm"],
             ["lsp-set-addresses", "xvm", "00:00:00:00:77:05 10.77.0.5"],
             ["lr-add", "rd"], ["lrp-add", "rd", "rd-pub", "02:00:00:00:77:01", "172.31.0.1/24"],
             ["lrp-set-gateway-chassis", "rd-pub", "hv1", "10"],
             ["lrp-add", "rd", "rd-int", "02:00:00:00:77:02", "10.77.0.1/24"],
             *_rport("xpub", "xpub-rd", "rd-pub"), *_rport("xint", "xint-rd", "rd-int"),
             ["lr-add", "ngw"], ["set", "logical_router", "ngw", "options:chassis=hv2"],
             ["lr-add", "npl"]]
    env.nbctl(*[a for i, c in enumerate(setup) for a in ((["--"] if i else []) + c)], wait="sb")
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    for n in range(1, 61):
        k = rnd.randrange(8)
        if k <= 2:
            kind = rnd.choice(("dnat", "dnat_and_snat", "snat"))
            ext = f"172.31.{rnd.choice((0, 0, 9))}.{n % 250 + 2}"
            cols = [f"type={kind}", f"external_ip={ext}", f"logical_ip=10.77.0.{n % 250 + 2}",
                    f"options:add_route={rnd.choice(('true', 'true', 'false'))}"]
            if kind == "dnat_and_snat" and rnd.random() < 0.3:
                cols += [f'external_mac="00:00:00:00:ee:{n % 256:02x}"', "logical_port=xvm"]
            batch = [["--id=@n", "create", "NAT", *cols], ["add", "logical_router", "rd", "nat", "@n"]]
        elif k == 3:
            batch = [["--if-exists", "lr-nat-del", "rd", rnd.choice(("dnat", "dnat_and_snat", "snat"))]]
        elif k == 4:
            r = rnd.choice(("ngw", "npl"))
            if _lrp_exists(env, f"{r}-pub"):
                continue
            batch = [["lrp-add", r, f"{r}-pub", f"02:00:00:00:78:{n % 256:02x}", f"172.31.0.{200 + n % 50}/24"],
                     *_rport("xpub", f"xpub-{r}", f"{r}-pub")]
        elif k == 5:
            r = rnd.choice(("ngw", "npl"))
            batch = [["--if-exists", "lsp-del", f"xpub-{r}"], ["--if-exists", "lrp-del", f"{r}-pub"]]
        elif k == 6:
            r = rnd.choice(("ngw", "npl"))
            if not _lrp_exists(env, f"{r}-pub"):
                continue
            batch = [["set", "logical_router_port", f"{r}-pub",
                      f'networks=["172.31.0.{100 + n % 50}/24", "10.{n % 200}.0.1/24"]']]
        else:
            batch = [["set", "logical_router_port", "rd-pub", f'mac="02:00:00:00:79:{n % 256:02x}"']]
        apply_checked(env, d, batch, done, seed)
    assert_sequence_stayed_incremental(d, port, done, before)
    assert len(done) >= 40, done
    # (Whether add_route routes exist at the end depends on the sequence; the rule itself is
    # checked against the reference in tests/parity/test_router_nat_add_route.py.)


def test_random_lb_add_route_changes_incremental_equals_recompute(lb_env):
    """Load balancers with options:add_route on a router with a distributed gateway port (own and
    through a group): their VIPs, options and attachments change, NAT add_route rules come and go,
    and neighbour routers on the DGP's switch attach, detach and change their port in place:
    incremental equals recompute, with no northd or lflow recompute (the neighbours' routes and
    bindings are owned by the DGP's peer switch port)."""
    env, d, port = lb_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261205"))
    rnd = random.Random(seed)
    setup = [["ls-add", "ypub"], ["ls-add", "yint"],
             ["lr-add", "re"], ["lrp-add", "re", "re-pub", "02:00:00:00:87:01", "172.32.0.1/24"],
             ["lrp-set-gateway-chassis", "re-pub", "hv1", "10"],
             ["lrp-add", "re", "re-int", "02:00:00:00:87:02", "10.87.0.1/24"],
             *_rport("ypub", "ypub-re", "re-pub"), *_rport("yint", "yint-re", "re-int"),
             ["lr-add", "mgw"], ["set", "logical_router", "mgw", "options:chassis=hv2"],
             ["lr-add", "mpl"],
             ["create", "load_balancer_group", "name=ygrp"]]
    env.nbctl(*[a for i, c in enumerate(setup) for a in ((["--"] if i else []) + c)], wait="sb")
    grp = env.nbctl("--bare", "--columns=_uuid", "find", "load_balancer_group", "name=ygrp").strip()
    env.nbctl("add", "logical_router", "re", "load_balancer_group", grp, wait="sb")
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    for n in range(1, 61):
        k = rnd.randrange(9)
        lb = rnd.choice(("yl1", "yl2", "yl3"))
        exists = bool(env.nbctl("--bare", "--columns=name", "find", "load_balancer", f"name={lb}").strip())
        if k <= 1:
            vip = f"172.32.{rnd.choice((0, 5))}.{n % 250 + 2}:{80 + n % 3}"
            batch = [["--may-exist", "lb-add", lb, vip, rnd.choice(("10.87.0.5:80", "10.87.0.6:80", ""))]]
            if not exists:
                batch.append(["set", "load_balancer", lb, "options:add_route=true"])
        elif k == 2:
            if not exists:
                continue
            batch = [["set", "load_balancer", lb, f"options:add_route={rnd.choice(('true', 'false'))}"]]
        elif k == 3:
            if not exists:
                continue
            u = env.nbctl("--bare", "--columns=_uuid", "find", "load_balancer", f"name={lb}").strip()
            batch = [["--may-exist", "lr-lb-add", "re", lb]] if rnd.random() < 0.5 else \
                [["add", "load_balancer_group", grp, "load_balancer", u]]
        elif k == 4:
            batch = [["--if-exists", "lr-lb-del", "re"]] if rnd.random() < 0.5 else [["lb-del", lb]] if exists \
                else [["clear", "load_balancer_group", grp, "load_balancer"]]
        elif k == 5:
            cols = ["type=dnat_and_snat", f"external_ip=172.32.0.{n % 250 + 2}", "logical_ip=10.87.0.5",
                    "options:add_route=true"]
            batch = [["--id=@n", "create", "NAT", *cols], ["add", "logical_router", "re", "nat", "@n"]]
        elif k == 6:
            r = rnd.choice(("mgw", "mpl"))
            if _lrp_exists(env, f"{r}-pub"):
                batch = [["--if-exists", "lsp-del", f"ypub-{r}"], ["--if-exists", "lrp-del", f"{r}-pub"]]
            else:
                batch = [["lrp-add", r, f"{r}-pub", f"02:00:00:00:88:{n % 256:02x}", f"172.32.0.{200 + n % 50}/24"],
                         *_rport("ypub", f"ypub-{r}", f"{r}-pub")]
        elif k == 7:
            r = rnd.choice(("mgw", "mpl"))
            if not _lrp_exists(env, f"{r}-pub"):
                continue
            batch = [["set", "logical_router_port", f"{r}-pub",
                      f'networks=["172.32.0.{100 + n % 50}/24", "10.{n % 200}.1.1/24"]']]
        else:
            batch = [["set", "logical_router_port", "re-pub", f'mac="02:00:00:00:89:{n % 256:02x}"']]
        apply_checked(env, d, batch, done, seed)
    assert_sequence_stayed_incremental(d, port, done, before)
    assert len(done) >= 40, done


# VIPs for the shared-group sequence: outside every network, inside lr1's 10.0.0.0/8, inside the
# gateway routers' join network 172.16.0.0/16, equal to lrgw1's dnat / snat IP (its port's address
# too), equal to a NAT IP in no network (60.5.0.5, on lrgw2), IPv6.
_GROUP_VIPS = ("172.30.0.{n}", "172.30.1.{n}", "10.200.0.{n}", "172.16.9.{n}", "50.0.0.1", "60.5.0.5",
               "[fd30::{n}]")


def test_random_shared_group_lb_changes_incremental_equals_recompute(lb_env):
    """Load balancers in a group shared by every router and switch, changed alone (created, deleted,
    VIPs, neighbor_responder / add_route options, moved in and out of the group): on most routers
    only their own flows change (northd/lb_touch.py), on the others the router's facts do."""
    env, d, port = lb_env
    seed = int(os.environ.get("OVN_TEST_SEED", "20261206"))
    rnd = random.Random(seed)
    grp = env.nbctl("--bare", "--columns=_uuid", "find", "load_balancer_group", "name=grp").strip()
    env.nbctl(*[w for rt in ROUTERS for w in ("--", "add", "logical_router", rt, "load_balancer_group", grp)][1:],
              *[w for sw in SWITCHES for w in ("--", "add", "logical_switch", sw, "load_balancer_group", grp)],
              "--", "lr-nat-add", "lrgw2", "dnat_and_snat", "60.5.0.5", "192.168.1.55",
              # GARPs: lrgw1's announce its VIPs, lrgw2's not.
              "--", "lsp-set-options", "join-lrgw1", "router-port=lrgw1-join", "nat-addresses=router",
              "--", "lsp-set-options", "join-lrgw2", "router-port=lrgw2-join", "nat-addresses=router",
              "exclude-lb-vips-from-garp=true")
    env.sync()
    done: list[list[list[str]]] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    names = [f"glb{k}" for k in range(5)]
    for n in range(1, 150):
        lb = rnd.choice(names)
        vip = rnd.choice(_GROUP_VIPS).format(n=n % 250 + 1)
        backend = "[fd30::99]:80" if vip.startswith("[") else "10.9.9.9:80"
        exists = bool(env.nbctl("--bare", "--columns=_uuid", "find", "load_balancer", f"name={lb}").strip())
        r = rnd.random()
        if not exists or r < 0.2:
            batch = [["--if-exists", "lb-del", lb],
                     ["--id=@lb", "create", "load_balancer", f"name={lb}", "protocol=tcp", f'vips:"{vip}:80"="{backend}"'],
                     ["add", "load_balancer_group", grp, "load_balancer", "@lb"]]
        elif r < 0.3:
            batch = [["lb-del", lb]]
        elif r < 0.45:
            batch = [["set", "load_balancer", lb, f'vips:"{vip}:80"="{backend}"']]
        elif r < 0.6:
            batch = [["set", "load_balancer", lb, f'vips:"{vip}:80"="{backend}"'],
                     ["remove", "load_balancer", lb, "vips", rnd.choice(['"172.30.0.1:80"', '"50.0.0.1:80"'])]]
        elif r < 0.85:
            key = rnd.choice(("neighbor_responder=all", "neighbor_responder=none", "neighbor_responder=reachable",
                              "add_route=true", "add_route=false", "reject=true"))
            batch = [["set", "load_balancer", lb, f"options:{key}"]]
        else:
            u = env.nbctl("--bare", "--columns=_uuid", "find", "load_balancer", f"name={lb}").strip()
            op = rnd.choice(("add", "remove"))
            batch = [[op, "load_balancer_group", grp, "load_balancer", u]]
        apply_checked(env, d, batch, done, seed)
    assert_sequence_stayed_incremental(d, port, done, before)
