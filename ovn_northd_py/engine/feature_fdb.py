"""Stale SB FDB rows (``sync/fdb.py``): deleted when seen, as the reference does.

The table is ovn-controller's; this feature only watches it (``Feature.sb_watch``): a full SB
sync deletes every stale row, an SB change checks the inserted or modified rows only.  NB
changes never reach it: the rows of ports and switches a run deletes go in that run's own
transaction (``sync/foreign.py``).
"""

from __future__ import annotations

from ..ovsdb.connection import RowChange
from ..sync.fdb import delete_stale
from .features import SbFeatureCtx


def sync_sb(h: SbFeatureCtx) -> None:
    delete_stale(h.sb, h.nd, h.stats)


def on_sb(changes: list[RowChange], h: SbFeatureCtx) -> bool:
    seen = [c.uuid for c in changes if c.event != "delete"]
    if seen:
        delete_stale(h.sb, h.nd, h.stats, seen)
    return True
