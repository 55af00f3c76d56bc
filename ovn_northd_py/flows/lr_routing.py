"""Router ingress ``lr_in_ip_routing_pre``, ``lr_in_ip_routing``, ``lr_in_ip_routing_ecmp``.

Observed on the reference (priority-0 fallbacks in :mod:`.defaults`):

* route tables: every distinct ``options:route_table`` of the router's NB ports (uuid
  order), then of its static routes (route uuid order) gets an id from 1;
  ``lr_in_ip_routing_pre`` sets ``reg7`` to the id of the inport's table (100), also for
  a port left out for its malformed MAC (a datapath flow, from the NB rows);
* multicast (``options:mcast_relay``): IP multicast goes to ``_MC_static`` with a
  TTL decrement (10450; dropped when no port sets ``options:mcast_flood``); with
  such a port IGMP/MLD go there too (10460) except the router's own (10550, per
  port MAC).  Flows for IGMP groups learnt on attached switches are not built;
* connected routes, per router port P (enabled or not) with MAC E: per IPv4 network
  ``ip4.dst == S/L`` at priority 3*L+2 (``reg0 = ip4.dst; reg1 = A``), per configured
  IPv6 network likewise with ``xxreg0``/``xxreg1``, and the link-local network only
  for packets that came in on P (``inport == P && ip6.dst == fe80::/64``, 194);
* static routes (``Logical_Router_Static_Route``): destination routes at priority
  3*L+1 matching ``reg7 == T && ip4.dst == S/L``, source routes at 3*L matching
  ``ip4.src == S/L`` (with the ``reg7`` test only in a named table); the next hop
  goes to ``reg0`` and ``reg1`` is the output port's address in the next hop's
  network (the port's first address of that family when ``output_port`` names a
  port none of whose networks holds it).  Without ``output_port`` the first port
  (port order) with a network holding the next hop is used; a route whose next hop
  no port reaches, whose ``output_port`` is not a port of the router or whose
  prefix and next hop differ in family gets no flow (25.03, ``route_mixed_family``: it gets
  one, with the next hop's registers and ``reg9[9]``; observed).  ``discard`` routes drop; a
  ``discard`` ECMP member with an ``output_port`` (having an address of the prefix's
  family) gets an ``lr_in_ip_routing_ecmp`` flow like the others, with ``reg0 = discard``
  and the port's first address of that family; with ``ecmp_discard_drops_group`` (26.03) a
  group with a ``discard`` member drops on every member (``lr_in_ip_routing_ecmp`` ``drop;`` for
  each member id, the discard ones included);
* ECMP: valid routes with the same table, policy and prefix form a group (routes in
  uuid order; group ids from 1 in the order groups get their second member, member
  ids from 1 in route order); the routing flow selects a member
  (``reg8[16..31] = select(...)``; 25.03's ``selection_fields``: :func:`ecmp_selects`) and
  ``lr_in_ip_routing_ecmp`` sets the next hop per member (100); non-ECMP traffic passes (150);
* ECMP symmetric reply (``options:ecmp_symmetric_reply`` on a member route of a
  group, gateway routers only): ``lr_in_defrag`` checks the next hop (100, once per
  group) and, per such member's port P (tunnel key K), traffic entering P from the
  route's prefix; ``lr_in_ecmp_stateful`` commits new/established connections
  from P (100); replies are routed back through P (``lr_in_ip_routing`` 10300),
  skip the policies (65535) and take the committed MAC (``lr_in_arp_resolve`` 200);
* ``lr_in_arp_request``: for every static route whose next hop is an IPv6 address,
  a priority-200 neighbour solicitation to the next hop's solicited-node address;
* BFD (:mod:`.lr_bfd`): a static route whose BFD session is down is not installed (nor
  counted in its ECMP group); a non-ECMP route (connected or static) out of a port named by a
  BFD row gets a copy one priority higher for ``udp.dst == 3784`` without the TTL decrement.

Owners: connected routes and ``routing_pre`` belong to the router port, each static
route's flows to ``("route", uuid)`` (an ECMP group's routing flow to its first
member).  Stage-hints: the router port, the route; none on an ECMP group's flow.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv6Address
from typing import Any

from ..lflow.stages import (
    LR_IN_ARP_REQUEST,
    LR_IN_ARP_RESOLVE,
    LR_IN_DEFRAG,
    LR_IN_ECMP_STATEFUL,
    LR_IN_IP_ROUTING,
    LR_IN_IP_ROUTING_ECMP,
    LR_IN_IP_ROUTING_PRE,
    LR_IN_POLICY,
    LR_IN_POLICY_ECMP,
)
from ..lflow.table import FlowTable
from ..northd.addresses import (
    AddressError,
    IPAddress,
    Ipv4Net,
    Ipv6Net,
    format_mac,
    parse_ip_cidr,
    parse_lrp_networks,
    solicited_node,
)
from ..northd.build import idl_row_order
from ..northd.mcast_keys import MC_STATIC
from ..northd.model import Datapath, Port
from ..northd.ovs_order import calc_mask, uuid_map_order
from ..ovsdb import fastrow
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .copp import copp_meter
from .lr_bfd import BFD_MATCH, route_bfd_down
from .lr_common import (
    arp_request_then,
    find_lrp_for_ip,
    fmt_ip,
    lrp_hint,
    net_s,
    network_addr_for,
    nexthop_family,
    nexthop_family_match,
    normalized_net_s,
    output_port_addr_for,
    parse_ip_strict,
    port_nets,
    route_priority,
    router_info,
    smap_bool,
    src_ipv4_reg,
)
from .owners import dp_owner, port_owner, route_owner
from .registers import (
    REG_ECMP_ETH_FIELD,
    REG_ECMP_ETH_FULL,
    REG_ECMP_GROUP_ID,
    REG_ECMP_MEMBER_ID,
    REG_NEXT_HOP_IPV4,
    REG_NEXT_HOP_IPV6,
    REG_ROUTE_TABLE_ID,
    REG_SRC_IPV6,
    REGBIT_ECMP_COMMIT,
    REGBIT_KNOWN_ECMP_NH,
)


@dataclass(frozen=True, slots=True)
class Route:
    """A static route that resolved to a router port (or a discard route)."""

    uuid: str
    table_id: int
    src: bool  # policy src-ip
    prefix: Ipv4Net | Ipv6Net  # host bits cleared
    nexthop: IPAddress | None  # None: discard
    port: Port | None
    port_addr: str  # the output port's address used as reg1/xxreg1
    mac: str
    symmetric: bool = False  # options:ecmp_symmetric_reply
    to_dst: bool = False  # an empty nexthop with an output port: the next hop is the destination
    learned: bool = False  # an SB Learned_Route (flows/dynamic_routing.py; uuid: the SB row's)

    @property
    def v6(self) -> bool:
        return isinstance(self.prefix, Ipv6Net)

    @property
    def nh_v6(self) -> bool:
        """The next hop's family (a learned route's, and 25.03's ``route_mixed_family``: may differ
        from the prefix's)."""
        return isinstance(self.nexthop, IPv6Address) if self.nexthop is not None else self.v6

    @property
    def group_key(self) -> tuple[int, bool, bool, int, int, bool]:
        return (self.table_id, self.src, self.v6, int(self.prefix.addr), self.prefix.plen, self.learned)

    @property
    def hint(self) -> str | None:
        return None if self.learned else hint(self.uuid)

    def priority(self, ctx: FlowCtx) -> int:
        return route_priority(ctx, self.prefix.plen, "learned" if self.learned else "src" if self.src else "static")

    def match(self, ctx: FlowCtx) -> str:
        fam = "ip6" if self.v6 else "ip4"
        direction = "src" if self.src else "dst"
        m = f"{fam}.{direction} == {net_s(self.prefix)}"
        # 23.03 leaves the table test out of source routes of the main table; 25.03 does not.
        if self.src and self.table_id == 0 and not ctx.profile.has("src_route_reg7"):
            return m
        return f"{REG_ROUTE_TABLE_ID} == {self.table_id} && {m}"

    def next_hop_actions(self, ctx: FlowCtx, ecmp: bool = False) -> str:
        assert self.port is not None
        nh_reg, src_reg = (REG_NEXT_HOP_IPV6, REG_SRC_IPV6) if self.nh_v6 else (REG_NEXT_HOP_IPV4, src_ipv4_reg(ctx))
        if self.to_dst:
            # Observed: an ECMP member without next hop writes it empty (``reg0 = ;``).
            nh = "" if ecmp else "ip6.dst" if self.v6 else "ip4.dst"
        else:
            nh = "discard" if self.nexthop is None else fmt_ip(self.nexthop)
        return (
            f"{nh_reg} = {nh}; {src_reg} = {self.port_addr}; eth.src = {self.mac}; "
            f'outport = "{self.port.name}";'
        )


