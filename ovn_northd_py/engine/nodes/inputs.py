"""Input nodes: NB and SB contents with the per-row changes since the last run."""

from __future__ import annotations

from typing import Any

from ...ovsdb.connection import DbConnection, RowChange
from ..engine import InputNode


class DbInput(InputNode):
    def __init__(self, name: str, conn: DbConnection) -> None:
        super().__init__()
        self.name = name
        self.conn = conn
        self.changes: list[RowChange] = []
        self.resynced = False

    def observe(self, ctx: Any) -> bool:
        self.changes, self.resynced = self.conn.take_changes()
        return bool(self.changes) or self.resynced

    def changed_tables(self) -> set[str]:
        return {c.table for c in self.changes}

    def clear_tracked(self) -> None:
        self.changes = []
        self.resynced = False
