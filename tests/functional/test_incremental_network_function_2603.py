"""Incremental processing of 26.03's network functions (NB 7.18 / SB 21.8 servers, the 26.03
profile, ``--check-incremental=1``): ACLs naming groups come, change and go, groups and network
functions change.  After each change the daemon's incremental state must equal a full recompute,
none of the changes may recompute the ``northd``, ``lflow`` or ``sb_sync`` node, and at the end SB
equals what a fresh run writes and NB's ``network_function_active`` is set."""

from __future__ import annotations

from typing import Any

import pytest
from incremental_2603 import assert_step_checked, nb_uuid, start_checked

from ovn_northd_py.devtools.nb_json import NbOps, transact, update
from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.testing import node_runs, ovsdb_select
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")

NODES = ("northd", "lflow", "sb_sync")


def setup(remote: str) -> None:
    """sw0 (two network functions), sw1 (one), two groups, no ACL naming them yet."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:01:01 10.1.0.1",
          "--", "pg-add", "pg0", "vm1", "vm2")
    ops = NbOps()
    ports = {}
    for sw, a, b in (("sw0", "a1", "a2"), ("sw0", "b1", "b2"), ("sw1", "c1", "c2")):
        for p, peer in ((a, b), (b, a)):
            ports[p] = ops.insert("Logical_Switch_Port",
                                  {"name": p, "options": ops.map({"is-nf": "true", "nf-linked-port": peer})})
            ops.add_to("Logical_Switch", sw, "ports", ports[p])
    nfs = {n: ops.insert("Network_Function", {"name": f"nf{n}", "id": i, "inport": ports[f"{n}1"], "outport": ports[f"{n}2"]})
           for n, i in (("a", 21), ("b", 22), ("c", 23))}
    ops.insert("Network_Function_Group", {"name": "g1", "id": 1, "mode": "inline", "network_function": ops.set(nfs["a"])})
    ops.insert("Network_Function_Group", {"name": "g2", "id": 2, "mode": "inline", "network_function": ops.set(nfs["c"])})
    ops.transact(remote)


def _acl(remote: str, where: tuple[str, str], direction: str, prio: int, match: str, action: str,
         group: str | None, tag: str) -> None:
    ops = NbOps()
    g = ["set", [nb_uuid(remote, "Network_Function_Group", group)]] if group else ["set", []]
    a = ops.insert("ACL", {"direction": direction, "priority": prio, "match": match, "action": action,
                           "network_function_group": g, "external_ids": ops.map({"tag": tag})})
    ops.add_to(where[0], where[1], "acls", a)
    ops.transact(remote)


def _upd_acl(remote: str, tag: str, row: dict[str, Any]) -> None:
    transact(remote, [update("ACL", row, ids=("tag", tag))])


def test_network_function_changes_incremental_equals_recompute(env, started) -> None:
    r = env.nb.remote
    setup(r)
    d, port = start_checked(env, started)
    env.sync()

    def g(name: str) -> list[Any]:
        return ["set", [nb_uuid(r, "Network_Function_Group", name)]]

    def nf(name: str) -> list[Any]:
        return nb_uuid(r, "Network_Function", name)

    steps = [
        lambda: _acl(r, ("Logical_Switch", "sw0"), "from-lport", 100, "ip4", "allow-related", "g1", "x1"),
        lambda: _acl(r, ("Logical_Switch", "sw0"), "to-lport", 101, "tcp", "allow", "g2", "x2"),
        lambda: _acl(r, ("Logical_Switch", "sw1"), "to-lport", 102, "udp", "allow-related", "g2", "x3"),
        lambda: _acl(r, ("Logical_Switch", "sw1"), "to-lport", 104, "ip6", "allow-related", "g1", "x5"),
        # Child ports of nfa's stand in for them on sw1.  (A port with a parent recomputes the
        # model: its tag.  Only these steps may.)
        lambda: nbctl(r, "lsp-add", "sw1", "k1", "a1", "10"),
        lambda: nbctl(r, "lsp-add", "sw1", "k2", "a2", "20"),
        lambda: nbctl(r, "lsp-del", "k1"),
        lambda: transact(r, [update("Network_Function_Group", {"fallback": "fail-open"}, name="g2")]),
        lambda: transact(r, [update("Network_Function_Group", {"network_function": ["set", [nf("nfa"), nf("nfb")]]},
                                    name="g1")]),
        lambda: transact(r, [update("Network_Function", {"id": 31}, name="nfa")]),
        lambda: transact(r, [update("Network_Function_Group", {"id": 5}, name="g1")]),
        lambda: _upd_acl(r, "x1", {"network_function_group": g("g2")}),
        lambda: _upd_acl(r, "x2", {"action": "drop"}),
        lambda: _upd_acl(r, "x2", {"action": "allow-related", "network_function_group": g("g1")}),
        lambda: _acl(r, ("Port_Group", "pg0"), "from-lport", 103, "icmp4", "allow-related", "g1", "x4"),
        lambda: transact(r, [update("Port_Group", {"ports": ["set", []]}, name="pg0")]),
        lambda: _upd_acl(r, "x3", {"network_function_group": ["set", []]}),
        lambda: transact(r, [update("Network_Function_Group", {"network_function": ["set", []]}, name="g2")]),
        lambda: transact(r, [update("Network_Function", {"inport": nb_uuid(r, "Logical_Switch_Port", "b2"),
                                                         "outport": nb_uuid(r, "Logical_Switch_Port", "b1")},
                                    name="nfb")]),
        lambda: nbctl(r, "acl-del", "sw0"),
    ]
    child_steps = {4, 5, 6}
    for i, step in enumerate(steps):
        runs = {n: node_runs(port, n, "recompute") for n in NODES}
        step()
        assert_step_checked(env, d, i)
        after = {n: node_runs(port, n, "recompute") for n in NODES}
        assert i in child_steps or after == runs, f"step {i} recomputed: {runs} -> {after}"
    assert_converged(r, env.sb.remote, env.workdir / "fresh", release=env.release)
    active = {row["name"]: row["network_function_active"] for row in
              ovsdb_select(r, "OVN_Northbound", "Network_Function_Group", ["name", "network_function_active"])}
    assert active["g2"] == ["set", []] and active["g1"][0] == "uuid", active
