"""26.03's NB_Global ``options:acl_ct_translation=true`` (and a switch's
``other_config:enable-stateless-acl-with-lb=true``, load balancers' ``options:distributed``) under ``--check-incremental=1`` (NB 7.18 / SB
21.8 servers, the 26.03 draft profile): ACLs come, change and go and switches become stateful or
stateless with the option on; each change equal to a full recompute without recomputing the lflow
node (the option itself is an NB_Global option: a change of it recomputes), the tags in SB."""

from __future__ import annotations

from pathlib import Path

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, mismatches, node_runs, ovsdb_select
from ovn_northd_py.parity.faults import assert_converged
from ovn_northd_py.release import RELEASES


def _tagged(sb_remote: str) -> int:  # (with _uuid: select drops duplicate rows)
    return sum(1 for row in ovsdb_select(sb_remote, "OVN_Southbound", "Logical_Flow", ["_uuid", "tags"])
               if ["acl_ct_translation", "true"] in row["tags"][1])


def test_acl_ct_translation_changes_incremental_equals_recompute(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    rel = RELEASES["26.03"]
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d: OurNorthd | None = None
    try:
        r = nb.remote
        nbctl(r, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm2",
              "--", "set", "NB_Global", ".", "options:acl_ct_translation=true",
              "--", "set", "logical_switch", "sw1", "other_config:enable-stateless-acl-with-lb=true")
        port = free_port()
        d = OurNorthd(tmp_path, r, sb.remote,
                      extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
        nbctl(r, "sync", wait="sb", timeout=30)
        before = node_runs(port, "lflow", "recompute")
        steps = [
            ["acl-add", "sw0", "to-lport", "10", "tcp", "allow"],  # stateless switch: no tag
            ["acl-add", "sw0", "from-lport", "11", "udp", "allow-related"],  # stateful now: both tagged
            ["acl-add", "sw0", "to-lport", "12", "icmp4", "allow-stateless"],
            ["acl-add", "sw1", "to-lport", "13", "ip4", "drop"],
            ["lb-add", "lb0", "30.0.0.1:80", "10.0.0.1:8080", "tcp", "--", "ls-lb-add", "sw1", "lb0"],
            ["acl-del", "sw0", "from-lport", "11", "udp"],  # stateless again
            # sw1 has enable-stateless-acl-with-lb: load balancers and stateless ACLs come and go
            ["acl-add", "sw1", "from-lport", "14", "tcp", "allow-stateless"],
            ["lb-add", "lb1", "30.0.0.2:443", "10.0.0.2:8443", "tcp", "--", "ls-lb-add", "sw1", "lb1"],
            ["ls-lb-del", "sw1", "lb0"],
            ["ls-lb-del", "sw1", "lb1"],
            # distributed load balancers (options:distributed, ip_port_mappings)
            ["set", "load_balancer", "lb1", "options:distributed=true", "ip_port_mappings:10.0.0.2=vm2",
             "--", "ls-lb-add", "sw0", "lb1"],
            ["set", "load_balancer", "lb1", "ip_port_mappings:10.0.0.2=vm1"],
            ["remove", "load_balancer", "lb1", "options", "distributed"],
        ]
        counts = []
        for i, step in enumerate(steps):
            nbctl(r, *step)
            nbctl(r, "sync", wait="sb", timeout=30)
            bad = mismatches(d)
            assert not bad, f"step {i}: {bad[0].get('differences')}"
            counts.append(_tagged(sb.remote))
        assert node_runs(port, "lflow", "recompute") == before
        assert counts[0] == 0 and counts[1] > 0 and counts[4] > counts[3] and counts[5] < counts[4], counts
        assert_converged(r, sb.remote, tmp_path / "fresh", release=rel)
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()
