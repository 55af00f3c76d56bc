"""The flow writer's plans, without a server: typed actions replayed on the cache, repairs."""

from __future__ import annotations

import itertools
import json
from typing import Any

from ovn_northd_py.ovsdb.raw import _dumps
from ovn_northd_py.sync.flow_writer import FlowWriter
from ovn_northd_py.sync.lflows import (
    DeleteFlow,
    FKey,
    FlowCache,
    FlowRow,
    InsertFlow,
    InsertGroup,
    InsertLb,
    Plan,
    ResizeGroup,
    UpdateFlow,
    WantFlow,
    WantLb,
    apply_plan,
    plan_sync,
)

_uuids = (f"00000000-0000-0000-0000-{i:012d}" for i in itertools.count(1))


def commit(cache: FlowCache, plan: Plan) -> None:
    """Apply ``plan`` as if the server had committed it (fresh uuids for the inserts)."""
    apply_plan(cache, plan, [{"uuid": ["uuid", next(_uuids)]} if op["op"] == "insert" else {} for op in plan.ops])


def key(match: str) -> FKey:
    return ("ls_in_acl", "ingress", 8, 100, match, "next;", "")


def flow(*dps: str) -> WantFlow:
    return WantFlow(frozenset(dps), {"stage-name": "ls_in_acl"}, {})


def lb(*dps: str) -> WantLb:
    return WantLb(frozenset(dps), {"name": "lb", "vips": ["map", []], "protocol": ["set", []],
                                   "options": ["map", []], "external_ids": ["map", [["lb_id", "L"]]]})


def kinds(plan: Plan) -> list[type]:
    return [type(a) for a in plan.actions]


def test_a_cold_plan_inserts_groups_flows_and_lbs_and_replaying_it_leaves_nothing_to_do() -> None:
    cache = FlowCache()
    want = {key("a"): flow("d1"), key("b"): flow("d1", "d2"), key("c"): flow("d1", "d2")}
    plan = plan_sync(cache, want, {"L": lb("d1", "d2")})
    assert kinds(plan).count(InsertGroup) == 2  # one for the flows, one for the load balancer
    assert kinds(plan).count(InsertFlow) == 3 and kinds(plan).count(InsertLb) == 1
    assert (plan.inserted, plan.updated, plan.deleted) == (6, 0, 0)
    commit(cache, plan)
    assert len(cache.flows) == 3 and len(cache.groups) == 2 and len(cache.lbs) == 1
    assert not plan_sync(cache, want, {"L": lb("d1", "d2")})


def test_a_group_whose_flows_all_move_is_resized_in_place() -> None:
    cache = FlowCache()
    commit(cache, plan_sync(cache, {key("b"): flow("d1", "d2"), key("c"): flow("d1", "d2")}, None))
    (g,) = cache.groups
    plan = plan_sync(cache, {key("b"): flow("d1", "d2", "d3"), key("c"): flow("d1", "d2", "d3")}, None)
    assert kinds(plan) == [ResizeGroup] and plan.actions[0].group == g  # type: ignore[union-attr]
    commit(cache, plan)
    assert cache.groups == {g: frozenset({"d1", "d2", "d3"})}


def test_an_incremental_plan_updates_and_deletes_only_its_scope() -> None:
    cache = FlowCache()
    commit(cache, plan_sync(cache, {key("a"): flow("d1"), key("b"): flow("d2")}, None))
    plan = plan_sync(cache, {key("a"): flow("d2")}, None, scope={key("a"), key("x")})
    assert kinds(plan) == [UpdateFlow]
    plan = plan_sync(cache, {}, None, scope={key("b")})
    assert kinds(plan) == [DeleteFlow]
    commit(cache, plan)
    assert [r.key for r in cache.flows.values()] == [key("a")]


def test_plans_extend_with_their_op_indexes_shifted() -> None:
    first = plan_sync(FlowCache(), {key("a"): flow("d1")}, None)
    second = plan_sync(FlowCache(), {key("b"): flow("d1", "d2")}, None)
    first.extend(second)
    assert [getattr(a, "op", None) for a in first.actions] == [0, 1, 2]
    assert first.inserted == 3
    assert first.ops[first.actions[2].op]["table"] == "Logical_Flow"  # type: ignore[union-attr]


