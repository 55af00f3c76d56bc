"""Logical flow builders.

Each builder is a small function ``build_<feature>_flows(entity, ctx, table)`` adding
the flows one NB entity (a datapath or a port) produces to a
:class:`~ovn_northd_py.lflow.table.FlowTable`, owned by that entity (see
:mod:`.context`).  :func:`build_lflows` runs them all; :func:`build_datapath_flows`
and :func:`build_port_flows` rebuild one entity after ``table.remove_owner``.

Cross-entity inputs (to re-run when they change, for incremental processing):

* a switch's datapath flows read its ports (``ls_in_l2_unknown``: is any port in
  ``_MC_unknown``), and a router-type port's flows read the other ports of its
  switch (localnet present? non-router port present?);
* a router-type switch port's flows read its router port and the router's NAT
  rules, load balancers and gateway ports (:mod:`.router_addrs`, memoised in
  ``ctx`` under the router's key: ``ctx.forget(router.key)``);
* the switch-wide conntrack/ACL flows (:mod:`.ls_acl`) read the switch's ACLs (its
  own and its Port_Groups', ``ctx.acl``), load balancers, router and localnet ports;
* each switch load balancer's flows (:mod:`.ls_lb`, owner ``("lb", lb uuid)``, over all its
  switches) are built by :data:`ROW_BUILDERS`; the switch-wide hairpin and stateful flows read
  whether the switch has a VIP.  The load-balancer / NAT feature
  (:mod:`ovn_northd_py.engine.feature_lb`, with the previous attachments in ``ctx.lbs``,
  :mod:`.lb_index`) rebuilds the load balancers that changed, the switches whose facts changed
  and the whole scope of every router whose NAT rules or load balancers changed
  (:func:`~ovn_northd_py.engine.flow_rebuild.rebuild_router_scope`);
* each ACL's flows (:mod:`.acl_rules`, owner ``("acl", acl uuid, switch key)``) are
  built by :data:`ROW_BUILDERS`, outside the datapath builders: the ACL feature's
  handlers (:mod:`ovn_northd_py.engine.feature_acl`) rebuild them; in 25.03 they also read
  the ACL's NB Sample / Sample_Collector rows, NB Sampling_App (``ctx.acl.sampling_apps``),
  its SB ACL_ID (``ctx.acl.acl_ids``) and the switch's ACL tiers (the switch facts);
* each QoS row's flows on a switch (:mod:`.ls_qos`, owner ``("qos", qos uuid, switch key)``)
  are built by :data:`ROW_BUILDERS`; the QoS feature (:mod:`ovn_northd_py.engine.feature_qos`)
  rebuilds them;
* a switch's DHCP relay flows (25.03, :mod:`.dhcp_relay`, owner ``("dhcp_relay", switch key)``)
  read the switch's ``other_config``, its VIFs' MACs, the relay router port and its
  ``DHCP_Relay`` row; built by :data:`ROW_BUILDERS`, rebuilt by the ``dhcp_relay`` feature
  (:mod:`ovn_northd_py.engine.feature_dhcp_relay`);
* a switch's multicast flows (:mod:`.ls_l2`) read its ports' ``mcast_flood`` options and
  whether a router-type port connects to a router with ``options:mcast_relay``;
* ``virtual`` and ``external`` ports' flows read the other ports of their switch
  (virtual parents; localnet and router-type ports): :func:`port_reads_switch`;
  a port's DHCP flows read its DHCP_Options rows, a switch's DNS flows its DNS rows
  (their features, :mod:`ovn_northd_py.engine.feature_services`, rebuild them), and
  a port's ``ls_in_arp_rsp`` flows read the load balancers' health checks
  (``ctx.svc_monitor_ips``) and, with NB_Global ``ignore_lsp_down=false``, its ``up``;
* a switch's Copp (:mod:`.copp`): the ND-answer, DHCP, DNS, IGMP and service-monitor flows of
  the switch and its ports carry its meters, read from the switch's ``copp`` row and the set
  of NB meter names (a Copp or ``copp`` change recomputes; so does a meter appearing or
  disappearing while a Copp is in use, :mod:`ovn_northd_py.engine.feature_acl`); the
  ``ls_in_hairpin`` skip for packets from vtep ports is a datapath flow (any ``vtep`` port);
* a router's Copp (:mod:`.copp`): its neighbour-learning, ARP/ND-request, ICMP-error, TCP-reset,
  ND-answer, RA, BFD and load-balancer reject flows carry its meters (a Copp or ``copp`` change
  recomputes, like a switch's);
* BFD (:mod:`.lr_bfd`): a router port named by an NB BFD row (``ctx.bfd_ports``) has BFD
  ``lr_in_ip_input`` flows and BFD copies of its connected routes, and the static routes out of
  it have BFD copies; a static route reads the NB ``status`` of the BFD row it uses (down: not
  installed).  The BFD feature (:mod:`ovn_northd_py.engine.feature_bfd`) rebuilds the ports that
  join or leave ``ctx.bfd_ports``, their routers' route flows and those of the routers whose
  routes name a changed BFD row;
* learned routes (25.03 on, :mod:`.dynamic_routing`): a router's route flows also read its SB
  Learned_Route rows (``ctx.learned_routes``, owner ``("route", Learned_Route uuid, router key)``,
  built with the static routes); the ``dynamic_routing`` feature
  (:mod:`ovn_northd_py.engine.feature_dynamic_routing`) rebuilds the routes of the routers whose
  learned routes changed; an EVPN switch's (26.03, :mod:`.ls_evpn`) lookup and conntrack-skip
  flows read its ``other_config`` (a change recomputes) and its stateful ACLs (the switch facts);
* the router pipeline (:mod:`.lr_pipeline`): a switch port owns the
  ``lr_in_arp_resolve`` bindings of its addresses on the routers attached to its
  switch (a router-type port: those of the other attached router ports); a router
  port's flows read its switch's port types (rebuild
  :func:`~.lr_pipeline.attached_router_ports` when they change) and it owns its
  bindings on a directly peered router; static routes and policies are owned by
  ``("route", uuid)`` / ``("policy", uuid)``; route table ids read the router's NB port rows,
  and the router's datapath flows select the table of an NB port left out for its malformed MAC
  (a router port change rebuilds the router's whole scope);
* a router port changed in place, attached or detached (:mod:`ovn_northd_py.northd.router_ports`):
  the lflow node rebuilds the router's whole scope, the attached switches' datapath flows and,
  on attach/detach, every port of those switches (they bind the routers' addresses);
* a router's NAT rules (:mod:`.lr_nat`, owner ``("nat", uuid, router key)``) read the router's ports (which
  distributed gateway port a rule applies on: ``gateway_port``, else the DGP whose networks hold
  its external IP), the router's options (``dnat_force_snat_ip``) and the *names* of their
  ``allowed_ext_ips`` / ``exempted_ext_ips`` address sets (``$name`` in matches; renaming an
  Address_Set row used by a NAT rule must rebuild that router's scope);
* NAT ``options:add_route`` (:func:`.lr_nat.build_lsp_nat_add_route_flows`): the routes and bindings
  of a DGP's NAT addresses on the other routers of the DGP's switch are owned by the router-type
  switch port peering with the DGP; they read the router's NAT rules and DGP (rebuilt with the
  router's scope) and the switch's other router ports (every port of the switch is rebuilt when a
  router attaches, detaches or changes a port in place).
  The same port owns the ``add_route`` flows of the router's load balancers (own and groups',
  ``options:add_route=true``: their IPv4 VIPs, on the switch of every DGP): they read the router's
  load balancers, and a load-balancer change rebuilds the scope of every router using it
  (:func:`~ovn_northd_py.engine.flow_rebuild.rebuild_router_scope`, which rebuilds the peer ports);
* the ``nat_addresses`` of a router's peer switch ports (``northd.build``) read its load
  balancers' parsed VIPs (a VIP with unparsable backends is not announced), refreshed with the
  router's other derived values when its NAT rules or load balancers change.
"""

