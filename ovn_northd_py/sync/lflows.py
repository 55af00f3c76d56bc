"""SB Logical_Flow, Logical_DP_Group and Load_Balancer: the cache and the diff the flow writer plans with.

We keep our own cache of these three tables (they are not monitored by the
IDL, see ``ovsdb/raw.py``; ``sync/flow_writer.py`` loads and watches it).
:func:`plan_sync` compares the desired flows with the cache and emits the fewest
operations, each with a typed action (:class:`InsertFlow`, :class:`ResizeGroup`...)
that :func:`apply_plan` replays on the cache once the write commits:

* a flow whose (stage, priority, match, actions, meter) already exists keeps
  its row; only its datapath reference or external_ids are updated if needed;
* datapath groups are matched by their datapath *set*: an existing
  Logical_DP_Group whose set is still wanted is re-used as is; a group whose
  users (its flows, or its load balancers) all want one new set is resized in
  place (one row update instead of one per user); only sets nobody has get new rows;
* like the reference, flows and load balancers never share a group: each kind
  is deduplicated by datapath set among its own groups;
* a flow's group also has its flow's ``group_kind`` (:class:`WantFlow`): flows share groups
  only with flows of the same kind (a release with ``lb_flow_dp_groups`` gives the flows only
  load balancers add a kind of their own).  The cache remembers the kind of each flow group
  (``FlowCache.group_kinds``); a group read from SB gets the kind its flows want;
* Logical_DP_Group is not a root table: a group nobody references any more is
  garbage-collected by ovsdb-server, so we never delete groups explicitly.

Invariant: the cache reflects SB as of our last successful transaction, with
the foreign changes the flow writer's monitor reported folded in
(``sync/flow_writer.py``).  On a reconnection it is dropped and re-read with a
``select``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# (stage-name, pipeline, table_id, priority, match, actions, controller_meter)
FKey = tuple[str, str, int, int, str, str, str]


def _uuid_of(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 2 and v[0] == "uuid":
        return str(v[1])
    return None


def _opt_str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _map(v: Any) -> dict[str, str]:
    if isinstance(v, list) and len(v) == 2 and v[0] == "map":
        return {str(k): str(x) for k, x in v[1]}
    return {}


def _uuid_set(v: Any) -> frozenset[str]:
    if isinstance(v, list) and len(v) == 2:
        if v[0] == "uuid":
            return frozenset([str(v[1])])
        if v[0] == "set":
            return frozenset(str(u[1]) for u in v[1])
    return frozenset()


def _omap(d: dict[str, str]) -> list[Any]:
    return ["map", [[k, d[k]] for k in sorted(d)]]  # (keys are unique: the pairs' order)


@dataclass(slots=True)
class FlowRow:
    key: FKey
    dp: str | None  # Datapath_Binding uuid (single-datapath flow)
    group: str | None  # Logical_DP_Group uuid
    ext: dict[str, str]
    tags: dict[str, str]


@dataclass(slots=True)
class LbRow:
    key: str  # NB load balancer uuid (external_ids:lb_id, or the row's uuid with split groups) or name
    cols: dict[str, Any]  # the columns we own, in JSON form (except the group references)
    group: str | None  # datapath_group (ls_datapath_group with split groups)
    lr_group: str | None = None  # lr_datapath_group (split groups only)
    # The column ``group`` is in (split groups: ls_datapath_group, or datapath_group for chassis
    # without ls-dpg-column, FlowCache.ls_group_column).
    group_col: str = "datapath_group"

    def groups(self) -> tuple[str, ...]:
        g, lg = self.group, self.lr_group  # (read for every SB load balancer on each flow plan)
        if lg is None:
            return () if g is None else (g,)
        return (lg,) if g is None else (g, lg)


@dataclass(slots=True)
class WantFlow:
    dps: frozenset[str]
    ext: dict[str, str]
    tags: dict[str, str]
    group_kind: str = ""  # flows share datapath groups only with flows of the same kind


@dataclass(slots=True)
class WantLb:
    dps: frozenset[str]  # its switches (all its datapaths without split groups)
    cols: dict[str, Any]
    # With split groups (``lb_split_datapath_groups``, 25.03): its routers, and the row's uuid (the
    # NB row's, persisted on insert).
    lr_dps: frozenset[str] = frozenset()
    uuid: str | None = None


@dataclass(slots=True)
class FlowCache:
    """What SB holds in the three raw tables, with the indexes an incremental diff needs."""

    flows: dict[str, FlowRow] = field(default_factory=dict)
    groups: dict[str, frozenset[str]] = field(default_factory=dict)
    lbs: dict[str, LbRow] = field(default_factory=dict)
    loaded: bool = False
    # Load_Balancer rows name their switches and routers in ls_datapath_group / lr_datapath_group
    # (a release with the ``lb_split_datapath_groups`` behaviour; columns 23.03's schema lacks).
    split_lbs: bool = False
    # With split groups, the column naming a load balancer's switches: ls_datapath_group, or (some
    # chassis lacks the ls-dpg-column feature, flows/chassis_features.py) the older datapath_group.
    ls_group_column: str = "ls_datapath_group"
    # Flow identity -> its row's uuid, or a list of 2+ row uuids (duplicates, e.g. written by another
    # northd): a plain string for the usual single row saves a list (~100 bytes) per flow.  Read
    # with :meth:`uuids`.
    by_key: dict[FKey, str | list[str]] = field(default_factory=dict)
    group_users: dict[str, set[str]] = field(default_factory=dict)  # group uuid -> flow uuids
    set_index: dict[frozenset[str], str] = field(default_factory=dict)  # datapath set -> group uuid
    # Flow group uuid -> the group_kind of its flows (a group read from SB: set by the first plan).
    group_kinds: dict[str, str] = field(default_factory=dict)

    def reset(self) -> None:
        self.flows.clear()
        self.groups.clear()
        self.lbs.clear()
        self.by_key.clear()
        self.group_users.clear()
        self.set_index.clear()
        self.group_kinds.clear()
        self.loaded = False

    def uuids(self, k: FKey) -> tuple[str, ...] | list[str]:
        """The uuids of the rows with flow identity ``k`` (not to be mutated)."""
        us = self.by_key.get(k)
        if us is None:
            return ()
        return (us,) if isinstance(us, str) else us

    def add_flow(self, u: str, row: FlowRow) -> None:
        self.flows[u] = row
        by_key, k = self.by_key, row.key
        us = by_key.get(k)
        if us is None:
            by_key[k] = u
        elif isinstance(us, str):
            by_key[k] = [us, u]
        else:
            us.append(u)
        if row.group is not None:
            self.group_users.setdefault(row.group, set()).add(u)

    def del_flow(self, u: str) -> None:
        row = self.flows.pop(u, None)
        if row is None:
            return
        us = self.by_key.get(row.key)
        if isinstance(us, str):
            if us == u:
                del self.by_key[row.key]
        elif us is not None:
            us.remove(u)
            if len(us) == 1:
                self.by_key[row.key] = us[0]
            elif not us:
                del self.by_key[row.key]
        if row.group is not None:
            self.group_users.get(row.group, set()).discard(u)

    def set_flow_ref(self, u: str, dp: str | None, group: str | None) -> None:
        row = self.flows[u]
        if row.group is not None:
            self.group_users.get(row.group, set()).discard(u)
        row.dp, row.group = dp, group
        if group is not None:
            self.group_users.setdefault(group, set()).add(u)

    def set_group(self, g: str, dps: frozenset[str]) -> None:
        old = self.groups.get(g)
        if old is not None and self.set_index.get(old) == g:
            del self.set_index[old]
        self.groups[g] = dps
        self.set_index.setdefault(dps, g)

    def del_group(self, g: str) -> None:
        old = self.groups.pop(g, None)
        if old is not None and self.set_index.get(old) == g:
            del self.set_index[old]
        self.group_users.pop(g, None)
        self.group_kinds.pop(g, None)


LB_COLUMNS = ("name", "vips", "protocol", "options", "external_ids")


_FLOW_SELECT_COLUMNS = ("_uuid", "logical_datapath", "logical_dp_group", "pipeline", "table_id", "priority",
                        "match", "actions", "controller_meter", "external_ids", "tags")


def _flow_select(where: list[Any]) -> dict[str, Any]:
    return {"op": "select", "table": "Logical_Flow", "where": where, "columns": list(_FLOW_SELECT_COLUMNS)}


def _group_select() -> dict[str, Any]:
    return {"op": "select", "table": "Logical_DP_Group", "where": [], "columns": ["_uuid", "datapaths"]}


LB_SPLIT_GROUP_COLUMNS = ("ls_datapath_group", "lr_datapath_group")


def lb_group_columns(split: bool) -> list[str]:
    """The Load_Balancer columns that reference datapaths (the split ones only where they exist)."""
    return ["datapath_group", "datapaths", *(LB_SPLIT_GROUP_COLUMNS if split else ())]


def _lb_select(split: bool = False) -> dict[str, Any]:
    return {"op": "select", "table": "Load_Balancer", "where": [],
            "columns": ["_uuid", *lb_group_columns(split), *LB_COLUMNS]}

# One select per logical table id up to this one (23.03's schema allows 0..32 and rejects a larger
# value in a where clause), then one for any larger id a later schema allows.
CHUNK_TABLE_ID_MAX = 32


def select_ops(split: bool = False) -> list[dict[str, Any]]:
    """The three tables in one transaction (``load_cache`` reads its reply)."""
    return [_flow_select([]), _group_select(), _lb_select(split)]


def chunked_select_ops(split: bool = False) -> list[list[dict[str, Any]]]:
    """The same rows as :func:`select_ops`, as one transaction per logical table id (and one for the
    groups and load balancers), to be sent one after the other: the reply to a single select of a
    few hundred thousand flows is hundreds of MB of parsed JSON at once, which the process keeps
    as heap long after (a restart or a hot standby reading a big SB)."""
    chunks: list[list[dict[str, Any]]] = [[_group_select(), _lb_select(split)]]
    chunks += [[_flow_select([["table_id", "==", t]])] for t in range(CHUNK_TABLE_ID_MAX + 1)]
    chunks.append([_flow_select([["table_id", ">", CHUNK_TABLE_ID_MAX]])])
    return chunks


def lb_key(cols: dict[str, Any], row_uuid: str | None = None) -> str:
    """A Load_Balancer row's key: its NB uuid (``external_ids:lb_id``; with split groups, where
    ``lb_id`` is gone, the row's own uuid, the NB one), else its name."""
    ids = _map(cols.get("external_ids"))
    return ids.get("lb_id") or row_uuid or f"name:{cols.get('name', '')}"


