"""Parity with the 25.03 reference for NAT on a distributed gateway port in the common zone
(``man ovn-nb`` NB_Global ``options:use_common_zone``; ovn-northd.at "ovn -- LR NAT flows"): the
``ct_snat_in_czone`` / ``flags.loopback`` unSNAT flows, SNAT skipping replies, with a rule's
``allowed_ext_ips`` / ``exempted_ext_ips`` / ``match`` / ``priority``, beside a gateway router;
and a router load balancer's VIP without backends (``drop;`` without the skip_snat / force_snat
flag)."""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.testing import ovsdb_transact


def _uuid(remote: str, table: str, cond: str) -> str:
    return nbctl(remote, "--bare", "--columns=_uuid", "find", table, cond).split()[0]


def build_common_zone_nb(remote: str, common_zone: bool) -> None:
    """lr0: DGP lr0-public (chassis gw1), snat / dnat_and_snat (one distributed, one stateless) /
    dnat rules and a load balancer; gw: gateway router with NAT and the same load balancer;
    lb-none: a VIP without backends, skip_snat, on gw (lb_force_snat_ip=router_ip)."""
    nbctl(remote, "ls-add", "sw0", "--", "lb-add", "lb0", "10.0.0.10:80", "10.0.0.4:8080",
          "--", "ls-lb-add", "sw0", "lb0", "--", "lr-add", "lr0",
          "--", "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24",
          "--", "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router",
          "--", "lsp-set-addresses", "sw0-lr0", "00:00:00:00:ff:01",
          "--", "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0",
          "--", "ls-add", "public", "--", "lrp-add", "lr0", "lr0-public", "00:00:00:00:ff:02", "172.168.0.10/24",
          "--", "lrp-set-gateway-chassis", "lr0-public", "gw1",
          "--", "lsp-add", "public", "public-lr0", "--", "lsp-set-type", "public-lr0", "router",
          "--", "lsp-set-addresses", "public-lr0", "router",
          "--", "lsp-set-options", "public-lr0", "router-port=lr0-public",
          "--", "lsp-add", "sw0", "sw0-p5")
    for nat in (["lr0", "snat", "172.168.0.10", "10.0.0.0/24"],
                ["lr0", "dnat_and_snat", "172.168.0.20", "10.0.0.3"],
                ["lr0", "snat", "172.168.0.30", "10.0.0.10"],
                ["lr0", "dnat", "172.168.0.40", "10.0.0.40"],
                ["lr0", "dnat_and_snat", "172.168.0.50", "10.0.0.5", "sw0-p5", "f0:00:00:00:00:05"]):
        nbctl(remote, "lr-nat-add", *nat)
    nbctl(remote, "--stateless", "lr-nat-add", "lr0", "dnat_and_snat", "172.168.0.60", "10.0.0.6")
    nbctl(remote, "lr-lb-add", "lr0", "lb0", "--", "lr-add", "gw",
          "--", "set", "logical_router", "gw", "options:chassis=gw1", "options:lb_force_snat_ip=router_ip",
          "--", "lrp-add", "gw", "gw-p", "00:00:00:00:ff:03", "172.168.0.1/24",
          "--", "lr-nat-add", "gw", "snat", "172.168.0.1", "10.1.0.0/24",
          "--", "lr-nat-add", "gw", "dnat_and_snat", "172.168.0.2", "10.1.0.2", "--", "lr-lb-add", "gw", "lb0",
          "--", "create", "address_set", "name=ext", 'addresses="1.1.1.1"')
    nbctl(remote, "create", "load_balancer", "name=lb-none", "options:reject=false", "options:event=false",
          "options:skip_snat=true", 'vips:"172.168.10.30"=""', "protocol=tcp")
    nbctl(remote, "lr-lb-add", "gw", "lb-none")
    aset = _uuid(remote, "address_set", "name=ext")
    nbctl(remote, "set", "nat", _uuid(remote, "nat", "external_ip=172.168.0.10"), f"allowed_ext_ips={aset}")
    nbctl(remote, "set", "nat", _uuid(remote, "nat", "external_ip=172.168.0.20"), f"exempted_ext_ips={aset}")
    ovsdb_transact(remote, "OVN_Northbound", {  # 25.03's NAT columns (the host's ovn-nbctl lacks them)
        "op": "update", "table": "NAT", "where": [["_uuid", "==", ["uuid", _uuid(remote, "nat", "external_ip=172.168.0.30")]]],
        "row": {"match": "tcp", "priority": 7}})
    if common_zone:
        nbctl(remote, "set", "nb_global", ".", "options:use_common_zone=true")


@pytest.mark.parametrize("common_zone", [True, False], ids=["common-zone", "separate-zones"])
def test_dgp_nat_in_the_common_zone_equals_reference(parity_2503, common_zone) -> None:
    r = parity_2503(lambda remote: build_common_zone_nb(remote, common_zone), tables=("Logical_Flow",))
    assert r.ok, r.report()
    actions = [str(f["actions"]) for f in r.ref_dump.rows("Logical_Flow").values()]
    assert any("ct_snat_in_czone" in a for a in actions) == common_zone
    assert "drop;" in actions  # lb-none's VIP, without the skip_snat flag
