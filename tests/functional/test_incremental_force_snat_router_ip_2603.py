"""26.03's lr_in_unsnat flows of ``lb_force_snat_ip=router_ip`` (behaviour
``force_snat_router_ip_unsnat_all``; parity in tests/parity/test_router_port_options.py): one per
network of a gateway router's peered port, following its networks and the option, each incremental
run equal to a full recompute (``--check-incremental=1``)."""

from __future__ import annotations

import subprocess

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, mismatches

pytestmark = pytest.mark.releases("26.03")


def _unsnat(sb: OvsdbServer) -> set[str]:
    out = subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--timeout=10", "--bare", "--columns=match", "find",
                          "Logical_Flow", "external_ids:stage-name=lr_in_unsnat", "priority=110"],
                         check=True, capture_output=True, text=True).stdout
    return set(out.splitlines()) - {""}


def test_unsnat_follows_port_networks(tmp_path, ovn_release) -> None:
    nb = OvsdbServer(tmp_path, "nb", ovn_release.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", ovn_release.sb_schema).start()
    port = free_port()
    d = OurNorthd(tmp_path, nb.remote, sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        nbctl(nb.remote, "ls-add", "int", "--", "lr-add", "g1",
              "--", "set", "logical_router", "g1", "options:chassis=hv1", "options:lb_force_snat_ip=router_ip",
              "--", "lrp-add", "g1", "g1-int", "02:00:00:00:10:02", "10.1.0.1/24",
              "--", "lsp-add", "int", "int-g1", "--", "lsp-set-type", "int-g1", "router",
              "--", "lsp-set-addresses", "int-g1", "router", "--", "lsp-set-options", "int-g1", "router-port=g1-int",
              wait="sb")
        assert _unsnat(sb) == {'inport == "g1-int" && ip4.dst == 10.1.0.1'}
        nbctl(nb.remote, "set", "logical_router_port", "g1-int",
              'networks="10.1.0.1/24","10.2.0.1/24","fd01::1/64","fd02::1/64"', wait="sb")
        assert _unsnat(sb) == {f'inport == "g1-int" && {a}' for a in
                               ("ip4.dst == 10.1.0.1", "ip4.dst == 10.2.0.1", "ip6.dst == fd01::1",
                                "ip6.dst == fd02::1")}
        nbctl(nb.remote, "set", "logical_router_port", "g1-int", 'networks="10.2.0.1/24"', wait="sb")
        assert _unsnat(sb) == {'inport == "g1-int" && ip4.dst == 10.2.0.1'}
        nbctl(nb.remote, "remove", "logical_router", "g1", "options", "lb_force_snat_ip", wait="sb")
        assert _unsnat(sb) == set()
        nbctl(nb.remote, "sync", wait="sb")
        assert metric(port, "ovn_northd_py_incremental_checks_total") >= 3
        assert mismatches(d) == []
    finally:
        d.stop()
        sb.stop()
        nb.stop()
