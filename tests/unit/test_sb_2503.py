"""OVN 25.03's SB rows (its profile's behaviours), as the 25.03 reference writes them (mixed 10/5/5);
the 23.03 profile keeps 23.03's (valid against the 23.03 schema)."""

from __future__ import annotations

from types import SimpleNamespace

from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03
from ovn_northd_py.sync.dhcp_codes import DHCPV6_OPTIONS, DHCPV6_OPTIONS_2503
from ovn_northd_py.sync.globals import global_options
from ovn_northd_py.sync.ports import pb_mac
from ovn_northd_py.sync.rbac import PERMISSIONS_2303, PERMISSIONS_2503


def test_sb_global_options_25_03() -> None:
    g = global_options(None, False, OVN_25_03)
    assert g.as_dict()["northd_internal_version"] == "25.03.0-20.41.0-77.6"
    assert dict(g.sb_only) == {"arp_ns_explicit_output": "true", "register_consolidation": "true"}
    old = global_options(None, False, OVN_23_03)
    assert old.as_dict()["northd_internal_version"] == "23.03.1-20.27.0-70.6"
    assert old.sb_only == ()


def test_rbac_and_dhcpv6_codes_25_03() -> None:
    assert PERMISSIONS_2503["BFD"] == (["chassis_name"], False, ["status"])
    assert PERMISSIONS_2503["IGMP_Group"] == (["chassis_name"], True, ["address", "chassis", "datapath", "ports",
                                                                         "protocol"])
    assert PERMISSIONS_2503["FDB"][2][-1] == "timestamp"
    assert PERMISSIONS_2303["BFD"] == ([""], False, ["status"])
    assert ("fqdn", 39, "domain") in DHCPV6_OPTIONS_2503 and ("bootfile_name", 59, "str") in DHCPV6_OPTIONS_2503
    assert not {n for n, _, _ in DHCPV6_OPTIONS} & {n for n, _, _ in DHCPV6_OPTIONS_2503}


def test_router_port_mac_with_prefix_length_25_03() -> None:
    nb = SimpleNamespace(mac="00:00:00:01:00:01", networks=["50.0.0.1", "10.0.0.1/8", "fd00::1"])
    p = SimpleNamespace(kind="lrp", mac=["00:00:00:01:00:01 50.0.0.1 10.0.0.1/8 fd00::1"], nb=nb)
    assert pb_mac(p, OVN_25_03) == ["00:00:00:01:00:01 50.0.0.1/32 10.0.0.1/8 fd00::1/128"]  # type: ignore[arg-type]
    assert pb_mac(p, OVN_23_03) == p.mac  # type: ignore[arg-type]
    lsp = SimpleNamespace(kind="lsp", mac=["00:00:00:01:00:02 10.0.0.2"])
    assert pb_mac(lsp, OVN_25_03) == lsp.mac  # type: ignore[arg-type]


def test_router_port_mac_as_parsed_25_03() -> None:
    # Reference: tests/parity/test_core_tables.py edge NB (an upper-case MAC) and
    # test_input_corners.py (a network 300.1.1.1/24, read modulo 256).
    nb = SimpleNamespace(mac="00:00:00:00:FF:02", networks=["300.1.1.1/24", "FD00::0:1/64"])
    p = SimpleNamespace(kind="lrp", mac=["00:00:00:00:FF:02 300.1.1.1/24 FD00::0:1/64"], nb=nb)
    assert pb_mac(p, OVN_25_03) == ["00:00:00:00:ff:02 44.1.1.1/24 fd00::1/64"]  # type: ignore[arg-type]
    assert pb_mac(p, OVN_23_03) == p.mac  # type: ignore[arg-type]
