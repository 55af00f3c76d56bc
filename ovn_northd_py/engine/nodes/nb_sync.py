"""Writes back into NB: NB_Global options (the cfg counters are the daemon's:
:class:`~ovn_northd_py.sync.globals.CfgReport`), Logical_Switch_Port up/tag/dynamic_addresses, Network_Function_Group network_function_active (26.03), BFD status (a full pass on every run, nothing without BFD rows: :func:`~ovn_northd_py.sync.bfd.sync_nb_bfd_status`)."""

from __future__ import annotations

from ...lflow.profile import DEFAULT_PROFILE, FlowProfile
from ...northd.model import Port
from ...ovsdb.connection import DbConnection, RowChange
from ...sync.bfd import sync_nb_bfd_status
from ...sync.globals import sync_nb_options
from ...sync.indexes import PB_BY_NAME
from ...sync.network_functions import sync_nf_active
from ...sync.service_monitor import sync_lsp_health_status
from ..engine import UNCHANGED, UNHANDLED, EngineCtx, HandlerResult, Node
from .inputs import DbInput, pb_name
from .northd import NorthdNode


def lsp_up(lsp_type: str, pb: object | None, profile: FlowProfile = DEFAULT_PROFILE) -> bool:
    """Logical_Switch_Port.up as the C daemon writes it: always for router ports (25.03's
    ``switch_peer_ports``: and ``switch`` ports); else the port is up when bound
    (Port_Binding.chassis) and, if its chassis reports ``up`` itself
    (``other_config:port-up-notif=true``, every ovn-controller since 21.03), Port_Binding.up."""
    if lsp_type == "router" or (lsp_type == "switch" and profile.has("switch_peer_ports")):
        return True
    chassis = getattr(pb, "chassis", None) if pb is not None else None
    if not chassis:
        return False
    if str(chassis[0].other_config.get("port-up-notif", "false")).lower() == "true":
        return getattr(pb, "up", None) == [True]
    return True  # an older ovn-controller: bound means up


# NB changes that cannot change what :meth:`NbSyncNode._sync_globals` writes: rows of tables none
# of its parts reads (NB_Global, BFD and the routes using it, network functions, port health
# checks), and a new nb_cfg (what sb_cfg will follow comes from SB).  The changes ovn-kubernetes
# makes most (address sets, port groups, ACLs, load balancers) are of this kind.
_INERT_TABLES = frozenset({"Address_Set", "Port_Group", "ACL", "Load_Balancer", "Load_Balancer_Group"})
_INERT_NB_GLOBAL = frozenset({"nb_cfg", "nb_cfg_timestamp"})


def _inert(changes: list[RowChange]) -> bool:
    for c in changes:
        if c.table in _INERT_TABLES:
            continue
        if c.table == "NB_Global" and c.event == "update" and c.columns <= _INERT_NB_GLOBAL:
            continue
        return False
    return True


