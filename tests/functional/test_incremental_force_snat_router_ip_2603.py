"""26.03's lr_in_unsnat flows of ``lb_force_snat_ip=router_ip`` (behaviour
``force_snat_router_ip_unsnat_all``; parity in tests/parity/test_router_port_options.py): one per
network of a gateway router's peered port, following its networks and the option, each incremental
run equal to a full recompute (``--check-incremental=1``)."""

from __future__ import annotations

import pytest
from incremental_2603 import flow_matches, start_checked

from ovn_northd_py.devtools.testing import metric, mismatches

pytestmark = pytest.mark.releases("26.03")


def _unsnat(env) -> set[str]:
    return set(flow_matches(env, "external_ids:stage-name=lr_in_unsnat", "priority=110")) - {""}


def test_unsnat_follows_port_networks(env, started) -> None:
    d, port = start_checked(env, started)
    env.nbctl("ls-add", "int", "--", "lr-add", "g1",
              "--", "set", "logical_router", "g1", "options:chassis=hv1", "options:lb_force_snat_ip=router_ip",
              "--", "lrp-add", "g1", "g1-int", "02:00:00:00:10:02", "10.1.0.1/24",
              "--", "lsp-add", "int", "int-g1", "--", "lsp-set-type", "int-g1", "router",
              "--", "lsp-set-addresses", "int-g1", "router", "--", "lsp-set-options", "int-g1", "router-port=g1-int",
              wait="sb")
    assert _unsnat(env) == {'inport == "g1-int" && ip4.dst == 10.1.0.1'}
    env.nbctl("set", "logical_router_port", "g1-int",
              'networks="10.1.0.1/24","10.2.0.1/24","fd01::1/64","fd02::1/64"', wait="sb")
    assert _unsnat(env) == {f'inport == "g1-int" && {a}' for a in
                            ("ip4.dst == 10.1.0.1", "ip4.dst == 10.2.0.1", "ip6.dst == fd01::1",
                             "ip6.dst == fd02::1")}
    env.nbctl("set", "logical_router_port", "g1-int", 'networks="10.2.0.1/24"', wait="sb")
    assert _unsnat(env) == {'inport == "g1-int" && ip4.dst == 10.2.0.1'}
    env.nbctl("remove", "logical_router", "g1", "options", "lb_force_snat_ip", wait="sb")
    assert _unsnat(env) == set()
    env.sync()
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 3
    assert mismatches(d) == []
