"""26.03's template load balancers (behaviours ``template_lb_backends_each`` and
``template_vip_ip_input``; parity in tests/parity/test_lb_templates.py), kept incrementally
(``--check-incremental=1``): a template load balancer on a switch, a gateway router and a
distributed router with a ``nat-addresses=router`` peer has its VIPs and backends changed (mixed
explicit and template backends, a bad backend, an IPv6 VIP without a port); after each change SB
equals what a fresh run writes, and the routers' lr_in_ip_input flows for the template VIPs follow."""

from __future__ import annotations

import pytest
from incremental_2603 import flow_matches, start_checked

from ovn_northd_py.devtools.testing import mismatches
from ovn_northd_py.parity.faults import assert_converged

pytestmark = pytest.mark.releases("26.03")


def _ip_input(env) -> set[str]:
    return {m for m in flow_matches(env, "external_ids:stage-name=lr_in_ip_input", "priority=100", 'actions="next;"')
            if "^" in m}


def test_template_lb_vips_and_backends_change(env, started) -> None:
    env.nbctl("ls-add", "s0", "--", "lsp-add", "s0", "p0",
              "--", "lr-add", "gr", "--", "set", "logical_router", "gr", "options:chassis=hv1",
              "--", "lrp-add", "gr", "gr-p", "02:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64",
              "--", "lsp-add", "s0", "s0-gr", "--", "lsp-set-type", "s0-gr", "router",
              "--", "lsp-set-addresses", "s0-gr", "router", "--", "lsp-set-options", "s0-gr", "router-port=gr-p",
              "--", "lr-add", "dr", "--", "lrp-add", "dr", "dr-p", "02:00:00:00:02:01", "172.16.0.1/24",
              "--", "lrp-set-gateway-chassis", "dr-p", "hv1", "10",
              "--", "ls-add", "pub", "--", "lsp-add", "pub", "pub-dr", "--", "lsp-set-type", "pub-dr", "router",
              "--", "lsp-set-addresses", "pub-dr", "router",
              "--", "lsp-set-options", "pub-dr", "router-port=dr-p", "nat-addresses=router")
    d, _ = start_checked(env, started)
    lb = env.nbctl("create", "load_balancer", "name=t", "protocol=tcp",
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
        env.nbctl(*step, wait="sb")
        assert _ip_input(env) == want[i], i
        assert_converged(env.nb.remote, env.sb.remote, env.workdir / f"step{i}", release=env.release)
        assert not mismatches(d), mismatches(d)[0]
