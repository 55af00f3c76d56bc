"""Parity harness: reference ovn-northd and ours on copies of one NB, SB databases compared.

The NB is built once (workload script, Python callable or existing db file), backed up with
``ovsdb-client backup`` and served twice, so both daemons see the same row UUIDs.  Each daemon
gets its own empty SB.  After both settled (``ovn-nbctl --wait=sb sync``) the SBs are dumped and
compared with SB row UUIDs mapped to stable keys: datapaths by NB uuid, ports by name, logical
flows expanded over their datapaths and compared per stage.

Entry points: :func:`run_parity` (everything), :func:`dump_sb` and :func:`compare_dumps`
(pieces, used by the self-test to perturb a dump).

``release`` (default 23.03) names the OVN release of the reference: the NB and SB use that
release's schemas, and its ``ovsdb-server``/``ovn-northd``/``ovn-nbctl`` run from the host when the
host's OVN is that release, else (or with ``from_chroot``) from its Debian chroot
(``scripts/chroots.sh``, :mod:`ovn_northd_py.devtools.tools`).  The report names the exact
reference package version.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ovn_northd_py.devtools.servers import (
    NB_SCHEMA,
    SB_SCHEMA,
    OvsdbServer,
    ReferenceNorthd,
    pid_alive,
)
from ovn_northd_py.devtools.tools import HOST, Tools, ToolsUnavailable, tools_for
from ovn_northd_py.release import DEFAULT_RELEASE, Release, get_release

WORKLOAD_DIR = Path(
    os.environ.get("OVN_PARITY_WORKLOADS", Path(__file__).resolve().parents[3] / "shared" / "workloads")
)
OURS_CMD_DEFAULT = (
    "{python} -m ovn_northd_py --ovnnb-db={nb} --ovnsb-db={sb} --log-file={log} --pidfile={pidfile}"
)
FLOW_TABLE = "Logical_Flow"
# NB_Global/SB_Global options northd picks at random when the NB does not set them.  Their SB_Global
# values are compared by presence only and their occurrences in other rows and in flows are replaced
# by placeholders (``<svc_monitor_mac>``, ``<mac_prefix>:``) before comparing.
# (``svc_monitor_mac_dst``: 26.03 and later.)
RANDOM_OPTIONS = ("mac_prefix", "svc_monitor_mac", "svc_monitor_mac_dst")
# Columns whose values legitimately differ between two correct implementations.
IGNORED_COLUMNS: dict[str, frozenset[str]] = {
    "Datapath_Binding": frozenset({"tunnel_key"}),
    "Port_Binding": frozenset({"tunnel_key"}),
    "BFD": frozenset({"src_port", "disc"}),
    "FDB": frozenset({"dp_key", "port_key"}),
}
# Natural keys: rows of these tables are matched by these (resolved) columns.
NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    "Chassis": ("name",),
    "Chassis_Private": ("name",),
    "Encap": ("type", "ip"),
    "Address_Set": ("name",),
    "Port_Group": ("name",),
    "Multicast_Group": ("datapath", "name"),
    "Mirror": ("name",),
    "Meter": ("name",),
    "Port_Binding": ("logical_port",),
    "MAC_Binding": ("logical_port", "ip"),
    "DHCP_Options": ("name",),
    "DHCPv6_Options": ("name",),
    "Connection": ("target",),
    "RBAC_Role": ("name",),
    "RBAC_Permission": ("table",),
    "Gateway_Chassis": ("name",),
    "HA_Chassis_Group": ("name",),
    "IP_Multicast": ("datapath",),
    "Service_Monitor": ("logical_port", "ip", "port", "protocol"),
    "Load_Balancer": ("name",),
    "BFD": ("logical_port", "dst_ip"),
    "Static_MAC_Binding": ("logical_port", "ip"),
    "Chassis_Template_Var": ("chassis",),
}
# Tables whose row sets are an implementation detail: only the row counts must agree.
COUNT_ONLY_TABLES = frozenset({"Logical_DP_Group"})


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
    for table, reply in zip(schema, replies):
        if "error" in reply:
            raise HarnessError(f"select {table}: {reply}")
        types = schema[table]
        tables[table] = {
            r["_uuid"][1]: {c: decode_value(v, types[c]) for c, v in r.items() if c in types}
            for r in reply["rows"]
        }
    return SbDump(tables, schema)


# --------------------------------------------------------------------------- stable keys


_RTR_LB_NAME = re.compile(r"_rtr_lb_\d+_")


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


@dataclass(slots=True)
class Resolver:
    """Projects the rows of one dump onto uuid-free, hashable, comparable content."""

    dump: SbDump
    random_options: Collection[str] = RANDOM_OPTIONS
    _ref_cache: dict[tuple[str, str], Hashable] = field(default_factory=dict)
    _substitutions: list[tuple[str, str]] = field(default_factory=list)
    _dp_by_tunnel_key: dict[int, str] = field(default_factory=dict)
    _rtr_lb_names: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for row in self.dump.rows("Datapath_Binding").values():
            self._dp_by_tunnel_key[row["tunnel_key"]] = _datapath_key(row)
        # Router load-balancer address sets are named after the router's tunnel key, which (like
        # the tunnel_key columns, not compared) is an allocation detail: compared by datapath.
        self._rtr_lb_names = {f"_rtr_lb_{key}_": f"_rtr_lb_<{dp}>_" for key, dp in self._dp_by_tunnel_key.items()}
        for row in self.dump.rows("SB_Global").values():
            options = row["options"].as_dict()
            if "svc_monitor_mac" in self.random_options and options.get("svc_monitor_mac"):
                self._substitutions.append((str(options["svc_monitor_mac"]), "<svc_monitor_mac>"))
            if "svc_monitor_mac_dst" in self.random_options and options.get("svc_monitor_mac_dst"):
                self._substitutions.append((str(options["svc_monitor_mac_dst"]), "<svc_monitor_mac_dst>"))
            if "mac_prefix" in self.random_options and options.get("mac_prefix"):
                self._substitutions.append((str(options["mac_prefix"]) + ":", "<mac_prefix>:"))

    def ref_key(self, table: str, uuid: str) -> Hashable:
        """What a reference to ``table``/``uuid`` is compared as."""
        cached = self._ref_cache.get((table, uuid))
        if cached is not None:
            return cached
        row = self.dump.rows(table).get(uuid)
        key: Hashable
        if row is None:
            key = f"<dangling {table}>"
        elif table == "HA_Chassis_Group":
            key = (row["name"], self.project(table, row)["ha_chassis"])
        else:
            natural = self.natural_key(table, row)
            key = natural if natural is not None else self.content(table, row)
        self._ref_cache[(table, uuid)] = key
        return key

    def natural_key(self, table: str, row: Row) -> Hashable | None:
        if table == "Datapath_Binding":
            return _datapath_key(row)
        if table == "SB_Global":
            return "SB_Global"
        if table == "Port_Group":
            return self.port_group_name(row["name"])
        if table == "DNS":
            dns_id = row["external_ids"].as_dict().get("dns_id")
            return None if dns_id is None else str(dns_id)
        cols = NATURAL_KEYS.get(table)
        if cols is None:
            return None
        values = tuple(_scalar(self._resolve(table, c, row[c])) for c in cols)
        if table == "Address_Set":
            values = tuple(self.mask(v) if isinstance(v, str) else v for v in values)
        return values[0] if len(values) == 1 else values

    def content(self, table: str, row: Row) -> Hashable:
        return tuple(sorted(self.project(table, row).items()))

    def project(self, table: str, row: Row) -> dict[str, Any]:
        ignored = IGNORED_COLUMNS.get(table, frozenset())
        out = {c: self._resolve(table, c, v) for c, v in row.items() if c not in ignored}
        fixup = _FIXUPS.get(table)
        if fixup is not None:
            fixup(self, row, out)
        if self._substitutions or self._rtr_lb_names:
            out = {c: self._mask_value(v) for c, v in out.items()}
        return out

    def _resolve(self, table: str, column: str, value: Any) -> Any:
        ctype = self.dump.schema[table][column]
        if ctype.key_ref is None and ctype.value_ref is None:
            return value
        if isinstance(value, MapVal):
            items = ((self._ref(ctype.key_ref, k), self._ref(ctype.value_ref, v)) for k, v in value.items)
            return MapVal(tuple(sorted(items, key=_sort_key)))
        if isinstance(value, SetVal):
            return SetVal(tuple(sorted((self._ref(ctype.key_ref, a) for a in value.items), key=_sort_key)))
        return self._ref(ctype.key_ref, value)

    def _ref(self, ref_table: str | None, atom: Any) -> Any:
        if ref_table is None or not isinstance(atom, Ref):
            return atom
        return self.ref_key(ref_table, atom.uuid)

    def port_group_name(self, name: str) -> Hashable:
        """SB Port_Group names start with the switch's tunnel key (``<key>_<group>``), which differs between
        implementations: compared as (datapath, group) instead."""
        key, sep, group = name.partition("_")
        dp = self._dp_by_tunnel_key.get(int(key)) if sep and key.isdigit() else None
        return name if dp is None else (dp, group)

    def mask(self, text: str) -> str:
        """Replace this side's random MAC values by placeholders."""
        for value, placeholder in self._substitutions:
            if value in text:
                text = text.replace(value, placeholder)
        if "_rtr_lb_" in text:
            text = _RTR_LB_NAME.sub(lambda m: self._rtr_lb_names.get(m.group(0), m.group(0)), text)
        return text

    def _mask_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, SetVal):
            return SetVal(tuple(sorted((self._mask_value(a) for a in value.items), key=_sort_key)))
        if isinstance(value, MapVal):
            items = ((self._mask_value(k), self._mask_value(v)) for k, v in value.items)
            return MapVal(tuple(sorted(items, key=_sort_key)))
        if isinstance(value, tuple):
            return tuple(self._mask_value(a) for a in value)
        return value

    def datapaths_of(self, row: Row, single: str, group: str) -> list[Hashable]:
        """Datapath keys of a row with a datapath column and a Logical_DP_Group column."""
        dps = [self.ref_key("Datapath_Binding", r.uuid) for r in _refs(row.get(single))]
        for g in _refs(row.get(group)):
            grow = self.dump.rows("Logical_DP_Group").get(g.uuid)
            if grow is not None:
                dps += [self.ref_key("Datapath_Binding", r.uuid) for r in _refs(grow["datapaths"])]
        return dps


