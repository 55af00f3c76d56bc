"""Router ingress ``lr_in_ip_input``: traffic for the router itself, TTL and martian checks.

Observed on the reference (NAT- and load-balancer-specific flows of this stage are
not built here; the priority-0 ``next;`` is in :mod:`.defaults`).

Every router: martian sources/destinations (100), ARP/ND not answered above (85),
RS/RA allowed (84), reserved IPv6 multicast (83) and IP multicast (82, allowed with
``options:mcast_relay``) dropped, Ethernet broadcast (50), expired multicast (32)
and other expired TTLs (30) dropped; IGMP/MLD with TTL 1 are allowed (120) when a
router port sets ``options:mcast_flood``.

Every router port P (enabled or not), MAC E, IPv4 addresses A (networks S/L) and
IPv6 addresses (configured, then the link-local one):
(Copp meters of the router, :mod:`.copp`: ``nd-na`` on the ND answers, ``tcp-reset`` on TCP resets
and SCTP aborts, ``icmp4-error`` / ``icmp6-error`` on the other ICMP replies, 80/70/31/150; the
BFD flows of 110 are :mod:`.lr_bfd`)

* 100: packets from P's own addresses or subnet broadcasts (one set per port)
  unless looped back (``reg9[0]``); per IPv6 address, DHCPv6 replies
  (``handle_dhcpv6_reply``, no stage-hint; 25.03, observed: only on a port with
  ``options:prefix_delegation=true``, any case);
* 90: ICMP echo requests to P's addresses (one flow per family, a set when
  several); ARP requests ``inport == P && arp.tpa == A && arp.spa == S/L``
  (``is_chassis_resident`` as :func:`.lr_common.arp_resident_port`); neighbour
  solicitations per IPv6 address with ``nd_na_router`` (``is_chassis_resident``
  on a distributed gateway port); ARP requests / solicitations for the router's
  ``$_rtr_lb_<key>_ip4`` / ``_ip6`` load-balancer VIP sets (:func:`.router_addrs.router_lb_vip_sets`,
  ``nd_na``; ``is_chassis_resident`` on a distributed gateway port);
* 80/70, except on gateway routers and routers with a distributed gateway port:
  per address, TCP reset, SCTP abort, UDP port unreachable (80), protocol /
  address unreachable (70);
* 60: other traffic to P's addresses is dropped, one set per family, leaving out
  the router's SNAT external IPs and load-balancer VIPs (none on a gateway router with
  ``options:lb_force_snat_ip=router_ip``);
* 31: ICMP time exceeded per IPv4 network and per configured IPv6 network (with
  ``ip6.src == S/L``), sourced from the network's address, or swapping
  source/destination on a distributed gateway port;
* 150, with ``options:gateway_mtu=M``: packets marked too big by admission get an
  ICMP "fragmentation needed" / "packet too big" (IPv4 only if P has an IPv4
  address; IPv6 from the first configured address, else the link-local one).
"""

from __future__ import annotations

from collections.abc import Callable

from ..lflow.stages import LR_IN_IP_INPUT
from ..lflow.table import FlowTable
from ..northd.addresses import LrpNetworks, parse_ip
from ..northd.model import Datapath, Port
from .context import FlowCtx
from .copp import copp_meter
from .lr_common import (
    arp_resident_port,
    braces,
    first_ipv4,
    first_ipv6,
    gateway_mtu,
    ip_set,
    lrp_hint,
    net_s,
    port_nets,
    router_info,
    router_nat_owned,
    smap_bool,
)
from .lr_lb import force_snat_router_ip
from .owners import dp_owner, port_owner
from .registers import REG_INPORT_ETH_ADDR, REGBIT_EGRESS_LOOPBACK, REGBIT_PKT_LARGER
from .router_addrs import router_lb_vip_set_names

