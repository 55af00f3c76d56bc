"""26.03's ``Logical_Router_Policy.output_port`` under ``--check-incremental=1`` (NB 7.18 / SB 21.8
servers, the 26.03 profile): policies naming an output port are added, repointed, made ECMP
and back; each change must equal a full recompute without recomputing the northd or lflow node."""

from __future__ import annotations

import pytest
from incremental_2603 import assert_step_checked, start_checked

from ovn_northd_py.devtools.nb_json import NbOps, select, transact, update
from ovn_northd_py.devtools.testing import node_runs
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")

NODES = ("northd", "lflow")


def test_policy_output_port_changes_incremental_equals_recompute(env, started) -> None:
    r = env.nb.remote
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "lrp1", "00:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64",
              "--", "lrp-add", "lr0", "lrp2", "00:00:00:00:01:02", "30.0.0.1/24")
    lrps = {row["name"]: ["uuid", row["_uuid"][1]] for row in select(r, "Logical_Router_Port", ["_uuid", "name"])}
    d, port = start_checked(env, started)
    env.sync()
    before = {n: node_runs(port, n, "recompute") for n in NODES}

    def add() -> None:
        ops = NbOps()
        p = ops.insert("Logical_Router_Policy", {
            "priority": 10, "match": "ip4.src == 1.1.1.1", "action": "reroute", "nexthops": ops.set("30.0.0.5"),
            "output_port": lrps["lrp1"], "external_ids": ops.map({"tag": "p1"})})
        ops.add_to("Logical_Router", "lr0", "policies", p)
        ops.transact(r)

    def upd(row: dict) -> None:  # type: ignore[type-arg]
        transact(r, [update("Logical_Router_Policy", row, ids=("tag", "p1"))])

    steps = [
        add,
        lambda: upd({"output_port": lrps["lrp2"]}),
        lambda: upd({"nexthops": ["set", ["30.0.0.5", "30.0.0.6"]]}),  # ECMP with a port: left out
        lambda: upd({"output_port": ["set", []]}),
        lambda: upd({"nexthops": "10.0.0.7", "output_port": lrps["lrp2"]}),
        lambda: upd({"nexthops": "fd01::5", "output_port": lrps["lrp1"], "match": "ip6"}),
    ]
    for i, step in enumerate(steps):
        step()
        assert_step_checked(env, d, i)
    after = {n: node_runs(port, n, "recompute") for n in NODES}
    assert after["lflow"] == before["lflow"], f"recomputed: {before} -> {after}"
    assert_converged(r, env.sb.remote, env.workdir / "fresh", release=env.release)
