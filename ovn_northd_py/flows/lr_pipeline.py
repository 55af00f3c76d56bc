"""The logical router pipeline's builders, in the order :mod:`ovn_northd_py.flows` runs them.

* :data:`LR_DP_BUILDERS` take a router datapath.  Router-wide flows are owned by
  ``("dp", key)``; static routes by ``("route", uuid, router key)`` and policies by
  ``("policy", uuid, router key)`` (:func:`route_and_policy_owners` lists them, to rebuild a
  router's routes and policies with :func:`build_lr_route_and_policy_flows`);
  NAT rules by ``("nat", uuid, router key)`` and load balancers by ``("lb", uuid, router key)``
  (:func:`.lr_nat.nat_and_lb_owners`; NAT / load-balancer changes rebuild the router's scope,
  :mod:`ovn_northd_py.engine.feature_lb`);
* :data:`LR_PORT_BUILDERS` take a router port (owner ``("port", name)``).  Besides
  its router's flows, a port owns the ``lr_in_arp_resolve`` bindings of its
  addresses on a directly peered router.  Its ARP replies and admission read its
  switch's port types (localnet, vtep): rebuild the switch's attached router ports
  when its ports change (:func:`attached_router_ports`);
* :data:`LSP_ROUTER_BUILDERS` take a switch port: the ``lr_in_arp_resolve`` bindings
  of its addresses on the routers attached to its switch (a router-type port: of
  the other attached router ports' addresses on its own router port), owned by the
  switch port.  :func:`build_lsp_flows_on_router_port` makes those a switch port puts on one
  router port only (one newly attached to its switch).
"""

from __future__ import annotations

from collections.abc import Callable

from ..lflow.table import FlowTable
from ..northd.model import Datapath, Port
from .context import FlowCtx
from .lr_admission import build_lr_admission_flows, build_lrp_admission_flows
from .lr_arp_resolve import (
    build_lr_arp_resolve_flows,
    build_lrp_arp_resolve_flows,
    build_lsp_arp_resolve_flows,
)
from .lr_bfd import build_lrp_bfd_flows
from .lr_delivery import (
    build_lr_delivery_flows,
    build_lrp_delivery_flows,
    build_lrp_ecmp_egr_flows,
    build_lrp_network_id_flows,
)
from .lr_ip_input import build_lr_ip_input_flows, build_lrp_ip_input_flows
from .lr_nat import build_lr_nat_flows, build_lsp_nat_add_route_flows
from .lr_nd_ra import build_lrp_nd_ra_flows
from .lr_neighbor import build_lr_neighbor_flows, build_lrp_neighbor_flows
from .lr_policy import build_lr_policy_flows
from .lr_routing import (
    build_lr_routing_flows,
    build_lr_static_route_flows,
    build_lrp_routing_flows,
)
from .owners import Owner, policy_owner, route_owner

DpBuilder = Callable[[Datapath, FlowCtx, FlowTable], None]
PortBuilder = Callable[[Port, FlowCtx, FlowTable], None]

LR_DP_BUILDERS: tuple[DpBuilder, ...] = (
    build_lr_admission_flows,
    build_lr_neighbor_flows,
    build_lr_ip_input_flows,
    build_lr_routing_flows,
    build_lr_static_route_flows,
    build_lr_policy_flows,
    build_lr_arp_resolve_flows,
    build_lr_delivery_flows,
    build_lr_nat_flows,
)
LR_PORT_BUILDERS: tuple[PortBuilder, ...] = (
    build_lrp_admission_flows,
    build_lrp_neighbor_flows,
    build_lrp_ip_input_flows,
    build_lrp_bfd_flows,
    build_lrp_nd_ra_flows,
    build_lrp_routing_flows,
    build_lrp_arp_resolve_flows,
    build_lrp_delivery_flows,
    build_lrp_network_id_flows,
    build_lrp_ecmp_egr_flows,
)
LSP_ROUTER_BUILDERS: tuple[PortBuilder, ...] = (build_lsp_arp_resolve_flows,)


def route_and_policy_owners(router: Datapath, ctx: FlowCtx | None = None) -> list[Owner]:
    """The owners of a router's static-route, learned-route (SB Learned_Route in ``ctx``,
    :mod:`.dynamic_routing`; pass the flow context whenever the release has them) and policy flows."""
    owners: list[Owner] = [route_owner(str(r.uuid), router.key) for r in router.nb.static_routes]
    if ctx is not None:
        owners += [route_owner(r.uuid, router.key) for r in ctx.learned_routes.get(router.key, ())]
    owners += [policy_owner(str(p.uuid), router.key) for p in router.nb.policies]
    return owners


def build_lr_route_and_policy_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """A router's static-route and policy flows (after removing :func:`route_and_policy_owners`)."""
    build_lr_static_route_flows(router, ctx, table)
    build_lr_policy_flows(router, ctx, table)


def attached_router_ports(sw: Datapath) -> list[Port]:
    """The router ports attached to switch ``sw`` (their flows read the switch's port types)."""
    return [p.peer for p in sw.ports if p.is_router_lsp and p.peer is not None and p.peer.kind == "lrp"]


def build_lsp_flows_on_router_port(port: Port, lrp: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """What switch port ``port`` puts on the router of ``lrp``, a router port attached to its switch
    through another router-type port: its address bindings there and its NAT ``add_route`` flows
    (:func:`.lr_nat.build_lsp_nat_add_route_flows`), owned by ``port`` like the rest of its flows (a
    full build of ``port`` makes them too).  These are the only flows a switch port's builders put
    on another datapath than its switch."""
    build_lsp_arp_resolve_flows(port, ctx, table, only=lrp)
    build_lsp_nat_add_route_flows(port, ctx, table, only=lrp)