MARTIANS = (
    "ip4.src_mcast ||ip4.src == 255.255.255.255 || ip4.src == 127.0.0.0/8 || ip4.dst == 127.0.0.0/8 "
    "|| ip4.src == 0.0.0.0/8 || ip4.dst == 0.0.0.0/8"
)
ARP_REPLY = (
    f"eth.dst = eth.src; eth.src = {REG_INPORT_ETH_ADDR}; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; "
    f"arp.sha = {REG_INPORT_ETH_ADDR}; arp.tpa <-> arp.spa; outport = inport; flags.loopback = 1; output;"
)
NA_REPLY = (
    f"nd_na_router {{ eth.src = {REG_INPORT_ETH_ADDR}; ip6.src = nd.target; nd.tll = {REG_INPORT_ETH_ADDR}; "
    "outport = inport; flags.loopback = 1; output; };"
)
LB_NA_REPLY = (
    f"nd_na {{ eth.src = {REG_INPORT_ETH_ADDR}; ip6.src = nd.target; nd.tll = {REG_INPORT_ETH_ADDR}; "
    "outport = inport; flags.loopback = 1; output; };"
)

ECHO4 = "ip4.dst <-> ip4.src; ip.ttl = 255; icmp4.type = 0; flags.loopback = 1; next; "
AddFn = Callable[..., None]
ECHO6 = "ip6.dst <-> ip6.src; ip.ttl = 255; icmp6.type = 129; flags.loopback = 1; next; "


def build_lr_ip_input_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    owner = dp_owner(router)
    i = router.index
    info = router_info(router, ctx)
    if info.mcast_flood:
        table.add(i, LR_IN_IP_INPUT, 120, "igmp && ip.ttl == 1", "next;", owner=owner)
        table.add(i, LR_IN_IP_INPUT, 120, "(mldv1 || mldv2) && ip.ttl == 1", "next;", owner=owner)
    for priority, match, actions in (
        (100, MARTIANS, "drop;"),
        (85, "arp || nd", "drop;"),
        (84, "nd_rs || nd_ra", "next;"),
        (83, "ip6.mcast_rsvd", "drop;"),
        (82, "ip4.mcast || ip6.mcast", "next;" if info.mcast_relay else "drop;"),
        (50, "eth.bcast", "drop;"),
        (32, "ip.ttl == {0, 1} && !ip.later_frag && (ip4.mcast || ip6.mcast)", "drop;"),
        # 26.03 (ttl_exceeded_per_port): at 29, under the ports' catch-all TTL errors (30).
        (29 if ctx.profile.has("ttl_exceeded_per_port") else 30, "ip.ttl == {0, 1}", "drop;"),
    ):
        table.add(i, LR_IN_IP_INPUT, priority, match, actions, owner=owner)


def _unreachable_flows(fam: str, addr: str) -> list[tuple[int, str, str, str]]:
    """(priority, match, actions, Copp protocol) of the unreachable replies for one address."""
    head = f"{fam} && {fam}.dst == {addr} && !ip.later_frag"
    swap = f"eth.dst <-> eth.src; {fam}.dst <-> {fam}.src;"
    if fam == "ip4":
        udp = f"icmp4 {{{swap} ip.ttl = 255; icmp4.type = 3; icmp4.code = 3; next; }};"
        other = f"icmp4 {{{swap} ip.ttl = 255; icmp4.type = 3; icmp4.code = 2; next; }};"
    else:
        udp = f"icmp6 {{{swap} ip.ttl = 255; icmp6.type = 1; icmp6.code = 4; next; }};"
        other = f"icmp6 {{{swap} ip.ttl = 255; icmp6.type = 1; icmp6.code = 3; next; }};"
    error = f"icmp{fam[-1]}-error"
    return [
        (80, f"{head} && sctp", f"sctp_abort {{{swap} next; }};", "tcp-reset"),
        (80, f"{head} && tcp", f"tcp_reset {{{swap} next; }};", "tcp-reset"),
        (80, f"{head} && udp", udp, error),
        (70, head, other, error),
    ]


