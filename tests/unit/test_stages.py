"""The stages, and the OVN 23.03 stage table (its flow profile)."""

from __future__ import annotations

import pytest

from ovn_northd_py.lflow import stages
from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03, OVN_26_03, FlowProfile
from ovn_northd_py.lflow.stages import ALL_STAGES, DP_TYPES, PIPELINES, Stage, stage_by_name

STAGES = OVN_23_03.tables
stages_for = OVN_23_03.stages_for
stage_at = OVN_23_03.stage_at


def test_stage_counts_per_pipeline_match_the_reference() -> None:
    counts = {key: len(value) for key, value in STAGES.items()}
    assert counts == {("ls", "ingress"): 27, ("ls", "egress"): 10, ("lr", "ingress"): 22, ("lr", "egress"): 7}


@pytest.mark.parametrize("profile", [OVN_23_03, OVN_25_03, OVN_26_03], ids=lambda p: p.name)
def test_every_stage_of_a_profile_is_listed_once(profile: FlowProfile) -> None:
    listed = [s for dp in DP_TYPES for pl in PIPELINES for s in profile.stages_for(dp, pl)]
    assert len(set(listed)) == len(listed)
    assert all((s.dp_type, s.pipeline) == (dp, pl) for dp in DP_TYPES for pl in PIPELINES
               for s in profile.stages_for(dp, pl))


def test_every_stage_is_in_some_release() -> None:
    listed = {s for p in (OVN_23_03, OVN_25_03, OVN_26_03) for s in p.stages}
    assert listed == set(ALL_STAGES)


def test_26_03_stage_counts_per_pipeline_match_the_reference() -> None:
    counts = {key: len(value) for key, value in OVN_26_03.tables.items()}
    assert counts == {("ls", "ingress"): 34, ("ls", "egress"): 16, ("lr", "ingress"): 29, ("lr", "egress"): 7}


def test_26_03_is_25_03_plus_its_new_stages() -> None:
    new = {s.name for s in OVN_26_03.stages - OVN_25_03.stages}
    assert new == {"ls_in_mirror", "ls_out_mirror", "ls_in_ct_extract", "lr_in_ct_extract", "ls_in_pre_network_function",
                   "ls_out_pre_network_function", "ls_in_network_function", "ls_out_network_function",
                   "lr_in_network_id", "lr_in_ecmp_stateful_egr"}
    assert OVN_25_03.stages <= OVN_26_03.stages


def test_stage_names_are_unique() -> None:
    assert len({s.name for s in ALL_STAGES}) == len(ALL_STAGES)


def test_table_ids_are_unique_per_datapath_type_and_pipeline() -> None:
    ids = [(s.dp_type, s.pipeline, OVN_23_03.table_id(s)) for s in OVN_23_03.stages]
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(("dp_type", "pipeline"), [(d, p) for d in DP_TYPES for p in PIPELINES])
def test_table_ids_are_contiguous_from_zero(dp_type: str, pipeline: str) -> None:
    table = STAGES[dp_type, pipeline]  # type: ignore[index]
    assert [OVN_23_03.table_id(s) for s in table] == list(range(len(table)))


@pytest.mark.parametrize("stage", ALL_STAGES, ids=str)
def test_stage_name_prefix_matches_datapath_type_and_pipeline(stage: Stage) -> None:
    short = {"ingress": "in", "egress": "out"}[stage.pipeline]
    assert stage.name.startswith(f"{stage.dp_type}_{short}_")
    assert stage.prefix == f"{stage.dp_type}_{short}"


@pytest.mark.parametrize("stage", ALL_STAGES, ids=str)
def test_module_constant_is_the_upper_case_stage_name(stage: Stage) -> None:
    assert getattr(stages, stage.name.upper()) is stage


def test_table_ids_fit_the_sb_schema_limit() -> None:
    assert max(OVN_23_03.table_id(s) for s in OVN_23_03.stages) <= 32


def test_lookup_by_name_returns_the_constant() -> None:
    assert stage_by_name("lr_in_ip_routing") is stages.LR_IN_IP_ROUTING


def test_lookup_by_unknown_name_raises_key_error() -> None:
    with pytest.raises(KeyError):
        stage_by_name("ls_in_port_sec_l2")


def test_lookup_by_table_id_returns_the_stage() -> None:
    assert stage_at("ls", "egress", 9) is stages.LS_OUT_APPLY_PORT_SEC


def test_lookup_by_negative_table_id_raises() -> None:
    with pytest.raises(IndexError):
        stage_at("lr", "egress", -1)


@pytest.mark.parametrize(
    ("stage", "name", "table_id"),
    [
        (stages.LS_IN_CHECK_PORT_SEC, "ls_in_check_port_sec", 0),
        (stages.LS_IN_ACL_AFTER_LB, "ls_in_acl_after_lb", 17),
        (stages.LS_IN_L2_UNKNOWN, "ls_in_l2_unknown", 26),
        (stages.LS_OUT_PRE_ACL, "ls_out_pre_acl", 0),
        (stages.LR_IN_ADMISSION, "lr_in_admission", 0),
        (stages.LR_IN_ARP_REQUEST, "lr_in_arp_request", 21),
        (stages.LR_OUT_CHK_DNAT_LOCAL, "lr_out_chk_dnat_local", 0),
        (stages.LR_OUT_DELIVERY, "lr_out_delivery", 6),
    ],
)
def test_known_stages_have_reference_names_and_ids(stage: Stage, name: str, table_id: int) -> None:
    assert (stage.name, OVN_23_03.table_id(stage)) == (name, table_id)


def test_short_name_strips_the_prefix() -> None:
    assert stages.LR_OUT_UNDNAT.short_name == "undnat"


def test_stages_are_hashable_and_compare_by_value() -> None:
    assert Stage("ls_in_acl", "ls", "ingress") == stages.LS_IN_ACL
    assert len({stages.LS_IN_ACL, Stage("ls_in_acl", "ls", "ingress")}) == 1
