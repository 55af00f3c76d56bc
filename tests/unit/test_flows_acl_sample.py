"""OVN 25.03 ACL sampling (:func:`ovn_northd_py.flows.acl_rules.acl_sample_flows`) and the sampling
registers of ACL eval flows.  Expected strings are the reference ovn-northd 25.03's (Debian trixie)
for tests/parity/test_acl_2503.py's sampling NB."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from test_flows_acl import ACL_KEY, acl

from ovn_northd_py.flows.acl_rules import acl_flows, acl_sample_flows
from ovn_northd_py.lflow.profile import OVN_25_03


def collector(cid: int, probability: int, set_id: int, u: int) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=u), id=cid, probability=probability, set_id=set_id)


C1, C2 = collector(1, 65535, 100, u=2), collector(2, 100, 200, u=1)  # samples in collector uuid order
ONE = SimpleNamespace(metadata=1001, collectors=[C1])
TWO = SimpleNamespace(metadata=1002, collectors=[C1, C2])
APPS = {"acl-new": 11, "acl-est": 12}


def sampled(**kw: Any) -> SimpleNamespace:
    return acl(**{"sample_new": [], "sample_est": [], **kw})


def samples(a: SimpleNamespace, has_stateful_acl: bool) -> set[tuple[str, int, str, str]]:
    return {(f.stage.name, f.priority, f.match, f.actions) for f in acl_sample_flows(a, has_stateful_acl, APPS)}


def test_one_collector_samples_by_register_in_the_acl_stage() -> None:
    a = sampled(direction="from-lport", action="allow-related", sample_new=[ONE])
    assert samples(a, True) == {
        ("ls_in_acl_sample", 1000, "ip && ct.new && reg8[0..7] == 1 && reg8[19..20] == 0",
         "sample(probability=65535,collector_set=100,obs_domain=11,obs_point=reg3); next;"),
    }


def test_egress_new_sessions_include_untracked_and_stateless_acls_match_ip_only() -> None:
    a = sampled(direction="to-lport", action="allow", sample_new=[ONE])
    assert {m for _, _, m, _ in samples(a, True)} == {"ip && (ct.new || !ct.trk) && reg8[0..7] == 1 && reg8[19..20] == 2"}
    assert {(p, m) for _, p, m, _ in samples(a, False)} == {(900, "ip && reg8[0..7] == 1 && reg8[19..20] == 2")}


def test_several_collectors_sample_per_acl_both_directions_of_established_sessions() -> None:
    a = sampled(direction="from-lport", action="allow-related", sample_est=[TWO])
    action = ("sample(probability=100,collector_set=200,obs_domain=12,obs_point=1002);"
              "sample(probability=65535,collector_set=100,obs_domain=12,obs_point=1002); next;")
    label = "ct_label.obs_point_id == 1002 && ct_label.obs_unused == 0"
    assert samples(a, True) == {
        ("ls_in_acl_sample", 1200, f"ip && ct.trk && (ct.est || ct.rel) && !ct.rpl && {label}", action),
        ("ls_out_acl_sample", 1200, f"ip && ct.trk && (ct.est || ct.rel) && ct.rpl && {label}", action),
    }


def test_established_sampling_needs_a_stateful_acl_on_the_switch() -> None:
    assert samples(sampled(action="allow-related", sample_est=[TWO]), False) == set()


def test_label_overrides_the_observation_point_in_eval_registers() -> None:
    a = sampled(direction="from-lport", action="allow-related", label=77, sample_new=[ONE], sample_est=[TWO])
    actions = {f.actions for f in acl_flows(a, ACL_KEY, True, True, frozenset(), OVN_25_03)}
    assert actions == {("reg8[16] = 1; reg0[1] = 1; reg0[13] = 1; reg3 = 77; reg9 = 77; reg8[0..7] = 0; "
                       "reg8[8..15] = 0; reg8[19..20] = 0; next;")}


def test_persist_established_acl_loads_its_id_for_new_sessions_only() -> None:
    a = sampled(action="allow-related", match="tcp", options={"persist-established": "true"})
    got = {(f.match, f.actions) for f in acl_flows(a, ACL_KEY, True, True, frozenset(), OVN_25_03, acl_id=3)}
    assert got == {("reg0[7] == 1 && (tcp)", "reg8[16] = 1; reg0[1] = 1; reg2[16..31] = 3; reg0[20] = 1; next;"),
                   ("reg0[8] == 1 && (tcp)", "reg8[16] = 1; next;")}


def test_persist_established_on_allow_is_warned_about_and_loads_no_id() -> None:
    from ovn_northd_py.flows.acl_rules import acl_id_for
    from ovn_northd_py.flows.context import FlowCtx
    from ovn_northd_py.northd.model import Northd

    warned: list[tuple[str, str]] = []
    ctx = FlowCtx(Northd(), profile=OVN_25_03, warn=lambda kind, table, row, reason, **kw: warned.append((kind, table)))
    a = sampled(action="allow", options={"persist-established": "true"})
    assert acl_id_for(a, ACL_KEY, ctx) is None
    assert warned == [("acl_persist_not_related", "ACL")]


def test_26_03_sampling_sets_the_pkt_sampled_flag_and_keeps_the_whole_set_id() -> None:
    """Observed on sid's 26.03 reference (random networks): ``flags.pkt_sampled = 1;`` before the
    samples (not without a collector), established sessions only while the flag is clear, and a
    set_id above 255 as is (25.03: modulo 256)."""
    from ovn_northd_py.lflow.profile import OVN_26_03

    big = SimpleNamespace(metadata=9, collectors=[collector(3, 100, 300, u=3), C1])
    empty = SimpleNamespace(metadata=10, collectors=[])
    a = sampled(direction="from-lport", action="allow-related", sample_new=[empty], sample_est=[big])
    got = {(f.stage.name, f.priority, f.match, f.actions)
           for f in acl_sample_flows(a, True, APPS, True, OVN_26_03)}
    label = "ct_label.obs_point_id == 9 && ct_label.obs_unused == 0"
    action = ("flags.pkt_sampled = 1; sample(probability=65535,collector_set=100,obs_domain=12,obs_point=9);"
              "sample(probability=100,collector_set=300,obs_domain=12,obs_point=9); next;")
    assert got == {
        ("ls_in_acl_sample", 1100, "ip && ct.new && reg3 == 10", " next;"),
        ("ls_in_acl_sample", 1200,
         f"flags.pkt_sampled == 0 && ip && ct.trk && (ct.est || ct.rel) && !ct.rpl && {label}", action),
        ("ls_out_acl_sample", 1200,
         f"flags.pkt_sampled == 0 && ip && ct.trk && (ct.est || ct.rel) && ct.rpl && {label}", action),
    }
    assert "collector_set=44" in acl_sample_flows(a, True, APPS, True, OVN_25_03)[1].actions
