"""The logical-flow node: every flow builder writes into one FlowTable (the lflow manager).

Feature-specific work goes through the features' flow hooks (``Feature.on_nb_flows``,
``on_northd_flows``, ``on_sb_flows``, ``on_flows_recomputed``); this node knows no feature.
"""

from __future__ import annotations

from ...flows import build_datapath_flows, build_lflows, build_port_flows, port_reads_switch
from ...flows.chassis_features import FeatureLatch
from ...flows.context import FlowCtx, flow_ctx_from_nb
from ...flows.lr_pipeline import (
    attached_router_ports,
    build_lr_route_and_policy_flows,
    route_and_policy_owners,
)
from ...flows.lr_routing import chain_order_dependents
from ...flows.owners import OWNER_DP, OWNER_PORT, new_flow_table
from ...ovsdb.connection import RowChange
from ...sync.indexes import PB_BY_NAME
from ..engine import UNCHANGED, UNHANDLED, UPDATED, EngineCtx, HandlerResult, Node
from ..features import FeatureSet, FlowFeatureCtx
from ..flow_rebuild import (
    add_joined_router_flows,
    ports_only_candidate,
    ports_only_facts_same,
    rebuild_router_scope,
    rebuild_switch_ports,
    router_switch_candidate,
    router_switch_facts_same,
)
from .inputs import DbInput
from .northd import NorthdNode


