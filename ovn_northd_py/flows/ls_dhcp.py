"""Native DHCP: ``ls_in_dhcp_options`` and ``ls_in_dhcp_response`` (fallbacks in :mod:`.defaults`).

Observed on the reference (23.03), checked against ``man ovn-northd`` / ``man ovn-nb``:

* a port gets DHCPv4 flows from its ``dhcpv4_options`` row when the row's ``cidr`` is an
  IPv4 prefix (leading blanks allowed) and its options have ``server_id``, ``server_mac``
  and ``lease_time`` (any values: they are printed as written); for each addresses entry
  (:mod:`.lsp_addrs`) whose IPv4 addresses include one inside the prefix, the first such
  one is offered.  ``put_dhcp_opts`` lists ``offerip`` then, sorted by name, the netmask of
  the cidr and every option but ``server_mac`` (a ``netmask`` option is listed as well,
  after the computed one); the port's ``options:hostname`` replaces the ``hostname`` option;
* DHCPv6 likewise from ``dhcpv6_options``: an IPv6 ``cidr`` and a ``server_id`` that is a
  MAC; the first IPv6 address of the entry inside the prefix is the ``ia_addr`` (left out
  when ``dhcpv6_stateless`` is true, any case); the options are listed sorted, without
  ``dhcpv6_stateless``; replies come from the EUI-64 link-local address of ``server_id``;
* the flows' stage-hint is the DHCP_Options row (they are still the port's, for
  incremental processing);
* no flows for disabled ports or router-type ports;
* an ``external`` port gets them only when it has an HA chassis group and its switch has
  localnet ports: one copy per localnet port, matching on ``inport == "<localnet>"`` and
  only where the external port is claimed (``is_chassis_resident``).

The priority-34000 ``ls_out_acl`` flows that let DHCP replies through belong to the ACL
stages (they depend on the switch's stateful ACLs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..lflow.stages import LS_IN_DHCP_OPTIONS, LS_IN_DHCP_RESPONSE
from ..lflow.table import FlowTable
from ..northd.addresses import (
    AddressError,
    EthAddr,
    Ipv4Net,
    Ipv6Net,
    LportAddresses,
    parse_ipv4_cidr,
    parse_ipv6_cidr,
)
from ..northd.model import Port
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .copp import copp_meter
from .dhcp_relay import switch_relays_dhcp
from .lsp_addrs import lsp_addresses
from .owners import port_owner
from .registers import REGBIT_DHCP_OPTS_RESULT

DHCPV4_MATCH: Final = "udp.src == 68 && udp.dst == 67"
DHCPV6_MATCH: Final = "ip6.dst == ff02::1:2 && udp.src == 546 && udp.dst == 547"
LOCAL_REPLY: Final = "outport = inport; flags.loopback = 1; output;"


@dataclass(frozen=True, slots=True)
class Dhcp4:
    """A usable DHCPv4 options row: its prefix and what the flows print."""

    cidr: Ipv4Net
    server_id: str
    server_mac: str
    options: tuple[tuple[str, str], ...]  # (name, value) for put_dhcp_opts, after offerip
    hint: str  # the flows' stage-hint: the DHCP_Options row


@dataclass(frozen=True, slots=True)
class Dhcp6:
    cidr: Ipv6Net
    server_id: str  # as written
    server_lla: str
    stateless: bool
    options: tuple[tuple[str, str], ...]
    hint: str


def _sorted_options(opts: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(opts, key=lambda kv: kv[0]))  # stable: a computed value stays first


def dhcp4_config(row: Any, port: Port) -> Dhcp4 | None:
    """The DHCPv4 configuration of ``port`` from its ``dhcpv4_options`` row, or None if unusable."""
    try:
        cidr = parse_ipv4_cidr(row.cidr.lstrip())
    except AddressError:
        return None
    opts = dict(row.options)
    server_id, server_mac = opts.get("server_id"), opts.get("server_mac")
    if server_id is None or server_mac is None or "lease_time" not in opts:
        return None
    hostname = port.nb.options.get("hostname")
    if hostname is not None:
        opts["hostname"] = hostname
    listed = [("netmask", str(cidr.mask))] + [(k, v) for k, v in opts.items() if k != "server_mac"]
    return Dhcp4(cidr, server_id, server_mac, _sorted_options(listed), hint(str(row.uuid)))


def dhcp6_config(row: Any) -> Dhcp6 | None:
    """The DHCPv6 configuration from a ``dhcpv6_options`` row, or None if unusable."""
    try:
        cidr = parse_ipv6_cidr(row.cidr.lstrip())
    except AddressError:
        return None
    opts = dict(row.options)
    server_id = opts.get("server_id")
    if server_id is None:
        return None
    try:
        lla = EthAddr.parse(server_id).ipv6_lla()
    except AddressError:
        return None
    stateless = opts.get("dhcpv6_stateless", "").lower() == "true"
    listed = [(k, v) for k, v in opts.items() if k != "dhcpv6_stateless"]
    return Dhcp6(cidr, server_id, Ipv6Net(lla).addr_s, stateless, _sorted_options(listed), hint(str(row.uuid)))


def _opts_text(first: list[tuple[str, str]], opts: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in (*first, *opts))


def dhcp_inports(port: Port) -> list[tuple[str, str]] | None:
    """(inport, extra match) pairs the port's DHCP flows are written for; None: no DHCP flows."""
    if port.kind != "lsp" or not port.enabled or port.is_router_lsp:
        return None
    if port.sb_type != "external":
        return [(port.name, "")]
    if opt(port.nb.ha_chassis_group) is None:
        return None
    resident = f' && is_chassis_resident("{port.name}")'
    pairs = [(p.name, resident) for p in port.dp.ports if p.kind == "lsp" and p.sb_type == "localnet"]
    return pairs or None


