"""Parity with the reference ovn-northd for DHCPv4/DHCPv6 options and DNS records corners.

DHCPv4: static routes (both encodings), search lists, server lists, no router, MTU, PXE
options, unknown option names; DHCPv6: stateless, server lists, unknown names; ports whose
addresses fall outside the cidr, ports with several IPs and entries.  DNS: IPv4 and IPv6
records, several names per IP, PTR records, rows on several switches, a switch whose ports
have no addresses.  The DHCP/DNS stages and the ``ls_out_acl`` reply flows must equal the
reference's (0 missing, 0 extra), and so must SB DHCP_Options, DHCPv6_Options and DNS.

(OVN 23.03 has neither ``options:dhcp_disabled`` nor a DNS ``options`` column: the NB schema
7.0.0 has no such column, see ``man ovn-nb``.)
"""

from __future__ import annotations

from collections.abc import Sequence

from ovn_northd_py.devtools.servers import nbctl

DHCP_STAGES = ("ls_in_dhcp_options", "ls_in_dhcp_response", "ls_out_acl")
DNS_STAGES = ("ls_in_dns_lookup", "ls_in_dns_response", "ls_out_acl")
SB_TABLES = ("DHCP_Options", "DHCPv6_Options", "DNS")
V4_BASE = '"server_id"="10.0.0.254" "server_mac"="00:00:00:00:ff:01" "lease_time"="3600"'


def _txn(remote: str, *commands: Sequence[str]) -> str:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + list(c)
    return nbctl(remote, *args)


def _create(remote: str, table: str, *columns: str) -> str:
    return nbctl(remote, "create", table, *columns).strip()


def _vif(sw: str, name: str, *addresses: str) -> list[list[str]]:
    return [["lsp-add", sw, name], ["lsp-set-addresses", name, *addresses]]


V4_ROWS = {
    "routes": '"router"="10.0.0.254" "classless_static_route"="{30.0.0.0/24,10.0.0.10, 0.0.0.0/0,10.0.0.1}" '
              '"ms_classless_static_route"="{30.0.0.0/24,10.0.0.10}"',
    "lists": '"dns_server"="{8.8.8.8, 8.8.4.4,1.1.1.1}" "domain_search_list"="\\"a.org,b.a.org,c.org\\"" '
             '"domain_name"="\\"a.org\\"" "ntp_server"="{1.2.3.4,5.6.7.8}"',
    "norouter": '"mtu"="1442" "T1"="1000" "T2"="2000" "ip_forward_enable"="1" "default_ttl"="64"',
    "pxe": '"next_server"="10.0.0.9" "bootfile_name"="\\"pxelinux.0\\"" "bootfile_name_alt"="\\"ipxe.efi\\"" '
           '"tftp_server"="\\"tftp.a.org\\"" "tftp_server_address"="10.0.0.8" "wpad"="\\"http://w/p.dat\\"" '
           '"path_prefix"="\\"/tftp\\"" "hostname"="\\"fromrow\\""',
    "unknown": '"foo"="bar" "router"="10.0.0.254" "broadcast_address"="10.0.0.255" "netbios_node_type"="2"',
    "empty_values": '"router"="" "dns_server"="{}" "mtu"="abc"',
}
V6_ROWS = {
    "stateful": '"server_id"="00:00:00:00:ff:02" "dns_server"="{fd00::53, fd00::54}" '
                '"domain_search"="\\"a.org\\""',
    "stateless": '"server_id"="00:00:00:00:ff:03" "dhcpv6_stateless"="true" "dns_server"="{fd00::53}"',
    "stateless_false": '"server_id"="00:00:00:00:ff:04" "dhcpv6_stateless"="false" "foo"="bar"',
    "upper_mac": '"server_id"="0A:00:00:00:FF:05"',
}


