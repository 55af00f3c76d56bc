"""Static MAC bindings: NB ``Static_MAC_Binding`` -> SB ``Static_MAC_Binding`` (no flows).

The rows change no datapath or port, so they never recompute the northd or lflow node:

* NB (:func:`on_nb_sb`): the SB rows keyed by the changed rows' old and new
  (``logical_port``, ``ip``) are synced (old keys come from a uuid -> key map kept here,
  deleted rows having no values left);
* northd (:func:`on_northd_sb`): a router port added or deleted incrementally re-syncs the
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
from .features import Feature, FeatureCtx, no_flows, register

_KEYS: dict[Any, tuple[str, str]] = {}  # NB row uuid -> its key at the last sync


def _remember(nb: Any) -> None:
    _KEYS.clear()
    for u, row in nb.rows(NB_TABLE).items():
        _KEYS[u] = smb_key(row)


def _sync(h: FeatureCtx) -> None:
    sync_sb_static_mac_bindings(h.sb_txn, h.nb, h.sb, h.nd, h.stats)
    _remember(h.nb)


def on_nb_sb(changes: list[RowChange], h: FeatureCtx) -> bool:
    rows = h.nb.rows(NB_TABLE)
    keys: set[tuple[str, str]] = set()
    for c in changes:
        old = _KEYS.pop(c.uuid, None)
        if old is not None:
            keys.add(old)
        row = rows.get(c.uuid)
        if row is not None and c.event != "delete":
            _KEYS[c.uuid] = k = smb_key(row)
            keys.add(k)
    sync_sb_static_mac_bindings_of(h.sb_txn, h.nb, h.sb, h.nd, keys, h.stats)
    return True


def on_northd_sb(_changes: list[RowChange], h: FeatureCtx) -> bool:
    t = h.tracked
    if t is None or not _KEYS:
        return True
    names = t.ports_changed | set(t.ports_deleted)
    keys = {k for k in _KEYS.values() if k[0] in names}
    if keys:
        sync_sb_static_mac_bindings_of(h.sb_txn, h.nb, h.sb, h.nd, keys, h.stats)
    return True


def on_sb(changes: list[RowChange], h: FeatureCtx) -> bool:
    rows, index = h.sb.rows(TABLE), h.sb_indexes[IDX]
    keys: set[tuple[str, str]] = set()
    for c in changes:
        row = rows.get(c.uuid)
        k = smb_key(row) if row is not None else index.key_of_uuid(c.uuid)
        if not isinstance(k, tuple):
            return False
        keys.add(k)
    sync_sb_static_mac_bindings_of(h.sb_txn, h.nb, h.sb, h.nd, keys, h.stats)
    return True



STATIC_MAC = register(
    Feature(
        "static_mac_binding",
        nb_tables=frozenset({NB_TABLE}),
        on_nb_flows=no_flows,  # (ovn-controller reads the SB rows; no logical flow in 23.03)
        on_nb_sb=on_nb_sb,
        sync_sb=_sync,
        on_northd_sb=on_northd_sb,
        sb_tables=frozenset({TABLE}),
        on_sb=on_sb,
        sb_indexes={IDX: (TABLE, smb_key)},
    )
)

__all__ = ["STATIC_MAC", "on_nb_sb", "on_northd_sb", "on_sb"]
