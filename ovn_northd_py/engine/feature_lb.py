"""Incremental handling of load balancers, load-balancer groups, health checks and NAT rules.

What a change can touch, and what the handler rebuilds (owners in parentheses):

* a switch load balancer's own flows (``("lb", uuid)``, one owner over all its switches): rebuilt
  for every load balancer whose row changed, that is in a changed group, or that a switch gained
  or lost; the SB Load_Balancer row of each is compared at the next flow sync
  (``LbIndex.sb_dirty``);
* a switch's facts (``has_lb_vip``: stateful pre-LB/ACL flows, hairpin flows): handed to the
  derived switch facts (:func:`~.ls_stateful.refresh_switches`, shared with the ACL feature),
  which rebuild the switch (and its ACLs when its statefulness flips) only when the facts did change;
* a router using a changed load balancer / group, or whose NAT rules changed: its whole scope
  -- router-wide flows (``("dp", key)``), per NAT rule / load balancer / route / policy owners,
  its ports' flows, and the router-type switch ports peering with them (they answer ARP for
  the router's NAT and VIP addresses, and own the ``add_route`` routes / bindings of its NAT
  rules on the neighbour routers: :func:`~.flow_rebuild.rebuild_router_scope`).  Proportional to the router
  and its DGPs' switches, never to the network;
* a load balancer's flows read its row only (template or not, ``options:event``), ``ctx.health``
  for checked VIPs, the switches' / routers' Copp meters (a Copp change recomputes) and NB_Global
  ``controller_event`` (``ctx.controller_event``; an NB_Global option change recomputes): whatever
  else changes, :func:`_rebuild_switch_lb` forgets the memo first;
* health checks (``ip_port_mappings``): the switch ports whose ARP/ND responder answers for a
  health-check source IP, when that set changes; the load balancer's monitors
  (``fctx.health``, :class:`~ovn_northd_py.flows.lb_health.LbHealth`);
* a checked VIP's backends also read SB Service_Monitor ``status`` / Port_Binding ``up`` and
  whether the mapped ports exist: :func:`on_health_sb` (``on_sb_flows``: the lflow node's SB
  input) and :func:`on_mapped_ports` (``on_northd_flows``: its northd input) rebuild the load
  balancers whose backends flip.  The SB Service_Monitor rows are written by :class:`LbMonitors`
  (the feature's SB hooks, around :class:`~ovn_northd_py.sync.service_monitor.MonitorSync`).

The northd model's part (Port_Binding ``nat-addresses`` of router-type ports, ``always-redirect``
of chassisredirect ports) is refreshed by :mod:`ovn_northd_py.northd.incremental`.

The previous attachments come from :class:`~ovn_northd_py.flows.lb_index.LbIndex` (kept in the
flow context, rebuilt by every full flow build), so a deleted row's flows are found without it.
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from ..flows import build_port_flows
from ..flows.context import FlowCtx
from ..flows.lb_health import pb_up_reader, sb_down_monitors, svc_monitor_src_ips
from ..flows.lb_index import group_members
from ..flows.lr_common import LR_INFO
from ..flows.lr_nat import LB_FACTS, build_router_lbs_only, remember_router_lb_facts
from ..flows.ls_lb import build_lb_flows_on_switches, warn_bad_vips
from ..flows.owners import OWNER_LB, OWNER_PORT, nat_owner, router_lb_owner
from ..flows.router_addrs import RTR_LB_SETS
from ..lflow.table import FlowTable
from ..northd.lb_touch import LB_TABLES, LbView, lb_change_views, views_touch_router
from ..northd.model import Datapath
from ..ovsdb.connection import RowChange
from ..sync.service_monitor import MonitorSync
from .engine import HandlerResult, handled
from .features import FlowFeatureCtx, SbFeatureCtx
from .flow_rebuild import rebuild_router_scope
from .ls_stateful import refresh_switches

PB_INDEX = "pb_by_name"  # the sb_sync node's Port_Binding index


def _row(rows: Any, key: str) -> Any:
    return rows.get(uuid.UUID(key))


# The router memos a load-balancer change that leaves its facts alone keeps: the facts themselves,
# the names of its VIP sets (part of them) and the router's LB-free facts.
_FACTS_KEPT = frozenset({LB_FACTS, RTR_LB_SETS, LR_INFO})


def rebuild_router_lbs(router: Datapath, gone: set[str], changed: set[str], rows: Any, fctx: FlowCtx,
                       table: FlowTable, views: list[LbView] | None = None) -> bool:
    """A router whose load balancers changed but not its NAT context: when the router's load-balancer
    facts (:func:`~ovn_northd_py.flows.lr_nat.router_lb_facts`: what its other flows read of its
    load balancers) are what they were when its flows were built, only the flows of the load
    balancers it lost (``gone``) or that are new or changed (``changed``) are rebuilt.  False
    (nothing done) when the facts differ or were not remembered: the caller rebuilds the scope.

    ``views`` (:func:`~ovn_northd_py.northd.lb_touch.lb_change_views`: every load balancer the
    change moved or changed, before and after), when given and touching none of the router's
    facts, spare computing them again (O(load balancers) per router): they are what they were
    as long as the router still has load balancers, or still has none."""
    old = fctx.memo.get((LB_FACTS, router.key))
    if (old is not None and views is not None and old[0] == bool(fctx.lbs.dp_lbs.get(router.key))
            and not views_touch_router(views, router)):
        fctx.forget(router.key, keep=_FACTS_KEPT)
    else:
        fctx.forget(router.key)  # its memoised addresses / VIP sets read the load balancers
        if old is None or remember_router_lb_facts(router, fctx) != old:
            return False
    for lb in gone | changed:
        table.remove_owner(router_lb_owner(lb, router.key))
    build_router_lbs_only(router, [r for lb in sorted(changed) if (r := _row(rows, lb)) is not None], fctx, table)
    return True


def _rebuild_switch_lb(lb: str, row: Any, fctx: FlowCtx, table: FlowTable) -> None:
    """Every load balancer whose flows may differ passes here first: its memoised VIPs and switch
    flows (``ls_lb.cached_vips``, read by routers too) are dropped."""
    fctx.forget(lb)
    table.remove_owner((OWNER_LB, lb))
    if row is not None:
        build_lb_flows_on_switches(fctx.lbs.switches_of(lb, fctx.nd), row, fctx, table)


def rebuild_lbs(lbs: set[str], nb: Any, fctx: FlowCtx, table: FlowTable) -> None:
    """Rebuild the flows of load balancers ``lbs`` (attachments unchanged) wherever they are."""
    lb_rows = nb.rows("Load_Balancer")
    routers: set[str] = set()
    for lb in lbs:
        _rebuild_switch_lb(lb, _row(lb_rows, lb), fctx, table)
        routers |= {k for k in fctx.lbs.lb_dps.get(lb, ()) if (dp := fctx.nd.datapaths.get(k)) and dp.is_router}
    for key in sorted(routers):
        rebuild_router_scope(fctx.nd.datapaths[key], fctx, table, set())


def on_mapped_ports(_changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    """``on_northd_flows``: ports that appeared, changed or went away (``h.tracked``): rebuild the
    load balancers whose health checks map one of them (a checked VIP keeps only backends on
    existing switch ports)."""
    t = h.tracked
    if t is None:
        return False
    lbs = h.fctx.health.lbs_of_ports(t.ports_changed | set(t.ports_deleted))
    if lbs:
        rebuild_lbs(lbs, h.nb, h.fctx, h.table)
    return True


def on_health_sb(changes: list[RowChange], h: FlowFeatureCtx) -> HandlerResult:
    """``on_sb_flows``: SB changes: Service_Monitor rows (ovn-controller's ``status``, our own writes
    echoing) and Port_Binding ``up`` of monitored ports may put backends in or out of their VIPs.
    Rebuilds the load balancers reading a monitor that flipped (UPDATED if any)."""
    sb, nb, fctx, table = h.sb, h.nb, h.fctx, h.table
    pb_index = h.sb_indexes.get(PB_INDEX)
    health = fctx.health
    ports = health.port_lbs
    relevant = h.sb_resynced
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
        return handled(False)
    down = sb_down_monitors(sb, pb_up_reader(sb, pb_index))
    flipped = down ^ health.down
    health.down = down
    lbs = health.lbs_of_keys(flipped)
    if lbs:
        rebuild_lbs(lbs, nb, fctx, table)
    return handled(bool(lbs))


def warn_unused_lbs(h: FlowFeatureCtx) -> None:
    """``on_flows_recomputed``: bad VIPs of the load balancers no datapath uses (those in use were
    checked by their flows)."""
    for lb in h.nb.rows("Load_Balancer").values():
        if str(lb.uuid) not in h.fctx.lbs.lb_dps:
            warn_bad_vips(lb, h.fctx)


def _health_check_ports(h: FlowFeatureCtx, fctx: FlowCtx) -> set[str]:
    """Ports whose health-check source IPs changed (their ARP/ND responder flows read them)."""
    new = svc_monitor_src_ips(h.nb)
    old = fctx.svc_monitor_ips
    if new == old:
        return set()
    fctx.svc_monitor_ips = new
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


def on_nb_flows(changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    """Load balancers, their groups and health checks, NAT rules, and switches' / routers' LB and
    NAT columns: :func:`_classify` what changed, work out each datapath's attachments
    (:func:`_attachments`, which updates the index), then rebuild (:func:`_rebuild`)."""
    nd = h.nd
    # Validate before changing anything.
    for c in changes:
        if c.table in ("Logical_Switch", "Logical_Router") and (
            c.event != "update" or (nd.datapaths.get(str(c.uuid)) is None and str(c.uuid) not in h.deleted)
        ):
            return False  # (a deleted one: its attachments are dropped from the index)
    ch = _classify(changes, h)
    att = _attachments(ch, h)
    _rebuild(ch, att, h)
    return True


@dataclass(slots=True)
class _LbChanges:
    """What a batch of NB changes touches (:func:`_classify`)."""

    changed_lbs: set[str] = field(default_factory=set)  # load balancers whose own flows / SB row may differ
    dps: set[str] = field(default_factory=set)  # datapaths whose attachments may have changed
    routers: set[str] = field(default_factory=set)  # routers whose NAT rules changed
    gone_nats: set[str] = field(default_factory=set)
    health: bool = False
    # The load balancers the change moved or changed (:func:`lb_change_views`); None: unknown.
    views: list[LbView] | None = None


@dataclass(slots=True)
class _Attachments:
    """What each touched datapath gained or lost (:func:`_attachments`)."""

    switch_lbs: set[str]
    # Load balancers (not in switch_lbs) that only gained switches: their flows are added there.
    gained: dict[str, list[Datapath]] = field(default_factory=dict)
    touched_switches: set[str] = field(default_factory=set)
    rebuild: dict[str, set[Hashable]] = field(default_factory=dict)  # router -> owners its NB no longer names
    keep: dict[str, frozenset[str]] = field(default_factory=dict)  # router -> LBs whose router flows stay
    # router -> (its LBs now, those it gained or lost): keep is now - moved - changed (when needed)
    keep_from: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    lost: dict[str, set[str]] = field(default_factory=dict)  # router -> LBs it no longer has
    changed_here: dict[str, set[str]] = field(default_factory=dict)  # router -> its new or changed LBs


def _classify(changes: list[RowChange], h: FlowFeatureCtx) -> _LbChanges:
    fctx, idx = h.fctx, h.fctx.lbs
    ch = _LbChanges()
    lb_rows = h.nb.rows("Load_Balancer")
    grp_rows = h.nb.rows("Load_Balancer_Group")
    for c in changes:
        key = str(c.uuid)
        if c.table == "Load_Balancer":
            ch.changed_lbs.add(key)
            row = _row(lb_rows, key)
            if row is not None:
                warn_bad_vips(row, fctx)  # also when no switch or router uses it
            ch.health = ch.health or bool(fctx.svc_monitor_ips) or (row is not None and bool(row.health_check))
        elif c.table == "Load_Balancer_Group":
            users = idx.group_dps.get(key)
            if users:  # a group no datapath uses feeds nothing
                ch.dps |= users
                grp = _row(grp_rows, key)
                new = group_members(grp) if grp is not None else frozenset()
                ch.changed_lbs |= idx.group_lbs.get(key, frozenset()) ^ new
                idx.group_lbs[key] = new
        elif c.table == "Load_Balancer_Health_Check":
            ch.health = True
            for lb in lb_rows.values():
                if any(str(hc.uuid) == key for hc in lb.health_check):
                    ch.changed_lbs.add(str(lb.uuid))
        elif c.table == "NAT":
            # Every router listing the rule (a new rule is found through its router's ``nat`` column).
            ch.routers |= idx.nat_dps.get(key, set())
            if c.event == "delete":
                ch.gone_nats.add(key)
        else:
            ch.dps.add(key)
            if c.table == "Logical_Router" and "nat" in c.columns:
                ch.routers.add(key)
    for lb in ch.changed_lbs:
        ch.dps |= idx.lb_dps.get(lb, set())
    # Only load balancers and groups changed: which routers' facts they touch is worked out per
    # router (a router's own columns, health checks, NAT rules: its facts are computed again).
    if all(c.table in LB_TABLES for c in changes):
        ch.views = lb_change_views(changes, h.nb)
    return ch


def _attachments(ch: _LbChanges, h: FlowFeatureCtx) -> _Attachments:
    """Record each touched datapath's present attachments in the index, and what that moved."""
    nd, idx = h.nd, h.fctx.lbs
    att = _Attachments(set(ch.changed_lbs))
    for key in ch.dps | ch.routers:
        dp = nd.datapaths.get(key)
        old_lbs = idx.dp_lbs.get(key, frozenset())
        old_nats = idx.dp_nats.get(key, frozenset())
        moved = idx.set_dp(dp, key)
        if dp is None:
            idx.sb_dirty |= moved  # (deleted: their SB rows must stop naming it)
            continue
        now = idx.dp_lbs.get(key, frozenset())
        if dp.is_switch:
            att.switch_lbs |= moved - now  # (lost: rebuilt where they stay)
            for lb in moved & now:
                att.gained.setdefault(lb, []).append(dp)
            if moved or ch.changed_lbs & now:
                att.touched_switches.add(key)
        elif key in ch.routers or moved or not (ch.changed_lbs.isdisjoint(old_lbs) and ch.changed_lbs.isdisjoint(now)):
            if key in ch.routers:
                owners: set[Hashable] = {router_lb_owner(lb, key) for lb in old_lbs}
                att.keep[key] = frozenset()
                att.lost[key] = set(old_lbs - now)
                att.changed_here[key] = set(now)
            else:  # (moved is old ^ now, a few: no pass over the hundreds it keeps)
                lost = moved - now
                owners = {router_lb_owner(lb, key) for lb in lost}
                # Same NAT context: the load balancers it keeps, unchanged, keep their flows
                # (now - moved - changed, made when the router's scope is rebuilt).
                att.keep_from[key] = (now, moved)
                att.lost[key] = set(lost)
                att.changed_here[key] = set(moved & now) | {lb for lb in ch.changed_lbs if lb in now}
            owners |= {nat_owner(n, key) for n in old_nats}
            att.rebuild[key] = owners
    return att


