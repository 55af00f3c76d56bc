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
    LS_IN_ACL_AFTER_LB_SAMPLE,
    LS_IN_ACL_EVAL,
    LS_IN_ACL_SAMPLE,
    LS_IN_L2_LKUP,
    LS_IN_PRE_ACL,
    LS_OUT_ACL,
    LS_OUT_ACL_EVAL,
    LS_OUT_ACL_SAMPLE,
    LS_OUT_PRE_ACL,
    LS_OUT_QOS,
    LS_OUT_QOS_MARK,
    Stage,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Northd
from ..ovsdb.columns import opt
from .acl_index import SwitchAcls, acl_nf_group, smap_bool, switch_acl_rows, switch_acls
from .chassis_features import ALL_FEATURES, ChassisFeatures
from .context import FlowCtx, hint
from .copp import copp_meter
from .owners import acl_owner
from .registers import (
    REG_ACL_ID,
    REG_ACL_LABEL,
    REG_ACL_TIER,
    REG_NF_ID,
    REG_OBS_COLLECTOR_ID_EST,
    REG_OBS_COLLECTOR_ID_NEW,
    REG_OBS_POINT_ID_EST,
    REG_OBS_POINT_ID_NEW,
    REG_OBS_STAGE,
    REGBIT_ACL_HINT_ALLOW,
    REGBIT_ACL_HINT_ALLOW_NEW,
    REGBIT_ACL_HINT_BLOCK,
    REGBIT_ACL_HINT_DROP,
    REGBIT_ACL_LABEL,
    REGBIT_ACL_PERSIST_ID,
    REGBIT_ACL_STATELESS,
    REGBIT_ACL_VERDICT_ALLOW,
    REGBIT_ACL_VERDICT_DROP,
    REGBIT_ACL_VERDICT_REJECT,
    REGBIT_CONNTRACK_COMMIT,
    REGBIT_NF_ENABLED,
    REGBIT_NF_ORIG_DIR,
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
    hinted: bool = True  # carries the ACL's stage-hint (sampling flows do not)


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


def acl_sample(acl: Any, column: str) -> Any:
    """The ACL's NB Sample row of ``sample_new`` / ``sample_est`` (NB 7.11's columns), or None."""
    return opt(getattr(acl, column, None))


def _collectors(sample: Any) -> list[Any]:
    """A Sample's collectors, in uuid order (the reference's order)."""
    return sorted(sample.collectors, key=lambda c: c.uuid)


def sample_label_actions(acl: Any, new: Any, est: Any, obs_stage: int) -> str:
    """What an ACL flow loads for sampling and labels: the observation point ids of new and
    established sessions (the label when set, else the Samples' metadata), the collector ids (a
    Sample with one collector and no label, else 0) and the observation stage; "" with neither a
    label nor a Sample."""
    label = acl.label
    if not label and new is None and est is None:
        return ""
    if label:
        pn = pe = label
        cn = ce = 0
    else:
        pn = new.metadata if new is not None else 0
        pe = est.metadata if est is not None else 0
        cn = new.collectors[0].id if new is not None and len(new.collectors) == 1 else 0
        ce = est.collectors[0].id if est is not None and len(est.collectors) == 1 else 0
    return (f"{REGBIT_ACL_LABEL} = 1; {REG_OBS_POINT_ID_NEW} = {pn}; {REG_OBS_POINT_ID_EST} = {pe}; "
            f"{REG_OBS_COLLECTOR_ID_NEW} = {cn}; {REG_OBS_COLLECTOR_ID_EST} = {ce}; {REG_OBS_STAGE} = {obs_stage}; ")


def acl_eval_flows(
    acl: Any, acl_key: str, stateful: bool, use_ct_inv_match: bool, fair_meters: frozenset[str],
    tiered: bool = False, acl_id: int | None = None, commit_new_in_hint: bool = False,
    nf_group: int | None = None, ct_v26: bool = False,
) -> tuple[AclFlow, ...]:
    """Behaviour ``acl_eval_action`` (OVN 25.03): the ACL's flows set a verdict bit (reg8[16] allow,
    reg8[17] drop, reg8[18] reject) in ``ls_*_acl_eval`` and go on; ``ls_*_acl_action`` acts on it
    (:func:`.ls_acl.build_ls_acl_eval_stage_flows`).  Observed on the reference:

    * the match is always parenthesised: ``(M)``, or ``reg0[N] == 1 && (M)`` with the hints of a
      stateful switch (reject included);
    * actions: ``log(...); `` first, then the verdict bit, then (stateful) the commit hint for
      allow / allow-related (``reg0[1] = 1; ``), then the ACL id of a persist-established ACL
      (``reg2[16..31] = ID; reg0[20] = 1; ``, new sessions only, with an SB ACL_ID row and every
      chassis announcing ``ct-label-flush``), then the
      label / sampling registers (:func:`sample_label_actions`), then the blocked commit of drop /
      reject on ``reg0[10]`` (``ct_commit { ct_mark.blocked = 1; ct_label.obs_point_id = E; }; ``,
      E the ``sample_est`` metadata or 0), then ``next;``;
    * a stateless ACL (a switch that is not stateful, ``pass``, ``allow-stateless``) and drop /
      reject load the registers of ``sample_new`` only; the established-session flow of an allow
      ACL commits (``reg0[1] = 1``) only with a label or a ``sample_est``;
    * log-related flows (65533) set the allow bit; with ``ct_v26`` (26.03) they restore the network
      function bit first (``reg8[21] = ct_label.nf; ``) and match as the switch's conntrack flows
      (replies ``ct.est && !ct.rel && ct.rpl``, no ``!ct.inv``);
    * ``pass`` sets no verdict (no hints even on a stateful switch);
    * tiers (``tiered``: an ACL of the same eval stage has a tier): every match starts with
      ``reg8[30..31] == T && `` (T the ACL's tier, 0 included);
    * behaviour ``acl_hint_commits_new`` (26.03, ``commit_new_in_hint``): the hint of a new
      connection already set the commit bit, so the allow-new flow (``reg0[7] == 1``) sets none;
    * behaviour ``network_function`` (26.03, ``nf_group``: the id of the ACL's
      Network_Function_Group): an ``allow-related`` ACL, or ``allow`` on a stateful switch, also
      marks the packet for redirection after the verdict and commit hint (``reg8[21] = 1;
      reg8[22] = 1; reg0[22..29] = G; ``), its established-session flow committing too
      (``reg0[1] = 1``); any other ACL with a group has no eval flow at all (the reference logs
      "ACL action X does not support network-function-group").
    """
    ingress = acl.direction == "from-lport"
    stage = EVAL_STAGE[acl_stage(acl)]
    obs = OBS_STAGE[stage]
    prio = acl.priority + ACL_PRIORITY_OFFSET
    tier = f"{REG_ACL_TIER} == {acl_tier(acl)} && " if tiered else ""
    m = f"({acl.match})"
    action = acl.action
    log = log_action(acl, acl_key, fair_meters)
    new, est = acl_sample(acl, "sample_new"), acl_sample(acl, "sample_est")
    if action in ALLOW_ACTIONS:
        verdict = f"{REGBIT_ACL_VERDICT_ALLOW} = 1; "
    elif action == "reject":
        verdict = f"{REGBIT_ACL_VERDICT_REJECT} = 1; "
    elif action == "pass":
        verdict = ""
    else:
        verdict = f"{REGBIT_ACL_VERDICT_DROP} = 1; "
    nf_ok = action == "allow-related" or (action == "allow" and stateful)
    if nf_group is not None and not nf_ok:
        if stateful and action == "allow-stateless":
            pre = LS_IN_PRE_ACL if ingress else LS_OUT_PRE_ACL
            return (AclFlow(pre, prio, acl.match, f"{REGBIT_ACL_STATELESS} = 1; next;"),)
        return ()
    if not stateful or action in ("pass", "allow-stateless"):
        flow = AclFlow(stage, prio, f"{tier}{m}", f"{log}{verdict}{sample_label_actions(acl, new, None, obs)}next;")
        if stateful and action == "allow-stateless":
            pre = LS_IN_PRE_ACL if ingress else LS_OUT_PRE_ACL
            return (AclFlow(pre, prio, acl.match, f"{REGBIT_ACL_STATELESS} = 1; next;"), flow)
        return (flow,)
    if action not in ALLOW_ACTIONS:
        load = sample_label_actions(acl, new, None, obs)
        block = f"ct_commit {{ ct_mark.blocked = 1; ct_label.obs_point_id = {est.metadata if est is not None else 0}; }}; "
        return (
            AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_DROP} == 1 && {m}", f"{log}{verdict}{load}next;"),
            AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_BLOCK} == 1 && {m}", f"{log}{verdict}{load}{block}next;"),
        )
    commit = f"{REGBIT_CONNTRACK_COMMIT} = 1; "
    load = sample_label_actions(acl, new, est, obs)
    persist = ""
    if acl_id is not None and smap_bool(acl.options, "persist-established", False):
        persist = f"{REG_ACL_ID} = {acl_id}; {REGBIT_ACL_PERSIST_ID} = 1; "
    label = acl.label
    nf = (f"{REGBIT_NF_ENABLED} = 1; {REGBIT_NF_ORIG_DIR} = 1; {REG_NF_ID} = {nf_group}; "
          if nf_group is not None else "")
    flows = [
        AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_ALLOW_NEW} == 1 && {m}",
                f"{log}{verdict}{'' if commit_new_in_hint else commit}{nf}{persist}{load}next;"),
        AclFlow(stage, prio, f"{tier}{REGBIT_ACL_HINT_ALLOW} == 1 && {m}",
                f"{log}{verdict}{commit if label or est is not None or nf else ''}{nf}{load}next;"),
    ]
    if log and label and smap_bool(acl.options, "log-related", False):
        reply_stage = LS_OUT_ACL_EVAL if ingress else LS_IN_ACL_EVAL
        inv = "!ct.inv && " if use_ct_inv_match else ""
        related = f"ct_mark.blocked == 0 && ct_label.label == {label}"
        allow = f"{log}{REGBIT_ACL_VERDICT_ALLOW} = 1; next;"
        if ct_v26:  # 26.03 (acl_ct_match_v26, network_function): as the switch's conntrack flows
            allow = f"{log}{REGBIT_NF_ENABLED} = ct_label.nf; {REGBIT_ACL_VERDICT_ALLOW} = 1; next;"
            rel_m, rpl_m = f"!ct.est && ct.rel && !ct.new && {related}", f"ct.est && !ct.rel && ct.rpl && {related}"
        else:
            rel_m = f"!ct.est && ct.rel && !ct.new && {inv}{related}"
            rpl_m = f"ct.est && !ct.rel && !ct.new && {inv}ct.rpl && {related}"
        flows += [
            AclFlow(reply_stage, LOG_RELATED_PRIORITY, rel_m, allow),
            AclFlow(reply_stage, LOG_RELATED_PRIORITY, rpl_m, allow),
        ]
    return tuple(flows)


