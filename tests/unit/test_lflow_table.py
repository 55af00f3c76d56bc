"""The logical flow table: identity, datapath sets, owners, changes and groups."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovn_northd_py.flows.owners import group_scope
from ovn_northd_py.lflow.stages import LR_IN_ADMISSION, LS_IN_ACL, LS_IN_L2_LKUP, LS_IN_LB, Stage
from ovn_northd_py.lflow.table import FlowTable


def acl(t: FlowTable, dp: int, owner: object = None, match: str = "1", **kw: object) -> int:
    return t.add(dp, LS_IN_ACL, 0, match, "next;", owner=owner, **kw)  # type: ignore[arg-type]


def many(t: FlowTable, dps: list[int], priority: int = 0, stage: Stage = LS_IN_ACL) -> int:
    fid = t.add_many(dps, stage, priority, "1", "next;")
    assert fid is not None
    return fid


# -- identity -----------------------------------------------------------------


def test_identical_flows_on_two_datapaths_are_one_flow() -> None:
    t = FlowTable(4)
    assert acl(t, 0) == acl(t, 1)
    assert len(t) == 1


def test_flow_records_every_datapath_it_was_added_on() -> None:
    t = FlowTable(4)
    fid = acl(t, 3)
    acl(t, 1)
    assert t.datapaths(fid) == [1, 3]


def test_different_priority_makes_a_different_flow() -> None:
    t = FlowTable(4)
    assert t.add(0, LS_IN_ACL, 1, "1", "next;") != t.add(0, LS_IN_ACL, 2, "1", "next;")


def test_different_stage_makes_a_different_flow() -> None:
    t = FlowTable(4)
    assert t.add(0, LS_IN_ACL, 0, "1", "next;") != t.add(0, LS_IN_LB, 0, "1", "next;")


def test_different_controller_meter_makes_a_different_flow() -> None:
    t = FlowTable(4)
    assert acl(t, 0, controller_meter="m1") != acl(t, 0, controller_meter="m2")


def test_hint_is_not_part_of_identity_and_first_hint_is_kept() -> None:
    t = FlowTable(4)
    fid = acl(t, 0, hint="aaaa")
    assert acl(t, 1, hint="bbbb") == fid
    assert t.flow(fid).hint == "aaaa"


def test_io_port_is_carried_from_the_first_add() -> None:
    t = FlowTable(4)
    fid = acl(t, 0, io_port="lsp1")
    acl(t, 1, io_port="lsp2")
    assert t.flow(fid).io_port == "lsp1"


def test_find_returns_the_flow_id_for_an_identity() -> None:
    t = FlowTable(4)
    fid = acl(t, 2, controller_meter="m")
    assert t.find(LS_IN_ACL, 0, "1", "next;", "m") == fid


def test_find_of_unknown_identity_is_none() -> None:
    assert FlowTable(4).find(LS_IN_ACL, 0, "1", "next;") is None


def test_priority_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError):
        FlowTable(1).add(0, LS_IN_ACL, 65536, "1", "next;")


def test_negative_datapath_index_is_rejected() -> None:
    with pytest.raises(IndexError):
        acl(FlowTable(1), -1)


# -- capacity and single-datapath storage ---------------------------------------


def test_adding_beyond_capacity_grows_the_table() -> None:
    t = FlowTable(2)
    fid = acl(t, 0)
    acl(t, 500)
    assert t.capacity > 500 and t.datapaths(fid) == [0, 500]


def test_single_datapath_flow_reports_its_logical_datapath() -> None:
    t = FlowTable(8)
    assert t.single_datapath(acl(t, 7)) == 7


def test_multi_datapath_flow_has_no_single_datapath() -> None:
    t = FlowTable(8)
    fid = acl(t, 1)
    acl(t, 2)
    assert t.single_datapath(fid) is None


def test_single_datapath_flows_use_no_bitmap_rows() -> None:
    t = FlowTable(1000)
    for i in range(500):
        acl(t, i, match=f"m{i}")
    assert t._bits.rows_in_use == 0


def test_flow_back_on_one_datapath_is_demoted_to_single() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    acl(t, 6, owner="b")
    t.remove_owner("a")
    assert t.single_datapath(fid) == 6 and t._bits.rows_in_use == 0


# -- add_many --------------------------------------------------------------------


def test_add_many_adds_the_flow_on_every_datapath() -> None:
    t = FlowTable(16)
    fid = t.add_many([3, 1, 9], LS_IN_LB, 10, "ip", "ct_lb;")
    assert fid is not None and t.datapaths(fid) == [1, 3, 9]


def test_add_many_merges_with_flows_added_one_by_one() -> None:
    t = FlowTable(16)
    fid = t.add(5, LS_IN_LB, 10, "ip", "ct_lb;")
    assert t.add_many([1, 2], LS_IN_LB, 10, "ip", "ct_lb;") == fid
    assert t.datapaths(fid) == [1, 2, 5]


def test_add_many_of_no_datapaths_adds_nothing() -> None:
    t = FlowTable(16)
    assert t.add_many([], LS_IN_LB, 10, "ip", "ct_lb;") is None
    assert len(t) == 0


def test_add_many_references_are_dropped_with_their_owner() -> None:
    t = FlowTable(16)
    fid = t.add(5, LS_IN_LB, 10, "ip", "ct_lb;", owner="keep")
    t.add_many([1, 5, 7], LS_IN_LB, 10, "ip", "ct_lb;", owner="lb")
    t.remove_owner("lb")
    assert t.datapaths(fid) == [5]


# -- owners ------------------------------------------------------------------------


def test_remove_owner_unlinks_only_its_datapath() -> None:
    t = FlowTable(8)
    fid = acl(t, 0, owner=("ls", "a"))
    acl(t, 1, owner=("ls", "b"))
    acl(t, 2, owner=("ls", "c"))
    t.remove_owner(("ls", "b"))
    assert t.datapaths(fid) == [0, 2]


def test_pair_contributed_by_two_owners_survives_removal_of_one() -> None:
    t = FlowTable(8)
    fid = acl(t, 3, owner="a")
    acl(t, 3, owner="b")
    t.remove_owner("a")
    assert t.datapaths(fid) == [3]


def test_pair_contributed_by_two_owners_goes_when_both_are_removed() -> None:
    t = FlowTable(8)
    fid = acl(t, 3, owner="a")
    acl(t, 3, owner="b")
    t.remove_owner("a")
    t.remove_owner("b")
    assert fid not in t


def test_shared_pair_refcount_also_holds_on_bitmap_flows() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    acl(t, 2, owner="a")
    acl(t, 2, owner="b")
    t.remove_owner("a")
    assert t.datapaths(fid) == [2]


def test_unowned_references_are_permanent() -> None:
    t = FlowTable(8)
    fid = acl(t, 4)
    acl(t, 4, owner="a")
    t.remove_owner("a")
    assert t.datapaths(fid) == [4]


def test_removal_drops_a_flow_when_its_last_datapath_goes() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    acl(t, 2, owner="a")
    t.remove_owner("a")
    assert fid not in t and len(t) == 0


def test_remove_owner_leaves_other_flows_of_other_owners() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a", match="x")
    other = acl(t, 1, owner="b", match="y")
    t.remove_owner("a")
    assert list(t) == [other]


def test_remove_owner_returns_the_number_of_references_dropped() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a", match="x")
    acl(t, 2, owner="a", match="x")
    acl(t, 2, owner="a", match="y")
    assert t.remove_owner("a") == 3


def test_removing_an_unknown_owner_is_a_no_op() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a")
    assert t.remove_owner("nobody") == 0 and len(t) == 1


def test_owner_adding_the_same_pair_twice_releases_both_references() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    acl(t, 1, owner="a")
    t.remove_owner("a")
    assert fid not in t


def test_removed_owner_is_forgotten() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a")
    t.remove_owner("a")
    assert not t.has_owner("a") and t.owner_refs("a") == 0


# -- changes -------------------------------------------------------------------------


def test_first_take_changes_reports_all_flows_added() -> None:
    t = FlowTable(8)
    a, b = acl(t, 1, match="x"), acl(t, 2, match="y")
    assert t.take_changes().added == [a, b]


def test_take_changes_empties_the_dirty_set() -> None:
    t = FlowTable(8)
    acl(t, 1)
    t.take_changes()
    assert not t.take_changes()


def test_new_datapath_on_existing_flow_is_a_modification() -> None:
    t = FlowTable(8)
    fid = acl(t, 1)
    t.take_changes()
    acl(t, 2)
    assert t.take_changes().modified == [fid]


def test_extra_reference_to_existing_pair_is_not_a_change() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a")
    t.take_changes()
    acl(t, 1, owner="b")
    assert not t.take_changes()


def test_flow_losing_its_last_datapath_is_reported_removed() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    t.take_changes()
    t.remove_owner("a")
    assert t.take_changes().removed == [fid]


def test_flow_added_and_removed_within_one_batch_is_not_reported() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a")
    t.remove_owner("a")
    assert not t.take_changes()


def test_flow_removed_and_readded_within_one_batch_keeps_its_id() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    t.take_changes()
    t.remove_owner("a")
    assert acl(t, 2, owner="b") == fid
    assert t.take_changes().modified == [fid]


def test_removed_flow_id_is_reused_only_after_take_changes() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a", match="x")
    t.take_changes()
    t.remove_owner("a")
    assert acl(t, 1, match="y") != fid
    t.take_changes()
    assert acl(t, 1, match="z") == fid


# -- groups ----------------------------------------------------------------------------


def test_single_datapath_flows_have_no_group() -> None:
    t = FlowTable(8)
    fid = acl(t, 1)
    assert t.groups().group_of(fid) is None


def test_flows_on_the_same_datapath_set_share_one_group() -> None:
    t = FlowTable(8)
    a = many(t, [1, 4, 6])
    b = many(t, [6, 1, 4], stage=LS_IN_L2_LKUP)
    g = t.groups()
    assert len(g) == 1 and g.group_of(a) == g.group_of(b)


def test_flows_on_different_datapath_sets_get_different_groups() -> None:
    t = FlowTable(8)
    a = many(t, [1, 4])
    b = many(t, [1, 5], priority=1)
    g = t.groups()
    assert g.group_of(a) != g.group_of(b)


def test_group_members_are_the_flows_datapaths() -> None:
    t = FlowTable(300)
    fid = many(t, [2, 299, 17], stage=LR_IN_ADMISSION)
    g = t.groups()
    gid = g.group_of(fid)
    assert gid is not None and g.members(gid) == [2, 17, 299]


def test_groups_can_be_restricted_to_some_flows() -> None:
    t = FlowTable(8)
    a = many(t, [1, 2])
    many(t, [3, 4], priority=1)
    assert t.groups([a]).flow_ids.tolist() == [a]


def test_group_key_is_stable_across_capacity_growth() -> None:
    t = FlowTable(8)
    fid = many(t, [1, 2])
    before = t.groups()
    t.ensure_capacity(4096)
    after = t.groups()
    assert before.key(before.group_of(fid) or 0) == after.key(after.group_of(fid) or 0)


def test_flow_whose_datapaths_shrink_to_one_leaves_its_group() -> None:
    t = FlowTable(8)
    fid = acl(t, 1, owner="a")
    acl(t, 2, owner="b")
    t.remove_owner("b")
    assert t.groups().group_of(fid) is None


# -- model-based -----------------------------------------------------------------------------

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 3), st.integers(0, 40), st.sampled_from("abcd")),
        st.tuples(
            st.just("many"),
            st.integers(0, 3),
            st.sets(st.integers(0, 40), max_size=6),
            st.sampled_from("abcd"),
        ),
        st.tuples(st.just("remove"), st.sampled_from("abcd")),
        st.just(("take",)),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_table_agrees_with_a_reference_counting_model(ops: list[tuple[object, ...]]) -> None:
    t = FlowTable(4)
    refs: dict[str, Counter[tuple[int, int]]] = {o: Counter() for o in "abcd"}  # owner -> (flow#, dp) refs
    for op in ops:
        if op[0] == "add":
            _, f, dp, owner = op
            t.add(dp, LS_IN_ACL, 0, f"m{f}", "next;", owner=owner)  # type: ignore[arg-type]
            refs[owner][f, dp] += 1  # type: ignore[index]
        elif op[0] == "many":
            _, f, dps, owner = op
            t.add_many(dps, LS_IN_ACL, 0, f"m{f}", "next;", owner=owner)  # type: ignore[arg-type]
            for dp in dps:  # type: ignore[attr-defined]
                refs[owner][f, dp] += 1  # type: ignore[index]
        elif op[0] == "remove":
            t.remove_owner(op[1])
            refs[op[1]].clear()  # type: ignore[index]
        else:
            t.take_changes()
    expected: dict[int, set[int]] = {}
    for counter in refs.values():
        for (f, dp), n in counter.items():
            if n:
                expected.setdefault(f, set()).add(dp)
    actual = {}
    for fid in t:
        lf = t.flow(fid)
        actual[int(lf.match[1:])] = set(lf.datapaths)
        assert t.dp_count(fid) == len(lf.datapaths)
    assert actual == expected
    groups = t.groups()
    assert set(groups.flow_ids.tolist()) == {fid for fid in t if t.dp_count(fid) >= 2}
    for fid, gid in groups.as_dict().items():
        assert groups.members(gid) == t.datapaths(fid)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_applying_take_changes_keeps_a_mirror_in_sync(ops: list[tuple[object, ...]]) -> None:
    t = FlowTable(4)
    mirror: dict[int, tuple[str, tuple[int, ...]]] = {}  # what an SB writer would hold

    def sync() -> None:
        changes = t.take_changes()
        for fid in changes.removed:
            assert fid in mirror
            del mirror[fid]
        for fid in changes.modified:
            assert fid in mirror
        for fid in changes.added:
            assert fid not in mirror
        for fid in changes.added + changes.modified:
            lf = t.flow(fid)
            mirror[fid] = (lf.match, lf.datapaths)

    for op in ops:
        if op[0] == "add":
            _, f, dp, owner = op
            t.add(dp, LS_IN_ACL, 0, f"m{f}", "next;", owner=owner)  # type: ignore[arg-type]
        elif op[0] == "many":
            _, f, dps, owner = op
            t.add_many(dps, LS_IN_ACL, 0, f"m{f}", "next;", owner=owner)  # type: ignore[arg-type]
        elif op[0] == "remove":
            t.remove_owner(op[1])
        else:
            sync()
    sync()
    assert mirror == {fid: (t.flow(fid).match, t.flow(fid).datapaths) for fid in t}


def test_clear_forgets_flows_owners_and_pending_changes() -> None:
    t = FlowTable(8)
    acl(t, 1, owner="a")
    t.clear()
    assert len(t) == 0 and not t.has_owner("a") and not t.take_changes() and t.capacity == 8


def test_owner_removed_and_rebuilt_identically_reports_no_change() -> None:
    t = FlowTable(8)
    t.add(0, LS_IN_ACL, 10, "ip", "next;", owner=("dp", "a"))
    t.add_many([1, 2, 3], LS_IN_L2_LKUP, 10, "ip", "next;", owner=("dp", "a"))
    t.take_changed()
    t.remove_owner(("dp", "a"))
    t.add(0, LS_IN_ACL, 10, "ip", "next;", owner=("dp", "a"))
    t.add_many([1, 2, 3], LS_IN_L2_LKUP, 10, "ip", "next;", owner=("dp", "a"))
    assert t.take_changed() == ([], [])


def test_owner_rebuilt_on_other_datapaths_reports_the_flow() -> None:
    t = FlowTable(8)
    fid = t.add_many([1, 2, 3], LS_IN_L2_LKUP, 10, "ip", "next;", owner=("dp", "a"))
    t.take_changed()
    t.remove_owner(("dp", "a"))
    t.add_many([1, 2, 4], LS_IN_L2_LKUP, 10, "ip", "next;", owner=("dp", "a"))
    alive, gone = t.take_changed()
    assert alive == [fid] and gone == []
    assert sorted(t.datapaths(fid)) == [1, 2, 4]


def test_flow_emptied_then_readded_on_a_new_datapath_is_reported() -> None:
    t = FlowTable(8)
    fid = t.add(5, LS_IN_ACL, 10, "ip", "drop;", owner=("p", "x"))
    t.take_changed()
    t.remove_owner(("p", "x"))
    t.add(6, LS_IN_ACL, 10, "ip", "drop;", owner=("p", "x"))
    alive, _ = t.take_changed()
    assert alive == [fid]


# -- group-owned flows (26.03's datapath groups of load-balancer flows) -----------


def test_group_owned_only_counts_the_references_of_group_owner_kinds() -> None:
    t = FlowTable(4, frozenset({"lb"}))
    lb_only = t.add_many([0, 1, 2], LS_IN_LB, 120, "vip", "ct_lb;", owner=("lb", "L1"))
    assert lb_only is not None
    t.add(1, LS_IN_LB, 120, "vip", "ct_lb;", owner=("lb", "L2"))  # a second load balancer, same flow
    mixed = t.add_many([0, 1], LS_IN_LB, 0, "1", "next;", owner=("lb", "L1"))
    assert mixed is not None
    t.add(0, LS_IN_LB, 0, "1", "next;", owner=("dp", "s0"))
    assert t.group_owned_only(lb_only) and not t.group_owned_only(mixed)
    t.remove_owner(("dp", "s0"))  # the datapath's reference gone: only the load balancer's remain
    assert t.group_owned_only(mixed)
    t.add(1, LS_IN_LB, 0, "1", "next;", owner=("lb", "L1"), per_datapath=True)
    assert not t.group_owned_only(mixed)  # a per-datapath reference counts as the datapath's
    t.remove_owner(("lb", "L1"))
    assert t.group_owned_only(lb_only) and t.datapaths(lb_only) == [1]
    assert mixed not in t


def test_a_table_without_group_owner_kinds_has_no_group_owned_flow() -> None:
    t = FlowTable(4)
    fid = t.add_many([0, 1], LS_IN_LB, 120, "vip", "ct_lb;", owner=("lb", "L1"))
    assert fid is not None and not t.group_owned_only(fid)


# -- purging a deleted datapath -------------------------------------------------


def test_purge_drops_every_owners_references_on_the_datapath() -> None:
    t = FlowTable(4)
    shared = t.add_many([0, 1, 2], LS_IN_LB, 10, "lb", "next;", owner=("lb", "x"))
    acl(t, 1, owner=("acl", "a"))
    acl(t, 1, owner=("acl", "b"))
    solo = acl(t, 1, owner=("acl", "c"), match="2")
    t.take_changes()
    assert t.purge_datapaths([1]) == 4
    assert shared is not None and t.datapaths(shared) == [0, 2]
    assert solo not in t and len(t) == 1


def test_removing_an_owner_after_a_purge_leaves_other_datapaths_alone() -> None:
    t = FlowTable(4)
    fid = acl(t, 1, owner=("acl", "a"))
    acl(t, 2, owner=("acl", "a"))
    acl(t, 2, owner=("acl", "b"))
    t.purge_datapaths([1])
    t.remove_owner(("acl", "a"))
    assert t.datapaths(fid) == [2]  # (acl "b" still holds it on datapath 2)


def test_purge_keeps_group_owned_counts_consistent() -> None:
    t = FlowTable(4, group_owner_kinds=frozenset({"lb"}))
    fid = t.add_many([0, 1], LS_IN_LB, 10, "lb", "next;", owner=("lb", "x"))
    assert fid is not None
    t.purge_datapaths([1])
    assert t.group_owned_only(fid)
    t.remove_owner(("lb", "x"))  # (must not find a count below zero)
    assert fid not in t


def test_purge_skipping_per_router_load_balancer_owners_of_other_routers_keeps_counts_exact() -> None:
    # (group_scope: a load balancer's per-router flows are on that router alone)
    t = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    on_r1 = t.add(1, LS_IN_LB, 10, "ip4.dst == 10.0.0.1", "ct_lb;", owner=("lb", "x", "r1"))
    on_r2 = t.add(2, LS_IN_LB, 10, "ip4.dst == 10.0.0.1", "ct_lb;", owner=("lb", "x", "r2"))
    assert on_r1 is not None and on_r1 == on_r2
    assert t.purge_datapaths([2], frozenset({"r2"})) == 1
    assert t.datapaths(on_r1) == [1] and t.group_owned_only(on_r1)
    t.remove_owner(("lb", "x", "r1"))  # (must not find a count below zero)
    t.remove_owner(("lb", "x", "r2"))  # (its log was purged)
    assert on_r1 not in t and len(t) == 0


SAMPLE = "sample(probability=65535,collector_set=1,obs_domain=2,obs_point=$cookie); /* drop */"


def test_drop_action_rewrites_every_drop_as_added() -> None:
    t = FlowTable(2)
    t.drop_action = SAMPLE
    a = t.add(0, LS_IN_L2_LKUP, 50, 'outport == "none"', "drop;")
    b = t.add_many([0, 1], LS_IN_ACL, 1000, "reg8[17] == 1", "reg8[16] = 0; /* drop */")
    c = t.add(0, LS_IN_ACL, 1, "1", "ct_drop; next;")  # not the drop action
    assert t.flow(a).actions == SAMPLE
    assert b is not None and t.flow(b).actions == f"reg8[16] = 0; {SAMPLE}"
    assert t.flow(c).actions == "ct_drop; next;"
    assert t.find(LS_IN_L2_LKUP, 50, 'outport == "none"', SAMPLE) == a


def test_drop_action_leaves_a_drop_the_reference_never_samples() -> None:
    t = FlowTable(1)
    t.drop_action = SAMPLE
    fid = t.add(0, LS_IN_L2_LKUP, 1, "1", "drop; /* DHCP_RELAY_REQ */", sample_drop=False)
    assert t.flow(fid).actions == "drop; /* DHCP_RELAY_REQ */"


def test_purge_of_a_group_owner_with_a_long_log_drops_only_the_purged_datapaths_references() -> None:
    t = FlowTable(4, group_owner_kinds=frozenset({"lb"}))
    fids = [t.add_many([0, 1, 2], LS_IN_LB, 10, f"ip4.dst == 10.0.0.{k}", "ct_lb;", owner=("lb", "x"))
            for k in range(30)]  # (90 log entries: the numpy path)
    assert t.purge_datapaths([1]) == 30
    assert all(f is not None and t.datapaths(f) == [0, 2] and t.group_owned_only(f) for f in fids)
    assert t.owner_refs(("lb", "x")) == 60
    t.remove_owner(("lb", "x"))
    assert len(t) == 0


def test_purge_with_scopes_leaves_other_routers_per_router_owners_unscanned_and_whole() -> None:
    t = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    t.add(1, LS_IN_LB, 10, "ip4.dst == 10.0.0.1", "ct_lb;", owner=("lb", "x", "r1"))
    t.add(2, LS_IN_LB, 10, "ip4.dst == 10.0.0.2", "ct_lb;", owner=("lb", "x", "r2"))
    t.add_many([0, 2], LS_IN_LB, 10, "ip4.dst == 10.0.0.3", "ct_lb;", owner=("lb", "y"))
    assert t.purge_datapaths([2], frozenset({"r2"})) == 2  # r2's owner and the switch owner's entry
    assert t.owner_refs(("lb", "x", "r1")) == 1 and not t.has_owner(("lb", "x", "r2"))
    assert t.owner_refs(("lb", "y")) == 1
    t.remove_owner(("lb", "x", "r1"))
    t.remove_owner(("lb", "y"))
    assert len(t) == 0


# -- add_specs: one router's load-balancer flows at a time -----------------------

_SPECS = [(LS_IN_LB, 120, "vip", "ct_lb;", None, False, True),
          (LS_IN_LB, 110, "vip2", "drop;", "m1", True, True),
          (LS_IN_ACL, 10, "learn", "commit; /* drop */", None, False, False)]


def _state(t: FlowTable) -> list[tuple[object, ...]]:
    return sorted((f.stage.name, f.priority, f.match, f.actions, f.controller_meter, f.hint, f.datapaths,
                   t.group_owned_only(f.fid)) for f in t.flows())


def test_add_specs_leaves_the_table_as_one_add_per_spec_would() -> None:
    one = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    many = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    one.drop_action = many.drop_action = "sample(); drop;"
    for dp in (0, 2):
        owner = ("lb", "x", f"r{dp}")
        for stage, prio, match, actions, meter, per_dp, sample in _SPECS:
            one.add(dp, stage, prio, match, actions, hint="h", owner=owner, controller_meter=meter,
                    per_datapath=per_dp, sample_drop=sample)
        many.add_specs(dp, _SPECS, "h", owner)
    assert _state(one) == _state(many)
    assert one.take_changes() == many.take_changes()
    for dp in (0, 2):
        assert one.owner_refs(("lb", "x", f"r{dp}")) == many.owner_refs(("lb", "x", f"r{dp}")) == 3
    one.remove_owner(("lb", "x", "r0"))
    many.remove_owner(("lb", "x", "r0"))
    assert _state(one) == _state(many)


def test_add_specs_reuses_known_flow_ids_only_within_one_epoch() -> None:
    t = FlowTable(4)
    fids = t.add_specs(0, _SPECS, "h", ("lb", "x", "r0"))
    epoch = t.epoch
    assert t.add_specs(1, _SPECS, "h", ("lb", "x", "r1"), known=fids) == fids
    assert t.epoch is epoch
    t.remove_owner(("lb", "x", "r0"))
    t.remove_owner(("lb", "x", "r1"))
    t.take_changes()  # (the emptied flows' ids are freed)
    assert t.epoch is not epoch
    other = t.add(0, LS_IN_L2_LKUP, 50, "eth.dst == 1", "next;")  # may take a freed id
    again = t.add_specs(2, _SPECS, "h", ("lb", "x", "r2"))
    assert other not in again and t.flow(other).stage == LS_IN_L2_LKUP
    assert [t.flow(f).match for f in again] == ["vip", "vip2", "learn"]


def test_add_specs_revives_a_known_flow_emptied_earlier_in_the_batch() -> None:
    t = FlowTable(4)
    fids = t.add_specs(0, _SPECS, "h", ("lb", "x", "r0"))
    t.take_changes()
    t.remove_owner(("lb", "x", "r0"))  # emptied, ids kept until the next take_changes
    assert t.add_specs(1, _SPECS, "h2", ("lb", "x", "r1"), known=fids) == fids
    assert [t.datapaths(f) for f in fids] == [[1], [1], [1]]
    assert t.take_changes().modified == sorted(fids)


# -- add_specs_many: a load balancer's flows on the routers of one shape at once ------


def test_add_specs_many_leaves_the_table_as_add_specs_per_datapath_would() -> None:
    one = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    many = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    one.drop_action = many.drop_action = "sample(); drop;"
    for t in (one, many):  # (a flow already on router 2, added by the router itself)
        t.add(2, LS_IN_LB, 110, "vip2", "drop;", controller_meter="m1", owner=("dp", "r2"))
    owners = [("lb", "x", f"r{dp}") for dp in (0, 2, 3)]
    for dp, owner in zip((0, 2, 3), owners, strict=True):
        one.add_specs(dp, _SPECS, "h", owner)
    many.add_specs_many([0, 2, 3], _SPECS, "h", owners)
    assert _state(one) == _state(many)
    assert one.take_changes() == many.take_changes()
    for owner in owners:
        assert one.owner_refs(owner) == many.owner_refs(owner) == 3
    for owner in owners[:2]:
        one.remove_owner(owner)
        many.remove_owner(owner)
        assert _state(one) == _state(many)
    assert one.purge_datapaths([3], frozenset({"r3"})) == many.purge_datapaths([3], frozenset({"r3"}))
    assert _state(one) == _state(many)
    assert one.take_changes() == many.take_changes()


def test_add_specs_many_on_one_datapath_is_add_specs() -> None:
    t = FlowTable(2)
    t.add_specs_many([1], _SPECS, "h", [("lb", "x", "r1")])
    assert [f.datapaths for f in t.flows()] == [(1,), (1,), (1,)]
    assert t.owner_refs(("lb", "x", "r1")) == 3


def test_add_specs_many_with_a_datapath_twice_counts_both_references() -> None:
    """A load balancer a router has itself and through a group: two references, as two add_specs."""
    one = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    many = FlowTable(4, group_owner_kinds=frozenset({"lb"}), group_scope=group_scope)
    for t in (one, many):  # (the router's own reference to one of the flows)
        t.add(1, LS_IN_LB, 120, "vip", "ct_lb;", owner=("dp", "r1"))
    owners = [("lb", "x", "r1"), ("lb", "x", "r2"), ("lb", "x", "r1")]
    for dp, owner in zip((1, 2, 1), owners, strict=True):
        one.add_specs(dp, _SPECS, "h", owner)
    many.add_specs_many([1, 2, 1], _SPECS, "h", owners)
    assert _state(one) == _state(many)
    for t in (one, many):
        assert t.owner_refs(("lb", "x", "r1")) == 6
        t.remove_owner(("lb", "x", "r2"))
        t.remove_owner(("lb", "x", "r1"))
    assert _state(one) == _state(many)
    assert [(f.match, f.datapaths) for f in many.flows()] == [("vip", (1,))]  # (the router's stays)
