"""Static MAC bindings: NB ``Static_MAC_Binding`` -> SB ``Static_MAC_Binding`` (no flows).

The rows change no datapath or port, so they never recompute the northd or lflow node:

* NB (:meth:`StaticMacBindings.on_nb_sb`): the SB rows keyed by the changed rows' old and new
  (``logical_port``, ``ip``) are synced (old keys come from a uuid -> key map kept in the graph's
  :class:`StaticMacBindings`,
  deleted rows having no values left);
* northd (:meth:`StaticMacBindings.on_northd_sb`): a router port added or deleted incrementally re-syncs the
  rows naming it (a binding on a switch or unknown port has no SB row);
* SB (:func:`on_sb`): a changed SB row (our own write echoing back, or someone else's) is
  compared with what we want and repaired.
"""

from __future__ import annotations

from typing import Any

from ..ovsdb.connection import RowChange
from ..sync.indexes import SMB_BY_KEY as IDX
from ..sync.static_mac_bindings import (
    NB_TABLE,
    TABLE,
    smb_key,
    sync_sb_static_mac_bindings,
    sync_sb_static_mac_bindings_of,
)
from .features import SbFeatureCtx


class StaticMacBindings:
    """The static MAC binding feature's SB hooks, with the NB uuid -> key map of the last sync."""

    def __init__(self) -> None:
        self.keys: dict[Any, tuple[str, str]] = {}  # NB row uuid -> its key at the last sync

    def sync_sb(self, h: SbFeatureCtx) -> None:
        sync_sb_static_mac_bindings(h.sb_txn, h.nb, h.sb, h.nd, h.stats, h.profile)
        self.keys = {u: smb_key(row) for u, row in h.nb.rows(NB_TABLE).items()}

    def on_nb_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        rows = h.nb.rows(NB_TABLE)
        keys: set[tuple[str, str]] = set()
        for c in changes:
            old = self.keys.pop(c.uuid, None)
            if old is not None:
                keys.add(old)
            row = rows.get(c.uuid)
            if row is not None and c.event != "delete":
                self.keys[c.uuid] = k = smb_key(row)
                keys.add(k)
        sync_sb_static_mac_bindings_of(h.sb_txn, h.nb, h.sb, h.nd, keys, h.stats, h.profile)
        return True

    def on_northd_sb(self, _changes: list[RowChange], h: SbFeatureCtx) -> bool:
        t = h.tracked
        if t is None or not self.keys:
            return True
        names = t.ports_changed | set(t.ports_deleted)
        keys = {k for k in self.keys.values() if k[0] in names}
        if keys:
            sync_sb_static_mac_bindings_of(h.sb_txn, h.nb, h.sb, h.nd, keys, h.stats, h.profile)
        return True


def on_sb(changes: list[RowChange], h: SbFeatureCtx) -> bool:
    rows, index = h.sb.rows(TABLE), h.sb_indexes[IDX]
    keys: set[tuple[str, str]] = set()
    for c in changes:
        row = rows.get(c.uuid)
        k = smb_key(row) if row is not None else index.key_of_uuid(c.uuid)
        if not isinstance(k, tuple):
            return False
        keys.add(k)
        if (nb_row := h.nb.rows(NB_TABLE).get(c.uuid)) is not None:  # (sb_rows_nb_uuid: that NB row's)
            keys.add(smb_key(nb_row))
    sync_sb_static_mac_bindings_of(h.sb_txn, h.nb, h.sb, h.nd, keys, h.stats, h.profile)
    return True
