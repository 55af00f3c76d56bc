"""Parity with the 25.03 and 26.03 references for dynamic routing (``options:dynamic-routing``).

Small NBs exercising every ``dynamic-routing-redistribute`` kind (``connected``,
``connected-as-host``, ``static``, ``nat``, ``lb``; router value and router-port override, an empty
override), the Port_Binding options (``dynamic-routing``, ``-vrf-name``, ``-maintain-vrf``,
``-port-name``), and SB ``Learned_Route`` rows written after the networks settled as
ovn-controller would (another SB writer): their ``lr_in_ip_routing`` / ``lr_in_ip_routing_ecmp``
flows.  SB ``Advertised_Route`` is compared row by row (references resolved to names).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from ovn_northd_py.devtools.testing import ovsdb_select, ovsdb_transact
from ovn_northd_py.parity.harness import assert_parity, nbctl_commands

Cmd = list[str]


@pytest.fixture(autouse=True, params=["25.03", "26.03"])
def _release(request, monkeypatch):
    monkeypatch.setenv("OVN_PARITY_RELEASE", request.param)


def _lrp(router: str, name: str, mac: str, *nets: str) -> Cmd:
    return ["lrp-add", router, name, mac, *nets]


def connected_static_nb() -> list[Cmd]:
    """lr0 redistributes connected and static routes (a port in a route table, an IPv6 port with a
    link-local network, static routes of every kind); lr1 takes part without redistribution; lr2
    does not take part (its learned route gets no flow)."""
    return [
        ["lr-add", "lr0"],
        ["set", "logical_router", "lr0", "options:dynamic-routing=true",
         'options:dynamic-routing-redistribute="connected,static"', "options:dynamic-routing-vrf-name=myvrf"],
        _lrp("lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24"),
        _lrp("lr0", "lr0-sw1", "00:00:00:00:ff:02", "2001:db8::1/64"),
        _lrp("lr0", "lr0-sw2", "00:00:00:00:ff:03", "10.0.2.1/24", "10.0.3.1/24"),
        ["set", "logical_router_port", "lr0-sw0", "options:dynamic-routing-maintain-vrf=true",
         "options:dynamic-routing-port-name=myif"],
        ["set", "logical_router_port", "lr0-sw2", "options:route_table=rtb1"],
        ["lr-route-add", "lr0", "192.168.0.0/24", "10.0.0.10"],
        ["lr-route-add", "lr0", "2001:db8:1::/64", "2001:db8::10"],
        ["--policy=src-ip", "lr-route-add", "lr0", "10.5.0.0/16", "10.0.0.11"],
        ["lr-route-add", "lr0", "10.6.0.0/16", "discard"],
        ["--route-table=rtb1", "lr-route-add", "lr0", "10.7.0.0/16", "10.0.2.9"],
        ["lr-route-add", "lr0", "10.8.0.0/16", "9.9.9.9"],
        ["--ecmp", "lr-route-add", "lr0", "192.168.5.0/24", "10.0.0.20"],  # (one member each way:
        ["--ecmp", "lr-route-add", "lr0", "192.168.6.0/24", "10.0.2.20"],  # the member order is the reference's hash's)
        ["ls-add", "sw0"], ["lsp-add", "sw0", "sw0-lr0"], ["lsp-set-type", "sw0-lr0", "router"],
        ["lsp-set-addresses", "sw0-lr0", "router"], ["lsp-set-options", "sw0-lr0", "router-port=lr0-sw0"],
        ["lr-add", "lr1"], ["set", "logical_router", "lr1", "options:dynamic-routing=true", "options:chassis=hv1"],
        _lrp("lr1", "lr1-a", "00:00:00:01:ff:01", "10.1.0.1/24"),
        ["set", "logical_router_port", "lr1-a", 'options:dynamic-routing-redistribute="connected"'],
        _lrp("lr1", "lr1-b", "00:00:00:01:ff:02", "10.1.1.1/24"),
        ["set", "logical_router_port", "lr1-b", 'options:dynamic-routing-redistribute=""'],
        ["lr-add", "lr2"],
        _lrp("lr2", "lr2-a", "00:00:00:02:ff:01", "10.2.0.1/24"),
        ["set", "logical_router_port", "lr2-a", 'options:dynamic-routing-redistribute="connected"'],
    ]


def _uuid_of(sb: str, table: str, where: tuple[str, Any]) -> list[str]:
    col, value = where
    for row in ovsdb_select(sb, "OVN_Southbound", table):
        v = row[col]
        if isinstance(v, list) and v[0] == "map":
            v = dict(v[1]).get("name")
        if v == value:
            return ["uuid", row["_uuid"][1]]
    raise AssertionError(f"no {table} row with {col}={value}")


def learn(*routes: tuple[str, str, str, str]) -> Any:
    """``after_settle``: Learned_Route rows (router, port, prefix, next hop), as ovn-controller writes."""
    def write(_nb: str, sb: str) -> None:
        ops = [{"op": "insert", "table": "Learned_Route", "row": {
            "datapath": _uuid_of(sb, "Datapath_Binding", ("external_ids", router)),
            "logical_port": _uuid_of(sb, "Port_Binding", ("logical_port", port)),
            "ip_prefix": prefix, "nexthop": nexthop}} for router, port, prefix, nexthop in routes]
        ovsdb_transact(sb, "OVN_Southbound", *ops)
    return write


LEARNED = (
    ("lr0", "lr0-sw0", "172.16.0.0/24", "10.0.0.11"),
    ("lr0", "lr0-sw1", "172.16.1.0/24", "2001:db8::30"),  # an IPv4 prefix through an IPv6 next hop
    ("lr0", "lr0-sw0", "2001:db8:3::/64", "10.0.0.20"),  # and the other way round
    ("lr0", "lr0-sw0", "172.16.2.0/24", "10.0.2.5"),  # next hop in another port's network
    ("lr0", "lr0-sw1", "2001:db8:2::/64", "2001:db8:ffff::20"),  # next hop in no network
    ("lr0", "lr0-sw2", "172.16.6.0/24", "10.0.2.40"),  # learned on a port with a route table
    ("lr0", "lr0-sw0", "192.168.0.0/24", "10.0.0.40"),  # the prefix of a static route
    ("lr0", "lr0-sw0", "bad-prefix", "10.0.0.41"),
    ("lr0", "lr0-sw0", "172.16.8.0/24", "bad-nexthop"),
    ("lr2", "lr2-a", "172.16.7.0/24", "10.2.0.7"),  # a router without dynamic routing
)


def test_connected_and_static_routes_advertised(parity_run):
    r = parity_run(nbctl_commands(*connected_static_nb()))
    assert_parity(r)
    assert r.tables["Advertised_Route"].ref_count > 5, r.report()


def test_learned_routes_become_routing_flows(parity_run):
    r = parity_run(nbctl_commands(*connected_static_nb()), after_settle=learn(*LEARNED))
    assert_parity(r)
    # (26.03 deletes lr2's row: a router without dynamic routing.)
    assert r.tables["Learned_Route"].ref_count >= len(LEARNED) - 1, r.report()
    assert r.flows is not None and r.flows.ref_count > 0


def _without_member_ids(flows) -> Counter[tuple[Any, ...]]:
    return Counter((*f[:4], re.sub(r"reg8\[16..31\] == \d+", "reg8[16..31] == ?", f[4]), *f[5:]) for f in flows)


def test_learned_routes_of_one_prefix_form_their_own_ecmp_group(parity_run):
    """Two learned routes of one prefix over two ports, beside a static ECMP group: two groups (the
    learned one numbered second).  The members' order within the group is the
    reference's hash order: ``lr_in_ip_routing_ecmp`` is compared without it."""
    nb = nbctl_commands(
        ["lr-add", "lr0"],
        ["set", "logical_router", "lr0", "options:dynamic-routing=true",
         'options:dynamic-routing-redistribute="connected,static"'],
        _lrp("lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24"),
        _lrp("lr0", "lr0-sw1", "00:00:00:00:ff:02", "10.0.1.1/24"),
        ["--ecmp", "lr-route-add", "lr0", "192.168.0.0/24", "10.0.0.10"],
        ["--ecmp", "lr-route-add", "lr0", "192.168.0.0/24", "10.0.1.10"],  # (two on one port: the reference fails)
    )
    r = parity_run(nb, after_settle=learn(("lr0", "lr0-sw0", "192.168.1.0/24", "10.0.0.20"),
                                          ("lr0", "lr0-sw1", "192.168.1.0/24", "10.0.1.20")))
    assert r.tables["Advertised_Route"].ok and r.tables["Learned_Route"].ok, r.report()
    assert r.flows is not None
    for s in r.flows.stages:
        if s.stage != "lr_in_ip_routing_ecmp":
            assert not s.missing and not s.extra, r.report()
        else:
            assert s.ref_count == s.ours_count == 6, r.report()  # 2 groups of 2, the bypass, the default
            assert _without_member_ids(s.missing) == _without_member_ids(s.extra), r.report()


