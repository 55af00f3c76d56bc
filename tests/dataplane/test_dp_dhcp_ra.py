"""Addresses handed out by ovn-controller: DHCPv4, DHCPv6 (stateful) and SLAAC from router
advertisements.  The VMs' interfaces start without addresses."""

from __future__ import annotations

import re
import time
from pathlib import Path

from ovn_northd_py.devtools.dataplane import VM, Topology
from ovn_northd_py.devtools.testing import wait_until


def dhcp_vm(topo: Topology) -> VM:
    topo.nbctl("ls-add", "sw")
    a = topo.vm("sw", "a", "00:00:00:00:01:01", "10.0.0.11/24", "fd00::11/64", configure=False)
    topo.wait_up()
    return a


def test_dhcpv4_lease(topo: Topology) -> None:
    a = dhcp_vm(topo)
    uuid = topo.nbctl("dhcp-options-create", "10.0.0.0/24").strip() or topo.nbctl(
        "--bare", "--columns=_uuid", "find", "DHCP_Options", 'cidr="10.0.0.0/24"').strip()
    topo.nbctl("dhcp-options-set-options", uuid, "lease_time=3600", "router=10.0.0.1", "server_id=10.0.0.1",
               "server_mac=00:00:00:00:ff:01", "--", "lsp-set-dhcpv4-options", "a", uuid)
    topo.sync()
    # busybox udhcpc: -q quit once leased, -n fail if none, -s /bin/true leaves the interface alone
    p = a.ns.exec("busybox", "udhcpc", "-i", a.iface, "-f", "-q", "-n", "-t", "4", "-T", "1", "-s", "/bin/true",
                  check=False, timeout=30)
    out = p.stdout + p.stderr
    assert p.returncode == 0, f"no DHCPv4 lease: {out}"
    m = re.search(r"lease of (\S+) obtained from (\S+), lease time (\d+)", out)
    assert m, out
    assert m.groups() == ("10.0.0.11", "10.0.0.1", "3600"), out


def test_dhcpv6_lease(topo: Topology, tmp_path: Path) -> None:
    a = dhcp_vm(topo)
    uuid = topo.nbctl("dhcp-options-create", "fd00::/64").strip() or topo.nbctl(
        "--bare", "--columns=_uuid", "find", "DHCP_Options", 'cidr="fd00::/64"').strip()
    topo.nbctl("dhcp-options-set-options", uuid, "server_id=00:00:00:00:ff:01", "--",
               "lsp-set-dhcpv6-options", "a", uuid)
    topo.sync()
    # the link-local address the client talks from
    wait_until(lambda: [x for x in a.ns.addresses(a.iface) if x.startswith("fe80")], 10, "a link-local address")
    lease = tmp_path / "dhclient6.leases"
    # -d: stay in the foreground (stopped by PID below); -sf /bin/true: configure nothing
    p = a.ns.popen("dhclient", "-6", "-d", "-1", "-v", "-sf", "/bin/true", "-lf", str(lease),
                   "-pf", str(tmp_path / "dhclient6.pid"), a.iface)
    try:
        wait_until(lambda: lease.exists() and "iaaddr" in lease.read_text(), 20, "a DHCPv6 lease")
    finally:
        _out, err = a.ns.stop(p)
    text = lease.read_text()
    assert re.search(r"iaaddr fd00::11 ", text), f"the port's address is leased: {text}\n{err[-2000:]}"


def test_slaac_from_router_advertisements(topo: Topology) -> None:
    topo.nbctl("ls-add", "s1", "--", "lr-add", "r")
    lrp = topo.router_port("r", "s1", "00:00:00:00:ff:01", "10.1.0.1/24", "fd01::1/64")
    topo.nbctl("set", "Logical_Router_Port", lrp, "ipv6_ra_configs:address_mode=slaac")
    a = topo.vm("s1", "a", "00:00:00:00:01:01", "10.1.0.11/24", configure=False,
                addresses="00:00:00:00:01:01 10.1.0.11")
    topo.wait_up()
    eui64 = "fd01::200:ff:fe00:101/64"

    def autoconfigured(timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if eui64 in a.ns.addresses(a.iface):
                return True
            time.sleep(0.2)
        return False

    if not autoconfigured(4):
        # the kernel's solicitations may all have gone out before the port was bound: solicit again
        a.ns.exec("ip", "link", "set", a.iface, "down")
        a.ns.exec("ip", "link", "set", a.iface, "up")
        autoconfigured(15)
    assert eui64 in a.ns.addresses(a.iface), a.ns.exec("ip", "-6", "addr", "show", "dev", a.iface).stdout
    routes = a.ns.exec("ip", "-6", "route", "show", "default").stdout
    assert "fe80::200:ff:fe00:ff01" in routes, f"the router's link-local address is the default route: {routes}"
    a.ns.exec("ip", "-6", "addr", "flush", "dev", a.iface, "scope", "global")
    a.ns.exec("ip", "-6", "addr", "add", eui64, "dev", a.iface, "nodad")
    assert a.ns.ping("fd01::1"), "the router answers on the advertised prefix"
