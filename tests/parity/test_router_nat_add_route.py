"""Parity for NAT ``options:add_route=true`` (man ovn-nb NAT options, observed on the reference).

Router R has a distributed gateway port R-pub on switch ``pub`` (and, in the second case, another one,
R-pub2, on ``pub2``); neighbours on those switches: gateway routers (N1, G, N4) and a plain router
(N2, two ports); N3 on an unrelated switch.  R's rules: dnat / dnat_and_snat with add_route, one
distributed (external_mac), one IPv6, one snat, one outside R-pub's network, rules without the option
or with ``false``, one naming R-pub2 as ``gateway_port``; G (a gateway router) has an add_route rule of
its own.  The neighbours get /32 routes (priority 98) and, gateway routers only, ARP bindings
(``lr_in_arp_resolve`` 100); routing and ARP-resolution stages must equal the reference's.
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl

STAGES = ("lr_in_ip_routing", "lr_in_arp_resolve", "lr_in_ip_input", "lr_in_dnat", "lr_in_unsnat", "lr_out_snat",
          "lr_out_undnat", "lr_in_gw_redirect", "lr_in_admission")


def _rport(sw: str, name: str, lrp: str) -> list[list[str]]:
    return [["lsp-add", sw, name], ["lsp-set-type", name, "router"], ["lsp-set-addresses", name, "router"],
            ["lsp-set-options", name, f"router-port={lrp}"]]


def _txn(remote: str, *commands: list[str]) -> None:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + c
    nbctl(remote, *args)


def _nat(remote: str, router: str, *cols: str, gateway_port: str | None = None) -> None:
    pre = ["--id=@p", "get", "logical_router_port", gateway_port, "--"] if gateway_port else []
    nbctl(remote, *pre, "--id=@n", "create", "nat", *cols, *(["gateway_port=@p"] if gateway_port else []),
          "--", "add", "logical_router", router, "nat", "@n")


def build_add_route_nb(remote: str, two_dgps: bool) -> None:
    _txn(remote,
         ["ls-add", "pub"], ["ls-add", "int"], ["lsp-add", "int", "vm1"],
         ["lsp-set-addresses", "vm1", "00:00:00:00:01:05 10.0.0.5"],
         ["lr-add", "R"], ["lrp-add", "R", "R-pub", "02:00:00:00:00:01", "172.16.0.1/24", "2001:db8::1/64"],
         ["lrp-set-gateway-chassis", "R-pub", "hv1", "10"],
         ["lrp-add", "R", "R-int", "02:00:00:00:00:02", "10.0.0.1/24", "fd00::1/64"],
         *_rport("pub", "pub-R", "R-pub"), *_rport("int", "int-R", "R-int"),
         ["lr-add", "N1"], ["lrp-add", "N1", "N1-pub", "02:00:00:00:01:01", "172.16.0.2/24", "10.99.0.2/24",
                            "2001:db8::2/64"],
         ["set", "logical_router", "N1", "options:chassis=hv2"], *_rport("pub", "pub-N1", "N1-pub"),
         ["lr-add", "N2"], ["lrp-add", "N2", "N2-pub", "02:00:00:00:02:01", "172.16.0.3/24"],
         *_rport("pub", "pub-N2", "N2-pub"), ["lrp-add", "N2", "N2-x", "02:00:00:00:02:02", "192.168.5.1/24"],
         ["ls-add", "other"], ["lr-add", "N3"], ["lrp-add", "N3", "N3-o", "02:00:00:00:03:01", "172.17.0.3/24"],
         *_rport("other", "other-N3", "N3-o"),
         ["lr-add", "G"], ["set", "logical_router", "G", "options:chassis=hv3"],
         ["lrp-add", "G", "G-pub", "02:00:00:00:04:01", "172.16.0.4/24"], *_rport("pub", "pub-G", "G-pub"))
    if two_dgps:
        _txn(remote, ["ls-add", "pub2"], ["lrp-add", "R", "R-pub2", "02:00:00:00:00:03", "172.18.0.1/24"],
             ["lrp-set-gateway-chassis", "R-pub2", "hv1", "10"], *_rport("pub2", "pub2-R", "R-pub2"),
             ["lr-add", "N4"], ["set", "logical_router", "N4", "options:chassis=hv7"],
             ["lrp-add", "N4", "N4-p", "02:00:00:00:05:01", "172.18.0.4/24"], *_rport("pub2", "pub2-N4", "N4-p"))
        _nat(remote, "R", "type=dnat", "external_ip=172.18.0.50", "logical_ip=10.0.0.50", "options:add_route=true")
        _nat(remote, "R", "type=dnat", "external_ip=172.16.0.51", "logical_ip=10.0.0.51", "options:add_route=true",
             gateway_port="R-pub2")
    _nat(remote, "R", "type=dnat_and_snat", "external_ip=172.16.0.100", "logical_ip=10.0.0.5", "options:add_route=true")
    _nat(remote, "R", "type=dnat", "external_ip=172.16.0.101", "logical_ip=10.0.0.6", "options:add_route=true")
    _nat(remote, "R", "type=snat", "external_ip=172.16.0.102", "logical_ip=10.0.0.0/24", "options:add_route=true")
    _nat(remote, "R", "type=dnat_and_snat", "external_ip=172.16.0.103", "logical_ip=10.0.0.5",
         'external_mac="00:00:00:00:aa:01"', "logical_port=vm1", "options:add_route=true")
    _nat(remote, "R", "type=dnat_and_snat", 'external_ip="2001:db8::100"', 'logical_ip="fd00::5"',
         "options:add_route=true")
    _nat(remote, "R", "type=dnat_and_snat", "external_ip=172.16.0.104", "logical_ip=10.0.0.7")
    _nat(remote, "R", "type=dnat_and_snat", "external_ip=172.16.0.105", "logical_ip=10.0.0.8", "options:add_route=false")
    _nat(remote, "R", "type=dnat_and_snat", "external_ip=172.16.9.106", "logical_ip=10.0.0.9", "options:add_route=true")
    _nat(remote, "G", "type=dnat_and_snat", "external_ip=172.16.0.110", "logical_ip=10.9.0.5", "options:add_route=true")


@pytest.mark.parametrize("two_dgps", [False, True], ids=["one-dgp", "two-dgps"])
def test_nat_add_route_equals_reference(parity_run, two_dgps) -> None:
    r = parity_run(lambda remote: build_add_route_nb(remote, two_dgps))
    assert r.reference.settled and r.ours.settled, r.report()
    assert all(t.ok for t in r.tables.values()), r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in STAGES:
        s = by_stage[name]
        assert not s.missing and not s.extra, f"{name}\n" + r.report()
    assert flows.missing == 0 and flows.extra == 0, r.report()
