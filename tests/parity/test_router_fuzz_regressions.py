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
* a DGP with ``options:redirect-type=bridged`` gets no ``always-redirect``;
* the logical IP of a NAT rule is written as the NB has it (``/32``, leading blanks and zeros);
* ``lb_force_snat_ip``: addresses force SNAT on every kind of router, ``router_ip`` on gateway
  routers only, a value with a non-address word nowhere;
* ``neighbor_responder`` (all / none / other) decides which VIPs go into the ``_rtr_lb`` sets;
* a gateway router ignores a NAT rule's external MAC; a rule with a bad external IP floods no MAC
  (``ls_in_l2_lkup`` 75) and does not count as distributed for ``always-redirect``;
* a router port with a malformed MAC (no Port_Binding, no other flows) still selects its route
  table (``lr_in_ip_routing_pre`` 100) and counts when numbering the tables (NB port uuid order);
* a ``discard`` ECMP member with an ``output_port`` gets an ``lr_in_ip_routing_ecmp`` flow
  (``reg0 = discard``, the port's first address of the prefix's family);
* a gateway router's port with gateway chassis or an HA chassis group gets no chassisredirect
  port, but its Port_Binding still names one (``options:chassis-redirect-port``) when it has a peer.
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


@pytest.mark.parametrize("router", ["dgp", "gw"])
def test_nat_logical_ip_written_as_given(parity_run, router):
    # Observed: the logical IP is written verbatim (``/32``, ``/128``, leading blank and zeros,
    # dotted mask); a trailing blank makes it invalid (ARP flows only).
    _check(parity_run, _router(dgp=router == "dgp", gw=router == "gw"),
           _nat("dnat_and_snat", "172.16.0.100", "10.0.0.11/32", 'external_mac="0a:00:00:00:00:99"',
                "logical_port=vm")
           + _nat("dnat", "172.16.0.101", "10.0.0.12/32")
           + _nat("dnat_and_snat", "172.16.0.102", " 10.0.0.013")
           + _nat("snat", "172.16.0.103", "10.0.1.5/24")
           + _nat("snat", "172.16.0.104", "10.0.2.0/255.255.255.0")
           + _nat("snat", "172.16.0.105", "10.0.3.0/24 ")
           + _nat("dnat_and_snat", "fd0a::100", "fd00::12/128")
           + _nat("snat", "fd0a::101", "fd00:1:0::/64"))


_FORCE_LBS: list[Cmd] = [
    ["--id=@a", "create", "Load_Balancer", "name=lb0",
     'vips={"172.16.0.200:80"="10.0.0.11:8080","172.16.0.201"="10.0.0.11"}', "options:affinity_timeout=60"],
    ["--id=@b", "create", "Load_Balancer", "name=lb1", 'vips={"172.16.0.202:80"="10.0.0.12:8080"}',
     "options:skip_snat=true"],
    ["add", "logical_router", "r", "load_balancer", "@a", "@b"],
]


@pytest.mark.parametrize("router", ["dgp", "gw", "plain"])
@pytest.mark.parametrize("value", ["172.31.0.9", "fd31::9", "bad 172.31.0.9", "router", "1.1", "router_ip"])
def test_lb_force_snat_ip_values(parity_run, router, value):
    # Observed: an address list forces SNAT for load balancers on every kind of router (on a DGP
    # also in lr_out_undnat 120), router_ip only on gateway routers; a word that is not an
    # address anywhere in the value forces nothing.
    _check(parity_run, _router(dgp=router == "dgp", gw=router == "gw"), _FORCE_LBS, [
        ["set", "logical_router", "r", f'options:lb_force_snat_ip="{value}"',
         'options:dnat_force_snat_ip="bad 172.31.0.8"'],
        *_nat("dnat_and_snat", "172.16.0.100", "10.0.0.11"),
    ])


@pytest.mark.parametrize("router", ["dgp", "gw", "plain"])
def test_router_lb_vip_sets_neighbor_responder(parity_run, router):
    # Observed: neighbor_responder=all puts every VIP in the _rtr_lb sets (outside the router's
    # networks too), none leaves the load balancer out, any other value is "reachable".
    vips = '{"172.30.0.%d:80"="10.0.0.11:80","10.0.0.%d:80"="10.0.0.11:80","[fd30::%d]:80"="[fd00::11]:80"}'
    cmds: list[Cmd] = []
    for k, mode in enumerate(["all", "none", "reachable", "bogus", None]):
        row = [f"--id=@l{k}", "create", "Load_Balancer", f"name=lb{k}", "vips=" + vips % (k, 200 + k, k)]
        if mode is not None:
            row.append(f"options:neighbor_responder={mode}")
        cmds += [row, ["add", "logical_router", "r", "load_balancer", f"@l{k}"]]
    _check(parity_run, _router(dgp=router == "dgp", gw=router == "gw"), cmds)