def build_dhcp_nb(remote: str) -> None:
    cmds: list[list[str]] = [["ls-add", "sw0"], ["ls-add", "sw1"]]
    # Ports with one IP, several IPs, several entries, IPs outside the cidr, IPv6 only.
    ports = {
        "one": ["00:00:00:00:00:01 10.0.0.1 fd00::1"],
        "many": ["00:00:00:00:00:02 192.168.0.2 10.0.0.2 10.0.0.22 fe80::2 fd00::2 fd00::22"],
        "entries": ["00:00:00:00:00:03 10.0.0.3 fd00::3", "00:00:00:00:00:13 10.0.0.13", "00:00:00:00:00:23 fd00::23"],
        "outside": ["00:00:00:00:00:04 192.168.0.4 fd01::4"],
        "v6only": ["00:00:00:00:00:05 fd00::5"],
        "v4only": ["00:00:00:00:00:06 10.0.0.6"],
        "prefix": ["00:00:00:00:00:07 10.0.0.7/24 fd00::7/64"],
        "macs": ["00:00:00:00:00:08"],
    }
    for name, addrs in ports.items():
        cmds += _vif("sw0", name, *addrs)
    cmds += [["acl-add", "sw0", "to-lport", "100", "ip", "allow-related"]]
    _txn(remote, *cmds)
    v4 = {k: _create(remote, "dhcp_options", "cidr=10.0.0.0/24", f"options={{{V4_BASE} {v}}}")
          for k, v in V4_ROWS.items()}
    v6 = {k: _create(remote, "dhcp_options", 'cidr="fd00::/64"', f"options={{{v}}}") for k, v in V6_ROWS.items()}
    narrow = _create(remote, "dhcp_options", "cidr=10.0.0.0/30", f"options={{{V4_BASE}}}")
    narrow6 = _create(remote, "dhcp_options", 'cidr="fd00::/126"', 'options={"server_id"="00:00:00:00:ff:06"}')
    # Each port gets every v4 shape in turn on a copy of itself on sw1.
    cmds = []
    names = list(ports)
    for i, (key, row) in enumerate(v4.items()):
        for name in names:
            copy = f"{name}-{key}"
            mac = f"00:00:00:{i + 1:02x}:00:{names.index(name) + 1:02x}"
            addrs = [" ".join([mac, *a.split()[1:]]) for a in ports[name]]
            cmds += _vif("sw1", copy, *addrs)
            cmds.append(["set", "logical_switch_port", copy, f"dhcpv4_options={row}"])
            v6key = list(v6)[i % len(v6)]
            cmds.append(["set", "logical_switch_port", copy, f"dhcpv6_options={v6[v6key]}"])
    cmds += [["set", "logical_switch_port", "one", f"dhcpv4_options={narrow}", f"dhcpv6_options={narrow6}"],
             ["set", "logical_switch_port", "many", f"dhcpv4_options={narrow}", f"dhcpv6_options={narrow6}"],
             ["set", "logical_switch_port", "many-pxe", "options:hostname=port-host"],
             ["set", "logical_switch_port", "one-routes", 'options:hostname="h.a.org"'],
             ["set", "logical_switch_port", "v6only-lists", "options:hostname=v6host"],
             ["set", "logical_switch_port", "outside", f"dhcpv6_options={v6['stateless']}"],
             ["set", "logical_switch_port", "v4only", f"dhcpv6_options={v6['stateless']}"],
             ["set", "logical_switch_port", "macs", f"dhcpv4_options={v4['routes']}",
              f"dhcpv6_options={v6['stateless']}"]]
    _txn(remote, *cmds)


def build_dns_nb(remote: str) -> None:
    cmds: list[list[str]] = [["ls-add", s] for s in ("sw0", "sw1", "sw2", "sw3")]
    cmds += _vif("sw0", "vm1", "00:00:00:00:00:01 10.0.0.1 fd00::1")
    cmds += _vif("sw1", "vm2", "00:00:00:00:00:02 10.0.0.2")
    cmds += _vif("sw2", "nothing") + _vif("sw2", "unk", "unknown") + _vif("sw2", "maconly", "00:00:00:00:02:01")
    cmds += [["acl-add", "sw1", "to-lport", "100", "ip", "allow-related"]]
    _txn(remote, *cmds)
    both = _create(remote, "dns", 'records={"vm1.ovn.org"="10.0.0.1 fd00::1", "vm1"="10.0.0.1", '
                   '"alias.ovn.org"="10.0.0.1", "v6.ovn.org"="fd00::1 fd00::2", "MiXeD.Org"="10.0.0.9"}')
    ptr = _create(remote, "dns", 'records={"1.0.0.10.in-addr.arpa"="vm1.ovn.org", '
                  '"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa"="vm1.ovn.org"}',
                  "external_ids:owner=me")
    other = _create(remote, "dns", 'records={"vm2.ovn.org"="10.0.0.2"}')
    _txn(remote, ["add", "logical_switch", "sw0", "dns_records", both, ptr],
         ["add", "logical_switch", "sw1", "dns_records", both, other],
         ["add", "logical_switch", "sw2", "dns_records", ptr],
         ["add", "logical_switch", "sw3", "dns_records", other])


def _assert_stages(r, stages: tuple[str, ...]) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    bad = [t for t in SB_TABLES if not r.tables[t].ok]
    assert not bad, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in stages:
        assert by_stage[name].ok, f"{name}\n" + r.report()
    assert flows.extra == 0 and flows.missing == 0, r.report()


def test_dhcp_corners_parity(parity_run) -> None:
    r = parity_run(build_dhcp_nb, tables=("Logical_Flow", *SB_TABLES))
    _assert_stages(r, DHCP_STAGES)
    assert {s.stage: s for s in r.flows.stages}["ls_in_dhcp_options"].ref_count > 100, r.report()


def test_dns_corners_parity(parity_run) -> None:
    r = parity_run(build_dns_nb, tables=("Logical_Flow", *SB_TABLES))
    _assert_stages(r, DNS_STAGES)
    assert r.tables["DNS"].ref_count == 3, r.report()
