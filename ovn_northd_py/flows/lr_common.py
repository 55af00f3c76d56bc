"""What the logical router pipeline builders share: per-router and per-port facts.

Observed on the reference (ovn-northd 23.03) and cross-checked with ``man ovn-northd``:

* a *gateway router* has ``options:chassis``; a router *with a distributed gateway
  port* (DGP) has a router port with gateway chassis (its chassisredirect port is
  ``cr-<port>``).  Several ip_input flows depend on either;
* a router port's networks keep their NB set order (sorted strings) followed by
  the EUI-64 link-local address, which every port has;
* router options are read as booleans the way OVS's ``smap_get_bool`` does:
  ``true``/``false`` (any case), anything else means the default;
* multicast: with ``options:mcast_relay`` the router forwards IP multicast, to the
  ``_MC_static`` group when one of its ports sets ``options:mcast_flood``.

Per-router values are memoised in the :class:`FlowCtx` under the router's key;
values derived from a switch's ports are memoised under the switch's key (the
incremental flow node forgets a switch's memo when its ports change).
"""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Any

from ..northd.addresses import (
    AddressError,
    IPAddress,
    Ipv4Net,
    Ipv6Net,
    LrpNetworks,
    format_ip,
    parse_ip,
    parse_lrp_networks,
)
from ..northd.model import Datapath, Port
from ..northd.nat_rules import valid_nats
from ..northd.ovs_order import ovs_hash_string
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .registers import REG_SRC_IPV4, REG_SRC_IPV4_R5, REGBIT_NEXTHOP_IS_IPV4
from .router_addrs import lb_vip_addrs


def src_ipv4_reg(ctx: FlowCtx) -> str:
    """Where routing puts the output port's IPv4 address: ``reg1``, or ``reg5`` in a release with
    the ``lr_nexthop_v4_bit`` behaviour (25.03)."""
    return REG_SRC_IPV4_R5 if ctx.profile.has("lr_nexthop_v4_bit") else REG_SRC_IPV4


def nexthop_family(ctx: FlowCtx, v6: bool) -> str:
    """The ``reg9[9] = 1|0; `` that routing flows end with in a release with the
    ``lr_nexthop_v4_bit`` behaviour (1: IPv4 next hop), else nothing."""
    if not ctx.profile.has("lr_nexthop_v4_bit"):
        return ""
    return f"{REGBIT_NEXTHOP_IS_IPV4} = {0 if v6 else 1}; "


def arp_request_then(ctx: FlowCtx) -> str:
    """What follows the ``arp {...};`` / ``nd_ns {...};`` of an ``lr_in_arp_request`` flow: nothing
    (23.03), `` output;`` (behaviour ``arp_request_then_output``, 25.03) or `` next;`` (behaviour
    ``arp_request_then_next``, 26.03: ``lr_in_ecmp_stateful_egr`` outputs last)."""
    if ctx.profile.has("arp_request_then_next"):
        return " next;"
    return " output;" if ctx.profile.has("arp_request_then_output") else ""


def nexthop_family_match(ctx: FlowCtx, v6: bool) -> str:
    """What tells an IPv4 next hop from an IPv6 one after routing: ``ip4``/``ip6``, or
    ``reg9[9] == 1|0`` in a release with the ``lr_nexthop_v4_bit`` behaviour."""
    if not ctx.profile.has("lr_nexthop_v4_bit"):
        return "ip6" if v6 else "ip4"
    return f"{REGBIT_NEXTHOP_IS_IPV4} == {0 if v6 else 1}"


def route_priority(ctx: FlowCtx, plen: int, kind: str) -> int:
    """A route's priority in ``lr_in_ip_routing``: ``kind`` is ``src`` (source-IP static route),
    ``static`` (destination static route), ``learned`` (SB Learned_Route, 25.03 on) or
    ``connected``.  23.03: 3*plen + 0/1/2; with the ``route_priority_x8`` behaviour (25.03):
    8*plen + 0/4/2/6."""
    if ctx.profile.has("route_priority_x8"):
        return plen * 8 + {"src": 0, "static": 4, "learned": 2, "connected": 6}[kind]
    return plen * 3 + {"src": 0, "static": 1, "connected": 2}[kind]


def smap_bool(options: Any, key: str, default: bool) -> bool:
    """``options[key]`` read as OVS's smap_get_bool: true/false in any case, else ``default``."""
    value = str(options.get(key, "")).lower()
    if value == "true":
        return True
    if value == "false":
        return False
    return default


