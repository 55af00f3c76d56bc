"""BFD (NB ``BFD``, ``Logical_Router_Static_Route.bfd``): router flows and the session status rules.

Observed on the reference (23.03):

* a *BFD port* is a router port named by the ``logical_port`` of any NB BFD row (whatever its
  status); per BFD port P (enabled or not), ``lr_in_ip_input`` priority 110: BFD (``udp.dst == 3784``)
  from P's own addresses passes (``ip4.src == A && udp.dst == 3784``, ``next; ``), to them is handed
  to the controller (``handle_bfd_msg(); ``, Copp meter ``bfd``), one flow per family (a set when
  several addresses; IPv6 with the link-local address last; none for IPv4 without an IPv4 address);
* every non-ECMP route (connected, or static with a next hop) whose output port is a BFD port
  also gets a copy one priority higher matching ``... && udp.dst == 3784`` whose actions do not
  decrement the TTL (``ip.ttl--; `` left out) -- :mod:`.lr_routing`;
* a static route *uses* its ``bfd`` row when the route resolves (a valid prefix and next hop
  reachable through a router port, or ``discard``; on an enabled router) and the row's
  ``dst_ip`` is the route's ``nexthop`` (as strings).  A route using a row whose status is
  ``down`` is not installed (it also leaves its ECMP group);
* status (:func:`effective_status`), written to both SB and NB ``BFD.status``: a row no route
  uses is ``admin_down`` (whatever anyone wrote); a used row whose NB status is empty or
  ``admin_down`` is ``down``; otherwise the SB status (ovn-controller's) wins, except that an SB
  ``admin_down`` (or a row not in SB yet) takes the NB status.

Flows read only NB (the routes' rows and NB ``BFD.status``, which the NB write-back keeps equal to
the effective status): a route is skipped when the row it uses has an NB status of ``down``,
``admin_down`` or none.  An SB status change thus reaches the flows through its NB write-back
(one more engine run), see :mod:`ovn_northd_py.engine.feature_bfd`.
"""

from __future__ import annotations

from typing import Any

from ..lflow.stages import LR_IN_IP_INPUT
from ..lflow.table import FlowTable
from ..northd.model import Port
from ..ovsdb.columns import opt
from .context import FlowCtx
from .copp import copp_meter
from .lr_common import ip_set, lrp_hint, port_nets
from .owners import port_owner

BFD_UDP = 3784
BFD_MATCH = f" && udp.dst == {BFD_UDP}"
# NB status values for which a route using the row is not installed (the NB write-back turns an
# empty or admin_down status of a used row into down).
_ROUTE_OFF = (None, "", "admin_down", "down")


def route_bfd_row(route_row: Any) -> Any | None:
    """The BFD row a static route names whose ``dst_ip`` is the route's next hop (else None)."""
    bfd = opt(getattr(route_row, "bfd", None))
    if bfd is None or str(bfd.dst_ip) != str(route_row.nexthop):
        return None
    return bfd


def route_bfd_down(route_row: Any) -> bool:
    """Is the route switched off by its BFD session (to be called for routes that resolve)?"""
    bfd = route_bfd_row(route_row)
    return bfd is not None and opt(bfd.status) in _ROUTE_OFF


def effective_status(nb_status: str | None, sb_status: str | None, used: bool) -> str:
    """The status the reference writes to SB and NB ``BFD.status`` (see the module docstring)."""
    if not used:
        return "admin_down"
    if nb_status in (None, "", "admin_down"):
        return "down"
    if sb_status in (None, "", "admin_down"):
        return nb_status
    return sb_status


def build_lrp_bfd_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """``lr_in_ip_input`` BFD flows of a router port named by an NB BFD row."""
    if port.kind != "lrp" or port.name not in ctx.bfd_ports:
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    meter = copp_meter(port.dp, ctx, "bfd")
    owner, h, i = port_owner(port), lrp_hint(port), port.dp.index
    for fam, addrs in (("ip4", [n.addr_s for n in nets.ipv4]), ("ip6", [n.addr_s for n in nets.ipv6])):
        if not addrs:
            continue
        a = ip_set(addrs)
        table.add(i, LR_IN_IP_INPUT, 110, f"{fam}.src == {a}{BFD_MATCH}", "next; ", hint=h, owner=owner)
        table.add(i, LR_IN_IP_INPUT, 110, f"{fam}.dst == {a}{BFD_MATCH}", "handle_bfd_msg(); ", hint=h,
                  controller_meter=meter, owner=owner)


__all__ = [
    "BFD_MATCH",
    "BFD_UDP",
    "build_lrp_bfd_flows",
    "effective_status",
    "route_bfd_down",
    "route_bfd_row",
]
