"""Parity with the reference ovn-northd for QoS rules (NB ``QoS``, ``Logical_Switch.qos_rules``).

The four QoS stages must match the reference exactly (0 missing, 0 extra) and nothing else
we write may be wrong (``flows.extra == 0``).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.parity.harness import ParityResult
from ovn_northd_py.parity.stage_names import release_stage_names

QOS_STAGES = release_stage_names(("ls_in_qos_mark", "ls_in_qos_meter", "ls_out_qos_mark", "ls_out_qos_meter"))


def assert_qos_parity(r: ParityResult) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in QOS_STAGES:
        s = by_stage[name]
        assert not s.missing and not s.extra and s.matched == s.ref_count, f"{name}\n" + r.report()
    assert flows.extra == 0, r.report()


def _qos(remote: str, switch: str, direction: str, priority: int, match: str, **cols: dict[str, int]) -> None:
    """A QoS row written with ``create`` (ovn-nbctl qos-add refuses some combinations, e.g. a lone burst)."""
    args = ["--", "--id=@q", "create", "QoS", f"direction={direction}", f"priority={priority}",
            "match=" + '"' + match.replace('"', '\\"') + '"']
    for column, values in cols.items():
        args += [f"{column}:{k}={v}" for k, v in values.items()]
    nbctl(remote, *args, "--", "add", "Logical_Switch", switch, "qos_rules", "@q")


def build_qos_nb(remote: str) -> None:
    """Two switches; every action/bandwidth combination in both directions, IPv4 and IPv6 matches,
    one row shared by both switches, rows that give no flow, a match ovn-controller cannot parse."""
    cmds: list[list[str]] = [
        ["ls-add", "sw0"], ["lsp-add", "sw0", "p1"], ["lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1"],
        ["lsp-add", "sw0", "p2"], ["lsp-set-addresses", "p2", "00:00:00:00:00:02 fd00::2"],
        ["ls-add", "sw1"], ["lsp-add", "sw1", "q1"], ["lsp-set-addresses", "q1", "00:00:00:00:01:01 10.1.0.1"],
    ]
    for c in cmds:
        nbctl(remote, *c)
    q: list[tuple[str, str, int, str, dict[str, Any]]] = [
        ("sw0", "from-lport", 100, "ip4.src == 10.0.0.1", {"action": {"dscp": 12}}),
        ("sw0", "to-lport", 200, "ip6.dst == fd00::2", {"action": {"dscp": 5}}),
        ("sw0", "from-lport", 300, 'inport == "p1"', {"bandwidth": {"rate": 1000, "burst": 200}}),
        ("sw0", "to-lport", 300, 'outport == "p2" && ip6', {"bandwidth": {"rate": 500}}),
        ("sw0", "from-lport", 0, "1", {"action": {"dscp": 0}}),
        ("sw1", "from-lport", 150, "ip6 && udp", {"action": {"dscp": 10}, "bandwidth": {"rate": 100, "burst": 10}}),
        ("sw1", "to-lport", 50, "ip4 && tcp.dst == 80", {"action": {"dscp": 48}, "bandwidth": {"rate": 2000}}),
        ("sw1", "to-lport", 60, "udp", {"bandwidth": {"burst": 2000}}),  # a burst alone: no flow
        ("sw1", "to-lport", 61, "ip4", {}),  # nothing to do: no flow
        ("sw1", "from-lport", 32767, "icmp6", {"action": {"dscp": 63}, "bandwidth": {"rate": 4294967295}}),
        ("sw1", "from-lport", 90, "ip4.src == ", {"action": {"dscp": 1}}),  # written as is by the reference
    ]
    for sw, direction, prio, match, cols in q:
        _qos(remote, sw, direction, prio, match, **cols)
    # One row on both switches.
    _qos(remote, "sw0", "to-lport", 400, "ip4.dst == 10.1.0.0/16", action={"dscp": 20}, bandwidth={"rate": 300})
    uuid = nbctl(remote, "--bare", "--columns=_uuid", "find", "QoS", "priority=400").strip()
    nbctl(remote, "add", "Logical_Switch", "sw1", "qos_rules", uuid)


def test_qos_stages_at_parity(parity_run) -> None:
    r = parity_run(build_qos_nb, tables=("Logical_Flow",))
    assert_qos_parity(r)
    stages = {s.stage: s for s in r.flows.stages}
    # Non-trivial: every stage has rule flows besides its priority-0 fallback on both switches.
    assert all(stages[name].ref_count > 2 for name in QOS_STAGES), r.report()


def build_qos_mark_nb(remote: str) -> None:
    """QoS rows with ``action:mark`` (NB 7.11: 25.03), alone and with dscp / a meter, and an empty row."""
    nbctl(remote, "ls-add", "sw0")
    rows = [("from-lport", 10, "ip4", {}, {}), ("from-lport", 12, "ip4.src == 1.1.1.1", {"mark": 7}, {}),
            ("from-lport", 13, "ip4.src == 1.1.1.2", {"mark": 7, "dscp": 3}, {}),
            ("from-lport", 17, "ip4.src == 1.1.1.6", {"mark": 0}, {}),
            ("to-lport", 14, "ip4.src == 1.1.1.3", {"mark": 8}, {"rate": 100, "burst": 5})]
    ops: list[dict[str, Any]] = []
    for i, (direction, prio, match, action, bandwidth) in enumerate(rows):
        ops.append({"op": "insert", "table": "QoS", "uuid-name": f"q{i}",
                    "row": {"direction": direction, "priority": prio, "match": match,
                            "action": ["map", sorted(action.items())], "bandwidth": ["map", sorted(bandwidth.items())]}})
    ops.append({"op": "mutate", "table": "Logical_Switch", "where": [["name", "==", "sw0"]],
                "mutations": [["qos_rules", "insert", ["set", [["named-uuid", f"q{i}"] for i in range(len(rows))]]]]})
    subprocess.run(["ovsdb-client", "transact", remote, json.dumps(["OVN_Northbound", *ops])], check=True,
                   capture_output=True, timeout=60)


def test_qos_packet_mark_parity(parity_run, parity_profile) -> None:
    if not parity_profile.has("ls_qos_merged"):
        pytest.skip("the release's QoS has no action:mark (NB 7.0.0)")
    r = parity_run(build_qos_mark_nb, tables=("Logical_Flow",))
    assert_qos_parity(r)
    assert {s.stage: s for s in r.flows.stages}["ls_in_qos"].ref_count == 5, r.report()