# Behaviour "acl_eval_action": the sampling stage after each eval stage.
SAMPLE_STAGE: Final = MappingProxyType({
    LS_IN_ACL_EVAL: LS_IN_ACL_SAMPLE, LS_IN_ACL_AFTER_LB_EVAL: LS_IN_ACL_AFTER_LB_SAMPLE,
    LS_OUT_ACL_EVAL: LS_OUT_ACL_SAMPLE,
})


def _set_id(c: Any, full: bool) -> int:
    """A collector's ``collector_set``: its set_id, modulo 256 without ``sample_set_id_full``."""
    return int(c.set_id) if full else int(c.set_id) % 256


def _sample_actions(acl: Any, sample: Any, domain: int, flag: str = "", full_set_id: bool = False) -> str:
    """One ``sample(...)`` per collector of ``sample`` then `` next;`` (observation point: the label, or
    the Sample's metadata in domain ``domain``), after ``flag``; "" when the Sampling_App of
    ``domain`` is not set."""
    if domain == 0:
        return ""
    dom, point = (0, acl.label) if acl.label else (domain, sample.metadata)
    samples = "".join(f"sample(probability={c.probability},collector_set={_set_id(c, full_set_id)},"
                      f"obs_domain={dom},obs_point={point});" for c in _collectors(sample))
    return (flag if samples else "") + samples + " next;"  # (no flag without a collector)


