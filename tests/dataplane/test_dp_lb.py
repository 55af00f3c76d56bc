"""Load balancers in the dataplane: on a switch and on a gateway router; a VIP without backends
and a VIP with ``reject``."""

from __future__ import annotations

import time

from ovn_northd_py.devtools.dataplane import VM, Topology

VIP = "10.200.0.1"


def lb_topology(topo: Topology, router_chassis: str | None = None) -> tuple[VM, VM, VM]:
    """Router r between s1 (client a 10.1.0.11) and s2 (backends b 10.2.0.11, c 10.2.0.12).

    Each backend answers TCP port 8080 with its name.  ``router_chassis`` makes r a gateway router.
    """
    topo.nbctl("ls-add", "s1", "--", "ls-add", "s2", "--", "lr-add", "r")
    if router_chassis:
        topo.nbctl("set", "Logical_Router", "r", f"options:chassis={router_chassis}")
    topo.router_port("r", "s1", "00:00:00:00:ff:01", "10.1.0.1/24")
    topo.router_port("r", "s2", "00:00:00:00:ff:02", "10.2.0.1/24")
    a = topo.vm("s1", "a", "00:00:00:00:01:01", "10.1.0.11/24", gw4="10.1.0.1")
    b = topo.vm("s2", "b", "00:00:00:00:02:01", "10.2.0.11/24", gw4="10.2.0.1")
    c = topo.vm("s2", "c", "00:00:00:00:02:02", "10.2.0.12/24", gw4="10.2.0.1")
    topo.wait_up()
    b.ns.tcp_server(8080, "backend-b")
    c.ns.tcp_server(8080, "backend-c")
    return a, b, c


def replies(client: VM, host: str, port: int, n: int = 6) -> list[str]:
    out = []
    for _ in range(n):
        rc, text, err = client.ns.tcp_connect(host, port, tries=3)
        out.append(text.strip() if rc == 0 else f"error: {err.strip()}")
    return out


def test_switch_load_balancer_reaches_backends(topo: Topology) -> None:
    a, _b, _c = lb_topology(topo)
    assert a.ns.cannot_connect(VIP, 80), "nothing answers the VIP before the load balancer"
    topo.nbctl("lb-add", "lb_sw", f"{VIP}:80", "10.2.0.11:8080,10.2.0.12:8080", "tcp", "--",
               "ls-lb-add", "s1", "lb_sw")
    topo.sync()
    got = replies(a, VIP, 80)
    assert set(got) <= {"backend-b", "backend-c"} and got, got
    assert a.ns.can_connect("10.2.0.11", 8080), "the backend directly"


def test_router_load_balancer_reaches_backends(topo: Topology) -> None:
    a, b, _c = lb_topology(topo, router_chassis="hv1")
    topo.nbctl("lb-add", "lb_r", f"{VIP}:80", "10.2.0.11:8080,10.2.0.12:8080", "tcp", "--",
               "lr-lb-add", "r", "lb_r")
    topo.sync()
    got = replies(a, VIP, 80)
    assert set(got) <= {"backend-b", "backend-c"} and got, got
    # the backends see the client's own address (no SNAT configured)
    topo.nbctl("lb-del", "lb_r", "--", "lb-add", "lb_r2", f"{VIP}:81", "10.2.0.11:9090", "tcp", "--",
               "lr-lb-add", "r", "lb_r2")
    b.ns.tcp_server(9090)
    topo.sync()
    rc, text, err = a.ns.tcp_connect(VIP, 81, tries=3)
    assert rc == 0 and text.strip() == "10.1.0.11", (rc, text, err)


def test_load_balancer_vip_without_backends(topo: Topology) -> None:
    a, _b, _c = lb_topology(topo)
    topo.nbctl("create", "Load_Balancer", "name=lb_empty", "protocol=tcp", f'vips:"{VIP}:80"=""', "--",
               "lb-add", "lb_ok", "10.200.0.2:80", "10.2.0.11:8080", "tcp", "--",
               "ls-lb-add", "s1", "lb_empty", "--", "ls-lb-add", "s1", "lb_ok")
    topo.sync()
    assert a.ns.can_connect("10.200.0.2", 80), "a VIP with a backend, on the same switch"
    rc, text, err = a.ns.tcp_connect(VIP, 80)
    assert rc != 0 and not text, f"a VIP without backends reaches nobody: {rc} {text!r} {err!r}"
    assert "refused" not in err, f"no reject option: no TCP reset either ({err!r})"


def test_load_balancer_vip_reject_refuses(topo: Topology) -> None:
    a, _b, _c = lb_topology(topo)
    topo.nbctl("create", "Load_Balancer", "name=lb_rej", "protocol=tcp", f'vips:"{VIP}:80"=""',
               "options:reject=true", "--", "ls-lb-add", "s1", "lb_rej")
    topo.sync()
    t0 = time.monotonic()
    rc, text, err = a.ns.tcp_connect(VIP, 80, timeout=3)
    took = time.monotonic() - t0
    assert rc != 0 and "refused" in err, f"reject=true answers with a TCP reset: {rc} {text!r} {err!r}"
    assert took < 2.5, f"refused at once, not after a timeout ({took:.1f} s)"


def test_switch_load_balancer_ipv6_vip(topo: Topology) -> None:
    topo.nbctl("ls-add", "s1", "--", "ls-add", "s2", "--", "lr-add", "r")
    topo.router_port("r", "s1", "00:00:00:00:ff:01", "fd01::1/64")
    topo.router_port("r", "s2", "00:00:00:00:ff:02", "fd02::1/64")
    a = topo.vm("s1", "a", "00:00:00:00:01:01", ip6="fd01::11/64", gw6="fd01::1")
    b = topo.vm("s2", "b", "00:00:00:00:02:01", ip6="fd02::11/64", gw6="fd02::1")
    topo.wait_up()
    b.ns.tcp_server(8080, "backend-b6", ipv6=True)
    topo.nbctl("lb-add", "lb6", "[fd99::1]:80", "[fd02::11]:8080", "tcp", "--", "ls-lb-add", "s1", "lb6")
    topo.sync()
    rc, text, err = a.ns.tcp_connect("fd99::1", 80, tries=3)
    assert rc == 0 and text.strip() == "backend-b6", (rc, text, err)
