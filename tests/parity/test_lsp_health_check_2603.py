"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for switch ports' health
checks (NB 7.18: ``Logical_Switch_Port.health_checks``, ``Logical_Switch_Port_Health_Check``): SB
Service_Monitor rows of type logical-switch-port, the ARP/ND responder flows of their source
IPs, and NB ``status`` copied from SB.  Skipped without the sid chroot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_network_function_2603 import _parity_2603

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.parity.harness import run_parity


def build_lsp_health_checks_nb(remote: str) -> None:
    """TCP (with options), ICMP and UDP over IPv6 checks on two ports, one source IP shared."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2 fd00::2",
          "--", "set", "NB_Global", ".", "options:svc_monitor_mac=0a:00:00:00:00:fe")
    ops = NbOps()
    h1 = ops.insert("Logical_Switch_Port_Health_Check", {"protocol": "tcp", "src_ip": "10.0.0.254", "port": 80,
                                                          "address": "10.0.0.1", "options": ops.map({"interval": "7"})})
    h2 = ops.insert("Logical_Switch_Port_Health_Check", {"protocol": "icmp", "src_ip": "10.0.0.254", "port": 0,
                                                          "address": "10.0.0.2"})
    h3 = ops.insert("Logical_Switch_Port_Health_Check", {"protocol": "udp", "src_ip": "fd00::fe", "port": 53,
                                                          "address": "fd00::2"})
    for port, hcs in (("vm1", [h1]), ("vm2", [h2, h3])):
        ops.ops.append({"op": "mutate", "table": "Logical_Switch_Port", "where": [["name", "==", port]],
                        "mutations": [["health_checks", "insert", ops.set(*hcs)]]})
    ops.transact(remote)


def test_26_03_lsp_health_checks_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_lsp_health_checks_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    assert len(r.ref_dump.rows("Service_Monitor")) == 3


def _vm2_up_and_online(_nb: str, sb: str) -> None:
    """ovn-controller's part: vm2 is up, its ICMP monitor online."""
    ops: list[Any] = [{"op": "update", "table": "Port_Binding", "where": [["logical_port", "==", "vm2"]], "row": {"up": True}},
                      {"op": "update", "table": "Service_Monitor", "where": [["protocol", "==", "icmp"]],
                       "row": {"status": "online"}}]
    subprocess.run(["ovsdb-client", "transact", sb, json.dumps(["OVN_Southbound", *ops])], check=True, capture_output=True)


def _statuses(db: Path) -> dict[str, Any]:
    q = ["OVN_Northbound", {"op": "select", "table": "Logical_Switch_Port_Health_Check", "where": [],
                            "columns": ["protocol", "status"]}]
    out = json.loads(subprocess.run(["ovsdb-tool", "query", str(db), json.dumps(q)], capture_output=True, text=True,
                                    check=True).stdout)
    return {r["protocol"]: r["status"] for r in out[0]["rows"]}


def test_26_03_lsp_health_check_status_written_back_as_reference(monkeypatch, tmp_path) -> None:
    try:
        chroot_tools("26.03")
    except ToolsUnavailable as e:
        pytest.skip(str(e))
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    r = run_parity(build_lsp_health_checks_nb, release="26.03", from_chroot=True, workdir=tmp_path / "p",
                   settle_timeout=60, after_settle=_vm2_up_and_online)
    assert r.ok, r.report()
    ref = _statuses(tmp_path / "p" / "ref" / "nb.db")
    assert ref["icmp"] == "online", ref
    assert _statuses(tmp_path / "p" / "ours" / "nb.db") == ref