def _by_uuid(rows: Any) -> list[Any]:
    return sorted(rows, key=lambda r: str(r.uuid))


def _bad_mac(lrp: Any) -> bool:
    try:
        parse_lrp_networks(lrp.mac, list(lrp.networks))
    except AddressError:
        return True
    return False


def route_table_ids(router: Datapath, ctx: FlowCtx) -> dict[str, int]:
    """Route table name -> id (ports first, then static routes)."""

    def compute() -> dict[str, int]:
        ids: dict[str, int] = {}
        # NB rows: a port left out of the model for its malformed MAC still counts.
        names = [str(p.options.get("route_table", "")) for p in _by_uuid(router.nb.ports)]
        names += [str(r.route_table) for r in _by_uuid(router.nb.static_routes)]
        for name in names:
            if name and name not in ids:
                ids[name] = len(ids) + 1
        return ids

    return ctx.cached("lr_route_tables", router.key, compute)


def _prefix(text: str) -> Ipv4Net | Ipv6Net | None:
    try:
        net = parse_ip_cidr(text)
    except AddressError:
        return None
    if isinstance(net, Ipv4Net):
        return Ipv4Net(net.network, net.plen)
    return Ipv6Net(net.network, net.plen)


def _resolve_route(router: Datapath, ctx: FlowCtx, row: Any, tables: dict[str, int],
                   warn: bool = True) -> Route | None:
    uuid = str(row.uuid)
    prefix = _prefix(str(row.ip_prefix))
    if prefix is None:
        # Like the reference ("bad 'ip_prefix' ... in static route"): no flow, one warning.
        if warn:
            ctx.warn("route_bad_prefix", "Logical_Router_Static_Route", row.uuid,
                     f"bad ip_prefix {row.ip_prefix!r}", router=router.name)
        return None
    table_id = tables.get(str(row.route_table), 0)
    src = opt(row.policy) == "src-ip"
    nexthop_s = str(row.nexthop)
    info = router_info(router, ctx)
    out_name = opt(row.output_port)
    if nexthop_s == "discard":
        # With an output port, an ECMP member's flow still names it (``reg0 = discard``).
        out = next((p for p in router.ports if p.kind == "lrp" and p.name == out_name), None)
        out_nets = info.nets.get(out_name) if out is not None and out_name else None
        if out is None or out_nets is None:
            return Route(uuid, table_id, src, prefix, None, None, "", "")
        fam = out_nets.ipv6 if isinstance(prefix, Ipv6Net) else out_nets.ipv4
        if not fam:
            return Route(uuid, table_id, src, prefix, None, None, "", "")
        return Route(uuid, table_id, src, prefix, None, out, fam[0].addr_s, out_nets.ea_s)
    if not nexthop_s:
        # ``lr-route-add R PREFIX PORT``: no next hop, an output port: packets go to their
        # destination through it, from its first address of the family (none: no route).
        port = next((p for p in router.ports if p.kind == "lrp" and p.name == out_name), None) if out_name else None
        nets = info.nets.get(out_name) if port is not None and out_name else None
        if port is None or nets is None:
            return None
        first = nets.ipv6 if isinstance(prefix, Ipv6Net) else nets.ipv4
        if not first:
            return None
        return Route(uuid, table_id, src, prefix, None, port, first[0].addr_s, nets.ea_s,
                     smap_bool(row.options, "ecmp_symmetric_reply", False), to_dst=True)
    nexthop = parse_ip_strict(nexthop_s)
    # 25.03 (behaviour "route_mixed_family", observed): the next hop may be of the other family
    # than the prefix (an IPv4 prefix via an IPv6 next hop, and back).
    if nexthop is None or (isinstance(nexthop, IPv6Address) != isinstance(prefix, Ipv6Net)
                           and not ctx.profile.has("route_mixed_family")):
        return None
    symmetric = smap_bool(row.options, "ecmp_symmetric_reply", False)
    if out_name:
        port = next((p for p in router.ports if p.kind == "lrp" and p.name == out_name), None)
        nets = info.nets.get(out_name) if port is not None else None
        if port is None or nets is None:
            return None
        addr = output_port_addr_for(nets, nexthop)
        if addr is None:
            return None
        return Route(uuid, table_id, src, prefix, nexthop, port, addr, nets.ea_s, symmetric)
    found = find_lrp_for_ip(router, ctx, nexthop)
    if found is None:
        return None
    port, addr = found
    return Route(uuid, table_id, src, prefix, nexthop, port, addr, info.nets[port.name].ea_s, symmetric)


