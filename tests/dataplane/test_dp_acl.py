"""ACLs in the dataplane: drop, allow-related (stateful), port groups and address sets, and port
security."""

from __future__ import annotations

from dp_topologies import two_vms_on_a_switch

from ovn_northd_py.devtools.dataplane import VM, Topology


def test_acl_drop(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)
    b.ns.tcp_server(7000, "hello")
    assert a.ns.ping("10.0.0.12"), "before the ACL"
    topo.nbctl("acl-add", "sw", "to-lport", "1000", 'outport == "b" && icmp4', "drop")
    topo.sync()
    assert not a.ns.ping("10.0.0.12", tries=1), "ICMP to b must be dropped"
    assert a.ns.can_connect("10.0.0.12", 7000), "TCP is not matched by the ACL"
    assert a.ns.ping("fd00::12"), "ICMPv6 is not matched by the ACL"
    topo.nbctl("acl-del", "sw")
    topo.sync()
    assert a.ns.ping("10.0.0.12"), "the ACL is gone"


def test_acl_allow_related(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)
    a.ns.tcp_server(7001, "from-a")
    b.ns.tcp_server(7002, "from-b")
    assert b.ns.can_connect("10.0.0.11", 7001), "inbound to a works before the ACLs"
    topo.nbctl(
        "acl-add", "sw", "from-lport", "1000", 'inport == "a" && ip4', "allow-related", "--",
        "acl-add", "sw", "to-lport", "900", 'outport == "a" && ip4', "drop",
    )
    topo.sync()
    assert a.ns.can_connect("10.0.0.12", 7002), "a's outbound connection and its replies pass"
    assert a.ns.ping("10.0.0.12"), "a's outbound ping and its replies pass"
    assert b.ns.cannot_connect("10.0.0.11", 7001), "a new inbound connection to a is dropped"
    assert not b.ns.ping("10.0.0.11", tries=1), "a new inbound ping to a is dropped"


def three_vms(topo: Topology) -> tuple[VM, VM, VM]:
    """a, b, c on sw; port group pg_dst = [b]; address set as_src = [a]; ICMP from as_src to pg_dst dropped."""
    topo.nbctl("ls-add", "sw")
    a = topo.vm("sw", "a", "00:00:00:00:01:01", "10.0.0.11/24")
    b = topo.vm("sw", "b", "00:00:00:00:01:02", "10.0.0.12/24")
    c = topo.vm("sw", "c", "00:00:00:00:01:03", "10.0.0.13/24")
    topo.wait_up()
    topo.nbctl(
        "pg-add", "pg_dst", "b", "--",
        "create", "Address_Set", "name=as_src", 'addresses="10.0.0.11"', "--",
        "acl-add", "pg_dst", "to-lport", "1000", "outport == @pg_dst && ip4.src == $as_src && icmp4", "drop",
    )
    topo.sync()
    return a, b, c


def test_port_group_acl_with_address_set(topo: Topology) -> None:
    a, _b, c = three_vms(topo)
    assert not a.ns.ping("10.0.0.12", tries=1), "a (in as_src) -> b (in pg_dst) is dropped"
    assert c.ns.ping("10.0.0.12"), "c is not in as_src"
    assert a.ns.ping("10.0.0.13"), "c is not in pg_dst"


def test_address_set_update_reaches_dataplane(topo: Topology) -> None:
    a, _b, c = three_vms(topo)
    assert c.ns.ping("10.0.0.12")
    topo.nbctl("add", "Address_Set", "as_src", "addresses", '"10.0.0.13"')
    topo.sync()
    assert not c.ns.ping("10.0.0.12", tries=1), "c was added to as_src"
    topo.nbctl("remove", "Address_Set", "as_src", "addresses", '"10.0.0.11"')
    topo.sync()
    assert a.ns.ping("10.0.0.12"), "a was removed from as_src"
    assert not c.ns.ping("10.0.0.12", tries=1), "c is still in as_src"


def test_port_group_membership_update_reaches_dataplane(topo: Topology) -> None:
    a, _b, _c = three_vms(topo)
    assert a.ns.ping("10.0.0.13")
    topo.nbctl("pg-set-ports", "pg_dst", "b", "c")
    topo.sync()
    assert not a.ns.ping("10.0.0.13", tries=1), "c joined pg_dst"
    topo.nbctl("pg-set-ports", "pg_dst", "c")
    topo.sync()
    assert a.ns.ping("10.0.0.12"), "b left pg_dst"
    assert not a.ns.ping("10.0.0.13", tries=1), "c is still in pg_dst"


