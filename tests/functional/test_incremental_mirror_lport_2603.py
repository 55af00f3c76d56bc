"""26.03's lport mirrors under ``--check-incremental=1`` (NB 7.18 / SB 21.8 servers, the 26.03
profile): mirrors, their rules, the ports naming them and their sinks come and go; after each
change the incremental state must equal a full recompute (changes that may add or remove a mirror
port take the declared recompute of northd/incremental.py), rules, filters and changes elsewhere must
not recompute the northd node, and SB ends up as a fresh run writes it."""

from __future__ import annotations

import pytest
from incremental_2603 import assert_step_checked, nb_uuid, start_checked

from ovn_northd_py.devtools.nb_json import NbOps, transact, update
from ovn_northd_py.devtools.testing import node_runs, ovsdb_select
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")


def _attach(remote: str, port: str, mirror: str, op: str = "insert") -> None:
    transact(remote, [{"op": "mutate", "table": "Logical_Switch_Port", "where": [["name", "==", port]],
                       "mutations": [["mirror_rules", op, ["set", [nb_uuid(remote, "Mirror", mirror)]]]]}])


def _mirror(remote: str, name: str, filt: str, sink: str, mtype: str = "lport") -> None:
    ops = NbOps()
    ops.insert("Mirror", {"name": name, "type": mtype, "filter": filt, "sink": sink, "index": 0})
    ops.transact(remote)


def _rule(remote: str, mirror: str, match: str, action: str, prio: int) -> None:
    ops = NbOps()
    r = ops.insert("Mirror_Rule", {"match": match, "action": action, "priority": prio})
    ops.ops.append({"op": "mutate", "table": "Mirror", "where": [["name", "==", mirror]],
                    "mutations": [["mirror_rules", "insert", ops.set(r)]]})
    ops.transact(remote)


def test_lport_mirror_changes_incremental_equals_recompute(env, started) -> None:
    r = env.nb.remote
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
              "--", "lsp-add", "sw0", "vm2", "--", "lsp-add", "sw0", "mon",
              "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm3", "--", "lsp-add", "sw1", "mon1")
    d, port = start_checked(env, started)
    env.sync()
    steps = [
        lambda: _mirror(r, "m1", "both", "mon"),
        lambda: _attach(r, "vm1", "m1"),
        lambda: _rule(r, "m1", "tcp", "skip", 50),
        lambda: _mirror(r, "m2", "to-lport", "mon1"),
        lambda: _attach(r, "vm3", "m2"),
        lambda: _attach(r, "vm2", "m2"),
        lambda: transact(r, [update("Mirror", {"filter": "from-lport"}, name="m1")]),
        lambda: transact(r, [{"op": "update", "table": "Mirror_Rule", "where": [["match", "==", "tcp"]],
                              "row": {"priority": 70, "action": "mirror"}}]),
        lambda: env.nbctl("lsp-add", "sw1", "vm9"),  # (not a sink, no mirror: no recompute)
        lambda: env.nbctl("lsp-del", "mon1"),  # m2's sink gone: its mirror ports go
        lambda: env.nbctl("lsp-add", "sw0", "mon1"),  # back, on another switch
        lambda: transact(r, [update("Mirror", {"type": "gre", "sink": "10.0.0.9"}, name="m1")]),
        lambda: _attach(r, "vm2", "m2", "delete"),
    ]
    recomputes = []
    for i, step in enumerate(steps):
        before = node_runs(port, "northd", "recompute")
        step()
        assert_step_checked(env, d, i)
        recomputes.append(node_runs(port, "northd", "recompute") - before)
    # A rule added or changed, a filter changed, a port that is no sink added: no recompute.
    assert [recomputes[i] for i in (2, 6, 7, 8)] == [0, 0, 0, 0], recomputes
    assert_converged(r, env.sb.remote, env.workdir / "fresh", release=env.release)
    mps = {row["logical_port"] for row in ovsdb_select(env.sb.remote, "OVN_Southbound", "Port_Binding",
                                                       ["logical_port", "type"])
           if row["type"] == "mirror"}
    assert mps == {"mp-sw1-mon1"}, mps
