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
    chassis_features,
    features_text,
)
from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.lr_nat import dnat_ct_flows
from ovn_northd_py.northd.model import Northd


class FakeSb:
    def __init__(self, *other_configs: dict[str, str]) -> None:
        self._rows = {i: SimpleNamespace(other_config=oc) for i, oc in enumerate(other_configs)}

    def rows(self, table: str) -> dict[int, Any]:
        assert table == "Chassis"
        return self._rows


ALL = {"ct-no-masked-label": "true", "ovn-ct-lb-related": "true", "mac-binding-timestamp": "true",
       "ovn-sample-with-registers": "true", "ct-label-flush": "true",  # (from here: 25.03's)
       "ct-commit-to-zone": "true", "ct-next-zone": "true", "ct-commit-nat-v2": "true"}


def test_features_are_on_unless_a_local_chassis_lacks_them() -> None:
    assert chassis_features(None) == ALL_FEATURES
    assert chassis_features(FakeSb()) == ChassisFeatures(True, True, True)
    assert chassis_features(FakeSb(ALL)) == ChassisFeatures(True, True, True)
    assert chassis_features(FakeSb(ALL, {})) == ChassisFeatures(False, False, False, False, False, False, False, False)
    assert chassis_features(FakeSb(ALL, {"is-remote": "true"})) == ChassisFeatures(True, True, True)
    partial = dict(ALL, **{"ovn-ct-lb-related": "false"})
    assert chassis_features(FakeSb(partial)) == ChassisFeatures(True, False, True)


def test_features_text_is_the_c_daemons() -> None:
    assert features_text(ChassisFeatures(True, False, True)) == (
        "ct_no_masked_label:    true\nct_lb_related:         false\nmac_binding_timestamp: true\n")


def test_features_text_of_25_03_lists_mac_binding_timestamp_only() -> None:
    from ovn_northd_py.lflow.profile import OVN_25_03

    assert features_text(ChassisFeatures(False, False, False), OVN_25_03) == "mac_binding_timestamp: false\n"


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
