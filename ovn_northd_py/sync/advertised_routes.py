"""SB ``Advertised_Route`` (behaviour ``dynamic_routing``, 25.03 on): the routes ovn-controller
announces to the fabric for routers with ``options:dynamic-routing=true``.

``ovn-nb(5)``: a router port redistributes what its ``options:dynamic-routing-redistribute`` lists
(a comma-separated list; the router's option when the port has none, nothing when the port's is
empty), and ``ovn-sb(5)``: each row names the router (``datapath``), the port packets for the
prefix leave through (``logical_port``), the prefix (``ip_prefix``) and, for a host route, the
port OVN forwards them to (``tracked_port``).  Observed on the 25.03 reference (its
``ovn-northd.at`` "dynamic-routing" tests and our parity tests):

* ``connected``: every network of the port (prefix with the host bits cleared, ``10.0.0.0/24``),
  not the IPv6 link-local ones;
* ``connected-as-host`` (implies ``connected``): instead of the networks, every address on the
  switch the port is attached to as a host route (``10.0.0.2``) tracked to the port that has it:
  switch ports' addresses, the addresses of the router ports attached to the switch (this one
  included), whether in the port's networks or not; for a port peered directly with another
  router's port, that port's addresses;
* ``static``: every static route of the router that gets a flow out of this port (any route
  table or policy; an ECMP group's members each on their own port; not ``discard`` routes nor
  routes whose next hop no port reaches);
* ``nat``: the NAT external addresses of the router and of the neighbouring routers -- those
  attached to the same switch as the port, or peered with it directly --, tracked to the NAT
  rule's router's distributed gateway port (none on a gateway router or a router without one; a
  distributed rule, ``logical_port`` and ``external_mac``, tracked to its logical port);
* ``lb``: the load-balancer VIPs of the router (tracked to its distributed gateway port, if any)
  and of the neighbouring routers (tracked to the neighbour's port);
* 25.03 only (behaviours ``dynamic_routing_peer_hides_switch_neighbours``,
  ``dynamic_routing_host_nat``): of a router with a port peered directly with another router's,
  the ports that come after that one in the hash order of their names announce no neighbour's NAT
  rules nor load balancers (:func:`_ports_after_direct_peer`); ``connected-as-host`` also
  announces NAT external addresses and load-balancer VIPs, the other routers' (tracked to their
  port) and its own router's (tracked to the port itself) (26.03 does neither).

Rows are keyed by (router, port, prefix, tracked port), the table's index.  The table exists from
25.03's SB schema on: with an older one (or without the behaviour) nothing is done.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from ..flows.context import FlowCtx
from ..flows.lr_common import net_s, router_info
from ..flows.lr_routing import resolved_static_routes
from ..flows.lsp_addrs import lsp_addresses
from ..lflow.profile import FlowProfile
from ..northd.addresses import AddressError, Ipv4Net, Ipv6Net, parse_ip_cidr
from ..northd.model import LR, Datapath, Northd, Port
from ..northd.ovs_order import sset_order
from .datapaths import dp_nb_key
from .rows import SyncStats, dangling, sync_table

TABLE = "Advertised_Route"
LEARNED = "Learned_Route"
KINDS = ("connected", "connected-as-host", "static", "nat", "lb")

Key = tuple[str, str, str, str | None]  # (router key, port, prefix, tracked port)


def advertised_route_key(row: Any) -> Key | None:
    dp, port = getattr(row, "datapath", None), getattr(row, "logical_port", None)
    if dp is None or port is None:
        return None
    if dangling(dp, port):  # its router or port is being deleted: a key nothing wants (deleted)
        return ("", "", str(row.uuid), None)
    key = dp_nb_key(dp)
    if key is None:
        return None
    tracked = row.tracked_port[0].logical_port if row.tracked_port else None
    return (key, str(port.logical_port), str(row.ip_prefix), None if tracked is None else str(tracked))


def _true(value: Any) -> bool:
    return str(value).lower() == "true"


def redistribute(port: Port) -> frozenset[str]:
    """What the router port redistributes (its own option, else its router's)."""
    opts = port.nb.options
    value = opts["dynamic-routing-redistribute"] if "dynamic-routing-redistribute" in opts else \
        port.dp.nb.options.get("dynamic-routing-redistribute", "")
    return frozenset(w.strip() for w in str(value).split(",") if w.strip())


def _is_lla(net: Ipv6Net) -> bool:
    return (int(net.addr) >> 118) == 0x3FA  # fe80::/10


def _vip_ip(vip: str) -> str | None:
    """The address of a load-balancer VIP key (``IP``, ``IP:PORT``, ``[IP6]:PORT``, ``IP6``)."""
    if vip.startswith("["):
        end = vip.find("]")
        return vip[1:end] if end > 0 else None
    if vip.count(":") == 1:
        return vip.split(":", 1)[0]
    return vip or None


def _valid_ip(text: str) -> str | None:
    try:
        net = parse_ip_cidr(text)
    except AddressError:
        return None
    if net.plen != (32 if isinstance(net, Ipv4Net) else 128):
        return None
    return str(net.addr)


def _lbs(router: Datapath) -> Iterable[Any]:
    yield from router.nb.load_balancer
    for group in router.nb.load_balancer_group:
        yield from group.load_balancer


def _lb_vips(router: Datapath) -> list[str]:
    out: list[str] = []
    for lb in _lbs(router):
        for vip in lb.vips:
            ip = _vip_ip(str(vip))
            ip = _valid_ip(ip) if ip else None
            if ip is not None and ip not in out:
                out.append(ip)
    return out


def _dgp(router: Datapath) -> Port | None:
    return next((p for p in router.ports if p.kind == "lrp" and p.crp is not None), None)


def _nat_ips(router: Datapath) -> list[tuple[str, str | None]]:
    """(external IP, tracked port) of the router's NAT rules: a distributed rule's logical port, else
    the router's distributed gateway port (a gateway router or a router without one: none)."""
    out: list[tuple[str, str | None]] = []
    dgp = _dgp(router)
    for nat in router.nb.nat:
        ip = _valid_ip(str(nat.external_ip))
        if ip is None:
            continue
        lport = nat.logical_port[0] if nat.logical_port else None
        if dgp is not None and lport is not None and nat.external_mac:
            tracked: str | None = str(lport)
        else:
            tracked = dgp.name if dgp is not None else None
        if (ip, tracked) not in out:
            out.append((ip, tracked))
    return out


def _neighbours(port: Port) -> list[tuple[Port, bool]]:
    """The other routers' ports next to ``port`` (and whether through a switch): its direct peer,
    or the router ports attached to the switch it is attached to."""
    peer = port.peer
    if peer is None:
        return []
    if peer.kind == "lrp":
        return [(peer, False)] if peer.dp is not port.dp else []
    out: list[tuple[Port, bool]] = []
    for q in peer.dp.ports:
        if q.kind == "lsp" and q.is_router_lsp and q.peer is not None and q.peer.kind == "lrp" \
                and q.peer.dp is not port.dp:
            out.append((q.peer, True))
    return out


def _ports_after_direct_peer(router: Datapath) -> frozenset[str]:
    """Behaviour ``dynamic_routing_peer_hides_switch_neighbours`` (25.03, observed): the router's
    ports are visited in the hash order of their names (an OVS hmap, chassisredirect ports
    included) and the visit ends at the first port peered directly with another router's: the
    ports after it announce no neighbour's NAT rules nor load balancers."""
    names = sset_order(p.name for p in router.ports)
    by_name = {p.name: p for p in router.ports}
    for i, name in enumerate(names):
        p = by_name[name]
        if p.kind == "lrp" and p.peer is not None and p.peer.kind == "lrp" and p.peer.dp is not router:
            return frozenset(names[i + 1:])
    return frozenset()


def _lrp_addrs(lrp: Port, ctx: FlowCtx) -> list[str]:
    nets = router_info(lrp.dp, ctx).nets.get(lrp.name)
    if nets is None:
        return []
    return [n4.addr_s for n4 in nets.ipv4] + [n6.addr_s for n6 in nets.ipv6 if not _is_lla(n6)]


def _host_routes(port: Port, ctx: FlowCtx, with_nat: bool) -> list[tuple[str, str | None]]:
    """(address, tracked port) of ``connected-as-host``: every address on the port's switch (switch
    ports' addresses, the networks' addresses of the router ports attached to it, this one
    included), or of its directly peered router port; with ``with_nat`` (25.03) the NAT external
    addresses and load-balancer VIPs of those other routers too, and those of the port's own
    router (tracked to the port).  No network filter (observed)."""
    out: dict[tuple[str, str | None], None] = {}
    peer = port.peer
    if peer is None:
        return []
    lrps: list[Port] = []
    if peer.kind == "lrp":
        lrps = [peer]
    else:
        for q in peer.dp.ports:
            if q.kind != "lsp":
                continue
            if q.is_router_lsp:
                if q.peer is not None and q.peer.kind == "lrp":
                    lrps.append(q.peer)
                continue
            for entry in lsp_addresses(q):
                for a4 in entry.ipv4:
                    out[(str(a4.addr), q.name)] = None
                for a6 in entry.ipv6:
                    out[(str(a6.addr), q.name)] = None
    for lrp in lrps:
        for ip in _lrp_addrs(lrp, ctx):
            out[(ip, lrp.name)] = None
        if with_nat and lrp.dp is not port.dp:
            for ip in _router_ips(lrp.dp):
                out[(ip, lrp.name)] = None
    if with_nat:
        for ip in _router_ips(port.dp):
            out[(ip, port.name)] = None
    return list(out)


def _router_ips(router: Datapath) -> list[str]:
    """The NAT external addresses and load-balancer VIPs of ``router``."""
    return list(dict.fromkeys([ip for ip, _t in _nat_ips(router)] + _lb_vips(router)))


def desired_routes(nd: Northd, ctx: FlowCtx) -> list[Key]:
    """The (router key, port, prefix, tracked port) of every route to advertise."""
    out: dict[Key, None] = {}
    host_nat = ctx.profile.has("dynamic_routing_host_nat")
    peer_hides = ctx.profile.has("dynamic_routing_peer_hides_switch_neighbours")
    for router in nd.routers():
        if not _true(router.nb.options.get("dynamic-routing", "")):
            continue
        info = router_info(router, ctx)
        statics = resolved_static_routes(router, ctx)
        dgp = _dgp(router)
        hidden = _ports_after_direct_peer(router) if peer_hides else frozenset()
        for port in router.ports:
            if port.kind != "lrp":
                continue
            kinds = redistribute(port)
            nets = info.nets.get(port.name)
            if not kinds or nets is None:
                continue
            name, rk = port.name, router.key
            if "connected-as-host" in kinds:
                for ip, tracked in _host_routes(port, ctx, host_nat):
                    out[(rk, name, ip, tracked)] = None
            elif "connected" in kinds:
                for n4 in nets.ipv4:
                    out[(rk, name, net_s(n4), None)] = None
                for n6 in nets.ipv6:
                    if not _is_lla(n6):
                        out[(rk, name, net_s(n6), None)] = None
            if "static" in kinds:
                for route in statics:
                    if route.port is port and (route.nexthop is not None or route.to_dst):
                        out[(rk, name, net_s(route.prefix), None)] = None
            if "nat" in kinds:
                for ip, tracked in _nat_ips(router):
                    out[(rk, name, ip, tracked)] = None
                for q, _via_switch in _neighbours(port) if name not in hidden else ():
                    for ip, tracked in _nat_ips(q.dp):
                        out[(rk, name, ip, tracked)] = None
            if "lb" in kinds:
                for ip in _lb_vips(router):
                    out[(rk, name, ip, dgp.name if dgp is not None else None)] = None
                for q, _via_switch in _neighbours(port) if name not in hidden else ():
                    for ip in _lb_vips(q.dp):
                        out[(rk, name, ip, q.name)] = None
    return list(out)


def desired(sb: Any, nd: Northd, profile: FlowProfile) -> dict[Hashable, dict[str, Any]]:
    if not profile.has("dynamic_routing"):
        return {}
    keys = desired_routes(nd, FlowCtx(nd, profile=profile))
    if not keys:
        return {}
    dps = {k: r for r in sb.rows("Datapath_Binding").values() if (k := dp_nb_key(r))}
    pbs = {r.logical_port: r for r in sb.rows("Port_Binding").values()}
    rows: dict[Hashable, dict[str, Any]] = {}
    for key in keys:
        rk, port, prefix, tracked = key
        dp, pb = dps.get(rk), pbs.get(port)
        tpb = pbs.get(tracked) if tracked is not None else None
        if dp is None or pb is None or (tracked is not None and tpb is None):
            continue
        rows[key] = {"datapath": dp, "logical_port": pb, "ip_prefix": prefix,
                     "tracked_port": [tpb] if tpb is not None else [], "external_ids": {}}
    return rows


def delete_unused_learned_routes(sb: Any, nd: Northd, stats: SyncStats) -> None:
    """Behaviour ``learned_route_cleanup`` (26.03, observed): the Learned_Route rows (ovn-controller's)
    of a router without ``options:dynamic-routing=true`` are deleted."""
    if LEARNED not in sb.idl.tables:
        return
    for row in list(sb.rows(LEARNED).values()):
        dp = getattr(row, "datapath", None)
        router = nd.datapaths.get(dp_nb_key(dp) or "") if dp is not None else None
        if router is not None and router.kind == LR and not _true(router.nb.options.get("dynamic-routing", "")):
            row.delete()
            stats.bump(stats.deleted, LEARNED)


def sync_sb_advertised_routes(txn: Any, sb: Any, nd: Northd, profile: FlowProfile, stats: SyncStats) -> None:
    """Full sync of the SB Advertised_Route table (when the connected SB schema has it)."""
    if TABLE not in sb.idl.tables:
        return
    sync_table(txn, TABLE, sb.rows(TABLE), advertised_route_key, desired(sb, nd, profile), stats)
    if profile.has("learned_route_cleanup"):
        delete_unused_learned_routes(sb, nd, stats)