def _row_update(table: str, u: str, old: Any, new: Any) -> list[dict[str, Any]]:
    return [{table: {u: {"old": old, "new": new}}}]


def test_repairs_delete_foreign_rows_and_reinsert_ours() -> None:
    w = FlowWriter()
    commit(w.cache, plan_sync(w.cache, {key("a"): flow("d1")}, None))
    (ours,) = w.cache.flows
    foreign = "f0000000-0000-0000-0000-000000000001"
    plan, st = w.take_repairs(_row_update("Logical_Flow", foreign, None, {}) +
                              _row_update("Logical_Flow", ours, {}, None), live_dps={"d1"})
    assert (st.foreign_inserts, st.foreign_deletes, st.foreign_modifies) == (1, 1, 0)
    assert [op["op"] for op in plan.ops] == ["delete", "insert"]
    assert kinds(plan) == [InsertFlow] and plan.actions[0].op == 1  # type: ignore[union-attr]
    commit(w.cache, plan)
    assert [r.key for r in w.cache.flows.values()] == [key("a")]


def _split_lb(ls: tuple[str, ...], lr: tuple[str, ...]) -> WantLb:
    return WantLb(frozenset(ls), {"name": "lb", "vips": ["map", []], "protocol": ["set", []],
                                  "options": ["map", []], "external_ids": ["map", []]},
                  frozenset(lr), "0000000a-0000-4000-8000-000000000000")


def test_split_lb_groups_25_03() -> None:
    # 25.03 (lb_split_datapath_groups): switches in ls_datapath_group, routers in lr_datapath_group,
    # the row inserted with the NB row's uuid; a router-only load balancer has a row too.
    cache = FlowCache(split_lbs=True)
    u = "0000000a-0000-4000-8000-000000000000"
    plan = plan_sync(cache, {}, {u: _split_lb(("s1", "s2"), ("r1",))})
    (ins,) = [op for op in plan.ops if op["table"] == "Load_Balancer"]
    assert ins["uuid"] == u and "datapath_group" not in ins["row"]
    assert ins["row"]["ls_datapath_group"][0] == "named-uuid" and ins["row"]["lr_datapath_group"][0] == "named-uuid"
    apply_plan(cache, plan, [{"uuid": ["uuid", u if op["table"] == "Load_Balancer" else next(_uuids)]}
                             for op in plan.ops])
    (row,) = cache.lbs.values()
    assert row.key == u and cache.groups[row.group or ""] == {"s1", "s2"} and cache.groups[row.lr_group or ""] == {"r1"}
    assert not plan_sync(cache, {}, {u: _split_lb(("s1", "s2"), ("r1",))})
    # The switches go: ls_datapath_group is cleared, the row stays for its router.
    plan = plan_sync(cache, {}, {u: _split_lb((), ("r1",))})
    (upd,) = [op for op in plan.ops if op["table"] == "Load_Balancer"]
    assert upd["op"] == "update" and upd["row"] == {"ls_datapath_group": ["set", []]}


def test_split_lb_switches_in_datapath_group_for_chassis_without_ls_dpg_column() -> None:
    # 25.03 with a chassis that lacks ls-dpg-column (observed: a 23.03 ovn-controller): the switches
    # go in the older datapath_group, and back to ls_datapath_group once every chassis has it.
    u = "0000000a-0000-4000-8000-000000000000"
    cache = FlowCache(split_lbs=True, ls_group_column="datapath_group")
    plan = plan_sync(cache, {}, {u: _split_lb(("s1",), ("r1",))})
    (ins,) = [op for op in plan.ops if op["table"] == "Load_Balancer"]
    assert ins["row"]["datapath_group"][0] == "named-uuid" and "ls_datapath_group" not in ins["row"]
    apply_plan(cache, plan, [{"uuid": ["uuid", u if op["table"] == "Load_Balancer" else next(_uuids)]}
                             for op in plan.ops])
    (row,) = cache.lbs.values()
    assert row.group_col == "datapath_group" and cache.groups[row.group or ""] == {"s1"}
    assert not plan_sync(cache, {}, {u: _split_lb(("s1",), ("r1",))})
    cache.ls_group_column = "ls_datapath_group"
    plan = plan_sync(cache, {}, {u: _split_lb(("s1",), ("r1",))})
    (upd,) = [op for op in plan.ops if op["table"] == "Load_Balancer"]
    assert upd["row"] == {"ls_datapath_group": ["uuid", row.group], "datapath_group": ["set", []]}
    apply_plan(cache, plan, [{"count": 1} for _ in plan.ops])
    assert row.group_col == "ls_datapath_group" and not plan_sync(cache, {}, {u: _split_lb(("s1",), ("r1",))})


