"""26.03's conntrack skip of ``switch``-type ports (behaviour ``switch_port_skips_conntrack``;
parity in tests/parity/test_switch_peer_ports.py): ``ls_{in,out}_pre_lb`` 110 always,
``ls_{in,out}_pre_acl`` 110 once the switch has a stateful ACL, gone when the port stops being of
type ``switch``; every incremental run equals a full recompute (``--check-incremental=1``)."""

from __future__ import annotations

import pytest
from incremental_2603 import flow_matches, start_checked

from ovn_northd_py.devtools.testing import metric, mismatches

pytestmark = pytest.mark.releases("26.03")


def _skips(env, stage: str) -> set[str]:
    return {m for m in flow_matches(env, f"external_ids:stage-name={stage}", "priority=110", 'actions="next;"')
            if m.startswith("ip && ")}


def test_switch_ports_skip_conntrack_as_acls_lbs_and_types_change(env, started) -> None:
    d, port = start_checked(env, started)
    env.nbctl("ls-add", "S1", "--", "ls-add", "S2", "--", "lsp-add", "S1", "S1-vm", "--",
              "lsp-set-addresses", "S1-vm", "50:54:00:00:00:01 10.0.0.1", wait="sb")
    env.nbctl("lsp-add", "S1", "S1-S2", "--", "lsp-add", "S2", "S2-S1",
              "--", "set", "logical_switch_port", "S1-S2", "type=switch", "options:peer=S2-S1",
              "--", "set", "logical_switch_port", "S2-S1", "type=switch", "options:peer=S1-S2", wait="sb")
    assert 'ip && inport == "S1-S2"' in _skips(env, "ls_in_pre_lb")
    assert 'ip && outport == "S2-S1"' in _skips(env, "ls_out_pre_lb")
    assert not _skips(env, "ls_in_pre_acl")
    env.nbctl("acl-add", "S1", "from-lport", "100", "ip4", "allow-related", wait="sb")
    assert _skips(env, "ls_in_pre_acl") == {'ip && inport == "S1-S2"'}
    env.nbctl("lb-add", "lb0", "10.0.0.10:80", "10.0.0.3:80", "--", "ls-lb-add", "S2", "lb0", wait="sb")
    assert 'ip && inport == "S2-S1"' in _skips(env, "ls_in_pre_lb")
    env.nbctl("set", "logical_switch_port", "S1-S2", "type=\"\"", wait="sb")
    assert not _skips(env, "ls_in_pre_acl")
    assert 'ip && inport == "S1-S2"' not in _skips(env, "ls_in_pre_lb")
    env.nbctl("acl-del", "S1", "--", "ls-lb-del", "S2", "lb0", wait="sb")
    assert 'ip && outport == "S2-S1"' in _skips(env, "ls_out_pre_lb")
    env.sync()
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 4
    assert mismatches(d) == []