def route_resolves(router: Datapath, ctx: FlowCtx, row: Any) -> bool:
    """Does the static route ``row`` of ``router`` get flows (BFD aside): a valid prefix and next hop
    reachable through a router port, or ``discard``?"""
    return _resolve_route(router, ctx, row, route_table_ids(router, ctx)) is not None


def resolved_static_routes(router: Datapath, ctx: FlowCtx) -> list[Route]:
    """The router's static routes that get flows (BFD aside), in route order."""
    tables = route_table_ids(router, ctx)
    return [r for row in static_routes(router) if (r := _resolve_route(router, ctx, row, tables)) is not None]


def symmetric_nexthops(router: Datapath, ctx: FlowCtx) -> list[tuple[Port, str]]:
    """(out port, next hop) of the router's static routes with ``options:ecmp_symmetric_reply``
    that get flows (a next-hop address reached through a router port; BFD aside)."""
    tables = route_table_ids(router, ctx)
    out: list[tuple[Port, str]] = []
    for row in static_routes(router):
        route = _resolve_route(router, ctx, row, tables)
        if route is not None and route.symmetric and route.port is not None and route.nexthop is not None:
            out.append((route.port, fmt_ip(route.nexthop)))
    return out


def learned_routes(router: Datapath, ctx: FlowCtx) -> list[Route]:
    """The router's SB Learned_Route rows that resolve (:mod:`.dynamic_routing`): a valid prefix
    and next hop, the port they were learned on a port of the router with a network holding the
    next hop (behaviour ``learned_route_any_nexthop``, 26.03: or any address of the next hop's
    family; ``learned_route_cleanup``, 26.03: none on a router without dynamic routing)."""
    rows = ctx.learned_routes.get(router.key, ())
    if not rows:
        return []
    if ctx.profile.has("learned_route_cleanup") and \
            str(router.nb.options.get("dynamic-routing", "")).lower() != "true":
        return []
    any_nexthop = ctx.profile.has("learned_route_any_nexthop")
    info = router_info(router, ctx)
    ports = {p.name: p for p in router.ports if p.kind == "lrp"}
    out: list[Route] = []
    for lr in rows:
        prefix = _prefix(lr.ip_prefix)
        nexthop = parse_ip_strict(lr.nexthop)
        port = ports.get(lr.port)
        nets = info.nets.get(lr.port) if port is not None else None
        if prefix is None or nexthop is None or port is None or nets is None:
            continue
        addr = network_addr_for(nets, nexthop)
        if addr is None and any_nexthop:
            family = nets.ipv6 if isinstance(nexthop, IPv6Address) else nets.ipv4
            addr = family[0].addr_s if family else None
        if addr is None:
            continue
        out.append(Route(lr.uuid, 0, False, prefix, nexthop, port, addr, nets.ea_s, learned=True))
    return out


