"""SB Static_MAC_Binding: one row per NB Static_MAC_Binding naming a router port.

Observed on the reference (23.03): ``logical_port``, ``ip``, ``mac`` and
``override_dynamic_mac`` copied as they are (no validation of the address strings),
``datapath`` the port's router; a row naming a switch port, an unknown port or a port
of a router without a datapath (``enabled=false``) has no SB row.  The table is keyed
by (``logical_port``, ``ip``) in both databases.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import ROW_UUID, SyncStats, sync_keyed_rows, sync_table

TABLE = "Static_MAC_Binding"
NB_TABLE = "Static_MAC_Binding"


def smb_key(row: Any) -> tuple[str, str]:
    return (row.logical_port, row.ip)


def _dp_rows(sb: Any) -> dict[str, Any]:
    return {k: r for r in sb.rows("Datapath_Binding").values() if (k := dp_nb_key(r))}


def desired_smb(nb_row: Any, nd: Northd, dps: dict[str, Any],
                profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, Any] | None:
    """The SB row an NB Static_MAC_Binding stands for (None: none); ``sb_rows_nb_uuid`` (25.03,
    observed): a new SB row gets the NB row's uuid."""
    port = nd.ports.get(nb_row.logical_port)
    if port is None or port.kind != "lrp":
        return None
    dp = dps.get(port.dp.key)
    if dp is None:
        return None
    out = {"logical_port": nb_row.logical_port, "ip": nb_row.ip, "mac": nb_row.mac,
           "override_dynamic_mac": bool(nb_row.override_dynamic_mac), "datapath": dp}
    if profile.has("sb_rows_nb_uuid"):
        out[ROW_UUID] = nb_row.uuid
    return out


def sync_sb_static_mac_bindings(txn: Any, nb: Any, sb: Any, nd: Northd, stats: SyncStats,
                                profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Full sync of the SB Static_MAC_Binding table."""
    dps = _dp_rows(sb)
    want: dict[Hashable, dict[str, Any]] = {}
    for row in nb.rows(NB_TABLE).values():
        w = desired_smb(row, nd, dps, profile)
        if w is not None:
            want.setdefault(smb_key(row), w)
    sync_table(txn, TABLE, sb.rows(TABLE), smb_key, want, stats)


def sync_sb_static_mac_bindings_of(txn: Any, nb: Any, sb: Any, nd: Northd, keys: Collection[tuple[str, str]],
                                   stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Sync only the SB rows keyed by ``keys`` ((logical_port, ip) pairs)."""
    keys = set(keys)
    dps = _dp_rows(sb)
    want: dict[tuple[str, str], dict[str, Any]] = {}
    for row in nb.rows(NB_TABLE).values():
        k = smb_key(row)
        if k in keys and k not in want and (w := desired_smb(row, nd, dps, profile)) is not None:
            want[k] = w
    sync_keyed_rows(txn, TABLE, sb.rows(TABLE), smb_key, keys, want, stats)
