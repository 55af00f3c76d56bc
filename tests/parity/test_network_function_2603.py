"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for network functions (NB
7.18: ``Network_Function``, ``Network_Function_Group``, ``ACL.network_function_group``, the
``is-nf`` / ``nf-linked-port`` port options): the ACL flows that mark the redirection, the
``ls_*_pre_network_function`` / ``ls_*_network_function`` flows, the egress pre-ACL and stateful
flows of network-function ports, and NB's ``network_function_active`` written back.  Each NB is
small; the whole SB must be equal.  Skipped without the sid chroot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.parity.harness import ParityResult, run_parity


def _parity_2603(builder, monkeypatch, tmp_path) -> ParityResult:  # type: ignore[no-untyped-def]
    try:
        chroot_tools("26.03")
    except ToolsUnavailable as e:
        pytest.skip(str(e))
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    return run_parity(builder, release="26.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)


def nf_ports(ops: NbOps, switch: str, *pairs: tuple[str, str]) -> dict[str, list[str]]:
    """Network-function port pairs on ``switch`` (``is-nf=true``, each naming the other)."""
    out = {}
    for a, b in pairs:
        for p, peer in ((a, b), (b, a)):
            out[p] = ops.insert("Logical_Switch_Port",
                                {"name": p, "options": ops.map({"is-nf": "true", "nf-linked-port": peer})})
    ops.add_to("Logical_Switch", switch, "ports", *out.values())
    return out


def nf_acl(ops: NbOps, direction: str, priority: int, match: str, action: str, group: Any,
           **cols: Any) -> list[str]:
    row = {"direction": direction, "priority": priority, "match": match, "action": action,
           "network_function_group": group, **cols}
    return ops.insert("ACL", row)


def build_basic_nb(remote: str) -> None:
    """Two groups of one network function each on sw0 (one fail-open), named by from-lport and
    to-lport ACLs of sw0, and by an ACL of sw1, where the network function's ports are not."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2",
          "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm3")
    ops = NbOps()
    p = nf_ports(ops, "sw0", ("nfp1", "nfp2"), ("nfp3", "nfp4"))
    nf1 = ops.insert("Network_Function", {"name": "nf1", "id": 11, "inport": p["nfp1"], "outport": p["nfp2"]})
    nf2 = ops.insert("Network_Function", {"name": "nf2", "id": 12, "inport": p["nfp3"], "outport": p["nfp4"]})
    g1 = ops.insert("Network_Function_Group", {"name": "nfg1", "id": 3, "mode": "inline", "network_function": ops.set(nf1)})
    g2 = ops.insert("Network_Function_Group", {"name": "nfg2", "id": 4, "mode": "inline", "fallback": "fail-open",
                                                "network_function": ops.set(nf2)})
    ops.add_to("Logical_Switch", "sw0", "acls",
               nf_acl(ops, "from-lport", 1001, 'inport == "vm1" && ip4', "allow-related", g1),
               nf_acl(ops, "to-lport", 1002, 'outport == "vm2" && tcp', "allow-related", g2),
               nf_acl(ops, "to-lport", 1003, 'outport == "vm1" && udp', "allow", g1))
    ops.add_to("Logical_Switch", "sw1", "acls", nf_acl(ops, "from-lport", 5, "ip4", "allow-related", g2))
    ops.transact(remote)


def build_corners_nb(remote: str) -> None:
    """A group of two network functions, a group no ACL names, an empty group, a network function
    in no group, an ``is-nf`` port of none, ACLs with a group that cannot redirect (``drop``,
    ``allow-stateless``), an after-LB ACL, and a port group's ACL naming a group."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "ls-add", "sw2", "--", "lsp-add", "sw2", "vm3", "--", "pg-add", "pg1", "vm3")
    ops = NbOps()
    p = nf_ports(ops, "sw0", ("a1", "a2"), ("b1", "b2"), ("c1", "c2"))
    p |= nf_ports(ops, "sw2", ("d1", "d2"))
    ops.add_to("Logical_Switch", "sw0", "ports",
               ops.insert("Logical_Switch_Port", {"name": "lone", "options": ops.map({"is-nf": "true"})}))
    nfs = {n: ops.insert("Network_Function", {"name": f"nf{n}", "id": i, "inport": p[f"{n}1"], "outport": p[f"{n}2"]})
           for n, i in (("a", 21), ("b", 22), ("c", 23), ("d", 24))}
    g3 = ops.insert("Network_Function_Group", {"name": "nfg3", "id": 7, "mode": "inline",
                                                "network_function": ops.set(nfs["a"], nfs["b"])})
    ops.insert("Network_Function_Group", {"name": "nfg4", "id": 8, "mode": "inline", "network_function": ops.set(nfs["b"])})
    g5 = ops.insert("Network_Function_Group", {"name": "nfg5", "id": 9, "mode": "inline", "fallback": "fail-close",
                                                "network_function": ops.set(nfs["d"])})
    g6 = ops.insert("Network_Function_Group", {"name": "nfg6", "id": 10, "mode": "inline", "network_function": ops.set()})
    ops.add_to("Logical_Switch", "sw0", "acls",
               nf_acl(ops, "from-lport", 10, "ip4", "allow-related", g3),
               nf_acl(ops, "from-lport", 11, "tcp", "allow-related", g3, options=ops.map({"apply-after-lb": "true"})),
               nf_acl(ops, "from-lport", 12, "udp", "allow-stateless", g3),
               nf_acl(ops, "to-lport", 13, "udp", "drop", g3),
               nf_acl(ops, "to-lport", 14, "icmp4", "allow-related", g6),
               nf_acl(ops, "to-lport", 15, "icmp6", "allow-related", g5))
    ops.add_to("Logical_Switch", "sw2", "acls", nf_acl(ops, "from-lport", 20, "ip4", "allow", g5),
               nf_acl(ops, "to-lport", 21, "ip6", "allow", g5))
    ops.add_to("Port_Group", "pg1", "acls", nf_acl(ops, "to-lport", 30, "tcp", "allow-related", g5))
    ops.transact(remote)


def build_stateless_nb(remote: str) -> None:
    """An ``allow`` ACL naming a group on a switch without stateful ACLs: no redirection."""
    nbctl(remote, "ls-add", "sw2", "--", "lsp-add", "sw2", "vm3")
    ops = NbOps()
    p = nf_ports(ops, "sw2", ("d1", "d2"))
    nfd = ops.insert("Network_Function", {"name": "nfd", "id": 24, "inport": p["d1"], "outport": p["d2"]})
    g5 = ops.insert("Network_Function_Group", {"name": "nfg5", "id": 9, "mode": "inline", "network_function": ops.set(nfd)})
    ops.add_to("Logical_Switch", "sw2", "acls", nf_acl(ops, "from-lport", 20, "ip4", "allow", g5))
    ops.transact(remote)


def build_child_ports_nb(remote: str) -> None:
    """A network function on sw0 whose ports have child ports (``parent_name``) on sw1, where an
    ACL names its group: the child ports stand for its ports there."""
    nbctl(remote, "ls-add", "sw0", "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm1",
          "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1")
    ops = NbOps()
    p = nf_ports(ops, "sw0", ("a1", "a2"))
    for c, parent, tag in (("c1", "a1", 10), ("c2", "a2", 20)):
        ops.add_to("Logical_Switch", "sw1", "ports", ops.insert("Logical_Switch_Port", {
            "name": c, "parent_name": parent, "tag_request": tag, "options": ops.map({"is-nf": "true"})}))
    nf = ops.insert("Network_Function", {"name": "nfa", "id": 1, "inport": p["a1"], "outport": p["a2"]})
    g = ops.insert("Network_Function_Group", {"name": "g", "id": 5, "mode": "inline", "network_function": ops.set(nf)})
    for sw in ("sw0", "sw1"):
        ops.add_to("Logical_Switch", sw, "acls", nf_acl(ops, "to-lport", 1, "ip4", "allow-related", g))
    ops.transact(remote)


def nb_active(db: Path) -> dict[str, list[str]]:
    """Network_Function_Group name -> names of its network_function_active, from an NB file."""
    q = ["OVN_Northbound",
         {"op": "select", "table": "Network_Function_Group", "where": [], "columns": ["name", "network_function_active"]},
         {"op": "select", "table": "Network_Function", "where": [], "columns": ["_uuid", "name"]}]
    out = json.loads(subprocess.run(["ovsdb-tool", "query", str(db), json.dumps(q)], capture_output=True,
                                    text=True, check=True).stdout)
    names = {r["_uuid"][1]: r["name"] for r in out[1]["rows"]}
    res = {}
    for r in out[0]["rows"]:
        v = r["network_function_active"]
        uuids = [v[1]] if v[0] == "uuid" else [u[1] for u in v[1]]
        res[r["name"]] = [names[u] for u in uuids]
    return res


def test_26_03_network_functions_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_basic_nb, monkeypatch, tmp_path)
    assert r.flows is not None and r.flows.ref_count > 300, r.report()
    assert r.ok, r.report()