from __future__ import annotations

from collections.abc import Callable

from ..lflow.table import FlowTable
from ..northd.model import Datapath, Northd, Port
from ..ovsdb.columns import opt
from .acl_rules import build_all_acl_flows
from .context import FlowCtx, WarnFn, flow_ctx_from_nb, hint
from .defaults import build_lr_default_flows, build_lrp_default_flows, build_ls_default_flows
from .dhcp_relay import build_all_dhcp_relay_flows
from .lr_lb import RouterLbBatch
from .lr_nat import build_lsp_nat_add_route_flows, remember_router_lb_facts
from .lr_pipeline import LR_DP_BUILDERS, LR_PORT_BUILDERS, LSP_ROUTER_BUILDERS
from .ls_acl import build_ls_acl_flows, build_lsp_dhcp_reply_flows
from .ls_arp_rsp import build_lsp_arp_rsp_flows
from .ls_dhcp import build_lsp_dhcp_flows
from .ls_dns import build_ls_dns_flows
from .ls_external import build_lsp_external_port_flows
from .ls_fdb import build_lsp_fdb_flows
from .ls_fwd_group import build_ls_fwd_group_flows
from .ls_l2 import build_ls_l2_flows, build_lsp_l2_flows
from .ls_lb import build_all_switch_lb_flows, build_ls_hairpin_flows, build_ls_lb_frag_flows
from .ls_mirror import build_lsp_mirror_flows, build_mirror_port_flows
from .ls_port_security import (
    build_lcrp_flows,
    build_ls_ext_arp_flows,
    build_ls_port_sec_flows,
    build_lsp_ext_arp_flows,
    build_lsp_port_sec_flows,
)
from .ls_qos import build_all_qos_flows
from .ls_routing_redirect import build_lsp_routing_redirect_flows
from .owners import dp_owner, port_owner

