"""26.03's switch-port options ``receive_multicast`` and ``exclude-router-ips-from-garp`` under
``--check-incremental=1`` (NB 7.18 / SB 21.8 servers, the 26.03 profile): toggled on and off,
each change equal to a full recompute, the multicast ones without recomputing the lflow node (a
router-type port's options on a gateway port's switch recompute: behaviour centralized_dgp_peer)."""

from __future__ import annotations

import pytest
from incremental_2603 import assert_step_checked, start_checked

from ovn_northd_py.devtools.testing import node_runs
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")


def build(env) -> None:
    """A snooping switch with unknown-address ports, a gateway router's public switch."""
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "u1", "--", "lsp-set-addresses", "u1", "unknown",
              "--", "lsp-add", "sw0", "u2", "--", "lsp-set-addresses", "u2", "unknown",
              "--", "lsp-add", "sw0", "u3", "--", "lsp-set-addresses", "u3", "unknown",
              "--", "set", "logical_switch", "sw0", "other_config:mcast_snoop=true",
              "--", "lr-add", "lr0", "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:01:01", "172.16.0.1/24",
              "--", "lrp-set-gateway-chassis", "lrp0", "hv1",
              "--", "lr-nat-add", "lr0", "dnat_and_snat", "172.16.0.10", "10.0.0.10",
              "--", "ls-add", "pub", "--", "lsp-add", "pub", "pub-lr0", "--", "lsp-set-type", "pub-lr0", "router",
              "--", "lsp-set-addresses", "pub-lr0", "router",
              "--", "lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router")


def test_lsp_option_changes_incremental_equals_recompute(env, started) -> None:
    build(env)
    d, port = start_checked(env, started)
    env.sync()
    steps = [
        ["lsp-set-options", "u3", "mcast_flood=true", "receive_multicast=false"],
        ["lsp-set-options", "u2", "receive_multicast=false"],
        ["lsp-set-options", "u3", "mcast_flood=true"],
        ["lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router", "exclude-router-ips-from-garp=true"],
        ["lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router"],
        ["lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router", "exclude-router-ips-from-garp=true"],
    ]
    for i, step in enumerate(steps):
        before = node_runs(port, "lflow", "recompute")
        env.nbctl(*step)
        assert_step_checked(env, d, i)
        assert i >= 3 or node_runs(port, "lflow", "recompute") == before, f"step {i} recomputed"
    assert_converged(env.nb.remote, env.sb.remote, env.workdir / "fresh", release=env.release)
