"""Parity regressions found by fuzzing random router networks (one test per rule, small NBs).

Each rule was established on the reference with several variants:

* an NB load balancer without ``protocol`` gives an SB Load_Balancer row without one;
* a plain distributed router (no DGP, not a gateway router) answers ARP / ND (90) for the external
  IPs of its NAT rules, and installs nothing else for them;
* a ``dnat`` / ``dnat_and_snat`` rule whose logical IP is a network only gets its ARP flows;
* ``external_mac``: a ``dnat_and_snat`` rule with a logical port and a malformed MAC only gets its
  ARP flows; a MAC with leading blanks or 1-digit bytes is valid, normalised in some flows and
  written as is in others; the switch's ``ls_in_l2_lkup`` 75 flood set lists the MACs of
  ``dnat`` / ``dnat_and_snat`` rules as written (valid or not); any rule type with a valid MAC and
  a logical port answers ARP on the DGP (92) from that MAC on the port's chassis;
* ``nat-addresses=router`` on a switch port whose router port is not a DGP: no
  ``is_chassis_resident``; rules with a malformed external IP or MAC are not announced;
* a router port none of whose networks parses is kept (link-local address only);
* a DGP with ``options:redirect-type=bridged`` gets no ``always-redirect``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_router_basics import Cmd, rport, vif
from test_router_nat_options import nat_row, transactions

from ovn_northd_py.parity.harness import assert_parity


def _router(dgp: bool = True, gw: bool = False) -> list[Cmd]:
    cmds: list[Cmd] = [
        ["ls-add", "pub"], ["ls-add", "in"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("pub", "pv", "0a:00:00:00:00:02 172.16.0.50"),
        *vif("in", "vm", "0a:00:00:00:00:01 10.0.0.11"),
        ["lr-add", "r"],
        ["lrp-add", "r", "r-pub", "02:00:00:00:01:01", "172.16.0.1/24", "fd0a::1/64"],
        ["lrp-add", "r", "r-in", "02:00:00:00:01:02", "10.0.0.1/24", "fd00::1/64"],
        *rport("pub", "pub-r", "r-pub"), *rport("in", "in-r", "r-in"),
    ]
    if dgp:
        cmds.append(["lrp-set-gateway-chassis", "r-pub", "hv1", "10"])
    if gw:
        cmds.append(["set", "logical_router", "r", "options:chassis=hv1"])
    return cmds


def _nat(kind: str, ext: str, logical: str, *extra: str) -> list[Cmd]:
    return nat_row("r", f"type={kind}", f'external_ip="{ext}"', f'logical_ip="{logical}"', *extra)


def _check(parity_run: Callable[..., object], *groups: list[Cmd]) -> None:
    assert_parity(parity_run(transactions(*groups)))  # type: ignore[arg-type]


def test_load_balancer_without_protocol(parity_run):
    _check(parity_run, [
        ["ls-add", "s0"], ["lr-add", "r0"],
        ["--id=@a", "create", "Load_Balancer", "name=lb0", 'vips={"10.0.0.200:8080"="10.1.0.10:80"}'],
        ["--id=@b", "create", "Load_Balancer", "name=lb1", 'vips={"10.0.0.201"="10.1.0.10"}'],
        ["add", "Logical_Switch", "s0", "load_balancer", "@a"], ["add", "Logical_Switch", "s0", "load_balancer", "@b"],
        ["add", "Logical_Router", "r0", "load_balancer", "@a"],
    ])


def test_plain_distributed_router_nat_arp_only(parity_run):
    _check(parity_run, _router(dgp=False), [
        *_nat("dnat_and_snat", "172.16.0.100", "10.0.0.11"), *_nat("dnat", "172.16.0.101", "10.0.0.12"),
        *_nat("snat", "172.16.0.102", "10.0.0.0/24"), *_nat("dnat_and_snat", "172.20.0.5", "10.0.0.13"),
        *_nat("dnat_and_snat", "fd0a::100", "fd00::11"), *_nat("dnat", "bad.ip", "10.0.0.12"),
        *_nat("dnat_and_snat", "172.16.0.103", "10.0.0.14", 'external_mac="0a:00:00:00:00:aa"',
              "logical_port=vm"),
    ])


@pytest.mark.parametrize("router", ["dgp", "gw"])
def test_dnat_to_network_arp_only(parity_run, router):
    _check(parity_run, _router(dgp=router == "dgp", gw=router == "gw"), [
        *_nat("dnat_and_snat", "172.16.0.101", "10.0.0.0/24"), *_nat("dnat", "172.16.0.102", "10.0.0.0/28"),
        *_nat("dnat_and_snat", "fd0a::100", "fd00::/64"), *_nat("snat", "172.16.0.103", "10.0.0.0/24"),
    ])


@pytest.mark.parametrize("mac", ["bad-mac", "0a:00:00:00:00:aa x", "0A:00:00:00:00:AA", " 0a:00:00:00:00:aa",
                                 "a:0:0:0:0:aa"])
def test_distributed_nat_external_mac_forms(parity_run, mac):
    _check(parity_run, _router(), [
        ["set", "logical_router_port", "r-pub", "options:gateway_mtu=1400"],
        ["lsp-set-options", "pub-r", "router-port=r-pub", "nat-addresses=router"],
        *_nat("dnat_and_snat", "172.16.0.100", "10.0.0.11", f'external_mac="{mac}"', "logical_port=vm"),
        *_nat("dnat_and_snat", "172.16.0.101", "10.0.0.12", f'external_mac="{mac}"'),
    ])


def test_external_mac_on_snat_and_dnat(parity_run):
    _check(parity_run, _router(), [
        *_nat("snat", "172.16.0.100", "10.0.0.0/24", 'external_mac="0a:00:00:00:00:aa"', "logical_port=vm"),
        *_nat("dnat", "172.16.0.101", "10.0.0.11", 'external_mac="0a:00:00:00:00:ab"', "logical_port=vm"),
        *_nat("snat", "172.16.0.102", "10.0.0.0/24", 'external_mac="bad-mac"', "logical_port=vm"),
    ])


def test_nat_addresses_of_non_dgp_peers(parity_run):
    _check(parity_run, _router(), [
        ["ls-add", "pub2"],
        ["lrp-add", "r", "r-pub2", "02:00:00:00:01:03", "172.17.0.1/24"], *rport("pub2", "pub2-r", "r-pub2"),
        ["set", "logical_router_port", "r-in", "options:reside-on-redirect-chassis=true"],
        *[["lsp-set-options", f"{sw}-r", f"router-port=r-{sw}", "nat-addresses=router"] for sw in ("pub", "in", "pub2")],
        *_nat("dnat_and_snat", "172.16.0.100", "10.0.0.11"), *_nat("snat", "bad.ip", "10.0.0.0/24"),
        *_nat("dnat_and_snat", "172.16.0.101", "10.0.0.12", 'external_mac="bad-mac"', "logical_port=vm"),
        *_nat("dnat_and_snat", "172.16.0.102", "10.0.0.13", 'external_mac="0a:00:00:00:00:aa"', "logical_port=vm"),
        ["lb-add", "lb", "172.16.0.200:80", "10.0.0.11:80"], ["lr-lb-add", "r", "lb"],
    ])


def test_router_port_without_valid_network(parity_run):
    ports = {"r-a": '"10.0.0.1/33"', "r-b": "bogus", "r-c": '"fd00::1/129"', "r-d": '"10.9.0.1"'}
    cmds: list[Cmd] = [["ls-add", "in"], *vif("in", "vm", "0a:00:00:00:00:01 10.0.0.11"), ["lr-add", "r"],
                       ["lrp-add", "r", "r-in", "02:00:00:00:01:02", "10.0.0.1/24"], *rport("in", "in-r", "r-in")]
    for n, (name, nets) in enumerate(ports.items()):
        cmds += [[f"--id=@p{n}", "create", "Logical_Router_Port", f"name={name}", f'mac="02:00:00:00:02:0{n}"',
                  f"networks={nets}"], ["add", "Logical_Router", "r", "ports", f"@p{n}"]]
    cmds += [["ls-add", "s2"], *vif("s2", "v2", "0a:00:00:00:02:01 10.9.0.5"), *rport("s2", "s2-r", "r-b")]
    _check(parity_run, cmds)


def test_bridged_dgp_has_no_always_redirect(parity_run):
    cmds = _router()
    cmds += [["ls-add", "pub2"], ["lrp-add", "r", "r-pub2", "02:00:00:00:01:03", "172.17.0.1/24"],
             *rport("pub2", "pub2-r", "r-pub2"), ["lrp-set-gateway-chassis", "r-pub2", "hv2", "10"],
             ["set", "logical_router_port", "r-pub", "options:redirect-type=bridged"],
             ["set", "logical_router_port", "r-pub2", "options:redirect-type=BRIDGED"]]
    _check(parity_run, cmds, _nat("snat", "172.16.0.100", "10.0.0.0/24"))
