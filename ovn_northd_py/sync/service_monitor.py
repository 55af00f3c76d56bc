"""SB Service_Monitor: one row per health-checked load-balancer backend (see :mod:`..flows.lb_health`).

Observed on the reference (23.03): a row per ``(logical_port, ip, port, protocol)`` a checked VIP's
mapped backend names, for load balancers attached anywhere or nowhere, when ``logical_port`` is a
logical switch port; ``src_ip``, ``src_mac`` (NB_Global ``svc_monitor_mac``) and ``options`` (the
health check's, verbatim) are kept equal to the NB; ``external_ids`` is never written; ``status``
belongs to ovn-controller, except that an ``online`` row whose port's Port_Binding is not ``up``
is set ``offline``.  The table is northd's: a row no health check asks for is deleted, whoever
wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from ..flows.lb_health import MonitorKey, desired_monitors, lb_monitored, monitor_key, pb_up_reader
from ..flows.lsp_addrs import lsp_health_checks
from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Northd
from ..ovsdb.columns import opt
from .indexes import PB_BY_NAME, SM_BY_KEY
from .rows import SyncStats, sync_one_row, sync_table

TABLE = "Service_Monitor"


def wanted_monitors(
    nb: Any, nd: Northd, svc_monitor_mac: str, profile: FlowProfile = DEFAULT_PROFILE, mac_dst: str = ""
) -> tuple[dict[MonitorKey, dict[str, Any]], set[str], set[str]]:
    """Every Service_Monitor row the NB asks for, by key; every port name a health check maps
    (known or not: a port appearing or going away changes the rows); the load balancers with
    health checks (uuids).  26.03 also: switch ports' health checks (:func:`lsp_monitors`) and
    network functions' (:func:`nf_monitors`, ``mac_dst``: the probes' destination MAC)."""
    def is_switch_port(name: str) -> bool:
        p = nd.ports.get(name)
        return p is not None and p.kind == "lsp" and p.enabled  # a disabled port is not monitored

    lbs = [lb for lb in nb.rows("Load_Balancer").values() if lb.health_check]
    mapped = {m.key[0] for lb in lbs for m in lb_monitored(lb)}
    typed = profile.has("service_monitor_type")
    want = desired_monitors(lbs, is_switch_port, svc_monitor_mac, typed)
    if profile.has("lsp_health_checks"):
        for k, row in lsp_monitors(nd, svc_monitor_mac).items():
            want.setdefault(k, row)
            mapped.add(k[0])
    if profile.has("network_function"):
        for k, row in nf_monitors(nb, nd, svc_monitor_mac, mac_dst).items():
            want.setdefault(k, row)
            mapped.update((k[0], row["logical_input_port"]))
    return want, mapped, {str(lb.uuid) for lb in lbs}


def lsp_monitors(nd: Northd, svc_monitor_mac: str) -> dict[MonitorKey, dict[str, Any]]:
    """Behaviour ``lsp_health_checks`` (26.03): a row of type ``logical-switch-port`` per health
    check of an enabled switch port (``Logical_Switch_Port.health_checks``): its address, port,
    protocol, source IP and options as NB has them, ``src_mac`` the svc_monitor_mac (observed on
    sid's reference)."""
    out: dict[MonitorKey, dict[str, Any]] = {}
    for p in nd.ports.values():
        if p.kind != "lsp" or not p.enabled:
            continue
        for hc in lsp_health_checks(p):  # (those of the port's own addresses)
            key: MonitorKey = (p.name, str(hc.address), int(hc.port), str(hc.protocol))
            out[key] = {"logical_port": p.name, "ip": str(hc.address), "port": int(hc.port),
                        "protocol": str(hc.protocol), "src_ip": str(hc.src_ip), "src_mac": svc_monitor_mac,
                        "options": dict(hc.options), "type": ["logical-switch-port"]}
    return out


def nf_monitor_key(nf: Any, nb: Any) -> MonitorKey | None:
    """The Service_Monitor key of a network function with a health check (None: no row)."""
    ip_dst = _nb_option(nb, "svc_monitor_ip_dst")
    out = opt(nf.outport)
    if opt(nf.health_check) is None or out is None or not ip_dst or not _nb_option(nb, "svc_monitor_ip"):
        return None
    return (str(out.name), ip_dst, 0, "icmp")


def nf_monitors(nb: Any, nd: Northd, svc_monitor_mac: str, mac_dst: str) -> dict[MonitorKey, dict[str, Any]]:
    """Behaviour ``network_function`` (26.03): a row of type ``network-function`` per network
    function with a ``health_check`` whose ports exist: an ICMP probe from NB_Global
    ``svc_monitor_ip`` to ``svc_monitor_ip_dst`` (MAC ``svc_monitor_mac_dst``) sent into its inport
    (``logical_input_port``) and expected on its outport (``logical_port``), the health check's
    options (observed on sid's reference)."""
    out: dict[MonitorKey, dict[str, Any]] = {}
    src_ip = _nb_option(nb, "svc_monitor_ip")
    for nf in nb.rows("Network_Function").values():
        key = nf_monitor_key(nf, nb)
        inport = opt(nf.inport)
        if key is None or inport is None or key[0] not in nd.ports or str(inport.name) not in nd.ports:
            continue
        out[key] = {"logical_port": key[0], "ip": key[1], "port": 0, "protocol": "icmp", "src_ip": src_ip,
                    "src_mac": svc_monitor_mac, "mac": mac_dst, "logical_input_port": str(inport.name),
                    "options": dict(opt(nf.health_check).options), "type": ["network-function"]}
    return out


def _nb_option(nb: Any, key: str) -> str:
    g = next(iter(nb.rows("NB_Global").values()), None)
    return str(g.options.get(key, "")) if g is not None else ""


def reset_status(row: Any, port_up: Callable[[str], bool], stats: SyncStats) -> None:
    """``online`` on a port that is not up becomes ``offline`` (as the reference does)."""
    if getattr(row, "status", None) == ["online"] and not port_up(row.logical_port):  # (new rows have none)
        row.status = ["offline"]
        stats.bump(stats.updated, TABLE)


def sync_service_monitors(
    txn: Any, sb: Any, want: dict[MonitorKey, dict[str, Any]], port_up: Callable[[str], bool], stats: SyncStats
) -> None:
    """Full sync of the table."""
    rows = sync_table(txn, TABLE, sb.rows(TABLE), monitor_key, want, stats)
    for key, row in rows.items():
        if key in want:
            reset_status(row, port_up, stats)


def sync_monitor_rows(
    txn: Any,
    sb: Any,
    keys: Collection[MonitorKey],
    want: dict[MonitorKey, dict[str, Any]],
    port_up: Callable[[str], bool],
    stats: SyncStats,
    index: Any,
) -> None:
    """Sync only the rows of ``keys`` (through ``index``, a RowIndex by :func:`monitor_key`)."""
    for key in keys:
        row = index.get(sb, key)
        r = sync_one_row(txn, TABLE, row, want.get(key), stats)
        if r is not None:
            reset_status(r, port_up, stats)


def reset_port_statuses(sb: Any, ports: Collection[str], port_up: Callable[[str], bool], stats: SyncStats) -> None:
    """After ``Port_Binding.up`` changes of ``ports``: their ``online`` rows on a port now down."""
    for row in sb.rows(TABLE).values():
        if row.logical_port in ports:
            reset_status(row, port_up, stats)


KEY_COLUMNS = frozenset({"logical_port", "ip", "port", "protocol"})


class MonitorSync:
    """The Service_Monitor part of the SB sync node: the full sync and the incremental paths.

    Keeps what the NB asked for at the last sync (``want``), to check SB rows that change
    (our own writes echoing back, ovn-controller's ``status``, anyone's edits) one by one."""

    def __init__(self, sb_in: Any) -> None:
        self.index = sb_in.add_index(SM_BY_KEY, TABLE, monitor_key)
        self.sb_in = sb_in
        self.want: dict[MonitorKey, dict[str, Any]] | None = None
        self.mapped: set[str] = set()
        self.checked_lbs: set[str] = set()  # load balancers with health checks at the last full sync
        self.profile: FlowProfile = DEFAULT_PROFILE  # the release served (as of the last full sync)
        self.mac_dst = ""  # svc_monitor_mac_dst (26.03), as of the last full sync that had it

    def _port_up(self, sb: Any) -> Callable[[str], bool]:
        return pb_up_reader(sb, self.sb_in.indexes.get(PB_BY_NAME))

    def full(self, txn: Any, sb: Any, nb: Any, nd: Northd, svc_monitor_mac: str, stats: SyncStats,
             profile: FlowProfile | None = None, mac_dst: str | None = None) -> None:
        if profile is not None:
            self.profile = profile
        if mac_dst is not None:
            self.mac_dst = mac_dst
        self.want, self.mapped, self.checked_lbs = wanted_monitors(nb, nd, svc_monitor_mac, self.profile, self.mac_dst)
        sync_service_monitors(txn, sb, self.want, self._port_up(sb), stats)

    def on_nb(self, ctx: Any, nd: Northd, svc_monitor_mac: str, changes: list[Any]) -> bool:
        """NB changes of the load-balancer feature's tables: a health check, or a load balancer that
        has or had one, re-syncs the (small) table."""
        if self.want is None:
            return False
        lbs = ctx.nb.rows("Load_Balancer")
        for c in changes:
            if c.table == "Load_Balancer_Health_Check" or (c.table == "Load_Balancer" and (
                str(c.uuid) in self.checked_lbs or ((row := lbs.get(c.uuid)) is not None and row.health_check)
            )):
                self.full(ctx.sb_txn, ctx.sb, ctx.nb, nd, svc_monitor_mac, ctx.stats)
                break
        return True

    def on_ports(self, ctx: Any, nd: Northd, svc_monitor_mac: str, names: Collection[str]) -> bool:
        """Ports that appeared, changed or went away (a mapped one adds or removes rows)."""
        if self.want is None:
            return False
        has_checks = self.profile.has("lsp_health_checks") and any(
            (p := nd.ports.get(n)) is not None and getattr(p.nb, "health_checks", None) for n in names)
        if not self.mapped.isdisjoint(names) or has_checks:
            self.full(ctx.sb_txn, ctx.sb, ctx.nb, nd, svc_monitor_mac, ctx.stats)
        return True

    def on_sb(self, ctx: Any, changes: list[Any], up_ports: Collection[str]) -> bool:
        """Service_Monitor rows that changed, and ports whose Port_Binding ``up`` may have."""
        if self.want is None:
            return False
        sb = ctx.sb
        rows = sb.rows(TABLE)
        keys: set[MonitorKey] = set()
        port_up = self._port_up(sb)
        for c in changes:
            if c.table != TABLE:
                continue
            if c.event == "update" and c.columns & KEY_COLUMNS:  # its old key is unknown: check them all
                sync_service_monitors(ctx.sb_txn, sb, self.want, port_up, ctx.stats)
                keys.clear()
                break
            row = rows.get(c.uuid)
            key = monitor_key(row) if row is not None else self.index.key_of_uuid(c.uuid)
            if key is None:
                return False
            keys.add(key)
        if keys:
            sync_monitor_rows(ctx.sb_txn, sb, keys, self.want, port_up, ctx.stats, self.index)
        ports = {p for p in up_ports if p in self.mapped}
        if ports:
            reset_port_statuses(sb, ports, port_up, ctx.stats)
        return True


def sync_lsp_health_status(nb: Any, sb: Any) -> None:
    """Behaviour ``lsp_health_checks`` (26.03): NB ``Logical_Switch_Port_Health_Check.status`` is the
    ``status`` of its Service_Monitor row (none: empty).  A full pass over the switch ports when NB has
    health checks (few rows); nothing to do without any (each incremental run comes here)."""
    if not nb.rows("Logical_Switch_Port_Health_Check"):
        return
    status: dict[MonitorKey, list[str]] = {}
    for row in sb.rows(TABLE).values():
        if getattr(row, "_data", True) is not None and list(getattr(row, "type", ())) == ["logical-switch-port"]:
            status[monitor_key(row)] = list(row.status)
    for lsp in nb.rows("Logical_Switch_Port").values():
        for hc in lsp.health_checks:
            want = status.get((str(lsp.name), str(hc.address), int(hc.port), str(hc.protocol)), [])
            if list(hc.status) != want:
                hc.status = want
