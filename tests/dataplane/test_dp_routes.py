"""Static routes and router policies (drop, reroute) in the dataplane."""

from __future__ import annotations

from dp_topologies import routed_vms

from ovn_northd_py.devtools.dataplane import Topology


def test_static_route(topo: Topology) -> None:
    a, b = routed_vms(topo)
    b.ns.exec("ip", "addr", "add", "192.168.50.1/32", "dev", "lo")
    assert not a.ns.ping("192.168.50.1", tries=1), "no route yet"
    topo.nbctl("lr-route-add", "r", "192.168.50.0/24", "10.2.0.11")
    topo.sync()
    assert a.ns.ping("192.168.50.1"), "routed to b"
    topo.nbctl("lr-route-del", "r", "192.168.50.0/24")
    topo.sync()
    assert not a.ns.ping("192.168.50.1", tries=1), "the route is gone"


def test_router_policy_drop(topo: Topology) -> None:
    a, b = routed_vms(topo)
    topo.nbctl("lr-policy-add", "r", "1000", "ip4.src == 10.1.0.11 && ip4.dst == 10.2.0.11", "drop")
    topo.sync()
    assert not a.ns.ping("10.2.0.11", tries=1), "dropped by the policy"
    assert a.ns.ping("fd02::11"), "IPv6 is not matched"
    assert b.ns.ping("10.2.0.1"), "b still reaches the router"
    topo.nbctl("lr-policy-del", "r", "1000")
    topo.sync()
    assert a.ns.ping("10.2.0.11"), "the policy is gone"


def test_router_policy_reroute(topo: Topology) -> None:
    a, b = routed_vms(topo)
    c = topo.vm("s2", "c", "00:00:00:00:02:02", "10.2.0.12/24", gw4="10.2.0.1")
    topo.wait_up()
    # b and c both own 192.168.60.1 and say who they are
    for vm in (b, c):
        vm.ns.exec("ip", "addr", "add", "192.168.60.1/32", "dev", "lo")
        vm.ns.tcp_server(7000, f"server-{vm.name}")
    topo.nbctl("lr-route-add", "r", "192.168.60.0/24", "10.2.0.12")
    topo.sync()
    assert a.ns.tcp_connect("192.168.60.1", 7000, tries=3)[1].strip() == "server-c", "the static route goes to c"
    topo.nbctl("lr-policy-add", "r", "2000", "ip4.src == 10.1.0.11 && ip4.dst == 192.168.60.0/24",
               "reroute", "10.2.0.11")
    topo.sync()
    assert a.ns.tcp_connect("192.168.60.1", 7000, tries=3)[1].strip() == "server-b", "the policy reroutes to b"
    topo.nbctl("lr-policy-del", "r", "2000")
    topo.sync()
    assert a.ns.tcp_connect("192.168.60.1", 7000, tries=3)[1].strip() == "server-c", "back to the route"