def _rport(switch: str, name: str, router_port: str) -> list[Cmd]:
    return [["lsp-add", switch, name], ["lsp-set-type", name, "router"], ["lsp-set-addresses", name, "router"],
            ["lsp-set-options", name, f"router-port={router_port}"]]


def host_routes_nb() -> list[Cmd]:
    """``connected-as-host`` (ovn-northd.at "dynamic-routing - host routes"): lr0-sw0 on switch sw0
    with a VIF, a port of another router lr1 (with a NAT rule), a port without addresses; lr0-lr2
    peered directly with lr2 (with a NAT rule and a second port); IPv4 and IPv6."""
    return [
        ["lr-add", "lr0"],
        ["set", "logical_router", "lr0", "options:dynamic-routing=true",
         'options:dynamic-routing-redistribute="connected,static"'],
        _lrp("lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24", "2001:db8::1/64"),
        ["set", "logical_router_port", "lr0-sw0", 'options:dynamic-routing-redistribute="connected-as-host,static"'],
        _lrp("lr0", "lr0-sw1", "00:00:00:00:ff:02", "10.0.1.1/24"),
        ["ls-add", "sw0"], *_rport("sw0", "sw0-lr0", "lr0-sw0"),
        ["lsp-add", "sw0", "sw0-vif0"], ["lsp-set-addresses", "sw0-vif0", "00:aa:bb:cc:dd:ee 10.0.0.2 2001:db8::2"],
        ["lsp-add", "sw0", "sw0-vif1"], ["lsp-set-addresses", "sw0-vif1", "00:aa:bb:cc:dd:ef 10.9.0.2"],
        ["lsp-add", "sw0", "sw0-none"],
        ["lr-add", "lr1"], _lrp("lr1", "lr1-sw0", "00:00:00:01:ff:01", "10.0.0.10/24"),
        _lrp("lr1", "lr1-x", "00:00:00:01:ff:02", "10.30.0.1/24"),
        *_rport("sw0", "sw0-lr1", "lr1-sw0"),
        ["lr-nat-add", "lr1", "dnat_and_snat", "10.0.0.100", "192.168.0.1"],
        ["lr-nat-add", "lr1", "snat", "10.40.0.1", "192.168.0.0/24"],
        ["lr-route-add", "lr0", "172.16.0.0/24", "10.0.0.200"],
        ["lr-add", "lr2"],
        _lrp("lr0", "lr0-lr2", "00:00:00:02:ff:01", "10.10.0.1/24", "peer=lr2-lr0"),
        ["set", "logical_router_port", "lr0-lr2", 'options:dynamic-routing-redistribute="connected-as-host,static"'],
        _lrp("lr2", "lr2-lr0", "00:00:00:02:ff:02", "10.10.0.2/24", "peer=lr0-lr2"),
        _lrp("lr2", "lr2-sw1", "00:00:00:02:ff:03", "10.11.0.1/24"),
        ["lr-nat-add", "lr2", "dnat_and_snat", "10.10.0.20", "10.20.0.123"],
    ]