def _refs(value: Any) -> list[Ref]:
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, SetVal):
        return [a for a in value.items if isinstance(a, Ref)]
    return []


def _fix_sb_global(res: Resolver, row: Row, out: dict[str, Any]) -> None:
    opts = out["options"].as_dict()
    for name in res.random_options:
        if name in opts:
            opts[name] = "<random>"
    out["options"] = MapVal(tuple(sorted(opts.items(), key=_sort_key)))


def _fix_port_group(res: Resolver, row: Row, out: dict[str, Any]) -> None:
    out["name"] = res.port_group_name(row["name"])


def _fix_load_balancer(res: Resolver, row: Row, out: dict[str, Any]) -> None:
    dps = res.datapaths_of(row, "datapaths", "datapath_group")
    out["datapaths"] = SetVal(tuple(sorted(set(dps), key=_sort_key)))
    out.pop("datapath_group", None)


_FIXUPS: dict[str, Callable[[Resolver, Row, dict[str, Any]], None]] = {
    "SB_Global": _fix_sb_global,
    "Load_Balancer": _fix_load_balancer,
    "Port_Group": _fix_port_group,
}


# --------------------------------------------------------------------------- table comparison


@dataclass(slots=True)
class RowDiff:
    key: str
    columns: dict[str, str]  # column -> readable description of the difference


