"""26.03's template load balancers (behaviours ``template_lb_backends_each`` and
``template_vip_ip_input``; parity in tests/parity/test_lb_templates.py), kept incrementally
(``--check-incremental=1``): a template load balancer on a switch, a gateway router and a
distributed router with a ``nat-addresses=router`` peer has its VIPs and backends changed (mixed
explicit and template backends, a bad backend, an IPv6 VIP without a port); after each change SB
equals what a fresh run writes, and the routers' lr_in_ip_input flows for the template VIPs follow."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import mismatches
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")


def _ip_input(sb: OvsdbServer) -> set[str]:
    out = subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--timeout=10", "--bare", "--columns=match", "find",
                          "Logical_Flow", "external_ids:stage-name=lr_in_ip_input", "priority=100",
                          'actions="next;"'], check=True, capture_output=True, text=True).stdout
    return {m for m in out.splitlines() if "^" in m}


def test_template_lb_vips_and_backends_change(tmp_path: Path, ovn_release) -> None:
    nb = OvsdbServer(tmp_path, "nb", ovn_release.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", ovn_release.sb_schema).start()
    d: OurNorthd | None = None
    try:
        nbctl(nb.remote, "ls-add", "s0", "--", "lsp-add", "s0", "p0",
              "--", "lr-add", "gr", "--", "set", "logical_router", "gr", "options:chassis=hv1",
              "--", "lrp-add", "gr", "gr-p", "02:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64",
              "--", "lsp-add", "s0", "s0-gr", "--", "lsp-set-type", "s0-gr", "router",
              "--", "lsp-set-addresses", "s0-gr", "router", "--", "lsp-set-options", "s0-gr", "router-port=gr-p",
              "--", "lr-add", "dr", "--", "lrp-add", "dr", "dr-p", "02:00:00:00:02:01", "172.16.0.1/24",
              "--", "lrp-set-gateway-chassis", "dr-p", "hv1", "10",
              "--", "ls-add", "pub", "--", "lsp-add", "pub", "pub-dr", "--", "lsp-set-type", "pub-dr", "router",
              "--", "lsp-set-addresses", "pub-dr", "router",
              "--", "lsp-set-options", "pub-dr", "router-port=dr-p", "nat-addresses=router")
        d = OurNorthd(tmp_path, nb.remote, sb.remote, extra_args=["--check-incremental=1"]).start()
        lb = nbctl(nb.remote, "create", "load_balancer", "name=t", "protocol=tcp",
                   'vips:"^vip:^port"="10.0.0.9:80,^b1:^bp"', "options:template=true",
                   "options:address-family=ipv4", "options:affinity_timeout=30").strip()
        steps = [
            ["ls-lb-add", "s0", "t", "--", "lr-lb-add", "gr", "t", "--", "lr-lb-add", "dr", "t"],
            ["set", "load_balancer", lb, 'vips:"^vip:^port"="notanip:80,^b1"'],
            ["set", "load_balancer", lb, 'vips:"^vip2"="10.0.0.9,^b2"'],
            ["set", "load_balancer", lb, "options:address-family=ipv6", 'vips={"^vip6"="fd00::9,^b6"}'],
            ["lr-lb-del", "gr", "t"],
        ]
        want = [{"ip4.dst == ^vip"}, set(), {"ip4.dst == ^vip2"}, {"ip6.dst == ^vip6"}, {"ip6.dst == ^vip6"}]
        for i, step in enumerate(steps):
            nbctl(nb.remote, *step, wait="sb")
            assert _ip_input(sb) == want[i], i
            assert_converged(nb.remote, sb.remote, tmp_path / f"step{i}", release=ovn_release)
            assert not mismatches(d), mismatches(d)[0]
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()