def acl_sample_flows(
    acl: Any, has_stateful_acl: bool, apps: Mapping[str, int], sample_with_reg: bool = True,
    profile: FlowProfile = DEFAULT_PROFILE,
) -> tuple[AclFlow, ...]:
    """Behaviour ``acl_eval_action``: the ``ls_*_acl_sample`` flows of an ACL with ``sample_new`` /
    ``sample_est`` (NB Sample, Sample_Collector; ``apps``: NB Sampling_App id by type, the
    observation domain of ``acl-new`` / ``acl-est`` samples).  Observed on the reference (flows
    shared by ACLs are one flow; no stage-hint):

    * only with ``sample_new``, or with ``sample_est`` on an ``allow-related`` ACL of a switch with
      a stateful ACL (load balancers do not count here);
    * new sessions, in the ACL's sample stage: a Sample with one collector C samples by register,
      one flow per (collector, stage) -- ``<new> && reg8[0..7] == C && reg8[19..20] == S`` ->
      ``sample(probability=P,collector_set=SET,obs_domain=D,obs_point=reg3); next;`` at 1000 (900
      without conntrack); other Samples one flow per ACL at 1100, ``<new> && reg3 == POINT``
      with a ``sample()`` per collector.  ``<new>`` is ``ip`` (no stateful ACL, or
      allow-stateless), ``ip && ct.new``, or ``ip && (ct.new || !ct.trk)`` in the egress stage;
    * established sessions (stateful as above, ``sample_est``): the original direction in the
      ACL's stage, replies in the other pipeline's sample stage: one collector ->
      ``ip && ct.trk && (ct.est || ct.rel) && ct_label.obs_unused == 0 && !ct.rpl &&
      ct_mark.obs_collector_id == C && ct_mark.obs_stage == S`` (replies: ``ct.rpl &&
      ct_mark.obs_collector_id == C``) at 1000 sampling ``obs_point=ct_label.obs_point_id``;
      others at 1200 matching ``ct_label.obs_point_id == POINT && ct_label.obs_unused == 0``;
    * without ``sample_with_reg`` (a chassis lacks ``ovn-sample-with-registers``) every Sample is
      sampled per ACL;
    * ``acl_sample_pkt_flag`` (26.03): every action with a ``sample()`` starts with ``flags.pkt_sampled = 1;``
      and the established-session flows match ``flags.pkt_sampled == 0 && `` first (also those
      without actions); ``sample_set_id_full`` (26.03): ``collector_set`` is the collector's
      set_id (25.03: modulo 256).
    """
    new, est = acl_sample(acl, "sample_new"), acl_sample(acl, "sample_est")
    stateful = has_stateful_acl and acl.action != "allow-stateless"
    if new is None and not (has_stateful_acl and est is not None and acl.action == "allow-related"):
        return ()
    ev = EVAL_STAGE[acl_stage(acl)]
    stage = SAMPLE_STAGE[ev]
    obs = OBS_STAGE[ev]
    rpl_stage = LS_IN_ACL_SAMPLE if stage is LS_OUT_ACL_SAMPLE else LS_OUT_ACL_SAMPLE
    new_dom, est_dom = apps.get("acl-new", 0), apps.get("acl-est", 0)
    pkt_flag = profile.has("acl_sample_pkt_flag")
    flag, est_guard = ("flags.pkt_sampled = 1; ", "flags.pkt_sampled == 0 && ") if pkt_flag else ("", "")
    full = profile.has("sample_set_id_full")
    flows: list[AclFlow] = []
    if new is not None:
        base = "ip" if not stateful else "ip && (ct.new || !ct.trk)" if stage is LS_OUT_ACL_SAMPLE else "ip && ct.new"
        if len(new.collectors) == 1 and sample_with_reg:
            c = new.collectors[0]
            flows.append(AclFlow(
                stage, 1000 if stateful else 900,
                f"{base} && {REG_OBS_COLLECTOR_ID_NEW} == {c.id} && {REG_OBS_STAGE} == {obs}",
                f"{flag}sample(probability={c.probability},collector_set={_set_id(c, full)},"
                f"obs_domain={new_dom},obs_point={REG_OBS_POINT_ID_NEW}); next;", hinted=False))
        else:
            point = acl.label or new.metadata
            flows.append(AclFlow(stage, 1100, f"{base} && {REG_OBS_POINT_ID_NEW} == {point}",
                                 _sample_actions(acl, new, new_dom, flag, full), hinted=False))
    if not stateful or est is None:
        return tuple(flows)
    est_base = f"{est_guard}ip && ct.trk && (ct.est || ct.rel) && "
    if len(est.collectors) == 1 and sample_with_reg:
        c = est.collectors[0]
        actions = (f"{flag}sample(probability={c.probability},collector_set={_set_id(c, full)},"
                   f"obs_domain={est_dom},obs_point=ct_label.obs_point_id); next;")
        unused = est_base + "ct_label.obs_unused == 0 && "
        flows.append(AclFlow(stage, 1000, f"{unused}!ct.rpl && ct_mark.obs_collector_id == {c.id} && "
                             f"ct_mark.obs_stage == {obs}", actions, hinted=False))
        flows.append(AclFlow(rpl_stage, 1000, f"{unused}ct.rpl && ct_mark.obs_collector_id == {c.id}", actions,
                             hinted=False))
    else:
        point = acl.label or est.metadata
        label = f"ct_label.obs_point_id == {point} && ct_label.obs_unused == 0"
        actions = _sample_actions(acl, est, est_dom, flag, full)
        flows.append(AclFlow(stage, 1200, f"{est_base}!ct.rpl && {label}", actions, hinted=False))
        flows.append(AclFlow(rpl_stage, 1200, f"{est_base}ct.rpl && {label}", actions, hinted=False))
    return tuple(flows)


