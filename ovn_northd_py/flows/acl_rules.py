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

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..lflow.stages import (
    LS_IN_ACL,
    LS_IN_ACL_AFTER_LB,
    LS_IN_ACL_AFTER_LB_EVAL,
    LS_IN_ACL_EVAL,
    LS_IN_L2_LKUP,
    LS_IN_PRE_ACL,
    LS_OUT_ACL,
    LS_OUT_ACL_EVAL,
    LS_OUT_PRE_ACL,
    LS_OUT_QOS,
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
    REG_ACL_TIER,
    REG_OBS_COLLECTOR_ID,
    REG_OBS_DOMAIN_ID,
    REG_OBS_POINT_ID,
    REG_OBS_STAGE,
    REGBIT_ACL_HINT_ALLOW,
    REGBIT_ACL_HINT_ALLOW_NEW,
    REGBIT_ACL_HINT_BLOCK,
    REGBIT_ACL_HINT_DROP,
    REGBIT_ACL_LABEL,
    REGBIT_ACL_STATELESS,
    REGBIT_ACL_VERDICT_ALLOW,
    REGBIT_ACL_VERDICT_DROP,
    REGBIT_ACL_VERDICT_REJECT,
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


def reject_reentry_stage(profile: FlowProfile = DEFAULT_PROFILE) -> Stage:
    """The egress stage a from-lport reject re-enters: the first QoS stage."""
    return LS_OUT_QOS if profile.has("ls_qos_merged") else LS_OUT_QOS_MARK


def reject_action(ingress: bool, profile: FlowProfile = DEFAULT_PROFILE) -> str:
    if ingress:
        target = f"pipeline=egress,table={profile.table_id(reject_reentry_stage(profile))}"
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


# Behaviour "acl_eval_action": where each 23.03 ACL stage's flows go, and the observation stage
# number (reg8[19..20]) a labelled ACL of that stage records.
EVAL_STAGE: Final = MappingProxyType(
    {LS_IN_ACL: LS_IN_ACL_EVAL, LS_IN_ACL_AFTER_LB: LS_IN_ACL_AFTER_LB_EVAL, LS_OUT_ACL: LS_OUT_ACL_EVAL}
)
OBS_STAGE: Final = MappingProxyType({LS_IN_ACL_EVAL: 0, LS_IN_ACL_AFTER_LB_EVAL: 1, LS_OUT_ACL_EVAL: 2})
CT_BLOCK_EVAL: Final = "ct_commit { ct_mark.blocked = 1; ct_label.obs_point_id = 0; }; "


def acl_tier(acl: Any) -> int:
    """The ACL's tier (NB 7.11's ``tier`` column; 0 without it)."""
    return int(getattr(acl, "tier", 0) or 0)


def switch_acl_tiers(dp: Datapath, ctx: FlowCtx) -> Mapping[Stage, int]:
    """Behaviour ``acl_eval_action``: the highest ACL tier of each eval stage of switch ``dp``
    (stages without a tiered ACL are left out)."""
    tiers: dict[Stage, int] = {}
    for a in switch_acl_rows(dp, ctx).values():
        t = acl_tier(a)
        if t:
            st = EVAL_STAGE[acl_stage(a)]
            tiers[st] = max(t, tiers.get(st, 0))
    return MappingProxyType(tiers)


def acl_eval_flows(
    acl: Any, acl_key: str, stateful: bool, use_ct_inv_match: bool, fair_meters: frozenset[str],
    tiered: bool = False, commit_new_in_hint: bool = False,
) -> tuple[AclFlow, ...]:
    """Behaviour ``acl_eval_action`` (OVN 25.03): the ACL's flows set a verdict bit (reg8[16] allow,
    reg8[17] drop, reg8[18] reject) in ``ls_*_acl_eval`` and go on; ``ls_*_acl_action`` acts on it
    (:func:`.ls_acl.build_ls_acl_eval_stage_flows`).  Observed on the reference:

    * the match is always parenthesised: ``(M)``, or ``reg0[N] == 1 && (M)`` with the hints of a
      stateful switch (reject included);
    * actions: ``log(...); `` first, then the verdict bit, then (stateful) the commit hint for
      allow / allow-related (``reg0[1] = 1; ``), then the label, then the blocked commit of drop /
      reject on ``reg0[10]`` (``ct_commit { ct_mark.blocked = 1; ct_label.obs_point_id = 0; }; ``),
      then ``next;``;
    * a label (non-zero, stateful switch) is loaded for every action: ``reg0[13] = 1; reg3 = L;
      reg9 = L; reg8[0..7] = 0; reg8[8..15] = 0; reg8[19..20] = S;`` with S the observation stage
      (0 ingress, 1 after LB, 2 egress);
    * log-related flows (65533) set the allow bit;
    * ``pass`` sets no verdict: ``(M)`` -> ``next;`` (no hints even on a stateful switch);
    * tiers (``tiered``: an ACL of the same eval stage has a tier): every match starts with
      ``reg8[30..31] == T && `` (T the ACL's tier, 0 included);
    * behaviour ``acl_hint_commits_new`` (26.03, ``commit_new_in_hint``): the hint of a new
      connection already set the commit bit, so the allow-new flow (``reg0[7] == 1``) sets none.
    """
    ingress = acl.direction == "from-lport"
    stage = EVAL_STAGE[acl_stage(acl)]
    prio = acl.priority + ACL_PRIORITY_OFFSET
    tier = f"{REG_ACL_TIER} == {acl_tier(acl)} && " if tiered else ""
    m = f"({acl.match})"
    action = acl.action
    log = log_action(acl, acl_key, fair_meters)
    if action == "pass":
        return (AclFlow(stage, prio, f"{tier}{m}", f"{log}next;"),)
    m = f"{tier}{m}" if not stateful or action == "allow-stateless" else m
    if action in ALLOW_ACTIONS:
        verdict = f"{REGBIT_ACL_VERDICT_ALLOW} = 1; "
    elif action == "reject":
        verdict = f"{REGBIT_ACL_VERDICT_REJECT} = 1; "
    else:
        verdict = f"{REGBIT_ACL_VERDICT_DROP} = 1; "
    if not stateful:
        return (AclFlow(stage, prio, m, f"{log}{verdict}next;"),)
    label = acl.label
    load_label = (
        f"{REGBIT_ACL_LABEL} = 1; {REG_ACL_LABEL} = {label}; {REG_OBS_POINT_ID} = {label}; "
        f"{REG_OBS_DOMAIN_ID} = 0; {REG_OBS_COLLECTOR_ID} = 0; {REG_OBS_STAGE} = {OBS_STAGE[stage]}; "
        if label else ""
    )
    if action == "allow-stateless":
        pre = LS_IN_PRE_ACL if ingress else LS_OUT_PRE_ACL
        return (
            AclFlow(pre, prio, acl.match, f"{REGBIT_ACL_STATELESS} = 1; next;"),
            AclFlow(stage, prio, m, f"{log}{verdict}{load_label}next;"),
        )
    if action not in ALLOW_ACTIONS:
        return (
            AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_DROP} == 1 && {m}", f"{log}{verdict}{load_label}next;"),
            AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_BLOCK} == 1 && {m}",
                    f"{log}{verdict}{load_label}{CT_BLOCK_EVAL}next;"),
        )
    commit = f"{REGBIT_CONNTRACK_COMMIT} = 1; "
    flows = [
        AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_ALLOW_NEW} == 1 && {m}",
                f"{log}{verdict}{'' if commit_new_in_hint else commit}{load_label}next;"),
        AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_ALLOW} == 1 && {m}",
                f"{log}{verdict}{commit}{load_label}next;" if label else f"{log}{verdict}next;"),
    ]
    if log and label and smap_bool(acl.options, "log-related", False):
        reply_stage = LS_OUT_ACL_EVAL if ingress else LS_IN_ACL_EVAL
        inv = "!ct.inv && " if use_ct_inv_match else ""
        related = f"ct_mark.blocked == 0 && ct_label.label == {label}"
        allow = f"{log}{REGBIT_ACL_VERDICT_ALLOW} = 1; next;"
        flows += [
            AclFlow(reply_stage, LOG_RELATED_PRIORITY, f"!ct.est && ct.rel && !ct.new && {inv}{related}", allow),
            AclFlow(reply_stage, LOG_RELATED_PRIORITY,
                    f"ct.est && !ct.rel && !ct.new && {inv}ct.rpl && {related}", allow),
        ]
    return tuple(flows)


