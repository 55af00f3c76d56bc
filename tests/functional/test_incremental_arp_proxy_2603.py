"""26.03's unicast ARP/NS bypass on a switch with an ``arp_proxy`` router port (behaviour
``arp_proxy_unicast_next``; parity in tests/parity/test_ls_services.py): the proxy turned on and
off, ports added and readdressed, one transaction at a time: every incremental run equals a full
recompute (``--check-incremental=1``), and the bypass flows follow."""

from __future__ import annotations

import pytest
from incremental_2603 import flow_matches, start_checked

from ovn_northd_py.devtools.testing import metric, mismatches

pytestmark = pytest.mark.releases("26.03")

BYPASS = "arp.tpa == 10.0.0.11 && arp.op == 1 && eth.dst == 00:00:00:00:00:11"


def _has_bypass(env, match: str = BYPASS) -> bool:
    return match in flow_matches(env, "priority=50", "actions=\"next;\"")


def test_arp_proxy_unicast_bypass_follows_the_proxy_and_the_ports(env, started) -> None:
    d, port = start_checked(env, started)
    env.nbctl("ls-add", "s", "--", "lr-add", "r", "--",
              "lrp-add", "r", "r-s", "00:00:00:00:ff:01", "10.0.0.1/24", "--",
              "lsp-add", "s", "s-r", "--", "lsp-set-type", "s-r", "router", "--",
              "lsp-set-addresses", "s-r", "router", "--", "lsp-set-options", "s-r", "router-port=r-s", "--",
              "lsp-add", "s", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:11 10.0.0.11 fd00::11",
              wait="sb")
    assert not _has_bypass(env)
    env.nbctl("lsp-set-options", "s-r", "router-port=r-s", "arp_proxy=10.0.0.100", wait="sb")
    assert _has_bypass(env)
    assert _has_bypass(env, "nd_ns && ip6.dst == fd00::11 && nd.target == fd00::11")
    env.nbctl("lsp-add", "s", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:12 10.0.0.12", wait="sb")
    assert _has_bypass(env, "arp.tpa == 10.0.0.12 && arp.op == 1 && eth.dst == 00:00:00:00:00:12")
    env.nbctl("lsp-set-addresses", "vm2", "00:00:00:00:00:13 10.0.0.13", wait="sb")
    assert _has_bypass(env, "arp.tpa == 10.0.0.13 && arp.op == 1 && eth.dst == 00:00:00:00:00:13")
    env.nbctl("lsp-set-options", "s-r", "router-port=r-s", wait="sb")
    assert not _has_bypass(env)
    env.sync()
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 4
    assert mismatches(d) == []
