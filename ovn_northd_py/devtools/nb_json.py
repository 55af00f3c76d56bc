"""NB rows written as raw OVSDB operations (``ovsdb-client transact``), for columns and tables the
host's ``ovn-nbctl`` does not know (it is built against one schema; e.g. 23.03's ``ovn-nbctl`` and
25.03's ``ACL.tier``, ``Sample``, ``Sampling_App``).

    ops = NbOps()
    c = ops.insert("Sample_Collector", {"id": 1, "name": "c1", "probability": 65535, "set_id": 5})
    s = ops.insert("Sample", {"collectors": ops.set(c), "metadata": 100})
    a = ops.insert("ACL", {"direction": "to-lport", "priority": 10, "match": "ip", "action": "drop",
                           "sample_new": s, "tier": 1})
    ops.add_to("Logical_Switch", "sw0", "acls", a)
    ops.transact(nb_remote)

or, operation by operation (rows found by ``external_ids`` or ``name``)::

    transact(remote, [update("NAT", {"match": "tcp"}, ids=("tag", "n1"))])
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class NbOps:
    """One NB transaction being put together."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    n: int = 0

    def insert(self, table: str, row: dict[str, Any]) -> list[str]:
        """Insert ``row`` (OVSDB JSON values; use :meth:`set` / :meth:`map`); returns a reference."""
        self.n += 1
        name = f"row{self.n}"
        self.ops.append({"op": "insert", "table": table, "row": row, "uuid-name": name})
        return ["named-uuid", name]

    @staticmethod
    def set(*items: Any) -> list[Any]:
        return ["set", list(items)]

    @staticmethod
    def map(d: dict[str, str]) -> list[Any]:
        return ["map", [[k, v] for k, v in d.items()]]

    def add_to(self, table: str, name: str, column: str, *refs: Any) -> None:
        """Add ``refs`` to the set ``column`` of the ``table`` row called ``name``."""
        self.ops.append({"op": "mutate", "table": table, "where": [["name", "==", name]],
                         "mutations": [[column, "insert", self.set(*refs)]]})

    def transact(self, remote: str, timeout: int = 60) -> list[Any]:
        """Run the operations as one transaction; RuntimeError if any failed."""
        if not self.ops:
            return []
        proc = subprocess.run(
            ["ovsdb-client", f"--timeout={timeout}", "transact", remote, json.dumps(["OVN_Northbound", *self.ops])],
            capture_output=True, text=True, check=False,
        )
        if proc.returncode:
            raise RuntimeError(f"NB transaction failed: {proc.stderr[-2000:]}")
        replies: list[Any] = json.loads(proc.stdout)
        errors = [r for r in replies if isinstance(r, dict) and "error" in r]
        if errors:
            raise RuntimeError(f"NB transaction failed: {errors}")
        return replies


def nb_schema_version(remote: str, timeout: int = 60) -> tuple[int, ...]:
    """The NB server's schema version, e.g. (7, 11, 0)."""
    out = subprocess.run(["ovsdb-client", f"--timeout={timeout}", "get-schema-version", remote, "OVN_Northbound"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return tuple(int(x) for x in out.split("."))


def select(remote: str, table: str, columns: list[str] | None = None, timeout: int = 60) -> list[dict[str, Any]]:
    """The rows of NB ``table`` (OVSDB JSON values)."""
    op: dict[str, Any] = {"op": "select", "table": table, "where": []}
    if columns is not None:
        op["columns"] = columns
    out = subprocess.run(["ovsdb-client", f"--timeout={timeout}", "transact", remote, json.dumps(["OVN_Northbound", op])],
                         capture_output=True, text=True, check=True).stdout
    rows: list[dict[str, Any]] = json.loads(out)[0]["rows"]
    return rows


# ---- single operations (gen_random's 25.03 router features, the router tests)

Op = dict[str, Any]


def _where(ids: tuple[str, str] | None, name: str | None) -> list[Any]:
    if ids is not None:
        return [["external_ids", "includes", ["map", [list(ids)]]]]
    if name is not None:
        return [["name", "==", name]]
    raise ValueError("update: a row is found by ids=(key, value) or name=")


def update(table: str, row: dict[str, Any], *, ids: tuple[str, str] | None = None, name: str | None = None) -> Op:
    """Set ``row``'s columns (OVSDB JSON values) on the rows of ``table`` found by ``ids`` or ``name``."""
    return {"op": "update", "table": table, "where": _where(ids, name), "row": row}


def insert(table: str, row: dict[str, Any], uuid_name: str | None = None) -> Op:
    op: Op = {"op": "insert", "table": table, "row": row}
    if uuid_name:
        op["uuid-name"] = uuid_name
    return op


def smap(d: dict[str, str]) -> list[Any]:
    """An OVSDB map value."""
    return ["map", [[k, v] for k, v in d.items()]]


def transact(remote: str, ops: list[Op], timeout: float = 60.0) -> None:
    """Run ``ops`` as one NB transaction; RuntimeError naming the failing operation if one fails."""
    if not ops:
        return
    txn = json.dumps(["OVN_Northbound", *ops])
    proc = subprocess.run(["ovsdb-client", "transact", remote, txn], check=False, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode:
        raise RuntimeError(f"ovsdb-client transact failed: {proc.stderr[-2000:]}")
    results = json.loads(proc.stdout)
    for op, res in zip(ops, results, strict=False):
        if isinstance(res, dict) and "error" in res:
            raise RuntimeError(f"NB operation {op} failed: {res}")
    if len(results) > len(ops) and results[-1] and "error" in results[-1]:
        raise RuntimeError(f"NB transaction failed: {results[-1]}")
