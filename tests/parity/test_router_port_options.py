"""Parity with the reference ovn-northd for router-port odds and ends.

* ``options:prefix_delegation`` / ``options:prefix`` of a peered router port become Port_Binding
  ``ipv6_prefix_delegation=true`` / ``ipv6_prefix=true`` (not on unpeered ports);
* a ``virtual`` switch port with an IPv6 ``virtual-ip`` (and ``virtual-parents``) is resolved to
  00:00:00:00:00:00 on the attached router port holding it (``xxreg0 == VIP``), like IPv4 ones;
* router options ``mac_binding_age_threshold`` and ``requested-tnl-key``, a gateway router with
  ``lb_force_snat_ip=router_ip`` and NAT, RAs with ``dhcpv6_stateful``, ``redirect-type=bridged``
  with ``gateway_mtu`` / ``gateway_mtu_bypass`` on a DGP with a floating IP.

Every SB table must be equal.
"""

from __future__ import annotations

from test_router_basics import rport, vif

from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


def test_router_port_options(parity_run):
    nb = nbctl_commands(
        ["ls-add", "ext"], ["ls-add", "int"],
        *vif("ext", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        ["lr-add", "g1"],
        ["set", "logical_router", "g1", "options:chassis=hv1", "options:lb_force_snat_ip=router_ip",
         "options:mac_binding_age_threshold=300", "options:requested-tnl-key=777"],
        ["lrp-add", "g1", "g1-ext", "02:00:00:00:10:01", "172.16.0.10/24", "fd16::10/64"],
        ["lrp-add", "g1", "g1-int", "02:00:00:00:10:02", "10.1.0.1/24", "10.2.0.1/24", "fd01::1/64"],
        ["set", "logical_router_port", "g1-int", "ipv6_ra_configs:address_mode=dhcpv6_stateful",
         "ipv6_ra_configs:send_periodic=true", "ipv6_ra_configs:mtu=1400", 'ipv6_prefix="fd55::/64"',
         "options:prefix_delegation=true", "options:prefix=true"],
        *rport("ext", "ext-g1", "g1-ext"), *rport("int", "int-g1", "g1-int"),
        *vif("int", "vm1", "0a:00:00:00:00:01 10.1.0.31"), *vif("int", "vm2", "0a:00:00:00:00:02 10.1.0.32"),
        *vif("int", "vip", type="virtual", options=["virtual-ip=10.1.0.100", "virtual-parents=vm1,vm2"]),
        *vif("int", "vip6", type="virtual", options=["virtual-ip=fd01::100", "virtual-parents=vm1,vm2"]),
        *vif("int", "vipnop", type="virtual", options=["virtual-ip=10.1.0.101"]),
        ["lr-nat-add", "g1", "snat", "172.16.0.10", "10.1.0.0/24"],
        ["lr-nat-add", "g1", "dnat_and_snat", "172.16.0.50", "10.1.0.31"],
        ["lb-add", "lb1", "172.16.0.60:80", "10.1.0.31:80", "tcp"], ["lr-lb-add", "g1", "lb1"],
        ["lr-add", "d1"],
        ["lrp-add", "d1", "d1-ext", "02:00:00:00:20:01", "172.16.0.20/24"],
        ["lrp-set-gateway-chassis", "d1-ext", "hv1", "20"],
        ["set", "logical_router_port", "d1-ext", "options:redirect-type=bridged", "options:gateway_mtu=1400",
         "options:gateway_mtu_bypass=udp"],
        ["lrp-add", "d1", "d1-int", "02:00:00:00:20:02", "10.3.0.1/24"],
        *rport("ext", "ext-d1", "d1-ext"),
        ["lr-nat-add", "d1", "dnat_and_snat", "172.16.0.70", "10.3.0.5", "vm1", "0a:00:00:00:99:01"],
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-a", "02:00:00:00:30:01", "172.16.0.30/24", "fd16::30/64"],
        ["lrp-add", "r1", "r1-b", "02:00:00:00:30:02", "172.17.0.10/24"],
        ["lrp-add", "r1", "r1-c", "02:00:00:00:30:03", "172.18.0.10/24"],
        ["lrp-set-gateway-chassis", "r1-c", "hv1", "10"],
        ["set", "logical_router_port", "r1-a", "options:prefix_delegation=true", "options:prefix=true"],
        ["set", "logical_router_port", "r1-b", "options:prefix_delegation=true", "options:prefix=false"],
        ["set", "logical_router_port", "r1-c", "options:prefix_delegation=TRUE", "options:prefix=yes"],
        *rport("ext", "ext-r1", "r1-a"),
    )
    r = parity_run(nb)
    assert_parity(r)


def test_lb_force_snat_router_ip_on_ports_with_many_networks(parity_run):
    """``lb_force_snat_ip=router_ip`` on a gateway router whose port has 18 IPv4 and 3 IPv6
    networks (26.03: lr_in_unsnat 110 for each of them, lr_out_snat 110 for the first 16)."""
    nets = [f"10.{i}.0.1/24" for i in range(1, 19)] + ["fd01::1/64", "fd02::1/64", "fd03::1/64"]
    nb = nbctl_commands(
        ["ls-add", "int"], ["ls-add", "ext"],
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1", "options:lb_force_snat_ip=router_ip"],
        ["lrp-add", "g1", "g1-int", "02:00:00:00:10:02", *nets],
        ["lrp-add", "g1", "g1-ext", "02:00:00:00:10:03", "172.16.0.1/24", "fd16::1/64"],
        *rport("int", "int-g1", "g1-int"), *rport("ext", "ext-g1", "g1-ext"),
        ["lb-add", "lb1", "172.16.0.60:80", "10.1.0.31:80", "tcp"], ["lr-lb-add", "g1", "lb1"],
    )
    assert_parity(parity_run(nb))