def lb_row(u: str, r: dict[str, Any], split: bool) -> LbRow:
    """The cache entry of Load_Balancer row ``u`` (``r``: its columns, JSON)."""
    cols = {c: r.get(c, ["set", []]) for c in LB_COLUMNS}
    if split:
        ls, old = _uuid_of(r.get("ls_datapath_group")), _uuid_of(r.get("datapath_group"))
        col = "datapath_group" if ls is None and old is not None else "ls_datapath_group"
        return LbRow(lb_key(cols, u), cols, ls if ls is not None else old, _uuid_of(r.get("lr_datapath_group")), col)
    return LbRow(lb_key(cols), cols, _uuid_of(r.get("datapath_group")))


def other_ls_group_column(col: str) -> str:
    """Split groups: the switch-group column that must stay empty when ``col`` holds the group."""
    return "datapath_group" if col == "ls_datapath_group" else "ls_datapath_group"


def load_rows(cache: FlowCache, table: str, rows: list[dict[str, Any]]) -> None:
    """Add the rows of one ``select`` of ``table`` to the cache."""
    if table == "Logical_Flow":
        for r in rows:
            ext = _map(r["external_ids"])
            key: FKey = (ext.get("stage-name", ""), r["pipeline"], r["table_id"], r["priority"], r["match"],
                         r["actions"], _opt_str(r["controller_meter"]))
            cache.add_flow(str(r["_uuid"][1]), FlowRow(
                key, _uuid_of(r["logical_datapath"]), _uuid_of(r["logical_dp_group"]), ext, _map(r["tags"])))
    elif table == "Logical_DP_Group":
        for r in rows:
            cache.set_group(str(r["_uuid"][1]), _uuid_set(r["datapaths"]))
    elif table == "Load_Balancer":
        for r in rows:
            u = str(r["_uuid"][1])
            cache.lbs[u] = lb_row(u, r, cache.split_lbs)


