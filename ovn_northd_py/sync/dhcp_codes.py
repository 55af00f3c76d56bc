"""SB DHCP_Options / DHCPv6_Options: the option codes northd supports.

The table of supported options (name, code, type) as reference ovn-northd 23.03 publishes it
for ovn-controller; read from its SB output.
"""

from __future__ import annotations

from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from .rows import SyncStats, sync_table

DHCPV4_OPTIONS: tuple[tuple[str, int, str], ...] = (
    ("offerip", 0, "ipv4"),
    ("netmask", 1, "ipv4"),
    ("router", 3, "ipv4"),
    ("dns_server", 6, "ipv4"),
    ("log_server", 7, "ipv4"),
    ("lpr_server", 9, "ipv4"),
    ("hostname", 12, "str"),
    ("domain_name", 15, "str"),
    ("swap_server", 16, "ipv4"),
    ("ip_forward_enable", 19, "bool"),
    ("policy_filter", 21, "ipv4"),
    ("default_ttl", 23, "uint8"),
    ("mtu", 26, "uint16"),
    ("broadcast_address", 28, "ipv4"),
    ("router_discovery", 31, "bool"),
    ("router_solicitation", 32, "ipv4"),
    ("arp_cache_timeout", 35, "uint32"),
    ("ethernet_encap", 36, "bool"),
    ("tcp_ttl", 37, "uint8"),
    ("tcp_keepalive_interval", 38, "uint32"),
    ("nis_server", 41, "ipv4"),
    ("ntp_server", 42, "ipv4"),
    ("netbios_name_server", 44, "ipv4"),
    ("netbios_node_type", 46, "uint8"),
    ("lease_time", 51, "uint32"),
    ("server_id", 54, "ipv4"),
    ("T1", 58, "uint32"),
    ("T2", 59, "uint32"),
    ("tftp_server", 66, "host_id"),
    ("bootfile_name", 67, "str"),
    ("domain_search_list", 119, "domains"),
    ("classless_static_route", 121, "static_routes"),
    ("tftp_server_address", 150, "ipv4"),
    ("path_prefix", 210, "str"),
    ("ms_classless_static_route", 249, "static_routes"),
    ("wpad", 252, "str"),
    ("next_server", 253, "ipv4"),
    ("bootfile_name_alt", 254, "str"),
)

DHCPV6_OPTIONS: tuple[tuple[str, int, str], ...] = (
    ("server_id", 2, "mac"),
    ("ia_addr", 5, "ipv6"),
    ("dns_server", 23, "ipv6"),
    ("domain_search", 24, "str"),
)


# ... added by a release with the ``dhcpv6_boot_fqdn`` behaviour (25.03, observed).
DHCPV6_OPTIONS_2503: tuple[tuple[str, int, str], ...] = (
    ("bootfile_name", 59, "str"),
    ("bootfile_name_alt", 254, "str"),
    ("fqdn", 39, "domain"),
)


def sync_dhcp_option_codes(txn: Any, sb: Any, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    v6 = DHCPV6_OPTIONS + DHCPV6_OPTIONS_2503 if profile.has("dhcpv6_boot_fqdn") else DHCPV6_OPTIONS
    for table, opts in (("DHCP_Options", DHCPV4_OPTIONS), ("DHCPv6_Options", v6)):
        desired = {name: {"name": name, "code": code, "type": typ} for name, code, typ in opts}
        sync_table(txn, table, sb.rows(table), lambda r: r.name, desired, stats)
