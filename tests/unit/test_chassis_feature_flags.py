"""SB Chassis feature flags (:mod:`ovn_northd_py.flows.chassis_features`) and what reads them
(parity: tests/parity/test_chassis_features.py), the C daemon's log directory and duplicate-port
words; all found by OVN's ovn-northd.at (scripts/conformance.sh)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ovn_northd_py.daemonize import default_log_file
from ovn_northd_py.flows.acl_rules import acl_flows
from ovn_northd_py.flows.chassis_features import (
    ALL_FEATURES,
    ChassisFeatures,
    FeatureLatch,
    chassis_features,
    features_text,
)
from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.lr_nat import dnat_ct_flows
from ovn_northd_py.lflow.profile import OVN_25_03
from ovn_northd_py.northd.model import Northd


class FakeSb:
    def __init__(self, *other_configs: dict[str, str]) -> None:
        self._rows = {i: SimpleNamespace(other_config=oc) for i, oc in enumerate(other_configs)}

    def rows(self, table: str) -> dict[int, Any]:
        assert table == "Chassis"
        return self._rows


ALL = {"ct-no-masked-label": "true", "ovn-ct-lb-related": "true", "mac-binding-timestamp": "true",
       "ovn-sample-with-registers": "true", "ct-label-flush": "true"}  # (the last two: 25.03's)


def test_features_are_on_unless_a_local_chassis_lacks_them() -> None:
    assert chassis_features(None) == ALL_FEATURES
    assert chassis_features(FakeSb()) == ChassisFeatures(True, True, True)
    assert chassis_features(FakeSb(ALL)) == ChassisFeatures(True, True, True)
    # (23.03 does not ask for 25.03's features: they stay on)
    assert chassis_features(FakeSb(ALL, {})) == ChassisFeatures(False, False, False)
    assert chassis_features(FakeSb(ALL, {"is-remote": "true"})) == ChassisFeatures(True, True, True)
    partial = dict(ALL, **{"ovn-ct-lb-related": "false"})
    assert chassis_features(FakeSb(partial)) == ChassisFeatures(True, False, True)


def test_features_text_is_the_c_daemons() -> None:
    assert features_text(ChassisFeatures(True, False, True)) == (
        "ct_no_masked_label:    true\nct_lb_related:         false\nmac_binding_timestamp: true\n")


def test_25_03_asks_the_chassis_for_its_own_features() -> None:
    # A 23.03 ovn-controller announces ct-no-masked-label and ovn-ct-lb-related, which 25.03 no
    # longer asks for (always on), and none of 25.03's.
    f = chassis_features(FakeSb(ALL), OVN_25_03)
    assert f.ct_no_masked_label and f.ct_lb_related and f.mac_binding_timestamp
    assert not (f.ls_dpg_column or f.ct_commit_nat_v2 or f.snat_zone_tracking or f.fdb_timestamp)
    assert chassis_features(FakeSb({}), OVN_25_03).ct_no_masked_label
    new = dict.fromkeys(("mac-binding-timestamp", "fdb-timestamp", "ls-dpg-column", "ct-commit-nat-v2",
                         "ct-commit-to-zone", "ovn-sample-with-registers", "ct-next-zone", "ct-label-flush"), "true")
    assert chassis_features(FakeSb(new), OVN_25_03) == ALL_FEATURES
    assert not chassis_features(FakeSb(dict(new, **{"ct-next-zone": "false"})), OVN_25_03).snat_zone_tracking


def test_25_03_features_found_off_stay_off_until_evaluated_afresh() -> None:
    latch = FeatureLatch()
    assert not chassis_features(FakeSb(ALL), OVN_25_03, latch).ls_dpg_column
    assert chassis_features(FakeSb(), OVN_25_03) == ALL_FEATURES  # (no latch: the chassis alone)
    assert not chassis_features(FakeSb(), OVN_25_03, latch).ls_dpg_column  # the old chassis is gone
    latch.reevaluate()  # (a chassis' other_config was updated)
    assert chassis_features(FakeSb(), OVN_25_03, latch).ls_dpg_column
    # 23.03 turns them back on (no latching behaviour).
    latch23 = FeatureLatch()
    assert not chassis_features(FakeSb({}), latch=latch23).ct_no_masked_label
    assert chassis_features(FakeSb(), latch=latch23).ct_no_masked_label


def test_features_text_of_25_03_lists_mac_binding_timestamp_only() -> None:
    assert features_text(ChassisFeatures(ls_dpg_column=False), OVN_25_03) == "mac_binding_timestamp: true\n"


def test_old_chassis_get_ct_label_and_ct_lb() -> None:
    old = ChassisFeatures(False, False, False)
    assert old.ct("blocked") == "ct_label.blocked" and old.ct_lb == "ct_lb"
    assert ALL_FEATURES.ct("natted") == "ct_mark.natted" and ALL_FEATURES.ct_lb == "ct_lb_mark"
    acl = SimpleNamespace(uuid="8214b2eb-c1f3-40da-8357-af4597d00440", direction="to-lport", priority=100,
                          match="ip4", action="drop", log=False, name=[], severity=[], meter=[], label=0, options={})
    actions = {f.actions for f in acl_flows(acl, str(acl.uuid), True, True, frozenset(), features=old)}
    assert "ct_commit { ct_label.blocked = 1; }; /* drop */" in actions
    # ovn-northd.at "Load balancer CT related backwards compatibility": no related NAT flows.
    assert [(p, m, a) for p, m, a in dnat_ct_flows(FlowCtx(Northd(), features=old)) if m.startswith("ct.rel")] == []
    assert ((70, "ct.est && !ct.rel && !ct.new && ct_label.natted && ct_label.force_snat == 1",
             "flags.force_snat_for_lb = 1; next;") in dnat_ct_flows(FlowCtx(Northd(), features=old)))
    assert len(dnat_ct_flows(FlowCtx(Northd(), features=ALL_FEATURES))) == 6


def test_log_file_defaults_to_ovs_logdir_as_the_c_daemon(monkeypatch) -> None:
    monkeypatch.setenv("OVN_LOGDIR", "/ovn")
    monkeypatch.setenv("OVS_LOGDIR", "/ovs")
    assert default_log_file() == "/ovs/ovn-northd.log"
    monkeypatch.delenv("OVS_LOGDIR")
    assert default_log_file() == "/ovn/ovn-northd.log"


def test_26_03_lists_every_feature_it_asks_for_unpadded() -> None:
    # Observed: sid's ovn-northd 26.03 with a chassis announcing none of them.
    from ovn_northd_py.lflow.profile import OVN_26_03

    assert features_text(chassis_features(FakeSb({}), OVN_26_03), OVN_26_03) == (
        "mac_binding_timestamp: false\nfdb_timestamp: false\nls_dpg_column: false\nct_commit_nat_v2: false\n"
        "ct_commit_to_zone: false\nsample_with_reg: false\nct_next_zone: false\nct_label_flush: false\n"
        "ct_state_save: false\n")