@dataclass(slots=True)
class TableDiff:
    table: str
    ref_count: int
    ours_count: int
    matched: int
    missing: list[str]  # in the reference, not in ours (rendered keys or rows)
    extra: list[str]  # in ours, not in the reference
    differing: list[RowDiff]  # same key, different content
    count_only: bool = False

    @property
    def ok(self) -> bool:
        if self.count_only:
            return self.ref_count == self.ours_count
        return not (self.missing or self.extra or self.differing)


def _keyed_rows(res: Resolver, table: str) -> dict[Hashable, dict[str, Any]]:
    """Stable key -> projected row; keyless tables (and duplicate keys) are keyed by content."""
    groups: dict[Hashable, list[dict[str, Any]]] = {}
    for row in res.dump.rows(table).values():
        key = res.natural_key(table, row)
        projected = res.project(table, row)
        if key is None:
            key = ("<row>", tuple(sorted(projected.items())))
        groups.setdefault(key, []).append(projected)
    out: dict[Hashable, dict[str, Any]] = {}
    for key, rows in groups.items():
        if len(rows) == 1:
            out[key] = rows[0]
            continue
        for i, projected in enumerate(sorted(rows, key=lambda p: repr(sorted(p.items())))):
            out[(key, f"#{i + 1}")] = projected
    return out


def _render(value: Any, labels: dict[str, str], limit: int = 300) -> str:
    text = _render_full(value, labels)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _render_full(value: Any, labels: dict[str, str]) -> str:
    if isinstance(value, str):
        return labels.get(value, value)
    if isinstance(value, MapVal):
        return (
            "{"
            + ", ".join(f"{_render_full(k, labels)}={_render_full(v, labels)}" for k, v in value.items)
            + "}"
        )
    if isinstance(value, SetVal):
        return "[" + ", ".join(_render_full(a, labels) for a in value.items) + "]"
    if isinstance(value, tuple):
        if value[:1] == ("<row>",) and len(value) == 2:
            return "row(" + ", ".join(f"{c}={_render_full(v, labels)}" for c, v in value[1]) + ")"
        return "(" + ", ".join(_render_full(a, labels) for a in value) + ")"
    if isinstance(value, Ref):
        return f"uuid:{value.uuid}"
    return repr(value)


def _describe_change(ref: Any, ours: Any, labels: dict[str, str]) -> str:
    if isinstance(ref, MapVal) and isinstance(ours, MapVal):
        a, b = ref.as_dict(), ours.as_dict()
        parts = [f"-{_render(k, labels)}={_render(a[k], labels)}" for k in a if k not in b]
        parts += [f"+{_render(k, labels)}={_render(b[k], labels)}" for k in b if k not in a]
        parts += [
            f"~{_render(k, labels)}: {_render(a[k], labels)} -> {_render(b[k], labels)}"
            for k in a
            if k in b and a[k] != b[k]
        ]
        return "; ".join(parts)
    if isinstance(ref, SetVal) and isinstance(ours, SetVal):
        a_set, b_set = set(ref.items), set(ours.items)
        parts = [f"-{_render(x, labels)}" for x in ref.items if x not in b_set]
        parts += [f"+{_render(x, labels)}" for x in ours.items if x not in a_set]
        return "; ".join(parts)
    return f"{_render(ref, labels)} -> {_render(ours, labels)}"


def compare_table(
    table: str, ref: Resolver, ours: Resolver, labels: dict[str, str] | None = None
) -> TableDiff:
    labels = labels or {}
    a, b = _keyed_rows(ref, table), _keyed_rows(ours, table)
    missing = sorted(_render(k, labels) for k in a if k not in b)
    extra = sorted(_render(k, labels) for k in b if k not in a)
    differing: list[RowDiff] = []
    for key in sorted((k for k in a if k in b), key=_sort_key):
        cols = {
            c: _describe_change(a[key].get(c), b[key].get(c), labels)
            for c in sorted(set(a[key]) | set(b[key]))
            if a[key].get(c) != b[key].get(c)
        }
        if cols:
            differing.append(RowDiff(_render(key, labels), cols))
    matched = len(a) - len(missing) - len(differing)
    return TableDiff(
        table, len(a), len(b), matched, missing, extra, differing, count_only=table in COUNT_ONLY_TABLES
    )


# --------------------------------------------------------------------------- logical flows

# (datapath NB uuid, pipeline, table_id, priority, match, actions, controller_meter, stage-name)
FlowKey = tuple[str, str, int, int, str, str, str, str]
StageId = tuple[str, str]  # (pipeline, stage-name)


@dataclass(slots=True)
class StageDiff:
    pipeline: str
    stage: str
    table_id: int
    ref_count: int
    ours_count: int
    matched: int
    missing: list[FlowKey]
    extra: list[FlowKey]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra)

    @property
    def percent(self) -> float:
        return _percent(self.matched, self.ref_count, self.ours_count)


