"""Switch ARP/ND responder: ``ls_in_arp_rsp`` (the priority-0 fallback is in :mod:`.defaults`).

Observed on the reference (23.03), checked against ``man ovn-northd``:

* Forwarding_Group VIPs: :mod:`.ls_fwd_group`;
* a ``localnet`` port skips the stage: ``inport == "<ln>"`` (100);
* a ``virtual`` port V binds to each of its ``options:virtual-parents`` (split on ``,``,
  names taken verbatim) that is a port of the same switch (100, ``bind_vport``); the
  ``options:virtual-ip`` must be an IPv4 or IPv6 address as ``inet_pton`` reads it and
  is printed as written; the flows' stage-hint is the parent's;
* every other port except ``external`` ones answers ARP requests (IPv4) and neighbour
  solicitations (IPv6, ``nd_na_router`` for router-type ports) for each address it owns
  (:mod:`.lsp_addrs`), with the entry's MAC (50), and lets requests from the owner itself
  through (100).  Skipped: a port with an ``unknown`` address, every port of a switch with
  ``other_config:vlan-passthru=true``, and -- when NB_Global ``options:ignore_lsp_down``
  is ``false`` -- a port that is not ``up`` unless it is a router or localport port.
  ``enabled`` does not matter;
* a router-type port whose router port exists also answers ARP for the IPv4 addresses of
  its ``options:arp_proxy`` (read like the reference's scanf: tokens up to the first bad
  one, IPv6 ones skipped, prefixes dropped) with its router port's MAC (50);
* a port named by a load balancer's ``ip_port_mappings`` for a backend of a health-checked
  VIP answers ARP / NS for the health-check source IP with ``svc_monitor_mac`` (110),
  whatever switch the load balancer is attached to (hinted by the load balancer).
"""

from __future__ import annotations

import re
import socket
from typing import Any, Final

from ..lflow.stages import LS_IN_ARP_RSP
from ..lflow.table import FlowTable
from ..northd.addresses import format_ipv6, parse_ipv6, solicited_node
from ..northd.model import Port
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .copp import copp_meter
from .ls_l2 import peer_router_port
from .lsp_addrs import lsp_addresses, lsp_health_checks
from .owners import port_owner
from .registers import REGBIT_FROM_ROUTER_PORT
from .router_addrs import lrp_networks

LOCAL_REPLY: Final = "outport = inport; flags.loopback = 1; output;"


def arp_reply_action(mac: str, ip: str) -> str:
    return (
        f"eth.dst = eth.src; eth.src = {mac}; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; "
        f"arp.sha = {mac}; arp.tpa = arp.spa; arp.spa = {ip}; {LOCAL_REPLY}"
    )


def nd_ns_match(ip: str, sn: str, bcast_mcast_only: bool = False) -> str:
    if bcast_mcast_only:  # behaviour "arp_nd_rsp_bcast_mcast"
        return f"nd_ns_mcast && ip6.dst == {sn} && nd.target == {ip}"
    return f"nd_ns && ip6.dst == {{{ip}, {sn}}} && nd.target == {ip}"


def _nd_na_action(kind: str, mac: str, ip: str) -> str:
    return f"{kind} {{ eth.src = {mac}; ip6.src = {ip}; nd.target = {ip}; nd.tll = {mac}; {LOCAL_REPLY} }};"


