"""The echo of our own SB writes: the row changes an IDL transaction will come back as.

After one of our transactions commits, the server sends its changes back to our monitor like
anyone else's, and the next engine run sees them as SB changes.  For most SB tables the engine
cannot tell them from someone else's edit and would compare every table again (a full SB sync):
:class:`Echoes` lists what the committed transaction wrote, so that a handler can drop exactly
those changes (one expected change per row written: an edit of the same row by someone else
arrives as a change of its own and is still seen).  Inserted rows get their uuids from the
server, so their echoes are counted per table.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .connection import RowChange


@dataclass(slots=True)
class Echoes:
    creates: Counter[str] = field(default_factory=Counter)  # table -> rows inserted
    rows: Counter[tuple[str, Any, str]] = field(default_factory=Counter)  # (table, uuid, update|delete)

    @classmethod
    def of(cls, txn: Any) -> Echoes:
        """What ``txn`` (an ovs.db.idl.Transaction, before or after its commit) writes."""
        out = cls()
        for row in txn._txn_rows.values():
            table = row._table.name
            if row._data is None:
                out.creates[table] += 1
            elif row._changes is None:
                out.rows[(table, row.uuid, "delete")] += 1
            elif row._changes:
                out.rows[(table, row.uuid, "update")] += 1
        return out

    def take(self, c: RowChange) -> bool:
        """Is ``c`` (one of) our own echo?  Consumes it."""
        if c.event == "create":
            if self.creates[c.table] > 0:
                self.creates[c.table] -= 1
                return True
            return False
        key = (c.table, c.uuid, c.event)
        if self.rows[key] > 0:
            self.rows[key] -= 1
            return True
        return False
