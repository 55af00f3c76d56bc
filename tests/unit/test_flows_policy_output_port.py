"""OVN 26.03's ``Logical_Router_Policy.output_port`` (behaviour ``policy_output_port``,
:mod:`ovn_northd_py.flows.lr_policy`).  Expected strings are the reference ovn-northd 26.03.1's
(Debian sid), observed on the NB of ``tests/parity/test_router_policy_2603.py``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from test_flows_router import _flows, _router, _uuid

from ovn_northd_py.flows import FlowCtx
from ovn_northd_py.flows.lr_pipeline import build_lr_route_and_policy_flows
from ovn_northd_py.lflow.profile import OVN_25_03, OVN_26_03
from ovn_northd_py.lflow.stages import LR_IN_POLICY
from ovn_northd_py.lflow.table import FlowTable


def _pol(n: int, prio: int, hops: list[str], port: str | None) -> SimpleNamespace:
    return SimpleNamespace(uuid=_uuid(n), priority=prio, match="ip", action="reroute", nexthops=hops, nexthop=[],
                           options={}, output_port=[SimpleNamespace(name=port)] if port else [])


def _policy_flows(policies: list[Any], profile: Any = OVN_26_03) -> set[tuple[int, str, str]]:
    nd, r = _router([], policies)
    table = FlowTable(1)
    build_lr_route_and_policy_flows(r, FlowCtx(nd, profile=profile), table)
    return _flows(table, LR_IN_POLICY)


def test_output_port_outside_the_next_hops_network_uses_its_first_address() -> None:
    got = _policy_flows([_pol(0x20, 5, ["10.0.2.9"], "r1-a")])
    assert (5, "ip", ('reg0 = 10.0.2.9; reg5 = 10.0.1.1; eth.src = 02:00:00:00:01:01; outport = "r1-a"; '
            "flags.loopback = 1; reg8[0..15] = 0; reg9[9] = 1; next;")) in got


def test_ipv6_next_hop_through_a_port_without_ipv6_networks_uses_its_link_local_address() -> None:
    got = _policy_flows([_pol(0x20, 5, ["fd02::9"], "r1-b")])
    assert (5, "ip", ('xxreg0 = fd02::9; xxreg1 = fe80::ff:fe00:102; eth.src = 02:00:00:00:01:02; outport = "r1-b"; '
            "flags.loopback = 1; reg8[0..15] = 0; reg9[9] = 0; next;")) in got


def test_ecmp_reroute_with_an_output_port_is_left_out() -> None:
    got = _policy_flows([_pol(0x20, 5, ["10.0.1.8", "10.0.1.9"], "r1-a"), _pol(0x21, 6, ["10.0.1.8", "10.0.1.9"], None)])
    assert {(p, a) for p, _m, a in got if p in (5, 6)} == {(6, "reg8[0..15] = 1; reg8[16..31] = select(1, 2);")}


def test_output_port_ignored_before_26_03() -> None:
    got = _policy_flows([_pol(0x20, 5, ["10.0.2.9"], "r1-a")], OVN_25_03)
    assert any(p == 5 and 'outport = "r1-b"' in a for p, _m, a in got)
