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

import json
import subprocess
from collections.abc import Sequence

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.parity.stage_names import release_stage_names

DHCP_STAGES = release_stage_names(("ls_in_dhcp_options", "ls_in_dhcp_response", "ls_out_acl"))
DNS_STAGES = release_stage_names(("ls_in_dns_lookup", "ls_in_dns_response", "ls_out_acl"))
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


def test_dhcp_corners_parity(parity_run, parity_profile) -> None:
    r = parity_run(build_dhcp_nb, tables=("Logical_Flow", *SB_TABLES))
    _assert_stages(r, DHCP_STAGES)
    # Non-trivial: (25.03 writes a DHCPv4 discover and request in one flow, 23.03 in two)
    least = 70 if parity_profile.has("dhcp_merged_matches") else 100
    assert {s.stage: s for s in r.flows.stages}["ls_in_dhcp_options"].ref_count > least, r.report()


def test_dns_corners_parity(parity_run) -> None:
    r = parity_run(build_dns_nb, tables=("Logical_Flow", *SB_TABLES))
    _assert_stages(r, DNS_STAGES)
    assert r.tables["DNS"].ref_count == 3, r.report()


def _transact(remote: str, db: str, *ops: dict) -> list:
    """Raw OVSDB operations (columns the host's ovn-nbctl / ovn-sbctl may not know: DNS options)."""
    out = subprocess.run(["ovsdb-client", "transact", remote, json.dumps([db, *ops])],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    return json.loads(out)


def _nb_dns(remote: str, records: dict[str, str], options: dict[str, str] | None = None) -> str:
    row: dict = {"records": ["map", sorted(records.items())]}
    if options is not None:
        row["options"] = ["map", sorted(options.items())]
    return _transact(remote, "OVN_Northbound", {"op": "insert", "table": "DNS", "row": row})[0]["uuid"][1]


def build_dns_small_nb(remote: str) -> None:
    """Two switches, three used DNS rows (one on both), one unused."""
    _txn(remote, ["ls-add", "sw0"], ["ls-add", "sw1"], *_vif("sw0", "vm1", "00:00:00:00:00:01 10.0.0.1"))
    a = _nb_dns(remote, {"vm1.ovn.org": "10.0.0.1", "UP.org": "10.0.0.2"})
    b = _nb_dns(remote, {"x.org": "10.0.0.3"})
    c = _nb_dns(remote, {"y.org": "10.0.0.4"})
    _nb_dns(remote, {"unused.org": "10.0.0.5"})
    _txn(remote, ["add", "logical_switch", "sw0", "dns_records", a, b, c],
         ["add", "logical_switch", "sw1", "dns_records", a])


def _sb_dns(sb: str) -> list[dict]:
    return _transact(sb, "OVN_Southbound", {"op": "select", "table": "DNS", "where": []})[0]["rows"]


def _rows_with(rows: list[dict], name: str) -> dict:
    return next(r for r in rows if name in json.dumps(r["records"]))


def _sb_dns_vandal(with_options: bool):
    """An ``after_settle`` hook editing SB DNS behind northd's back: a foreign row, a duplicate of
    one of northd's (same external_ids), one row deleted, one's records (and, with ``with_options``,
    its ``options:ovn-owned``) changed."""

    def hook(nb_remote: str, sb_remote: str) -> None:
        rows = _sb_dns(sb_remote)
        x, y, up = _rows_with(rows, "x.org"), _rows_with(rows, "y.org"), _rows_with(rows, "UP.org")
        hacked: dict = {"records": ["map", [["hacked.org", "6.6.6.6"]]]}
        if with_options:
            hacked["options"] = ["map", [["ovn-owned", "true"], ["kept", "1"]]]
        _transact(sb_remote, "OVN_Southbound",
                  {"op": "insert", "table": "DNS",
                   "row": {"records": ["map", [["foreign.org", "1.1.1.1"]]], "datapaths": x["datapaths"]}},
                  {"op": "insert", "table": "DNS",
                   "row": {"records": x["records"], "datapaths": x["datapaths"], "external_ids": x["external_ids"]}},
                  {"op": "delete", "table": "DNS", "where": [["_uuid", "==", y["_uuid"]]]},
                  {"op": "update", "table": "DNS", "where": [["_uuid", "==", up["_uuid"]]], "row": hacked})
        for _ in range(3):
            subprocess.run(["ovn-nbctl", f"--db={nb_remote}", "--wait=sb", "sync"], check=True, timeout=60)

    return hook


def test_dns_rows_after_foreign_sb_edits_parity(parity_run, parity_profile) -> None:
    """Foreign inserts, a deletion and edits of SB DNS rows end as the reference's end."""
    hook = _sb_dns_vandal(with_options=parity_profile.has("dns_nb_uuid"))
    r = parity_run(build_dns_small_nb, tables=("DNS",), after_settle=hook)
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.tables["DNS"].ok, r.report()
    assert r.ref_dump is not None
    assert any("UP.org" in json.dumps(row["records"], default=str) for row in r.ref_dump.rows("DNS").values())


def test_dns_sb_row_uuids_as_reference(parity_run, parity_profile) -> None:
    """25.03 (``dns_nb_uuid``): each SB DNS row has its NB row's uuid, as the reference's (both
    sides start from the same NB, so equal uuid sets on both sides are the NB rows' uuids); 23.03:
    random uuids, the NB row named in external_ids:dns_id."""
    r = parity_run(build_dns_small_nb, tables=("DNS",))
    assert r.tables["DNS"].ok and r.tables["DNS"].ref_count == 3, r.report()
    assert r.ref_dump is not None and r.ours_dump is not None
    ref, ours = r.ref_dump.rows("DNS"), r.ours_dump.rows("DNS")
    if parity_profile.has("dns_nb_uuid"):
        assert set(ours) == set(ref)
    else:
        assert not set(ours) & set(ref)
        ids = {row["external_ids"].as_dict()["dns_id"] for row in ours.values()}
        assert ids == {row["external_ids"].as_dict()["dns_id"] for row in ref.values()}


def test_dns_ovn_owned_option_parity(parity_run, parity_profile) -> None:
    """NB ``options:ovn-owned`` (true, TRUE, another value, absent) becomes SB ``options:ovn-owned``
    true / false as with the reference."""
    if not parity_profile.has("dns_nb_uuid"):
        pytest.skip("the release's DNS tables have no options column (NB 7.0.0, SB 20.27.0)")

    def build(remote: str) -> None:
        _txn(remote, ["ls-add", "sw0"])
        rows = [_nb_dns(remote, {f"n{i}.org": f"10.0.0.{i}"}, opts)
                for i, opts in enumerate(({"ovn-owned": "true"}, {"ovn-owned": "TRUE"}, {"ovn-owned": "yes"},
                                          {"other": "1"}, None))]
        _txn(remote, ["add", "logical_switch", "sw0", "dns_records", *rows])

    r = parity_run(build, tables=("DNS",))
    assert r.tables["DNS"].ok and r.tables["DNS"].ref_count == 5, r.report()
    assert r.ours_dump is not None
    owned = sorted(row["options"].as_dict()["ovn-owned"] for row in r.ours_dump.rows("DNS").values())
    assert owned == ["false", "false", "false", "true", "true"]
