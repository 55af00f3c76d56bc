"""The flows of one ACL on one switch: ``ls_{in,out}_acl``, ``ls_in_acl_after_lb``, ``ls_{in,out}_pre_acl``.

Owner ``("acl", acl uuid, switch key)``, stage-hint the ACL's uuid.  Observed on the
reference (23.03; ``man ovn-northd``, "ACLs" tables, describes the older actions):

* stage: ``from-lport`` -> ``ls_in_acl``, or ``ls_in_acl_after_lb`` with
  ``options:apply-after-lb=true``; ``to-lport`` -> ``ls_out_acl`` (the option is
  ignored); priority = ACL priority + 1000;
* log (``log=true``): ``log(name="N", severity=S, verdict=V, meter="M"); `` before
  the verdict; name and meter only when set, severity defaults to ``info``, verdict
  ``allow`` for the three allow actions; a *fair* meter is named
  ``M__<acl uuid>`` (one SB Meter per ACL);
* label: only an allow/allow-related ACL with a non-zero label on a stateful
  switch loads it (``reg0[13] = 1; reg3 = L;``);
* on a switch that is not stateful (no allow-related ACL, no LB VIP) the match is
  used as is: allow* -> ``next;``, drop -> ``/* drop */``, reject -> the reject action;
* on a stateful switch:

  - allow, allow-related: ``reg0[7] == 1 && (M)`` commits (``reg0[1] = 1;``),
    ``reg0[8] == 1 && (M)`` just passes (commits too when labelled);
  - allow-stateless: ``M`` -> ``next;``, plus ``M`` -> ``reg0[16] = 1; next;`` in
    the direction's pre-ACL stage (conntrack is skipped);
  - drop: ``reg0[9] == 1 && (M)`` drops, ``reg0[10] == 1 && (M)`` also marks the
    connection blocked (``ct_commit { ct_mark.blocked = 1; }; ``);
  - reject: the same two hints written ``(reg0[9] == 1) && M`` (no parentheses
    around M), log first, two spaces before ``reg0 = 0``;
  - allow/allow-related with log, a label and ``options:log-related=true``: two
    priority-65533 flows in the *other* direction's ACL stage log the replies and
    related traffic of the connection (``ct_label.label == L``);

* reject: ``reg0 = 0; reject { ...; outport <-> inport; next(pipeline=P,table=T); };``
  re-entering at ``ls_out_qos_mark`` (from-lport) or ``ls_in_l2_lkup`` (to-lport), with
  the switch's Copp ``reject`` meter as controller meter when that meter exists;
* ``use_ct_inv_match=false`` drops ``!ct.inv && `` from the log-related matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..lflow.stages import (
    LS_IN_ACL,
    LS_IN_ACL_AFTER_LB,
    LS_IN_L2_LKUP,
    LS_IN_PRE_ACL,
    LS_OUT_ACL,
    LS_OUT_PRE_ACL,
    LS_OUT_QOS_MARK,
    Stage,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Northd
from ..ovsdb.columns import opt
from .acl_index import smap_bool, switch_acl_rows, switch_acls
from .chassis_features import ALL_FEATURES, ChassisFeatures
from .context import FlowCtx, hint
from .copp import copp_meter
from .owners import acl_owner
from .registers import (
    REG_ACL_LABEL,
    REGBIT_ACL_HINT_ALLOW,
    REGBIT_ACL_HINT_ALLOW_NEW,
    REGBIT_ACL_HINT_BLOCK,
    REGBIT_ACL_HINT_DROP,
    REGBIT_ACL_LABEL,
    REGBIT_ACL_STATELESS,
    REGBIT_CONNTRACK_COMMIT,
)

ACL_PRIORITY_OFFSET: Final = 1000
LOG_RELATED_PRIORITY: Final = 65533
ALLOW_ACTIONS: Final = frozenset({"allow", "allow-related", "allow-stateless"})
CT_BLOCK: Final = "ct_commit { ct_mark.blocked = 1; }; "

@dataclass(frozen=True, slots=True)
class AclFlow:
    stage: Stage
    priority: int
    match: str
    actions: str


def acl_stage(acl: Any) -> Stage:
    if acl.direction == "from-lport":
        return LS_IN_ACL_AFTER_LB if smap_bool(acl.options, "apply-after-lb", False) else LS_IN_ACL
    return LS_OUT_ACL


def reject_action(ingress: bool, profile: FlowProfile = DEFAULT_PROFILE) -> str:
    if ingress:
        target = f"pipeline=egress,table={profile.table_id(LS_OUT_QOS_MARK)}"
    else:
        target = f"pipeline=ingress,table={profile.table_id(LS_IN_L2_LKUP)}"
    return (
        "reg0 = 0; reject { /* eth.dst <-> eth.src; ip.dst <-> ip.src; is implicit. */ "
        f"outport <-> inport; next({target}); }};"
    )


def log_action(acl: Any, acl_key: str, fair_meters: frozenset[str]) -> str:
    """``log(...); `` for an ACL with ``log=true``, else ""."""
    if not acl.log:
        return ""
    verdict = "allow" if acl.action in ALLOW_ACTIONS else acl.action
    parts: list[str] = []
    name = opt(acl.name)
    if name is not None:
        parts.append(f'name="{name}"')
    parts.append(f"severity={opt(acl.severity) or 'info'}")
    parts.append(f"verdict={verdict}")
    meter = opt(acl.meter)
    if meter:
        parts.append(f'meter="{fair_meter_name(meter, acl_key) if meter in fair_meters else meter}"')
    return f"log({', '.join(parts)}); "


def fair_meter_name(meter: str, acl_key: str) -> str:
    """The per-ACL copy of a fair meter (a SB Meter row of its own)."""
    return f"{meter}__{acl_key}"


def acl_flows(
    acl: Any, acl_key: str, stateful: bool, use_ct_inv_match: bool, fair_meters: frozenset[str],
    profile: FlowProfile = DEFAULT_PROFILE, features: ChassisFeatures = ALL_FEATURES,
) -> tuple[AclFlow, ...]:
    """The flows of ACL ``acl`` on a switch that is (not) ``stateful`` (``features``: what every
    chassis supports, ``ct_label.blocked`` instead of ``ct_mark.blocked`` for old ones)."""
    ct_block = CT_BLOCK if features.ct_no_masked_label else CT_BLOCK.replace("ct_mark.", "ct_label.")
    ingress = acl.direction == "from-lport"
    stage = acl_stage(acl)
    prio = acl.priority + ACL_PRIORITY_OFFSET
    m = acl.match
    action = acl.action
    log = log_action(acl, acl_key, fair_meters)
    if action == "reject":
        reject = reject_action(ingress, profile)
        if not stateful:
            return (AclFlow(stage, prio, m, log + reject),)
        return (
            AclFlow(stage, prio, f"({REGBIT_ACL_HINT_DROP} == 1) && {m}", log + reject),
            AclFlow(stage, prio, f"({REGBIT_ACL_HINT_BLOCK} == 1) && {m}", f"{log}{ct_block} {reject}"),
        )
    if action == "drop" or action not in ALLOW_ACTIONS:
        if not stateful:
            return (AclFlow(stage, prio, m, log + "/* drop */"),)
        return (
            AclFlow(stage, prio, f"{REGBIT_ACL_HINT_DROP} == 1 && ({m})", log + "/* drop */"),
            AclFlow(stage, prio, f"{REGBIT_ACL_HINT_BLOCK} == 1 && ({m})", f"{ct_block}{log}/* drop */"),
        )
    if not stateful:
        return (AclFlow(stage, prio, m, log + "next;"),)
    if action == "allow-stateless":
        pre = LS_IN_PRE_ACL if ingress else LS_OUT_PRE_ACL
        return (
            AclFlow(pre, prio, m, f"{REGBIT_ACL_STATELESS} = 1; next;"),
            AclFlow(stage, prio, m, log + "next;"),
        )
    label = acl.label
    commit = f"{REGBIT_CONNTRACK_COMMIT} = 1; "
    load_label = f"{REGBIT_ACL_LABEL} = 1; {REG_ACL_LABEL} = {label}; " if label else ""
    flows = [
        AclFlow(stage, prio, f"{REGBIT_ACL_HINT_ALLOW_NEW} == 1 && ({m})", f"{commit}{load_label}{log}next;"),
        AclFlow(
            stage,
            prio,
            f"{REGBIT_ACL_HINT_ALLOW} == 1 && ({m})",
            f"{commit}{load_label}{log}next;" if label else f"{log}next;",
        ),
    ]
    if log and label and smap_bool(acl.options, "log-related", False):
        reply_stage = LS_OUT_ACL if ingress else LS_IN_ACL
        inv = "!ct.inv && " if use_ct_inv_match else ""
        related = f"{features.ct('blocked')} == 0 && ct_label.label == {label}"
        flows += [
            AclFlow(reply_stage, LOG_RELATED_PRIORITY, f"!ct.est && ct.rel && !ct.new && {inv}{related}", f"{log}next;"),
            AclFlow(
                reply_stage, LOG_RELATED_PRIORITY, f"ct.est && !ct.rel && !ct.new && {inv}ct.rpl && {related}",
                f"{log}next;",
            ),
        ]
    return tuple(flows)


def _flows_for(acl: Any, acl_key: str, stateful: bool, ctx: FlowCtx) -> tuple[AclFlow, ...]:
    idx = ctx.acl
    kind = "acl_flows_stateful" if stateful else "acl_flows"
    return ctx.cached(
        kind, acl_key, lambda: acl_flows(acl, acl_key, stateful, idx.use_ct_inv_match, idx.fair_meters, ctx.profile,
                                           ctx.features)
    )


def build_acl_flows(acl: Any, dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of ACL ``acl`` on switch ``dp`` (owner ``("acl", acl uuid, dp.key)``)."""
    key = str(acl.uuid)
    owner = acl_owner(key, dp.key)
    h = hint(key)
    reject_meter = copp_meter(dp, ctx, "reject") if acl.action == "reject" else None
    for f in _flows_for(acl, key, switch_acls(dp, ctx).stateful, ctx):
        meter = reject_meter if f.stage is not LS_IN_PRE_ACL and f.stage is not LS_OUT_PRE_ACL else None
        table.add(dp.index, f.stage, f.priority, f.match, f.actions, hint=h, controller_meter=meter, owner=owner)
    ctx.acl.mark_built(key, dp.key)


def build_switch_acl_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of every ACL applied to switch ``dp`` (recorded in ``ctx.acl`` for the handlers)."""
    ctx.acl.ls_acls[dp.key] = frozenset(str(a.uuid) for a in dp.nb.acls)
    ctx.acl.acl_facts[dp.key] = switch_acls(dp, ctx)
    for acl in switch_acl_rows(dp, ctx).values():
        build_acl_flows(acl, dp, ctx, table)


def remove_acl_flows(acl_key: str, dp_key: str, ctx: FlowCtx, table: FlowTable) -> None:
    table.remove_owner(acl_owner(acl_key, dp_key))
    ctx.acl.mark_removed(acl_key, dp_key)


def build_all_acl_flows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    """Every ACL's flows, switch by switch (a full build)."""
    for dp in nd.by_index:
        if dp.is_switch:
            build_switch_acl_flows(dp, ctx, table)