class LflowNode(Node):
    name = "lflow"

    def __init__(self, northd: NorthdNode, nb_in: DbInput, sb_in: DbInput, features: FeatureSet) -> None:
        super().__init__()
        self.northd = northd
        self.nb_in = nb_in
        self.sb_in = sb_in  # SB: Service_Monitor status / Port_Binding up of health-checked backends...
        self.features = features
        self.table = new_flow_table()
        self.fctx: FlowCtx | None = None
        # True after a recompute: the writer must compare every flow, not only the changed ones.
        self.full_sync_needed = True
        # Chassis features found off so far (a release whose features latch: flows/chassis_features.py).
        self.feature_latch = FeatureLatch()
        # Routers whose every flow on_northd rebuilt in this run (the NB hooks, which run after it,
        # need not rebuild their routes and policies again).
        self.scoped_routers: set[str] = set()

    def clear_tracked(self) -> None:
        self.scoped_routers = set()

    def _hook_ctx(self, ctx: EngineCtx) -> FlowFeatureCtx | None:
        """The features' context, or None when the flow context is missing or was built from
        another model than the northd node's (then the node recomputes)."""
        fctx, nd = self.fctx, self.northd.data
        if fctx is None or fctx.nd is not nd:
            return None
        return FlowFeatureCtx(ctx.nb, ctx.sb, nd, self.table, fctx, sb_indexes=self.sb_in.indexes)

    def on_sb(self, ctx: EngineCtx) -> HandlerResult:
        """SB changes of the features' SB tables (e.g. health checks: Service_Monitor, Port_Binding up)."""
        h = self._hook_ctx(ctx)
        if h is None:
            return UNHANDLED
        h.sb_resynced = self.sb_in.resynced
        by_feature = self.features.split_sb_changes(self.sb_in.changes)
        result = UNCHANGED
        for f in self.features:
            if f.on_sb_flows is None or not (h.sb_resynced or f.name in by_feature):
                continue
            r = f.on_sb_flows(by_feature.get(f.name, []), h)
            if r is UNHANDLED:
                return UNHANDLED
            if r is UPDATED:
                result = UPDATED
        return result

    def on_nb(self, ctx: EngineCtx) -> HandlerResult:
        """NB tables of the features (ACLs, port groups, ...): their hooks rebuild the flows of the
        changed entities.  Other NB changes reach us through the northd node."""
        if self.nb_in.resynced:
            return UNHANDLED
        changes = self.nb_in.changes
        t = self.northd.tracked
        if t is not None and (t.dps_added or t.dps_deleted):
            # A new or deleted switch or router: to the features it is an update of every column they read.
            nd = self.northd.data
            dps = [d for key in sorted(t.dps_added) if (d := nd.datapaths.get(key)) is not None]
            dps += [t.dps_deleted[key] for key in sorted(t.dps_deleted)]
            for dp in dps:
                table = "Logical_Switch" if dp.is_switch else "Logical_Router"
                changes = [*changes, RowChange("update", table, dp.nb.uuid, self.features.flow_only_columns(table))]
        by_feature = self.features.split_changes(changes)
        if not by_feature and not (t is not None and t.dps_deleted):
            return UNCHANGED
        h = self._hook_ctx(ctx)
        if h is None:
            return UNHANDLED
        if t is not None:
            h.deleted = frozenset(t.dps_deleted)
        h.scoped_routers = frozenset(self.scoped_routers)
        for name, fchanges in by_feature.items():
            f = self.features.get(name)
            if f.on_nb_flows is None or not f.on_nb_flows(fchanges, h):
                return UNHANDLED
        if t is not None and t.dps_deleted:
            # Whatever the features left on a deleted datapath's bit (the bit is never reused).
            h.table.purge_datapaths((dp.index for dp in t.dps_deleted.values()), frozenset(t.dps_deleted))
        return UPDATED

    def on_northd(self, ctx: EngineCtx) -> HandlerResult:
        """Unlink and rebuild the flows of exactly the ports and switches that changed.

        A flow shared by several datapaths loses only the (flow, datapath) references
        the removed owner made; the table's refcounts keep the rest.
        """
        t = self.northd.tracked
        h = self._hook_ctx(ctx)
        if t is None or h is None:
            return UNHANDLED
        nd, table, fctx = h.nd, h.table, h.fctx
        table.ensure_capacity(len(nd.slots))  # new datapaths take the next indexes
        for name in t.ports_deleted:
            table.remove_owner((OWNER_PORT, name))
        for key in t.dps_deleted:
            table.remove_owner((OWNER_DP, key))
            fctx.forget(key)
        rebuild_ports: set[str] = set(t.ports_changed)
        # A router port changed in place, attached or detached: the router's every flow
        # (rebuild_router_scope, below), the router-type ports of the switches it is attached to
        # (they read the router's facts: its NAT and load-balancer addresses, its gateway ports),
        # directly peered ports, and the datapath flows and every port of the switches whose own
        # router port changed or was attached / detached (they bind its addresses and answer ARP
        # for them).  A switch's datapath flows and its other ports read only the router ports
        # attached to it (and the router's options, whose change is not a port change), so a node
        # joining the cluster router rebuilds its own switch, not the others.
        routers = [r for k in sorted(t.routers_changed) if (r := nd.datapaths.get(k)) is not None]
        datapaths = set(t.dps_changed) - {r.key for r in routers}  # (those get their whole scope)
        all_ports = set(t.attach_changed)
        # Routers that only gained or lost ports (a node joining the cluster router): their ports
        # that did not change, and those ports' peers, are rebuilt only if the router-wide facts
        # they read turn out changed (checked after the rebuild, below).
        ports_only = {r.key: c for r in routers if r.key not in t.dps_added
                      and (c := ports_only_candidate(r, fctx, table, t.ports_changed)) is not None}
        # Switches of router-type ports only (the join switch) that routers only joined or left:
        # their other ports, and the router ports attached to them, keep their flows unless the
        # switch facts they read turn out changed (checked after the rebuild, below); each adds
        # its bindings on the routers that joined.
        joins = {key: sc for key in sorted(t.dps_changed | t.attach_changed)
                 if key not in t.dps_added and (sw := nd.datapaths.get(key)) is not None
                 and (sc := router_switch_candidate(sw, fctx, table, t)) is not None}
        for router in routers:
            fctx.forget(router.key)  # switch flows below read the router's memoised facts
            cand = ports_only.get(router.key)
            for lrp in router.ports:
                q = lrp.peer
                if lrp.kind != "lrp" or q is None:
                    continue
                if cand is None or lrp.name in cand.ports:
                    rebuild_ports.add(q.name)
                if q.kind == "lsp":
                    fctx.forget(q.dp.key)  # (values memoised from the router, e.g. its options)
                    if lrp.name in t.ports_changed or q.name in t.ports_changed:
                        datapaths.add(q.dp.key)
                        all_ports.add(q.dp.key)
        for key in datapaths:
            dp = nd.datapaths.get(key)
            fctx.forget(key)  # values memoised from this switch's ports are stale
            table.remove_owner((OWNER_DP, key))
            if dp is None:
                continue
            build_datapath_flows(dp, fctx, table)
            if key in joins:
                continue
            # Router-type, virtual and external ports read the other ports of their switch,
            # and so do the router ports attached to it (localnet / vtep ports).
            rebuild_ports |= {p.name for p in dp.ports if port_reads_switch(p)}
            rebuild_ports |= {p.name for p in attached_router_ports(dp)}
        for key in all_ports:
            sw = nd.datapaths.get(key)
            if sw is not None:
                fctx.forget(key)
                if key not in joins:
                    rebuild_ports |= {p.name for p in sw.ports}
        done: set[str] = set()  # ports rebuilt with their router's scope (not again below)
        for router in routers:
            cand = ports_only.get(router.key)
            done |= rebuild_router_scope(router, fctx, table, set(), only_ports=cand.ports if cand else None)
            if cand is not None and not ports_only_facts_same(router, fctx, cand):
                done |= rebuild_router_scope(router, fctx, table, set())  # (its other ports too)
            self.scoped_routers.add(router.key)
        if fctx.profile.has("ecmp_route_chain_order") and (routers or t.dps_changed):
            # 25.03: a router's ECMP numbering counts the routes (connected ones too) of the
            # routers before it (flows/lr_routing._chain_order).
            scoped = {r.key for r in routers}
            for other in chain_order_dependents(nd):
                if other.key not in scoped:
                    for owner in route_and_policy_owners(other):
                        table.remove_owner(owner)
                    build_lr_route_and_policy_flows(other, fctx, table)
        for name in rebuild_ports - done:
            table.remove_owner((OWNER_PORT, name))
            p = nd.ports.get(name)
            if p is not None:
                build_port_flows(p, fctx, table)
        built = rebuild_ports | done
        for key, join in joins.items():
            sw = nd.datapaths[key]
            if router_switch_facts_same(sw, fctx, join):
                add_joined_router_flows(sw, fctx, table, join, built)
            else:
                rebuild_switch_ports(sw, fctx, table, built)
        h.tracked = t
        for f in self.features:  # e.g. health-checked backends on the changed ports
            if f.on_northd_flows is not None and not f.on_northd_flows([], h):
                return UNHANDLED  # (a hook must not fail after changes: it returns False up front)
        return UPDATED

    def recompute(self, ctx: EngineCtx) -> None:
        nd = self.northd.data
        gopts = self.northd.gopts
        table = new_flow_table(len(nd.slots))
        if any(c.table == "Chassis" and c.event == "update" and "other_config" in c.columns for c in self.sb_in.changes):
            self.feature_latch.reevaluate()  # (a release whose chassis features latch: flows/chassis_features.py)
        fctx = flow_ctx_from_nb(nd, ctx.nb, mac_prefix=gopts.mac_prefix if gopts else "",
                                svc_monitor_mac=gopts.svc_monitor_mac if gopts else "", warn=ctx.warn.warn,
                                sb=ctx.sb, pb_index=self.sb_in.indexes.get(PB_BY_NAME), profile=ctx.profile,
                                feature_latch=self.feature_latch)
        build_lflows(nd, fctx, table)
        h = FlowFeatureCtx(ctx.nb, ctx.sb, nd, table, fctx, sb_indexes=self.sb_in.indexes)
        for f in self.features:  # e.g. warnings about rows no flow read
            if f.on_flows_recomputed is not None:
                f.on_flows_recomputed(h)
        self.table = table
        self.fctx = fctx
        self.full_sync_needed = True