def build_lsp_arp_rsp_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The ARP/ND responder flows of one switch port."""
    if port.kind != "lsp":
        return
    owner = port_owner(port)
    h = hint(port.nb_key)
    i = port.dp.index
    if port.sb_type == "localnet" and not (ctx.profile.has("arp_proxy_v2") and has_arp_proxy(port.dp, ctx)):
        table.add(i, LS_IN_ARP_RSP, 100, f'inport == "{port.name}"', "next;", hint=h, owner=owner, io_port=port.name)
    elif port.sb_type == "virtual":
        _virtual_port_flows(port, table)
    for src_ip, lb_key in ctx.svc_monitor_ips.get(port.name, ()):
        _svc_monitor_flow(port, src_ip, lb_key, ctx.svc_monitor_mac, table)
    if ctx.profile.has("lsp_health_checks"):
        # 26.03: the switch answers for the source IPs of its ports' health checks too (observed:
        # the same 110 flows as for load balancers' health checks).
        for src_ip in sorted({str(hc.src_ip) for hc in lsp_health_checks(port)}):
            _svc_monitor_flow(port, src_ip, port.nb_key, ctx.svc_monitor_mac, table)
    if not _answers_for(port, ctx):
        return
    na = "nd_na_router" if port.is_router_lsp else "nd_na"
    nd_meter = copp_meter(port.dp, ctx, "nd-na")  # the switch's Copp meter for ND answers
    # 25.03 answers only broadcast ARP requests and multicast neighbour solicitations.
    bcast_mcast = ctx.profile.has("arp_nd_rsp_bcast_mcast")
    arp_bcast = " && eth.dst == ff:ff:ff:ff:ff:ff" if bcast_mcast else ""
    # 26.03 (arp_proxy_unicast_next, observed): on a switch whose router ports proxy ARP, unicast
    # requests for an answered address go on to its owner (50, ``next;``): ARP to its MAC, NS to
    # the address itself.
    unicast = ctx.profile.has("arp_proxy_unicast_next") and has_arp_proxy(port.dp, ctx)
    for entry in lsp_addresses(port):
        mac = entry.ea_s
        for net4 in entry.ipv4:
            ip = net4.addr_s
            match = f"arp.tpa == {ip} && arp.op == 1{arp_bcast}"
            table.add(i, LS_IN_ARP_RSP, 50, match, arp_reply_action(mac, ip), hint=h, owner=owner)
            if unicast:
                table.add(i, LS_IN_ARP_RSP, 50, f"arp.tpa == {ip} && arp.op == 1 && eth.dst == {mac}", "next;",
                          hint=h, owner=owner)
            table.add(i, LS_IN_ARP_RSP, 100, f'{match} && inport == "{port.name}"', "next;", hint=h, owner=owner,
                      io_port=port.name)
        for net6 in entry.ipv6:
            ip = net6.addr_s
            match = nd_ns_match(ip, net6.sn_addr_s, bcast_mcast)
            table.add(i, LS_IN_ARP_RSP, 50, match, _nd_na_action(na, mac, ip), hint=h, owner=owner,
                      controller_meter=nd_meter)
            if unicast:
                table.add(i, LS_IN_ARP_RSP, 50, f"nd_ns && ip6.dst == {ip} && nd.target == {ip}", "next;",
                          hint=h, owner=owner)
            table.add(i, LS_IN_ARP_RSP, 100, f'{match} && inport == "{port.name}"', "next;", hint=h, owner=owner,
                      io_port=port.name)
    if port.is_router_lsp:
        if ctx.profile.has("arp_proxy_v2"):
            _arp_proxy_flows_v2(port, table)
        else:
            _arp_proxy_flow(port, table)


def _answers_for(port: Port, ctx: FlowCtx) -> bool:
    """Does the switch answer ARP/ND for the port's own addresses?  (25.03: not with the port's
    ``options:disable_arp_nd_rsp=true``.)"""
    if port.sb_type in ("virtual", "external") or port.has_unknown:
        return False
    if ctx.profile.has("lsp_l2_options") and port.nb.options.get("disable_arp_nd_rsp", "").lower() == "true":
        return False
    if port.dp.nb.other_config.get("vlan-passthru", "").lower() == "true":
        return False
    if not ctx.ignore_lsp_down and not port.is_router_lsp and port.sb_type != "localport":
        return opt(port.nb.up) is True
    return True


def inet_pton_text(text: str) -> str | None:
    """``"4"`` or ``"6"`` if ``text`` is an address ``inet_pton`` accepts (strict: no blanks, no
    leading zeros in IPv4), else None."""
    for family, tag in ((socket.AF_INET, "4"), (socket.AF_INET6, "6")):
        try:
            socket.inet_pton(family, text)
        except (OSError, ValueError):
            continue
        return tag
    return None


def _virtual_port_flows(port: Port, table: FlowTable) -> None:
    vip = port.nb.options.get("virtual-ip")
    parents = port.nb.options.get("virtual-parents")
    if not vip or not parents:
        return
    family = inet_pton_text(vip)
    if family is None:
        return
    if family == "4":
        cond = f"((arp.op == 1 && arp.spa == {vip} && arp.tpa == {vip}) || (arp.op == 2 && arp.spa == {vip}))"
    else:
        sn = format_ipv6(solicited_node(parse_ipv6(vip)))
        cond = f"(({nd_ns_match(vip, sn)}) ||(nd_na && nd.target == {vip}))"
    action = f'bind_vport("{port.name}", inport); next;'
    owner = port_owner(port)
    siblings = {p.name: p for p in port.dp.ports if p.kind == "lsp"}
    for name in parents.split(","):
        parent = siblings.get(name)
        if parent is not None:  # the flow's stage-hint is the parent's
            match = f'inport == "{name}" && {cond}'
            table.add(port.dp.index, LS_IN_ARP_RSP, 100, match, action, hint=hint(parent.nb_key), owner=owner,
                      io_port=name)


# An IPv4 address the way the reference's scanf reads it ("%hhu" octets: leading zeros allowed,
# values wrap modulo 256), with an optional "/prefix" (a length or a dotted mask).
_SCAN_IPV4: Final = re.compile(r"\s*(\d+)\.(\d+)\.(\d+)\.(\d+)(?:/(\d+(?:\.\d+\.\d+\.\d+)?))?")
_SCAN_IPV6: Final = re.compile(r"\s*([0-9A-Fa-f:.]+)(?:/(\d+))?")


def _scan_plen_ok(text: str | None, bits: int) -> bool:
    if text is None:
        return True
    if "." not in text:
        return int(text) <= bits
    mask = 0
    for part in text.split("."):
        mask = (mask << 8) | (int(part) & 0xFF)
    inverted = ~mask & 0xFFFFFFFF
    return inverted & (inverted + 1) == 0


def _plen(text: str | None, bits: int) -> int:
    """A prefix length (number or contiguous dotted mask) as a number; ``bits`` when absent."""
    if text is None:
        return bits
    if "." not in text:
        return int(text)
    mask = 0
    for part in text.split("."):
        mask = (mask << 8) | (int(part) & 0xFF)
    return bin(mask).count("1")


def scan_addresses(text: str) -> list[tuple[str, int, bool]]:
    """The addresses of a blank-separated address list, read as the reference reads
    ``options:arp_proxy``: (address, prefix length, IPv6?) up to the first token that is not an
    address (trailing junk on a token ends the list after it)."""
    out: list[tuple[str, int, bool]] = []
    pos = 0
    while pos < len(text) and text[pos:].strip():
        m4 = _SCAN_IPV4.match(text, pos)
        if m4 is not None:
            if not _scan_plen_ok(m4.group(5), 32):
                break
            out.append((".".join(str(int(g) % 256) for g in m4.groups()[:4]), _plen(m4.group(5), 32), False))
            pos = m4.end()
            continue
        m6 = _SCAN_IPV6.match(text, pos)
        if m6 is None or inet_pton_text(m6.group(1)) != "6" or not _scan_plen_ok(m6.group(2), 128):
            break
        out.append((format_ipv6(parse_ipv6(m6.group(1))), _plen(m6.group(2), 128), True))
        pos = m6.end()
    return out


def scan_ip_list(text: str) -> list[str]:
    """The IPv4 addresses of :func:`scan_addresses` (IPv6 ones skipped, prefixes dropped: 23.03)."""
    return [a for a, _plen_, v6 in scan_addresses(text) if not v6]


def _arp_proxy(port: Port) -> tuple[str, str] | None:
    """(the router port's MAC, ``options:arp_proxy``) of a router-type port that sets it and whose
    router port's networks parse; None otherwise."""
    spec = port.nb.options.get("arp_proxy")
    lrp = peer_router_port(port)
    nets = lrp_networks(lrp) if spec and lrp is not None else None
    return (nets.ea_s, spec) if nets is not None and spec else None


def _arp_proxy_flow(port: Port, table: FlowTable) -> None:
    proxy = _arp_proxy(port)
    ips = scan_ip_list(proxy[1]) if proxy is not None else []
    if proxy is None or not ips:
        return
    mac = proxy[0]
    action = (
        f"eth.dst = eth.src; eth.src = {mac}; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; "
        f"arp.sha = {mac}; arp.tpa <-> arp.spa; {LOCAL_REPLY}"
    )
    match = f"arp.op == 1 && arp.tpa == {{{','.join(ips)}}}"
    table.add(port.dp.index, LS_IN_ARP_RSP, 50, match, action, hint=hint(port.nb_key), owner=port_owner(port))


def has_arp_proxy(dp: Any, ctx: FlowCtx) -> bool:
    """Does a router-type port of the switch set ``options:arp_proxy``?  (25.03, observed: then its
    localnet ports do not skip the ARP responder: the proxy answers the physical network too.)"""
    return ctx.cached("has_arp_proxy", dp.key, lambda: any(
        p.kind == "lsp" and p.is_router_lsp and p.nb.options.get("arp_proxy") for p in dp.ports))


def _arp_proxy_flows_v2(port: Port, table: FlowTable) -> None:
    """Behaviour ``arp_proxy_v2`` (25.03, observed): the ``arp_proxy`` flows answer only packets not
    from a router port (``reg0[18] == 0``, 30), name each address with its prefix length (/32,
    /128 when none is given), and IPv6 addresses get a neighbour advertisement of their own."""
    proxy = _arp_proxy(port)
    addrs = scan_addresses(proxy[1]) if proxy is not None else []
    if proxy is None or not addrs:
        return
    mac = proxy[0]
    h, owner, i = hint(port.nb_key), port_owner(port), port.dp.index
    v4 = [f"{a}/{p}" for a, p, v6 in addrs if not v6]
    v6s = [(a, p) for a, p, v6 in addrs if v6]
    if v4:
        action = (
            f"eth.dst = eth.src; eth.src = {mac}; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; "
            f"arp.sha = {mac}; arp.tpa <-> arp.spa; {LOCAL_REPLY}"
        )
        match = f"{REGBIT_FROM_ROUTER_PORT} == 0 && arp.op == 1 && arp.tpa == {{{','.join(v4)}}}"
        table.add(i, LS_IN_ARP_RSP, 30, match, action, hint=h, owner=owner)
    if v6s:
        targets = [f"{a}/{p}" for a, p in v6s]
        sns = [f"{format_ipv6(solicited_node(parse_ipv6(a)))}/128" for a, _ in v6s]
        match = (f"{REGBIT_FROM_ROUTER_PORT} == 0 && nd_ns && ip6.dst == {{ {', '.join(targets + sns)} }} && "
                 f"nd.target == {{ {', '.join(targets)} }}")
        action = (f"nd_na_router {{ eth.src = {mac}; ip6.src = nd.target; nd.target = nd.target; nd.tll = {mac}; "
                  f"{LOCAL_REPLY} }};")
        table.add(i, LS_IN_ARP_RSP, 30, match, action, hint=h, owner=owner)


def _svc_monitor_flow(port: Port, src_ip: str, lb_key: str, mac: str, table: FlowTable) -> None:
    if ":" in src_ip:
        match = f"nd_ns && nd.target == {src_ip}"
        action = (
            f"nd_na {{ eth.dst = eth.src; eth.src = {mac}; ip6.src = {src_ip}; nd.target = {src_ip}; "
            f"nd.tll = {mac}; {LOCAL_REPLY} }};"
        )
    else:
        match = f"arp.tpa == {src_ip} && arp.op == 1"
        action = arp_reply_action(mac, src_ip)
    table.add(port.dp.index, LS_IN_ARP_RSP, 110, match, action, hint=hint(lb_key), owner=port_owner(port))
