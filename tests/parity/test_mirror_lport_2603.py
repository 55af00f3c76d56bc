"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for logical-port mirrors (NB
7.18: Mirror ``type=lport`` whose sink is a switch port, ``Mirror_Rule``): the ``mp-<switch>-<sink>``
Port_Binding rows (type ``mirror``, ``mirror_port``), their place in the flood groups, the
``ls_in_mirror`` / ``ls_out_mirror`` flows of the mirrored ports with their rules and the
``ls_out_pre_acl`` flows of the mirror ports.  Skipped without the sid chroot."""

from __future__ import annotations

from test_network_function_2603 import _parity_2603

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import nbctl


def build_lport_mirrors_nb(remote: str) -> None:
    """A mirror of both directions with a mirror and a skip rule, one per direction, a sink on
    another switch, a sink that is no port, and a gre mirror beside an lport one on a port."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2",
          "--", "lsp-add", "sw0", "mon", "--", "lsp-add", "sw0", "vm4",
          "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm3", "--", "lsp-add", "sw1", "mon1")
    ops = NbOps()
    r1 = ops.insert("Mirror_Rule", {"match": "ip4.dst == 10.0.0.2", "action": "mirror", "priority": 100})
    r2 = ops.insert("Mirror_Rule", {"match": "tcp", "action": "skip", "priority": 200})
    m1 = ops.insert("Mirror", {"name": "m1", "type": "lport", "filter": "both", "sink": "mon", "index": 0,
                               "mirror_rules": ops.set(r1, r2)})
    m2 = ops.insert("Mirror", {"name": "m2", "type": "lport", "filter": "from-lport", "sink": "mon", "index": 0})
    m3 = ops.insert("Mirror", {"name": "m3", "type": "lport", "filter": "to-lport", "sink": "mon1", "index": 0})
    m4 = ops.insert("Mirror", {"name": "m4", "type": "gre", "filter": "both", "sink": "1.1.1.1", "index": 5})
    m5 = ops.insert("Mirror", {"name": "m5", "type": "lport", "filter": "both", "sink": "nosuch", "index": 0})
    for port, ms in (("vm1", [m1]), ("vm2", [m2, m4]), ("vm3", [m3]), ("vm4", [m5, m3])):
        ops.ops.append({"op": "mutate", "table": "Logical_Switch_Port", "where": [["name", "==", port]],
                        "mutations": [["mirror_rules", "insert", ops.set(*ms)]]})
    ops.transact(remote)


def test_26_03_lport_mirrors_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_lport_mirrors_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    ports = {str(row["logical_port"]): str(row["type"]) for row in r.ref_dump.rows("Port_Binding").values()}
    assert {p for p, t in ports.items() if t == "mirror"} == {"mp-sw0-mon", "mp-sw0-mon1", "mp-sw1-mon1"}, ports