def load_cache(cache: FlowCache, results: list[Any]) -> None:
    """The cache from the reply to :func:`select_ops`."""
    cache.reset()
    for op, res in zip(select_ops(cache.split_lbs), results, strict=True):
        load_rows(cache, op["table"], res["rows"])
    cache.loaded = True


def _ref_json(g: str | None) -> list[Any]:
    """A group reference column's JSON value."""
    return ["uuid", g] if g is not None else ["set", []]


def _norm_json(v: Any) -> Any:
    """Compare OVSDB JSON values independent of set/map ordering."""
    if isinstance(v, list) and len(v) == 2 and v[0] in ("set", "map"):
        return (v[0], tuple(sorted(repr(x) for x in v[1])))
    return repr(v)


class FlowInsert(Mapping[str, Any]):
    """A Logical_Flow ``insert`` operation whose JSON is built only as the request is encoded
    (:meth:`json_value`, which the raw path's encoder calls) and then dropped: a cold sync's
    60,000 inserts as dicts, rows and external_ids lists were the daemon's peak memory.  Reads as
    the operation's dict.  ``ref``: the flow's group reference (None: on its single datapath)."""

    __slots__ = ("k", "ref", "w")

    def __init__(self, k: FKey, w: WantFlow, ref: list[Any] | None) -> None:
        self.k, self.w, self.ref = k, w, ref

    def json_value(self) -> dict[str, Any]:
        k, w = self.k, self.w
        # (An inserted row's empty columns are left out: the server gives them their default,
        # empty; a cold sync's transaction is that much smaller.)
        row: dict[str, Any] = {"pipeline": k[1], "table_id": k[2], "priority": k[3], "match": k[4],
                               "actions": k[5], "external_ids": _omap(w.ext)}
        if w.tags:
            row["tags"] = _omap(w.tags)
        if k[6]:
            row["controller_meter"] = k[6]
        if self.ref is None:
            (d,) = tuple(w.dps)
            row["logical_datapath"] = ["uuid", d]
        else:
            row["logical_dp_group"] = self.ref
        return {"op": "insert", "table": "Logical_Flow", "row": row}

    def __getitem__(self, key: str) -> Any:
        return self.json_value()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("op", "table", "row"))

    def __len__(self) -> int:
        return 3


