"""26.03's health checks under ``--check-incremental=1`` (NB 7.18 / SB 21.8 servers, the 26.03
profile): switch ports' health checks and network functions' come, change and go, and their
Service_Monitor statuses change as ovn-controller would change them.  Each change must equal a full
recompute without recomputing the northd, lflow or sb_sync node; NB's statuses and active network
function follow SB."""

from __future__ import annotations

from typing import Any

import pytest
from incremental_2603 import assert_step_checked, nb_uuid, start_checked

from ovn_northd_py.devtools.nb_json import NbOps, transact, update
from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.testing import node_runs, ovsdb_select, ovsdb_transact

pytestmark = pytest.mark.releases("26.03")

NODES = ("northd", "lflow", "sb_sync")


def _sb(remote: str, *ops: dict[str, Any]) -> None:
    ovsdb_transact(remote, "OVN_Southbound", *ops)


def _hc(remote: str, port: str, proto: str, address: str, src: str, pnum: int) -> None:
    ops = NbOps()
    h = ops.insert("Logical_Switch_Port_Health_Check", {"protocol": proto, "src_ip": src, "port": pnum, "address": address})
    ops.ops.append({"op": "mutate", "table": "Logical_Switch_Port", "where": [["name", "==", port]],
                    "mutations": [["health_checks", "insert", ops.set(h)]]})
    ops.transact(remote)


def setup(remote: str) -> None:
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2",
          "--", "set", "NB_Global", ".", "options:svc_monitor_mac=0a:00:00:00:00:fe",
          "options:svc_monitor_mac_dst=0a:00:00:00:00:fd",
          "options:svc_monitor_ip=169.254.100.1", "options:svc_monitor_ip_dst=169.254.100.2")
    ops = NbOps()
    ports = {}
    for a, b in (("a1", "a2"), ("b1", "b2")):
        for p, peer in ((a, b), (b, a)):
            ports[p] = ops.insert("Logical_Switch_Port", {"name": p, "options": ops.map({"is-nf": "true", "nf-linked-port": peer})})
            ops.add_to("Logical_Switch", "sw0", "ports", ports[p])
    nfa = ops.insert("Network_Function", {"name": "nfa", "id": 1, "inport": ports["a1"], "outport": ports["a2"]})
    nfb = ops.insert("Network_Function", {"name": "nfb", "id": 2, "inport": ports["b1"], "outport": ports["b2"]})
    g = ops.insert("Network_Function_Group", {"name": "g", "id": 5, "mode": "inline", "network_function": ops.set(nfa, nfb)})
    ops.add_to("Logical_Switch", "sw0", "acls", ops.insert("ACL", {
        "direction": "from-lport", "priority": 1, "match": "ip4", "action": "allow-related", "network_function_group": g}))
    ops.transact(remote)


def test_health_check_changes_incremental_equals_recompute(env, started) -> None:
    r, s = env.nb.remote, env.sb.remote
    setup(r)
    d, port = start_checked(env, started)
    env.sync()
    before = {n: node_runs(port, n, "recompute") for n in NODES}

    def hc_on(nf: str) -> None:  # (health checks are not root: one per network function)
        ops = NbOps()
        hc = ops.insert("Network_Function_Health_Check", {"name": f"hc-{nf}", "options": ops.map({"interval": "2"})})
        ops.ops.append(update("Network_Function", {"health_check": hc}, name=nf))
        ops.transact(r)

    def online(lport: str, status: str = "online") -> None:
        _sb(s, {"op": "update", "table": "Port_Binding", "where": [["logical_port", "==", lport]], "row": {"up": True}},
            {"op": "update", "table": "Service_Monitor", "where": [["logical_port", "==", lport]],
             "row": {"status": status}})

    steps = [
        lambda: _hc(r, "vm1", "tcp", "10.0.0.1", "10.0.0.254", 80),
        lambda: _hc(r, "vm2", "icmp", "10.0.0.2", "10.0.0.253", 0),
        lambda: transact(r, [{"op": "update", "table": "Logical_Switch_Port_Health_Check",
                              "where": [["protocol", "==", "tcp"]], "row": {"src_ip": "10.0.0.252", "port": 8080}}]),
        lambda: online("vm2"),
        lambda: hc_on("nfa"),  # nfa unhealthy now: nfb active
        lambda: hc_on("nfb"),  # none healthy: none active
        lambda: online("b2"),  # nfb online: active
        lambda: online("a2"),  # nfa online: active again (first in uuid order)
        lambda: online("a2", "offline"),
        lambda: transact(r, [update("Network_Function_Health_Check", {"options": ["map", [["interval", "9"]]]},
                                    name="hc-nfb")]),
        lambda: transact(r, [{"op": "mutate", "table": "Logical_Switch_Port", "where": [["name", "==", "vm1"]],
                              "mutations": [["health_checks", "delete",
                                             ["set", [["uuid", row["_uuid"][1]] for row in ovsdb_select(
                                                 r, "OVN_Northbound", "Logical_Switch_Port_Health_Check",
                                                 ["_uuid", "protocol"]) if row["protocol"] == "tcp"]]]]}]),
    ]
    for i, step in enumerate(steps):
        step()
        assert_step_checked(env, d, i)
    after = {n: node_runs(port, n, "recompute") for n in NODES}
    assert after == before, f"recomputed: {before} -> {after}"
    # (No comparison with a fresh run: its SB would lack the statuses ovn-controller's part wrote.)
    mons = {(row["logical_port"], row["type"]) for row in ovsdb_select(s, "OVN_Southbound", "Service_Monitor",
                                                                      ["logical_port", "type"])}
    assert mons == {("vm2", "logical-switch-port"), ("a2", "network-function"), ("b2", "network-function")}, mons
    nbg = ovsdb_select(r, "OVN_Northbound", "Network_Function_Group", ["network_function_active"])[0]
    assert nbg["network_function_active"] == nb_uuid(r, "Network_Function", "nfb")
    hcs = {row["protocol"]: row["status"] for row in ovsdb_select(r, "OVN_Northbound", "Logical_Switch_Port_Health_Check",
                                                                  ["protocol", "status"])}
    assert hcs == {"icmp": "online"}, hcs
