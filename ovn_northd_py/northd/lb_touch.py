"""Does a load-balancer change touch a router's load-balancer facts?

A router's flows other than its load balancers' own, its ``_rtr_lb_`` VIP address sets and its
ARP/ND answers read of its load balancers only: whether it has any, the VIPs inside one of its
ports' networks, the VIPs equal to one of its NAT external IPs, the VIPs of load balancers with
``options:neighbor_responder=all`` and those of ``options:add_route=true`` ones
(:func:`ovn_northd_py.flows.lr_nat.router_lb_facts`,
:func:`ovn_northd_py.flows.router_addrs.router_lb_vip_sets`).  A service that ovn-kubernetes adds
to the cluster-wide group of every gateway router has a cluster IP in none of them: on each of
those routers only that load balancer's own flows change.

:func:`lb_change_views` reads what a batch of NB changes did to load balancers (each changed one
before and after, from the IDL's old values; the members a group gained or lost) as
:class:`LbView` s, and :func:`views_touch_router` answers for one router, conservatively (any
VIP of a load balancer, template or not, whatever its ``neighbor_responder``).  The caller
still checks whether the router went from none to some load balancers (or back).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Any

from ..ovsdb import fastrow
from ..ovsdb.connection import RowChange
from .addresses import AddressError, IPAddress, LrpNetworks, parse_ip, parse_lrp_networks
from .lb_vips import parse_vip_address
from .model import Datapath

# The NB tables whose changes :func:`lb_change_views` can describe (any other one: unknown).
LB_TABLES = frozenset({"Load_Balancer", "Load_Balancer_Group"})


@dataclass(frozen=True, slots=True)
class LbView:
    """What a router's facts may read of one version of a load balancer: its VIP addresses, and
    whether they count on every router (``neighbor_responder=all``, ``add_route=true``)."""

    addrs: frozenset[IPAddress]
    everywhere: bool


def view_of(vips: Any, options: Any) -> LbView:
    addrs = frozenset(a for a in (parse_vip_address(str(k)) for k in vips) if a is not None)
    everywhere = options.get("neighbor_responder") == "all" or str(options.get("add_route", "")).lower() == "true"
    return LbView(addrs, everywhere)


def lb_view(lb: Any) -> LbView:
    """The load balancer's present :class:`LbView` (kept with the row until it changes)."""
    view: LbView = fastrow.derived(lb, "lb_touch_view", lambda r: view_of(r.vips, r.options))
    return view


def lb_change_views(changes: Iterable[RowChange], nb: Any) -> list[LbView] | None:
    """The views of every load balancer the batch's Load_Balancer / Load_Balancer_Group changes
    added, removed, changed (before and after) or moved in or out of a group (other tables' changes
    are the caller's); None when old values are missing: then every router they reach must be
    taken as touched."""
    lb_rows = nb.rows("Load_Balancer")
    grp_rows = nb.rows("Load_Balancer_Group")
    out: list[LbView] = []
    for c in changes:
        if c.table == "Load_Balancer":
            row = lb_rows.get(c.uuid)
            if c.event == "create":
                if row is None:
                    return None
                out.append(lb_view(row))
                continue
            old = c.old
            if old is None:
                return None
            if c.event == "delete":
                if "vips" not in old or "options" not in old:
                    return None
                out.append(view_of(old["vips"], old["options"]))
                continue
            if row is None:
                return None
            new = lb_view(row)
            out.append(new)
            if "vips" in old or "options" in old:
                out.append(view_of(old.get("vips", row.vips), old.get("options", row.options)))
        elif c.table == "Load_Balancer_Group":
            row = grp_rows.get(c.uuid)
            now = fastrow.ref_uuids(row, "load_balancer") if row is not None else frozenset()
            if c.event == "create":
                before: frozenset[Any] = frozenset()
            else:
                old = c.old
                if old is None or ("load_balancer" not in old and c.event == "delete"):
                    return None
                if "load_balancer" not in old:
                    continue  # its name changed, say
                before = frozenset(old["load_balancer"])  # (uuids)
            for u in now ^ before:
                lb = lb_rows.get(u)
                if lb is not None:  # its present version (a changed one's old version is above)
                    out.append(lb_view(lb))
                # else deleted in the same batch: its delete change gives its view
    return out


@functools.lru_cache(maxsize=1 << 12)
def _nets(mac: str, networks: tuple[str, ...]) -> LrpNetworks | None:
    try:
        return parse_lrp_networks(mac, networks)
    except AddressError:
        return None


def _nat_addrs(router: Datapath) -> set[IPAddress]:
    out: set[IPAddress] = set()
    for nat in router.nb.nat:
        out |= fastrow.derived(nat, "lb_touch_external_ip", _external_ips)
    return out


def _external_ips(nat: Any) -> frozenset[IPAddress]:
    """A NAT rule's external IP, read strictly and leniently (kept with the row till it changes)."""
    text = str(nat.external_ip).strip()
    out: set[IPAddress] = set()
    for lenient in (False, True):
        try:
            out.add(parse_ip(text, lenient=lenient))
        except AddressError:
            continue
    return frozenset(out)


def _port_nets(lrp: Any) -> LrpNetworks | None:
    """A router port's networks (kept with its NB row till it changes: every gateway router is
    looked at when a service joins the cluster-wide group)."""
    return _nets(lrp.mac, tuple(sorted(lrp.networks)))


def views_touch_router(views: Iterable[LbView], router: Datapath) -> bool:
    """Could load balancers of these views (arriving on, leaving or changing on ``router``)
    change the router's load-balancer facts?  Conservative."""
    views = [v for v in views if v.addrs or v.everywhere]
    if not views:
        return False
    if any(v.everywhere for v in views):
        return True
    nets = [n for n in (fastrow.derived(p.nb, "lb_touch_nets", _port_nets) for p in router.ports if p.kind == "lrp")
            if n is not None]
    nat = _nat_addrs(router) if router.nb.nat else set()
    for v in views:
        for a in v.addrs:
            if a in nat:
                return True
            if isinstance(a, IPv4Address):
                if any(n.contains(a) for ns in nets for n in ns.ipv4):
                    return True
            elif isinstance(a, IPv6Address) and any(n.contains(a) for ns in nets for n in ns.ipv6):
                return True
    return False
