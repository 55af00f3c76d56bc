"""26.03's conntrack skip of ``switch``-type ports (behaviour ``switch_port_skips_conntrack``;
parity in tests/parity/test_switch_peer_ports.py): ``ls_{in,out}_pre_lb`` 110 always,
``ls_{in,out}_pre_acl`` 110 once the switch has a stateful ACL, gone when the port stops being of
type ``switch``; every incremental run equals a full recompute (``--check-incremental=1``)."""

from __future__ import annotations

import subprocess

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, mismatches

pytestmark = pytest.mark.releases("26.03")


def _skips(sb: OvsdbServer, stage: str) -> set[str]:
    out = subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--timeout=10", "--bare", "--columns=match", "find",
                          "Logical_Flow", f"external_ids:stage-name={stage}", "priority=110", 'actions="next;"'],
                         check=True, capture_output=True, text=True).stdout
    return {m for m in out.splitlines() if m.startswith("ip && ")}


def test_switch_ports_skip_conntrack_as_acls_lbs_and_types_change(tmp_path, ovn_release) -> None:
    nb = OvsdbServer(tmp_path, "nb", ovn_release.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", ovn_release.sb_schema).start()
    port = free_port()
    d = OurNorthd(tmp_path, nb.remote, sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        nbctl(nb.remote, "ls-add", "S1", "--", "ls-add", "S2", "--", "lsp-add", "S1", "S1-vm", "--",
              "lsp-set-addresses", "S1-vm", "50:54:00:00:00:01 10.0.0.1", wait="sb")
        nbctl(nb.remote, "lsp-add", "S1", "S1-S2", "--", "lsp-add", "S2", "S2-S1",
              "--", "set", "logical_switch_port", "S1-S2", "type=switch", "options:peer=S2-S1",
              "--", "set", "logical_switch_port", "S2-S1", "type=switch", "options:peer=S1-S2", wait="sb")
        assert 'ip && inport == "S1-S2"' in _skips(sb, "ls_in_pre_lb")
        assert 'ip && outport == "S2-S1"' in _skips(sb, "ls_out_pre_lb")
        assert not _skips(sb, "ls_in_pre_acl")
        nbctl(nb.remote, "acl-add", "S1", "from-lport", "100", "ip4", "allow-related", wait="sb")
        assert _skips(sb, "ls_in_pre_acl") == {'ip && inport == "S1-S2"'}
        nbctl(nb.remote, "lb-add", "lb0", "10.0.0.10:80", "10.0.0.3:80", "--", "ls-lb-add", "S2", "lb0", wait="sb")
        assert 'ip && inport == "S2-S1"' in _skips(sb, "ls_in_pre_lb")
        nbctl(nb.remote, "set", "logical_switch_port", "S1-S2", "type=\"\"", wait="sb")
        assert not _skips(sb, "ls_in_pre_acl")
        assert 'ip && inport == "S1-S2"' not in _skips(sb, "ls_in_pre_lb")
        nbctl(nb.remote, "acl-del", "S1", "--", "ls-lb-del", "S2", "lb0", wait="sb")
        assert 'ip && outport == "S2-S1"' in _skips(sb, "ls_out_pre_lb")
        nbctl(nb.remote, "sync", wait="sb")
        assert metric(port, "ovn_northd_py_incremental_checks_total") >= 4
        assert mismatches(d) == []
    finally:
        d.stop()
        sb.stop()
        nb.stop()
