"""From the FlowTable (dense datapath indexes) to desired SB flows (Datapath_Binding uuids).

The flow table names stages; the ``table_id`` of each SB row comes from the flow profile of
the release being served (``profile``: :mod:`ovn_northd_py.lflow.profile`), resolved by a tuple
index per flow (a stage the release lacks raises ``StageNotInProfile``; a draft profile drops such flows
instead, see :func:`_draft_tid`).

A release with the ``lb_flow_dp_groups`` behaviour (26.03) keeps the flows that only load
balancers add (``FlowTable.group_owned_only``) in datapath groups of their own: such a flow on two
or more datapaths wants ``group_kind`` :data:`LB_GROUP_KIND`.  (Observed on sid's 26.03 reference:
on the ovn-kubernetes-like network, the node switches' load-balancer flows (``ls_in_lb``,
``ls_in_pre_stateful``, affinity) have one group, the switches' other flows another, the SB
Load_Balancer rows a third, all with the same five switches; likewise the gateway routers.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..lflow.profile import FlowProfile, StageNotInProfile, table_id_of
from ..lflow.stages import Stage
from ..lflow.table import FlowKey, FlowTable, LFlow
from ..northd.model import Northd
from .lflows import FKey, WantFlow

LB_GROUP_KIND = "lb"


def _lb_groups(profile: FlowProfile) -> bool:
    return profile.has("lb_flow_dp_groups")


def _draft_tid(profile: FlowProfile, ids: tuple[int, ...], st: Stage) -> int:
    """The slow path of a table id: -1 (drop the flow) for a stage a draft profile lacks."""
    try:
        return table_id_of(profile, ids, st)
    except StageNotInProfile:
        if profile.draft:
            return -1
        raise


def _key(f: LFlow, profile: FlowProfile, ids: tuple[int, ...]) -> FKey | None:
    st = f.stage
    i = st.index
    tid = ids[i] if i < len(ids) else -1
    if tid < 0:
        tid = _draft_tid(profile, ids, st)
        if tid < 0:
            return None
    return (st.name, st.pipeline, tid, f.priority, f.match, f.actions, f.controller_meter or "")


def desired_flows(table: FlowTable, nd: Northd, dp_uuid: Mapping[str, str], profile: FlowProfile
                  ) -> dict[FKey, WantFlow]:
    """dp_uuid: NB datapath key -> SB Datapath_Binding uuid.  Flows on unbound datapaths are dropped."""
    by_index: list[str | None] = [dp_uuid.get(dp.key) if dp is not None else None for dp in nd.slots]
    ids = profile.table_ids
    groups = table.groups()
    gid_of = groups.as_dict()
    group_sets: dict[int, frozenset[str]] = {}
    single: dict[str, frozenset[str]] = {}
    want: dict[FKey, WantFlow] = {}
    lb_groups = _lb_groups(profile)
    # The external_ids and tags maps, one object per distinct value (shared by the desired flows
    # and, once written, the flow writer's cache: ~100 bytes a flow each).  Never mutated: a
    # changed flow gets new maps.
    ext_of: dict[tuple[str, str], dict[str, str]] = {}
    tags_of: dict[str | None, dict[str, str]] = {}
    for f in table.flows():
        gid = gid_of.get(f.fid)
        if gid is not None:
            dps = group_sets.get(gid)
            if dps is None:
                dps = frozenset(u for i in groups.members(gid) if i < len(by_index) and (u := by_index[i]))
                group_sets[gid] = dps
        else:
            u = by_index[f.datapaths[0]] if f.datapaths and f.datapaths[0] < len(by_index) else None
            if not u:
                continue
            dps = single.get(u)  # (one set per datapath, shared by its flows: 200 bytes a flow)
            if dps is None:
                dps = single[u] = frozenset((u,))
        if not dps:
            continue
        st = f.stage
        si = st.index  # the table id, inlined from _key (this loop runs once per flow)
        tid = ids[si] if si < len(ids) else -1
        if tid < 0:
            tid = _draft_tid(profile, ids, st)
            if tid < 0:
                continue
        hint = f.hint[:8] if f.hint else ""
        ext = ext_of.get((st.name, hint))
        if ext is None:
            ext = ext_of[st.name, hint] = _ext(st.name, hint)
        if f.tags:
            tags = _tags(f)
        else:
            shared = tags_of.get(f.io_port)
            if shared is None:
                shared = tags_of[f.io_port] = _tags(f)
            tags = shared
        key: FKey = (st.name, st.pipeline, tid, f.priority, f.match, f.actions, f.controller_meter or "")
        kind = LB_GROUP_KIND if lb_groups and gid is not None and table.group_owned_only(f.fid) else ""
        want[key] = WantFlow(dps, ext, tags, kind)
    return want


def fkey(stage: Stage, key: FlowKey, profile: FlowProfile) -> FKey | None:
    """The SB identity of a flow (None: a stage a draft profile lacks)."""
    _name, priority, match, actions, meter = key
    tid = _draft_tid(profile, profile.table_ids, stage)
    if tid < 0:
        return None
    return (stage.name, stage.pipeline, tid, priority, match, actions, meter or "")


def _want(table: FlowTable, f: LFlow, by_index: list[str | None], lb_groups: bool,
          dps: frozenset[str] | None = None) -> WantFlow | None:
    """``dps``: the flow's SB datapath uuids, if known (else read from ``f.datapaths``)."""
    if dps is None:
        dps = frozenset(u for i in f.datapaths if i < len(by_index) and (u := by_index[i]))
    if not dps:
        return None
    kind = LB_GROUP_KIND if lb_groups and len(dps) > 1 and table.group_owned_only(f.fid) else ""
    return WantFlow(dps, _ext(f.stage.name, f.hint[:8] if f.hint else ""), _tags(f), kind)


