"""The consistency check: does the incrementally maintained state equal a full recompute?

Run after SB has been written (nothing in flight).  A shadow recompute builds the
model and the flow table from scratch, from the same IDL contents, and we compare:

1. the model (datapaths, ports and everything written to Port_Binding);
2. the flow table (every flow with its datapath set);
3. what SB holds: a full diff of the raw tables (flows, groups, load balancers)
   against the cache must be empty, and so must a full diff of the IDL-written
   tables, done in a transaction that is then aborted.

The shadow never touches the live graph: the SB sync of step 3 runs on a graph of its own
(:func:`shadow_sb_sync`: its own input nodes, row indexes and feature state), built for the check
and thrown away; the live nodes' data and their features' state are only read.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import ovs.db.idl

from ..flows import build_lflows
from ..flows.context import flow_ctx_from_nb
from ..flows.owners import new_flow_table
from ..lflow.table import FlowTable
from ..northd.build import build_northd
from ..northd.model import Northd
from ..sync.datapaths import dp_uuids
from ..sync.lflow_desired import desired_flows
from ..sync.lflows import FlowCache, plan_sync
from ..sync.load_balancers import desired_sb_lbs
from ..sync.rows import SyncStats
from .engine import EngineCtx
from .graph import Graph, build_graph


@dataclass(slots=True)
class CheckResult:
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def _port_view(nd: Northd) -> dict[str, tuple[Any, ...]]:
    return {
        p.name: (p.dp.key, p.kind, p.tunnel_key, p.sb_type, tuple(sorted(p.options.items())), tuple(p.mac),
                 tuple(p.port_security), p.parent_port, p.tag, tuple(sorted(p.external_ids.items())),
                 tuple(p.nat_addresses), p.ha_group, p.enabled, p.has_unknown, p.dynamic_addresses)
        for p in nd.ports.values()
    }


def _flow_view(table: FlowTable, nd: Northd) -> dict[tuple[Any, ...], frozenset[str]]:
    keys = [dp.key if dp is not None else "" for dp in nd.slots]
    return {
        (f.stage.name, f.priority, f.match, f.actions, f.controller_meter): frozenset(keys[i] for i in f.datapaths)
        for f in table.flows()
    }


def _diff_dicts(what: str, a: dict[Any, Any], b: dict[Any, Any], out: list[str], limit: int = 5) -> None:
    n = 0
    for k in a.keys() | b.keys():
        if a.get(k) != b.get(k):
            n += 1
            if n <= limit:
                out.append(f"{what} {k!r}: incremental={a.get(k)!r} recompute={b.get(k)!r}")
    if n > limit:
        out.append(f"{what}: {n - limit} more differences")


def shadow_sb_sync(ctx: EngineCtx, nd: Northd, graph: Graph, txn: Any) -> SyncStats:
    """A full SB sync of model ``nd`` into ``txn`` (which the caller aborts), by the sb_sync node of a
    throw-away graph of its own (fresh feature state): the live graph is only read (its global
    options).  Returns what the sync would write."""
    shadow = build_graph(ctx.nb, ctx.sb)
    shadow.northd.data = nd
    shadow.northd.gopts = copy.copy(graph.northd.gopts)
    sctx = EngineCtx(ctx.nb, ctx.sb, ctx.warn, sb_txn=txn, profile=ctx.profile, stats=SyncStats())
    shadow.sb_sync.recompute(sctx)
    return sctx.stats


def check_consistency(graph: Graph, ctx: EngineCtx, cache: FlowCache) -> CheckResult:
    res = CheckResult()
    nb, sb = ctx.nb, ctx.sb
    northd = graph.northd
    # 1. The model, rebuilt from scratch (with a copy of the key state: the shadow must not allocate).
    gopts = northd.gopts
    shadow = build_northd(nb, sb, copy.deepcopy(northd.keys), _Silent(),  # type: ignore[arg-type]
                          mac_prefix=gopts.mac_prefix if gopts else "", profile=ctx.profile)
    _diff_dicts("datapath", {d.key: (d.tunnel_key, d.kind, d.name) for d in northd.data.by_index},
                {d.key: (d.tunnel_key, d.kind, d.name) for d in shadow.by_index}, res.differences)
    _diff_dicts("port", _port_view(northd.data), _port_view(shadow), res.differences)
    # 2. The flows.
    table = new_flow_table(len(shadow.slots))
    fctx = flow_ctx_from_nb(shadow, nb, mac_prefix=gopts.mac_prefix if gopts else "",
                            svc_monitor_mac=gopts.svc_monitor_mac if gopts else "", sb=sb, profile=ctx.profile,
                            feature_latch=graph.lflow.feature_latch)
    build_lflows(shadow, fctx, table)
    _diff_dicts("flow", _flow_view(graph.lflow.table, northd.data), _flow_view(table, shadow), res.differences)
    # 3a. SB raw tables: a full diff against the cache must be empty.
    dp_uuid = dp_uuids(sb)
    plan = plan_sync(cache, desired_flows(table, shadow, dp_uuid, fctx.profile), desired_sb_lbs(shadow, dp_uuid, fctx.profile),
                     compare_hints=False)
    if plan:
        res.differences.append(
            f"SB flows: a full diff wants {plan.inserted} inserts, {plan.updated} updates, {plan.deleted} deletes; "
            f"first op: {str(plan.ops[0])[:300]}"
        )
    # 3b. SB tables written through the IDL: a full sync in a throw-away transaction must change nothing.
    txn = ovs.db.idl.Transaction(sb.idl)
    try:
        stats = shadow_sb_sync(ctx, shadow, graph, txn)
        if stats.total:
            res.differences.append(
                f"SB tables: a full sync would insert {stats.inserted}, update {stats.updated}, "
                f"delete {stats.deleted}"
            )
    finally:
        txn.abort()
    return res


class _Silent:
    """A WarnOnce stand-in: the shadow recompute must not log (the real run already did)."""

    count = 0

    def warn(self, *_a: Any, **_kw: Any) -> None:
        pass