def acl_flows(
    acl: Any, acl_key: str, stateful: bool, use_ct_inv_match: bool, fair_meters: frozenset[str],
    profile: FlowProfile = DEFAULT_PROFILE, tiered: bool = False, features: ChassisFeatures = ALL_FEATURES,
) -> tuple[AclFlow, ...]:
    """The flows of ACL ``acl`` on a switch that is (not) ``stateful`` (``features``: what every
    chassis supports, ``ct_label.blocked`` instead of ``ct_mark.blocked`` for old ones)."""
    if profile.has("acl_eval_action"):
        return acl_eval_flows(acl, acl_key, stateful, use_ct_inv_match, fair_meters, tiered,
                              profile.has("acl_hint_commits_new"))
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


def _flows_for(acl: Any, acl_key: str, stateful: bool, ctx: FlowCtx, tiered: bool = False) -> tuple[AclFlow, ...]:
    idx = ctx.acl
    kind = ("acl_flows_stateful" if stateful else "acl_flows") + ("_tiered" if tiered else "")
    return ctx.cached(
        kind, acl_key,
        lambda: acl_flows(acl, acl_key, stateful, idx.use_ct_inv_match, idx.fair_meters, ctx.profile, tiered,
                          ctx.features),
    )


def build_acl_flows(
    acl: Any, dp: Datapath, ctx: FlowCtx, table: FlowTable, tiers: Mapping[Stage, int] | None = None
) -> None:
    """The flows of ACL ``acl`` on switch ``dp`` (owner ``("acl", acl uuid, dp.key)``); ``tiers``: the
    switch's :func:`switch_acl_tiers` when the caller has them."""
    key = str(acl.uuid)
    owner = acl_owner(key, dp.key)
    h = hint(key)
    tiered = False
    if ctx.profile.has("acl_eval_action"):
        if tiers is None:
            tiers = switch_acl_tiers(dp, ctx)
        tiered = EVAL_STAGE[acl_stage(acl)] in tiers
    # 25.03 (acl_eval_action): the reject itself is in ls_*_acl_action, with the switch's meter.
    reject = acl.action == "reject" and not ctx.profile.has("acl_eval_action")
    reject_meter = copp_meter(dp, ctx, "reject") if reject else None
    for f in _flows_for(acl, key, switch_acls(dp, ctx).stateful, ctx, tiered):
        meter = reject_meter if f.stage is not LS_IN_PRE_ACL and f.stage is not LS_OUT_PRE_ACL else None
        table.add(dp.index, f.stage, f.priority, f.match, f.actions, hint=h, controller_meter=meter, owner=owner)
    ctx.acl.mark_built(key, dp.key)


def build_switch_acl_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of every ACL applied to switch ``dp`` (recorded in ``ctx.acl`` for the handlers)."""
    ctx.acl.ls_acls[dp.key] = frozenset(str(a.uuid) for a in dp.nb.acls)
    ctx.acl.acl_facts[dp.key] = switch_acls(dp, ctx)
    tiers = switch_acl_tiers(dp, ctx) if ctx.profile.has("acl_eval_action") else None
    for acl in switch_acl_rows(dp, ctx).values():
        build_acl_flows(acl, dp, ctx, table, tiers)


def remove_acl_flows(acl_key: str, dp_key: str, ctx: FlowCtx, table: FlowTable) -> None:
    table.remove_owner(acl_owner(acl_key, dp_key))
    ctx.acl.mark_removed(acl_key, dp_key)


def build_all_acl_flows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    """Every ACL's flows, switch by switch (a full build)."""
    for dp in nd.by_index:
        if dp.is_switch:
            build_switch_acl_flows(dp, ctx, table)
