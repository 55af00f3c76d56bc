"""Writes the SB tables northd owns (except logical flows) into the SB transaction.

Incremental paths:
* from ``northd``: only the Port_Binding rows of the ports that changed and the
  Multicast_Group rows of the switches that changed are compared and written; a datapath
  created in NB gets its Datapath_Binding (and a switch its IP_Multicast) row inserted, and the
  features without an incremental hook of their own (``on_northd_sb``) a full sync of theirs;
* from ``sb``: rows of ours that someone changed (or our own writes echoed back)
  are compared one by one with what we want and repaired if needed.
* from ``nb`` and ``sb``: the features' SB hooks (``Feature.on_nb_sb``, ``on_sb``), and
  ``on_northd_sb`` after an incremental northd run.
Everything else falls back to a full diff of every table (``recompute``), the features' tables
by their ``sync_sb``.  This node knows no feature: it calls the hooks of the graph's FeatureSet.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

from ...lflow.profile import DEFAULT_PROFILE, FlowProfile
from ...ovsdb.connection import DbConnection, RowChange
from ...sync.datapaths import (
    desired_datapath,
    desired_ip_multicast,
    dp_nb_key,
    ip_multicast_key,
    prune_datapaths,
    sync_datapaths,
    sync_ip_multicast,
)
from ...sync.dhcp_codes import sync_dhcp_option_codes
from ...sync.globals import nb_global_row, sync_sb_global
from ...sync.indexes import DP_BY_NB_KEY, MC_BY_KEY, PB_BY_NAME
from ...sync.mcast import MC_NAMES, desired_groups_of, sync_multicast_groups
from ...sync.ports import (
    PB_ON_INSERT,
    chassis_by_name,
    desired_pb,
    port_mirror_names,
    sb_mirror_rows,
    sync_ha_groups,
    sync_port_bindings,
    sync_ref_chassis,
    unbind_from_remote,
)
from ...sync.rbac import sync_rbac
from ...sync.rows import SyncStats, sync_one_row
from ..engine import UNCHANGED, UNHANDLED, EngineCtx, HandlerResult, Node
from ..features import FeatureSet, SbFeatureCtx
from .inputs import DbInput, RowIndex, pb_name
from .northd import NorthdNode

# SB changes we can check row by row; a change anywhere else (of a table we own) recomputes.
_SB_ROW_CHECKED = frozenset({"Port_Binding", "Multicast_Group", "Datapath_Binding", "IP_Multicast"})
# SB tables we do not own or whose changes need nothing from this node (MAC_Binding: read by
# aging in the daemon, sync/aging.py).
_SB_IGNORED = frozenset({"Chassis", "Encap", "Chassis_Private", "MAC_Binding"})


def _mc_key(row: Any) -> Hashable | None:
    k = dp_nb_key(row.datapath)
    name: str = row.name
    return (k, name) if k else None


class _DpRows:
    """A read-only ``{NB datapath key: SB Datapath_Binding row}`` view over the SB row index."""

    __slots__ = ("index", "new", "sb")

    def __init__(self, index: RowIndex, sb: DbConnection, new: dict[str, Any] | None = None) -> None:
        self.index, self.sb = index, sb
        self.new = new or {}  # rows inserted in this run's transaction (not in the index yet)

    def get(self, key: Any, default: Any = None) -> Any:
        row = self.new.get(key)
        if row is not None:
            return row
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

    def __init__(self, northd: NorthdNode, sb_in: DbInput, nb_in: DbInput, features: FeatureSet) -> None:
        super().__init__()
        self.northd = northd
        self.sb_in = sb_in
        self.nb_in = nb_in
        self.features = features
        self.pb_index = sb_in.add_index(PB_BY_NAME, "Port_Binding", pb_name)
        self.dp_index = sb_in.add_index(DP_BY_NB_KEY, "Datapath_Binding", dp_nb_key)
        self.mc_index = sb_in.add_index(MC_BY_KEY, "Multicast_Group", _mc_key)
        for name, table, key_of in features.sb_index_specs():
            sb_in.add_index(name, table, key_of)

    # ---- incremental ----
    def _dp_rows(self, sb: DbConnection, new: dict[str, Any] | None = None) -> Any:  # (a read-only dict stand-in)
        """NB datapath key -> SB Datapath_Binding row, looked up through the index (no table scan:
        this runs on every incremental change); ``new``: rows inserted in this run."""
        return _DpRows(self.dp_index, sb, new)

    def _check_new_datapaths(self, ctx: EngineCtx, keys: set[str]) -> None:
        """Raise _Unhandled (before anything is written) when a created datapath's tunnel key is
        held by another SB row (a stale or foreign one: the full sync deletes those first)."""
        nd = self.northd.data
        held = {row.tunnel_key: row for row in ctx.sb.rows("Datapath_Binding").values()}
        for key in keys:
            dp = nd.datapaths.get(key)
            other = held.get(dp.tunnel_key) if dp is not None else None
            if other is not None and dp_nb_key(other) != key:
                raise _Unhandled

    def _sync_new_datapaths(self, ctx: EngineCtx, keys: set[str]) -> dict[str, Any]:
        """The Datapath_Binding rows of the datapaths created in NB (and their switches'
        IP_Multicast rows); returns NB key -> row."""
        sb, nd = ctx.sb, self.northd.data
        out: dict[str, Any] = {}
        # One pass over IP_Multicast per run, not one per new switch: a batch of thousands of
        # switches (OVN's "check VXLAN mode disabling" adds 4,097 in batches of 100) would
        # otherwise cost rows x new switches.
        mcast: dict[Any, Any] | None = None
        for key in sorted(keys):
            dp = nd.datapaths.get(key)
            if dp is None:
                continue  # (left out: no tunnel key left)
            row = sync_one_row(ctx.sb_txn, "Datapath_Binding", self.dp_index.get(sb, key),
                               desired_datapath(dp, ctx.profile), ctx.stats)
            out[key] = row
            if dp.is_switch:
                if mcast is None:
                    mcast = {ip_multicast_key(r): r for r in sb.rows("IP_Multicast").values()}
                sync_one_row(ctx.sb_txn, "IP_Multicast", mcast.get(key), desired_ip_multicast(dp, row), ctx.stats)
        return out

    def _delete_datapaths(self, ctx: EngineCtx, keys: set[str]) -> None:
        """The Datapath_Binding (and IP_Multicast) rows of the datapaths deleted in NB; their ports'
        and groups' rows go in the same transaction (the caller), others' rows that name them too
        (MAC_Binding, FDB, IGMP_Group: the daemon's ``cleanup_ops``), and so do their flows (a
        deleted Datapath_Binding makes the daemon plan every flow)."""
        sb = ctx.sb
        for row in list(sb.rows("IP_Multicast").values()):
            if ip_multicast_key(row) in keys:
                sync_one_row(ctx.sb_txn, "IP_Multicast", row, None, ctx.stats)
        for key in sorted(keys):
            sync_one_row(ctx.sb_txn, "Datapath_Binding", self.dp_index.get(sb, key), None, ctx.stats)

    def _sync_ports(self, ctx: EngineCtx, names: set[str], new_dps: dict[str, Any] | None = None) -> dict[str, Any]:
        sb, nd = ctx.sb, self.northd.data
        dps = self._dp_rows(sb, new_dps)
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
            want = desired_pb(p, dps, {}, chassis, mirrors, ctx.profile) if p is not None else None
            unbind_from_remote(row, want, ctx.profile, p)
            r = sync_one_row(ctx.sb_txn, "Port_Binding", row, want, ctx.stats, PB_ON_INSERT)
            if r is not None:
                out[name] = r
        return out

    def _sync_groups(self, ctx: EngineCtx, dp_keys: set[str], new_pbs: dict[str, Any],
                     new_dps: dict[str, Any] | None = None) -> None:
        sb, nd = ctx.sb, self.northd.data
        dps = self._dp_rows(sb, new_dps)
        for key in dp_keys:
            dp = nd.datapaths.get(key)
            want = desired_groups_of(dp, ctx.profile) if dp is not None else {}
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

    def on_northd(self, ctx: EngineCtx) -> HandlerResult:
        t = self.northd.tracked
        if t is None:
            return UNHANDLED
        hctx = self._feature_ctx(ctx)
        hctx.tracked = t
        try:
            new_dps: dict[str, Any] = {}
            dps_came_or_went = bool(t.dps_added or t.dps_deleted)
            if t.dps_added:
                self._check_new_datapaths(ctx, t.dps_added)
                new_dps = self._sync_new_datapaths(ctx, t.dps_added)
            if dps_came_or_went:
                for f in self.features:  # rows the port bindings name (e.g. mirrors)
                    if f.sync_sb is not None and f.on_northd_sb is None and f.sync_sb_first:
                        f.sync_sb(hctx)
            new_pbs = self._sync_ports(ctx, t.ports_changed | set(t.ports_deleted), new_dps)
            self._sync_groups(ctx, t.dps_changed | set(t.dps_deleted), new_pbs, new_dps)
        except _Unhandled:
            return UNHANDLED  # what was written is redone by the recompute's full diff of every table
        for f in self.features:
            if f.on_northd_sb is not None and not f.on_northd_sb([], hctx):
                return UNHANDLED
            if dps_came_or_went and f.sync_sb is not None and f.on_northd_sb is None and not f.sync_sb_first:
                f.sync_sb(hctx)  # a feature with no incremental hook: its full sync, as a recompute does
        if t.dps_deleted:
            self._delete_datapaths(ctx, set(t.dps_deleted))
        if t.routers_changed or t.ports_deleted:  # routers (dis)connected: the router groups
            sync_ref_chassis(ctx.sb, self.northd.data, profile=ctx.profile)
        return UNCHANGED  # (this node keeps no data: it writes the run's SB transaction)

    def _own_row_changes(self, ctx: EngineCtx, changes: list[RowChange]) -> list[tuple[str, Any, Any]] | None:
        """Datapath_Binding / IP_Multicast changes (mostly our own inserts echoing back): (table,
        datapath, row) of each row to compare with what we want; None when one needs the full sync
        (a row of a datapath we have deleted by someone else, a row naming no datapath of ours, a
        duplicate)."""
        sb, nd = ctx.sb, self.northd.data
        out: list[tuple[str, Any, Any]] = []
        ipm_keys: Counter[Any] | None = None  # IP_Multicast rows per datapath key, counted once a run
        for c in changes:
            if c.table == "Datapath_Binding":
                row = sb.rows("Datapath_Binding").get(c.uuid)
                if row is None:  # deleted: fine when we deleted it (its datapath is gone from NB)
                    key = self.dp_index.key_of_uuid(c.uuid)
                    if not isinstance(key, str) or key in nd.datapaths:
                        return None
                    continue
                key = dp_nb_key(row)
                dp = nd.datapaths.get(key) if key else None
                if dp is None or self.dp_index.get(sb, key) is not row:
                    return None
                out.append((c.table, dp, row))
            elif c.table == "IP_Multicast":
                if ipm_keys is None:
                    ipm_keys = Counter(ip_multicast_key(r) for r in sb.rows("IP_Multicast").values())
                row = sb.rows("IP_Multicast").get(c.uuid)
                if row is None:
                    continue  # (every switch of ours still having its row is checked below)
                key = ip_multicast_key(row)
                dp = nd.datapaths.get(str(key)) if key else None
                if dp is None or not dp.is_switch or ipm_keys[key] != 1:
                    return None
                out.append((c.table, dp, row))
        if ipm_keys is not None and any(ipm_keys[dp.key] == 0 for dp in nd.switches()):
            return None  # one of ours deleted by someone else
        return out

    def _feature_ctx(self, ctx: EngineCtx) -> SbFeatureCtx:
        return feature_ctx(ctx.nb, ctx.sb, self.northd, ctx.sb_txn, ctx.stats, ctx.warn.warn, self.sb_in, ctx.profile)

    def on_sb(self, ctx: EngineCtx) -> HandlerResult:
        if self.sb_in.resynced:
            return UNHANDLED
        # The echo of rows we inserted, holding what we wrote: nothing to compare (a cold sync's
        # first write echoes every row back).
        changes = [c for c in self.sb_in.changes if not c.own]
        if not changes:
            return UNCHANGED
        tables = {c.table for c in changes}
        # SB tables of features (their on_sb), owned or watched
        if tables - _SB_ROW_CHECKED - _SB_IGNORED - {"SB_Global"} - self.features.sb_read_tables():
            return UNHANDLED
        by_feature = self.features.split_sb_changes(changes)
        for c in changes:
            if c.table == "SB_Global" and (c.event != "update" or not c.columns <= {"nb_cfg"}):
                return UNHANDLED
        names: set[str] = set()
        dps: set[str] = set()
        ref_chassis = False
        rows_pb = ctx.sb.rows("Port_Binding")
        for c in changes:
            if c.table == "Port_Binding":
                row = rows_pb.get(c.uuid)
                name = row.logical_port if row is not None else self.pb_index.key_of_uuid(c.uuid)
                if not isinstance(name, str):
                    return UNHANDLED
                if c.event != "update" or c.columns & {"chassis", "additional_chassis"}:
                    ref_chassis = True  # bound elsewhere: the HA groups' ref_chassis
                # Columns ovn-controller owns change all the time: nothing for us to check.
                if c.event == "update" and not c.columns & _PB_OWNED:
                    continue
                names.add(name)
            elif c.table == "Multicast_Group":
                row = ctx.sb.rows("Multicast_Group").get(c.uuid)
                key = _mc_key(row) if row is not None else self.mc_index.key_of_uuid(c.uuid)
                if not isinstance(key, tuple):
                    return UNHANDLED
                dps.add(key[0])
        own = self._own_row_changes(ctx, changes)
        if own is None:
            return UNHANDLED
        try:
            new_pbs = self._sync_ports(ctx, names) if names else {}
            if dps:
                self._sync_groups(ctx, dps, new_pbs)
        except _Unhandled:
            return UNHANDLED
        for table, dp, row in own:
            want = desired_datapath(dp, ctx.profile) if table == "Datapath_Binding" else desired_ip_multicast(
                dp, self.dp_index.get(ctx.sb, dp.key))
            sync_one_row(ctx.sb_txn, table, row, want, ctx.stats)
        if ref_chassis:
            sync_ref_chassis(ctx.sb, self.northd.data, profile=ctx.profile)
        hctx = self._feature_ctx(ctx)
        for f in self.features:
            f_changes = by_feature.get(f.name)
            if f_changes is None:
                continue
            if f.on_sb is None:
                if f.sb_tables & {c.table for c in f_changes}:
                    return UNHANDLED  # a table of the feature's, with no hook: a full sync
                continue
            if not f.on_sb(f_changes, hctx):
                return UNHANDLED
        return UNCHANGED

    def on_nb(self, ctx: EngineCtx) -> HandlerResult:
        """NB tables of the features: their SB hooks (Port_Group, Address_Set, ...).  Other NB
        changes reach us through the northd node."""
        if self.nb_in.resynced:
            return UNHANDLED
        by_feature = self.features.split_changes(self.nb_in.changes)
        if not by_feature:
            return UNCHANGED
        self.features.add_followers(by_feature)  # e.g. routes decide which BFD sessions are used
        hctx = self._feature_ctx(ctx)
        for f in self.features:
            changes = by_feature.get(f.name)
            if changes is None or f.sync_sb is None:
                continue  # no change of its, or the feature writes no SB table
            if f.on_nb_sb is None or not f.on_nb_sb(changes, hctx):
                return UNHANDLED
        return UNCHANGED

    # ---- full ----
    def recompute(self, ctx: EngineCtx) -> None:
        txn, sb, nb, stats = ctx.sb_txn, ctx.sb, ctx.nb, ctx.stats
        nd = self.northd.data
        gopts = self.northd.gopts
        assert gopts is not None
        hctx = self._feature_ctx(ctx)
        sync_sb_global(txn, sb, nb_global_row(nb), gopts)
        dps = sync_datapaths(txn, sb, nd, stats, ctx.profile)
        groups = sync_ha_groups(txn, sb, nd, stats)
        sync_ref_chassis(sb, nd, groups, ctx.profile)
        for f in self.features:  # rows the port bindings name (e.g. mirrors)
            if f.sync_sb is not None and f.sync_sb_first:
                f.sync_sb(hctx)
        pbs = sync_port_bindings(txn, sb, nd, dps, groups, stats, ctx.profile)
        sync_multicast_groups(txn, sb, nd, dps, pbs, stats, ctx.profile)
        sync_ip_multicast(txn, sb, nd, dps, stats)
        sync_rbac(txn, sb, stats, ctx.profile)
        sync_dhcp_option_codes(txn, sb, stats, ctx.profile)
        for f in self.features:
            if f.sync_sb is not None and not f.sync_sb_first:
                f.sync_sb(hctx)
        prune_datapaths(txn, sb, nd, stats, ctx.profile)


def feature_ctx(nb: DbConnection, sb: DbConnection, northd: NorthdNode, sb_txn: Any, stats: SyncStats,
                warn: Callable[..., None] | None, sb_in: DbInput, profile: FlowProfile = DEFAULT_PROFILE
                ) -> SbFeatureCtx:
    gopts = northd.gopts
    return SbFeatureCtx(nb, sb, northd.data, sb_txn, stats, sb_in.indexes, warn=warn,
                        svc_monitor_mac=gopts.svc_monitor_mac if gopts else "",
                        svc_monitor_macs=gopts.svc_monitor_macs if gopts else None, profile=profile)


# Port_Binding columns northd writes (the others belong to ovn-controller).
_PB_OWNED = frozenset({
    "logical_port", "datapath", "tunnel_key", "type", "options", "mac", "port_security", "parent_port", "tag",
    "external_ids", "nat_addresses", "ha_chassis_group", "gateway_chassis", "requested_chassis", "mirror_rules",
    "mirror_port",
})


class _Unhandled(Exception):
    pass