def build_lrp_routing_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Connected routes of one router port and its route-table selection."""
    if port.kind != "lrp":
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    owner = port_owner(port)
    h = lrp_hint(port)
    i = port.dp.index
    name = port.name
    mac = nets.ea_s
    rtb = port.nb.options.get("route_table")
    if rtb:
        tid = route_table_ids(port.dp, ctx)[rtb]
        table.add(i, LR_IN_IP_ROUTING_PRE, 100, f'inport == "{name}"', f"{REG_ROUTE_TABLE_ID} = {tid}; next;", owner=owner)
    info = router_info(port.dp, ctx)
    if info.mcast_relay and info.mcast_flood:
        # The router's own IGMP/MLD, statically forwarded, must not loop back.
        for proto in ("igmp", "(mldv1 || mldv2)"):
            table.add(i, LR_IN_IP_ROUTING, 10550, f"eth.src == {mac} && {proto}", "drop;", owner=owner)
    tail = f'eth.src = {mac}; outport = "{name}"; flags.loopback = 1; '
    tail4, tail6 = tail + nexthop_family(ctx, False) + "next;", tail + nexthop_family(ctx, True) + "next;"
    bfd = name in ctx.bfd_ports
    for n4 in nets.ipv4:
        actions = f"{REG_ECMP_GROUP_ID} = 0; {REG_NEXT_HOP_IPV4} = ip4.dst; {src_ipv4_reg(ctx)} = {n4.addr_s}; {tail4}"
        match, priority = f"ip4.dst == {net_s(n4)}", route_priority(ctx, n4.plen, "connected")
        table.add(i, LR_IN_IP_ROUTING, priority, match, "ip.ttl--; " + actions, hint=h, owner=owner)
        if bfd:
            table.add(i, LR_IN_IP_ROUTING, priority + 1, match + BFD_MATCH, actions, hint=h, owner=owner)
    for n6 in nets.ipv6:
        actions = f"{REG_ECMP_GROUP_ID} = 0; {REG_NEXT_HOP_IPV6} = ip6.dst; {REG_SRC_IPV6} = {n6.addr_s}; {tail6}"
        match = f"ip6.dst == {net_s(n6)}"
        if n6 is nets.lla:
            match = f'inport == "{name}" && {match}'
        priority = route_priority(ctx, n6.plen, "connected")
        table.add(i, LR_IN_IP_ROUTING, priority, match, "ip.ttl--; " + actions, hint=h, owner=owner)
        if bfd:
            table.add(i, LR_IN_IP_ROUTING, priority + 1, match + BFD_MATCH, actions, hint=h, owner=owner)


def build_lr_routing_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Router-wide routing flows: RS/RA drop and the ECMP bypasses (routes and policies)."""
    owner = dp_owner(router)
    table.add(router.index, LR_IN_IP_ROUTING, 10550, "nd_rs || nd_ra", "drop;", owner=owner)
    table.add(router.index, LR_IN_IP_ROUTING_ECMP, 150, f"{REG_ECMP_GROUP_ID} == 0", "next;", owner=owner)
    table.add(router.index, LR_IN_POLICY_ECMP, 150, f"{REG_ECMP_GROUP_ID} == 0", "next;", owner=owner)
    for lrp in _by_uuid(router.nb.ports):
        # A port with a malformed MAC has no Port_Binding nor other flows, but selects its table.
        rtb = str(lrp.options.get("route_table", ""))
        if rtb and _bad_mac(lrp):
            actions = f"{REG_ROUTE_TABLE_ID} = {route_table_ids(router, ctx)[rtb]}; next;"
            table.add(router.index, LR_IN_IP_ROUTING_PRE, 100, f'inport == "{lrp.name}"', actions, owner=owner)
    info = router_info(router, ctx)
    if info.mcast_relay:
        to_static = f'clone {{ outport = "{MC_STATIC}"; ip.ttl--; next; }};' if info.mcast_flood else "drop;"
        table.add(router.index, LR_IN_IP_ROUTING, 10450, "ip4.mcast || ip6.mcast", to_static, owner=owner)
        if info.mcast_flood:
            for match in ("igmp", "mldv1 || mldv2"):
                actions = f'clone {{ outport = "{MC_STATIC}"; next; }};'
                table.add(router.index, LR_IN_IP_ROUTING, 10460, match, actions, owner=owner)


