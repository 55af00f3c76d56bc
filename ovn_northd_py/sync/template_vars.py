"""SB Chassis_Template_Var: a copy of NB Chassis_Template_Var.

Observed on the reference (23.03): one SB row per NB row, ``chassis`` and ``variables``
copied as they are (an empty map too), NB ``external_ids`` not copied (the SB table has
none).  Both tables are keyed by ``chassis``.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from .rows import ROW_UUID, SyncStats, sync_keyed_rows, sync_table

TABLE = "Chassis_Template_Var"
NB_TABLE = "Chassis_Template_Var"


def ctv_key(row: Any) -> str:
    return str(row.chassis)


def _desired(nb: Any, only: Collection[str] | None = None,
             profile: FlowProfile = DEFAULT_PROFILE) -> dict[Hashable, dict[str, Any]]:
    out: dict[Hashable, dict[str, Any]] = {}
    same_uuid = profile.has("sb_rows_nb_uuid")
    for row in nb.rows(NB_TABLE).values():
        k = ctv_key(row)
        if (only is None or k in only) and k not in out:
            out[k] = {"chassis": k, "variables": dict(row.variables)}
            if same_uuid:  # 25.03: a new SB row gets the NB row's uuid
                out[k][ROW_UUID] = row.uuid
    return out


def sync_sb_template_vars(txn: Any, nb: Any, sb: Any, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Full sync of the SB Chassis_Template_Var table."""
    sync_table(txn, TABLE, sb.rows(TABLE), ctv_key, _desired(nb, None, profile), stats)


def sync_sb_template_vars_of(txn: Any, nb: Any, sb: Any, keys: Collection[str], stats: SyncStats,
                             profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Sync only the SB rows of the chassis ``keys``."""
    keys = set(keys)
    want = _desired(nb, keys, profile)
    sync_keyed_rows(txn, TABLE, sb.rows(TABLE), ctv_key, keys, want, stats)
