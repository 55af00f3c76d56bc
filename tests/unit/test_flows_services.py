"""Unit tests of the switch services builders' parsers (ARP proxy lists, VIPs, DHCP options, health checks).

Expected values are the reference's (ovn-northd 23.03) observed output.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from ovn_northd_py.flows.lb_health import svc_monitor_src_ips
from ovn_northd_py.flows.ls_arp_rsp import inet_pton_text, scan_ip_list
from ovn_northd_py.flows.ls_dhcp import dhcp4_config, dhcp6_config


@pytest.mark.parametrize(
    ("text", "ips"),
    [
        ("10.0.0.101 10.0.0.100 10.1.0.0/24 bogus", ["10.0.0.101", "10.0.0.100", "10.1.0.0"]),
        ("10.0.0.5 fd00::9 10.0.0.6", ["10.0.0.5", "10.0.0.6"]),
        ("010.0.0.8 10.0.0.9", ["10.0.0.8", "10.0.0.9"]),
        ("10.0.0.0/255.255.255.0 10.0.0.1", ["10.0.0.0", "10.0.0.1"]),
        ("10.0.0.7/33 10.0.0.2", []),
        ("10.0.0.300", ["10.0.0.44"]),
        ("10.0.0.4x 10.0.0.5", ["10.0.0.4"]),
        ("10.0.0.50,10.0.0.51", ["10.0.0.50"]),
        (" 10.0.0.3  10.0.0.4 ", ["10.0.0.3", "10.0.0.4"]),
        ("bogus 10.0.0.100", []),
        ("fd00::9", []),
    ],
)
def test_arp_proxy_list(text: str, ips: list[str]) -> None:
    assert scan_ip_list(text) == ips


@pytest.mark.parametrize(
    ("text", "family"),
    [("10.0.0.10", "4"), ("FD00::0:13", "6"), ("010.0.0.14", None), (" 10.0.0.15", None), ("10.0.0.11 ", None),
     ("10.0.0.13/24", None), ("10.0.0.300", None)],
)
def test_virtual_ip(text: str, family: str | None) -> None:
    assert inet_pton_text(text) == family


def _row(cidr: str, **options: str) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=7), cidr=cidr, options=options)


def _port(**options: str) -> SimpleNamespace:
    return SimpleNamespace(nb=SimpleNamespace(options=options))


def test_dhcp4_options_sorted_netmask_first_hostname_from_port() -> None:
    row = _row(" 10.0.0.5/24", server_id="010.0.0.254", server_mac="zz", lease_time="x", netmask="1",
               hostname='"h"', T1="5", offerip="1.1.1.1")
    cfg = dhcp4_config(row, _port(hostname="myhost"))  # type: ignore[arg-type]
    assert cfg is not None
    assert cfg.options == (("T1", "5"), ("hostname", "myhost"), ("lease_time", "x"), ("netmask", "255.255.255.0"),
                           ("netmask", "1"), ("offerip", "1.1.1.1"), ("server_id", "010.0.0.254"))
    assert (cfg.server_id, cfg.server_mac, str(cfg.cidr)) == ("010.0.0.254", "zz", "10.0.0.5/24")
    assert cfg.hint == "00000000"


@pytest.mark.parametrize(
    "options",
    [{"server_mac": "m", "lease_time": "1"}, {"server_id": "i", "lease_time": "1"}, {"server_id": "i", "server_mac": "m"}],
)
def test_dhcp4_needs_server_id_mac_and_lease_time(options: dict[str, str]) -> None:
    assert dhcp4_config(_row("10.0.0.0/24", **options), _port()) is None  # type: ignore[arg-type]


def test_dhcp4_bad_cidr() -> None:
    ok = {"server_id": "i", "server_mac": "m", "lease_time": "1"}
    assert dhcp4_config(_row("10.0.0.0/33", **ok), _port()) is None  # type: ignore[arg-type]
    assert dhcp4_config(_row("fd00::/64", **ok), _port()) is None  # type: ignore[arg-type]


def test_dhcp6() -> None:
    cfg = dhcp6_config(_row("FD00::0/64", server_id="00:00:00:00:FF:02", dhcpv6_stateless="TRUE", foo="bar"))
    assert cfg is not None and cfg.stateless
    assert cfg.options == (("foo", "bar"), ("server_id", "00:00:00:00:FF:02"))
    assert cfg.server_lla == "fe80::200:ff:fe00:ff02"
    assert dhcp6_config(_row("fd00::/64", server_id="zz")) is None
    assert dhcp6_config(_row("fd00::/64")) is None


class _Nb:
    def __init__(self, *lbs: SimpleNamespace) -> None:
        self.lbs = {lb.uuid: lb for lb in lbs}

    def rows(self, table: str) -> dict[uuid.UUID, SimpleNamespace]:
        assert table == "Load_Balancer"
        return self.lbs


def _lb(n: int, vips: dict[str, str], mappings: dict[str, str], *hc_vips: str) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=n), vips=vips, ip_port_mappings=mappings,
                           health_check=[SimpleNamespace(vip=v) for v in hc_vips])


def test_svc_monitor_src_ips() -> None:
    lb0 = _lb(1, {"10.0.0.100:80": "10.0.0.1:80,10.0.0.3:80,10.0.0.9:80", "[fd00::100]:80": "[fd00::1]:80"},
              {"10.0.0.1": "vm1:10.0.0.200", "10.0.0.3": "vm3:10.0.0.203", "[fd00::1]": "vm1:[fd00::200]"},
              "10.0.0.100:80", "[fd00::100]:80")
    unchecked = _lb(2, {"10.0.0.110:80": "10.0.0.4:80"}, {"10.0.0.4": "vm4:10.0.0.204"})
    other_vip = _lb(3, {"10.0.0.120:80": "10.0.0.5:80"}, {"10.0.0.5": "vm5:10.0.0.205"}, "10.0.0.121:80")
    got = svc_monitor_src_ips(_Nb(lb0, unchecked, other_vip))
    lb_key = str(lb0.uuid)
    assert got == {"vm1": (("10.0.0.200", lb_key), ("fd00::200", lb_key)), "vm3": (("10.0.0.203", lb_key),)}
