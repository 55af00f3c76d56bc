"""Writes the SB tables northd owns (except logical flows) into the SB transaction.

Incremental paths:
* from ``northd``: only the Port_Binding rows of the ports that changed and the
  Multicast_Group rows of the switches that changed are compared and written;
* from ``sb``: rows of ours that someone changed (or our own writes echoed back)
  are compared one by one with what we want and repaired if needed.
Everything else falls back to a full diff of every table (``recompute``).
"""

from __future__ import annotations

from typing import Any

from ...sync.address_sets import desired_address_sets, sync_address_sets
from ...sync.datapaths import dp_nb_key, prune_datapaths, sync_datapaths, sync_ip_multicast
from ...sync.dhcp_codes import sync_dhcp_option_codes
from ...sync.globals import nb_global_row, sync_sb_global
from ...sync.indexes import DP_BY_NB_KEY, MC_BY_KEY, PB_BY_NAME
from ...sync.mcast import MC_NAMES, desired_groups_of, sync_multicast_groups
from ...sync.mirrors import sync_sb_mirrors
from ...sync.ports import (
    PB_ON_INSERT,
    chassis_by_name,
    desired_pb,
    port_mirror_names,
    sb_mirror_rows,
    sync_ha_groups,
    sync_port_bindings,
)
from ...sync.rbac import sync_rbac
from ...sync.rows import sync_one_row
from ...sync.service_monitor import MonitorSync
from ..engine import Node
from ..feature_acl import sync_router_lb_sets
from ..features import FEATURES, FeatureCtx, feature, split_changes
from .inputs import DbInput
from .northd import NorthdNode

# SB changes we can check row by row; a change anywhere else (of a table we own) recomputes.
_SB_ROW_CHECKED = {"Port_Binding", "Multicast_Group", "Service_Monitor"}
# SB tables we do not own or whose changes need nothing from this node.
_SB_IGNORED = {"Chassis", "Encap", "Chassis_Private"}


def _mc_key(row: Any) -> Any:
    k = dp_nb_key(row.datapath)
    return (k, row.name) if k else None


class _DpRows:
    """A read-only ``{NB datapath key: SB Datapath_Binding row}`` view over the SB row index."""

    __slots__ = ("index", "sb")

    def __init__(self, index: Any, sb: Any) -> None:
        self.index, self.sb = index, sb

    def get(self, key: Any, default: Any = None) -> Any:
        row = self.index.get(self.sb, key)
        return row if row is not None and row._data is not None else default

    def __getitem__(self, key: Any) -> Any:
        row = self.get(key)
        if row is None:
            raise KeyError(key)
        return row

    def __contains__(self, key: Any) -> bool:
        return self.get(key) is not None


