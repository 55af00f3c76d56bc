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
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")


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
