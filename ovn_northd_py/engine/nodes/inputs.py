"""Input nodes: NB and SB contents with the per-row changes since the last run."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ...ovsdb.connection import DbConnection, RowChange
from ..engine import EngineCtx, InputNode


def pb_name(row: Any) -> Hashable | None:
    """Key of the Port_Binding index (``sync.indexes.PB_BY_NAME``): a Port_Binding's logical port."""
    name: str = row.logical_port
    return name


@dataclass(slots=True)
class RowIndex:
    """key -> row uuid for one table, kept current from the tracked changes (rows inserted by
    a transaction still being built are not in it until the server confirms them)."""

    table: str
    key_of: Callable[[Any], Hashable | None]
    by_key: dict[Hashable, Any] = field(default_factory=dict)
    key_by_uuid: dict[Any, Hashable] = field(default_factory=dict)
    removed: dict[Any, Hashable] = field(default_factory=dict)  # uuid -> key of rows deleted in this batch

    def rebuild(self, conn: DbConnection) -> None:
        self.by_key.clear()
        self.key_by_uuid.clear()
        for u, row in conn.rows(self.table).items():
            if row._data is not None:
                self._add(u, row)

    def _add(self, u: Any, row: Any) -> None:
        k = self.key_of(row)
        if k is not None:
            self.by_key[k] = u
            self.key_by_uuid[u] = k

    def _remove(self, u: Any) -> None:
        k = self.key_by_uuid.pop(u, None)
        if k is not None and self.by_key.get(k) == u:
            del self.by_key[k]

    def apply(self, conn: DbConnection, changes: list[RowChange]) -> None:
        rows = conn.rows(self.table)
        self.removed = {}
        for c in changes:
            if c.table != self.table:
                continue
            if c.event == "delete" and c.uuid in self.key_by_uuid:
                self.removed[c.uuid] = self.key_by_uuid[c.uuid]
            self._remove(c.uuid)
            if c.event != "delete":
                row = rows.get(c.uuid)
                if row is not None:
                    self._add(c.uuid, row)

    def key_of_uuid(self, u: Any) -> Hashable | None:
        """The key of a row, also for one deleted in the current batch."""
        k = self.key_by_uuid.get(u)
        return k if k is not None else self.removed.get(u)

    def get(self, conn: DbConnection, key: Hashable) -> Any | None:
        u = self.by_key.get(key)
        return conn.rows(self.table).get(u) if u is not None else None


class DbInput(InputNode):
    def __init__(self, name: str, conn: DbConnection) -> None:
        super().__init__()
        self.name = name
        self.conn = conn
        self.changes: list[RowChange] = []
        self.resynced = False
        self.indexes: dict[str, RowIndex] = {}

    def add_index(self, name: str, table: str, key_of: Callable[[Any], Hashable | None]) -> RowIndex:
        idx = self.indexes.get(name)
        if idx is None:
            idx = self.indexes[name] = RowIndex(table, key_of)
            idx.rebuild(self.conn)
        return idx

    def observe(self, ctx: EngineCtx) -> bool:
        self.changes, self.resynced = self.conn.take_changes()
        for idx in self.indexes.values():
            if self.resynced:
                idx.rebuild(self.conn)
            else:
                idx.apply(self.conn, self.changes)
        return bool(self.changes) or self.resynced

    def changed_tables(self) -> set[str]:
        return {c.table for c in self.changes}

    def clear_tracked(self) -> None:
        self.changes = []
        self.resynced = False