def static_routes(router: Datapath) -> list[Any]:
    return _by_uuid(router.nb.static_routes)


def build_lr_static_route_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of the router's static routes, each owned by ``("route", uuid, router key)``."""
    rows = static_routes(router)
    learned = learned_routes(router, ctx)
    if not rows and not learned:
        return
    i, rkey = router.index, router.key
    tables = route_table_ids(router, ctx)
    groups: dict[tuple[int, bool, bool, int, int, bool], list[Route]] = {}
    order: list[list[Route]] = []  # groups in order of creation (second member)
    routes: list[Route] = []
    for row in rows:
        _add_nd_solicit(router, row, table, ctx)
        route = _resolve_route(router, ctx, row, tables)
        if route is None or route_bfd_down(row):
            continue
        routes.append(route)
    # 25.03 (behaviour "symmetric_route_group"): a symmetric-reply route is an ECMP group even alone.
    single_groups = ctx.profile.has("symmetric_route_group")
    # The walk order only numbers ECMP groups and their members: a router without a group of
    # static routes (most: one route per prefix) writes the same flows in any order, and skips
    # the walk over every router before it.
    if ctx.profile.has("ecmp_route_chain_order") and (
            len({r.group_key for r in routes}) < len(routes) or (single_groups and any(r.symmetric for r in routes))):
        routes = _chain_order(router, ctx, routes)
    routes += learned  # (after the static routes: their ECMP groups are numbered after)
    grouped: set[int] = set()
    for route in routes:
        members = groups.setdefault(route.group_key, [])
        members.append(route)
        if id(members) not in grouped and (len(members) == 2 or (single_groups and route.symmetric)):
            grouped.add(id(members))
            order.append(members)
    for members in groups.values():
        if id(members) not in grouped:
            _add_unique_route(i, rkey, members[0], table, ctx)
    # 26.03 (ecmp_symmetric_ct_mark): a symmetric member marks its traffic for
    # lr_in_ecmp_stateful_egr to commit (reg9[10]; observed on distributed routers too).
    mark = ctx.profile.has("ecmp_symmetric_ct_mark")
    drop_group = ctx.profile.has("ecmp_discard_drops_group")
    fields_of = {str(r.uuid): selection_fields(r) for r in rows} if ctx.profile.has("route_selection_fields") else {}
    for gid, members in enumerate(order, start=1):
        first = members[0]
        ids = ", ".join(str(m) for m in range(1, len(members) + 1))
        if len(members) == 1:
            selects = [("", 0, f"{REG_ECMP_MEMBER_ID} = 1; next;")]
        else:
            shared = frozenset.intersection(*(fields_of.get(m.uuid, frozenset()) for m in members))
            selects = [(extra, up, f"{REG_ECMP_MEMBER_ID} = {sel}") for extra, up, sel in ecmp_selects(shared, ids)]
        for extra, up, select in selects:
            actions = f"ip.ttl--; flags.loopback = 1; {REG_ECMP_GROUP_ID} = {gid}; {select}"
            table.add(i, LR_IN_IP_ROUTING, first.priority(ctx) + up, first.match(ctx) + extra, actions,
                      owner=route_owner(first.uuid, rkey))
        drop_all = drop_group and any(m.nexthop is None for m in members)
        for mid, route in enumerate(members, start=1):
            if route.port is None and not drop_all:
                continue
            match = f"{REG_ECMP_GROUP_ID} == {gid} && {REG_ECMP_MEMBER_ID} == {mid}"
            commit = f"{REGBIT_ECMP_COMMIT} = 1; " if mark and route.symmetric else ""
            actions = "drop;" if drop_all else \
                f"{route.next_hop_actions(ctx, ecmp=True)} {nexthop_family(ctx, route.nh_v6)}{commit}next;"
            table.add(
                i,
                LR_IN_IP_ROUTING_ECMP,
                100,
                match,
                actions,
                hint=route.hint,
                owner=route_owner(route.uuid, rkey),
            )
        if router_info(router, ctx).is_gateway and any(m.symmetric for m in members):
            _add_symmetric_reply(i, rkey, members, table, ctx)


def chain_walk(items: list[Any], before: int = 0) -> list[Any]:
    """The walk of one router's list in the reference's hash map of every router's parsed routes
    (or policies), all of a router's under one hash: ``before`` entries of the routers before it,
    then ``items`` in turn, each pushed onto the head of the list, the list reversed whenever
    the map grows (the count ``n`` reaching ``n / 2 > mask``, mask then
    :func:`..northd.ovs_order.calc_mask` of ``n``); the walk takes the list from its head."""
    mask = 0
    for n in range(1, before + 1):
        if n // 2 > mask and calc_mask(n) > mask:
            mask = calc_mask(n)
    chain: list[Any] = []
    for n, item in enumerate(items, start=before + 1):
        chain.insert(0, item)
        if n // 2 > mask and calc_mask(n) > mask:
            mask = calc_mask(n)
            chain.reverse()
    return chain