def parse_ip_strict(text: str) -> IPAddress | None:
    """An IP address as ``inet_pton`` reads it (no leading zeros, no prefix), or None."""
    family = socket.AF_INET6 if ":" in text else socket.AF_INET
    try:
        raw = socket.inet_pton(family, text)
    except (OSError, ValueError):
        return None
    return IPv6Address(raw) if family == socket.AF_INET6 else IPv4Address(raw)


def net_s(net: Ipv4Net | Ipv6Net) -> str:
    """``network/plen`` with the host bits cleared (``10.0.0.0/8``, ``fd01::/64``)."""
    return f"{net.network_s}/{net.plen}"


def normalized_net_s(net: Ipv4Net | Ipv6Net) -> str:
    """:func:`net_s`, but a host prefix (/32, /128) is the bare address (the reference's
    ``normalize_v46_prefix``, e.g. in the symmetric-ECMP reply flows)."""
    return net.network_s if net.plen == (128 if isinstance(net, Ipv6Net) else 32) else net_s(net)


def ip_set(addrs: list[str]) -> str:
    """One address as is, several as ``{a, b}`` (the reference's set notation)."""
    return addrs[0] if len(addrs) == 1 else "{" + ", ".join(addrs) + "}"


def braces(addrs: list[str]) -> str:
    """Always ``{a, ...}``."""
    return "{" + ", ".join(addrs) + "}"


@dataclass(frozen=True, slots=True)
class RouterInfo:
    """Router-wide facts the pipeline reads.

    ``snat_ips``: external IPs of the router's ``snat`` NAT rules.  A router port IP among them
    or among its load balancers' VIPs (:func:`router_nat_owned`) is not dropped by
    ``lr_in_ip_input`` (the reference leaves it to the NAT stages) and is dropped late in
    ``lr_in_arp_resolve``.  Nothing here reads the router's load balancers (a load-balancer change
    that leaves the router's load-balancer facts alone keeps this memo).
    """

    is_gateway: bool  # options:chassis
    has_dgp: bool
    always_learn: bool  # options:always_learn_from_arp_request (default true)
    dynamic_neigh: bool  # options:dynamic_neigh_routers (default false)
    mcast_relay: bool  # options:mcast_relay
    mcast_flood: bool  # one of its enabled ports has options:mcast_flood (its _MC_static has a member)
    snat_ips: frozenset[IPAddress]
    dgps: tuple[Port, ...]  # router ports with a chassisredirect port, in port order
    nets: dict[str, LrpNetworks]  # router port name -> networks (ports with a valid MAC)


def lrp_nets(port: Port) -> LrpNetworks | None:
    try:
        return parse_lrp_networks(port.nb.mac, sorted(port.nb.networks))
    except AddressError:
        return None


def _compute_router(router: Datapath, profile: Any) -> RouterInfo:
    nb = router.nb
    options = nb.options
    snat: set[IPAddress] = set()
    for nat in valid_nats(router, profile):
        if nat.type == "snat":
            with contextlib.suppress(AddressError):
                snat.add(parse_ip(nat.external_ip))
    nets: dict[str, LrpNetworks] = {}
    for p in router.ports:
        if p.kind == "lrp":
            n = lrp_nets(p)
            if n is not None:
                nets[p.name] = n
    dgps = tuple(p for p in router.ports if p.kind == "lrp" and p.crp is not None)
    return RouterInfo(
        is_gateway=bool(options.get("chassis")),
        has_dgp=bool(dgps),
        always_learn=smap_bool(options, "always_learn_from_arp_request", True),
        dynamic_neigh=smap_bool(options, "dynamic_neigh_routers", False),
        mcast_relay=smap_bool(options, "mcast_relay", False),
        mcast_flood=any(
            p.kind == "lrp" and p.enabled and smap_bool(p.nb.options, "mcast_flood", False) for p in router.ports
        ),
        snat_ips=frozenset(snat),
        dgps=dgps,
        nets=nets,
    )


def router_info(router: Datapath, ctx: FlowCtx) -> RouterInfo:
    return ctx.cached(LR_INFO, router.key, lambda: _compute_router(router, ctx.profile))


LR_INFO = "lr_info"


