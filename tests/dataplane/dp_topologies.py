"""Logical topologies shared by the dataplane tests (built on a fresh ``Topology``)."""

from __future__ import annotations

from ovn_northd_py.devtools.dataplane import VM, Topology
from ovn_northd_py.devtools.testing import wait_until


def two_vms_on_a_switch(topo: Topology, switch: str = "sw") -> tuple[VM, VM]:
    """sw: a 10.0.0.11 fd00::11, b 10.0.0.12 fd00::12."""
    topo.nbctl("ls-add", switch)
    a = topo.vm(switch, "a", "00:00:00:00:01:01", "10.0.0.11/24", "fd00::11/64")
    b = topo.vm(switch, "b", "00:00:00:00:01:02", "10.0.0.12/24", "fd00::12/64")
    topo.wait_up()
    return a, b


def routed_vms(topo: Topology, router: str = "r") -> tuple[VM, VM]:
    """Distributed router ``router`` between s1 (a 10.1.0.11 fd01::11) and s2 (b 10.2.0.11 fd02::11)."""
    topo.nbctl("ls-add", "s1", "--", "ls-add", "s2", "--", "lr-add", router)
    topo.router_port(router, "s1", "00:00:00:00:ff:01", "10.1.0.1/24", "fd01::1/64")
    topo.router_port(router, "s2", "00:00:00:00:ff:02", "10.2.0.1/24", "fd02::1/64")
    a = topo.vm("s1", "a", "00:00:00:00:01:01", "10.1.0.11/24", "fd01::11/64", gw4="10.1.0.1", gw6="fd01::1")
    b = topo.vm("s2", "b", "00:00:00:00:02:01", "10.2.0.11/24", "fd02::11/64", gw4="10.2.0.1", gw6="fd02::1")
    topo.wait_up()
    return a, b


def learn_neighbours(topo: Topology, a: VM, b: VM, router: str = "r") -> list[str]:
    """Make ovn-controller learn a neighbour of ``router`` on each side (SB MAC_Binding rows).

    The router knows the NB addresses of its switches' ports statically; it only learns (and
    ovn-controller only writes MAC_Binding) for addresses NB does not list: give each VM a second
    address and ping it through the router, both ways.
    """
    a.ns.exec("ip", "addr", "add", "10.1.0.50/24", "dev", a.iface)
    b.ns.exec("ip", "addr", "add", "10.2.0.50/24", "dev", b.iface)
    assert a.ns.ping("10.2.0.50"), "a -> b's unlisted address through the router"
    assert b.ns.ping("10.1.0.50"), "b -> a's unlisted address through the router"

    def both() -> list[str]:
        rows = topo.mac_bindings(router)
        text = " ".join(rows)
        return rows if "10.1.0.50" in text and "10.2.0.50" in text else []

    rows: list[str] = wait_until(both, 10, f"MAC_Binding rows of {router} for 10.1.0.50 and 10.2.0.50")
    return rows