@dataclass(slots=True)
class FlowDiff:
    stages: list[StageDiff]

    @property
    def ref_count(self) -> int:
        return sum(s.ref_count for s in self.stages)

    @property
    def ours_count(self) -> int:
        return sum(s.ours_count for s in self.stages)

    @property
    def matched(self) -> int:
        return sum(s.matched for s in self.stages)

    @property
    def missing(self) -> int:
        return sum(len(s.missing) for s in self.stages)

    @property
    def extra(self) -> int:
        return sum(len(s.extra) for s in self.stages)

    @property
    def percent(self) -> float:
        return _percent(self.matched, self.ref_count, self.ours_count)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)


def _percent(matched: int, ref_count: int, ours_count: int) -> float:
    if ref_count == 0:
        return 100.0 if ours_count == 0 else 0.0
    return 100.0 * matched / ref_count


def expand_flows(res: Resolver) -> dict[StageId, Counter[FlowKey]]:
    """Every logical flow once per datapath it applies to, grouped by stage."""
    stages: dict[StageId, Counter[FlowKey]] = {}
    for row in res.dump.rows(FLOW_TABLE).values():
        ext = row["external_ids"].as_dict()
        stage = str(ext.get("stage-name", "?"))
        meter = _scalar(row["controller_meter"]) or ""
        match, actions = res.mask(row["match"]), res.mask(row["actions"])
        counter = stages.setdefault((row["pipeline"], stage), Counter())
        for dp in res.datapaths_of(row, "logical_datapath", "logical_dp_group"):
            key: FlowKey = (
                str(dp),
                row["pipeline"],
                row["table_id"],
                row["priority"],
                match,
                actions,
                meter,
                stage,
            )
            counter[key] += 1
    return stages


def _stage_order(item: StageDiff) -> tuple[str, int, int, str]:
    """Switch stages, then router stages (by name prefix); ingress before egress; by table."""
    return (item.stage[:3], 0 if item.pipeline == "ingress" else 1, item.table_id, item.stage)


def compare_flows(ref: Resolver, ours: Resolver) -> FlowDiff:
    a, b = expand_flows(ref), expand_flows(ours)
    stages: list[StageDiff] = []
    for sid in set(a) | set(b):
        ra, rb = a.get(sid, Counter()), b.get(sid, Counter())
        table_id = next(iter(ra or rb))[2]
        stages.append(
            StageDiff(
                sid[0],
                sid[1],
                table_id,
                ra.total(),
                rb.total(),
                (ra & rb).total(),
                sorted((ra - rb).elements()),
                sorted((rb - ra).elements()),
            )
        )
    return FlowDiff(sorted(stages, key=_stage_order))


def render_flow(flow: FlowKey, labels: dict[str, str]) -> str:
    dp, pipeline, table_id, prio, match, actions, meter, stage = flow
    text = (
        f"{labels.get(dp, dp)} {pipeline} {stage}({table_id}) prio={prio} match=({match}) actions=({actions})"
    )
    return text + (f" meter={meter}" if meter else "")


# --------------------------------------------------------------------------- whole comparison


@dataclass(slots=True)
class Comparison:
    tables: dict[str, TableDiff]
    flows: FlowDiff | None
    labels: dict[str, str]

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables.values()) and (self.flows is None or self.flows.ok)


def _check_tables(tables: Collection[str] | None, schema_path: Path = SB_SCHEMA) -> None:
    unknown = set(tables or ()) - set(load_schema(schema_path))
    if unknown:
        raise ValueError(f"unknown SB tables: {', '.join(sorted(unknown))}")


def compare_dumps(
    ref: SbDump,
    ours: SbDump,
    tables: Collection[str] | None = None,
    random_options: Collection[str] = RANDOM_OPTIONS,
) -> Comparison:
    """Compare two SB dumps; ``tables`` limits the comparison (``Logical_Flow`` included).

    ``random_options``: the SB_Global options both sides chose at random (see RANDOM_OPTIONS); leave
    out those the NB configures, so that they are compared exactly.
    """
    names = list(ref.schema) if tables is None else [t for t in ref.schema if t in tables]
    unknown = set(tables or ()) - set(ref.schema)
    if unknown:
        raise ValueError(f"unknown SB tables: {', '.join(sorted(unknown))}")
    labels = {**ours.datapath_labels(), **ref.datapath_labels()}
    rres, ores = Resolver(ref, random_options), Resolver(ours, random_options)
    diffs = {t: compare_table(t, rres, ores, labels) for t in names if t != FLOW_TABLE}
    flows = compare_flows(rres, ores) if FLOW_TABLE in names else None
    return Comparison(diffs, flows, labels)


# --------------------------------------------------------------------------- NB sources

NbBuilder = Callable[[str], None]


@dataclass(slots=True)
class ScriptBuilder:
    """Runs ``command + args``; the NB remote replaces ``NB_REMOTE``/``{nb}`` in ``args``, else goes first."""

    command: list[str]
    args: list[str]
    timeout: float = 600.0

    def argv(self, nb_remote: str) -> list[str]:
        args = [nb_remote if a == "NB_REMOTE" else a.replace("{nb}", nb_remote) for a in self.args]
        if args == self.args:
            args.insert(0, nb_remote)
        return [*self.command, *args]

    def __call__(self, nb_remote: str) -> None:
        argv = self.argv(nb_remote)
        proc = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=self.timeout)
        if proc.returncode:
            raise HarnessError(f"NB builder {shlex.join(argv)} failed: {proc.stderr[-2000:]}")

    def __str__(self) -> str:
        return shlex.join([Path(self.command[-1]).name, *self.args])


def script(path: str | Path, *args: str) -> ScriptBuilder:
    """A Python script taking the NB remote as first argument (unless an argument is NB_REMOTE)."""
    return ScriptBuilder([sys.executable, str(path)], list(args))