def test_connected_as_host_routes(parity_run):
    r = parity_run(nbctl_commands(*host_routes_nb()))
    assert_parity(r)
    assert r.tables["Advertised_Route"].ref_count > 6, r.report()


def nat_lb_nb(kind: str, peer: str | None = "lr0-peer") -> list[Cmd]:
    """``nat`` / ``lb`` (ovn-northd.at "dynamic-routing - nat / LB sync to sb"): a gateway router lr0
    with its own NAT rules and load balancer, neighbours on a join switch (a router with a
    distributed gateway port, one bound elsewhere, a router without any) and on a direct peer (lr0's
    port named ``peer``, none without), a distributed router ``dr`` with a distributed NAT rule; IPv4 and IPv6.  (The join switch
    has a localnet port: without one 25.03 centralizes the neighbours' gateway ports, whose own NAT
    flows are not this test's business.)"""
    return [
        ["lr-add", "lr0"], ["set", "logical_router", "lr0", "options:dynamic-routing=true", "options:chassis=hv1"],
        _lrp("lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24", "2001:db8::1/64"),
        ["set", "logical_router_port", "lr0-sw0", f"options:dynamic-routing-redistribute={kind}"],
        ["lr-nat-add", "lr0", "dnat_and_snat", "172.16.1.10", "192.168.1.10"],
        ["lr-nat-add", "lr0", "snat", "172.16.1.11", "192.168.1.0/24"],
        ["lr-nat-add", "lr0", "dnat_and_snat", "2001:db8:100::10", "2001:db8:200::10"],
        ["lb-add", "lb0", "172.16.1.20:80", "192.168.1.10:80,192.168.1.11:80"],
        ["lb-add", "lb0", "172.16.1.21", "192.168.1.12"],
        ["lb-add", "lb6", "[2001:db8:100::20]:80", "[2001:db8:200::20]:80"],
        ["lr-lb-add", "lr0", "lb0"], ["lr-lb-add", "lr0", "lb6"],
        _lrp("lr0", "lr0-join", "00:00:00:00:ff:02", "10.42.0.1/24"),
        ["set", "logical_router_port", "lr0-join", f"options:dynamic-routing-redistribute={kind}"],
        ["ls-add", "ls-join"], *_rport("ls-join", "lsp-join-to-lr0", "lr0-join"),
        ["lsp-add", "ls-join", "ls-join-ln"], ["lsp-set-type", "ls-join-ln", "localnet"],
        ["lsp-set-addresses", "ls-join-ln", "unknown"], ["lsp-set-options", "ls-join-ln", "network_name=join"],
        ["lr-add", "lr-guest0"],
        _lrp("lr-guest0", "lrp-guest0-sw0", "00:00:00:00:fe:01", "10.51.0.1/24"),
        _lrp("lr-guest0", "lrp-guest0-join", "00:00:00:00:fe:02", "10.42.0.2/24"),
        *_rport("ls-join", "lsp-join-to-guest0", "lrp-guest0-join"),
        ["lrp-set-gateway-chassis", "lrp-guest0-join", "hv1"],
        ["lr-nat-add", "lr-guest0", "dnat_and_snat", "172.16.2.10", "192.168.2.10"],
        ["lb-add", "lb1", "172.16.2.20:80", "192.168.2.10:80"], ["lr-lb-add", "lr-guest0", "lb1"],
        ["lr-add", "lr-guest1"],
        _lrp("lr-guest1", "lrp-guest1-join", "00:00:00:00:fd:02", "10.42.0.3/24"),
        *_rport("ls-join", "lsp-join-to-guest1", "lrp-guest1-join"),
        ["lrp-set-gateway-chassis", "lrp-guest1-join", "nonlocalhv"],
        ["lr-nat-add", "lr-guest1", "dnat_and_snat", "172.16.3.10", "192.168.3.10"],
        ["lb-add", "lb2", "172.16.3.20:80", "192.168.3.10:80"], ["lr-lb-add", "lr-guest1", "lb2"],
        ["lr-add", "lr-plain"],
        _lrp("lr-plain", "lrp-plain-join", "00:00:00:00:fc:02", "10.42.0.4/24"),
        *_rport("ls-join", "lsp-join-to-plain", "lrp-plain-join"),
        ["lr-nat-add", "lr-plain", "dnat_and_snat", "172.16.5.10", "192.168.5.10"],
        ["lb-add", "lb5", "172.16.5.20:80", "192.168.5.10:80"], ["lr-lb-add", "lr-plain", "lb5"],
        *([["lr-add", "lr-peer"],
           _lrp("lr0", str(peer), "00:00:00:00:ff:03", "10.43.0.1/24", "peer=lr-peer-lr0"),
           ["set", "logical_router_port", str(peer), f"options:dynamic-routing-redistribute={kind}"],
           _lrp("lr-peer", "lr-peer-lr0", "00:00:00:00:fb:02", "10.43.0.2/24", f"peer={peer}"),
           ["lr-nat-add", "lr-peer", "dnat_and_snat", "172.16.6.10", "192.168.6.10"],
           ["lb-add", "lb6b", "172.16.6.20:80", "192.168.6.10:80"], ["lr-lb-add", "lr-peer", "lb6b"]] if peer else []),
        ["ls-add", "ls-pub"], ["lsp-add", "ls-pub", "ls-pub-ln"], ["lsp-set-type", "ls-pub-ln", "localnet"],
        ["lsp-set-addresses", "ls-pub-ln", "unknown"], ["lsp-set-options", "ls-pub-ln", "network_name=public"],
        ["lr-add", "dr"], ["set", "logical_router", "dr", "options:dynamic-routing=true"],
        _lrp("dr", "lrp-dr-sw1", "00:00:00:00:fa:01", "10.52.1.1/24"),
        _lrp("dr", "lrp-dr-pub", "00:00:00:00:fa:02", "10.42.9.4/24"),
        ["set", "logical_router_port", "lrp-dr-pub", f"options:dynamic-routing-redistribute={kind}"],
        *_rport("ls-pub", "lsp-pub-to-dr", "lrp-dr-pub"),
        ["lrp-set-gateway-chassis", "lrp-dr-pub", "nonlocalhv"],
        ["ls-add", "sw1"], *_rport("sw1", "sw1-lrp-dr", "lrp-dr-sw1"), ["lsp-add", "sw1", "vm"],
        ["lsp-set-addresses", "vm", "00:00:00:00:fa:03 10.52.1.5"],
        ["lr-nat-add", "dr", "dnat_and_snat", "172.16.4.10", "10.52.1.5", "vm", "00:00:00:00:fa:03"],
        ["lr-nat-add", "dr", "dnat_and_snat", "172.16.4.11", "10.52.1.6"],
        ["lb-add", "lb4", "172.16.4.20:80", "10.52.1.5:80"], ["lr-lb-add", "dr", "lb4"],
    ]