def acl_flows(
    acl: Any, acl_key: str, stateful: bool, use_ct_inv_match: bool, fair_meters: frozenset[str],
    profile: FlowProfile = DEFAULT_PROFILE, tiered: bool = False, features: ChassisFeatures = ALL_FEATURES,
    acl_id: int | None = None,
) -> tuple[AclFlow, ...]:
    """The flows of ACL ``acl`` on a switch that is (not) ``stateful`` (``features``: what every
    chassis supports, ``ct_label.blocked`` instead of ``ct_mark.blocked`` for old ones; ``acl_id``:
    its SB ACL_ID, 25.03; its network function group's id, 26.03)."""
    if profile.has("acl_eval_action"):
        nf_group = acl_nf_group(acl) if profile.has("network_function") else None
        return acl_eval_flows(acl, acl_key, stateful, use_ct_inv_match, fair_meters, tiered, acl_id,
                              profile.has("acl_hint_commits_new"),
                              None if nf_group is None else int(nf_group.id),
                              profile.has("acl_ct_match_v26") and profile.has("network_function"))
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


def acl_id_for(acl: Any, acl_key: str, ctx: FlowCtx) -> int | None:
    """The SB ACL_ID of a persist-established ACL (25.03), if its flows may load it: every chassis
    announces ``ct-label-flush``.  Warns (once) about the option on an ACL that is not
    ``allow-related`` (no id: the reference ignores it there too)."""
    acl_id = ctx.acl.acl_ids.get(acl_key)
    if (acl_id is None and acl.action == "allow" and ctx.profile.has("ct_commit_acl_id")
            and smap_bool(acl.options, "persist-established", False)):
        ctx.warn("acl_persist_not_related", "ACL", acl.uuid,
                 "options:persist-established applies to allow-related ACLs only")
    return acl_id if ctx.features.ct_label_flush else None