def _nat_owned(router: Datapath, ctx: FlowCtx) -> frozenset[IPAddress]:
    lbs = list(router.nb.load_balancer)
    for group in router.nb.load_balancer_group:
        lbs += list(group.load_balancer)
    vips: set[IPAddress] = set()
    for lb in lbs:
        vips.update(lb_vip_addrs(lb)[2])
    return router_info(router, ctx).snat_ips | vips


def router_nat_owned(router: Datapath, ctx: FlowCtx) -> frozenset[IPAddress]:
    """The router's ``snat`` external IPs and its load balancers' VIPs (memoised with the router)."""
    return ctx.cached("lr_nat_owned", router.key, lambda: _nat_owned(router, ctx))


def port_nets(port: Port, ctx: FlowCtx) -> LrpNetworks | None:
    """A router port's parsed networks (memoised with its router)."""
    return router_info(port.dp, ctx).nets.get(port.name)


def lrp_hint(port: Port) -> str:
    return hint(port.nb_key)


def cr_name(port: Port) -> str | None:
    """The chassisredirect port of a distributed gateway port."""
    return port.crp.name if port.crp is not None else None


def peer_switch(port: Port) -> Datapath | None:
    """The switch a router port is attached to (through a router-type switch port)."""
    peer = port.peer
    if peer is not None and peer.kind == "lsp":
        return peer.dp
    return None


def _switch_types(sw: Datapath) -> frozenset[str]:
    return frozenset(p.sb_type for p in sw.ports if p.kind == "lsp")


def switch_port_types(sw: Datapath, ctx: FlowCtx) -> frozenset[str]:
    """The Port_Binding types present on a switch (memoised under the switch's key)."""
    return ctx.cached("lr_sw_types", sw.key, lambda: _switch_types(sw))


def arp_resident_port(port: Port, ctx: FlowCtx) -> str | None:
    """The chassisredirect port an ARP reply of ``port`` is limited to, if any.

    Observed: only when the port's switch has a localnet port; then the port's own
    chassisredirect port if it is a DGP, or the router's only DGP's when the port
    sets ``options:reside-on-redirect-chassis``.
    """
    sw = peer_switch(port)
    if sw is None or "localnet" not in switch_port_types(sw, ctx):
        return None
    if port.crp is not None:
        return port.crp.name
    info = router_info(port.dp, ctx)
    if smap_bool(port.nb.options, "reside-on-redirect-chassis", False) and len(info.dgps) == 1:
        return cr_name(info.dgps[0])
    return None


def gateway_mtu(port: Port) -> int | None:
    """``options:gateway_mtu`` as a positive integer, else None."""
    text = port.nb.options.get("gateway_mtu")
    if text is None:
        return None
    try:
        mtu = int(text)
    except ValueError:
        return None
    return mtu if mtu > 0 else None


def gateway_mtu_bypass(port: Port, ctx: FlowCtx) -> str | None:
    """What skips the gateway MTU check of ``port`` (``options:gateway_mtu_bypass``).  Behaviour
    ``gateway_mtu_ct_state`` (26.03, observed): ARP always does (``arp``, ``arp || X``)."""
    bypass = port.nb.options.get("gateway_mtu_bypass")
    if ctx.profile.has("gateway_mtu_ct_state"):
        return f"arp || {bypass}" if bypass else "arp"
    return bypass or None


def pkt_larger_len(port: Port, mtu: int, ctx: FlowCtx) -> int:
    """The frame length ``check_pkt_larger`` tests for ``options:gateway_mtu=mtu`` on ``port``: the
    MTU plus an Ethernet header (14), or plus 18 when a localnet port of the port's switch has a
    VLAN (NB ``tag_request`` set, whatever its parent_name: ``build_gateway_get_l2_hdr_size``).
    Behaviour ``vlan_tag0_needs_parent`` (25.03, observed): a ``tag_request`` of 0 is a VLAN only
    with a parent_name (a tag allocated), else none."""
    sw = peer_switch(port)
    tag0_untagged = ctx.profile.has("vlan_tag0_needs_parent")

    def has_vlan(q: Port) -> bool:
        req = opt(q.nb.tag_request)
        return q.tag is not None or (req is not None and not (tag0_untagged and int(req) == 0))

    tagged = sw is not None and any(q.kind == "lsp" and q.sb_type == "localnet" and has_vlan(q) for q in sw.ports)
    return mtu + (18 if tagged else 14)


def first_ipv4(nets: LrpNetworks) -> str | None:
    return nets.ipv4[0].addr_s if nets.ipv4 else None