# ---- plans: the operations of one write, and the actions that replay it on the cache ----
#
# Each action records what one operation (``op``: its index in ``Plan.ops``) does to the cache,
# so that :func:`apply_plan` replays a committed plan with the uuids the server assigned.


@dataclass(slots=True)
class InsertGroup:
    op: int
    dps: frozenset[str]
    kind: str | None = None  # the group_kind of a flow group (None: a load balancers' group)


@dataclass(slots=True)
class ResizeGroup:
    group: str
    dps: frozenset[str]
    kind: str | None = None


@dataclass(slots=True)
class InsertFlow:
    op: int
    key: FKey
    want: WantFlow


@dataclass(slots=True)
class UpdateFlow:
    uuid: str
    op: int
    want: WantFlow


@dataclass(slots=True)
class DeleteFlow:
    uuid: str


@dataclass(slots=True)
class InsertLb:
    op: int
    key: str
    want: WantLb


@dataclass(slots=True)
class UpdateLb:
    uuid: str
    op: int
    want: WantLb


@dataclass(slots=True)
class DeleteLb:
    uuid: str


PlanAction = InsertGroup | ResizeGroup | InsertFlow | UpdateFlow | DeleteFlow | InsertLb | UpdateLb | DeleteLb
_WITH_OP = (InsertGroup, InsertFlow, UpdateFlow, InsertLb, UpdateLb)


@dataclass(slots=True)
class Plan:
    ops: list[Mapping[str, Any]] = field(default_factory=list)
    actions: list[PlanAction] = field(default_factory=list)  # replayed on the cache after success
    inserted: int = 0
    updated: int = 0
    deleted: int = 0

    def __bool__(self) -> bool:
        return bool(self.ops)

    def extend(self, other: Plan) -> None:
        """Append ``other``'s operations (its actions' op indexes shifted to where they land)."""
        base = len(self.ops)
        self.ops.extend(other.ops)
        for a in other.actions:
            if base and isinstance(a, _WITH_OP):
                a.op += base
            self.actions.append(a)
        self.inserted += other.inserted
        self.updated += other.updated
        self.deleted += other.deleted


def _where(u: str) -> list[Any]:
    return [["_uuid", "==", ["uuid", u]]]


def _uuid_set_json(dps: frozenset[str]) -> list[Any]:
    return ["set", [["uuid", d] for d in sorted(dps)]]


GroupRef = str | list[Any]  # a group uuid, or the named-uuid ref of a group this plan inserts
GroupIndex = dict[frozenset[str], GroupRef]  # load balancers' groups: datapath set -> group
FlowGroupIndex = dict[tuple[str, frozenset[str]], GroupRef]  # flow groups: (group_kind, datapath set) -> group


def _points_right(r: FlowRow, w: WantFlow, flow_groups: FlowGroupIndex) -> bool:
    if len(w.dps) == 1:
        return r.group is None and r.dp in w.dps
    return r.group is not None and flow_groups.get((w.group_kind, w.dps)) == r.group


