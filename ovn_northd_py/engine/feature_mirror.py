"""Port mirroring: NB ``Mirror`` and ``Logical_Switch_Port.mirror_rules`` -> SB ``Mirror`` and
``Port_Binding.mirror_rules`` (no flows: ovn-controller reads the SB rows).

Neither recomputes the northd or lflow node:

* NB (:meth:`Mirrors.on_nb_sb`): the SB mirrors named by the changed NB mirrors' old and new names
  are synced (old names from the uuid -> name map of the graph's :class:`Mirrors`), then the ``mirror_rules`` of
  the ports naming them and of the ports whose ``mirror_rules`` changed are rewritten; a
  port whose Port_Binding is not committed yet (created in the same transaction as its
  mirror) makes sb_sync recompute;
* SB (:func:`on_sb`): changed SB Mirror rows are repaired (Port_Binding.mirror_rules is one of
  the Port_Binding columns sb_sync checks).

Flows (26.03, behaviour ``lport_mirror``: :mod:`..flows.ls_mirror`): a change of Mirror or
Mirror_Rule rows that adds or removes no mirror port (rules, filters; the others recompute the
model: ``northd/incremental.py``) rebuilds the flows of the ports with lport mirrors
(:func:`on_nb_flows`).

The full sync (:meth:`Mirrors.sync_sb`, ``Feature.sync_sb_first``) runs before the port
bindings, which name the rows, and refreshes the uuid -> name map (kept in the :class:`Mirrors`
object of the graph).
"""

from __future__ import annotations

from typing import Any

from ..flows import build_port_flows
from ..flows.owners import port_owner
from ..northd.build import LPORT_MIRROR, lport_mirrors
from ..ovsdb.connection import RowChange
from ..sync.indexes import MIRROR_BY_NAME as IDX
from ..sync.indexes import PB_BY_NAME as PB_INDEX
from ..sync.mirrors import NB_TABLE, TABLE, mirror_key, sync_sb_mirrors, sync_sb_mirrors_of
from ..sync.ports import pb_mirror_rules, port_mirror_names, sb_mirror_rows
from ..sync.rows import update_row
from .features import FlowFeatureCtx, SbFeatureCtx


def on_nb_flows(_changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    """Mirrors or their rules changed: the mirror flows of every port with an lport mirror (few)."""
    if not h.fctx.profile.has(LPORT_MIRROR):
        return True  # (no flow before 26.03)
    for p in list(h.nd.ports.values()):
        if p.kind == "lsp" and lport_mirrors(p.nb):
            h.table.remove_owner(port_owner(p))
            build_port_flows(p, h.fctx, h.table)
    return True


class Mirrors:
    """The mirror feature's SB hooks, with the NB Mirror uuid -> name map of the last sync."""

    def __init__(self) -> None:
        self.names: dict[Any, str] = {}  # NB Mirror uuid -> its name at the last sync

    def sync_sb(self, h: SbFeatureCtx) -> None:
        sync_sb_mirrors(h.sb_txn, h.nb, h.sb, h.stats)
        self.names = {u: mirror_key(r) for u, r in h.nb.rows(NB_TABLE).items()}

    def on_nb_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        return _on_nb_sb(self.names, changes, h)


def _on_nb_sb(names_by_uuid: dict[Any, str], changes: list[RowChange], h: SbFeatureCtx) -> bool:
    nb_rows = h.nb.rows(NB_TABLE)
    lsp_rows = h.nb.rows("Logical_Switch_Port")
    names: set[str] = set()
    ports: set[str] = set()
    for c in changes:
        if c.table == NB_TABLE:
            old = names_by_uuid.pop(c.uuid, None)
            if old is not None:
                names.add(old)
            row = nb_rows.get(c.uuid)
            if row is not None and c.event != "delete":
                names_by_uuid[c.uuid] = n = mirror_key(row)
                names.add(n)
        elif (lsp := lsp_rows.get(c.uuid)) is not None:
            ports.add(str(lsp.name))
    if names:
        ports |= {p.name for p in h.nd.ports.values() if set(port_mirror_names(p)) & names}
    pb_index = h.sb_indexes[PB_INDEX]
    pbs: list[tuple[Any, Any]] = []
    for name in ports:
        p = h.nd.ports.get(name)
        if p is None:
            continue  # deleted: its Port_Binding goes with it
        pb = pb_index.get(h.sb, name)
        if pb is None:
            return False  # not committed yet: let the full sync order rows and bindings
        pbs.append((p, pb))
    if names:
        sync_sb_mirrors_of(h.sb_txn, h.nb, h.sb, names, h.stats)
    mirrors = sb_mirror_rows(h.sb) if pbs else {}
    for p, pb in pbs:
        if update_row(pb, {"mirror_rules": pb_mirror_rules(p, mirrors)}):
            h.stats.bump(h.stats.updated, "Port_Binding")
    return True


def on_sb(changes: list[RowChange], h: SbFeatureCtx) -> bool:
    rows, index = h.sb.rows(TABLE), h.sb_indexes[IDX]
    names: set[str] = set()
    for c in changes:
        row = rows.get(c.uuid)
        k = mirror_key(row) if row is not None else index.key_of_uuid(c.uuid)
        if not isinstance(k, str):
            return False
        names.add(k)
    sync_sb_mirrors_of(h.sb_txn, h.nb, h.sb, names, h.stats)
    # A re-created row is a new row: the ports naming it must point at it again.
    return _refresh_ports(names, h)


def _refresh_ports(names: set[str], h: SbFeatureCtx) -> bool:
    pb_index = h.sb_indexes[PB_INDEX]
    mirrors = sb_mirror_rows(h.sb)
    for p in h.nd.ports.values():
        if not set(port_mirror_names(p)) & names:
            continue
        pb = pb_index.get(h.sb, p.name)
        if pb is None:
            return False
        if update_row(pb, {"mirror_rules": pb_mirror_rules(p, mirrors)}):
            h.stats.bump(h.stats.updated, "Port_Binding")
    return True