def first_ipv6(nets: LrpNetworks) -> str:
    """The first configured IPv6 address, else the link-local one."""
    return nets.ipv6[0].addr_s


def find_lrp_for_ip(router: Datapath, ctx: FlowCtx, ip: IPAddress) -> tuple[Port, str] | None:
    """The first router port (port order) with a network containing ``ip``, and its address there
    (the port's first such network).  Looked up by network, once per prefix length the router's
    ports have: ``ovn_cluster_router`` resolves a route per node through one of a hundred ports."""
    v6 = not isinstance(ip, IPv4Address)
    n = int(ip)
    best: tuple[int, int, Port, str] | None = None
    for (fam6, host), nets in ctx.cached(LRP_BY_NET, router.key, lambda: _lrp_by_net(router, ctx)).items():
        if fam6 is v6:
            hit = nets.get(n & ~host)
            if hit is not None and (best is None or hit[:2] < best[:2]):
                best = hit
    return (best[2], best[3]) if best is not None else None


LRP_BY_NET = "lrp_by_net"


def _lrp_by_net(router: Datapath, ctx: FlowCtx) -> dict[tuple[bool, int], dict[int, tuple[int, int, Port, str]]]:
    """(IPv6?, host mask) -> network -> (port position, network position in the port, port, its
    address there), the first port and network of each network."""
    info = router_info(router, ctx)
    out: dict[tuple[bool, int], dict[int, tuple[int, int, Port, str]]] = {}
    for i, p in enumerate(router.ports):
        nets = info.nets.get(p.name)
        if nets is None:
            continue
        for j, n4 in enumerate(nets.ipv4):
            lo, hi = n4.bounds()
            out.setdefault((False, hi - lo), {}).setdefault(lo, (i, j, p, n4.addr_s))
        for j, n6 in enumerate(nets.ipv6):
            lo, hi = n6.bounds()
            out.setdefault((True, hi - lo), {}).setdefault(lo, (i, j, p, n6.addr_s))
    return out


def network_addr_for(nets: LrpNetworks, ip: IPAddress) -> str | None:
    """The port's address in the network that contains ``ip``."""
    if isinstance(ip, IPv4Address):
        for n4 in nets.ipv4:
            if n4.contains(ip):
                return n4.addr_s
    else:
        for n6 in nets.ipv6:
            if n6.contains(ip):
                return n6.addr_s
    return None


def output_port_addr_for(nets: LrpNetworks, ip: IPAddress) -> str | None:
    """The source address of a route or reroute through a named output port (observed, static
    routes and 26.03's policy ``output_port``): the port's address in ``ip``'s network, else its
    first address of ``ip``'s family, else none (no flow)."""
    addr = network_addr_for(nets, ip)
    if addr is not None:
        return addr
    family = nets.ipv6 if isinstance(ip, IPv6Address) else nets.ipv4
    return family[0].addr_s if family else None


def fmt_ip(ip: IPAddress) -> str:
    return format_ip(ip)


def hmap_mask(n: int) -> int:
    """The bucket mask of an OVS hmap after ``n`` insertions.

    It grows (to ``n / 2`` with every bit below the highest set, and bit 1 set when
    bit 0 is) as soon as ``n / 2`` exceeds the mask.
    """
    mask = 0
    for count in range(2, n + 1, 2):
        if count // 2 > mask:
            m = count // 2
            for shift in (1, 2, 4, 8, 16, 32):
                m |= m >> shift
            mask = m | ((m & 1) << 1)
    return mask


def hmap_bucket(name: str, mask: int) -> int:
    """The bucket of ``name`` in an OVS hmap keyed by ``hash_string(name, 0)`` with bucket mask ``mask``.

    Iterating such a map walks the buckets in index order; the reference's map of
    all logical ports decides, e.g., which router port gets a virtual port's binding.
    """
    return ovs_hash_string(name) & mask


def has_vtep_lports(port: Port, ctx: FlowCtx) -> bool:
    """Does the switch behind router port ``port`` have a ``vtep`` port?  (A distributed gateway
    port then routes in a distributed way: no ``is_chassis_resident`` in its admission, no
    ``lr_in_gw_redirect`` to its chassisredirect port: ``l3dgw_port_has_associated_vtep_lports``.)"""
    sw = peer_switch(port)
    return sw is not None and "vtep" in switch_port_types(sw, ctx)
