"""NB writes ``ovn-nbctl`` cannot do: columns and tables of a newer release than the host's OVN.

The host's ``ovn-nbctl`` knows only its own release's NB schema (compiled in), so columns 25.03
added (``NAT.match``, ``Logical_Router_Policy.chain``, the ``DHCP_Relay`` table, ...) are written
with ``ovsdb-client transact`` (schema-agnostic) as JSON operations::

    transact(remote, [update("NAT", {"match": "tcp"}, ids=("tag", "n1"))])

Rows are found by ``external_ids`` (created by ``ovn-nbctl create ... external_ids:tag=n1``) or
by ``name``; :func:`insert` gives a ``uuid-name`` other operations of the same transaction refer
to with ``["named-uuid", NAME]``.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

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


__all__ = ["Op", "insert", "smap", "transact", "update"]
