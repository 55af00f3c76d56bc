"""Watched from a second SB client, SB never holds a flow that references a missing row.

200 mixed NB changes (address sets and port groups swapped under ACLs, ports, switches and
routers added and deleted, load balancers on routers, ACLs with meters) are made while
``SbWatcher`` checks every state SB passes through.  The same run with the C daemon checks
the checker itself (it must find nothing there either).
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from ovn_northd_py.devtools.sb_watch import SbWatcher
from ovn_northd_py.devtools.servers import OurNorthd

Change = Callable[[Any, random.Random, dict[str, int]], None]


def _swap_address_set(env: Any, rnd: random.Random, st: dict[str, int]) -> None:
    """The ACL moves to a new address set and the old one goes, in one NB transaction."""
    old, new = f"as{st['as']}", f"as{st['as'] + 1}"
    st["as"] += 1
    acl = env.nbctl("--bare", "--columns=_uuid", "find", "ACL", "priority=1001").split()[0]
    env.nbctl("create", "Address_Set", f"name={new}", "addresses=10.0.0.1,10.0.0.2",
              "--", "set", "ACL", acl, f'match="ip4.src == ${new} && outport == @pg{st["pg"]}"',
              "--", "destroy", "Address_Set", old)


def _swap_port_group(env: Any, rnd: random.Random, st: dict[str, int]) -> None:
    old, new = f"pg{st['pg']}", f"pg{st['pg'] + 1}"
    st["pg"] += 1
    acl = env.nbctl("--bare", "--columns=_uuid", "find", "ACL", "priority=1001").split()[0]
    env.nbctl("pg-add", new, "p0", "p1", "--", "set", "ACL", acl, f'match="ip4.src == $as{st["as"]} && outport == @{new}"',
              "--", "pg-del", old)


def _port_add_del(env: Any, rnd: random.Random, st: dict[str, int]) -> None:
    n = st["port"] = st["port"] + 1
    sw = f"sw{rnd.randrange(2)}"
    env.nbctl("lsp-add", sw, f"vp{n}", "--", "lsp-set-addresses", f"vp{n}", f"00:00:00:00:10:{n % 256:02x} 10.0.{n % 2}.{50 + n % 150}",
              "--", "acl-add", sw, "from-lport", "900", f'inport == "vp{n}" && udp', "allow")
    if n > 2 and rnd.random() < 0.7:
        victim = f"vp{n - 2}"
        acls = env.nbctl("--bare", "--columns=_uuid", "find", "ACL", f'match="inport == \\"{victim}\\" && udp"').split()
        cmd = ["lsp-del", victim]
        for a in acls:
            for s in ("sw0", "sw1"):
                if a in env.nbctl("--bare", "--columns=acls", "list", "Logical_Switch", s):
                    cmd += ["--", "remove", "Logical_Switch", s, "acls", a]
        env.nbctl(*cmd)


def _switch_add_del(env: Any, rnd: random.Random, st: dict[str, int]) -> None:
    n = st["sw"] = st["sw"] + 1
    env.nbctl("ls-add", f"xs{n}", "--", "lsp-add", f"xs{n}", f"xp{n}",
              "--", "lsp-set-addresses", f"xp{n}", f"00:00:00:00:20:{n % 256:02x} 10.9.{n % 200}.1",
              "--", "pg-add", f"xpg{n}", f"xp{n}",
              "--", "acl-add", f"xs{n}", "to-lport", "1002", f"outport == @xpg{n}", "drop")
    if n > 1:
        env.nbctl("ls-del", f"xs{n - 1}", "--", "pg-del", f"xpg{n - 1}")


def _router_add_del(env: Any, rnd: random.Random, st: dict[str, int]) -> None:
    n = st["lr"] = st["lr"] + 1
    env.nbctl("lr-add", f"xr{n}", "--", "lrp-add", f"xr{n}", f"xrp{n}", f"00:00:00:00:30:{n % 256:02x}", f"10.8.{n % 200}.1/24",
              "--", "lb-add", f"xlb{n}", f"10.8.{n % 200}.100:80", "10.0.0.1:80", "tcp",
              "--", "lr-lb-add", f"xr{n}", f"xlb{n}",
              "--", "lr-nat-add", f"xr{n}", "snat", f"10.8.{n % 200}.2", "10.0.0.0/24")
    if n > 1:
        env.nbctl("lr-del", f"xr{n - 1}", "--", "lb-del", f"xlb{n - 1}")


def _meter_acl(env: Any, rnd: random.Random, st: dict[str, int]) -> None:
    n = st["meter"] = st["meter"] + 1
    env.nbctl("meter-add", f"m{n}", "drop", "100", "pktps",
              "--", "--log", f"--meter=m{n}", "--name=logged", "acl-add", "sw1", "to-lport", "1003",
              f"udp.dst == {1000 + n}", "drop")
    if n > 1:
        env.nbctl("acl-del", "sw1", "to-lport", "1003", f"udp.dst == {999 + n}", "--", "meter-del", f"m{n - 1}")


CHANGES: list[Change] = [_swap_address_set, _swap_port_group, _port_add_del, _switch_add_del, _router_add_del,
                         _meter_acl]


def _base(env: Any) -> None:
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", "--", "lr-add", "lr0",
              "--", "lsp-add", "sw0", "p0", "--", "lsp-set-addresses", "p0", "00:00:00:00:00:01 10.0.0.1",
              "--", "lsp-add", "sw1", "p1", "--", "lsp-set-addresses", "p1", "00:00:00:00:00:02 10.0.1.1",
              "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "10.0.0.254/24",
              "--", "lrp-add", "lr0", "lrp1", "00:00:00:00:ff:02", "10.0.1.254/24",
              "--", "lsp-add", "sw0", "s0r", "--", "lsp-set-type", "s0r", "router",
              "--", "lsp-set-addresses", "s0r", "router", "--", "lsp-set-options", "s0r", "router-port=lrp0",
              "--", "lsp-add", "sw1", "s1r", "--", "lsp-set-type", "s1r", "router",
              "--", "lsp-set-addresses", "s1r", "router", "--", "lsp-set-options", "s1r", "router-port=lrp1",
              "--", "create", "Address_Set", "name=as0", "addresses=10.0.0.1",
              "--", "pg-add", "pg0", "p0", "p1",
              "--", "acl-add", "sw1", "to-lport", "1001", "ip4.src == $as0 && outport == @pg0", "drop",
              "--", "meter-add", "m0", "drop", "100", "pktps",
              "--", "--log", "--meter=m0", "--name=logged", "acl-add", "sw1", "to-lport", "1003", "udp.dst == 1000",
              "drop",
              wait="sb")


def _run_changes(env: Any, n: int, seed: int) -> SbWatcher:
    _base(env)
    watcher = SbWatcher(str(env.sb.sock)).start()
    rnd = random.Random(seed)
    st = {"as": 0, "pg": 0, "port": 0, "sw": 0, "lr": 0, "meter": 0}
    try:
        for i in range(n):
            rnd.choice(CHANGES)(env, rnd, st)
            if i % 25 == 24:
                env.sync()
        env.sync()
    finally:
        watcher.stop()
    return watcher


@pytest.mark.parametrize("northd", ["ours", "c"])
def test_no_dangling_reference_in_any_sb_state(env: Any, northd: str) -> None:
    if northd == "ours":
        daemon: Any = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    else:
        from ovn_northd_py.devtools.servers import ReferenceNorthd

        assert shutil.which("ovn-northd"), "the reference ovn-northd is needed"
        daemon = ReferenceNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    try:
        w = _run_changes(env, 200, seed=7)
    finally:
        daemon.stop()
    assert w.states > 100, f"the watcher saw only {w.states} SB states"
    assert w.dangling == []