@pytest.mark.parametrize("kind", ["nat", "lb", "nat,lb"])
@pytest.mark.parametrize("peer", ["lr0-peer", "apeer"])
def test_nat_and_lb_routes(parity_run, kind, peer):
    """(25.03 announces the join switch's routers only if lr0-join comes before the directly peered
    port in the hash order of lr0's port names: after ``apeer``, not after ``lr0-peer``.)"""
    r = parity_run(nbctl_commands(*nat_lb_nb(kind, peer)))
    assert_parity(r)
    assert r.tables["Advertised_Route"].ref_count > 4, r.report()


@pytest.mark.parametrize("kind", ["nat", "lb"])
def test_nat_and_lb_routes_of_switch_neighbours(parity_run, kind):
    """Without the direct peer: the join switch's routers are announced by both releases."""
    r = parity_run(nbctl_commands(*nat_lb_nb(kind, peer=None)))
    assert_parity(r)
    assert r.tables["Advertised_Route"].ref_count > 6, r.report()


def options_nb() -> list[Cmd]:
    """Every router, router-port and switch option of the release's man page at once (those a
    release does not know are written and must be ignored): 26.03's vrf id, prefix next hops,
    ``no-learning`` (router and port), ``redistribute-local-only`` (router, port override), and EVPN
    switches (valid VNI with every setting and a load balancer, VNI alone with an ``unknown`` port, a
stateful ACL and a router, a router's gateway port on one, invalid VNIs)."""
    return [
        ["lr-add", "lr0"],
        ["set", "logical_router", "lr0", "options:dynamic-routing=true", "options:chassis=hv1",
         'options:dynamic-routing-redistribute="connected,static"', "options:dynamic-routing-redistribute-local-only=true",
         "options:dynamic-routing-vrf-name=vrf0", "options:dynamic-routing-vrf-id=1234",
         "options:dynamic-routing-v4-prefix-nexthop=10.0.0.254", "options:dynamic-routing-v6-prefix-nexthop=2001:db8::fe"],
        _lrp("lr0", "lr0-a", "00:00:00:00:ff:01", "10.0.0.1/24", "2001:db8::1/64"),
        ["set", "logical_router_port", "lr0-a", "options:dynamic-routing-maintain-vrf=true",
         "options:dynamic-routing-port-name=eth1", "options:dynamic-routing-redistribute-local-only=false"],
        _lrp("lr0", "lr0-b", "00:00:00:00:ff:02", "10.0.1.1/24"),
        ["set", "logical_router_port", "lr0-b", "options:dynamic-routing-no-learning=true"],
        ["lr-add", "lr1"],
        ["set", "logical_router", "lr1", "options:dynamic-routing=true", "options:dynamic-routing-no-learning=true",
         "options:dynamic-routing-vrf-id=0", "options:dynamic-routing-redistribute-local-only=true"],
        _lrp("lr1", "lr1-a", "00:00:00:01:ff:01", "10.1.0.1/24"), ["lrp-set-gateway-chassis", "lr1-a", "hv1"],
        _lrp("lr1", "lr1-b", "00:00:00:01:ff:02", "10.1.1.1/24"),
        ["set", "logical_router_port", "lr1-b", "options:dynamic-routing-no-learning=false"],
        ["ls-add", "sw0"],
        ["set", "logical_switch", "sw0", "other_config:dynamic-routing-vni=100",
         "other_config:dynamic-routing-bridge-ifname=br-100", "other_config:dynamic-routing-vxlan-ifname=vxlan-100",
         "other_config:dynamic-routing-advertise-ifname=lo-100", "other_config:dynamic-routing-fdb-prefer-local=true",
         "other_config:dynamic-routing-arp-prefer-local=true", 'other_config:dynamic-routing-redistribute="fdb,ip"'],
        ["lsp-add", "sw0", "vm1"], ["lsp-set-addresses", "vm1", "00:00:00:00:00:11 10.0.0.11 2001:db8::11"],
        *_rport("sw0", "sw0-lr0", "lr0-a"),
        ["ls-add", "sw1"], ["set", "logical_switch", "sw1", "other_config:dynamic-routing-vni=200"],
        ["lsp-add", "sw1", "vm2"], ["lsp-set-addresses", "vm2", "00:00:00:00:00:22 10.5.0.2"],
        ["lsp-add", "sw1", "unk"], ["lsp-set-addresses", "unk", "unknown"],
        ["acl-add", "sw1", "from-lport", "100", "ip", "allow-related"],
        ["lb-add", "lb0", "10.0.0.100:80", "10.0.0.11:80"], ["ls-lb-add", "sw0", "lb0"],
        ["lr-add", "lr2"], _lrp("lr2", "lr2-sw1", "00:00:00:02:ff:01", "10.5.0.1/24", "2001:db8:5::1/64"),
        *_rport("sw1", "sw1-lr2", "lr2-sw1"),
        _lrp("lr2", "lr2-gw", "00:00:00:02:ff:02", "10.7.0.1/24"), ["lrp-set-gateway-chassis", "lr2-gw", "hv1"],
        ["ls-add", "sw4"], *_rport("sw4", "sw4-lr2", "lr2-gw"),
        ["set", "logical_switch", "sw4", "other_config:dynamic-routing-vni=400",
         "other_config:dynamic-routing-arp-prefer-local=true", 'other_config:dynamic-routing-redistribute="ip"'],
        ["ls-add", "sw2"], ["set", "logical_switch", "sw2", "other_config:dynamic-routing-vni=16777216"],
        ["ls-add", "sw3"], ["set", "logical_switch", "sw3", "other_config:dynamic-routing-vni=abc",
                            'other_config:dynamic-routing-redistribute="ip"'],
        ["lsp-add", "sw3", "vm3"], ["lsp-set-addresses", "vm3", "00:00:00:00:00:33 10.6.0.3"],
    ]