def routers_before(router: Datapath, ctx: FlowCtx) -> list[Datapath]:
    """The routers the reference takes before ``router``: an OVS hash map of their uuids' first
    32 bits, filled in NB row order (:func:`..northd.build.idl_row_order`)."""
    routers = {r.key: r for r in ctx.nd.routers()}
    out: list[Datapath] = []
    for k in uuid_map_order(idl_row_order(routers)):
        if k == router.key:
            break
        out.append(routers[k])
    return out


def _chain_order(router: Datapath, ctx: FlowCtx, routes: list[Route]) -> list[Route]:
    """Behaviour ``ecmp_route_chain_order`` (25.03, observed): the order in which the router's
    valid static routes (given in uuid order) are walked to form ECMP groups and number them and
    their members: :func:`chain_walk` of its valid static routes in uuid order then one connected
    route per network of its ports (link-local ones included), after the same of
    :func:`routers_before` (with one router, the numbering is the same for one NB file and follows
    the uuids; with several, the reference's own numbering varies from run to run).  E.g. four routes of one prefix on a router with one port of one network, alone in the NB:
    members D, C, A, B of uuid order A-D.  Incremental: :func:`chain_order_dependents` are
    rebuilt when any router's routes or ports change."""
    before = 0
    for other in routers_before(router, ctx):
        tables = route_table_ids(other, ctx)
        before += _connected_count(other, ctx) + sum(
            1 for row in static_routes(other)
            if not route_bfd_down(row) and _resolve_route(other, ctx, row, tables, warn=False) is not None)
    connected: list[Route | None] = [None] * _connected_count(router, ctx)
    return [r for r in chain_walk([*routes, *connected], before) if r is not None]


def _connected_count(router: Datapath, ctx: FlowCtx) -> int:
    """The router's connected routes: one per network of its ports (link-local ones included)."""
    n = 0
    for p in router.ports:
        nets = port_nets(p, ctx) if p.kind == "lrp" else None
        if nets is not None:
            n += len(nets.ipv4) + len(nets.ipv6)
    return n


def chain_order_dependents(nd: Any) -> list[Datapath]:
    """The routers whose ECMP numbering (:func:`_chain_order`, and their policies') may depend on
    the other routers: those with two static routes that may form an ECMP group, one with
    ``options:ecmp_symmetric_reply``, or a policy with several next hops.  A superset of the
    routers :func:`build_lr_static_route_flows` walks for (it groups resolved routes; two NB
    rows of one policy and normalized prefix, any route table, are all that can meet)."""
    return [r for r in nd.routers() if _may_depend(r)]


def _route_facts(row: Any) -> tuple[tuple[bool, Ipv4Net | Ipv6Net] | None, bool]:
    """A static route's (policy, normalized prefix) -- None: no prefix -- and whether it asks for
    ``ecmp_symmetric_reply``; kept with the row (every port change of a switch looks at every
    router's routes)."""
    prefix = _prefix(str(row.ip_prefix))
    return ((opt(row.policy) == "src-ip", prefix) if prefix is not None else None,
            smap_bool(row.options, "ecmp_symmetric_reply", False))


def _multi_nexthop(row: Any) -> bool:
    return len(row.nexthops) > 1


def _may_depend(r: Datapath) -> bool:
    """:func:`chain_order_dependents`' test of one router (two static routes of one policy and normalized
    prefix, ``ecmp_symmetric_reply``, a policy with several next hops; the routes' facts kept with
    their rows)."""
    facts = [fastrow.derived(row, "chain_route_facts", _route_facts) for row in r.nb.static_routes]
    if any(sym for _, sym in facts):
        return True
    seen: set[tuple[bool, Ipv4Net | Ipv6Net]] = set()
    for key, _ in facts:
        if key is not None:
            if key in seen:
                return True
            seen.add(key)
    return any(fastrow.derived(p, "chain_multi_nexthop", _multi_nexthop) for p in r.nb.policies)


_TP_FIELDS = ("tp_dst", "tp_src")


def selection_fields(row: Any) -> frozenset[str]:
    """A static route's ``selection_fields`` (25.03, ``man ovn-nb``)."""
    return frozenset(str(f) for f in getattr(row, "selection_fields", None) or ())


