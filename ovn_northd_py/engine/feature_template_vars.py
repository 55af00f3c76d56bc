"""Chassis template variables: NB ``Chassis_Template_Var`` -> SB ``Chassis_Template_Var``.

The SB rows are plain copies: an NB change syncs the SB rows of the changed rows' old and
new ``chassis`` (old keys from a uuid -> chassis map kept here), an SB change repairs the
changed rows; neither recomputes anything.  The variables also feed template load
balancers' flows, which name them (``^var``) without reading their values: no flow depends
on this table.
"""

from __future__ import annotations

from typing import Any

from ..ovsdb.connection import RowChange
from ..sync.indexes import CTV_BY_CHASSIS as IDX
from ..sync.template_vars import NB_TABLE, TABLE, ctv_key, sync_sb_template_vars, sync_sb_template_vars_of
from .features import Feature, FeatureCtx, no_flows, register

_KEYS: dict[Any, str] = {}  # NB row uuid -> its chassis at the last sync


def _sync(h: FeatureCtx) -> None:
    sync_sb_template_vars(h.sb_txn, h.nb, h.sb, h.stats)
    _KEYS.clear()
    _KEYS.update((u, ctv_key(r)) for u, r in h.nb.rows(NB_TABLE).items())


def on_nb_sb(changes: list[RowChange], h: FeatureCtx) -> bool:
    rows = h.nb.rows(NB_TABLE)
    keys: set[str] = set()
    for c in changes:
        old = _KEYS.pop(c.uuid, None)
        if old is not None:
            keys.add(old)
        row = rows.get(c.uuid)
        if row is not None and c.event != "delete":
            _KEYS[c.uuid] = k = ctv_key(row)
            keys.add(k)
    sync_sb_template_vars_of(h.sb_txn, h.nb, h.sb, keys, h.stats)
    return True


def on_sb(changes: list[RowChange], h: FeatureCtx) -> bool:
    rows, index = h.sb.rows(TABLE), h.sb_indexes[IDX]
    keys: set[str] = set()
    for c in changes:
        row = rows.get(c.uuid)
        k = ctv_key(row) if row is not None else index.key_of_uuid(c.uuid)
        if not isinstance(k, str):
            return False
        keys.add(k)
    sync_sb_template_vars_of(h.sb_txn, h.nb, h.sb, keys, h.stats)
    return True



TEMPLATE_VARS = register(
    Feature(
        "chassis_template_var",
        nb_tables=frozenset({NB_TABLE}),
        on_nb_flows=no_flows,  # (ovn-controller reads the SB rows; no logical flow in 23.03)
        on_nb_sb=on_nb_sb,
        sync_sb=_sync,
        sb_tables=frozenset({TABLE}),
        on_sb=on_sb,
        sb_indexes={IDX: (TABLE, ctv_key)},
    )
)

__all__ = ["TEMPLATE_VARS", "on_nb_sb", "on_sb"]