@pytest.mark.parametrize("router", ["dgp", "gw", "plain"])
def test_nat_external_mac_with_bad_ip_or_on_gateway_router(parity_run, router):
    # Observed: a gateway router applies a dnat_and_snat rule with a logical port and a malformed
    # external MAC like any other; a rule with a bad external IP does not flood its MAC in
    # ls_in_l2_lkup 75 nor clear the DGP's always-redirect (its l2_lkup 50 flow stays).
    _check(parity_run, _router(dgp=router == "dgp", gw=router == "gw"),
           _nat("dnat_and_snat", "172.16.0.100", "10.0.0.11", 'external_mac="bad-mac"', "logical_port=vm")
           + _nat("dnat_and_snat", "bad.ip", "10.0.0.12", 'external_mac="0a:00:00:00:aa:00"', "logical_port=vm")
           + _nat("dnat", "bad.ip", "10.0.0.13", 'external_mac="0a:00:00:00:aa:01"'))


@pytest.mark.parametrize("router", ["dgp", "gw"])
@pytest.mark.parametrize("networks", [["bogus"], ["10.9.0.1/33"], ["bogus", "172.16.0.1/24"], ["fd0a::1/64"]])
def test_nat_addresses_of_peer_with_bad_networks(parity_run, router, networks):
    # Observed: the peer's own GARP entry lists the IPv4 addresses of its valid networks only (the
    # MAC alone when there is none); a VIP whose backends do not parse is not announced.
    nets = ",".join(f'"{n}"' for n in networks)
    _check(parity_run, [
        ["ls-add", "pub"], ["ls-add", "in"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("in", "vm", "0a:00:00:00:00:01 10.0.0.11"),
        ["lr-add", "r"],
        ["--id=@p", "create", "Logical_Router_Port", "name=r-pub", 'mac="02:00:00:00:01:01"', f"networks={nets}"],
        ["add", "logical_router", "r", "ports", "@p"],
        ["lrp-add", "r", "r-in", "02:00:00:00:01:02", "10.0.0.1/24"],
        *rport("pub", "pub-r", "r-pub"), *rport("in", "in-r", "r-in"),
        ["lsp-set-options", "pub-r", "router-port=r-pub", "nat-addresses=router"],
        ["lrp-set-gateway-chassis", "r-pub", "hv1", "10"] if router == "dgp"
        else ["set", "logical_router", "r", "options:chassis=hv1"],
        ["--id=@a", "create", "Load_Balancer", "name=lb0",
         'vips={"172.30.0.2"="10.3.0.1080,10.1.0.10","172.30.0.3"="10.1.0.10"}'],
        ["add", "logical_router", "r", "load_balancer", "@a"],
    ])


def _neighbours() -> list[Cmd]:
    """A gateway router, a plain router and a router whose port there is a DGP on the DGP's switch
    ``pub``."""
    cmds: list[Cmd] = []
    for n, ip in enumerate(["172.16.0.2", "172.16.0.3", "172.16.0.4"]):
        r = f"o{n}"
        cmds += [["lr-add", r], ["lrp-add", r, f"{r}-pub", f"02:00:00:00:0{n + 3}:01", f"{ip}/24"],
                 *rport("pub", f"pub-{r}", f"{r}-pub")]
    cmds += [["set", "logical_router", "o0", "options:chassis=hv2"], ["lrp-set-gateway-chassis", "o2-pub", "hv3", "10"]]
    return cmds


@pytest.mark.parametrize("router", ["dgp", "gw", "plain"])
def test_lb_add_route(parity_run, router):
    # Observed: on a router with a DGP, a load balancer with add_route=true (own or through a group)
    # routes its IPv4 VIPs (with backends or not; not those with bad backends) on the other routers
    # of the DGP's switch (98) and binds them to the DGP's MAC on gateway routers and neighbour DGPs
    # (NAT add_route too), after the NAT add_route IPs; gateway and plain routers' load balancers add
    # nothing.
    _check(parity_run, _router(dgp=router == "dgp", gw=router == "gw"), _neighbours(), [
        ["--id=@a", "create", "Load_Balancer", "name=lb0", "options:add_route=true",
         ('vips={"172.16.0.200:80"="10.0.0.11:80","10.0.0.201"="10.0.0.11","[fd0a::200]:80"="[fd00::11]:80",'
          '"192.168.5.5:80"="10.0.0.11:80","172.16.9.9:80"="10.0.0.1080"}')],
        ["--id=@b", "create", "Load_Balancer", "name=lb1", "options:add_route=true",
         'vips={"172.16.0.210:80"="10.0.0.11:80","172.16.0.200:81"="10.0.0.11:80","172.16.0.211:80"=""}'],
        ["--id=@c", "create", "Load_Balancer", "name=lb2", 'vips={"172.16.0.220:80"="10.0.0.11:80"}'],
        ["--id=@g", "create", "Load_Balancer_Group", "name=g", "load_balancer=@b"],
        ["add", "logical_router", "r", "load_balancer", "@a", "@c"],
        ["add", "logical_router", "r", "load_balancer_group", "@g"],
    ], _nat("dnat_and_snat", "172.16.0.100", "10.0.0.11", "options:add_route=true"))


@pytest.mark.parametrize("dynamic", ["o0", "o2"])
def test_add_route_bindings_and_bad_distributed_mac(parity_run, dynamic):
    # Observed: a neighbour with options:dynamic_neigh_routers=true gets the add_route routes but no
    # bindings; a distributed rule with a malformed external MAC routes nothing.
    _check(parity_run, _router(), _neighbours(), [
        ["set", "logical_router", dynamic, "options:dynamic_neigh_routers=true"],
        ["--id=@a", "create", "Load_Balancer", "name=lb0", "options:add_route=true",
         'vips={"172.16.0.200:80"="10.0.0.11:80"}'],
        ["add", "logical_router", "r", "load_balancer", "@a"],
    ], _nat("dnat_and_snat", "172.16.0.100", "10.0.0.11", "options:add_route=true")
       + _nat("dnat_and_snat", "172.16.0.101", "10.0.0.12", "options:add_route=true", 'external_mac="bad-mac"',
              "logical_port=vm"))


@pytest.mark.parametrize("other_table", [False, True])
def test_route_table_of_port_with_bad_mac(parity_run, other_table):
    cmds: list[Cmd] = [
        ["ls-add", "s0"], ["ls-add", "s1"], ["lr-add", "r"],
        ["--id=@p", "create", "Logical_Router_Port", "name=r-s0", 'mac="02:00:00:00:00"', 'networks="10.0.0.1/24"',
         "options:route_table=rtb1"],
        ["add", "Logical_Router", "r", "ports", "@p"],
        ["lrp-add", "r", "r-s1", "02:00:00:00:01:02", "10.1.0.1/24"],
        *rport("s0", "s0-r", "r-s0"), *rport("s1", "s1-r", "r-s1"),
        ["--route-table=rtb1", "lr-route-add", "r", "1.2.3.4", "10.1.0.99"],
    ]
    if other_table:
        cmds.append(["set", "logical_router_port", "r-s1", "options:route_table=rtb2"])
    _check(parity_run, cmds)


@pytest.mark.parametrize("prefix, nexthop", [("192.168.50.0/24", "10.1.0.99"), ("fd99::/64", "fd00::5")])
def test_discard_ecmp_member_with_output_port(parity_run, prefix, nexthop):
    cmds: list[Cmd] = [
        ["ls-add", "s0"], ["ls-add", "s1"], ["lr-add", "r"],
        ["lrp-add", "r", "r-s0", "02:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64"],
        ["lrp-add", "r", "r-s1", "02:00:00:00:01:02", "10.1.0.1/24"],
        *rport("s0", "s0-r", "r-s0"), *rport("s1", "s1-r", "r-s1"),
    ]
    for i, (nh, port) in enumerate([(nexthop, None), ("discard", "r-s0"), ("discard", None)]):
        cols = [f'ip_prefix="{prefix}"', f'nexthop="{nh}"'] + ([f'output_port="{port}"'] if port else [])
        cmds += [[f"--id=@r{i}", "create", "Logical_Router_Static_Route", *cols],
                 ["add", "Logical_Router", "r", "static_routes", f"@r{i}"]]
    _check(parity_run, cmds)


@pytest.mark.parametrize("group", [False, True])
def test_gateway_router_port_with_gateway_chassis(parity_run, group):
    cmds: list[Cmd] = [
        ["ls-add", "s0"], ["lr-add", "r"], ["set", "logical_router", "r", "options:chassis=hv1"],
        ["lrp-add", "r", "r-s0", "02:00:00:00:01:01", "10.0.0.1/24"],
        ["lrp-add", "r", "r-s1", "02:00:00:00:01:02", "10.1.0.1/24"],
        *rport("s0", "s0-r", "r-s0"),
    ]
    if group:
        cmds += [["--id=@g", "create", "HA_Chassis_Group", "name=g"],
                 ["set", "logical_router_port", "r-s0", "ha_chassis_group=@g"],
                 ["lrp-set-gateway-chassis", "r-s1", "hv1", "20"]]
    else:
        cmds += [["lrp-set-gateway-chassis", "r-s0", "hv1", "20"], ["lrp-set-gateway-chassis", "r-s1", "hv1", "20"]]
    _check(parity_run, cmds)