def _flows_for(
    acl: Any, acl_key: str, facts: SwitchAcls, ctx: FlowCtx, tiered: bool = False
) -> tuple[AclFlow, ...]:
    idx = ctx.acl
    stateful = facts.stateful
    if (ctx.profile.has("network_function") and acl_nf_group(acl) is not None
            and not (acl.action == "allow-related" or (acl.action == "allow" and stateful))):
        ctx.warn("acl_nf_unsupported", "ACL", acl.uuid,
                 f"ACL action {acl.action} does not support network-function-group (ignored)")
    kind = ("acl_flows_stateful" if stateful else "acl_flows") + ("_tiered" if tiered else "")
    flows: tuple[AclFlow, ...] = ctx.cached(
        kind, acl_key,
        lambda: acl_flows(acl, acl_key, stateful, idx.use_ct_inv_match, idx.fair_meters, ctx.profile, tiered,
                          ctx.features, acl_id_for(acl, acl_key, ctx)),
    )
    if ctx.profile.has("acl_eval_action"):
        kind = "acl_sample_flows" + ("_stateful" if facts.has_stateful_acl else "")
        flows += ctx.cached(kind, acl_key, lambda: acl_sample_flows(acl, facts.has_stateful_acl, idx.sampling_apps,
                                                                    ctx.features.sample_with_reg, ctx.profile))
    return flows


CT_TRANSLATION_TAGS: Final = (("acl_ct_translation", "true"),)
EVAL_STAGES: Final = frozenset({LS_IN_ACL_EVAL, LS_IN_ACL_AFTER_LB_EVAL, LS_OUT_ACL_EVAL})


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
    facts = switch_acls(dp, ctx)
    # 26.03 (acl_ct_translation, observed): the eval flows of a stateful switch's ACLs that use the
    # conntrack hints are tagged (not those of allow-stateless / pass ACLs, nor log-related ones).
    tags = (CT_TRANSLATION_TAGS if ctx.acl_ct_translation and facts.stateful
            and acl.action not in ("allow-stateless", "pass") else ())
    for f in _flows_for(acl, key, facts, ctx, tiered):
        meter = reject_meter if f.stage is not LS_IN_PRE_ACL and f.stage is not LS_OUT_PRE_ACL else None
        table.add(dp.index, f.stage, f.priority, f.match, f.actions, hint=h if f.hinted else None,
                  controller_meter=meter, owner=owner, tags=tags if f.stage in EVAL_STAGES and f.priority != LOG_RELATED_PRIORITY else ())
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