def workload(name: str, *args: int | str) -> ScriptBuilder:
    """A script of the shared workloads directory, e.g. ``workload("mixed", 10, 10, 10)``."""
    return script(WORKLOAD_DIR / f"{name}.py", *(str(a) for a in args))


@dataclass(slots=True)
class NbctlBuilder:
    """ovn-nbctl commands run as one transaction (``--`` between them)."""

    commands: list[list[str]]

    def __call__(self, nb_remote: str) -> None:
        argv = ["ovn-nbctl", f"--db={nb_remote}", "--timeout=60"]
        for i, command in enumerate(self.commands):
            argv += (["--"] if i else []) + command
        proc = subprocess.run(argv, check=False, capture_output=True, text=True)
        if proc.returncode:
            raise HarnessError(f"ovn-nbctl failed: {proc.stderr[-2000:]}")

    def __str__(self) -> str:
        return f"nbctl script ({len(self.commands)} commands)"


def nbctl_commands(*commands: Sequence[str]) -> NbctlBuilder:
    """An NB builder: ``nbctl_commands(["ls-add", "sw0"], ["lsp-add", "sw0", "p0"])``."""
    return NbctlBuilder([list(c) for c in commands])


NbSource = NbBuilder | Path


def _describe_source(source: NbSource) -> str:
    if isinstance(source, Path):
        return f"nb file {source}"
    return str(source) if isinstance(source, ScriptBuilder) else getattr(source, "__name__", repr(source))


def _ovsdb_tool(*args: str) -> str:
    return subprocess.run(["ovsdb-tool", *args], capture_output=True, text=True, check=True).stdout.strip()


def _seed_from_file(path: Path, seed: Path, nb_schema: Path = NB_SCHEMA) -> None:
    if _is_clustered(path):
        _ovsdb_tool("cluster-to-standalone", str(seed), str(path))
    else:
        shutil.copyfile(path, seed)
    if _ovsdb_tool("needs-conversion", str(seed), str(nb_schema)) == "yes":
        _ovsdb_tool("convert", str(seed), str(nb_schema))


def _is_clustered(path: Path) -> bool:
    proc = subprocess.run(["ovsdb-tool", "db-is-clustered", str(path)], check=False, capture_output=True)
    return proc.returncode == 0


def nb_global_options(db_file: Path) -> dict[str, str]:
    """NB_Global options of a standalone NB database file (read with ``ovsdb-tool query``)."""
    txn = json.dumps(
        ["OVN_Northbound", {"op": "select", "table": "NB_Global", "where": [], "columns": ["options"]}]
    )
    rows = json.loads(_ovsdb_tool("query", str(db_file), txn))[0]["rows"]
    return {str(k): str(v) for row in rows for k, v in row["options"][1]}


def unconfigured_random_options(seed: Path) -> tuple[str, ...]:
    """The RANDOM_OPTIONS the NB leaves to northd (the others must match exactly)."""
    configured = nb_global_options(seed)
    return tuple(name for name in RANDOM_OPTIONS if name not in configured)


def build_seed_nb(source: NbSource, workdir: Path, nb_schema: Path = NB_SCHEMA) -> Path:
    """A standalone NB database file (schema ``nb_schema``) both sides start from."""
    workdir.mkdir(parents=True, exist_ok=True)
    seed = workdir / "nb-seed.db"
    if isinstance(source, Path):
        _seed_from_file(source, seed, nb_schema)
        return seed
    server = OvsdbServer(workdir / "build", "nb", nb_schema)
    try:
        server.start()
        source(server.remote)
        server.backup(seed)
    finally:
        _stop_server(server)
    return seed


# --------------------------------------------------------------------------- daemons

REFERENCE_BINARY = "/usr/bin/ovn-northd"


def reference_available(release: Release | str = DEFAULT_RELEASE, from_chroot: bool | None = None) -> bool:
    """The reference daemon of ``release`` and the OVS/OVN tools the harness runs are installed
    (the host's tools always serve our side and build the NB)."""
    tools = ("ovsdb-server", "ovsdb-client", "ovsdb-tool", "ovn-nbctl")
    if not all(shutil.which(t) for t in tools):
        return False
    try:
        ref = tools_for(release, from_chroot)
    except ToolsUnavailable:
        return False
    return ref.root is not None or Path(REFERENCE_BINARY).exists()


