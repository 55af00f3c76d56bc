"""Parity with the reference ovn-northd for routers with several distributed gateway ports (DGPs).

NAT rules go to the DGP named by their ``gateway_port``, else to the only DGP, else to the first DGP
(port order) with a network holding the external IP; a rule whose ``gateway_port`` is not a DGP of
its router, or that no DGP's network holds, only answers ARP (``lr_in_ip_input`` 90), and so does a
rule with ``gateway_port`` on a gateway router.  Load balancers use the first DGP.  Each DGP's
router-type switch port announces (``nat_addresses``) the NAT rules applied on it; load-balancer
VIPs are listed IPv4 first, then IPv6, in OVS string-set order (checked with many VIPs).
Every SB table must be equal.
"""

from __future__ import annotations

from collections.abc import Callable

from test_router_basics import Cmd, rport, vif
from test_router_nat_options import nat_row, transactions

from ovn_northd_py.parity.harness import assert_parity


def _gw_port_nat(router: str, port: str, *cols: str) -> list[Cmd]:
    ref = f"@gp_{port.replace('-', '_')}_{cols[1].split('=')[1].replace('.', '_').replace(':', '_')}"
    return [["--id=" + ref, "get", "logical_router_port", port],
            *nat_row(router, *cols, f"gateway_port={ref}")]


def topology() -> list[Cmd]:
    cmds: list[Cmd] = [
        ["ls-add", "pub"], ["ls-add", "pub2"], ["ls-add", "int"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *[c for n in range(1, 6) for c in vif("int", f"vm{n}", f"0a:00:00:00:00:0{n} 10.1.0.3{n}")],
        ["lr-add", "d1"],
        ["lrp-add", "d1", "d1-pub", "02:00:00:00:20:01", "172.16.0.20/24"],
        ["lrp-set-gateway-chassis", "d1-pub", "hv1", "20"],
        ["lrp-add", "d1", "d1-pub2", "02:00:00:00:20:03", "172.17.0.20/24", "fd17::20/64"],
        ["lrp-set-gateway-chassis", "d1-pub2", "hv2", "20"],
        ["lrp-add", "d1", "d1-int", "02:00:00:00:20:02", "10.1.0.1/24", "fd01::1/64"],
        *rport("pub", "pub-d1", "d1-pub"), *rport("pub2", "pub2-d1", "d1-pub2"), *rport("int", "int-d1", "d1-int"),
        ["lsp-set-options", "pub-d1", "router-port=d1-pub", "nat-addresses=router"],
        ["lsp-set-options", "pub2-d1", "router-port=d1-pub2", "nat-addresses=router"],
        ["lr-add", "d2"],
        ["lrp-add", "d2", "d2-pub", "02:00:00:00:30:01", "172.16.0.30/24"],
        ["lrp-set-gateway-chassis", "d2-pub", "hv1", "20"],
        ["lrp-add", "d2", "d2-x", "02:00:00:00:30:02", "10.7.0.1/24"],
        *rport("pub", "pub-d2", "d2-pub"),
        ["lsp-set-options", "pub-d2", "router-port=d2-pub", "nat-addresses=router"],
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-pub", "02:00:00:00:40:01", "172.16.0.40/24"],
        ["lrp-add", "g1", "g1-x", "02:00:00:00:40:02", "10.8.0.1/24"],
        *rport("pub", "pub-g1", "g1-pub"),
        ["lsp-set-options", "pub-g1", "router-port=g1-pub", "nat-addresses=router"],
    ]
    return cmds


def nat_and_lbs() -> list[Cmd]:
    cmds: list[Cmd] = [
        ["lr-nat-add", "d1", "snat", "172.17.0.101", "10.1.0.0/24"],
        ["lr-nat-add", "d1", "dnat", "172.16.0.102", "10.1.0.10"],
        *nat_row("d1", "type=dnat_and_snat", "external_ip=172.18.0.103", "logical_ip=10.1.0.11"),
        ["lr-nat-add", "d1", "dnat_and_snat", "fd17::104", "fd01::12"],
        *_gw_port_nat("d1", "d1-int", "type=dnat_and_snat", "external_ip=172.16.0.105", "logical_ip=10.1.0.13"),
        ["lr-nat-add", "d1", "dnat_and_snat", "172.17.0.106", "10.1.0.31", "vm1", "0a:00:00:00:99:01"],
        ["lr-nat-add", "d1", "dnat_and_snat", "172.16.0.107", "10.1.0.32", "vm2", "0a:00:00:00:99:02"],
        ["--gateway-port=d1-pub2", "lr-nat-add", "d1", "dnat_and_snat", "172.16.0.108", "10.1.0.33", "vm3",
         "0a:00:00:00:99:03"],
        ["--gateway-port=d1-pub", "--stateless", "lr-nat-add", "d1", "dnat_and_snat", "172.16.0.109", "10.1.0.34"],
        *_gw_port_nat("d2", "d2-x", "type=dnat_and_snat", "external_ip=172.16.0.111", "logical_ip=10.7.0.11"),
        ["lr-nat-add", "d2", "dnat_and_snat", "172.16.0.112", "10.7.0.12", "vm5", "0a:00:00:00:99:05"],
        ["--gateway-port=d2-pub", "lr-nat-add", "d2", "snat", "172.16.0.113", "10.7.0.0/24"],
        *_gw_port_nat("g1", "g1-x", "type=dnat_and_snat", "external_ip=172.16.0.121", "logical_ip=10.8.0.11"),
        ["lr-nat-add", "g1", "dnat_and_snat", "172.16.0.122", "10.8.0.12"],
        ["lb-add", "lb1", "172.16.7.1:80", "10.1.0.21:8080,10.1.0.22:8080", "tcp"],
        ["lb-add", "lb2", "172.16.7.2:80", "10.1.0.21:8080", "tcp"],
        ["lb-add", "lb3", "172.16.7.3:80", "10.1.0.21:8080", "tcp"],
        ["lb-add", "lb4", "[fd17::7]:80", "[fd01::21]:8080", "tcp"],
        ["lb-add", "lb5", "[fd17::8]:80", "[fd01::21]:8080", "tcp"],
        ["lb-add", "lb6", "10.20.30.40", "10.1.0.21"],
        ["lb-add", "lb7", "9.9.9.9", "10.1.0.21"],
        ["lb-add", "lb8", "192.168.100.100", "10.1.0.21"],
        ["lb-add", "lb9", "fd17::1:9", "fd01::21"],
        ["lb-add", "lb10", "172.16.7.1:81", "10.1.0.23:81", "udp"],
        ["lb-add", "lb11", "fd17::7", "[fd00::3]"],
    ]
    for n in (1, 2, 3, 4, 5, 6):
        cmds.append(["lr-lb-add", "d1", f"lb{n}"])
    for n in range(1, 12):
        cmds.append(["lr-lb-add", "g1", f"lb{n}"])
    return cmds


def multi_dgp_nb() -> Callable[[str], None]:
    # gateway_port names existing router ports: the NAT rules come in a second transaction.
    return transactions(topology(), nat_and_lbs())


def test_several_distributed_gateway_ports(parity_run):
    r = parity_run(multi_dgp_nb())
    assert_parity(r)
    assert r.flows is not None
    snat = next(s for s in r.flows.stages if s.stage == "lr_out_snat")
    assert snat.ref_count >= 12


def test_several_dgps_vip_order_with_other_uuids(parity_run):
    """The VIP order of ``nat_addresses`` depends on hashes, not uuids: a second NB must agree too."""
    assert_parity(parity_run(multi_dgp_nb(), tables=("Port_Binding",)))
