"""OVN 26.03's lport mirrors (behaviour ``lport_mirror``): the mirror ports of the model
(:func:`ovn_northd_py.northd.build.make_mirror_ports`) and their flows (:mod:`ovn_northd_py.flows.ls_mirror`).
Expected strings are the reference ovn-northd 26.03.1's (Debian sid), observed on the NB of
``tests/parity/test_mirror_lport_2603.py``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from test_flows_acl import _port, _switch

from ovn_northd_py.flows import FlowCtx
from ovn_northd_py.flows.ls_mirror import build_lsp_mirror_flows, build_mirror_port_flows
from ovn_northd_py.lflow.profile import OVN_26_03
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.build import make_mirror_ports
from ovn_northd_py.northd.model import Northd
from ovn_northd_py.sync.mcast import MC_FLOOD, MC_FLOOD_L2, desired_groups_of


def _mirror(name: str, filt: str, sink: str, mtype: str = "lport", rules: list[Any] | None = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, type=mtype, filter=filt, sink=sink, mirror_rules=rules or [])


def _net(mirrors: list[Any]) -> tuple[Northd, Any]:
    nd = Northd()
    sw = _switch(nd, "sw0", [])
    vm = _port(nd, sw, "vm1")
    vm.nb.mirror_rules = mirrors
    _port(nd, sw, "mon")
    make_mirror_ports(nd)
    return nd, sw


def _keys(nd: Northd, profile: Any = OVN_26_03) -> set[tuple[str, int, str, str]]:
    ctx = FlowCtx(nd, profile=profile)
    table = FlowTable(len(nd.by_index))
    for p in nd.ports.values():
        if p.kind == "mirror":
            build_mirror_port_flows(p, ctx, table)
        else:
            build_lsp_mirror_flows(p, ctx, table)
    return {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}


def test_lport_mirror_makes_a_mirror_port_per_switch_and_sink() -> None:
    nd, _sw = _net([_mirror("m1", "both", "mon"), _mirror("m2", "to-lport", "mon")])
    mp = nd.ports["mp-sw0-mon"]
    assert (mp.kind, mp.sb_type, mp.mirror_port) == ("mirror", "mirror", "mon")
    assert [p.name for p in nd.ports.values() if p.kind == "mirror"] == ["mp-sw0-mon"]


def test_mirror_without_a_sink_port_or_not_lport_makes_no_port() -> None:
    nd, _sw = _net([_mirror("m1", "both", "nosuch"), _mirror("m2", "both", "mon", mtype="gre")])
    assert not any(p.kind == "mirror" for p in nd.ports.values())


def test_mirror_port_floods_but_has_no_other_group() -> None:
    _nd, sw = _net([_mirror("m1", "both", "mon")])
    groups = desired_groups_of(sw)
    assert "mp-sw0-mon" in groups[(sw.key, MC_FLOOD)][1] and "mp-sw0-mon" in groups[(sw.key, MC_FLOOD_L2)][1]


def test_both_directions_mirrored_with_rules_above_the_catch_all() -> None:
    rules = [SimpleNamespace(match="ip4.dst == 10.0.0.2", action="mirror", priority=100),
             SimpleNamespace(match="tcp", action="skip", priority=200)]
    nd, _sw = _net([_mirror("m1", "both", "mon", rules=rules)])
    keys = _keys(nd)
    assert ("ls_in_mirror", 100, 'inport == "vm1"', 'mirror("mp-sw0-mon"); next;') in keys
    assert ("ls_out_mirror", 100, 'outport == "vm1"', 'mirror("mp-sw0-mon"); next;') in keys
    assert ("ls_in_mirror", 200, 'inport == "vm1" && (ip4.dst == 10.0.0.2)', 'mirror("mp-sw0-mon"); next;') in keys
    assert ("ls_out_mirror", 300, 'outport == "vm1" && (tcp)', "next;") in keys
    assert ("ls_out_pre_acl", 65535, 'outport == "mp-sw0-mon"', "next(pipeline=egress, table=15);") in keys


def test_from_lport_filter_mirrors_ingress_only() -> None:
    nd, _sw = _net([_mirror("m1", "from-lport", "mon")])
    stages = {k[0] for k in _keys(nd) if k[0].endswith("_mirror")}
    assert stages == {"ls_in_mirror"}


def test_port_not_receiving_multicast_is_in_no_group() -> None:
    nd, sw = _net([])
    nd.ports["vm1"].nb.options = {"receive_multicast": "false", "mcast_flood": "true"}
    groups = desired_groups_of(sw, OVN_26_03)
    assert all("vm1" not in ports for _key, ports in groups.values()), groups
    assert "vm1" in desired_groups_of(sw)[(sw.key, MC_FLOOD)][1]  # (before 26.03: ignored)


def test_26_03_ip_multicast_also_cloned_to_the_static_group() -> None:
    from ovn_northd_py.flows.ls_l2 import build_ls_l2_flows

    nd, sw = _net([])
    nd.ports["vm1"].nb.options = {"mcast_flood": "true"}
    table = FlowTable(len(nd.by_index))
    build_ls_l2_flows(sw, FlowCtx(nd, profile=OVN_26_03), table)
    keys = {(f.priority, f.match, f.actions) for f in table.flows()}
    assert (71, "eth.mcast && ip", 'clone { outport = "_MC_static"; output; }; outport = "_MC_flood_l2"; output;') in keys
