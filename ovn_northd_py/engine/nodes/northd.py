"""The northd node: datapaths, ports, HA groups, tunnel keys, global options."""

from __future__ import annotations

from ...lflow.profile import FlowProfile
from ...northd.build import KeyState, build_northd, ic_vxlan_mode, vxlan_mode
from ...northd.incremental import Tracked, apply_nb_changes
from ...northd.model import Northd
from ...northd.tnlkeys import dp_key_max
from ...ovsdb.connection import DbConnection
from ...sync.datapaths import dp_nb_key
from ...sync.globals import GlobalOptions, global_options, nb_global_row, sb_global_row
from ..engine import UNCHANGED, UNHANDLED, UPDATED, EngineCtx, HandlerResult, Node
from ..features import FeatureSet
from .inputs import DbInput

# SB tables whose changes alter what the northd node computes.
_SB_TABLES_NEEDING_RECOMPUTE = frozenset({"Chassis", "Encap"})


class NorthdNode(Node):
    name = "northd"

    def __init__(self, nb_in: DbInput, sb_in: DbInput, features: FeatureSet) -> None:
        super().__init__()
        self.nb_in, self.sb_in = nb_in, sb_in
        # NB tables and columns of the features: they feed no part of the model.
        self.flow_only_tables = features.flow_only_tables()
        self.flow_only_columns = {t: features.flow_only_columns(t)
                                  for t in ("Logical_Switch", "Logical_Router", "Logical_Router_Port")}
        self.keys = KeyState()
        self.data = Northd()
        self.gopts: GlobalOptions | None = None
        # Set by an incremental run: exactly what changed.  None after a recompute (everything may have).
        self.tracked: Tracked | None = None

    def on_nb(self, ctx: EngineCtx) -> HandlerResult:
        if self.nb_in.resynced or self.gopts is None:
            return UNHANDLED
        t = apply_nb_changes(self.data, self.keys, ctx.nb, self.nb_in.changes, ctx.warn.warn, sb=ctx.sb,
                             flow_only_tables=self.flow_only_tables, flow_only_columns=self.flow_only_columns,
                             profile=ctx.profile)
        if t is None:
            return UNHANDLED
        if t:
            self.tracked = t
            return UPDATED
        return UNCHANGED

    def on_sb(self, ctx: EngineCtx) -> HandlerResult:
        if self.sb_in.resynced:
            return UNHANDLED
        if self.sb_in.changed_tables() & _SB_TABLES_NEEDING_RECOMPUTE:
            return UNHANDLED
        # Our own writes echo back as Datapath/Port_Binding changes with the keys we chose.  A key
        # that differs from ours was chosen by another northd (we are a hot standby, or took over):
        # SB's keys win (tunnel-key stability), so rebuild the model from them.
        return UNCHANGED if self._sb_keys_agree(ctx.sb) else UNHANDLED

    def _sb_keys_agree(self, sb: DbConnection) -> bool:
        nd = self.data
        dps, pbs = sb.rows("Datapath_Binding"), sb.rows("Port_Binding")
        for c in self.sb_in.changes:
            if c.event == "delete" or (c.event == "update" and "tunnel_key" not in c.columns):
                continue
            if c.table == "Datapath_Binding":
                row = dps.get(c.uuid)
                k = dp_nb_key(row) if row is not None else None
                dp = nd.datapaths.get(k) if k else None
                if dp is not None and row is not None and dp.tunnel_key != row.tunnel_key:
                    return False
            elif c.table == "Port_Binding":
                row = pbs.get(c.uuid)
                p = nd.ports.get(row.logical_port) if row is not None else None
                if (p is not None and row is not None and p.tunnel_key != row.tunnel_key
                        and dp_nb_key(row.datapath) == p.dp.key):
                    return False
        return True

    def clear_tracked(self) -> None:
        self.tracked = None

    def recompute(self, ctx: EngineCtx) -> None:
        self.tracked = None
        nb, sb = ctx.nb, ctx.sb
        # Global options first: IPAM needs the mac_prefix.
        self.gopts = self._global_options(nb, sb, ctx.profile)
        self.data = build_northd(nb, sb, self.keys, ctx.warn, mac_prefix=self.gopts.mac_prefix, profile=ctx.profile)

    def _global_options(self, nb: DbConnection, sb: DbConnection, profile: FlowProfile) -> GlobalOptions:
        """NB_Global's values win; otherwise keep what we generated before (or SB has), else random."""
        nbg = nb_global_row(nb)
        vx = vxlan_mode(sb, nb if profile.has("nb_vxlan_mode_option") else None)
        fresh = global_options(nbg, vx, profile, dp_key_max(vx, ic_vxlan_mode(nb, profile)))
        have = nbg.options if nbg is not None else {}
        prev = self.gopts
        sbg = sb_global_row(sb)
        sbo = sbg.options if sbg is not None else {}
        if "mac_prefix" not in have:
            fresh.mac_prefix = prev.mac_prefix if prev else sbo.get("mac_prefix", fresh.mac_prefix)
        if "svc_monitor_mac" not in have:
            fresh.svc_monitor_mac = prev.svc_monitor_mac if prev else sbo.get("svc_monitor_mac", fresh.svc_monitor_mac)
        if fresh.svc_monitor_mac_dst and "svc_monitor_mac_dst" not in have:
            fresh.svc_monitor_mac_dst = (prev.svc_monitor_mac_dst if prev and prev.svc_monitor_mac_dst
                                         else sbo.get("svc_monitor_mac_dst", fresh.svc_monitor_mac_dst))
        return fresh