def build_lrp_ip_input_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    if port.kind != "lrp":
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    info = router_info(port.dp, ctx)
    owner = port_owner(port)
    h = lrp_hint(port)
    i = port.dp.index
    name = port.name

    def add(priority: int, match: str, actions: str, with_hint: bool = True, proto: str | None = None) -> None:
        meter = copp_meter(port.dp, ctx, proto) if proto else None  # the router's Copp
        table.add(i, LR_IN_IP_INPUT, priority, match, actions, hint=h if with_hint else None, owner=owner,
                  controller_meter=meter)

    v4 = [n.addr_s for n in nets.ipv4]
    v6 = [n.addr_s for n in nets.ipv6]
    if nets.ipv4:
        own = ", ".join(x for n in nets.ipv4 for x in (n.addr_s, n.bcast_s))
        add(100, f"ip4.src == {{{own}}} && {REGBIT_EGRESS_LOOPBACK} == 0", "drop;")
    pd_only = ctx.profile.has("dhcpv6_reply_prefix_delegation")
    for a in () if pd_only and not smap_bool(port.nb.options, "prefix_delegation", False) else v6:
        add(
            100,
            f"ip6.dst == {a} && udp.src == 547 && udp.dst == 546",
            "reg0 = 0; handle_dhcpv6_reply;",
            False,
        )

    # Replies from the router itself.
    if v4:
        add(90, f"ip4.dst == {ip_set(v4)} && icmp4.type == 8 && icmp4.code == 0", ECHO4)
    add(90, f"ip6.dst == {ip_set(v6)} && icmp6.type == 128 && icmp6.code == 0", ECHO6)
    arp_resident = arp_resident_port(port, ctx)
    arp_suffix = f' && is_chassis_resident("{arp_resident}")' if arp_resident else ""
    for n4 in nets.ipv4:
        match = f'inport == "{name}" && arp.op == 1 && arp.tpa == {n4.addr_s} && arp.spa == {net_s(n4)}'
        add(90, match + arp_suffix, ARP_REPLY)
    nd_suffix = f' && is_chassis_resident("{port.crp.name}")' if port.crp is not None else ""
    for n6 in nets.ipv6:
        a = n6.addr_s
        match = f'inport == "{name}" && ip6.dst == {{{a}, {n6.sn_addr_s}}} && nd_ns && nd.target == {a}'
        add(90, match + nd_suffix, NA_REPLY, proto="nd-na")
    # The router's load-balancer VIPs inside its networks ($_rtr_lb_<key>_ip4/ip6), on every port.
    for set_name in sorted(router_lb_vip_set_names(port.dp, ctx)):
        if set_name.endswith("_ip4"):
            add(90, f'inport == "{name}" && arp.op == 1 && arp.tpa == ${set_name}{nd_suffix}', ARP_REPLY)
        else:
            add(90, f'inport == "{name}" && nd_ns && nd.target == ${set_name}{nd_suffix}', LB_NA_REPLY,
                proto="nd-na")

    if not (info.is_gateway or info.has_dgp):
        for fam, addrs in (("ip4", v4), ("ip6", v6)):
            for a in addrs:
                for priority, match, actions, proto in _unreachable_flows(fam, a):
                    add(priority, match, actions, proto=proto)

    excluded = router_nat_owned(port.dp, ctx)
    # A gateway router with lb_force_snat_ip=router_ip SNATs to its port addresses: none is dropped.
    snat_to_router_ip = force_snat_router_ip(port.dp, ctx)
    for fam, addrs in (("ip4", v4), ("ip6", v6)):
        kept = [] if snat_to_router_ip else [a for a in addrs if parse_ip(a) not in excluded]
        if kept:
            add(60, f"{fam}.dst == {braces(kept)}", "drop;")

    _add_ttl_exceeded(port, nets, add, ctx.profile.has("ttl_exceeded_per_port"))
    _add_gateway_mtu(port, nets, add)


def _ttl_exceeded4(name: str, src: str) -> str:
    return (
        "icmp4 {eth.dst <-> eth.src; icmp4.type = 11; /* Time exceeded */ icmp4.code = 0; "
        f'/* TTL exceeded in transit */ {src}; ip.ttl = 254; outport = "{name}"; flags.loopback = 1; '
        "output; };"
    )


def _ttl_exceeded6(name: str, src: str) -> str:
    return (
        f"icmp6 {{eth.dst <-> eth.src; {src}; ip.ttl = 254; icmp6.type = 3; /* Time exceeded */ "
        f'icmp6.code = 0; /* TTL exceeded in transit */ outport = "{name}"; flags.loopback = 1; output; }};'
    )