def _rebuild(ch: _LbChanges, att: _Attachments, h: FlowFeatureCtx) -> None:
    fctx, nd, table = h.fctx, h.nd, h.table
    lb_rows = h.nb.rows("Load_Balancer")
    # A deleted NAT rule left the lists of the routers that had it in the same transaction (strong
    # references): its flows go from those routers (also dropped with their old rules, att.rebuild).
    for n in ch.gone_nats:
        for key in ch.routers:
            table.remove_owner(nat_owner(n, key))
    for lb in ch.changed_lbs:
        fctx.health.set_lb(lb, _row(lb_rows, lb))
    # Switch load balancers: one owner per load balancer, over all its switches.
    for lb in att.switch_lbs:
        _rebuild_switch_lb(lb, _row(lb_rows, lb), fctx, table)
        fctx.lbs.sb_dirty.add(lb)
    # A load balancer that only gained switches (a node joining the groups): the same flows there
    # (each switch's are those of the others: only the copp meter is the switch's own).
    for lb, dps in att.gained.items():
        if lb in att.switch_lbs:
            continue
        row = _row(lb_rows, lb)
        if row is not None:
            build_lb_flows_on_switches(sorted(dps, key=lambda d: d.index), row, fctx, table)
        fctx.lbs.sb_dirty.add(lb)
    if fctx.profile.has("lb_split_datapath_groups"):
        # Routers' load balancers have SB rows too (ls/lr datapath groups).
        fctx.lbs.sb_dirty |= ch.changed_lbs
        for key in att.rebuild:
            fctx.lbs.sb_dirty |= att.lost[key] | att.changed_here[key]
    if att.touched_switches:
        refresh_switches(att.touched_switches, h, lb_only=True)
    for key, extra in sorted(att.rebuild.items()):
        router = nd.datapaths[key]
        if key not in ch.routers and rebuild_router_lbs(router, att.lost[key], att.changed_here[key], lb_rows,
                                                        fctx, table, ch.views):
            continue
        keep = att.keep.get(key)
        if keep is None:
            now, moved = att.keep_from[key]
            keep = frozenset(now - moved - ch.changed_lbs)
        rebuild_router_scope(router, fctx, table, extra, keep)
    if ch.health:
        for name in _health_check_ports(h, fctx):
            table.remove_owner((OWNER_PORT, name))
            p = nd.ports.get(name)
            if p is not None:
                build_port_flows(p, fctx, table)


