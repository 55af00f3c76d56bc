"""Incremental processing of ACLs, port groups, address sets and meters.

After every NB transaction the daemon compares its incremental state with a full recompute
(``--check-incremental=1``); the changes must also be handled without recomputing the
``northd`` or ``lflow`` nodes (nor ``sb_sync``: our own SB writes echo back and are checked
row by row).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from dataclasses import dataclass, field

import pytest
from test_incremental import MIXED

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import free_port, metric, mismatches, node_runs

# The mixed network's switches (each with stateful ACLs) and three without ACLs at first, one of them with
# router and localnet ports, ports with DHCP options (flows that depend on the switch's statefulness).
EXTRA = ["xs1", "xs2", "xs3"]
SWITCHES = [f"ls{i}" for i in range(1, 6)] + EXTRA
PORTS = {f"lsp{i}-{j}": f"ls{i}" for i in range(1, 6) for j in range(1, 5)}
PORTS |= {f"{sw}-p{j}": sw for sw in EXTRA for j in (1, 2)}


def setup_commands() -> list[list[str]]:
    cmds: list[list[str]] = [["pg-add", "pgA", "lsp1-1", "lsp2-1"], ["pg-add", "pgB"],
                             ["create", "Address_Set", "name=as0", 'addresses=["10.0.0.1"]'],
                             ["meter-add", "m-fair", "drop", "10", "pktps"], ["set", "Meter", "m-fair", "fair=true"],
                             ["meter-add", "m-plain", "drop", "5", "kbps"]]
    for k, sw in enumerate(EXTRA, 1):
        cmds.append(["ls-add", sw])
        for j in (1, 2):
            cmds += [["lsp-add", sw, f"{sw}-p{j}"],
                     ["lsp-set-addresses", f"{sw}-p{j}", f"0a:00:00:00:{k:02x}:{j:02x} 10.{50 + k}.0.{j}"]]
    cmds += [["lr-add", "xr"], ["lrp-add", "xr", "xr-xs1", "0a:00:00:00:ff:01", "10.51.0.254/24"],
             ["lsp-add", "xs1", "xs1-xr"], ["lsp-set-type", "xs1-xr", "router"],
             ["lsp-set-addresses", "xs1-xr", "router"], ["lsp-set-options", "xs1-xr", "router-port=xr-xs1"],
             ["lsp-add", "xs1", "xs1-ln"], ["lsp-set-type", "xs1-ln", "localnet"],
             ["lsp-set-options", "xs1-ln", "network_name=phys"],
             ["--id=@d", "create", "DHCP_Options", "cidr=10.51.0.0/24", "options:server_id=10.51.0.254",
              "options:server_mac=0a:00:00:00:ff:01", "options:lease_time=3600"],
             ["set", "Logical_Switch_Port", "xs1-p1", "dhcpv4_options=@d"],
             ["set", "Logical_Switch_Port", "xs2-p1", "dhcpv4_options=@d"]]
    return cmds
NODES = ("northd", "lflow", "sb_sync")


@pytest.fixture
def checked(env):
    """The mixed network (5 switches x 4 ports) and our daemon checking every incremental run."""
    subprocess.run(["python3", str(MIXED), env.nb.remote, "5", "4", "5"], check=True, capture_output=True)
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        env.sync()
        yield env, d, port
    finally:
        d.stop()


def recomputes(port: int) -> dict[str, float]:
    return {n: node_runs(port, n, "recompute") for n in NODES}


def txn(env, batch: list[list[str]]) -> None:
    args: list[str] = []
    for i, cmd in enumerate(batch):
        args += (["--"] if i else []) + cmd
    env.nbctl(*args, wait="sb")


@dataclass
class Model:
    """What the random generator created, to pick valid targets."""

    acls: dict[str, tuple[str, str]] = field(default_factory=dict)  # tag -> (table, owner name)
    pgs: dict[str, set[str]] = field(default_factory=lambda: {"pgA": set(), "pgB": set()})
    sets: set[str] = field(default_factory=set)
    ports: dict[str, str] = field(default_factory=lambda: dict(PORTS))
    n: int = 0


ACTIONS = ["allow", "allow-related", "allow-stateless", "drop", "reject"]


def acl_columns(rnd: random.Random, m: Model, tag: str, pg: str | None) -> list[str]:
    direction = rnd.choice(["from-lport", "to-lport"])
    port_match = f"{'inport' if direction == 'from-lport' else 'outport'} == @{pg} && " if pg else ""
    match = port_match + rnd.choice(
        ["ip4", "tcp.dst == 80", f"ip4.src == ${rnd.choice(sorted(m.sets) or ['as0'])}", "udp", "ip6",
         f"ip4.src == ${rnd.choice(sorted(m.pgs))}_ip4", f"ip6.dst == ${rnd.choice(sorted(m.pgs))}_ip6",
         "icmp4 || icmp6 || sctp"]
    )
    cols = [f"direction={direction}", f"priority={rnd.randint(0, 32767)}", f'match="{match}"',
            f"action={rnd.choice(ACTIONS)}", f"external_ids:tag={tag}"]
    if rnd.random() < 0.3:
        cols += ["log=true", f"severity={rnd.choice(['info', 'alert', 'debug'])}"]
        if rnd.random() < 0.5:
            cols.append(f'name="n{tag}"')
        if rnd.random() < 0.3:
            cols.append(f"meter={rnd.choice(['m-fair', 'm-plain', 'm-missing'])}")
    if rnd.random() < 0.3:
        cols.append(f"label={rnd.randint(0, 5)}")
    if rnd.random() < 0.3:
        cols.append("options:apply-after-lb=true")
    if rnd.random() < 0.2:
        cols.append("options:log-related=true")
        if rnd.random() < 0.5 and "log=true" not in cols:  # the flows log-related adds need log and a label
            cols += ["log=true", f"label={rnd.randint(1, 5)}"]
    return cols


def acl_uuid(env, tag: str) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", "ACL", f"external_ids:tag={tag}").strip()


def random_batch(rnd: random.Random, env, m: Model) -> tuple[list[list[str]], int]:
    """One NB transaction of 1..3 random changes; returns (commands, number of changes)."""
    batch: list[list[str]] = []
    count = 0
    for _ in range(rnd.randint(1, 3)):
        m.n += 1
        n = m.n
        kind = rnd.choices(
            ["acl-sw", "acl-pg", "acl-del", "acl-upd", "pg-ports", "pg-new", "pg-del", "as", "as-del",
             "lsp-pg", "lsp-del", "lsp-addr", "meter"],
            weights=[18, 12, 14, 16, 12, 3, 2, 8, 3, 4, 3, 4, 1],
        )[0]
        if kind in ("acl-del", "acl-upd") and not m.acls:
            kind = "acl-sw"
        if kind in ("lsp-del", "lsp-addr") and not any(p.startswith("new") for p in m.ports):
            kind = "lsp-pg"
        if kind == "pg-del" and len(m.pgs) <= 1:
            kind = "pg-new"
        if kind == "as-del" and not m.sets:
            kind = "as"
        tag = f"t{n}"
        if kind == "acl-sw":
            sw = rnd.choice(SWITCHES)
            batch.append([f"--id=@a{n}", "create", "ACL", *acl_columns(rnd, m, tag, None)])
            batch.append(["add", "Logical_Switch", sw, "acls", f"@a{n}"])
            m.acls[tag] = ("Logical_Switch", sw)
        elif kind == "acl-pg":
            pg = rnd.choice(sorted(m.pgs))
            batch.append([f"--id=@a{n}", "create", "ACL", *acl_columns(rnd, m, tag, pg)])
            batch.append(["add", "Port_Group", pg, "acls", f"@a{n}"])
            m.acls[tag] = ("Port_Group", pg)
        elif kind == "acl-del":
            old = rnd.choice(sorted(m.acls))
            table, owner = m.acls.pop(old)
            u = acl_uuid(env, old)
            if not u:
                continue
            batch.append(["remove", table, owner, "acls", u])
        elif kind == "acl-upd":
            old = rnd.choice(sorted(m.acls))
            u = acl_uuid(env, old)
            if not u:
                continue
            change = rnd.choice([
                [f"action={rnd.choice(ACTIONS)}"], ['match="tcp || udp"'], ["log=true", "severity=notice"],
                ["log=false"], [f"label={rnd.randint(0, 3)}"], ["options:apply-after-lb=true"],
                ["options:apply-after-lb=false"], [f"priority={rnd.randint(0, 32767)}"], ["direction=to-lport"],
                ["meter=m-fair", "log=true"], ["options:log-related=true", "log=true", "label=2"],
                ["options:log-related=false"], ["options={}"], ['name="renamed"', "severity=warning"],
                ["meter=m-plain"], ["meter=[]"], ["options:apply-after-lb=true", "action=allow-related", "label=4"],
            ])
            batch.append(["set", "ACL", u, *change])
        elif kind == "pg-ports":
            pg = rnd.choice(sorted(m.pgs))
            ports = set(rnd.sample(sorted(m.ports), rnd.randint(0, 4)))
            m.pgs[pg] = ports
            batch.append(["pg-set-ports", pg, *sorted(ports)] if ports else ["clear", "Port_Group", pg, "ports"])
        elif kind == "pg-new":
            pg = f"pg{n}"
            ports = set(rnd.sample(sorted(m.ports), rnd.randint(0, 3)))
            m.pgs[pg] = ports
            batch.append(["pg-add", pg, *sorted(ports)])
        elif kind == "pg-del":
            pg = rnd.choice(sorted(m.pgs))
            del m.pgs[pg]
            for t in [t for t, (table, owner) in m.acls.items() if table == "Port_Group" and owner == pg]:
                del m.acls[t]
            batch.append(["pg-del", pg])
        elif kind == "as":
            name = rnd.choice(sorted(m.sets | {f"as{n}"}))
            addrs = ",".join(rnd.choice([f'"10.{rnd.randint(0, 9)}.0.{i}"', f'"fd00::{i:x}"', f'"10.{i}.0.0/16"',
                                         f'"fd0{i}::/64"']) for i in range(rnd.randint(0, 3)))
            if name in m.sets:
                batch.append(["set", "Address_Set", name, f"addresses=[{addrs}]"])
            else:
                m.sets.add(name)
                batch.append(["create", "Address_Set", f"name={name}", f"addresses=[{addrs}]"])
        elif kind == "as-del":
            name = rnd.choice(sorted(m.sets))
            m.sets.discard(name)
            batch.append(["destroy", "Address_Set", name])
        elif kind == "lsp-pg":
            name, sw, pg = f"new{n}", rnd.choice(SWITCHES), rnd.choice(sorted(m.pgs))
            m.ports[name] = sw
            m.pgs[pg].add(name)
            batch += [["lsp-add", sw, name],
                      ["lsp-set-addresses", name, f"0a:00:00:00:{n // 256 % 256:02x}:{n % 256:02x} 10.99.{n % 256}.1"],
                      ["pg-set-ports", pg, *sorted(m.pgs[pg])]]
        elif kind == "lsp-del":
            name = rnd.choice(sorted(p for p in m.ports if p.startswith("new")))
            del m.ports[name]
            for ports in m.pgs.values():
                ports.discard(name)
            batch.append(["lsp-del", name])
        elif kind == "lsp-addr":
            name = rnd.choice(sorted(p for p in m.ports if p.startswith("new")))
            mac = f"0a:00:00:00:{n // 256 % 256:02x}:{n % 256:02x}"
            batch.append(["lsp-set-addresses", name, f"{mac} 10.98.{n % 256}.2 fd98::{n:x}"])
        elif kind == "meter":
            batch.append(["set", "Meter", "m-fair", f"fair={rnd.choice(['true', 'false'])}"])
        count += 1
    return batch, count


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_acl_changes_incremental_equals_recompute(checked):
    """At least 300 ACL / port group / address set changes, each checked against a full recompute,
    none of them recomputing the northd, lflow or sb_sync node."""
    env, d, port = checked
    txn(env, setup_commands())
    before = recomputes(port)
    seed = int(os.environ.get("OVN_ACL_TEST_SEED", "20261130"))
    rnd = random.Random(seed)
    m = Model(sets={"as0"})
    m.pgs["pgA"] = {"lsp1-1", "lsp2-1"}
    done: list[list[list[str]]] = []
    recomputing: list[str] = []  # the transactions that made some node recompute
    changes = 0
    last = before
    while changes < 320:
        batch, n = random_batch(rnd, env, m)
        if not batch:
            continue
        txn(env, batch)
        done.append(batch)
        changes += n
        now = recomputes(port)
        if now != last:
            recomputing.append(f"{json.dumps(batch)}: {now}")
            last = now
        bad = mismatches(d)
        if bad:
            seq = "\n".join(json.dumps(b) for b in done)
            pytest.fail(f"incremental != recompute after {len(done)} transactions (seed {seed}):\n"
                        f"{bad[0].get('differences')}\nsequence:\n{seq}")
    assert not recomputing, "recomputed after:\n" + "\n".join(recomputing)
    checks = metric(port, "ovn_northd_py_incremental_checks_total")
    assert checks >= len(done) // 2, f"only {checks} checks for {len(done)} transactions"
    assert node_runs(port, "lflow", "incremental") >= len(done) // 2
    assert d.proc is not None and d.proc.poll() is None