def spoof_reaches(sender: VM, receiver: VM, *, mac: str | None = None, ip: str | None = None) -> int:
    """Frames from ``sender`` with a spoofed source MAC or IP that reach ``receiver`` (ICMP echo)."""
    assert receiver.ip4
    # A static neighbour: the echo request leaves even though ARP (also checked) would fail.
    sender.ns.exec("ip", "neigh", "replace", receiver.ip4, "lladdr", receiver.mac, "dev", sender.iface)
    bpf = f"icmp and ether src {mac}" if mac else f"icmp and src host {ip}"
    cap = receiver.ns.capture(receiver.iface, bpf)
    try:
        if mac:
            sender.ns.exec("ip", "link", "set", sender.iface, "address", mac)
            sender.ns.exec("ping", "-c2", "-i0.2", "-W1", "-n", receiver.ip4, check=False)
        else:
            sender.ns.exec("ip", "addr", "add", f"{ip}/32", "dev", sender.iface)
            sender.ns.exec("ping", "-c2", "-i0.2", "-W1", "-n", "-I", str(ip), receiver.ip4, check=False)
    finally:
        if mac:
            sender.ns.exec("ip", "link", "set", sender.iface, "address", sender.mac)
        else:
            sender.ns.exec("ip", "addr", "del", f"{ip}/32", "dev", sender.iface, check=False)
    return len(receiver.ns.frames(cap))


def test_port_security_drops_spoofed_mac_and_ip(topo: Topology) -> None:
    topo.nbctl("ls-add", "sw")
    a = topo.vm("sw", "a", "00:00:00:00:01:01", "10.0.0.11/24", port_security="00:00:00:00:01:01 10.0.0.11")
    b = topo.vm("sw", "b", "00:00:00:00:01:02", "10.0.0.12/24")
    c = topo.vm("sw", "c", "00:00:00:00:01:03", "10.0.0.13/24")  # no port security: the control
    topo.wait_up()
    assert a.ns.ping("10.0.0.12"), "a's own addresses pass"
    assert spoof_reaches(c, b, mac="00:00:00:00:0c:0c") > 0, "control: without port security a spoofed MAC passes"
    assert spoof_reaches(c, b, ip="10.0.0.99") > 0, "control: without port security a spoofed IP passes"
    assert spoof_reaches(a, b, mac="00:00:00:00:0a:0a") == 0, "spoofed source MAC from a port-secured port"
    assert spoof_reaches(a, b, ip="10.0.0.98") == 0, "spoofed source IP from a port-secured port"
    assert a.ns.ping("10.0.0.12"), "a still works with its own addresses"


def test_acl_reject_refuses(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)
    b.ns.tcp_server(7000, "hello")
    topo.nbctl("acl-add", "sw", "to-lport", "1000", 'outport == "b" && tcp.dst == 7000', "reject")
    topo.sync()
    rc, text, err = a.ns.tcp_connect("10.0.0.12", 7000, timeout=3)
    assert rc != 0 and "refused" in err, f"reject answers with a TCP reset: {rc} {text!r} {err!r}"
    assert a.ns.ping("10.0.0.12"), "only TCP port 7000 is rejected"


def test_ipv6_address_set_acl(topo: Topology) -> None:
    a, _b = two_vms_on_a_switch(topo)
    topo.nbctl(
        "create", "Address_Set", "name=as6", 'addresses="fd00::11"', "--",
        "acl-add", "sw", "to-lport", "1000", 'outport == "b" && ip6.src == $as6 && icmp6', "drop",
    )
    topo.sync()
    assert not a.ns.ping("fd00::12", tries=1), "a's IPv6 address is in as6"
    assert a.ns.ping("10.0.0.12"), "IPv4 is not matched"
    topo.nbctl("set", "Address_Set", "as6", 'addresses="fd00::99"')
    topo.sync()
    assert a.ns.ping("fd00::12"), "a left as6"


def test_port_group_address_set_follows_membership(topo: Topology) -> None:
    """``$pg_src_ip4``: the address set northd derives from a port group's addresses."""
    topo.nbctl("ls-add", "sw")
    a = topo.vm("sw", "a", "00:00:00:00:01:01", "10.0.0.11/24")
    topo.vm("sw", "b", "00:00:00:00:01:02", "10.0.0.12/24")
    c = topo.vm("sw", "c", "00:00:00:00:01:03", "10.0.0.13/24")
    topo.wait_up()
    topo.nbctl(
        "pg-add", "pg_src", "a", "--",
        "acl-add", "sw", "to-lport", "1000", 'outport == "b" && ip4.src == $pg_src_ip4 && icmp4', "drop",
    )
    topo.sync()
    assert not a.ns.ping("10.0.0.12", tries=1), "a is in pg_src"
    assert c.ns.ping("10.0.0.12"), "c is not"
    topo.nbctl("pg-set-ports", "pg_src", "c")
    topo.sync()
    assert a.ns.ping("10.0.0.12"), "a left pg_src"
    assert not c.ns.ping("10.0.0.12", tries=1), "c joined pg_src"