def process_gone(pid: int) -> bool:
    """Exited, or a zombie: a detached daemon's zombie waits for init, which may reap it late."""
    if not pid_alive(pid):
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not process_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def stop_process(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL; like ``servers.stop_pid`` but without waiting for init to reap."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        if process_gone(pid):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if _wait_gone(pid, wait):
            return
    raise HarnessError(f"pid {pid} survived SIGKILL")


def _stop_server(server: OvsdbServer) -> None:
    if server.pid is not None:
        stop_process(server.pid)
        server.pid = None


class Daemon(Protocol):
    label: str

    def start(self, workdir: Path, nb_remote: str, sb_remote: str) -> None: ...

    def alive(self) -> bool: ...

    def stop(self) -> None: ...

    def pids(self) -> list[int]: ...

    def describe_exit(self) -> str: ...


@dataclass(slots=True)
class ReferenceDaemon:
    """Debian's C ovn-northd (detached, stopped by its pidfile's PID), from ``tools``."""

    label: str = "reference"
    binary: str = REFERENCE_BINARY
    tools: Tools = HOST
    _northd: ReferenceNorthd | None = None
    _pids: list[int] = field(default_factory=list)

    def start(self, workdir: Path, nb_remote: str, sb_remote: str) -> None:
        self._northd = ReferenceNorthd(workdir, nb_remote, sb_remote, binary=self.binary, tools=self.tools)
        self._northd.start()
        if self._northd.pid is not None:
            self._pids.append(self._northd.pid)

    def alive(self) -> bool:
        return (
            self._northd is not None and self._northd.pid is not None and not process_gone(self._northd.pid)
        )

    def stop(self) -> None:
        if self._northd is not None and self._northd.pid is not None:
            stop_process(self._northd.pid)
            self._northd.pid = None

    def pids(self) -> list[int]:
        return list(self._pids)

    def describe_exit(self) -> str:
        return f"{self.binary} exited (see ref-northd.log)"


@dataclass(slots=True)
class CommandDaemon:
    """A daemon started from a command template.

    Placeholders: ``{python}`` ``{nb}`` ``{sb}`` ``{log}`` ``{pidfile}`` ``{unixctl}`` ``{workdir}``.
    A template with ``--detach`` is waited for and then tracked by the PID in ``{pidfile}``.
    """

    template: Sequence[str] | str = OURS_CMD_DEFAULT
    label: str = "ours"
    _proc: subprocess.Popen[bytes] | None = None
    _pid: int | None = None
    _detached: bool = False
    _pids: list[int] = field(default_factory=list)
    _workdir: Path | None = None

    def argv(self, workdir: Path, nb_remote: str, sb_remote: str) -> list[str]:
        words = shlex.split(self.template) if isinstance(self.template, str) else list(self.template)
        subst = {
            "python": sys.executable,
            "nb": nb_remote,
            "sb": sb_remote,
            "log": str(workdir / "ours-northd.log"),
            "pidfile": str(workdir / "ours-northd.pid"),
            "unixctl": str(workdir / "ours-northd.ctl"),
            "workdir": str(workdir),
        }
        return [w.format(**subst) for w in words]

    def start(self, workdir: Path, nb_remote: str, sb_remote: str) -> None:
        argv = self.argv(workdir, nb_remote, sb_remote)
        self._workdir = workdir
        pidfile = workdir / "ours-northd.pid"
        pidfile.unlink(missing_ok=True)
        with open(workdir / "ours-northd.out", "wb") as out:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=workdir,
                start_new_session=True,
            )
        self._pid = self._proc.pid
        self._pids.append(self._pid)
        if "--detach" in argv:
            self._adopt_detached(pidfile)

    def _adopt_detached(self, pidfile: Path) -> None:
        assert self._proc is not None
        if self._proc.wait(timeout=60) != 0 or not pidfile.exists():
            return
        self._detached = True
        self._pid = int(pidfile.read_text().strip())
        self._pids.append(self._pid)

    def alive(self) -> bool:
        if self._detached:
            return self._pid is not None and not process_gone(self._pid)
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        if self._detached and self._pid is not None:
            stop_process(self._pid)
        elif self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)

    def pids(self) -> list[int]:
        return list(self._pids)

    def describe_exit(self) -> str:
        rc = self._proc.returncode if self._proc is not None else None
        return f"{self.label} daemon exited (rc={rc}{self._last_error()}, see ours-northd.out / ours-northd.log)"

    def _last_error(self) -> str:
        """``: <message>`` of the last error our daemon logged (JSON log), if any."""
        if self._workdir is None:
            return ""
        errors = []
        with contextlib.suppress(OSError):
            for line in (self._workdir / "ours-northd.log").read_text().splitlines():
                with contextlib.suppress(ValueError):
                    rec = json.loads(line)
                    if isinstance(rec, dict) and rec.get("level") == "error":
                        errors.append(str(rec.get("error") or rec.get("event")))
        return f": {errors[-1]}" if errors else ""


# --------------------------------------------------------------------------- running one side


@dataclass(slots=True)
class SideRun:
    label: str
    workdir: Path
    settled: bool = False
    settle_seconds: float | None = None  # cold settle: daemon start -> ovn-nbctl --wait=sb sync returned
    error: str | None = None
    pids: list[int] = field(default_factory=list)  # every process started for this side


