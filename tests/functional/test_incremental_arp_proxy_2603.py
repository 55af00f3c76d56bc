"""26.03's unicast ARP/NS bypass on a switch with an ``arp_proxy`` router port (behaviour
``arp_proxy_unicast_next``; parity in tests/parity/test_ls_services.py): the proxy turned on and
off, ports added and readdressed, one transaction at a time: every incremental run equals a full
recompute (``--check-incremental=1``), and the bypass flows follow."""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, mismatches

pytestmark = pytest.mark.releases("26.03")

BYPASS = "arp.tpa == 10.0.0.11 && arp.op == 1 && eth.dst == 00:00:00:00:00:11"


def _has_bypass(sb: OvsdbServer, match: str = BYPASS) -> bool:
    out = nbctl_sb(sb, "--bare", "--columns=match", "find", "Logical_Flow", "priority=50", "actions=\"next;\"")
    return match in out.splitlines()


def nbctl_sb(sb: OvsdbServer, *args: str) -> str:
    import subprocess

    return subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--timeout=10", *args], check=True,
                          capture_output=True, text=True).stdout


def test_arp_proxy_unicast_bypass_follows_the_proxy_and_the_ports(tmp_path, ovn_release) -> None:
    nb = OvsdbServer(tmp_path, "nb", ovn_release.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", ovn_release.sb_schema).start()
    port = free_port()
    d = OurNorthd(tmp_path, nb.remote, sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        nbctl(nb.remote, "ls-add", "s", "--", "lr-add", "r", "--",
              "lrp-add", "r", "r-s", "00:00:00:00:ff:01", "10.0.0.1/24", "--",
              "lsp-add", "s", "s-r", "--", "lsp-set-type", "s-r", "router", "--",
              "lsp-set-addresses", "s-r", "router", "--", "lsp-set-options", "s-r", "router-port=r-s", "--",
              "lsp-add", "s", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:11 10.0.0.11 fd00::11",
              wait="sb")
        assert not _has_bypass(sb)
        nbctl(nb.remote, "lsp-set-options", "s-r", "router-port=r-s", "arp_proxy=10.0.0.100", wait="sb")
        assert _has_bypass(sb)
        assert _has_bypass(sb, "nd_ns && ip6.dst == fd00::11 && nd.target == fd00::11")
        nbctl(nb.remote, "lsp-add", "s", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:12 10.0.0.12",
              wait="sb")
        assert _has_bypass(sb, "arp.tpa == 10.0.0.12 && arp.op == 1 && eth.dst == 00:00:00:00:00:12")
        nbctl(nb.remote, "lsp-set-addresses", "vm2", "00:00:00:00:00:13 10.0.0.13", wait="sb")
        assert _has_bypass(sb, "arp.tpa == 10.0.0.13 && arp.op == 1 && eth.dst == 00:00:00:00:00:13")
        nbctl(nb.remote, "lsp-set-options", "s-r", "router-port=r-s", wait="sb")
        assert not _has_bypass(sb)
        nbctl(nb.remote, "sync", wait="sb")
        assert metric(port, "ovn_northd_py_incremental_checks_total") >= 4
        assert mismatches(d) == []
    finally:
        d.stop()
        sb.stop()
        nb.stop()
