"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for switch-port options NB
7.18 documents: ``receive_multicast=false`` (the port in none of its switch's multicast groups, and
the flows reading them), ``lsp_learn_mac=false`` (nothing northd writes differs) and a router-type
port's ``exclude-router-ips-from-garp=true`` with ``nat-addresses=router`` (no ``nat_addresses``
entry for the router port's own addresses).  Skipped without the sid chroot."""

from __future__ import annotations

from test_network_function_2603 import _parity_2603

from ovn_northd_py.devtools.servers import nbctl


def build_receive_multicast_nb(remote: str) -> None:
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2",
          "--", "lsp-add", "sw0", "u1", "--", "lsp-set-addresses", "u1", "unknown",
          "--", "lsp-add", "sw0", "u2", "--", "lsp-set-addresses", "u2", "unknown",
          "--", "lsp-add", "sw0", "u3", "--", "lsp-set-addresses", "u3", "unknown",
          "--", "lsp-set-options", "vm1", "lsp_learn_mac=false",
          "--", "lsp-set-options", "vm2", "receive_multicast=false", "mcast_flood_reports=true",
          "--", "lsp-set-options", "u1", "lsp_learn_mac=false",
          "--", "lsp-set-options", "u2", "receive_multicast=false",
          "--", "lsp-set-options", "u3", "mcast_flood=true", "receive_multicast=false",
          "--", "set", "logical_switch", "sw0", "other_config:mcast_snoop=true")


def build_exclude_router_ips_nb(remote: str) -> None:
    nbctl(remote, "lr-add", "lr0", "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:01:01", "172.16.0.1/24",
          "--", "lrp-set-gateway-chassis", "lrp0", "hv1",
          "--", "lrp-add", "lr0", "lrp1", "00:00:00:00:01:02", "10.0.0.1/24",
          "--", "lr-nat-add", "lr0", "snat", "172.16.0.1", "10.0.0.0/24",
          "--", "lr-nat-add", "lr0", "dnat_and_snat", "172.16.0.10", "10.0.0.10",
          "--", "ls-add", "pub", "--", "lsp-add", "pub", "pub-lr0", "--", "lsp-set-type", "pub-lr0", "router",
          "--", "lsp-set-addresses", "pub-lr0", "router",
          "--", "lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router", "exclude-router-ips-from-garp=true",
          "--", "lsp-add", "pub", "ln", "--", "lsp-set-type", "ln", "localnet", "--", "lsp-set-addresses", "ln", "unknown",
          "--", "lsp-set-options", "ln", "network_name=phys")


def test_26_03_receive_multicast_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_receive_multicast_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    groups = {str(row["name"]) for row in r.ref_dump.rows("Multicast_Group").values()}
    assert "_MC_static" not in groups, groups


def test_26_03_exclude_router_ips_from_garp_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_exclude_router_ips_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()


def build_l2gateway_ext_arp_nb(remote: str) -> None:
    """A switch peering a distributed gateway port with an l2gateway port (no localnet port)."""
    nbctl(remote, "lr-add", "lr1", "--", "lrp-add", "lr1", "down_link", "f0:00:00:00:00:f1", "192.168.1.1/24",
          "--", "lrp-set-gateway-chassis", "down_link", "hv1",
          "--", "ls-add", "ls1", "--", "lsp-add", "ls1", "up_link", "--", "lsp-set-type", "up_link", "router",
          "--", "lsp-set-addresses", "up_link", "router", "--", "lsp-set-options", "up_link", "router-port=down_link",
          "--", "lsp-add", "ls1", "vif1", "--", "lsp-set-addresses", "vif1", "f0:00:00:00:00:01 192.168.1.101",
          "--", "lsp-add", "ls1", "down_ext", "--", "lsp-set-type", "down_ext", "l2gateway",
          "--", "lsp-set-options", "down_ext", "network_name=phys", "l2gateway-chassis=hv1")


def test_26_03_l2gateway_port_and_external_arp_filter_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_l2gateway_ext_arp_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