def _settle(daemon: Daemon, nb_remote: str, timeout: float, tools: Tools = HOST) -> None:
    """``ovn-nbctl --wait=sb sync`` (of ``tools``), failing fast if the daemon dies meanwhile."""
    cmd = tools.cmd(
        "ovn-nbctl", f"--db={tools.remote(nb_remote)}", f"--timeout={math.ceil(timeout)}", "--wait=sb", "sync"
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout + 5
    try:
        while proc.poll() is None:
            if not daemon.alive():
                raise HarnessError(daemon.describe_exit())
            if time.monotonic() > deadline:
                raise HarnessError(f"not settled within {timeout:.0f}s")
            time.sleep(0.005)
        if proc.returncode:
            raise HarnessError(f"ovn-nbctl sync failed: {proc.stderr.read() if proc.stderr else ''}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


# After both sides settled: ``hook(nb_remote, sb_remote)`` run on each side, e.g. ovn-sbctl commands
# standing in for ovn-controller (Service_Monitor status...); the side then settles again.
AfterSettle = Callable[[str, str], None]


@contextlib.contextmanager
def tools_workdir(tools: Tools, workdir: Path) -> Iterator[Path]:
    """``workdir``, usable by ``tools``.  For a chroot's tools: while the side runs, ``workdir`` is a
    symlink to a scratch dir inside the chroot tree (the tools see the real path, the host either);
    afterwards that dir (logs, databases) is moved to ``workdir``, so nothing stays in the chroot."""
    if tools.root is None:
        yield workdir
        return
    scratch = tools.scratch_dir("run-")
    workdir.parent.mkdir(parents=True, exist_ok=True)
    workdir.symlink_to(scratch, target_is_directory=True)
    try:
        yield workdir
    finally:
        workdir.unlink()
        for sock in [*scratch.glob("*.sock"), *scratch.glob("*.ctl")]:
            sock.unlink(missing_ok=True)
        shutil.move(scratch, workdir)


def run_side(
    label: str, daemon: Daemon, seed: Path, workdir: Path, settle_timeout: float,
    after_settle: AfterSettle | None = None, *, tools: Tools = HOST, release: Release = DEFAULT_RELEASE,
) -> tuple[SideRun, SbDump | None]:
    """Serve ``seed`` + an empty SB (``release``'s schemas, ``tools``' ovsdb-server), run ``daemon``
    until settled, dump the SB, stop everything.

    ``after_settle``: run once settled (on this side's NB and SB), then settle again: the
    daemon reacts to SB writes without an NB change, so wait a little and sync twice."""
    with tools_workdir(tools, workdir):
        return _run_side(label, daemon, seed, workdir, settle_timeout, after_settle, tools, release)


def _run_side(
    label: str, daemon: Daemon, seed: Path, workdir: Path, settle_timeout: float,
    after_settle: AfterSettle | None, tools: Tools, release: Release,
) -> tuple[SideRun, SbDump | None]:
    side = SideRun(label, workdir)
    nb = OvsdbServer(workdir, "nb", release.nb_schema, db_file=seed, tools=tools)
    sb = OvsdbServer(workdir, "sb", release.sb_schema, tools=tools)
    dump: SbDump | None = None
    try:
        for server in (nb, sb):
            server.start()
            side.pids.append(server.pid or -1)
        started = time.monotonic()
        try:
            daemon.start(workdir, nb.remote, sb.remote)
            _settle(daemon, nb.remote, settle_timeout, tools)
            side.settled, side.settle_seconds = True, time.monotonic() - started
            if after_settle is not None:
                side.settled = False
                after_settle(nb.remote, sb.remote)
                for _ in range(2):
                    time.sleep(0.3)
                    _settle(daemon, nb.remote, settle_timeout, tools)
                side.settled = True
        except (HarnessError, OSError, subprocess.SubprocessError) as exc:
            side.error = str(exc)
        dump = dump_sb(sb.remote, release.sb_schema)
    finally:
        try:
            daemon.stop()
        finally:
            side.pids += daemon.pids()
            _stop_server(sb)
            _stop_server(nb)
    return side, dump


# --------------------------------------------------------------------------- the whole run


@dataclass(slots=True)
class ParityResult:
    source: str
    reference: SideRun
    ours: SideRun
    comparison: Comparison
    ref_dump: SbDump
    ours_dump: SbDump
    workdir: Path | None = None  # set when the work dir was kept
    release: str = DEFAULT_RELEASE.name
    reference_version: str = ""  # e.g. "ovn-northd 25.03.0-1 (OVN 25.03, Debian trixie chroot ...)"

    @property
    def ok(self) -> bool:
        return self.reference.settled and self.ours.settled and self.comparison.ok

    @property
    def tables(self) -> dict[str, TableDiff]:
        return self.comparison.tables

    @property
    def flows(self) -> FlowDiff | None:
        return self.comparison.flows

    def report(self, examples: int = 10) -> str:
        return format_report(self, examples)


def _make_ours(
    ours: Daemon | None, ours_cmd: Sequence[str] | str | None, reference_both: bool, ref_tools: Tools = HOST
) -> Daemon:
    if ours is not None:
        return ours
    if reference_both:
        return ReferenceDaemon(label="ours(reference)", tools=ref_tools)
    return CommandDaemon(ours_cmd or OURS_CMD_DEFAULT)


def run_parity(
    source: NbSource,
    *,
    ours: Daemon | None = None,
    ours_cmd: Sequence[str] | str | None = None,
    reference_both: bool = False,
    tables: Collection[str] | None = None,
    workdir: Path | None = None,
    keep: bool = False,
    settle_timeout: float = 120.0,
    after_settle: AfterSettle | None = None,
    release: Release | str = DEFAULT_RELEASE,
    from_chroot: bool | None = None,
) -> ParityResult:
    """Run reference (pair A) and ours (pair B) on copies of one NB and compare their SBs.

    ``source``: a callable taking the NB remote (see :func:`workload`, :func:`script`) or an NB
    database file.  ``ours`` overrides ``ours_cmd`` (a :class:`CommandDaemon` template);
    ``reference_both`` runs the reference on both sides (self-test).  A given ``workdir`` is
    never deleted; a temporary one is deleted unless ``keep`` and the run failed.
    ``after_settle(nb_remote, sb_remote)`` runs on both sides once settled (see :func:`run_side`).
    ``release``: the reference's OVN release, its tools from the host or (``from_chroot``, or when the
    host's OVN is another release) its chroot; see :func:`ovn_northd_py.devtools.tools.tools_for`.
    """
    rel = get_release(release) if isinstance(release, str) else release
    try:
        ref_tools = tools_for(rel, from_chroot)
    except ToolsUnavailable as e:
        raise HarnessError(str(e)) from None
    _check_tables(tables, rel.sb_schema)
    own_dir = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="parity-")) if workdir is None else workdir
    wd.mkdir(parents=True, exist_ok=True)
    ok = False
    try:
        result = _run(source, _make_ours(ours, ours_cmd, reference_both, ref_tools), tables, wd, settle_timeout,
                      after_settle, ref_tools)
        ok = result.ok
        if not own_dir or keep and not ok:
            result.workdir = wd
        return result
    except Exception as exc:
        if keep or not own_dir:
            exc.add_note(f"parity work dir kept: {wd}")
        raise
    finally:
        if own_dir and not (keep and not ok):
            shutil.rmtree(wd, ignore_errors=True)


