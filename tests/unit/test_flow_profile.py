"""The flow profile: a release's stage table decides the table ids written, builders only name stages."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from ovn_northd_py.flows.acl_rules import reject_action
from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.lflow.profile import DEFAULT_PROFILE, OVN_23_03, FlowProfile, StageNotInProfile
from ovn_northd_py.lflow.stages import LS_IN_ACL, LS_IN_L2_LKUP, LS_OUT_QOS_MARK, Stage
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.release import DEFAULT_RELEASE, RELEASES
from ovn_northd_py.sync.lflow_desired import desired_changed_flows, desired_flows, desired_for_keys

LS_IN_EXTRA = Stage("ls_in_extra", "ls", "ingress")  # a stage only the made-up release has


def renumbered(*extra: Stage, behaviours: frozenset[str] = frozenset()) -> FlowProfile:
    """23.03's stages in reverse table order (and ``extra`` stages first): another numbering."""
    tables = {k: (*extra, *reversed(v)) if k == ("ls", "ingress") else tuple(reversed(v))
              for k, v in OVN_23_03.tables.items()}
    return FlowProfile("99.03", tables, behaviours=behaviours, registers={"REGBIT_X": "reg0[1]"})


def _nd(n: int) -> SimpleNamespace:
    dps = [SimpleNamespace(key=f"dp{i}") for i in range(n)]
    return SimpleNamespace(by_index=dps, slots=dps)


DP_UUID = {"dp0": "u0", "dp1": "u1"}


def _one_flow_table() -> FlowTable:
    t = FlowTable(2)
    t.add(0, LS_IN_ACL, 100, "ip4", "next;")
    t.add(1, LS_IN_ACL, 100, "ip4", "next;")
    return t


def test_the_default_profile_is_23_03_and_the_default_release_carries_it() -> None:
    assert DEFAULT_PROFILE is OVN_23_03
    assert DEFAULT_RELEASE.profile is OVN_23_03
    assert FlowCtx(_nd(0)).profile is OVN_23_03  # type: ignore[arg-type]


def test_releases_without_profile_say_so() -> None:
    future = dataclasses.replace(RELEASES["26.03"], name="99.03", flow_profile=None)
    with pytest.raises(ValueError, match=r"no flow profile for OVN 99\.03"):
        future.profile  # noqa: B018


def test_another_numbering_changes_the_table_id_written_for_the_same_flow() -> None:
    other = renumbered()
    assert OVN_23_03.table_id(LS_IN_ACL) == 8
    assert other.table_id(LS_IN_ACL) == 26 - 8
    ours = desired_flows(_one_flow_table(), _nd(2), DP_UUID, OVN_23_03)  # type: ignore[arg-type]
    theirs = desired_flows(_one_flow_table(), _nd(2), DP_UUID, other)  # type: ignore[arg-type]
    assert [k[:3] for k in ours] == [("ls_in_acl", "ingress", 8)]
    assert [k[:3] for k in theirs] == [("ls_in_acl", "ingress", 18)]
    assert [k[3:] for k in ours] == [k[3:] for k in theirs]
    assert list(ours.values()) == list(theirs.values())


def test_changed_flows_and_flows_by_key_use_the_profile_too() -> None:
    other = renumbered()
    t = _one_flow_table()
    want, scope = desired_changed_flows(t, _nd(2), DP_UUID, other)  # type: ignore[arg-type]
    assert {k[2] for k in want} == {k[2] for k in scope} == {18}
    (key,) = want
    assert desired_for_keys(t, _nd(2), DP_UUID, [key], other) == want  # type: ignore[arg-type]
    # The same identity at 23.03's table id is not a flow of this release.
    assert desired_for_keys(t, _nd(2), DP_UUID, [(*key[:2], 8, *key[3:])], other) == {}  # type: ignore[arg-type]


def test_a_profile_may_add_stages() -> None:
    other = renumbered(LS_IN_EXTRA)
    assert other.table_id(LS_IN_EXTRA) == 0
    assert other.table_id(LS_IN_ACL) == 27 - 8
    assert other.stage_at("ls", "ingress", 0) is LS_IN_EXTRA
    assert other.has_stage(LS_IN_EXTRA) and not OVN_23_03.has_stage(LS_IN_EXTRA)
    t = FlowTable(1)
    t.add(0, LS_IN_EXTRA, 10, "1", "next;")
    assert [k[:3] for k in desired_flows(t, _nd(1), DP_UUID, other)] == [("ls_in_extra", "ingress", 0)]  # type: ignore[arg-type]


def test_a_stage_the_profile_lacks_raises_a_clear_error() -> None:
    with pytest.raises(StageNotInProfile, match=r"OVN 23.03 has no logical flow stage 'ls_in_extra' \(ls ingress\)"):
        OVN_23_03.table_id(LS_IN_EXTRA)
    t = FlowTable(1)
    t.add(0, LS_IN_EXTRA, 10, "1", "next;")
    with pytest.raises(StageNotInProfile, match="ls_in_extra"):
        desired_flows(t, _nd(1), DP_UUID, OVN_23_03)  # type: ignore[arg-type]


def test_an_equal_stage_made_elsewhere_resolves_by_name() -> None:
    assert OVN_23_03.table_id(Stage("ls_in_acl", "ls", "ingress")) == 8


def test_a_profile_rejects_a_stage_in_the_wrong_pipeline_or_listed_twice() -> None:
    with pytest.raises(ValueError, match="not a ls egress stage"):
        FlowProfile("x", {("ls", "egress"): (LS_IN_ACL,)})
    with pytest.raises(ValueError, match="listed twice"):
        FlowProfile("x", {("ls", "ingress"): (LS_IN_ACL, LS_IN_ACL)})


def test_builders_write_the_profiles_table_ids_into_actions() -> None:
    assert f"table={OVN_23_03.table_id(LS_OUT_QOS_MARK)}" in reject_action(True)
    other = renumbered()
    assert f"pipeline=egress,table={other.table_id(LS_OUT_QOS_MARK)}" in reject_action(True, other)
    assert f"pipeline=ingress,table={other.table_id(LS_IN_L2_LKUP)}" in reject_action(False, other)


def test_behaviours_and_registers_are_asked_by_name() -> None:
    other = renumbered(behaviours=frozenset({"ct_next_v2"}))
    assert other.has("ct_next_v2") and not OVN_23_03.has("ct_next_v2")
    assert other.register("REGBIT_X") == "reg0[1]"
    with pytest.raises(LookupError, match=r"OVN 23\.03's flow profile names no register 'REGBIT_X'"):
        OVN_23_03.register("REGBIT_X")
