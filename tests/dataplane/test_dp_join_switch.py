"""Routers that meet on a switch of router-type ports only (ovn-kubernetes' join switch), joining and
leaving it while the network runs: each router reaches the others' networks through its static
route and the static binding of the next hop's address (``lr_in_arp_resolve``, no ARP on the
join switch), and a router that leaves takes nothing the others need with it."""

from __future__ import annotations

from ovn_northd_py.devtools.dataplane import VM, Topology


def _router_on_join(topo: Topology, n: int) -> VM:
    """Router ``r<n>`` between its switch ``s<n>`` (VM ``v<n>`` at 10.<n>.0.11) and the join switch
    (100.64.0.<n>), created while the network runs."""
    topo.nbctl("lr-add", f"r{n}", "--", "ls-add", f"s{n}")
    topo.router_port(f"r{n}", f"s{n}", f"00:00:00:00:ff:0{n}", f"10.{n}.0.1/24")
    topo.router_port(f"r{n}", "join", f"00:00:00:00:fe:0{n}", f"100.64.0.{n}/16")
    return topo.vm(f"s{n}", f"v{n}", f"00:00:00:00:0{n}:01", f"10.{n}.0.11/24", gw4=f"10.{n}.0.1")


def _route(topo: Topology, a: int, b: int) -> None:
    """Each of ``r<a>`` and ``r<b>`` routes the other's switch through the join switch."""
    topo.nbctl("lr-route-add", f"r{a}", f"10.{b}.0.0/24", f"100.64.0.{b}", "--",
               "lr-route-add", f"r{b}", f"10.{a}.0.0/24", f"100.64.0.{a}")


def _join_bindings_learned(topo: Topology, *routers: str) -> list[str]:
    """MAC_Binding rows of the join switch's addresses: a router ARPed for another one."""
    return [r for name in routers for r in topo.mac_bindings(name) if r.startswith("100.64.")]


def test_routers_joining_reach_each_other_through_their_static_bindings(topo: Topology) -> None:
    topo.nbctl("ls-add", "join")
    v1 = _router_on_join(topo, 1)
    topo.wait_up()
    v2 = _router_on_join(topo, 2)
    _route(topo, 1, 2)
    topo.wait_up()
    assert v1.ns.ping("10.2.0.11"), "r1 -> join -> r2"
    assert v2.ns.ping("10.1.0.11"), "r2 -> join -> r1"
    v3 = _router_on_join(topo, 3)
    _route(topo, 1, 3)
    topo.wait_up()
    out = v3.ns.exec("ping", "-c1", "-W2", "-n", "10.1.0.11").stdout
    assert "ttl=62" in out, f"two router hops through the join switch: {out}"
    assert v1.ns.ping("10.3.0.11")
    assert not _join_bindings_learned(topo, "r1", "r2", "r3"), "the routers bind each other statically"


def test_router_leaving_the_join_switch_leaves_the_others_connected(topo: Topology) -> None:
    topo.nbctl("ls-add", "join")
    v1, v2, _ = (_router_on_join(topo, n) for n in (1, 2, 3))
    _route(topo, 1, 2)
    _route(topo, 1, 3)
    topo.wait_up()
    assert v1.ns.ping("10.3.0.11")
    # (with its route: a route left to 100.64.0.3 would have r1 ARP for it, and r2 learn r1 from
    # that request, options:always_learn_from_arp_request)
    topo.nbctl("lr-del", "r3", "--", "lsp-del", "join-r3", "--", "lr-route-del", "r1", "10.3.0.0/24", wait="hv")
    assert not v1.ns.ping("10.3.0.11", tries=1), "r3 is gone"
    assert v1.ns.ping("10.2.0.11") and v2.ns.ping("10.1.0.11"), "r1 and r2 still reach each other"
    assert not _join_bindings_learned(topo, "r1", "r2")
