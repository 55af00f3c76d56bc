"""Incremental processing of the 25.03 ACL features (NB 7.11 / SB 20.41 servers, the 25.03 draft
profile): ACL tiers, sampling (Sample, Sample_Collector, Sampling_App) and persist-established
(SB ACL_ID).

A random sequence of NB transactions; after each, the daemon compares its incremental state with
a full recompute (``--check-incremental=1``), and none may recompute the ``northd``, ``lflow`` or
``sb_sync`` node.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, mismatches, node_runs, ovsdb_select

# 26.03 runs wherever 25.03 does (the same features, its own profile).
pytestmark = pytest.mark.releases("25.03", "26.03")

NODES = ("northd", "lflow", "sb_sync")
SWITCHES = ("sw0", "sw1", "sw2")  # sw2 has a load balancer (stateful without stateful ACLs)
PGS = ("pg0", "pg1")
ACTIONS = ("allow", "allow-related", "allow-stateless", "drop", "reject", "pass")


@dataclass
class Net25:
    workdir: Path
    nb: OvsdbServer
    sb: OvsdbServer
    daemon: OurNorthd
    port: int

    def wait(self) -> None:
        nbctl(self.nb.remote, "sync", wait="sb", timeout=30)


def setup(remote: str) -> None:
    cmds: list[str] = []
    for k, sw in enumerate(SWITCHES):
        cmds += ["--", "ls-add", sw]
        for j in (1, 2):
            cmds += ["--", "lsp-add", sw, f"{sw}-p{j}",
                     "--", "lsp-set-addresses", f"{sw}-p{j}", f"0a:00:00:00:{k:02x}:{j:02x} 10.{k}.0.{j}"]
    cmds += ["--", "lb-add", "lb0", "30.0.0.1:80", "10.2.0.1:8080", "tcp", "--", "ls-lb-add", "sw2", "lb0",
             "--", "pg-add", "pg0", "sw0-p1", "sw1-p1", "--", "pg-add", "pg1", "sw2-p2"]
    nbctl(remote, *cmds[1:])
    ops = NbOps()
    c = [ops.insert("Sample_Collector", {"id": i, "name": f"c{i}", "probability": 100 * i, "set_id": i})
         for i in (1, 2, 3)]
    samples = [ops.insert("Sample", {"collectors": ops.set(*cols), "metadata": 1000 + i})
               for i, cols in enumerate(([c[0]], [c[1]], [c[0], c[2]], []))]
    # Samples are not root: two ACLs of a port group without ports keep them.
    pins = [ops.insert("ACL", {"direction": "to-lport", "priority": 1, "match": "ip", "action": "drop",
                               "sample_new": samples[i], "sample_est": samples[i + 1]}) for i in (0, 2)]
    ops.ops.append({"op": "insert", "table": "Port_Group", "row": {"name": "pins", "acls": ops.set(*pins)}})
    ops.insert("Sampling_App", {"type": "acl-new", "id": 5})
    ops.transact(remote)


@pytest.fixture
def net25(tmp_path: Path, ovn_release) -> Iterator[Net25]:
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d: OurNorthd | None = None
    try:
        setup(nb.remote)
        port = free_port()
        d = OurNorthd(tmp_path, nb.remote, sb.remote,
                      extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
        net = Net25(tmp_path, nb, sb, d, port)
        net.wait()
        yield net
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()


@dataclass
class Model:
    acls: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # tag -> (table, owner, uuid)
    n: int = 0


def _tagged(tag: str) -> list[Any]:
    return [["external_ids", "includes", ["map", [["tag", tag]]]]]


def acl_row(rnd: random.Random, samples: list[str], tag: str) -> dict[str, Any]:
    def sample() -> list[Any]:
        return ["set", [["uuid", rnd.choice(samples)]]] if rnd.random() < 0.5 else ["set", []]

    options = {}
    if rnd.random() < 0.5:
        options["persist-established"] = rnd.choice(["true", "true", "false"])
    if rnd.random() < 0.3:
        options["apply-after-lb"] = "true"
    return {
        "direction": rnd.choice(["from-lport", "to-lport"]), "priority": rnd.randint(0, 32767),
        "match": rnd.choice(["ip4", "tcp.dst == 80", "udp", "ip6", "icmp4 || icmp6"]),
        "action": rnd.choice(ACTIONS + ("allow-related",) * 3), "tier": rnd.choice([0, 0, 1, 2, 3]), "label": rnd.choice([0, 0, 0, 7]),
        "sample_new": sample(), "sample_est": sample(),
        "options": ["map", sorted(options.items())], "external_ids": ["map", [["tag", tag]]],
    }


def random_ops(
    rnd: random.Random, m: Model, samples: list[str], lsps: dict[str, str], lb: str,
) -> tuple[NbOps, dict[str, tuple[str, str, int]]]:
    """One transaction of 1..3 changes; returns it and the ACLs it inserts (tag -> (table, owner,
    index of the insert operation))."""
    ops = NbOps()
    added: dict[str, tuple[str, str, int]] = {}
    for _ in range(rnd.randint(1, 3)):
        m.n += 1
        tag = f"t{m.n}"
        kind = rnd.choices(["add", "del", "upd", "sample", "collector", "app", "pg-ports", "lb"],
                           weights=[30, 12, 30, 8, 5, 5, 8, 4])[0]
        if kind in ("del", "upd") and not m.acls:
            kind = "add"
        if kind == "add":
            table, owner = rnd.choice([("Logical_Switch", s) for s in SWITCHES] + [("Port_Group", p) for p in PGS])
            ref = ops.insert("ACL", acl_row(rnd, samples, tag))
            added[tag] = (table, owner, len(ops.ops) - 1)
            ops.add_to(table, owner, "acls", ref)
        elif kind == "del":  # (ACLs are not root: removing the last reference deletes the row)
            table, owner, u = m.acls.pop(rnd.choice(sorted(m.acls)))
            ops.ops.append({"op": "mutate", "table": table, "where": [["name", "==", owner]],
                            "mutations": [["acls", "delete", ["set", [["uuid", u]]]]]})
        elif kind == "upd":
            old = rnd.choice(sorted(m.acls))
            row = acl_row(rnd, samples, old)
            keys = rnd.sample(sorted(k for k in row if k != "external_ids"), rnd.randint(1, 3))
            ops.ops.append({"op": "update", "table": "ACL", "where": _tagged(old), "row": {k: row[k] for k in keys}})
        elif kind == "sample":
            ops.ops.append({"op": "update", "table": "Sample", "where": [["_uuid", "==", ["uuid", rnd.choice(samples)]]],
                            "row": {"metadata": rnd.randint(2000, 3000)}})
        elif kind == "collector":
            ops.ops.append({"op": "update", "table": "Sample_Collector", "where": [["id", "==", rnd.randint(1, 3)]],
                            "row": {"probability": rnd.randint(0, 65535)}})
        elif kind == "pg-ports":  # ACLs of a port group reach other switches (their tiers, statefulness)
            ports = rnd.sample(sorted(lsps), rnd.randint(0, 3))
            ops.ops.append({"op": "update", "table": "Port_Group", "where": [["name", "==", rnd.choice(PGS)]],
                            "row": {"ports": ["set", [["uuid", lsps[p]] for p in ports]]}})
        elif kind == "lb":  # a load balancer VIP makes a switch stateful without stateful ACLs
            ops.ops.append({"op": "mutate", "table": "Logical_Switch", "where": [["name", "==", rnd.choice(SWITCHES[:2])]],
                            "mutations": [["load_balancer", rnd.choice(["insert", "delete"]), ["set", [["uuid", lb]]]]]})
        else:
            app = rnd.choice(["acl-new", "acl-est"])
            ops.ops.append({"op": "delete", "table": "Sampling_App", "where": [["type", "==", app]]})
            if rnd.random() < 0.7:
                ops.insert("Sampling_App", {"type": app, "id": rnd.randint(1, 255)})
    return ops, added


def test_acl_2503_changes_incremental_equals_recompute(net25) -> None:
    """About 100 changes of tiers, samples, sampling apps, persist-established ACLs, port group
    membership and load balancers (statefulness without stateful ACLs), each checked
    against a full recompute, none of them recomputing the northd, lflow or sb_sync node; SB ACL_ID
    ends up with one distinct id per persist-established allow-related ACL."""
    net = net25
    before = {n: node_runs(net.port, n, "recompute") for n in NODES}
    seed = int(os.environ.get("OVN_ACL_TEST_SEED", "20261202"))
    rnd = random.Random(seed)
    samples = [r["_uuid"][1] for r in ovsdb_select(net.nb.remote, "OVN_Northbound", "Sample")]
    lsps = {r["name"]: r["_uuid"][1] for r in ovsdb_select(net.nb.remote, "OVN_Northbound", "Logical_Switch_Port")}
    lb = ovsdb_select(net.nb.remote, "OVN_Northbound", "Load_Balancer")[0]["_uuid"][1]
    m = Model()
    done: list[list[dict[str, Any]]] = []
    changes = 0
    while changes < 100:
        ops, added = random_ops(rnd, m, samples, lsps, lb)
        replies = ops.transact(net.nb.remote)
        for tag, (table, owner, i) in added.items():
            m.acls[tag] = (table, owner, replies[i]["uuid"][1])
        net.wait()
        done.append(ops.ops)
        changes += len(added) + 1
        bad = mismatches(net.daemon)
        if bad:
            seq = "\n".join(json.dumps(b) for b in done)
            pytest.fail(f"incremental != recompute after {len(done)} transactions (seed {seed}):\n"
                        f"{bad[0].get('differences')}\nsequence:\n{seq}")
    after = {n: node_runs(net.port, n, "recompute") for n in NODES}
    assert after == before, f"recomputed: {before} -> {after}"
    assert metric(net.port, "ovn_northd_py_incremental_checks_total") >= len(done) // 2
    persist = {r["_uuid"][1] for r in ovsdb_select(net.nb.remote, "OVN_Northbound", "ACL")
               if r["action"] == "allow-related" and ["persist-established", "true"] in r["options"][1]}
    ids = {r["_uuid"][1]: r["id"] for r in ovsdb_select(net.sb.remote, "OVN_Southbound", "ACL_ID")}
    assert set(ids) == persist and len(set(ids.values())) == len(ids), (ids, persist)