class _Planner:
    """One :func:`plan_sync`: groups first (keep, resize, index by datapath set), then flows, then
    load balancers, which name the groups by set (new sets get a group inserted on first use)."""

    __slots__ = (
        "cache",
        "compare_hints",
        "flow_groups",
        "keys",
        "lb_groups",
        "lb_scope",
        "named",
        "plan",
        "scope_copied",
        "want",
        "want_lbs",
    )

    def __init__(self, cache: FlowCache, want: dict[FKey, WantFlow], want_lbs: dict[str, WantLb] | None,
                 keys: set[FKey], lb_scope: set[str] | None, compare_hints: bool) -> None:
        self.cache = cache
        self.want = want
        self.want_lbs = want_lbs
        self.keys = keys
        self.lb_scope = lb_scope
        self.compare_hints = compare_hints
        self.plan = Plan()
        self.scope_copied = False  # keys/want are this planner's own copies (_compare_too)
        # Like the reference, flows and load balancers never share a group: a group with flow
        # users is a flow group (load balancers on it move to a group of their own), one with only
        # load balancers on it is a load-balancer group.  Each kind is deduplicated by datapath set
        # (flow groups by group_kind and datapath set).
        self.flow_groups: FlowGroupIndex = {}
        self.lb_groups: GroupIndex = {}
        self.named = 0

    def group_kind(self, g: str, users: set[str]) -> str:
        """The group_kind of flow group ``g``: the one remembered, else (a group read from SB) that
        of the first of its flows this plan compares, remembered from now on (a classification of
        the row, not a change to it)."""
        cache = self.cache
        kind = cache.group_kinds.get(g)
        if kind is None:
            kind = ""
            for u in users:
                w = self.want.get(cache.flows[u].key)
                if w is not None and len(w.dps) > 1:
                    kind = w.group_kind
                    break
            cache.group_kinds[g] = kind
        return kind

    def lb_in_scope(self, key: str) -> bool:
        return self.want_lbs is not None and (self.lb_scope is None or key in self.lb_scope)

    def _compare_too(self, uuids: Iterable[str], dps: frozenset[str], kind: str) -> None:
        """Bring the cached flows ``uuids`` (those not compared yet) into this plan, wanted on
        ``dps`` with ``kind``: their group is resized under them, so they are written to another.
        The caller's scope and want are copied first (they stay as they were)."""
        if not self.scope_copied:
            self.scope_copied = True
            self.keys, self.want = set(self.keys), dict(self.want)
        cache, keys, want = self.cache, self.keys, self.want
        for u in uuids:
            r = cache.flows[u]
            if r.key not in keys:
                keys.add(r.key)
                want[r.key] = WantFlow(dps, dict(r.ext), dict(r.tags), kind)

    # -- 1. groups --
    def plan_groups(self) -> None:
        """Index the groups by kind and set; resize in place the groups (used by the flows and
        load balancers being compared) whose users all want one new set nobody has."""
        cache, keys, want = self.cache, self.keys, self.want
        affected: set[str] = set()
        compared: dict[str, list[str]] = {}  # group -> its users being compared
        for k in keys:
            for u in cache.uuids(k):
                g = cache.flows[u].group
                if g is not None:
                    affected.add(g)
                    compared.setdefault(g, []).append(u)
        if self.want_lbs is not None:
            scope = self.lb_scope
            affected |= {g for lb in cache.lbs.values() if scope is None or lb.key in scope for g in lb.groups()}
        lb_users: dict[str, list[LbRow]] = {}
        for lb in cache.lbs.values():
            for g in lb.groups():
                lb_users.setdefault(g, []).append(lb)
        kinds: dict[str, str] = {}
        for g, dps in cache.groups.items():
            users = cache.group_users.get(g)
            if users:
                kinds[g] = kind = self.group_kind(g, users)
                self.flow_groups.setdefault((kind, dps), g)
            elif g in lb_users:
                self.lb_groups.setdefault(dps, g)
        resizes: list[tuple[str, frozenset[str], str | None]] = []
        for g in sorted(affected):
            cur = cache.groups.get(g)
            if cur is None:
                continue
            if cache.group_users.get(g):
                kind = kinds[g]
                if not self._wants_another_set(compared.get(g, ()), kind, cur):
                    continue  # (a service joining: its flows join the cluster group as it is)
                counts: dict[tuple[str, frozenset[str]], int] = {}
                stay: list[str] = []  # users not compared: they keep the group's set
                for u in cache.group_users.get(g, ()):
                    k = cache.flows[u].key
                    if k in keys:
                        w = want.get(k)
                        if w is not None and len(w.dps) > 1:
                            t = (w.group_kind, w.dps)
                            counts[t] = counts.get(t, 0) + 1
                    else:
                        counts[(kind, cur)] = counts.get((kind, cur), 0) + 1
                        stay.append(u)
                wanted_flows = set(counts)
                if len(counts) == 2 and (kind, cur) in counts and len(cur) > 1:
                    # Most users move to one new set (a node joining: the cluster load balancers'
                    # flows gain its switch, a few port-group ACLs' do not): the group is resized
                    # for them and the few that keep the old set move to a group of their own,
                    # rather than every other flow being pointed at a new group.
                    (target,) = set(counts) - {(kind, cur)}
                    if counts[target] > counts[(kind, cur)] and target not in self.flow_groups:
                        self._compare_too(stay, cur, kind)
                        keys, want = self.keys, self.want
                        wanted_flows = {target}
                if len(wanted_flows) == 1:
                    (new_kind, new), = wanted_flows
                    other = self.flow_groups.get((new_kind, new))
                    if (isinstance(other, str) and other != g and new != cur and len(cur) > 1
                            and len(cache.group_users.get(other, ())) < len(cache.group_users[g])):
                        # Another group has the new set but fewer users (a node leaving: the few
                        # flows moved out when it joined): this group is resized and takes them.
                        self._compare_too(cache.group_users.get(other, ()), new, new_kind)
                        keys, want = self.keys, self.want
                        del self.flow_groups[(new_kind, new)]
                    if (new_kind, new) != (kind, cur) and (new_kind, new) not in self.flow_groups:
                        if self.flow_groups.get((kind, cur)) == g:
                            del self.flow_groups[(kind, cur)]
                        self.flow_groups[(new_kind, new)] = g
                        if new == cur:  # only its flows' kind changed: the row stays as it is
                            cache.group_kinds[g] = new_kind
                        else:
                            resizes.append((g, new, new_kind))
                continue
            wanted: set[frozenset[str]] = set()
            for lb in lb_users.get(g, ()):
                if self.want_lbs is None or not self.lb_in_scope(lb.key):
                    wanted.add(cur)
                else:
                    wl = self.want_lbs.get(lb.key)
                    if wl is not None:
                        w_dps = wl.lr_dps if lb.lr_group == g else wl.dps
                        if w_dps:
                            wanted.add(w_dps)
            if len(wanted) == 1:
                (new,) = tuple(wanted)
                if new != cur and new not in self.lb_groups:
                    resizes.append((g, new, None))
                    if self.lb_groups.get(cur) == g:
                        del self.lb_groups[cur]
                    self.lb_groups[new] = g
        plan = self.plan
        for g, new, resized_kind in resizes:
            plan.ops.append({"op": "update", "table": "Logical_DP_Group", "where": _where(g),
                             "row": {"datapaths": _uuid_set_json(new)}})
            plan.actions.append(ResizeGroup(g, new, resized_kind))
            plan.updated += 1

    def _wants_another_set(self, users: Iterable[str], kind: str, cur: frozenset[str]) -> bool:
        """Does one of the compared flows ``users`` of a group with ``kind`` and set ``cur`` want
        another group kind or set?  If none does, the group stays as it is: the others keep it,
        and flows brought into the comparison later (:meth:`_compare_too`) want their own group's
        kind and set -- so its users need not be counted one by one (thousands in the cluster
        load balancers' group)."""
        cache, want = self.cache, self.want
        for u in users:
            w = want.get(cache.flows[u].key)
            if w is not None and len(w.dps) > 1 and (w.group_kind != kind or w.dps != cur):
                return True
        return False

    def _insert_group(self, s: frozenset[str], kind: str | None) -> list[Any]:
        """A new group with set ``s`` (``kind``: a flow group's group_kind), named in this plan."""
        self.named += 1
        name = f"g{self.named}"
        plan = self.plan
        plan.ops.append({"op": "insert", "table": "Logical_DP_Group", "uuid-name": name,
                         "row": {"datapaths": _uuid_set_json(s)}})
        plan.actions.append(InsertGroup(len(plan.ops) - 1, s, kind))
        plan.inserted += 1
        return ["named-uuid", name]

    def group_ref(self, s: frozenset[str], index: GroupIndex) -> list[Any]:
        """The reference to the load balancers' group with set ``s`` (inserted by this plan if none)."""
        ref = index.get(s)
        if ref is None:
            ref = index[s] = self._insert_group(s, None)
        return ["uuid", ref] if isinstance(ref, str) else ref

    def flow_group_ref(self, w: WantFlow) -> list[Any]:
        """The reference to the flow group of ``w``'s kind and set (inserted by this plan if none)."""
        k = (w.group_kind, w.dps)
        ref = self.flow_groups.get(k)
        if ref is None:
            ref = self.flow_groups[k] = self._insert_group(w.dps, w.group_kind)
        return ["uuid", ref] if isinstance(ref, str) else ref

    # -- 2. flows --
    def _ref_cols(self, w: WantFlow) -> dict[str, Any]:
        if len(w.dps) == 1:
            (d,) = tuple(w.dps)
            return {"logical_datapath": ["uuid", d], "logical_dp_group": ["set", []]}
        return {"logical_datapath": ["set", []], "logical_dp_group": self.flow_group_ref(w)}

    def _delete_flow(self, u: str) -> None:
        plan = self.plan
        plan.ops.append({"op": "delete", "table": "Logical_Flow", "where": _where(u)})
        plan.actions.append(DeleteFlow(u))
        plan.deleted += 1

    def plan_flows(self) -> None:
        """Insert, update (datapath reference, external_ids, tags) or delete each compared flow."""
        cache, want, plan, flow_groups = self.cache, self.want, self.plan, self.flow_groups
        ops, actions = plan.ops, plan.actions
        for k in self.keys:
            have = cache.uuids(k)
            w = want.get(k)
            if w is None:
                for u in have:
                    self._delete_flow(u)
                continue
            if not have:
                ops.append(FlowInsert(k, w, None if len(w.dps) == 1 else self.flow_group_ref(w)))
                actions.append(InsertFlow(len(ops) - 1, k, w))
                plan.inserted += 1
                continue
            keep = next((u for u in have if _points_right(cache.flows[u], w, flow_groups)), have[0])
            for u in have:
                if u != keep:
                    self._delete_flow(u)
            r = cache.flows[keep]
            upd: dict[str, Any] = {}
            if not _points_right(r, w, flow_groups):
                upd.update(self._ref_cols(w))
            if r.ext != w.ext and self.compare_hints:
                upd["external_ids"] = _omap(w.ext)
            if r.tags != w.tags:
                upd["tags"] = _omap(w.tags)
            if upd:
                ops.append({"op": "update", "table": "Logical_Flow", "where": _where(keep), "row": upd})
                actions.append(UpdateFlow(keep, len(ops) - 1, w))
                plan.updated += 1

    # -- 3. load balancers (datapaths through datapath_group, never the datapaths column) --
    def plan_lbs(self, want_lbs: dict[str, WantLb]) -> None:
        cache, plan = self.cache, self.plan
        ops = plan.ops
        lb_by_key: dict[str, list[str]] = {}
        for u, lb in cache.lbs.items():
            lb_by_key.setdefault(lb.key, []).append(u)
        for u, lb in cache.lbs.items():
            if not self.lb_in_scope(lb.key):
                continue
            if lb.key not in want_lbs or lb_by_key[lb.key][0] != u:
                ops.append({"op": "delete", "table": "Load_Balancer", "where": _where(u)})
                plan.actions.append(DeleteLb(u))
                plan.deleted += 1
        split, ls_col = cache.split_lbs, cache.ls_group_column
        for lk, wl in want_lbs.items():
            have_lb = lb_by_key.get(lk)
            if split:
                gref = self.group_ref(wl.dps, self.lb_groups) if wl.dps else ["set", []]
                lref = self.group_ref(wl.lr_dps, self.lb_groups) if wl.lr_dps else ["set", []]
            else:
                gref, lref = self.group_ref(wl.dps, self.lb_groups), ["set", []]
            if not have_lb:
                row = dict(wl.cols)
                op: dict[str, Any] = {"op": "insert", "table": "Load_Balancer", "row": row}
                if split:
                    row[ls_col], row["lr_datapath_group"] = gref, lref
                    if wl.uuid is not None:
                        op["uuid"] = wl.uuid  # the NB row's, as the reference persists it
                else:
                    row["datapath_group"] = gref
                ops.append(op)
                plan.actions.append(InsertLb(len(ops) - 1, lk, wl))
                plan.inserted += 1
                continue
            u = have_lb[0]
            lb = cache.lbs[u]
            have = lb.cols
            # (Equal as written is the rule; only a difference is looked at again, order aside.)
            upd = {c: v for c, v in wl.cols.items() if (old := have.get(c)) != v and _norm_json(old) != _norm_json(v)}
            if split:
                moved = lb.group is not None and lb.group_col != ls_col  # (the chassis features changed)
                if _ref_json(lb.group) != gref or moved:
                    upd[ls_col] = gref
                if moved:
                    upd[lb.group_col] = ["set", []]
                if _ref_json(lb.lr_group) != lref:
                    upd["lr_datapath_group"] = lref
            elif lb.group is None or gref != ["uuid", lb.group]:
                upd["datapath_group"] = gref
                upd["datapaths"] = ["set", []]
            if upd:
                ops.append({"op": "update", "table": "Load_Balancer", "where": _where(u), "row": upd})
                plan.actions.append(UpdateLb(u, len(ops) - 1, wl))
                plan.updated += 1


