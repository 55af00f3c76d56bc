"""OVN 25.03's load-balancer flows (profile ``lb_vip_regs_v2``), strings observed on the
25.03 reference (gen_ovnk 5: ``10.96.0.23:443`` with affinity, backends ``10.128.0.5:8082``...)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from ovn_northd_py.flows.context import FlowCtx
from ovn_northd_py.flows.ls_lb import switch_lb_specs
from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03
from ovn_northd_py.lflow.stages import LS_IN_LB, LS_IN_LB_AFF_CHECK, LS_IN_LB_AFF_LEARN, LS_IN_PRE_STATEFUL
from ovn_northd_py.northd.model import Northd


def _lb(options: dict[str, str]) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=7), name="lb", vips={"10.96.0.23:443": "10.128.0.5:8082,10.128.3.9:8082"},
                           protocol=["tcp"], options=options, selection_fields=[], health_check=[],
                           ip_port_mappings={}, external_ids={})


def _specs(profile: Any, options: dict[str, str]) -> set[tuple[Any, int, str, str]]:
    ctx = FlowCtx(Northd(), profile=profile)
    return {(st, p, m, a) for st, p, m, a, _ in switch_lb_specs(_lb(options), ctx)}


def test_switch_vip_flows_load_reg4_25_03() -> None:
    specs = _specs(OVN_25_03, {})
    assert (LS_IN_PRE_STATEFUL, 120, "reg0[2] == 1 && ip4.dst == 10.96.0.23 && tcp.dst == 443",
            "reg4 = 10.96.0.23; reg2[0..15] = 443; ct_lb_mark;") in specs
    assert (LS_IN_LB, 120, "ct.new && ip4.dst == 10.96.0.23 && tcp.dst == 443",
            "reg4 = 10.96.0.23; reg2[0..15] = 443; ct_lb_mark(backends=10.128.0.5:8082,10.128.3.9:8082);") in specs
    old = _specs(OVN_23_03, {})
    assert (LS_IN_LB, 120, "ct.new && ip4.dst == 10.96.0.23 && tcp.dst == 443",
            "reg0[1] = 0; ct_lb_mark(backends=10.128.0.5:8082,10.128.3.9:8082);") in old


def test_switch_affinity_25_03() -> None:
    specs = _specs(OVN_25_03, {"affinity_timeout": "10800"})
    assert (LS_IN_LB_AFF_CHECK, 100, "ct.new && ip4 && ip4.dst == 10.96.0.23 && tcp && tcp.dst == 443",
            "reg9[6] = chk_lb_aff(); next;") in specs
    assert (LS_IN_LB, 150, "reg9[6] == 1 && ct.new && ip4.dst == 10.96.0.23 && reg4 == 10.128.0.5 && reg2[0..15] == 8082",
            "reg4 = 10.96.0.23; reg2[0..15] = 443; ct_lb_mark(backends=10.128.0.5:8082);") in specs
    assert (LS_IN_LB_AFF_LEARN, 100,
            ("reg9[6] == 0 && ct.new && ip4 && reg4 == 10.96.0.23 && reg2[0..15] == 443 && ip4.dst == 10.128.0.5 "
            "&& tcp.dst == 8082"),
            ('commit_lb_aff(vip = "10.96.0.23:443", backend = "10.128.0.5:8082", proto = tcp, timeout = 10800); '
            "/* drop */")) in specs
