"""Plain forwarding: one switch (L2) and a distributed router between two switches (L3)."""

from __future__ import annotations

from dp_topologies import learn_neighbours, routed_vms, two_vms_on_a_switch

from ovn_northd_py.devtools.dataplane import Topology


def test_l2_ping_ipv4(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)
    assert a.ns.ping("10.0.0.12")
    assert b.ns.ping("10.0.0.11")
    # a port that does not exist answers nothing (the check can fail)
    assert not a.ns.ping("10.0.0.99", tries=1)


def test_l2_ping_ipv6(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)
    assert a.ns.ping("fd00::12")
    assert b.ns.ping("fd00::11")


def test_l3_ping_ipv4_across_router(topo: Topology) -> None:
    a, b = routed_vms(topo)
    assert a.ns.ping("10.1.0.1"), "the router's own address"
    assert a.ns.ping("10.2.0.11")
    assert b.ns.ping("10.1.0.11")
    out = a.ns.exec("ping", "-c1", "-W2", "-n", "10.2.0.11").stdout
    assert "ttl=63" in out, f"one router hop decrements the TTL: {out}"


def test_l3_ping_ipv6_across_router(topo: Topology) -> None:
    a, b = routed_vms(topo)
    assert a.ns.ping("fd02::11")
    assert b.ns.ping("fd01::11")
    out = a.ns.exec("ping", "-6", "-c1", "-W2", "-n", "fd02::11").stdout
    assert "ttl=63" in out or "hlim=63" in out, out


def test_l3_router_learns_neighbours(topo: Topology) -> None:
    a, b = routed_vms(topo)
    rows = learn_neighbours(topo, a, b)
    assert any("00:00:00:00:02:01" in r for r in rows), rows
