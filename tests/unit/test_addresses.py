"""Address parsers: MACs, IPs/CIDRs, LSP addresses, port_security, LRP networks."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovn_northd_py.northd.addresses import (
    AddressError,
    DynamicAddressRequest,
    EthAddr,
    Ipv4Net,
    Ipv6Net,
    LportAddresses,
    LspAddressKind,
    eui64_address,
    extract_lport_addresses,
    format_ipv6,
    format_mac,
    is_dynamic_address,
    leading_mac,
    parse_ip,
    parse_ip_cidr,
    parse_ipv4,
    parse_ipv4_cidr,
    parse_ipv6,
    parse_ipv6_cidr,
    parse_lrp_networks,
    parse_lsp_address,
    parse_mac,
    parse_port_security,
    solicited_node,
)

# -- MAC ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canon"),
    [
        ("00:00:00:00:00:01", "00:00:00:00:00:01"),
        ("AA:BB:CC:00:05:07", "aa:bb:cc:00:05:07"),
        ("0:0:0:0:5:2", "00:00:00:00:05:02"),
        ("ff:ff:ff:ff:ff:ff", "ff:ff:ff:ff:ff:ff"),
        # As the reference scans a byte (%hhx: strtoull base 16, low 8 bits kept; observed).
        ("50:54:00:00:00:010", "50:54:00:00:00:10"),
        ("100:00:00:00:07:03", "00:00:00:00:07:03"),
        ("0x0:0:0:0:7:1ff", "00:00:00:00:07:ff"),
    ],
)
def test_parse_mac_valid(text: str, canon: str) -> None:
    assert format_mac(parse_mac(text)) == canon
    assert str(EthAddr.parse(text)) == canon


@pytest.mark.parametrize(
    "text",
    [
        "00:00:00:00:05:ZZ",
        "00:00:00:00:07",
        "00:00:00:00:07:04:ee",
        "00-00-00-00-07-01",
        "0x:0:0:0:7:2",
        " 00:00:00:00:00:01",
        "",
    ],
)
def test_parse_mac_invalid_names_token(text: str) -> None:
    with pytest.raises(AddressError) as exc:
        parse_mac(text)
    assert repr(text) in str(exc.value)
    assert isinstance(exc.value, ValueError)


@given(st.integers(min_value=0, max_value=(1 << 48) - 1))
def test_mac_roundtrip(value: int) -> None:
    assert parse_mac(format_mac(value)) == value
    assert EthAddr.parse(str(EthAddr(value))) == EthAddr(value)


def test_eth_addr_properties() -> None:
    assert EthAddr.parse("ff:ff:ff:ff:ff:ff").is_broadcast
    assert EthAddr.parse("01:00:5e:00:00:01").is_multicast
    assert not EthAddr.parse("00:00:5e:00:00:01").is_multicast
    assert EthAddr.parse("02:00:00:00:00:01").is_local
    assert EthAddr(0).is_zero
    assert repr(EthAddr.parse("0a:00:00:00:00:01")) == "EthAddr('0a:00:00:00:00:01')"
    with pytest.raises(AddressError):
        EthAddr(1 << 48)
    with pytest.raises(AddressError):
        EthAddr.from_bytes(b"\x00")


def test_leading_mac() -> None:
    assert str(leading_mac("00:00:00:00:09:03, 10.9.0.3")) == "00:00:00:00:09:03"
    assert str(leading_mac("00:00:00:00:07:04:ee 10.7.0.4")) == "00:00:00:00:07:04"
    assert leading_mac("00:00:00:00:05:ZZ 10.5.0.3") is None
    assert leading_mac("10.5.0.9") is None


# -- EUI-64 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mac", "lla"),
    [
        # all seen in the reference's lr_in_ip_input flows
        ("00:00:00:00:ff:01", "fe80::200:ff:fe00:ff01"),
        ("00:00:00:00:ff:09", "fe80::200:ff:fe00:ff09"),
        ("02:00:00:00:00:01", "fe80::ff:fe00:1"),
    ],
)
def test_eui64_lla(mac: str, lla: str) -> None:
    assert EthAddr.parse(mac).ipv6_lla() == IPv6Address(lla)


def test_eui64_with_prefix() -> None:
    # IPAM dynamic IPv6 in the reference: ipv6_prefix fd06:: + ea:ec:e1:06:00:03
    mac = EthAddr.parse("ea:ec:e1:06:00:03")
    assert format_ipv6(eui64_address(mac, IPv6Address("fd06::"))) == "fd06::e8ec:e1ff:fe06:3"


# -- IP and CIDR ---------------------------------------------------------------


def test_parse_ipv4() -> None:
    assert parse_ipv4("10.0.0.1") == IPv4Address("10.0.0.1")
    assert parse_ipv4("010.7.0.6") == IPv4Address("10.7.0.6")  # decimal, as the reference
    for bad in ("10.5.0.300", "10.0.0", "10.0.0.1.2", "a.b.c.d", "10.0.0.1 ", "-1.0.0.0", ""):
        with pytest.raises(AddressError, match="invalid IPv4"):
            parse_ipv4(bad)


def test_parse_ipv6() -> None:
    assert parse_ipv6("FD39::1") == IPv6Address("fd39::1")
    assert parse_ipv6("::ffff:10.59.0.1") == IPv6Address("::ffff:a3b:1")
    for bad in ("fe80::1%eth0", "1::2::3", "12345::", "fd00::g", "", "10.0.0.1"):
        with pytest.raises(AddressError, match="invalid IPv6"):
            parse_ipv6(bad)


def test_parse_ip_dispatches() -> None:
    assert isinstance(parse_ip("10.0.0.1"), IPv4Address)
    assert isinstance(parse_ip("::1"), IPv6Address)


@pytest.mark.parametrize(
    ("text", "addr", "plen"),
    [
        ("10.0.0.1/24", "10.0.0.1", 24),
        ("50.0.0.1", "50.0.0.1", 32),
        ("10.19.0.1/255.255.255.0", "10.19.0.1", 24),
        ("10.89.0.1/024", "10.89.0.1", 24),
        ("10.39.0.1/0", "10.39.0.1", 0),
        ("10.9.0.5/16", "10.9.0.5", 16),
    ],
)
def test_parse_ipv4_cidr(text: str, addr: str, plen: int) -> None:
    net = parse_ipv4_cidr(text)
    assert net == Ipv4Net(IPv4Address(addr), plen)


@pytest.mark.parametrize(
    "text",
    ["10.8.0.1/33", "10.29.0.1/255.0.255.0", "10.0.0.1/", "10.0.0.1/+24", "10.0.0.1/x", "10.0.0.256/24"],
)
def test_parse_ipv4_cidr_invalid(text: str) -> None:
    with pytest.raises(AddressError) as exc:
        parse_ipv4_cidr(text)
    assert exc.value.token is not None


def test_ipv4_net_derived() -> None:
    net = parse_ipv4_cidr("60.0.0.1/24")
    assert (net.network_s, net.bcast_s, str(net.mask)) == ("60.0.0.0", "60.0.0.255", "255.255.255.0")
    host = parse_ipv4_cidr("50.0.0.1")
    assert host.bcast_s == "50.0.0.1" and host.network_s == "50.0.0.1"
    assert str(net) == "60.0.0.1/24"
    assert net.contains(IPv4Address("60.0.0.77")) and not net.contains(IPv4Address("60.0.1.1"))
    with pytest.raises(AddressError):
        Ipv4Net(IPv4Address("1.2.3.4"), 33)


@pytest.mark.parametrize(
    ("text", "addr", "plen"),
    [
        ("fd00::1/64", "fd00::1", 64),
        ("fd00::9", "fd00::9", 128),
        ("fd29::1/ffff:ffff:ffff:ffff::", "fd29::1", 64),
        ("FD39::1/64", "fd39::1", 64),
    ],
)
def test_parse_ipv6_cidr(text: str, addr: str, plen: int) -> None:
    assert parse_ipv6_cidr(text) == Ipv6Net(IPv6Address(addr), plen)


@pytest.mark.parametrize("text", ["fd09::1/129", "fd00::1/ffff::ffff", "fd00::1/", "fd00::zz/64"])
def test_parse_ipv6_cidr_invalid(text: str) -> None:
    with pytest.raises(AddressError):
        parse_ipv6_cidr(text)


def test_ipv6_net_derived() -> None:
    net = parse_ipv6_cidr("fd05::1/64")
    assert net.network_s == "fd05::"
    assert net.sn_addr_s == "ff02::1:ff00:1"
    assert not net.is_lla and parse_ipv6_cidr("fe80::5/64").is_lla
    assert format_ipv6(solicited_node(IPv6Address("fd06::200:ff:fe00:604"))) == "ff02::1:ff00:604"


def test_parse_ip_cidr_dispatches_on_address_part() -> None:
    assert isinstance(parse_ip_cidr("10.0.0.1/255.255.255.0"), Ipv4Net)
    assert isinstance(parse_ip_cidr("fd00::1/64"), Ipv6Net)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("::ffff:10.59.0.1", "::ffff:10.59.0.1"),  # str(IPv6Address) gives ::ffff:a3b:1
        ("::2:3", "::0.2.0.3"),
        ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ("fe80::200:ff:fe00:ff01", "fe80::200:ff:fe00:ff01"),
    ],
)
def test_format_ipv6_like_reference(text: str, printed: str) -> None:
    assert format_ipv6(IPv6Address(text)) == printed


# -- Logical_Switch_Port.addresses ------------------------------------------------


def test_lsp_static_mixed() -> None:
    a = parse_lsp_address("80:fa:5b:06:72:b7 10.0.0.4 fdaa:15f2:72cf:0:f816:3eff:fe20:3f41 20.0.0.4")
    assert isinstance(a, LportAddresses)
    assert a.kind == "static"
    assert a.ea_s == "80:fa:5b:06:72:b7"
    assert [n.addr_s for n in a.ipv4] == ["10.0.0.4", "20.0.0.4"]
    assert [n.plen for n in a.ipv4] == [32, 32]
    assert [n.addr_s for n in a.ipv6] == ["fdaa:15f2:72cf:0:f816:3eff:fe20:3f41"]
    assert a.ipv6[0].plen == 128


def test_lsp_mac_only_and_whitespace() -> None:
    a = parse_lsp_address("80:fa:5b:06:72:b7")
    assert isinstance(a, LportAddresses) and not a.has_ips
    b = parse_lsp_address("  00:00:00:00:05:06   10.5.0.6  fd05::6 ")
    assert isinstance(b, LportAddresses)
    assert b.ipv4[0].addr_s == "10.5.0.6" and b.ipv6[0].addr_s == "fd05::6"


def test_lsp_with_prefixes() -> None:
    a = parse_lsp_address("00:00:00:00:05:01 10.5.0.1/24 fd05::1/64")
    assert isinstance(a, LportAddresses)
    assert a.ipv4[0].plen == 24 and a.ipv6[0].plen == 64
    b = parse_lsp_address("00:00:00:00:06:01 10.6.0.1/255.255.255.0")
    assert isinstance(b, LportAddresses) and b.ipv4[0].plen == 24


def test_lsp_keywords_case_sensitive() -> None:
    assert parse_lsp_address("unknown") is LspAddressKind.UNKNOWN
    assert parse_lsp_address("router") is LspAddressKind.ROUTER
    assert parse_lsp_address("unknown").kind == "unknown"
    for text in ("UNKNOWN", "Router", "Dynamic", " dynamic"):
        with pytest.raises(AddressError):
            parse_lsp_address(text)


@pytest.mark.parametrize(
    ("text", "mac", "ipv4", "ipv6"),
    [
        ("dynamic", None, None, None),
        ("80:fa:5b:06:72:b7 dynamic", "80:fa:5b:06:72:b7", None, None),
        ("00:00:00:00:06:14   dynamic", "00:00:00:00:06:14", None, None),
        ("dynamic 192.168.0.1", None, "192.168.0.1", None),
        ("dynamic  10.6.0.67", None, "10.6.0.67", None),
        ("dynamic 2001::1", None, None, "2001::1"),
        ("dynamic 192.168.0.1 2001::1", None, "192.168.0.1", "2001::1"),
        ("dynamic 10.6.0.62 10.6.0.63", None, "10.6.0.62", None),  # reference quirk
    ],
)
def test_lsp_dynamic_forms(text: str, mac: str | None, ipv4: str | None, ipv6: str | None) -> None:
    d = parse_lsp_address(text)
    assert isinstance(d, DynamicAddressRequest)
    assert d.kind == "dynamic"
    assert (str(d.mac) if d.mac else None) == mac
    assert (str(d.ipv4) if d.ipv4 else None) == ipv4
    assert (format_ipv6(d.ipv6) if d.ipv6 else None) == ipv6
    assert is_dynamic_address(text)


@pytest.mark.parametrize(
    "text",
    [
        "dynamic ",
        "dynamic foo",
        "dynamic 10.6.0.74/24",
        "dynamic fd06::61 10.6.0.61",
        "dynamic 10.6.0.70 foo",
        "dynamic 10.6.0.71 fd06::71 foo",
        "00:00:00:00:06:0b dynamic 10.6.0.60",
        "00:00:00:00:06:23 dynamic foo",
        "00:00:00:00:06:27 dynamic ",
    ],
)
def test_not_dynamic(text: str) -> None:
    # Observed: the reference assigns no dynamic_addresses for these.
    assert not is_dynamic_address(text)
    with pytest.raises(AddressError):
        parse_lsp_address(text)


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("00:00:00:00:05:ZZ 10.5.0.3", "00:00:00:00:05:ZZ"),
        ("00:00:00:00:05:04 10.5.0.300", "10.5.0.300"),
        ("00:00:00:00:05:05, 10.5.0.5", "00:00:00:00:05:05,"),
        ("00:00:00:00:05:08 10.5.0.8/33", "10.5.0.8/33"),
        ("00:00:00:00:06:02 fd06::2/129", "fd06::2/129"),
        ("10.5.0.9", "10.5.0.9"),
        ("00:00:00:00:08:02 10.8.0.2 foo 10.8.0.22", "foo"),
        ("", ""),
    ],
)
def test_lsp_invalid_names_token(text: str, token: str) -> None:
    with pytest.raises(AddressError) as exc:
        parse_lsp_address(text)
    assert exc.value.token == token
    if token:
        assert repr(token) in str(exc.value)


def test_extract_lenient_like_reference() -> None:
    r = extract_lport_addresses("00:00:00:00:08:02 10.8.0.2 foo 10.8.0.22")
    assert r.error is not None and r.addresses is not None
    assert [n.addr_s for n in r.addresses.ipv4] == ["10.8.0.2"]
    r = extract_lport_addresses("00:00:00:00:08:05 10.8.0.5 fd08::5/129 10.8.0.55")
    assert r.addresses is not None and [n.addr_s for n in r.addresses.ipv4] == ["10.8.0.5"]
    assert r.addresses.ipv6 == ()
    r = extract_lport_addresses("00:00:00:00:09:03, 10.9.0.3")
    assert r.addresses is not None and str(r.addresses.mac) == "00:00:00:00:09:03" and not r.addresses.has_ips
    r = extract_lport_addresses("00:00:00:00:05:ZZ 10.5.0.3")
    assert r.addresses is None and r.error is not None
    ok = extract_lport_addresses("00:00:00:00:08:03 10.8.0.3 fd08::3")
    assert ok.error is None and ok.addresses is not None and len(ok.addresses.ipv6) == 1


# -- port_security ------------------------------------------------------------------


def test_port_security() -> None:
    ps = parse_port_security("00:00:00:00:06:07 10.6.0.7/24, fd06::7/64 10.6.1.0/24")
    assert ps.ea_s == "00:00:00:00:06:07"
    assert [str(n) for n in ps.ipv4] == ["10.6.0.7/24", "10.6.1.0/24"]
    assert [str(n) for n in ps.ipv6] == ["fd06::7/64"]
    assert ps.ipv4[0].bcast_s == "10.6.0.255"
    assert not parse_port_security("80:fa:5b:06:72:b7").has_ips
    assert len(parse_port_security("80:fa:5b:06:72:b7,192.168.1.10").ipv4) == 1


@pytest.mark.parametrize(
    ("text", "token"),
    [("10.0.0.1", "10.0.0.1"), ("00:00:00:00:00:01 10.0.0.1/40", "10.0.0.1/40"), ("", "")],
)
def test_port_security_invalid(text: str, token: str) -> None:
    with pytest.raises(AddressError) as exc:
        parse_port_security(text)
    assert exc.value.token == token


# -- Logical_Router_Port ------------------------------------------------------------


def test_lrp_networks_basic() -> None:
    n = parse_lrp_networks("00:00:00:00:ff:01", ["10.0.0.1/24", "fd00::1/64"])
    assert n.ea_s == "00:00:00:00:ff:01"
    (v4,) = n.ipv4
    assert (v4.addr_s, v4.plen, v4.network_s, v4.bcast_s) == ("10.0.0.1", 24, "10.0.0.0", "10.0.0.255")
    assert [str(x) for x in n.ipv6] == ["fd00::1/64", "fe80::200:ff:fe00:ff01/64"]
    assert n.lla.addr_s == "fe80::200:ff:fe00:ff01"
    assert n.errors == ()


def test_lrp_bare_address_is_host_route() -> None:
    n = parse_lrp_networks("00:00:00:00:ff:02", ["50.0.0.1"])
    assert n.ipv4[0].plen == 32 and n.ipv4[0].bcast_s == "50.0.0.1"
    assert n.ipv6 == (Ipv6Net(IPv6Address("fe80::200:ff:fe00:ff02"), 64),)  # LLA even without IPv6


def test_lrp_lla_appended_last_and_not_deduplicated() -> None:
    n = parse_lrp_networks("00:00:00:00:ff:04", ["fd00::9", "fec0::1/64"])
    assert [x.addr_s for x in n.ipv6] == ["fd00::9", "fec0::1", "fe80::200:ff:fe00:ff04"]
    n = parse_lrp_networks("00:00:00:00:ff:06", ["fe80::200:ff:fe00:ff06/64"])
    assert [x.addr_s for x in n.ipv6] == ["fe80::200:ff:fe00:ff06"] * 2


def test_lrp_bad_networks_are_skipped() -> None:
    n = parse_lrp_networks("00:00:00:00:ff:07", ["10.7.0.1/24", "10.8.0.1/33", "foo", "10.9.0.5/16"])
    assert [str(x) for x in n.ipv4] == ["10.7.0.1/24", "10.9.0.5/16"]
    assert [e.token for e in n.errors] == ["10.8.0.1/33", "foo"]
    assert "10.8.0.1/33" in str(n.errors[0])
    with pytest.raises(AddressError, match="foo"):
        parse_lrp_networks("00:00:00:00:ff:07", ["10.7.0.1/24", "foo"], strict=True)


def test_lrp_only_bad_networks_keeps_port_with_lla() -> None:
    n = parse_lrp_networks("00:00:00:00:ff:a5", ["foo"])
    assert n.ipv4 == () and [x.addr_s for x in n.ipv6] == ["fe80::200:ff:fe00:ffa5"]


def test_lrp_mac() -> None:
    assert parse_lrp_networks(" 00:00:00:00:ff:a1", ["10.0.0.1/24"]).ea_s == "00:00:00:00:ff:a1"
    assert parse_lrp_networks("0:0:0:0:ff:a3", []).ea_s == "00:00:00:00:ff:a3"
    for bad in ("zz:00:00:00:00:08", "00:00:00:00:FF:A2 ", "00:00:00:00:ff:a4/ff:ff:ff:ff:ff:ff"):
        with pytest.raises(AddressError, match="bad 'mac'") as exc:
            parse_lrp_networks(bad, ["10.0.0.1/24"])
        assert exc.value.token == bad


def test_lenient_ipv4_takes_octets_modulo_256():
    from ovn_northd_py.northd.addresses import parse_ipv4

    assert str(parse_ipv4("300.1.1.1", lenient=True)) == "44.1.1.1"
    assert str(parse_ipv4("256.1.1.1", lenient=True)) == "0.1.1.1"


def test_strict_ipv4_still_refuses_octets_above_255():
    import pytest

    from ovn_northd_py.northd.addresses import AddressError, parse_ipv4

    with pytest.raises(AddressError):
        parse_ipv4("256.1.1.1")


def test_lrp_network_read_leniently_is_kept_and_reported():
    from ovn_northd_py.northd.addresses import parse_lrp_networks

    nets = parse_lrp_networks("00:00:00:00:01:01", ["300.1.1.1/24", "10.0.0.1/33"])
    assert [str(n.addr) for n in nets.ipv4] == ["44.1.1.1"]
    assert len(nets.lenient) == 1 and "300.1.1.1/24" in str(nets.lenient[0])
    assert len(nets.errors) == 1 and "10.0.0.1/33" in str(nets.errors[0])


def test_lsp_address_with_octet_above_255_is_read_modulo_256_and_reported():
    from ovn_northd_py.northd.addresses import extract_lport_addresses

    r = extract_lport_addresses("00:00:00:00:00:11 10.9.0.3 999.9.0.4")
    assert r.addresses is not None and [str(n.addr) for n in r.addresses.ipv4] == ["10.9.0.3", "231.9.0.4"]
    assert r.error is not None


def test_lsp_address_token_with_trailing_junk_keeps_its_leading_ipv4():
    from ovn_northd_py.northd.addresses import extract_lport_addresses

    r = extract_lport_addresses("00:00:00:00:00:11 1.2.3.4.5 10.0.0.7")
    assert r.addresses is not None and [str(n.addr) for n in r.addresses.ipv4] == ["1.2.3.4"]