def ecmp_selects(fields: frozenset[str], ids: str) -> list[tuple[str, int, str]]:
    """The member selection of an ECMP group of several routes: ``(extra match, priority offset,
    select action)`` per flow; ``fields``: those every route of the group has (observed: the
    intersection).  Without any, one flow ``select(IDS);`` (OVS' dp_hash); with them (behaviour ``route_selection_fields``, observed on
    25.03) ``select(values=(IDS); hash_fields="F");`` with the fields sorted.  With ``tp_src`` /
    ``tp_dst`` (``man ovn-nb``: Layer 4 ports of TCP, UDP and SCTP only; ``ip_proto`` implied) the
    base flow hashes the other fields and ``ip_proto``, and one flow per protocol P (``&& P``, one
    priority higher) adds ``P_src`` / ``P_dst``."""
    if not fields:
        return [("", 0, f"select({ids});")]

    def sel(names: set[str]) -> str:
        return f'select(values=({ids}); hash_fields="{",".join(sorted(names))}");'

    tp = [f for f in _TP_FIELDS if f in fields]
    base = set(fields) - set(_TP_FIELDS)
    if not tp:
        return [("", 0, sel(base))]
    base.add("ip_proto")
    out = [("", 0, sel(base))]
    for proto in ("sctp", "tcp", "udp"):
        out.append((f" && {proto}", 1, sel(base | {f"{proto}_{f[3:]}" for f in tp})))
    return out


def _add_symmetric_reply(i: int, rkey: str, members: list[Route], table: FlowTable, ctx: FlowCtx) -> None:
    """ECMP symmetric reply flows of one group (gateway routers only; the reply port in ``ct_mark``,
    or ``ct_label`` for old chassis)."""
    if ctx.profile.has("ecmp_symmetric_ct_mark") or ctx.profile.has("ecmp_symmetric_plain"):
        _add_symmetric_reply_plain(i, rkey, members, table, ctx)
        return
    first = next(m for m in members if m.symmetric)
    owner = route_owner(first.uuid, rkey)
    table.add(
        i,
        LR_IN_DEFRAG,
        100,
        first.match(ctx),
        f"{REGBIT_KNOWN_ECMP_NH} = chk_ecmp_nh(); ct_next;",
        hint=hint(first.uuid),
        owner=owner,
    )
    for m in members:
        if not m.symmetric or m.port is None:
            continue
        owner = route_owner(m.uuid, rkey)
        h = hint(m.uuid)
        fam = "ip6" if m.v6 else "ip4"
        reverse = f"{fam}.{'dst' if m.src else 'src'} == {normalized_net_s(m.prefix)}"
        key = m.port.tunnel_key
        head = f'inport == "{m.port.name}" && {reverse}'
        table.add(i, LR_IN_DEFRAG, 100, head, f"{REGBIT_KNOWN_ECMP_NH} = chk_ecmp_nh_mac(); ct_next;", hint=h, owner=owner)
        commit = (
            f"ct_commit {{ ct_label.ecmp_reply_eth = eth.src;  {ctx.features.ct('ecmp_reply_port')} = {key};}}; "
            f"commit_ecmp_nh(ipv6 = {'true' if m.v6 else 'false'}, proto = {{proto}}); next;"
        )
        for proto in ("sctp", "tcp", "udp"):
            actions = commit.replace("{proto}", proto)
            match = f"{head} && (!ct.rpl && ct.est) && {proto} && {REGBIT_KNOWN_ECMP_NH} == 0"
            table.add(i, LR_IN_ECMP_STATEFUL, 100, match, actions, hint=h, owner=owner)
            table.add(
                i,
                LR_IN_ECMP_STATEFUL,
                100,
                f"{head} && (ct.new && !ct.est) && {proto}",
                actions,
                hint=h,
                owner=owner,
            )
        reply = f"ct.rpl && {REGBIT_KNOWN_ECMP_NH} == 1 && {ctx.features.ct('ecmp_reply_port')} == {key}"
        src_reg = REG_SRC_IPV6 if m.v6 else src_ipv4_reg(ctx)
        actions = (
            f"ip.ttl--; flags.loopback = 1; eth.src = {m.mac}; {src_reg} = {m.port_addr}; "
            f'outport = "{m.port.name}"; {nexthop_family(ctx, m.v6)}next;'
        )
        table.add(i, LR_IN_IP_ROUTING, 10300, f"{reply} && {m.match(ctx)}", actions, hint=h, owner=owner)
        table.add(i, LR_IN_POLICY, 65535, reply, "next;", hint=h, owner=owner)
        table.add(
            i,
            LR_IN_ARP_RESOLVE,
            200,
            reply,
            f"push({REG_ECMP_ETH_FULL}); {REG_ECMP_ETH_FULL} = ct_label; eth.dst = {REG_ECMP_ETH_FIELD}; pop({REG_ECMP_ETH_FULL}); next;",
            hint=h,
            owner=owner,
        )