DpBuilder = Callable[[Datapath, FlowCtx, FlowTable], None]
PortBuilder = Callable[[Port, FlowCtx, FlowTable], None]
RowBuilder = Callable[[Northd, FlowCtx, FlowTable], None]

SWITCH_BUILDERS: tuple[DpBuilder, ...] = (
    build_ls_default_flows,
    build_ls_port_sec_flows,
    build_ls_ext_arp_flows,
    build_ls_l2_flows,
    build_ls_acl_flows,
    build_ls_fwd_group_flows,
    build_ls_dns_flows,
    build_ls_hairpin_flows,
    build_ls_lb_frag_flows,
)
ROUTER_BUILDERS: tuple[DpBuilder, ...] = (build_lr_default_flows, *LR_DP_BUILDERS)
SWITCH_PORT_BUILDERS: tuple[PortBuilder, ...] = (
    build_lsp_port_sec_flows,
    build_lsp_ext_arp_flows,
    build_lsp_fdb_flows,
    build_lsp_l2_flows,
    build_lsp_dhcp_reply_flows,
    build_lsp_arp_rsp_flows,
    build_lsp_dhcp_flows,
    build_lsp_external_port_flows,
    *LSP_ROUTER_BUILDERS,
    build_lsp_nat_add_route_flows,
    build_lsp_routing_redirect_flows,
    build_lsp_mirror_flows,
)

ROUTER_PORT_BUILDERS: tuple[PortBuilder, ...] = (build_lrp_default_flows, *LR_PORT_BUILDERS)
# Flows owned by NB rows other than datapaths and ports, built once per full build.
ROW_BUILDERS: tuple[RowBuilder, ...] = (
    build_all_acl_flows, build_all_switch_lb_flows, build_all_qos_flows, build_all_dhcp_relay_flows,
)


def datapath_enabled(dp: Datapath) -> bool:
    """False for a router with ``enabled=false``: the reference gives it no datapath, hence no flows.

    (The model still holds such routers; this guard can go once it drops them.)
    """
    return not (dp.is_router and opt(dp.nb.enabled) is False)


def port_reads_switch(port: Port) -> bool:
    """Do the port's flows read the other ports of its switch (rebuild it when they change)?
    (A localnet port: the queues of its switch's VIFs, in 25.03; a port with a queue: it is applied
    on the switch's localnet ports.)"""
    return port.is_router_lsp or port.sb_type in ("virtual", "external", "localnet") or "qdisc_queue_id" in port.options


def build_datapath_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The datapath-wide flows of ``dp`` (owner ``("dp", dp.key)``)."""
    if not datapath_enabled(dp):
        return
    for build in SWITCH_BUILDERS if dp.is_switch else ROUTER_BUILDERS:
        build(dp, ctx, table)


def build_port_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of one port (owner ``("port", port.name)``)."""
    if not datapath_enabled(port.dp):
        return
    if port.kind == "lcrp":  # a switch port's chassisredirect port: its own few flows
        build_lcrp_flows(port, ctx, table)
        return
    if port.kind == "mirror":  # an lport mirror's port (26.03): one flow
        build_mirror_port_flows(port, ctx, table)
        return
    for build in SWITCH_PORT_BUILDERS if port.dp.is_switch else ROUTER_PORT_BUILDERS:
        build(port, ctx, table)


def build_lflows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    """Every flow of the northd model ``nd`` (every ``drop;`` a debug drop sample when ``ctx`` has
    one: the table rewrites them, here and in every later incremental add)."""
    table.drop_action = ctx.debug_drop
    table.ensure_capacity(len(nd.slots))
    batch = ctx.router_lb_batch = RouterLbBatch()  # (the routers' load-balancer flows, added after them)
    try:
        for dp in nd.by_index:
            build_datapath_flows(dp, ctx, table)
            for port in dp.ports:
                build_port_flows(port, ctx, table)
            if dp.is_router:
                remember_router_lb_facts(dp, ctx)  # (what a later load-balancer change compares with)
    finally:
        ctx.router_lb_batch = None
    batch.flush(table)
    for build in ROW_BUILDERS:
        build(nd, ctx, table)


__all__ = [
    "FlowCtx",
    "WarnFn",
    "build_datapath_flows",
    "build_lflows",
    "build_port_flows",
    "datapath_enabled",
    "dp_owner",
    "flow_ctx_from_nb",
    "hint",
    "port_owner",
    "port_reads_switch",
]