def plan_sync(
    cache: FlowCache,
    want: dict[FKey, WantFlow],
    want_lbs: dict[str, WantLb] | None,
    scope: set[FKey] | None = None,
    compare_hints: bool = True,
    lb_scope: set[str] | None = None,
) -> Plan:
    """The operations that make SB (as cached) hold ``want``.

    ``scope``: only these flow identities are compared (an incremental run passes the
    flows that changed; ``want`` then needs to hold only those).  None compares all.
    ``want_lbs`` None leaves load balancers alone; with ``lb_scope`` (NB load-balancer uuids) only
    those are compared (``want_lbs`` then holds those that should exist).  ``compare_hints`` False ignores external_ids
    (the stage-hint of a flow several entities produce names one of them, depending on history).
    """
    keys: set[FKey] = scope if scope is not None else set(cache.by_key) | set(want)
    if not keys and (want_lbs is None or (lb_scope is not None and not lb_scope and not want_lbs)):
        return Plan()  # nothing to compare (e.g. a run that changed only nb_cfg or an address set)
    p = _Planner(cache, want, want_lbs, keys, lb_scope, compare_hints)
    p.plan_groups()
    p.plan_flows()
    if want_lbs is not None:
        p.plan_lbs(want_lbs)
    return p.plan


def apply_plan(cache: FlowCache, plan: Plan, results: list[Any]) -> None:
    """Replay a committed plan onto the cache, using the uuids the server assigned to inserts."""
    by_name: dict[str, str] = {}
    for a in plan.actions:
        if isinstance(a, InsertGroup):
            u = str(results[a.op]["uuid"][1])
            by_name[plan.ops[a.op]["uuid-name"]] = u
            cache.set_group(u, a.dps)
            if a.kind is not None:
                cache.group_kinds[u] = a.kind
        elif isinstance(a, ResizeGroup):
            cache.set_group(a.group, a.dps)
            if a.kind is not None:
                cache.group_kinds[a.group] = a.kind

    def group_from_row(row: dict[str, Any], col: str | None = None) -> str | None:
        ref = row.get(col) if col is not None else row.get("logical_dp_group", row.get("datapath_group"))
        if not isinstance(ref, list) or ref == ["set", []]:
            return None
        if ref[0] == "uuid":
            return str(ref[1])
        return by_name.get(ref[1])  # a named-uuid of a group inserted by this plan

    touched: set[str] = set()
    for a in plan.actions:
        if isinstance(a, DeleteFlow):
            r = cache.flows.get(a.uuid)
            if r is not None and r.group:
                touched.add(r.group)
            cache.del_flow(a.uuid)
        elif isinstance(a, InsertFlow):
            row = plan.ops[a.op]["row"]
            cache.add_flow(str(results[a.op]["uuid"][1]), FlowRow(
                a.key, _uuid_of(row.get("logical_datapath")), group_from_row(row), a.want.ext, a.want.tags))
        elif isinstance(a, UpdateFlow):
            r = cache.flows[a.uuid]
            row = plan.ops[a.op]["row"]
            if "logical_datapath" in row:
                if r.group:
                    touched.add(r.group)
                cache.set_flow_ref(a.uuid, _uuid_of(row["logical_datapath"]), group_from_row(row))
            r.ext, r.tags = a.want.ext, a.want.tags
        elif isinstance(a, DeleteLb):
            lb = cache.lbs.pop(a.uuid, None)
            if lb is not None:
                touched.update(lb.groups())
        elif isinstance(a, InsertLb):
            row = plan.ops[a.op]["row"]
            if "lr_datapath_group" in row:  # split groups
                col = cache.ls_group_column
                new_lb = LbRow(a.key, dict(a.want.cols), group_from_row(row, col),
                               group_from_row(row, "lr_datapath_group"), col)
            else:
                new_lb = LbRow(a.key, dict(a.want.cols), group_from_row(row))
            cache.lbs[str(results[a.op]["uuid"][1])] = new_lb
        elif isinstance(a, UpdateLb):
            lb = cache.lbs[a.uuid]
            row = plan.ops[a.op]["row"]
            lb.cols = dict(a.want.cols)
            col = cache.ls_group_column if cache.split_lbs else "datapath_group"
            if col in row:
                if lb.group:
                    touched.add(lb.group)
                lb.group, lb.group_col = group_from_row(row, col), col
            if "lr_datapath_group" in row:
                if lb.lr_group:
                    touched.add(lb.lr_group)
                lb.lr_group = group_from_row(row, "lr_datapath_group")
    # Groups nobody references any more were garbage-collected by the server.
    unused = {g for g in touched if not cache.group_users.get(g)}
    if unused:
        unused -= {g for lb in cache.lbs.values() for g in lb.groups()}
        for g in unused:
            cache.del_group(g)
