"""SB dumps for the parity harness: every row of every SB table, decoded.

:func:`dump_sb` selects every table in one transaction (a consistent snapshot) and decodes the
OVSDB JSON into hashable values (:class:`Ref`, :class:`SetVal`, :class:`MapVal`, atoms)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.servers import SB_SCHEMA


class HarnessError(RuntimeError):
    """The harness itself could not run (reference failed, NB could not be built...)."""


# --------------------------------------------------------------------------- decoded values


@dataclass(frozen=True, slots=True, order=True)
class Ref:
    """An unresolved uuid atom."""

    uuid: str


@dataclass(frozen=True, slots=True)
class SetVal:
    items: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class MapVal:
    items: tuple[tuple[Any, Any], ...]

    def as_dict(self) -> dict[Any, Any]:
        return dict(self.items)


@dataclass(frozen=True, slots=True)
class ColumnType:
    is_map: bool
    is_set: bool
    key_ref: str | None
    value_ref: str | None


Row = dict[str, Any]


def _base_ref(base: Any) -> str | None:
    return base.get("refTable") if isinstance(base, dict) else None


def _column_type(raw: Any) -> ColumnType:
    if not isinstance(raw, dict):
        return ColumnType(False, False, None, None)
    is_map = "value" in raw
    is_set = raw.get("min", 1) != 1 or raw.get("max", 1) != 1
    return ColumnType(is_map, is_set, _base_ref(raw["key"]), _base_ref(raw.get("value")))


def load_schema(path: Path = SB_SCHEMA) -> dict[str, dict[str, ColumnType]]:
    """Table -> column -> type, from an .ovsschema file."""
    schema = json.loads(Path(path).read_text())
    return {
        table: {col: _column_type(spec["type"]) for col, spec in tdef["columns"].items()}
        for table, tdef in schema["tables"].items()
    }


def _atom(raw: Any) -> Any:
    if isinstance(raw, list) and len(raw) == 2 and raw[0] == "uuid":
        return Ref(raw[1])
    return raw


def _sort_key(value: Any) -> str:
    return repr(value)


def decode_value(raw: Any, ctype: ColumnType) -> Any:
    """OVSDB JSON (RFC 7047) -> Ref / SetVal / MapVal / plain atom (sets and maps sorted)."""
    if not isinstance(raw, list):
        return SetVal((raw,)) if ctype.is_set else raw
    tag = raw[0]
    if tag == "map":
        return MapVal(tuple(sorted((_atom(k), _atom(v)) for k, v in raw[1])))
    if tag == "set":
        return SetVal(tuple(sorted(_atom(a) for a in raw[1])))
    if ctype.is_map:  # cannot happen in valid OVSDB JSON; be lenient
        return MapVal(())
    return SetVal((_atom(raw),)) if ctype.is_set else _atom(raw)


# --------------------------------------------------------------------------- SB dumps


@dataclass(slots=True)
class SbDump:
    """Every row of every SB table: table -> row uuid -> column -> decoded value."""

    tables: dict[str, dict[str, Row]]
    schema: dict[str, dict[str, ColumnType]]

    def rows(self, table: str) -> dict[str, Row]:
        return self.tables.get(table, {})

    def datapath_labels(self) -> dict[str, str]:
        """NB uuid -> datapath name, for readable reports."""
        labels: dict[str, str] = {}
        for row in self.rows("Datapath_Binding").values():
            ext = row["external_ids"].as_dict()
            key = _datapath_key(row)
            labels[key] = ext.get("name", key)
        return labels


def dump_sb(remote: str, schema_path: Path = SB_SCHEMA, timeout: int = 120) -> SbDump:
    """Select every table of the SB in one transaction (a consistent snapshot)."""
    schema = load_schema(schema_path)
    txn: list[Any] = ["OVN_Southbound"] + [{"op": "select", "table": t, "where": []} for t in schema]
    proc = subprocess.run(
        ["ovsdb-client", f"--timeout={timeout}", "transact", remote, json.dumps(txn)],
        capture_output=True,
        text=True,
        check=True,
    )
    replies = json.loads(proc.stdout)
    tables: dict[str, dict[str, Row]] = {}
    for table, reply in zip(schema, replies, strict=False):
        if "error" in reply:
            raise HarnessError(f"select {table}: {reply}")
        types = schema[table]
        tables[table] = {
            r["_uuid"][1]: {c: decode_value(v, types[c]) for c, v in r.items() if c in types}
            for r in reply["rows"]
        }
    return SbDump(tables, schema)


def _datapath_key(row: Row) -> str:
    ext = row["external_ids"].as_dict()
    for kind in ("logical-switch", "logical-router"):
        if kind in ext:
            return str(ext[kind])
    return "dp:" + repr(sorted(ext.items()))


def _scalar(value: Any) -> Any:
    """A 0/1-element set as its element (or None), anything else unchanged."""
    if isinstance(value, SetVal) and len(value.items) <= 1:
        return value.items[0] if value.items else None
    return value


def _refs(value: Any) -> list[Ref]:
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, SetVal):
        return [a for a in value.items if isinstance(a, Ref)]
    return []