class LbMonitors:
    """The load-balancer feature's SB side: SB Service_Monitor rows of health-checked backends
    (:class:`~ovn_northd_py.sync.service_monitor.MonitorSync`, one per graph, keeps what the NB
    asked for at the last sync)."""

    def __init__(self, monitors: MonitorSync) -> None:
        self.monitors = monitors

    def sync_sb(self, h: SbFeatureCtx) -> None:
        macs = h.svc_monitor_macs or []
        self.monitors.full(h.sb_txn, h.sb, h.nb, h.nd, h.svc_monitor_mac, h.stats, h.profile,
                           mac_dst=macs[1] if len(macs) > 1 else "")

    def on_nb_resync(self, _changes: list[RowChange], h: SbFeatureCtx) -> bool:
        """``on_nb_sb`` of other features whose NB rows ask for Service_Monitor rows (26.03: switch
        ports' and network functions' health checks): the (small) table synced again."""
        if self.monitors.want is None:
            return False
        self.sync_sb(h)
        return True

    def on_nb_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        return self.monitors.on_nb(h, h.nd, h.svc_monitor_mac, changes)

    def on_northd_sb(self, _changes: list[RowChange], h: SbFeatureCtx) -> bool:
        t = h.tracked
        if t is None:
            return False
        return self.monitors.on_ports(h, h.nd, h.svc_monitor_mac, t.ports_changed | set(t.ports_deleted))

    def on_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        """Service_Monitor rows that changed, and Port_Binding ``up`` (ports the sb_sync node has
        checked already: a Port_Binding change it cannot name recomputes before this)."""
        pb_index = h.sb_indexes[PB_INDEX]
        rows_pb = h.sb.rows("Port_Binding")
        up_ports: set[str] = set()
        for c in changes:
            if c.table == "Port_Binding" and (c.event != "update" or "up" in c.columns):
                row = rows_pb.get(c.uuid)
                name = row.logical_port if row is not None else pb_index.key_of_uuid(c.uuid)
                if not isinstance(name, str):
                    return False
                up_ports.add(name)
        return self.monitors.on_sb(h, changes, up_ports)