def lb_flow(*dps: str) -> WantFlow:
    return WantFlow(frozenset(dps), {"stage-name": "ls_in_lb"}, {}, "lb")


def test_flows_share_groups_only_with_flows_of_their_kind() -> None:
    cache = FlowCache()
    want = {key("a"): flow("d1", "d2"), key("b"): lb_flow("d1", "d2"), key("c"): lb_flow("d1", "d2")}
    plan = plan_sync(cache, want, {"L": lb("d1", "d2")})
    assert kinds(plan).count(InsertGroup) == 3  # plain flows, load-balancer flows, the Load_Balancer row
    commit(cache, plan)
    by_group: dict[str | None, set[str]] = {}
    for r in cache.flows.values():
        by_group.setdefault(r.group, set()).add(r.key[4])
    assert sorted(map(sorted, by_group.values())) == [["a"], ["b", "c"]]
    assert not plan_sync(cache, want, {"L": lb("d1", "d2")})
    # A flow whose kind changes moves to the group of its new kind.
    want[key("a")] = lb_flow("d1", "d2")
    plan = plan_sync(cache, want, None, scope={key("a")})
    assert kinds(plan) == [UpdateFlow]
    commit(cache, plan)
    assert len({r.group for r in cache.flows.values()}) == 1


def test_a_group_read_from_sb_takes_the_kind_of_its_flows() -> None:
    cache = FlowCache()
    want = {key("a"): flow("d1", "d2"), key("b"): lb_flow("d1", "d2")}
    commit(cache, plan_sync(cache, want, None))
    cache.group_kinds.clear()  # as after a restart: SB does not say which group is whose
    assert not plan_sync(cache, want, None)
    assert sorted(cache.group_kinds.values()) == ["", "lb"]


def test_cache_by_key_holds_one_uuid_as_a_string_and_duplicates_as_a_list() -> None:
    cache = FlowCache()
    k = key("a")
    cache.add_flow("u1", FlowRow(k, "dp1", None, {}, {}))
    assert cache.by_key[k] == "u1" and cache.uuids(k) == ("u1",)
    cache.add_flow("u2", FlowRow(k, "dp2", None, {}, {}))
    cache.add_flow("u3", FlowRow(k, "dp3", None, {}, {}))
    assert list(cache.uuids(k)) == ["u1", "u2", "u3"]
    cache.del_flow("u2")
    assert list(cache.uuids(k)) == ["u1", "u3"]
    cache.del_flow("u1")
    assert cache.by_key[k] == "u3" and cache.uuids(k) == ("u3",)
    cache.del_flow("u3")
    assert k not in cache.by_key and cache.uuids(k) == ()


def test_a_planned_flow_insert_reads_and_encodes_as_its_operation() -> None:
    want = {key("a"): WantFlow(frozenset({"dp1"}), {"stage-name": "ls_in_acl"}, {"in_out_port": "p1"}),
            key("b"): flow("dp1", "dp2")}
    plan = plan_sync(FlowCache(), want, None, set(want))
    (single,) = [op for op in plan.ops if op["table"] == "Logical_Flow" and op["row"]["match"] == "a"]
    assert dict(single) == {"op": "insert", "table": "Logical_Flow", "row": {
        "pipeline": "ingress", "table_id": 8, "priority": 100, "match": "a", "actions": "next;",
        "external_ids": ["map", [["stage-name", "ls_in_acl"]]], "tags": ["map", [["in_out_port", "p1"]]],
        "logical_datapath": ["uuid", "dp1"]}}
    (grouped,) = [op for op in plan.ops if op["table"] == "Logical_Flow" and op["row"]["match"] == "b"]
    assert grouped["row"]["logical_dp_group"][0] == "named-uuid"
    assert json.loads(_dumps(plan.ops)) == [dict(op) for op in plan.ops]