class SbSyncNode(Node):
    name = "sb_sync"

    def __init__(self, northd: NorthdNode, sb_in: DbInput, nb_in: DbInput) -> None:
        super().__init__()
        self.northd = northd
        self.sb_in = sb_in
        self.pb_index = sb_in.add_index(PB_BY_NAME, "Port_Binding", lambda r: r.logical_port)
        self.dp_index = sb_in.add_index(DP_BY_NB_KEY, "Datapath_Binding", dp_nb_key)
        self.mc_index = sb_in.add_index(MC_BY_KEY, "Multicast_Group", _mc_key)
        self.monitors = MonitorSync(sb_in)  # Service_Monitor (load-balancer health checks)
        for f in FEATURES:
            for name, (table, key_of) in f.sb_indexes.items():
                sb_in.add_index(name, table, key_of)
        self.add_input(northd, self._on_northd_change)
        self.add_input(sb_in, self._on_sb_change)
        self.nb_in = nb_in
        self.add_input(nb_in, self._on_nb_change)

    # ---- incremental ----
    def _dp_rows(self, sb: Any) -> Any:
        """NB datapath key -> SB Datapath_Binding row, looked up through the index (no table scan:
        this runs on every incremental change)."""
        return _DpRows(self.dp_index, sb)

    def _sync_ports(self, ctx: Any, names: set[str]) -> dict[str, Any]:
        sb, nd = ctx.sb, self.northd.data
        dps = self._dp_rows(sb)
        chassis = chassis_by_name(sb) if any(
            (p := nd.ports.get(n)) is not None and p.requested_chassis for n in names) else {}
        mirrors = sb_mirror_rows(sb) if any(
            (p := nd.ports.get(n)) is not None and port_mirror_names(p) for n in names) else {}
        out: dict[str, Any] = {}
        for name in names:
            p = nd.ports.get(name)
            row = self.pb_index.get(sb, name)
            if p is not None and (p.ha_group or p.dp.key not in dps):
                raise _Unhandled
            want = desired_pb(p, dps, {}, chassis, mirrors) if p is not None else None
            r = sync_one_row(ctx.sb_txn, "Port_Binding", row, want, ctx.stats, PB_ON_INSERT)
            if r is not None:
                out[name] = r
        return out

    def _sync_groups(self, ctx: Any, dp_keys: set[str], new_pbs: dict[str, Any]) -> None:
        sb, nd = ctx.sb, self.northd.data
        dps = self._dp_rows(sb)
        for key in dp_keys:
            dp = nd.datapaths.get(key)
            want = desired_groups_of(dp) if dp is not None else {}
            for name in MC_NAMES:
                row = self.mc_index.get(sb, (key, name))
                w = want.get((key, name))
                if w is None:
                    sync_one_row(ctx.sb_txn, "Multicast_Group", row, None, ctx.stats)
                    continue
                ports = []
                for pn in w[1]:
                    pr = new_pbs.get(pn) or self.pb_index.get(sb, pn)
                    if pr is None:
                        raise _Unhandled
                    ports.append(pr)
                sync_one_row(ctx.sb_txn, "Multicast_Group", row,
                             {"datapath": dps[key], "name": name, "tunnel_key": w[0], "ports": ports}, ctx.stats)

    def _on_northd_change(self, _node: Node, ctx: Any) -> bool:
        t = self.northd.tracked
        if t is None or t.dps_added:
            return False  # (a new datapath: its SB rows come with a full SB sync; flows stay incremental)
        try:
            new_pbs = self._sync_ports(ctx, t.ports_changed | set(t.ports_deleted))
            self._sync_groups(ctx, t.dps_changed, new_pbs)
        except _Unhandled:
            return False  # nothing was left half-done: recompute redoes every table
        hctx = self._feature_ctx(ctx)
        hctx.tracked = t
        nd = self.northd.data
        for key in t.routers_changed | t.lb_routers:
            router = nd.datapaths.get(key)
            if router is not None:
                sync_router_lb_sets(hctx, router)
        for f in FEATURES:
            if f.on_northd_sb is not None and not f.on_northd_sb([], hctx):
                return False
        return self.monitors.on_ports(ctx, nd, self._svc_mac(), t.ports_changed | set(t.ports_deleted))

    def _svc_mac(self) -> str:
        return self.northd.gopts.svc_monitor_mac if self.northd.gopts else ""

    def _feature_ctx(self, ctx: Any) -> FeatureCtx:
        return FeatureCtx(ctx.nb, ctx.sb, self.northd.data, sb_txn=ctx.sb_txn, stats=ctx.stats, warn=ctx.warn.warn,
                          sb_indexes=self.sb_in.indexes)

    def _on_sb_change(self, _node: Node, ctx: Any) -> bool:
        if self.sb_in.resynced:
            return False
        tables = self.sb_in.changed_tables()
        owners = {t: f for f in FEATURES for t in f.sb_tables}  # SB tables of features (their on_sb)
        if tables - _SB_ROW_CHECKED - _SB_IGNORED - {"SB_Global"} - owners.keys():
            return False
        by_feature: dict[str, list[Any]] = {}
        for c in self.sb_in.changes:
            if c.table in owners:
                by_feature.setdefault(owners[c.table].name, []).append(c)
        for c in self.sb_in.changes:
            if c.table == "SB_Global" and (c.event != "update" or not c.columns <= {"nb_cfg"}):
                return False
        names: set[str] = set()
        up_ports: set[str] = set()  # Port_Binding.up may have changed (Service_Monitor status)
        dps: set[str] = set()
        rows_pb = ctx.sb.rows("Port_Binding")
        for c in self.sb_in.changes:
            if c.table == "Port_Binding":
                row = rows_pb.get(c.uuid)
                name = row.logical_port if row is not None else self.pb_index.key_of_uuid(c.uuid)
                if not isinstance(name, str):
                    return False
                if c.event != "update" or "up" in c.columns:
                    up_ports.add(name)
                # Columns ovn-controller owns change all the time: nothing for us to check.
                if c.event == "update" and not c.columns & _PB_OWNED:
                    continue
                names.add(name)
            elif c.table == "Multicast_Group":
                row = ctx.sb.rows("Multicast_Group").get(c.uuid)
                key = _mc_key(row) if row is not None else self.mc_index.key_of_uuid(c.uuid)
                if not isinstance(key, tuple):
                    return False
                dps.add(key[0])
        try:
            new_pbs = self._sync_ports(ctx, names) if names else {}
            if dps:
                self._sync_groups(ctx, dps, new_pbs)
        except _Unhandled:
            return False
        if not self.monitors.on_sb(ctx, self.sb_in.changes, up_ports):
            return False
        hctx = self._feature_ctx(ctx)
        for name, changes in by_feature.items():
            on_sb = feature(name).on_sb
            if on_sb is None or not on_sb(changes, hctx):
                return False
        return True

    def _on_nb_change(self, _node: Node, ctx: Any) -> bool:
        """NB tables of registered features: their SB handlers (Port_Group, Address_Set, ...).
        Other NB changes reach us through the northd node."""
        if self.nb_in.resynced:
            return False
        by_feature = split_changes(self.nb_in.changes)
        if not by_feature:
            return True
        if "routes" in by_feature:  # routes decide which BFD sessions are used (their status)
            by_feature.setdefault("bfd", [])
        lb_changes = by_feature.get("lb_nat", [])
        if lb_changes and not self.monitors.on_nb(ctx, self.northd.data, self._svc_mac(), lb_changes):
            return False
        hctx = self._feature_ctx(ctx)
        for name, changes in by_feature.items():
            f = feature(name)
            if f.sync_sb is None:
                continue  # the feature writes no SB table
            if f.on_nb_sb is None or not f.on_nb_sb(changes, hctx):
                return False
        return True

    # ---- full ----
    def recompute(self, ctx: Any) -> None:
        txn, sb, nb, stats = ctx.sb_txn, ctx.sb, ctx.nb, ctx.stats
        nd = self.northd.data
        gopts = self.northd.gopts
        assert gopts is not None
        sync_sb_global(txn, sb, nb_global_row(nb), gopts)
        dps = sync_datapaths(txn, sb, nd, stats)
        groups = sync_ha_groups(txn, sb, nd, stats)
        sync_sb_mirrors(txn, nb, sb, stats)  # before the port bindings, which name the rows
        pbs = sync_port_bindings(txn, sb, nd, dps, groups, stats)
        sync_multicast_groups(txn, sb, nd, dps, pbs, stats)
        sync_ip_multicast(txn, sb, nd, dps, stats)
        sync_address_sets(txn, sb, desired_address_sets(nb, gopts.svc_monitor_mac, nd, ctx.warn.warn), stats)
        sync_rbac(txn, sb, stats)
        sync_dhcp_option_codes(txn, sb, stats)
        self.monitors.full(txn, sb, nb, nd, gopts.svc_monitor_mac, stats)
        hctx = FeatureCtx(nb, sb, nd, sb_txn=txn, stats=stats, sb_indexes=self.sb_in.indexes, warn=ctx.warn.warn)
        for f in FEATURES:
            if f.sync_sb is not None:
                f.sync_sb(hctx)
        prune_datapaths(txn, sb, nd, stats)


# Port_Binding columns northd writes (the others belong to ovn-controller).
_PB_OWNED = frozenset({
    "logical_port", "datapath", "tunnel_key", "type", "options", "mac", "port_security", "parent_port", "tag",
    "external_ids", "nat_addresses", "ha_chassis_group", "gateway_chassis", "requested_chassis", "mirror_rules",
})


class _Unhandled(Exception):
    pass