def _add_symmetric_reply_plain(i: int, rkey: str, members: list[Route], table: FlowTable, ctx: FlowCtx) -> None:
    """Behaviours ``ecmp_symmetric_plain`` (25.03, observed with or without NB_Global
    ``options:ecmp_nexthop_monitor_enable``) and ``ecmp_symmetric_ct_mark`` (26.03): no next-hop
    check (``chk_ecmp_nh``); ``lr_in_defrag`` 100 only sends the group's traffic and, per symmetric
    member's port P (tunnel key K), the traffic entering P from the route's prefix to conntrack
    (``ct_next;``); ``lr_in_ecmp_stateful`` 100 commits the latter's MAC and K (``(ct.new ||
    ct.est)``); replies are recognised by ``ct_mark.ecmp_reply_port == K`` alone (routing 10300,
    without the next-hop family bit; policies 65535; ``lr_in_arp_resolve`` 200).  In 26.03 the
    requests routed out of P are also committed in ``lr_in_ecmp_stateful_egr`` (:mod:`.lr_delivery`)."""
    first = next(m for m in members if m.symmetric)
    table.add(i, LR_IN_DEFRAG, 100, first.match(ctx), "ct_next;", hint=hint(first.uuid), owner=route_owner(first.uuid, rkey))
    port_mark = ctx.features.ct("ecmp_reply_port")
    for m in members:
        if not m.symmetric or m.port is None:
            continue
        owner, h = route_owner(m.uuid, rkey), hint(m.uuid)
        fam = "ip6" if m.v6 else "ip4"
        reverse = f"{fam}.{'dst' if m.src else 'src'} == {normalized_net_s(m.prefix)}"
        key = m.port.tunnel_key
        head = f'inport == "{m.port.name}" && {reverse}'
        table.add(i, LR_IN_DEFRAG, 100, head, "ct_next;", hint=h, owner=owner)
        table.add(i, LR_IN_ECMP_STATEFUL, 100, f"{head} && (ct.new || ct.est)",
                  f"ct_commit {{ ct_label.ecmp_reply_eth = eth.src; {port_mark} = {key};}}; next;", hint=h, owner=owner)
        reply = f"{port_mark} == {key}"
        # 25.03 sets the source register of the prefix's family, whatever the next hop's (26.03:
        # ``symmetric_reply_nexthop_src``, the next hop's, as the route's own flow).
        nh_v6 = m.nh_v6 if ctx.profile.has("symmetric_reply_nexthop_src") else m.v6
        src_reg = REG_SRC_IPV6 if nh_v6 else src_ipv4_reg(ctx)
        actions = (f"ip.ttl--; flags.loopback = 1; eth.src = {m.mac}; {src_reg} = {m.port_addr}; "
                   f'outport = "{m.port.name}"; next;')
        table.add(i, LR_IN_IP_ROUTING, 10300, f"{reply} && {m.match(ctx)}", actions, hint=h, owner=owner)
        table.add(i, LR_IN_POLICY, 65535, reply, "next;", hint=h, owner=owner)
        table.add(i, LR_IN_ARP_RESOLVE, 200, reply,
                  f"push({REG_ECMP_ETH_FULL}); {REG_ECMP_ETH_FULL} = ct_label; eth.dst = {REG_ECMP_ETH_FIELD}; "
                  f"pop({REG_ECMP_ETH_FULL}); next;", hint=h, owner=owner)

def _add_unique_route(i: int, rkey: str, route: Route, table: FlowTable, ctx: FlowCtx) -> None:
    h, owner = route.hint, route_owner(route.uuid, rkey)
    prio, match = route.priority(ctx), route.match(ctx)
    if route.nexthop is None and not route.to_dst:
        table.add(i, LR_IN_IP_ROUTING, prio, match, "drop;", hint=h, owner=owner)
        return
    actions = (f"{REG_ECMP_GROUP_ID} = 0; {route.next_hop_actions(ctx)} flags.loopback = 1; "
               f"{nexthop_family(ctx, route.nh_v6)}next;")
    table.add(i, LR_IN_IP_ROUTING, prio, match, "ip.ttl--; " + actions, hint=h, owner=owner)
    if route.port is not None and route.port.name in ctx.bfd_ports:
        table.add(i, LR_IN_IP_ROUTING, prio + 1, match + BFD_MATCH, actions, hint=h, owner=owner)


def _add_nd_solicit(router: Datapath, row: Any, table: FlowTable, ctx: FlowCtx) -> None:
    nexthop = parse_ip_strict(str(row.nexthop))
    if not isinstance(nexthop, IPv6Address):
        return
    sn = solicited_node(nexthop)
    mcast = format_mac((0x3333 << 32) | (int(sn) & 0xFFFFFFFF))
    g = fmt_ip(nexthop)
    match = f"eth.dst == 00:00:00:00:00:00 && {nexthop_family_match(ctx, True)} && {REG_NEXT_HOP_IPV6} == {g}"
    then = arp_request_then(ctx)
    actions = f"nd_ns {{ eth.dst = {mcast}; ip6.dst = {fmt_ip(sn)}; nd.target = {g}; output; }};{then}"
    uuid = str(row.uuid)
    table.add(router.index, LR_IN_ARP_REQUEST, 200, match, actions, hint=hint(uuid), owner=route_owner(uuid, router.key),
              controller_meter=copp_meter(router, ctx, "nd-ns-resolve"))


__all__ = [
    "build_lr_routing_flows",
    "build_lr_static_route_flows",
    "build_lrp_routing_flows",
    "route_resolves",
    "route_table_ids",
    "static_routes",
    "symmetric_nexthops",
]
