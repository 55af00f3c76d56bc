"""NAT in the dataplane: SNAT on a gateway router, SNAT and a floating IP (dnat_and_snat) on a
distributed router's gateway port.  The external host has no route back to the inside: only
translated traffic can return, and its TCP server answers with the peer address it sees."""

from __future__ import annotations

from ovn_northd_py.devtools.dataplane import VM, Topology


def nat_topology(topo: Topology, *, gateway_router: bool) -> tuple[VM, VM, VM]:
    """s1 (a 10.1.0.11, b 10.1.0.12) -- r -- ext (e 172.16.0.100, answering port 7000)."""
    topo.nbctl("ls-add", "s1", "--", "ls-add", "ext", "--", "lr-add", "r")
    if gateway_router:
        topo.nbctl("set", "Logical_Router", "r", "options:chassis=hv1")
    topo.router_port("r", "s1", "00:00:00:00:ff:01", "10.1.0.1/24")
    lrp = topo.router_port("r", "ext", "00:00:00:00:ff:02", "172.16.0.1/24")
    if not gateway_router:
        topo.nbctl("lrp-set-gateway-chassis", lrp, "hv1", "20")
    a = topo.vm("s1", "a", "00:00:00:00:01:01", "10.1.0.11/24", gw4="10.1.0.1")
    b = topo.vm("s1", "b", "00:00:00:00:01:02", "10.1.0.12/24", gw4="10.1.0.1")
    e = topo.vm("ext", "e", "00:00:00:00:0e:01", "172.16.0.100/24")  # no route to 10.1.0.0/24
    topo.wait_up()
    e.ns.tcp_server(7000)
    return a, b, e


def peer_seen_by(client: VM, host: str, port: int = 7000) -> str:
    rc, text, err = client.ns.tcp_connect(host, port, tries=3)
    assert rc == 0, f"{client.name} -> {host}:{port} failed: {err.strip()}"
    return text.strip()


def test_gateway_router_snat(topo: Topology) -> None:
    a, b, e = nat_topology(topo, gateway_router=True)
    assert a.ns.cannot_connect("172.16.0.100", 7000), "without SNAT the reply has no way back"
    topo.nbctl("lr-nat-add", "r", "snat", "172.16.0.50", "10.1.0.0/24")
    topo.sync()
    assert peer_seen_by(a, "172.16.0.100") == "172.16.0.50"
    assert peer_seen_by(b, "172.16.0.100") == "172.16.0.50"
    assert a.ns.ping("172.16.0.100"), "ICMP is translated too"
    assert not e.ns.ping("10.1.0.11", tries=1), "the inside stays unreachable from outside"


def test_distributed_router_snat_and_floating_ip(topo: Topology) -> None:
    a, b, e = nat_topology(topo, gateway_router=False)
    topo.nbctl(
        "lr-nat-add", "r", "snat", "172.16.0.50", "10.1.0.0/24", "--",
        "lr-nat-add", "r", "dnat_and_snat", "172.16.0.60", "10.1.0.12",
    )
    topo.sync()
    assert peer_seen_by(a, "172.16.0.100") == "172.16.0.50", "a leaves through the gateway port's SNAT"
    assert peer_seen_by(b, "172.16.0.100") == "172.16.0.60", "b leaves with its floating IP"
    b.ns.tcp_server(7001)
    assert peer_seen_by(e, "172.16.0.60", 7001) == "172.16.0.100", "the floating IP reaches b"
    assert e.ns.ping("172.16.0.60")
    assert e.ns.cannot_connect("172.16.0.50", 7001), "the SNAT address is not a floating IP"
