"""Chassis template variables: NB ``Chassis_Template_Var`` -> SB ``Chassis_Template_Var``.

The SB rows are plain copies: an NB change syncs the SB rows of the changed rows' old and
new ``chassis`` (old keys from a uuid -> chassis map kept in the graph's :class:`TemplateVars`), an SB change repairs the
changed rows; neither recomputes anything.  The variables also feed template load
balancers' flows, which name them (``^var``) without reading their values: no flow depends
on this table.
"""

from __future__ import annotations

from typing import Any

from ..ovsdb.connection import RowChange
from ..sync.indexes import CTV_BY_CHASSIS as IDX
from ..sync.template_vars import NB_TABLE, TABLE, ctv_key, sync_sb_template_vars, sync_sb_template_vars_of
from .features import SbFeatureCtx


class TemplateVars:
    """The template-variable feature's SB hooks, with the NB uuid -> chassis map of the last sync."""

    def __init__(self) -> None:
        self.keys: dict[Any, str] = {}  # NB row uuid -> its chassis at the last sync

    def sync_sb(self, h: SbFeatureCtx) -> None:
        sync_sb_template_vars(h.sb_txn, h.nb, h.sb, h.stats, h.profile)
        self.keys = {u: ctv_key(r) for u, r in h.nb.rows(NB_TABLE).items()}

    def on_nb_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        rows = h.nb.rows(NB_TABLE)
        keys: set[str] = set()
        for c in changes:
            old = self.keys.pop(c.uuid, None)
            if old is not None:
                keys.add(old)
            row = rows.get(c.uuid)
            if row is not None and c.event != "delete":
                self.keys[c.uuid] = k = ctv_key(row)
                keys.add(k)
        sync_sb_template_vars_of(h.sb_txn, h.nb, h.sb, keys, h.stats, h.profile)
        return True


def on_sb(changes: list[RowChange], h: SbFeatureCtx) -> bool:
    rows, index = h.sb.rows(TABLE), h.sb_indexes[IDX]
    keys: set[str] = set()
    for c in changes:
        row = rows.get(c.uuid)
        k = ctv_key(row) if row is not None else index.key_of_uuid(c.uuid)
        if not isinstance(k, str):
            return False
        keys.add(k)
        if (nb_row := h.nb.rows(NB_TABLE).get(c.uuid)) is not None:  # (sb_rows_nb_uuid: that NB row's)
            keys.add(ctv_key(nb_row))
    sync_sb_template_vars_of(h.sb_txn, h.nb, h.sb, keys, h.stats, h.profile)
    return True