class NbSyncNode(Node):
    name = "nb_sync"

    def __init__(self, northd: NorthdNode, sb_in: DbInput, nb_in: DbInput) -> None:
        super().__init__()
        self.northd = northd
        self.sb_in = sb_in
        self.nb_in = nb_in
        self.pb_index = sb_in.add_index(PB_BY_NAME, "Port_Binding", pb_name)

    # ---- incremental: only the ports that changed; NB_Global's options are cheap and always synced ----
    def _sync_globals(self, ctx: EngineCtx) -> None:
        gopts = self.northd.gopts
        assert gopts is not None
        sync_nb_options(ctx.nb, gopts)
        sync_nb_bfd_status(ctx.nb, ctx.sb, self.northd.data)  # every incremental handler comes here
        if ctx.profile.has("network_function"):  # (a few rows: a full pass)
            sync_nf_active(ctx.nb, ctx.sb)
        if ctx.profile.has("lsp_health_checks"):
            sync_lsp_health_status(ctx.nb, ctx.sb)

    def _sync_port(self, ctx: EngineCtx, name: str) -> None:
        p = self.northd.data.ports.get(name)
        if p is not None and p.kind in ("lrp", "crp") and ctx.profile.has("lrp_hosting_chassis"):
            self._sync_hosting_chassis(ctx, p)
        if p is None or p.kind != "lsp":
            return
        pb = self.pb_index.get(ctx.sb, name)
        want = lsp_up(p.nb.type, pb, ctx.profile)
        if p.nb.up != [want]:
            p.nb.up = [want]
        if p.tag is not None and p.nb.tag != [p.tag]:
            p.nb.tag = [p.tag]
        self._sync_dynamic_addresses(p)

    def on_northd(self, ctx: EngineCtx) -> HandlerResult:
        t = self.northd.tracked
        if t is None:
            return UNHANDLED
        for name in t.ports_changed:
            self._sync_port(ctx, name)
        self._sync_globals(ctx)
        return UNCHANGED  # (this node keeps no data: it writes the run's NB transaction)

    def on_sb(self, ctx: EngineCtx) -> HandlerResult:
        if self.sb_in.resynced:
            return UNHANDLED
        rows = ctx.sb.rows("Port_Binding")
        chassis_changed = set()
        for c in self.sb_in.changes:
            if c.table == "Port_Binding":
                row = rows.get(c.uuid)
                if row is not None:
                    self._sync_port(ctx, row.logical_port)
            elif c.table == "Chassis":
                chassis_changed.add(c.uuid)
        if chassis_changed:  # other_config:port-up-notif decides what up means for its ports
            for row in rows.values():
                if row.chassis and row.chassis[0].uuid in chassis_changed:
                    self._sync_port(ctx, row.logical_port)
        self._sync_globals(ctx)
        return UNCHANGED

    def on_nb(self, ctx: EngineCtx) -> HandlerResult:
        # NB changes reach us through the northd node; only NB_Global options need a look here.
        if self.nb_in.resynced or not _inert(self.nb_in.changes):
            self._sync_globals(ctx)
        return UNCHANGED

    def recompute(self, ctx: EngineCtx) -> None:
        nb, sb = ctx.nb, ctx.sb
        gopts = self.northd.gopts
        assert gopts is not None
        sync_nb_options(nb, gopts)
        sync_nb_bfd_status(nb, sb, self.northd.data)
        self._sync_lsp_up(nb, sb, ctx.profile)
        self._sync_lsp_tags()
        if ctx.profile.has("lrp_hosting_chassis"):
            for p in self.northd.data.ports.values():
                if p.kind == "lrp":
                    self._sync_hosting_chassis(ctx, p)
        for p in self.northd.data.ports.values():
            if p.kind == "lsp":
                self._sync_dynamic_addresses(p)
        if ctx.profile.has("network_function"):
            sync_nf_active(nb, sb)
        if ctx.profile.has("lsp_health_checks"):
            sync_lsp_health_status(nb, sb)

    def _sync_hosting_chassis(self, ctx: EngineCtx, p: Port) -> None:
        """25.03 (lrp_hosting_chassis, man ovn-nb): a distributed gateway port's NB
        ``status:hosting-chassis`` names the chassis its chassisredirect port is bound to (absent
        when unbound).  ``p``: the router port or its chassisredirect port (same NB row)."""
        lrp = p.nb
        crp = p if p.kind == "crp" else p.crp
        pb = self.pb_index.get(ctx.sb, crp.name) if crp is not None else None
        want = pb.chassis[0].name if pb is not None and pb.chassis else None
        status = dict(getattr(lrp, "status", {}) or {})
        if status.get("hosting-chassis") == want:
            return
        if want is None:
            status.pop("hosting-chassis", None)
        else:
            status["hosting-chassis"] = want
        lrp.status = status

    @staticmethod
    def _sync_dynamic_addresses(p: Port) -> None:
        """IPAM's addresses go to NB Logical_Switch_Port.dynamic_addresses (cleared when it assigned none)."""
        want = [p.dynamic_addresses] if p.dynamic_addresses else []
        if p.nb.dynamic_addresses != want:
            p.nb.dynamic_addresses = want

    def _sync_lsp_tags(self) -> None:
        """Tags northd chose for container ports (tag_request) go back to NB Logical_Switch_Port.tag."""
        for p in self.northd.data.ports.values():
            if p.kind == "lsp" and p.tag is not None and p.nb.tag != [p.tag]:
                p.nb.tag = [p.tag]

    @staticmethod
    def _sync_lsp_up(nb: DbConnection, sb: DbConnection, profile: FlowProfile) -> None:
        # Rows inserted by the SB transaction being built are in the IDL already; skip them.
        pbs = {pb.logical_port: pb for pb in sb.rows("Port_Binding").values() if pb._data is not None}
        for lsp in nb.rows("Logical_Switch_Port").values():
            pb = pbs.get(lsp.name)
            if pb is None:
                continue
            want = lsp_up(lsp.type, pb, profile)
            if lsp.up != [want]:
                lsp.up = [want]
