"""OVN 26.03's network functions (behaviour ``network_function``): the ACL flows that mark the
redirection and the switch flows of :mod:`ovn_northd_py.flows.ls_network_function`.

Expected strings are the reference ovn-northd 26.03.1's (Debian sid), observed on the NBs of
``tests/parity/test_network_function_2603.py``.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from test_flows_acl import Nb, _port, _switch, acl

from ovn_northd_py.flows import FlowCtx, build_lflows
from ovn_northd_py.flows.acl_index import build_acl_index
from ovn_northd_py.flows.acl_rules import acl_flows
from ovn_northd_py.flows.ls_network_function import active_nf
from ovn_northd_py.lflow.profile import OVN_25_03, OVN_26_03
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.model import Northd

NF = "reg8[21] = 1; reg8[22] = 1; reg0[22..29] = 3; "


def _nf(name: str, nf_id: int, inport: str, outport: str, u: int) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=u), name=name, id=nf_id, inport=SimpleNamespace(name=inport),
                           outport=SimpleNamespace(name=outport))


def _group(gid: int, nfs: list[Any], fallback: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=1000 + gid), name=f"g{gid}", id=gid, network_function=nfs,
                           fallback=[fallback] if fallback else [])


def _acl_eval(a: Any, stateful: bool = True) -> set[tuple[str, int, str, str]]:
    return {(f.stage.name, f.priority, f.match, f.actions) for f in acl_flows(a, "k", stateful, True, frozenset(),
                                                                                OVN_26_03)}


def test_allow_related_acl_with_a_group_marks_the_redirection() -> None:
    got = _acl_eval(acl(direction="from-lport", action="allow-related", network_function_group=[_group(3, [])]))
    assert ("ls_in_acl_eval", 1100, "reg0[7] == 1 && (ip4)", f"reg8[16] = 1; {NF}next;") in got
    assert ("ls_in_acl_eval", 1100, "reg0[8] == 1 && (ip4)", f"reg8[16] = 1; reg0[1] = 1; {NF}next;") in got


def test_allow_acl_with_a_group_on_a_stateless_switch_has_no_eval_flow() -> None:
    assert _acl_eval(acl(action="allow", network_function_group=[_group(3, [])]), stateful=False) == set()


def test_drop_acl_with_a_group_has_no_eval_flow() -> None:
    assert _acl_eval(acl(action="drop", network_function_group=[_group(3, [])])) == set()


def test_allow_stateless_acl_with_a_group_keeps_only_its_pre_acl_flow() -> None:
    got = _acl_eval(acl(action="allow-stateless", network_function_group=[_group(3, [])]))
    assert got == {("ls_out_pre_acl", 1100, "ip4", "reg0[16] = 1; next;")}


def test_group_ignored_before_26_03() -> None:
    a = acl(direction="from-lport", action="allow-related", network_function_group=[_group(3, [])])
    got = {f.actions for f in acl_flows(a, "k", True, True, frozenset(), OVN_25_03)}
    assert not any("reg8[21]" in x for x in got)


def test_active_network_function_is_the_first_in_uuid_order() -> None:
    a, b = _nf("a", 22, "a1", "a2", 5), _nf("b", 21, "b1", "b2", 9)
    assert active_nf(_group(1, [b, a])) is a
    assert active_nf(_group(1, [])) is None


def test_active_network_function_stays_active_while_healthy() -> None:
    a, b = _nf("a", 22, "a1", "a2", 5), _nf("b", 21, "b1", "b2", 9)
    a.health_check = b.health_check = [SimpleNamespace()]
    g = _group(1, [a, b])
    g.network_function_active = [b]
    assert active_nf(g, {("a1", "a2"), ("b1", "b2")}) is b
    assert active_nf(g, {("a1", "a2")}) is a  # (b went offline)
    g.network_function_active = [_nf("gone", 5, "x1", "x2", 1)]  # (no longer in the group)
    assert active_nf(g, {("a1", "a2"), ("b1", "b2")}) is a


def _keys(acls: list[Any], ports: tuple[str, ...] = ("p1", "p2", "n1", "n2")) -> set[tuple[str, int, str, str]]:
    nd = Northd()
    sw = _switch(nd, "sw", acls)
    for p in ports:
        _port(nd, sw, p)
    ctx = FlowCtx(nd, profile=OVN_26_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})))
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    return {(f.stage.name, f.priority, f.match, f.actions) for f in table.flows()}


def test_from_lport_group_redirects_requests_in_ingress_and_replies_in_egress() -> None:
    g = _group(3, [_nf("nf1", 11, "n1", "n2", 1)])
    keys = _keys([acl(direction="from-lport", action="allow-related", network_function_group=[g])])
    assert ("ls_in_pre_network_function", 99, "reg8[21] == 1 && reg8[22] == 1 && reg0[22..29] == 3",
            "reg0[22..29] = 11; next;") in keys
    assert ("ls_in_network_function", 99, "reg8[21] == 1 && reg8[22] == 1 && reg0[22..29] == 11",
            'outport = "n1"; output;') in keys
    assert ("ls_out_network_function", 99, "reg8[21] == 1 && reg8[22] == 0 && ct_label.nf_id == 11",
            'outport = "n2"; reg8[23] = 1; next(pipeline=ingress, table=32);') in keys
    assert not any(k[0] == "ls_out_pre_network_function" and k[1] == 99 for k in keys)


def test_network_function_ports_skip_conntrack_and_commit_the_tunnel_interface() -> None:
    g = _group(3, [_nf("nf1", 11, "n1", "n2", 1)])
    keys = _keys([acl(direction="to-lport", action="allow-related", network_function_group=[g])])
    assert ("ls_out_pre_acl", 110, 'inport == "n1"', "next(pipeline=egress, table=14);") in keys
    assert not any(k[0] == "ls_out_pre_acl" and k[2] == 'inport == "n2"' for k in keys)
    for p in ("n1", "n2"):
        assert ("ls_in_network_function", 100, f'inport == "{p}"', "reg5[16..31] = ct_label.tun_if_id; next;") in keys
        assert ("ls_out_network_function", 100, f'outport == "{p}"', "next;") in keys
        assert ("ls_out_stateful", 120, f'outport == "{p}" && reg0[13] == 0',
                ("ct_commit { ct_mark.blocked = 0; ct_mark.allow_established = reg0[20]; "
                "ct_label.acl_id = reg2[16..31]; ct_label.tun_if_id = reg5[16..31]; }; next;")) in keys


def test_fail_open_group_without_its_ports_on_the_switch_only_clears_the_marks() -> None:
    g = _group(4, [_nf("nf2", 12, "x1", "x2", 1)], fallback="fail-open")
    keys = _keys([acl(direction="from-lport", action="allow-related", network_function_group=[g])])
    assert ("ls_in_pre_network_function", 10, "reg8[21] == 1 && reg8[22] == 1 && reg0[22..29] == 4",
            "reg8[21] = 0; reg0[22..29] = 0; next;") in keys
    assert not any(k[0] in ("ls_in_network_function", "ls_out_network_function") and k[1] in (99, 100)
                   and k[2] != "reg8[21] == 1 && eth.mcast" for k in keys)


def test_log_related_flows_restore_the_network_function_bit() -> None:
    a = acl(direction="from-lport", action="allow-related", label=42, log=True, name=["rel"], severity=["info"],
            options={"log-related": "true"})
    got = _acl_eval(a)
    log = 'log(name="rel", severity=info, verdict=allow); '
    assert ("ls_out_acl_eval", 65533, "ct.est && !ct.rel && ct.rpl && ct_mark.blocked == 0 && ct_label.label == 42",
            f"{log}reg8[21] = ct_label.nf; reg8[16] = 1; next;") in got
    assert ("ls_out_acl_eval", 65533, "!ct.est && ct.rel && !ct.new && ct_mark.blocked == 0 && ct_label.label == 42",
            f"{log}reg8[21] = ct_label.nf; reg8[16] = 1; next;") in got


def _tagged_keys(acls: list[Any], translation: bool) -> dict[tuple[str, int, str], tuple[tuple[str, str], ...]]:
    nd = Northd()
    sw = _switch(nd, "sw", acls)
    _port(nd, sw, "p1")
    ctx = FlowCtx(nd, profile=OVN_26_03, acl=build_acl_index(nd, Nb(NB_Global={}, Meter={})),
                  acl_ct_translation=translation)
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    return {(f.stage.name, f.priority, f.match): f.tags for f in table.flows()}


def test_acl_ct_translation_tags_the_hinted_acl_flows_only() -> None:
    acls = [acl(direction="from-lport", action="allow-related", match="tcp"),
            acl(direction="from-lport", action="allow-stateless", match="udp", uuid=uuid.UUID(int=99), priority=5)]
    got = _tagged_keys(acls, True)
    assert got[("ls_in_acl_eval", 1100, "reg0[7] == 1 && (tcp)")] == (("acl_ct_translation", "true"),)
    assert got[("ls_in_acl_eval", 1005, "(udp)")] == ()
    assert ("ls_in_pre_acl", 110, "eth.mcast") not in got
    off = _tagged_keys(acls, False)
    assert off[("ls_in_acl_eval", 1100, "reg0[7] == 1 && (tcp)")] == ()
    assert ("ls_in_pre_acl", 110, "eth.mcast") in off


def test_stateless_acl_with_lb_sends_vip_traffic_to_conntrack() -> None:
    from ovn_northd_py.flows.ls_lb import stateless_lb_specs

    lb = SimpleNamespace(uuid=uuid.UUID(int=7), name="lb", vips={"30.0.0.1:80": "10.0.0.1:8080", "30.0.0.2": "10.0.0.2"},
                         protocol=["tcp"], options={}, selection_fields=[], health_check=[], ip_port_mappings={},
                         external_ids={})
    specs = {(st.name, p, m, a) for st, p, m, a, _ in stateless_lb_specs(lb, FlowCtx(Northd(), profile=OVN_26_03))}
    assert specs == {
        ("ls_in_pre_stateful", 105, "tcp && ip4.dst == 30.0.0.1", "ct_lb_mark;"),
        ("ls_in_pre_stateful", 150, "ip4.dst == 30.0.0.1 && tcp.dst == 80", "reg4 = 30.0.0.1; reg2[0..15] = 80; ct_lb_mark;"),
        ("ls_in_pre_stateful", 150, "ip4.dst == 30.0.0.2", "reg4 = 30.0.0.2; ct_lb_mark;"),
    }


def test_distributed_load_balancer_names_the_backends_ports() -> None:
    from ovn_northd_py.flows.ls_lb import switch_lb_specs

    lb = SimpleNamespace(uuid=uuid.UUID(int=8), name="lb", vips={"30.0.0.1:80": "10.0.0.1:8080,10.0.0.9:8080"},
                         protocol=["tcp"], options={"distributed": "true"}, selection_fields=[], health_check=[],
                         ip_port_mappings={"10.0.0.1": "vm1:10.0.0.250"}, external_ids={})
    actions = {a for st, _p, _m, a, _c in switch_lb_specs(lb, FlowCtx(Northd(), profile=OVN_26_03))
               if st.name == "ls_in_lb"}
    assert actions == {'reg4 = 30.0.0.1; reg2[0..15] = 80; ct_lb_mark_local(backends="vm1":10.0.0.1:8080);'}
