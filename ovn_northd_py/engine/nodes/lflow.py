"""The logical-flow node: every flow builder writes into one FlowTable (the lflow manager)."""

from __future__ import annotations

from typing import Any

from ...flows import build_datapath_flows, build_lflows, build_port_flows, port_reads_switch
from ...flows.context import FlowCtx, flow_ctx_from_nb
from ...flows.lr_pipeline import attached_router_ports
from ...flows.ls_lb import warn_bad_vips
from ...flows.owners import OWNER_DP, OWNER_PORT
from ...lflow.table import FlowTable
from ...ovsdb.connection import RowChange
from ...sync.indexes import PB_BY_NAME
from ..engine import Node
from ..feature_lb import on_health_sb, on_mapped_ports, rebuild_router_scope
from ..features import FeatureCtx, feature, flow_only_columns, split_changes
from .inputs import DbInput
from .northd import NorthdNode


class LflowNode(Node):
    name = "lflow"

    def __init__(self, northd: NorthdNode, nb_in: DbInput, sb_in: DbInput | None = None) -> None:
        super().__init__()
        self.northd = northd
        self.table = FlowTable()
        self.fctx: FlowCtx | None = None
        # True after a recompute: the writer must compare every flow, not only the changed ones.
        self.full_sync_needed = True
        self.add_input(northd, self._on_northd_change)
        self.nb_in = nb_in
        self.add_input(nb_in, self._on_nb_change)
        # SB: Service_Monitor status / Port_Binding up of health-checked backends (load-balancer VIPs).
        self.sb_in = sb_in
        if sb_in is not None:
            self.add_input(sb_in, self._on_sb_change)

    def _on_sb_change(self, _node: Node, ctx: Any) -> bool:
        if self.fctx is None or self.sb_in is None:
            return False
        self.fctx.nd = self.northd.data
        if on_health_sb(self.sb_in.changes, self.sb_in.resynced, ctx.sb, ctx.nb, self.fctx, self.table,
                        self.sb_in.indexes.get(PB_BY_NAME)):
            self.changed = True
        return True

    def _on_nb_change(self, _node: Node, ctx: Any) -> bool:
        """NB tables of registered features (ACLs, port groups, ...): their handlers rebuild the
        flows of the changed entities.  Other NB changes reach us through the northd node."""
        if self.nb_in.resynced:
            return False
        changes = self.nb_in.changes
        t = self.northd.tracked
        if t is not None and t.dps_added:
            # A new switch or router: to the features it is an update of every column they read.
            nd = self.northd.data
            for key in sorted(t.dps_added):
                dp = nd.datapaths.get(key)
                if dp is not None:
                    table = "Logical_Switch" if dp.is_switch else "Logical_Router"
                    changes = [*changes, RowChange("update", table, dp.nb.uuid, flow_only_columns(table))]
        by_feature = split_changes(changes)
        if not by_feature:
            return True
        if self.fctx is None:
            return False
        hctx = FeatureCtx(ctx.nb, ctx.sb, self.northd.data, self.table, self.fctx)
        for name, changes in by_feature.items():
            f = feature(name)
            if f.on_nb_flows is None or not f.on_nb_flows(changes, hctx):
                return False
        self.changed = True
        return True

    def _on_northd_change(self, _node: Node, ctx: Any) -> bool:
        """Unlink and rebuild the flows of exactly the ports and switches that changed.

        A flow shared by several datapaths loses only the (flow, datapath) references
        the removed owner made; the table's refcounts keep the rest.
        """
        t = self.northd.tracked
        if t is None or self.fctx is None:
            return False
        nd, table, fctx = self.northd.data, self.table, self.fctx
        fctx.nd = nd
        table.ensure_capacity(len(nd.by_index))  # new datapaths take the next indexes
        for name in t.ports_deleted:
            table.remove_owner((OWNER_PORT, name))
        rebuild_ports: set[str] = set(t.ports_changed)
        # A router port changed in place, attached or detached: the router's every flow
        # (rebuild_router_scope, below), the switches it is attached to -- their flows and every
        # port of theirs bind its addresses and answer ARP for them -- and directly peered ports.
        routers = [r for k in sorted(t.routers_changed) if (r := nd.datapaths.get(k)) is not None]
        datapaths = set(t.dps_changed) - {r.key for r in routers}  # (those get their whole scope)
        all_ports = set(t.attach_changed)
        for router in routers:
            fctx.forget(router.key)  # switch flows below read the router's memoised facts
            for lrp in router.ports:
                q = lrp.peer
                if lrp.kind != "lrp" or q is None:
                    continue
                if q.kind == "lrp":
                    rebuild_ports.add(q.name)
                else:
                    datapaths.add(q.dp.key)
                    all_ports.add(q.dp.key)
        for key in datapaths:
            dp = nd.datapaths.get(key)
            fctx.forget(key)  # values memoised from this switch's ports are stale
            table.remove_owner((OWNER_DP, key))
            if dp is None:
                continue
            build_datapath_flows(dp, fctx, table)
            # Router-type, virtual and external ports read the other ports of their switch,
            # and so do the router ports attached to it (localnet / vtep ports).
            rebuild_ports |= {p.name for p in dp.ports if port_reads_switch(p)}
            rebuild_ports |= {p.name for p in attached_router_ports(dp)}
        for key in all_ports:
            sw = nd.datapaths.get(key)
            if sw is not None:
                fctx.forget(key)
                rebuild_ports |= {p.name for p in sw.ports}
        for router in routers:
            rebuild_router_scope(router, fctx, table, set())
        for name in rebuild_ports:
            table.remove_owner((OWNER_PORT, name))
            p = nd.ports.get(name)
            if p is not None:
                build_port_flows(p, fctx, table)
        on_mapped_ports(t.ports_changed | set(t.ports_deleted), ctx.nb, fctx, table)  # health-checked backends
        self.changed = True
        return True

    def recompute(self, ctx: Any) -> None:
        nd = self.northd.data
        gopts = self.northd.gopts
        table = FlowTable(len(nd.by_index))
        fctx = flow_ctx_from_nb(nd, ctx.nb, mac_prefix=gopts.mac_prefix if gopts else "",
                                svc_monitor_mac=gopts.svc_monitor_mac if gopts else "", warn=ctx.warn.warn,
                                sb=ctx.sb, pb_index=self.sb_in.indexes.get(PB_BY_NAME) if self.sb_in else None,
                                profile=ctx.profile)
        build_lflows(nd, fctx, table)
        for lb in ctx.nb.rows("Load_Balancer").values():
            if str(lb.uuid) not in fctx.lbs.lb_dps:  # (those in use were checked by their flows)
                warn_bad_vips(lb, fctx)
        self.table = table
        self.fctx = fctx
        self.full_sync_needed = True
