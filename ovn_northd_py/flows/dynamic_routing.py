"""Dynamic routing (behaviour ``dynamic_routing``, 25.03 on): SB ``Learned_Route`` rows as routes.

ovn-controller writes a ``Learned_Route`` row for every route it learned from outside OVN on a
router port (``ovn-sb(5)``): ``datapath`` the router, ``logical_port`` the port it was learned on,
``ip_prefix`` and ``nexthop``.  Observed on the 25.03 reference (its ``ovn-northd.at``
"dynamic-routing - learning routes from sb" / "route learning ecmp", and our parity tests):

* a learned route becomes an ``lr_in_ip_routing`` route of the main table
  (``reg7 == 0 && ip4.dst == P``) at priority 8*plen + 2, below the static routes of the same
  prefix (8*plen + 4), through the port it was learned on, from that port's address in the
  next hop's network; a next hop in none of that port's networks gives no flow;
* the next hop's family decides the registers (``reg0``/``reg5`` and ``reg9[9] = 1`` for an IPv4
  next hop, ``xxreg0``/``xxreg1`` and ``reg9[9] = 0`` for IPv6), whatever the prefix's family;
* learned routes with the same prefix form an ECMP group of their own (never with static
  routes), numbered after the static routes' groups.

This module reads the rows (:func:`read_learned_routes`, into ``FlowCtx.learned_routes``); the
routes are resolved and built with the static ones (:func:`.lr_routing.learned_routes`).  The
flows are owned by ``("route", Learned_Route uuid, router key)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..northd.model import Northd

TABLE = "Learned_Route"


@dataclass(frozen=True, slots=True)
class LearnedRoute:
    uuid: str  # the SB row's
    port: str  # logical_port's name
    ip_prefix: str
    nexthop: str


def read_learned_routes(sb: Any, nd: Northd) -> dict[str, tuple[LearnedRoute, ...]]:
    """Router key -> its SB Learned_Route rows (uuid order); empty without the table (before
    25.03's SB schema) or without an ``sb``.  Rows naming no router of the model are left out."""
    if sb is None:
        return {}
    idl = getattr(sb, "idl", None)
    if idl is not None and TABLE not in idl.tables:
        return {}
    try:
        rows = sb.rows(TABLE)
    except KeyError:
        return {}
    by_tunnel_key = {dp.tunnel_key: dp.key for dp in nd.routers()}
    out: dict[str, list[LearnedRoute]] = {}
    for row in sorted(rows.values(), key=lambda r: str(r.uuid)):
        dp, pb = getattr(row, "datapath", None), getattr(row, "logical_port", None)
        if dp is None or pb is None:
            continue
        tk = getattr(dp, "tunnel_key", None)
        key = by_tunnel_key.get(tk) if isinstance(tk, int) else None
        if key is None:
            continue
        out.setdefault(key, []).append(
            LearnedRoute(str(row.uuid), str(pb.logical_port), str(row.ip_prefix), str(row.nexthop)))
    return {k: tuple(v) for k, v in out.items()}