def _ext(stage: str, hint: str) -> dict[str, str]:
    """A flow's SB external_ids: its stage's name and the first 8 characters of its hint, if any."""
    return {"stage-name": stage, "stage-hint": hint} if hint else {"stage-name": stage}


def _tags(f: LFlow) -> dict[str, str]:
    """A flow's SB tags: ``in_out_port`` when it has one, and its own tags."""
    tags = {"in_out_port": f.io_port} if f.io_port else {}
    if f.tags:
        tags.update(f.tags)
    return tags


def desired_for_keys(table: FlowTable, nd: Northd, dp_uuid: Mapping[str, str], keys: Iterable[FKey],
                     profile: FlowProfile) -> dict[FKey, WantFlow]:
    """What the flows with these identities should be (absent: no such flow is wanted, e.g. a
    stage the release does not have, or not at that table id)."""
    by_index: list[str | None] = [dp_uuid.get(dp.key) if dp is not None else None for dp in nd.slots]
    want: dict[FKey, WantFlow] = {}
    for k in keys:
        st = profile.stage_named(k[0])
        if st is None or profile.table_id(st) != k[2]:
            continue
        fid = table.find(st, k[3], k[4], k[5], k[6] or None)
        if fid is None and k[6] == "":
            fid = table.find(st, k[3], k[4], k[5], "")
        if fid is None:
            continue
        w = _want(table, table.flow(fid), by_index, _lb_groups(profile))
        if w is not None:
            want[k] = w
    return want


def desired_changed_flows(
    table: FlowTable, nd: Northd, dp_uuid: Mapping[str, str], profile: FlowProfile
) -> tuple[dict[FKey, WantFlow], set[FKey]]:
    """The flows changed since the last call (``FlowTable.take_changed``): what they should now be,
    and the set of identities to compare (changed and vanished ones)."""
    ids = profile.table_ids
    alive, gone = table.take_changed()
    by_index: list[str | None] = [dp_uuid.get(dp.key) if dp is not None else None for dp in nd.slots] \
        if alive else []
    lb_groups = _lb_groups(profile)
    scope = {fk for st, k in gone if (fk := fkey(st, k, profile)) is not None}
    want: dict[FKey, WantFlow] = {}
    # Flows on the same datapaths (a load balancer's on every switch of a cluster-wide group)
    # share their SB uuid set: resolved once per datapath set, not once per flow.
    dp_sets: dict[int | bytes, frozenset[str]] = {}
    n = len(by_index)
    for fid in alive:
        f = table.flow(fid, with_datapaths=False)
        key = _key(f, profile, ids)
        if key is None:
            continue
        scope.add(key)
        sig = table.datapath_signature(fid)
        dps = dp_sets.get(sig)
        if dps is None:
            dps = dp_sets[sig] = frozenset(u for i in table.datapaths(fid) if i < n and (u := by_index[i]))
        w = _want(table, f, by_index, lb_groups, dps)
        if w is not None:
            want[key] = w
    return want, scope