def build_lsp_dhcp_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """DHCPv4/DHCPv6 option and response flows of one switch port (none on a switch that relays
    DHCP: :func:`.dhcp_relay.switch_relays_dhcp`)."""
    v4_row, v6_row = opt(port.nb.dhcpv4_options), opt(port.nb.dhcpv6_options)
    if v4_row is None and v6_row is None:
        return
    if switch_relays_dhcp(port.dp, ctx):
        return
    inports = dhcp_inports(port)
    if inports is None:
        return
    v4 = dhcp4_config(v4_row, port) if v4_row is not None else None
    v6 = dhcp6_config(v6_row) if v6_row is not None else None
    if v4 is None and v6 is None:
        return
    entries = lsp_addresses(port)
    m4, m6 = copp_meter(port.dp, ctx, "dhcpv4-opts"), copp_meter(port.dp, ctx, "dhcpv6-opts")
    # 25.03: DHCPv4 discover and request in one flow, DHCPv6 to the multicast group (ip6.mcast).
    merged = ctx.profile.has("dhcp_merged_matches")
    for inport, extra in inports:
        for entry in entries:
            if v4 is not None:
                _dhcp4_flows(port, entry, inport, extra, v4, table, m4, merged)
            if v6 is not None:
                _dhcp6_flows(port, entry, inport, extra, v6, table, m6, merged)


def _dhcp4_flows(port: Port, entry: LportAddresses, inport: str, extra: str, cfg: Dhcp4, table: FlowTable,
                 meter: str | None, merged: bool = False) -> None:
    ip = next((n.addr_s for n in entry.ipv4 if cfg.cidr.contains(n.addr)), None)
    if ip is None:
        return
    i, owner, h = port.dp.index, port_owner(port), cfg.hint
    head = f'inport == "{inport}" && eth.src == {entry.ea_s}'
    action = f"{REGBIT_DHCP_OPTS_RESULT} = put_dhcp_opts({_opts_text([('offerip', ip)], cfg.options)}); next;"
    discover = f"{head} && ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255 && {DHCPV4_MATCH}{extra}"
    request = f"{head} && ip4.src == {ip} && ip4.dst == {{{cfg.server_id}, 255.255.255.255}} && {DHCPV4_MATCH}{extra}"
    if merged:
        both = (f"{head} && (ip4.src == {{{ip}, 0.0.0.0}} && ip4.dst == {{{cfg.server_id}, 255.255.255.255}}) && "
                f"{DHCPV4_MATCH}{extra}")
        table.add(i, LS_IN_DHCP_OPTIONS, 100, both, action, hint=h, owner=owner, controller_meter=meter,
                  io_port=inport)
    else:
        table.add(i, LS_IN_DHCP_OPTIONS, 100, discover, action, hint=h, owner=owner, controller_meter=meter,
                  io_port=inport)
        table.add(i, LS_IN_DHCP_OPTIONS, 100, request, action, hint=h, owner=owner, controller_meter=meter,
                  io_port=inport)
    response = (
        f"eth.dst = eth.src; eth.src = {cfg.server_mac}; ip4.src = {cfg.server_id}; "
        f"udp.src = 67; udp.dst = 68; {LOCAL_REPLY}"
    )
    match = f"{head} && ip4 && {DHCPV4_MATCH} && {REGBIT_DHCP_OPTS_RESULT}{extra}"
    table.add(i, LS_IN_DHCP_RESPONSE, 100, match, response, hint=h, owner=owner, io_port=inport)


def _dhcp6_flows(port: Port, entry: LportAddresses, inport: str, extra: str, cfg: Dhcp6, table: FlowTable,
                 meter: str | None, merged: bool = False) -> None:
    ip = next((n.addr_s for n in entry.ipv6 if cfg.cidr.contains(n.addr)), None)
    if ip is None:
        return
    i, owner, h = port.dp.index, port_owner(port), cfg.hint
    mcast = "ip6.mcast && " if merged else ""
    head = f'inport == "{inport}" && eth.src == {entry.ea_s} && {mcast}{DHCPV6_MATCH}{extra}'
    first = [] if cfg.stateless else [("ia_addr", ip)]
    action = f"{REGBIT_DHCP_OPTS_RESULT} = put_dhcpv6_opts({_opts_text(first, cfg.options)}); next;"
    table.add(i, LS_IN_DHCP_OPTIONS, 100, head, action, hint=h, owner=owner, controller_meter=meter,
              io_port=inport)
    response = (
        f"eth.dst = eth.src; eth.src = {cfg.server_id}; ip6.dst = ip6.src; ip6.src = {cfg.server_lla}; "
        f"udp.src = 547; udp.dst = 546; {LOCAL_REPLY}"
    )
    table.add(i, LS_IN_DHCP_RESPONSE, 100, f"{head} && {REGBIT_DHCP_OPTS_RESULT}", response, hint=h, owner=owner,
              io_port=inport)