def _run(
    source: NbSource, ours: Daemon, tables: Collection[str] | None, wd: Path, settle_timeout: float,
    after_settle: AfterSettle | None = None, ref_tools: Tools = HOST,
) -> ParityResult:
    rel = ref_tools.release
    seed = build_seed_nb(source, wd, rel.nb_schema)
    ref_side, ref_dump = run_side("reference", ReferenceDaemon(tools=ref_tools), seed, wd / "ref", settle_timeout,
                                  after_settle, tools=ref_tools, release=rel)
    if not ref_side.settled or ref_dump is None:
        raise HarnessError(f"reference {ref_tools.describe()} did not settle: {ref_side.error}")
    ours_tools = ours.tools if isinstance(ours, ReferenceDaemon) else HOST
    ours_side, ours_dump = run_side(ours.label, ours, seed, wd / "ours", settle_timeout, after_settle,
                                    tools=ours_tools, release=rel)
    if ours_dump is None:
        ours_dump = SbDump({}, ref_dump.schema)
    comparison = compare_dumps(ref_dump, ours_dump, tables, random_options=unconfigured_random_options(seed))
    return ParityResult(_describe_source(source), ref_side, ours_side, comparison, ref_dump, ours_dump,
                        release=rel.name, reference_version=ref_tools.describe())


# --------------------------------------------------------------------------- report


def _side_line(side: SideRun) -> str:
    if side.settled and side.settle_seconds is not None:
        return f"  {side.label:<16} cold settle {side.settle_seconds:.3f}s"
    return f"  {side.label:<16} NOT SETTLED: {side.error}"


def _table_line(t: TableDiff) -> str:
    status = "OK  " if t.ok else "FAIL"
    line = f"  {status} {t.table:<22} ref {t.ref_count:>7}  ours {t.ours_count:>7}  matched {t.matched:>7}"
    if t.missing or t.extra or t.differing:
        line += f"  missing {len(t.missing)}  extra {len(t.extra)}  differ {len(t.differing)}"
    return line + ("  (row count only)" if t.count_only else "")


def _stage_line(s: StageDiff) -> str:
    status = "OK  " if s.ok else "FAIL"
    return (
        f"  {status} {s.pipeline:<7} {s.table_id:>2} {s.stage:<28} ref {s.ref_count:>7}  ours {s.ours_count:>7}"
        f"  matched {s.matched:>7}  missing {len(s.missing):>6}  extra {len(s.extra):>6}  {s.percent:6.2f}%"
    )


def _table_details(t: TableDiff, examples: int) -> list[str]:
    lines = [f"  {t.table}:"]
    lines += [f"    missing: {k}" for k in t.missing[:examples]]
    lines += [f"    extra:   {k}" for k in t.extra[:examples]]
    for d in t.differing[:examples]:
        lines += [f"    differ:  {d.key}: {c}: {desc}" for c, desc in d.columns.items()]
    hidden = sum(max(0, len(x) - examples) for x in (t.missing, t.extra, t.differing))
    return lines + ([f"    ... and {hidden} more"] if hidden else [])


def _flow_details(flows: FlowDiff, labels: dict[str, str], examples: int) -> list[str]:
    lines: list[str] = []
    for s in flows.stages:
        if s.ok:
            continue
        lines.append(f"  {s.pipeline} {s.stage}:")
        lines += [f"    missing: {render_flow(f, labels)}" for f in s.missing[:examples]]
        lines += [f"    extra:   {render_flow(f, labels)}" for f in s.extra[:examples]]
        hidden = max(0, len(s.missing) - examples) + max(0, len(s.extra) - examples)
        lines += [f"    ... and {hidden} more"] if hidden else []
    return lines


def format_report(result: ParityResult, examples: int = 10) -> str:
    cmp = result.comparison
    lines = [
        f"Parity: reference vs {result.ours.label} on {result.source}",
        f"Reference: {result.reference_version or 'ovn-northd (host)'}",
        *map(_side_line, (result.reference, result.ours)),
    ]
    shown = [t for t in cmp.tables.values() if t.ref_count or t.ours_count]
    empty = [t.table for t in cmp.tables.values() if not (t.ref_count or t.ours_count)]
    lines += ["Tables:", *map(_table_line, shown)]
    if empty:
        lines.append("  (empty on both sides: " + ", ".join(empty) + ")")
    if cmp.flows is not None:
        f = cmp.flows
        lines += ["Logical flows per stage (expanded over datapaths):", *map(_stage_line, f.stages)]
        lines.append(
            f"  TOTAL ref {f.ref_count}  ours {f.ours_count}  matched {f.matched}  missing {f.missing}"
            f"  extra {f.extra}  {f.percent:.2f}%"
        )
    details = [
        d
        for t in cmp.tables.values()
        if not t.ok or t.missing or t.extra
        for d in _table_details(t, examples)
    ]
    if cmp.flows is not None:
        details += _flow_details(cmp.flows, cmp.labels, examples)
    if details:
        lines += [f"Differences (first {examples} of each):", *details]
    if result.workdir is not None:
        lines.append(f"work dir: {result.workdir}")
    verdict = "PARITY" if cmp.ok else "DIFFERENT"
    unsettled = [s.label for s in (result.reference, result.ours) if not s.settled]
    lines.append("RESULT: " + verdict + (f" (NOT SETTLED: {', '.join(unsettled)})" if unsettled else ""))
    return "\n".join(lines)


def assert_parity(result: ParityResult, examples: int = 20) -> None:
    """For tests: raise AssertionError carrying the report unless every compared table is equal."""
    if not result.ok:
        raise AssertionError("\n" + result.report(examples))