def test_26_03_network_function_corners_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_corners_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()


def test_26_03_network_function_child_ports_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_child_ports_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()


def test_26_03_network_function_acl_on_stateless_switch_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_stateless_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()


def test_26_03_network_function_active_written_back_as_reference(monkeypatch, tmp_path) -> None:
    """NB ``network_function_active`` of every group, as the reference writes it (the harness
    compares SB; the NB files of both sides are in the work dir)."""
    r = _parity_2603(build_corners_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    ref = nb_active(tmp_path / "p" / "ref" / "nb.db")
    assert ref["nfg6"] == [] and len(ref["nfg3"]) == 1, ref
    assert nb_active(tmp_path / "p" / "ours" / "nb.db") == ref


def build_health_checked_nb(remote: str) -> None:
    """A group of two network functions with health checks (NB_Global svc_monitor_ip / _dst /
    mac_dst set): SB Service_Monitor rows of type network-function; none online, so none active."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "set", "NB_Global", ".", "options:svc_monitor_mac=0a:00:00:00:00:fe",
          "options:svc_monitor_mac_dst=0a:00:00:00:00:fd",
          "options:svc_monitor_ip=169.254.100.1", "options:svc_monitor_ip_dst=169.254.100.2")
    ops = NbOps()
    p = nf_ports(ops, "sw0", ("a1", "a2"), ("b1", "b2"))
    hc = ops.insert("Network_Function_Health_Check", {"name": "hc", "options": ops.map({"interval": "2", "timeout": "1"})})
    nfa = ops.insert("Network_Function", {"name": "nfa", "id": 1, "inport": p["a1"], "outport": p["a2"], "health_check": hc})
    nfb = ops.insert("Network_Function", {"name": "nfb", "id": 2, "inport": p["b1"], "outport": p["b2"], "health_check": hc})
    g = ops.insert("Network_Function_Group", {"name": "g", "id": 5, "mode": "inline", "network_function": ops.set(nfa, nfb)})
    ops.add_to("Logical_Switch", "sw0", "acls", nf_acl(ops, "from-lport", 1, "ip4", "allow-related", g))
    ops.transact(remote)


def b_online(_nb: str, sb: str) -> None:
    """ovn-controller's part: the network functions' ports are up, nfb's monitor reports ``online``
    (on a port that is not up, northd turns ``online`` into ``offline``)."""
    ops: list[Any] = [{"op": "update", "table": "Port_Binding", "where": [["logical_port", "==", p]], "row": {"up": True}}
                      for p in ("a1", "a2", "b1", "b2")]
    ops.append({"op": "update", "table": "Service_Monitor", "where": [["logical_port", "==", "b2"]],
                "row": {"status": "online"}})
    subprocess.run(["ovsdb-client", "transact", sb, json.dumps(["OVN_Southbound", *ops])], check=True,
                   capture_output=True)


def test_26_03_network_function_health_checks_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_health_checked_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    assert len(r.ref_dump.rows("Service_Monitor")) == 2
    assert nb_active(tmp_path / "p" / "ours" / "nb.db") == nb_active(tmp_path / "p" / "ref" / "nb.db") == {"g": []}


def test_26_03_online_network_function_becomes_active_as_reference(monkeypatch, tmp_path) -> None:
    try:
        chroot_tools("26.03")
    except ToolsUnavailable as e:
        pytest.skip(str(e))
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    r = run_parity(build_health_checked_nb, release="26.03", from_chroot=True, workdir=tmp_path / "p",
                   settle_timeout=60, after_settle=b_online)
    assert r.ok, r.report()
    assert nb_active(tmp_path / "p" / "ours" / "nb.db") == nb_active(tmp_path / "p" / "ref" / "nb.db") == {"g": ["nfb"]}