def test_every_dynamic_routing_option(parity_run):
    r = parity_run(nbctl_commands(*options_nb()),
                   after_settle=learn(("lr0", "lr0-a", "172.16.0.0/24", "10.0.0.9"),
                                      ("lr0", "lr0-b", "172.16.1.0/24", "10.0.1.9"),
                                      ("lr1", "lr1-a", "172.16.2.0/24", "10.1.0.9")))
    assert_parity(r)
    assert r.tables["Learned_Route"].ref_count == 3, r.report()


def test_host_routes_of_a_distributed_router_with_nat_and_load_balancers(parity_run):
    """``connected-as-host`` on a distributed router's inner port (its own NAT addresses and VIPs:
    25.03 announces them, tracked to the port) beside ``nat`` on its gateway port, and a join-switch
    neighbour taking part itself (static, connected, nat, lb).  (``lb`` and ``connected-as-host`` on
    one port make 25.03's reference write duplicate rows and fail: not combined here.)"""
    r = parity_run(nbctl_commands(*nat_lb_nb("nat,lb", None), *[
        ["set", "logical_router_port", "lrp-dr-sw1", 'options:dynamic-routing-redistribute="nat,connected-as-host"'],
        ["set", "logical_router", "lr-guest0", "options:dynamic-routing=true"],
        ["set", "logical_router_port", "lrp-guest0-join", 'options:dynamic-routing-redistribute="nat,lb,static,connected"'],
        ["lr-route-add", "lr-guest0", "0.0.0.0/0", "10.42.0.1"],
        ["lr-route-add", "lr-guest0", "10.60.0.0/16", "10.51.0.9"],
    ]))
    assert_parity(r)
    assert r.tables["Advertised_Route"].ref_count > 30, r.report()
