"""What a logical router owns at L2/L3, as seen from the switches its ports attach to.

Derived from the router's NB row once per build (memoised in the :class:`FlowCtx`
under the router's key): external IPs and MACs of its NAT rules, the VIPs of its
load balancers and its distributed gateway ports.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Any

from ..northd.addresses import (
    AddressError,
    IPAddress,
    LrpNetworks,
    format_ip,
    format_mac,
    parse_lrp_networks,
    parse_mac,
    parse_nat_external_ip,
)
from ..northd.lb_vips import is_template_lb, parse_vip_address
from ..northd.model import Datapath, Port
from ..northd.nat_rules import valid_nats
from ..ovsdb import fastrow
from ..ovsdb.columns import opt
from .context import FlowCtx

# NAT types whose external IP the router answers ARP/ND for.
DNAT_TYPES = frozenset({"dnat", "dnat_and_snat"})


@dataclass(frozen=True, slots=True)
class RouterAddrs:
    """``nat_ips``: external IPs of dnat / dnat_and_snat rules (text, NAT uuid order).
    ``nat_macs``: external MACs of dnat / dnat_and_snat rules, as written in the NB (even
    malformed: observed), NAT uuid order, of rules whose external IP parses (observed).
    ``distributed_nats``: (normalised external MAC, logical port) of dnat_and_snat rules with both
    (a MAC with leading blanks is valid).
    ``lb_vips``: the VIP addresses of the router's load balancers (own and via groups).
    ``dgps``: distributed gateway port name -> its chassisredirect port name.
    ``snat_ips``: external IPs of snat rules that are not the router's own port IPs (text, NAT uuid
    order; switches send ARP/NS for them to the router in 25.03: behaviour ``l2_arp_snat_ips``).
    """

    nat_ips: tuple[str, ...]
    nat_macs: tuple[str, ...]
    distributed_nats: tuple[tuple[str, str], ...]
    lb_vips: tuple[IPAddress, ...]
    dgps: dict[str, str]
    snat_ips: tuple[str, ...] = ()
    # VIPs only load balancers with options:neighbor_responder=none have (25.03: behaviour
    # "l2_lb_neighbor_responder", switches send no ARP/NS for them to the router).
    silent_vips: frozenset[IPAddress] = frozenset()


def _is_mac(s: str) -> bool:
    try:
        parse_mac(s)
    except AddressError:
        return False
    return True


def _lb_vip_addrs(lb: Any) -> tuple[bool, str | None, tuple[IPAddress, ...]]:
    """(template?, ``options:neighbor_responder``, parsed VIP addresses) of one load balancer."""
    addrs = (parse_vip_address(key) for key in lb.vips)
    return is_template_lb(lb), lb.options.get("neighbor_responder"), tuple(a for a in addrs if a is not None)


def lb_vip_addrs(lb: Any) -> tuple[bool, str | None, tuple[IPAddress, ...]]:
    """:func:`_lb_vip_addrs`, kept with the NB row until it changes (every router of a shared
    load-balancer group reads every load balancer's VIPs)."""
    result: tuple[bool, str | None, tuple[IPAddress, ...]] = fastrow.derived(lb, "lb_vip_addrs", _lb_vip_addrs)
    return result


def _by_uuid(rows: Any) -> list[Any]:
    return sorted(rows, key=lambda r: str(r.uuid))


def _compute(router: Datapath, profile: Any) -> RouterAddrs:
    nat_ips: list[str] = []
    snat_ips: list[str] = []
    nat_macs: list[str] = []
    distributed: list[tuple[str, str]] = []
    for nat in _by_uuid(valid_nats(router, profile)):  # (25.03: without rejected rules)
        ext = parse_nat_external_ip(nat.external_ip, arp=True)
        ext_ip = ext[0] if ext is not None else None  # None: its IP and MAC are neither announced nor flooded
        if nat.type in DNAT_TYPES and ext is not None:
            nat_ips.append(ext[1])
        elif nat.type == "snat" and ext is not None:
            snat_ips.append(ext[1])
        mac = opt(nat.external_mac)
        if mac and nat.type in DNAT_TYPES and ext_ip is not None:
            nat_macs.append(str(mac))  # observed: as written, valid or not
        lport = opt(nat.logical_port)
        if mac and lport and nat.type == "dnat_and_snat" and _is_mac(str(mac).lstrip()):
            distributed.append((format_mac(parse_mac(str(mac).lstrip())), lport))
    lbs = list(router.nb.load_balancer)
    for group in router.nb.load_balancer_group:
        lbs += list(group.load_balancer)
    vips: dict[IPAddress, None] = {}
    silent: set[IPAddress] = set()
    answered: set[IPAddress] = set()
    for lb in lbs:
        template, mode, addrs = lb_vip_addrs(lb)
        if template:  # observed: no ARP/ND or address set for template load balancers' VIPs
            continue
        for addr in addrs:
            vips[addr] = None
            (silent if mode == "none" else answered).add(addr)
    dgps = {p.options["distributed-port"]: p.name for p in router.ports if p.kind == "crp"}
    if snat_ips:  # (observed: not one of the router's own port IPs, Neutron's SNAT to its gateway port)
        own: set[str] = set()
        for p in router.ports:
            nets = lrp_networks(p) if p.kind == "lrp" else None
            if nets is not None:
                own.update(n.addr_s for n in nets.ipv4)
                own.update(n.addr_s for n in nets.ipv6)
        snat_ips = [ip for ip in snat_ips if ip not in own]
    return RouterAddrs(nat_ips=tuple(nat_ips), nat_macs=tuple(nat_macs), distributed_nats=tuple(distributed),
                       lb_vips=tuple(vips), dgps=dgps, snat_ips=tuple(snat_ips), silent_vips=frozenset(silent - answered))


def router_addrs(router: Datapath, ctx: FlowCtx) -> RouterAddrs:
    return ctx.cached("router_addrs", router.key, lambda: _compute(router, ctx.profile))


def lrp_networks(lrp: Port) -> LrpNetworks | None:
    """The router port's parsed MAC and networks (None if its MAC is bad: the model skipped it anyway)."""
    try:
        return parse_lrp_networks(lrp.nb.mac, list(lrp.nb.networks))
    except AddressError:
        return None


def _inside(x: int, bounds: list[tuple[int, int]]) -> bool:
    """Is address ``x`` (an int) in one of the networks ``bounds`` (their first and last addresses)?"""
    for lo, hi in bounds:  # noqa: SIM110 (a loop: no generator per address, thousands of them)
        if lo <= x <= hi:
            return True
    return False


def reachable_vips(nets: LrpNetworks, vips: tuple[IPAddress, ...]) -> list[str]:
    """The VIPs inside one of the port's networks (``options:neighbor_responder`` is not consulted)."""
    out: list[str] = []
    b4 = [n.bounds() for n in nets.ipv4]
    b6 = [n.bounds() for n in nets.ipv6]
    for vip in vips:
        if isinstance(vip, IPv4Address):
            if b4 and _inside(int(vip), b4):
                out.append(str(vip))
        elif isinstance(vip, IPv6Address) and b6 and _inside(int(vip), b6):
            out.append(format_ip(vip))
    return out


def router_lb_vip_sets(router: Datapath, memo: dict[Any, Any] | None = None) -> dict[str, list[str]]:
    """The router's SB address sets ``_rtr_lb_<datapath tunnel key>_ip4`` / ``_ip6`` (observed).

    They hold the VIPs of the router's load balancers (its own and its groups', with backends or
    not) that fall inside one of its ports' networks; an empty set is not written.  Every port of
    the router answers ARP / neighbour solicitations for them (:mod:`.lr_ip_input`).  Observed: a
    load balancer's ``options:neighbor_responder=all`` puts all its VIPs in, whatever the
    networks, ``none`` none of them (any other value: ``reachable``, the default).

    Behaviour ``rtr_lb_template_vips_ip6`` (25.03, observed; read from the router's
    ``Datapath.behaviours``): the VIPs of a template load balancer (literal ones, with
    ``neighbor_responder=all``) go into the ``_ip6`` set whatever their family (IPv4 text in it).

    ``memo``: a dict the caller keeps for one pass over many routers (the same NB rows): each load
    balancer group's VIPs are worked out once (ovn-kubernetes: every gateway router shares the
    cluster-wide group of all services).
    """
    template_v6 = RTR_LB_TEMPLATE_VIPS_IP6 in router.behaviours
    parts = [_lbs_vip_facts(router.nb.load_balancer, template_v6)]
    memo = {} if memo is None else memo
    for group in router.nb.load_balancer_group:
        k = (group.uuid, template_v6)
        facts = memo.get(k)
        if facts is None:
            facts = memo[k] = _lbs_vip_facts(group.load_balancer, template_v6)
        parts.append(facts)
    vips: dict[IPAddress, str] = {}
    for p in parts:
        vips.update(p[0])
    if not vips:
        return {}
    anywhere = frozenset().union(*(p[1] for p in parts))
    in_v6 = frozenset().union(*(p[2] for p in parts))
    nets = [n for n in (lrp_networks(p) for p in router.ports if p.kind == "lrp") if n is not None]
    b4 = [n.bounds() for ns in nets for n in ns.ipv4]
    b6 = [n.bounds() for ns in nets for n in ns.ipv6]
    v4 = sorted({t for v, t in vips.items() if isinstance(v, IPv4Address) and v not in in_v6
                 and (v in anywhere or _inside(int(v), b4))})
    v6 = sorted({t for v, t in vips.items() if v in in_v6 or (isinstance(v, IPv6Address)
                 and (v in anywhere or _inside(int(v), b6)))})
    out: dict[str, list[str]] = {}
    if v4:
        out[f"_rtr_lb_{router.tunnel_key}_ip4"] = v4
    if v6:
        out[f"_rtr_lb_{router.tunnel_key}_ip6"] = v6
    return out


def _lbs_vip_facts(lbs: Any, template_v6: bool) -> tuple[dict[IPAddress, str], frozenset[IPAddress],
                                                         frozenset[IPAddress]]:
    """Of :func:`router_lb_vip_sets`, what load balancers ``lbs`` give: their VIPs (with their
    text), those of load balancers with ``neighbor_responder=all``, and the IPv4 ones written in
    the ``_ip6`` set."""
    vips: dict[IPAddress, str] = {}
    anywhere: set[IPAddress] = set()
    in_v6: set[IPAddress] = set()
    for lb in lbs:
        # Observed: a template load balancer's (literal) VIPs only with ``neighbor_responder=all``.
        template, mode, addrs = lb_vip_addrs(lb)
        if mode == "none" or (mode != "all" and template):
            continue
        for addr in addrs:
            if addr not in vips:
                vips[addr] = format_ip(addr)
            if mode == "all":
                anywhere.add(addr)
            if template and template_v6:
                in_v6.add(addr)
    return vips, frozenset(anywhere), frozenset(in_v6)


def router_lb_vip_set_names(router: Datapath, ctx: FlowCtx) -> frozenset[str]:
    """The names of :func:`router_lb_vip_sets` (memoised under the router's key)."""
    return ctx.cached(RTR_LB_SETS, router.key, lambda: frozenset(router_lb_vip_sets(router)))


RTR_LB_SETS = "rtr_lb_sets"
RTR_LB_TEMPLATE_VIPS_IP6 = "rtr_lb_template_vips_ip6"