def _add_ttl_exceeded(port: Port, nets: LrpNetworks, add: AddFn, per_port: bool = False) -> None:
    """ICMP time exceeded for packets coming in with TTL 0 or 1 (31: per IPv4 address, per
    configured IPv6 network from its sources).  Behaviour ``ttl_exceeded_per_port`` (26.03,
    observed): the IPv4 flows (31) match their network's sources (``ip4.src == NET/PLEN``), and
    each port answers every other source (30, IPv4 from its first IPv4 address, IPv6 from its first
    IPv6 address, else its link-local one; not swapped on a distributed gateway port)."""
    name = port.name
    dgp = port.crp is not None
    if per_port:
        head = f'inport == "{name}" && '
        tail = " && ip.ttl == {0, 1} && !ip.later_frag"
        if nets.ipv4:
            add(30, f"{head}ip4{tail}", _ttl_exceeded4(name, f"ip4.dst = ip4.src; ip4.src = {nets.ipv4[0].addr_s}"),
                proto="icmp4-error")
        add(30, f"{head}ip6{tail}", _ttl_exceeded6(name, f"ip6.dst = ip6.src; ip6.src = {nets.ipv6[0].addr_s}"),
            proto="icmp6-error")
    for n4 in nets.ipv4:
        src = "ip4.dst <-> ip4.src " if dgp else f"ip4.dst = ip4.src; ip4.src = {n4.addr_s} "
        from_net = f" && ip4.src == {net_s(n4)}" if per_port else ""
        add(31, f'inport == "{name}" && ip4{from_net} && ip.ttl == {{0, 1}} && !ip.later_frag',
            _ttl_exceeded4(name, src), proto="icmp4-error")
    for n6 in nets.ipv6[:-1]:
        src = "ip6.dst <-> ip6.src " if dgp else f"ip6.dst = ip6.src; ip6.src = {n6.addr_s} "
        actions = _ttl_exceeded6(name, src)
        match = f'inport == "{name}" && ip6 && ip6.src == {net_s(n6)} && ip.ttl == {{0, 1}} && !ip.later_frag'
        add(31, match, actions, proto="icmp6-error")


def frag_needed_actions(fam: str, mac: str, src: str, mtu: int) -> str:
    """The ICMP error a too-big packet gets (``lr_in_ip_input`` and ``lr_in_larger_pkts``)."""
    if fam == "ip4":
        return (
            f"icmp4_error {{{REGBIT_EGRESS_LOOPBACK} = 1; {REGBIT_PKT_LARGER} = 0; eth.dst = {mac}; ip4.dst = ip4.src; ip4.src = {src}; "
            "ip.ttl = 255; icmp4.type = 3; /* Destination Unreachable. */ icmp4.code = 4; "
            f"/* Frag Needed and DF was Set. */ icmp4.frag_mtu = {mtu}; next(pipeline=ingress, table=0); }};"
        )
    return (
        f"icmp6_error {{{REGBIT_EGRESS_LOOPBACK} = 1; {REGBIT_PKT_LARGER} = 0; eth.dst = {mac}; ip6.dst = ip6.src; ip6.src = {src}; "
        "ip.ttl = 255; icmp6.type = 2; /* Packet Too Big. */ icmp6.code = 0; "
        f"icmp6.frag_mtu = {mtu}; next(pipeline=ingress, table=0); }};"
    )


def _add_gateway_mtu(port: Port, nets: LrpNetworks, add: AddFn) -> None:
    mtu = gateway_mtu(port)
    if mtu is None:
        return
    head = f'inport == "{port.name}"'
    src4 = first_ipv4(nets)
    if src4 is not None:
        add(
            150, f"{head} && ip4 && {REGBIT_PKT_LARGER} && {REGBIT_EGRESS_LOOPBACK} == 0", frag_needed_actions("ip4", nets.ea_s, src4, mtu),
            proto="icmp4-error",
        )
    add(
        150,
        f"{head} && ip6 && {REGBIT_PKT_LARGER} && {REGBIT_EGRESS_LOOPBACK} == 0",
        frag_needed_actions("ip6", nets.ea_s, first_ipv6(nets), mtu),
        proto="icmp6-error",
    )
