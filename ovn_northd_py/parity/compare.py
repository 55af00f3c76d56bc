"""Comparing two SB dumps with SB row uuids mapped to stable keys.

Datapaths are keyed by NB uuid, ports by name, other rows by their natural key (or content);
logical flows are expanded over their datapaths and compared per stage.  Entry point:
:func:`compare_dumps`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.servers import SB_SCHEMA

from .dump import MapVal, Ref, Row, SbDump, SetVal, _datapath_key, _refs, _scalar, _sort_key, load_schema

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


# --------------------------------------------------------------------------- stable keys


_RTR_LB_NAME = re.compile(r"_rtr_lb_\d+_")


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

# (datapath NB uuid, pipeline, table_id, priority, match, actions, controller_meter [+ tags], stage-name)
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
        tags = row["tags"].as_dict() if "tags" in row else {}
        if tags:  # (compared with the meter: e.g. tags:in_out_port, which ovn-controller reads)
            meter += "".join(f" tags:{k}={v}" for k, v in sorted(tags.items()))
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
    if meter.startswith(" tags:"):
        return text + meter
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
