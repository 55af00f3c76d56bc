"""26.03's NB_Global ``options:acl_ct_translation=true`` (and a switch's
``other_config:enable-stateless-acl-with-lb=true``, load balancers' ``options:distributed``) under ``--check-incremental=1`` (NB 7.18 / SB
21.8 servers, the 26.03 profile): ACLs come, change and go and switches become stateful or
stateless with the option on; each change equal to a full recompute without recomputing the lflow
node (the option itself is an NB_Global option: a change of it recomputes), the tags in SB."""

from __future__ import annotations

import pytest
from incremental_2603 import assert_step_checked, start_checked

from ovn_northd_py.devtools.testing import node_runs, ovsdb_select
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")


def _tagged(sb_remote: str) -> int:  # (with _uuid: select drops duplicate rows)
    return sum(1 for row in ovsdb_select(sb_remote, "OVN_Southbound", "Logical_Flow", ["_uuid", "tags"])
               if ["acl_ct_translation", "true"] in row["tags"][1])


def test_acl_ct_translation_changes_incremental_equals_recompute(env, started) -> None:
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm2",
              "--", "set", "NB_Global", ".", "options:acl_ct_translation=true",
              "--", "set", "logical_switch", "sw1", "other_config:enable-stateless-acl-with-lb=true")
    d, port = start_checked(env, started)
    env.sync()
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
        env.nbctl(*step)
        assert_step_checked(env, d, i)
        counts.append(_tagged(env.sb.remote))
    assert node_runs(port, "lflow", "recompute") == before
    assert counts[0] == 0 and counts[1] > 0 and counts[4] > counts[3] and counts[5] < counts[4], counts
    assert_converged(env.nb.remote, env.sb.remote, env.workdir / "fresh", release=env.release)
