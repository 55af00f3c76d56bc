"""Incremental handling of load balancers, load-balancer groups, health checks and NAT rules.

What a change can touch, and what the handler rebuilds (owners in parentheses):

* a switch load balancer's own flows (``("lb", uuid)``, one owner over all its switches): rebuilt
  for every load balancer whose row changed, that is in a changed group, or that a switch gained
  or lost; the SB Load_Balancer row of each is compared at the next flow sync
  (``LbIndex.sb_dirty``);
* a switch's facts (``has_lb_vip``: stateful pre-LB/ACL flows, hairpin flows): handed to the ACL
  feature's :func:`~.feature_acl.refresh_switches`, which rebuilds the switch (and its ACLs when
  its statefulness flips) only when the facts did change;
* a router using a changed load balancer / group, or whose NAT rules changed: its whole scope
  -- router-wide flows (``("dp", key)``), per NAT rule / load balancer / route / policy owners,
  its ports' flows, and the router-type switch ports peering with them (they answer ARP for
  the router's NAT and VIP addresses, and own the ``add_route`` routes / bindings of its NAT
  rules on the neighbour routers: :func:`rebuild_router_scope`).  Proportional to the router
  and its DGPs' switches, never to the network;
* a load balancer's flows read its row only (template or not, ``options:event``), ``ctx.health``
  for checked VIPs, the switches' / routers' Copp meters (a Copp change recomputes) and NB_Global
  ``controller_event`` (``ctx.controller_event``; an NB_Global option change recomputes): whatever
  else changes, :func:`_rebuild_switch_lb` forgets the memo first;
* health checks (``ip_port_mappings``): the switch ports whose ARP/ND responder answers for a
  health-check source IP, when that set changes; the load balancer's monitors
  (``fctx.health``, :class:`~ovn_northd_py.flows.lb_health.LbHealth`);
* a checked VIP's backends also read SB Service_Monitor ``status`` / Port_Binding ``up`` and
  whether the mapped ports exist: :func:`on_health_sb` (the lflow node's SB input) and
  :func:`on_mapped_ports` (its northd input) rebuild the load balancers whose backends flip.
  (The SB Service_Monitor rows are :class:`~ovn_northd_py.sync.service_monitor.MonitorSync`'s.)

The northd model's part (Port_Binding ``nat-addresses`` of router-type ports, ``always-redirect``
of chassisredirect ports) is refreshed by :mod:`ovn_northd_py.northd.incremental`.

The previous attachments come from :class:`~ovn_northd_py.flows.lb_index.LbIndex` (kept in the
flow context, rebuilt by every full flow build), so a deleted row's flows are found without it.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..flows import build_datapath_flows, build_port_flows
from ..flows.context import FlowCtx
from ..flows.lb_health import pb_up_reader, sb_down_monitors, svc_monitor_src_ips
from ..flows.lb_index import LbIndex, group_members
from ..flows.lr_nat import LB_FACTS, build_router_lbs_only, remember_router_lb_facts
from ..flows.lr_pipeline import route_and_policy_owners
from ..flows.ls_lb import build_lb_flows_on_switches, warn_bad_vips
from ..flows.owners import OWNER_LB, dp_owner, nat_owner, port_owner, router_lb_owner
from ..northd.model import Datapath, Northd
from ..ovsdb.connection import RowChange
from .feature_acl import refresh_switches
from .features import Feature, FeatureCtx, register

NAME = "lb_nat"
LB_TABLES = frozenset({"Load_Balancer", "Load_Balancer_Group", "Load_Balancer_Health_Check"})
NB_TABLES = LB_TABLES | {"NAT"}
LB_COLUMNS = frozenset({"load_balancer", "load_balancer_group"})
NB_COLUMNS = {"Logical_Switch": LB_COLUMNS, "Logical_Router": LB_COLUMNS | {"nat"}}


def _row(rows: Any, key: str) -> Any:
    return rows.get(uuid.UUID(key))


def rebuild_router_scope(router: Datapath, fctx: FlowCtx, table: Any, extra_owners: set[Any],
                         keep_lbs: frozenset[str] = frozenset()) -> None:
    """Every flow of ``router`` and of the switch ports peering with it, rebuilt from scratch.

    ``extra_owners``: owners of this router's flows the present NB rows no longer name (deleted
    NAT rules, load balancers it lost).  ``keep_lbs``: load balancers whose per-router flows stay
    as they are (a load balancer's router flows read its own row and the router's NAT context --
    gateway, NAT external IPs, ``lb_force_snat_ip`` -- only, so when neither changed, adding a
    service to a group shared by every gateway router rebuilds one load balancer's flows per
    router, not all of them).

    NAT ``options:add_route`` puts flows on *other* routers (the neighbours on the switch of the
    rule's distributed gateway port: /32 routes, and ARP bindings on gateway routers).  They are
    owned by the router-type switch port peering with that DGP
    (:func:`~ovn_northd_py.flows.lr_nat.build_lsp_nat_add_route_flows`), which this function
    rebuilds below with the router's other peer ports: a NAT change on the router therefore needs
    no rebuild of the neighbour routers themselves.  The reverse direction is covered by the
    router-port handling (:mod:`ovn_northd_py.engine.nodes.lflow`): a neighbour attaching to,
    detaching from or changing its port on that switch in place rebuilds every port of the switch;
    a neighbour's ``options:chassis`` (gateway or not: bindings or not) is a router option, which
    recomputes."""
    nd = fctx.nd
    for owner in extra_owners:
        table.remove_owner(owner)
    table.remove_owner(dp_owner(router))
    for owner in route_and_policy_owners(router):
        table.remove_owner(owner)
    for n in router.nb.nat:
        table.remove_owner(nat_owner(str(n.uuid)))
    for lb in fctx.lbs.dp_lbs.get(router.key, ()):
        if lb not in keep_lbs:
            table.remove_owner(router_lb_owner(lb, router.key))
    fctx.forget(router.key)
    fctx.keep_router_lbs = keep_lbs
    try:
        build_datapath_flows(router, fctx, table)
    finally:
        fctx.keep_router_lbs = frozenset()
    for p in router.ports:
        table.remove_owner(port_owner(p))
        build_port_flows(p, fctx, table)
        q = p.peer
        if p.kind == "lrp" and q is not None and q.kind == "lsp" and nd.ports.get(q.name) is q:
            table.remove_owner(port_owner(q))
            build_port_flows(q, fctx, table)
    remember_router_lb_facts(router, fctx)


def rebuild_router_lbs(router: Datapath, gone: set[str], changed: set[str], rows: Any, fctx: FlowCtx,
                       table: Any) -> bool:
    """A router whose load balancers changed but not its NAT context: when the router's load-balancer
    facts (:func:`~ovn_northd_py.flows.lr_nat.router_lb_facts`: what its other flows read of its
    load balancers) are what they were when its flows were built, only the flows of the load
    balancers it lost (``gone``) or that are new or changed (``changed``) are rebuilt.  False
    (nothing done) when the facts differ or were not remembered: the caller rebuilds the scope."""
    old = fctx.memo.get((LB_FACTS, router.key))
    fctx.forget(router.key)  # its memoised addresses / VIP sets read the load balancers
    if old is None or remember_router_lb_facts(router, fctx) != old:
        return False
    for lb in gone | changed:
        table.remove_owner(router_lb_owner(lb, router.key))
    build_router_lbs_only(router, [r for lb in sorted(changed) if (r := _row(rows, lb)) is not None], fctx, table)
    return True


def _rebuild_switch_lb(lb: str, row: Any, fctx: FlowCtx, table: Any) -> None:
    """Every load balancer whose flows may differ passes here first: its memoised VIPs and switch
    flows (``ls_lb.cached_vips``, read by routers too) are dropped."""
    fctx.forget(lb)
    table.remove_owner((OWNER_LB, lb))
    if row is not None:
        build_lb_flows_on_switches(fctx.lbs.switches_of(lb, fctx.nd), row, fctx, table)


def rebuild_lbs(lbs: set[str], nb: Any, fctx: FlowCtx, table: Any) -> None:
    """Rebuild the flows of load balancers ``lbs`` (attachments unchanged) wherever they are."""
    lb_rows = nb.rows("Load_Balancer")
    routers: set[str] = set()
    for lb in lbs:
        _rebuild_switch_lb(lb, _row(lb_rows, lb), fctx, table)
        routers |= {k for k in fctx.lbs.lb_dps.get(lb, ()) if (dp := fctx.nd.datapaths.get(k)) and dp.is_router}
    for key in sorted(routers):
        rebuild_router_scope(fctx.nd.datapaths[key], fctx, table, set())


def on_mapped_ports(names: set[str], nb: Any, fctx: FlowCtx, table: Any) -> bool:
    """Ports that appeared, changed or went away: rebuild the load balancers whose health checks
    map one of them (a checked VIP keeps only backends on existing switch ports).  True if any."""
    lbs = fctx.health.lbs_of_ports(names)
    if lbs:
        rebuild_lbs(lbs, nb, fctx, table)
    return bool(lbs)


def on_health_sb(changes: list[RowChange], resynced: bool, sb: Any, nb: Any, fctx: FlowCtx, table: Any,
                 pb_index: Any = None) -> bool:
    """SB changes: Service_Monitor rows (ovn-controller's ``status``, our own writes echoing) and
    Port_Binding ``up`` of monitored ports may put backends in or out of their VIPs.  Rebuilds the
    load balancers reading a monitor that flipped; True if any."""
    health = fctx.health
    ports = health.port_lbs
    relevant = resynced
    rows_pb = sb.rows("Port_Binding")
    for c in changes:
        if relevant:
            break
        if c.table == "Service_Monitor":
            relevant = True
        elif c.table == "Port_Binding" and (c.event != "update" or "up" in c.columns):
            row = rows_pb.get(c.uuid)
            relevant = row is None or row.logical_port in ports
    if not relevant:
        return False
    down = sb_down_monitors(sb, pb_up_reader(sb, pb_index))
    flipped = down ^ health.down
    health.down = down
    lbs = health.lbs_of_keys(flipped)
    if lbs:
        rebuild_lbs(lbs, nb, fctx, table)
    return bool(lbs)


def _health_check_ports(h: FeatureCtx, fctx: FlowCtx) -> set[str]:
    """Ports whose health-check source IPs changed (their ARP/ND responder flows read them)."""
    new = svc_monitor_src_ips(h.nb)
    old = fctx.svc_monitor_ips
    if new == old:
        return set()
    fctx.svc_monitor_ips = new
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


def on_nb_flows(changes: list[RowChange], h: FeatureCtx) -> bool:
    fctx: FlowCtx | None = h.fctx
    if fctx is None:
        return False
    nd: Northd = h.nd
    idx: LbIndex = fctx.lbs
    table = h.table
    fctx.nd = nd
    # Validate before changing anything.
    for c in changes:
        if c.table in ("Logical_Switch", "Logical_Router") and (
            c.event != "update" or nd.datapaths.get(str(c.uuid)) is None
        ):
            return False

    changed_lbs: set[str] = set()  # load balancers whose own flows / SB row may differ
    dps: set[str] = set()  # datapaths whose attachments may have changed
    routers: set[str] = set()  # routers whose NAT rules changed
    gone_nats: set[str] = set()
    health = False
    lb_rows = h.nb.rows("Load_Balancer")
    grp_rows = h.nb.rows("Load_Balancer_Group")
    for c in changes:
        key = str(c.uuid)
        if c.table == "Load_Balancer":
            changed_lbs.add(key)
            row = _row(lb_rows, key)
            if row is not None:
                warn_bad_vips(row, fctx)  # also when no switch or router uses it
            health = health or bool(fctx.svc_monitor_ips) or (row is not None and bool(row.health_check))
        elif c.table == "Load_Balancer_Group":
            users = idx.group_dps.get(key)
            if users:  # a group no datapath uses feeds nothing
                dps |= users
                grp = _row(grp_rows, key)
                new = group_members(grp) if grp is not None else frozenset()
                changed_lbs |= idx.group_lbs.get(key, frozenset()) ^ new
                idx.group_lbs[key] = new
        elif c.table == "Load_Balancer_Health_Check":
            health = True
            for lb in lb_rows.values():
                if any(str(hc.uuid) == key for hc in lb.health_check):
                    changed_lbs.add(str(lb.uuid))
        elif c.table == "NAT":
            r = idx.nat_dp.get(key)  # a new rule is found through its router's ``nat`` column
            if r is not None:
                routers.add(r)
            if c.event == "delete":
                gone_nats.add(key)
        else:
            dps.add(key)
            if c.table == "Logical_Router" and "nat" in c.columns:
                routers.add(key)
    for lb in changed_lbs:
        dps |= idx.lb_dps.get(lb, set())

    # Attachments: what each datapath gained or lost.
    switch_lbs: set[str] = set(changed_lbs)
    touched_switches: set[str] = set()
    rebuild: dict[str, set[Any]] = {}  # router key -> owners of flows its NB rows no longer name
    keep: dict[str, frozenset[str]] = {}  # router key -> load balancers whose router flows stay
    lost: dict[str, set[str]] = {}  # router key -> load balancers it no longer has
    changed_here: dict[str, set[str]] = {}  # router key -> its new or changed load balancers
    for key in dps | routers:
        dp = nd.datapaths.get(key)
        old_lbs = idx.dp_lbs.get(key, frozenset())
        old_nats = idx.dp_nats.get(key, frozenset())
        moved = idx.set_dp(dp, key)
        if dp is None:
            continue
        now = idx.dp_lbs.get(key, frozenset())
        if dp.is_switch:
            switch_lbs |= moved
            if moved or changed_lbs & now:
                touched_switches.add(key)
        elif key in routers or moved or changed_lbs & (old_lbs | now):
            owners: set[Any] = {router_lb_owner(lb, key) for lb in old_lbs - now}
            if key in routers:
                owners |= {router_lb_owner(lb, key) for lb in old_lbs}
            owners |= {nat_owner(n) for n in old_nats}
            # Same NAT context: the load balancers it keeps, unchanged, keep their flows.
            keep[key] = frozenset() if key in routers else frozenset((old_lbs & now) - changed_lbs)
            lost[key] = set(old_lbs - now)
            changed_here[key] = set(now - keep[key])
            rebuild[key] = owners
    for n in gone_nats:
        table.remove_owner(nat_owner(n))

    for lb in changed_lbs:
        fctx.health.set_lb(lb, _row(lb_rows, lb))
    # Switch load balancers: one owner per load balancer, over all its switches.
    for lb in switch_lbs:
        _rebuild_switch_lb(lb, _row(lb_rows, lb), fctx, table)
        idx.sb_dirty.add(lb)
    if touched_switches:
        refresh_switches(touched_switches, h)
    for key, extra in sorted(rebuild.items()):
        router = nd.datapaths[key]
        if key not in routers and rebuild_router_lbs(router, lost[key], changed_here[key], lb_rows, fctx, table):
            continue
        rebuild_router_scope(router, fctx, table, extra, keep[key])
    if health:
        for name in _health_check_ports(h, fctx):
            table.remove_owner(("port", name))
            p = nd.ports.get(name)
            if p is not None:
                build_port_flows(p, fctx, table)
    return True


LB_NAT = register(
    Feature(
        NAME,
        nb_tables=NB_TABLES,
        on_nb_flows=on_nb_flows,
        nb_columns=NB_COLUMNS,
    )
)
