"""QoS rules of a switch: ``ls_{in,out}_qos_mark`` and ``ls_{in,out}_qos_meter``.

Owner ``("qos", qos uuid, switch key)`` (one owner per QoS row per switch that lists it in
``Logical_Switch.qos_rules``), stage-hint the QoS row's uuid.  From ``man ovn-nb`` (QoS
table) and ``man ovn-northd`` (Ingress Tables 9-10, Egress Tables 5-6), checked on the
reference (23.03):

* direction ``from-lport`` -> the ingress stages, ``to-lport`` -> the egress stages;
* ``action:dscp=D`` -> a flow in the mark stage at the QoS priority (no offset), the
  QoS match as is: ``ip.dscp = D; next;``;
* ``bandwidth:rate=R`` -> a flow in the meter stage: ``set_meter(R); next;``, with
  ``bandwidth:burst=B`` too ``set_meter(R, B); next;``; a burst without a rate
  gives no flow;
* a row with neither gives no flow.  The match is not checked (the reference writes
  it unchanged, even when ovn-controller cannot parse it: matches, like ACL
  matches, are left to ovn-controller), so a QoS row cannot be malformed beyond what
  the schema already rejects.

The priority-0 ``next;`` flows of the four stages are in :mod:`.defaults`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..lflow.stages import (
    LS_IN_QOS,
    LS_IN_QOS_MARK,
    LS_IN_QOS_METER,
    LS_OUT_QOS,
    LS_OUT_QOS_MARK,
    LS_OUT_QOS_METER,
    Stage,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Northd
from .context import FlowCtx, hint
from .owners import qos_owner

QOS_FLOWS: Final = "qos_flows"  # FlowCtx memo kind: a QoS row's flows, keyed by its uuid
QOS_INDEX: Final = "qos_index"  # FlowCtx memo kind: the QosIndex (one per FlowCtx, key "")

@dataclass(slots=True)
class QosIndex:
    """Which (QoS row, switch) pairs have flows in the table, for the incremental handlers.

    It lives in the FlowCtx memo (kind :data:`QOS_INDEX`, key ``""``, never forgotten by an
    entity key), so it is made afresh with every full build, like the FlowTable itself.
    """

    built: dict[str, set[str]] = field(default_factory=dict)  # QoS uuid -> switch keys
    dp_built: dict[str, set[str]] = field(default_factory=dict)  # switch key -> QoS uuids

    def mark_built(self, qos_key: str, dp_key: str) -> None:
        self.built.setdefault(qos_key, set()).add(dp_key)
        self.dp_built.setdefault(dp_key, set()).add(qos_key)

    def mark_removed(self, qos_key: str, dp_key: str) -> None:
        for index, a, b in ((self.built, qos_key, dp_key), (self.dp_built, dp_key, qos_key)):
            s = index.get(a)
            if s is not None:
                s.discard(b)
                if not s:
                    del index[a]


def qos_index(ctx: FlowCtx) -> QosIndex:
    return ctx.cached(QOS_INDEX, "", QosIndex)


@dataclass(frozen=True, slots=True)
class QosFlow:
    stage: Stage
    priority: int
    match: str
    actions: str


def qos_flows(qos: Any, profile: FlowProfile = DEFAULT_PROFILE) -> tuple[QosFlow, ...]:
    """The flows of QoS row ``qos`` (the same on every switch listing it)."""
    ingress = qos.direction == "from-lport"
    if profile.has("ls_qos_merged"):
        return _merged_qos_flows(qos, LS_IN_QOS if ingress else LS_OUT_QOS)
    mark_stage, meter_stage = (LS_IN_QOS_MARK, LS_IN_QOS_METER) if ingress else (LS_OUT_QOS_MARK, LS_OUT_QOS_METER)
    out: list[QosFlow] = []
    action = dict(qos.action)
    if "dscp" in action:
        out.append(QosFlow(mark_stage, qos.priority, qos.match, f"ip.dscp = {action['dscp']}; next;"))
    bandwidth = dict(qos.bandwidth)
    rate = bandwidth.get("rate")
    if rate is not None:
        burst = bandwidth.get("burst")
        meter = f"set_meter({rate})" if burst is None else f"set_meter({rate}, {burst})"
        out.append(QosFlow(meter_stage, qos.priority, qos.match, f"{meter}; next;"))
    return tuple(out)


def _merged_qos_flows(qos: Any, stage: Stage) -> tuple[QosFlow, ...]:
    """Behaviour ``ls_qos_merged`` (OVN 25.03): one flow in ``ls_{in,out}_qos`` per row, carrying
    the meter, the DSCP marking then the packet mark (``action:mark``, a key 25.03's schema adds):
    ``set_meter(R[, B]); ip.dscp = D; pkt.mark = M; next;``.  Observed: every row gets its flow,
    one with none of these (no rate: a burst alone, or neither column) just ``next;``."""
    action = dict(qos.action)
    bandwidth = dict(qos.bandwidth)
    parts: list[str] = []
    rate = bandwidth.get("rate")
    if rate is not None:
        burst = bandwidth.get("burst")
        parts.append(f"set_meter({rate}); " if burst is None else f"set_meter({rate}, {burst}); ")
    if "dscp" in action and bad_dscp(qos) is None:
        parts.append(f"ip.dscp = {action['dscp']}; ")
    if "mark" in action:
        parts.append(f"pkt.mark = {action['mark']}; ")
    return (QosFlow(stage, qos.priority, qos.match, "".join(parts) + "next;"),)


MAX_DSCP: Final = 63


def bad_dscp(qos: Any) -> int | None:
    """``action:dscp`` above 63 (the schema allows any 32-bit value): the reference (25.03) warns
    and leaves the marking out of the row's flow (observed)."""
    d = dict(qos.action).get("dscp")
    return int(d) if d is not None and int(d) > MAX_DSCP else None


def switch_qos_keys(dp: Datapath) -> frozenset[str]:
    """The uuids (text) of the QoS rows switch ``dp`` lists."""
    return frozenset(str(q.uuid) for q in getattr(dp.nb, "qos_rules", ()))


def build_qos_flows(qos: Any, dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of QoS row ``qos`` on switch ``dp`` (owner ``("qos", qos uuid, dp.key)``)."""
    key = str(qos.uuid)
    owner = qos_owner(key, dp.key)
    h = hint(key)
    if ctx.profile.has("ls_qos_merged") and (d := bad_dscp(qos)) is not None:
        ctx.warn("qos_bad_dscp", "QoS", qos.uuid, f"Bad 'dscp' value {d} (0..{MAX_DSCP}): no DSCP marking")
    for f in ctx.cached(QOS_FLOWS, key, lambda: qos_flows(qos, ctx.profile)):
        table.add(dp.index, f.stage, f.priority, f.match, f.actions, hint=h, owner=owner)
    qos_index(ctx).mark_built(key, dp.key)


def remove_qos_flows(qos_key: str, dp_key: str, ctx: FlowCtx, table: FlowTable) -> None:
    table.remove_owner(qos_owner(qos_key, dp_key))
    qos_index(ctx).mark_removed(qos_key, dp_key)


def build_switch_qos_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of every QoS row of switch ``dp``."""
    for qos in getattr(dp.nb, "qos_rules", ()):
        build_qos_flows(qos, dp, ctx, table)


def build_all_qos_flows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    """Every QoS row's flows, switch by switch (a full build)."""
    for dp in nd.by_index:
        if dp.is_switch:
            build_switch_qos_flows(dp, ctx, table)
