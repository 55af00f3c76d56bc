"""ACL flows (:mod:`ovn_northd_py.flows.acl_rules`) and the switch-wide ACL-stage flows, on stand-in rows.

Expected strings are the reference ovn-northd 23.03's, for the NB each test names.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from ovn_northd_py.flows import FlowCtx, build_lflows
from ovn_northd_py.flows.acl_index import build_acl_index, smap_bool
from ovn_northd_py.flows.acl_rules import acl_flows
from ovn_northd_py.lflow.stages import (
    LS_IN_ACL,
    LS_IN_ACL_AFTER_LB,
    LS_IN_PRE_ACL,
    LS_IN_PRE_LB,
    LS_OUT_ACL,
    LS_OUT_PRE_LB,
)
from ovn_northd_py.lflow.table import FlowTable
from ovn_northd_py.northd.model import LS, Datapath, Northd, Port

REJECT_IN = (
    "reg0 = 0; reject { /* eth.dst <-> eth.src; ip.dst <-> ip.src; is implicit. */ outport <-> inport; "
    "next(pipeline=egress,table=5); };"
)
REJECT_OUT = REJECT_IN.replace("pipeline=egress,table=5", "pipeline=ingress,table=25")
ACL_KEY = "8214b2eb-c1f3-40da-8357-af4597d00440"


def acl(**kw: Any) -> SimpleNamespace:
    cols: dict[str, Any] = {
        "uuid": uuid.UUID(ACL_KEY), "direction": "to-lport", "priority": 100, "match": "ip4", "action": "allow",
        "log": False, "name": [], "severity": [], "meter": [], "label": 0, "options": {},
    }
    cols.update(kw)
    return SimpleNamespace(**cols)


def flows(a: SimpleNamespace, stateful: bool, inv: bool = True, fair: frozenset[str] = frozenset()) -> set[Any]:
    return {(f.stage.name, f.priority, f.match, f.actions) for f in acl_flows(a, ACL_KEY, stateful, inv, fair)}


def test_stateless_switch_uses_matches_as_written() -> None:
    # Reference: switch "st" of an NB without allow-related ACLs or LB VIPs.
    assert flows(acl(), False) == {("ls_out_acl", 1100, "ip4", "next;")}
    assert flows(acl(action="drop", direction="from-lport", priority=200, match="tcp"), False) == {
        ("ls_in_acl", 1200, "tcp", "/* drop */")
    }
    assert flows(acl(action="reject", direction="from-lport", priority=300, match="udp"), False) == {
        ("ls_in_acl", 1300, "udp", REJECT_IN)
    }
    # Labels only matter on stateful switches; allow-stateless is a plain allow here.
    assert flows(acl(label=5, match="udp.dst==1", priority=302), False) == {
        ("ls_out_acl", 1302, "udp.dst==1", "next;")
    }
    assert flows(acl(action="allow-stateless"), False) == {("ls_out_acl", 1100, "ip4", "next;")}


def test_stateful_switch_uses_hints() -> None:
    # Reference: switch "sw0" with allow-related ACLs.
    assert flows(acl(), True) == {
        ("ls_out_acl", 1100, "reg0[7] == 1 && (ip4)", "reg0[1] = 1; next;"),
        ("ls_out_acl", 1100, "reg0[8] == 1 && (ip4)", "next;"),
    }
    assert flows(acl(action="drop", match="icmp4", priority=400), True) == {
        ("ls_out_acl", 1400, "reg0[10] == 1 && (icmp4)", "ct_commit { ct_mark.blocked = 1; }; /* drop */"),
        ("ls_out_acl", 1400, "reg0[9] == 1 && (icmp4)", "/* drop */"),
    }
    assert flows(acl(action="reject", direction="from-lport", match="ip6", priority=500), True) == {
        ("ls_in_acl", 1500, "(reg0[10] == 1) && ip6", "ct_commit { ct_mark.blocked = 1; };  " + REJECT_IN),
        ("ls_in_acl", 1500, "(reg0[9] == 1) && ip6", REJECT_IN),
    }
    assert flows(acl(action="allow-stateless", direction="from-lport", match="udp", priority=300), True) == {
        ("ls_in_pre_acl", 1300, "udp", "reg0[16] = 1; next;"),
        ("ls_in_acl", 1300, "udp", "next;"),
    }
    assert flows(acl(label=77, match="tcp.dst == 23", priority=601), True) == {
        ("ls_out_acl", 1601, "reg0[7] == 1 && (tcp.dst == 23)", "reg0[1] = 1; reg0[13] = 1; reg3 = 77; next;"),
        ("ls_out_acl", 1601, "reg0[8] == 1 && (tcp.dst == 23)", "reg0[1] = 1; reg0[13] = 1; reg3 = 77; next;"),
    }


def test_apply_after_lb_only_for_from_lport() -> None:
    after = {"apply-after-lb": "true"}
    got = flows(acl(direction="from-lport", options=after, action="drop", match="tcp.dst == 91", priority=801), True)
    assert {f[0] for f in got} == {LS_IN_ACL_AFTER_LB.name}
    assert {f[0] for f in flows(acl(options=after), True)} == {LS_OUT_ACL.name}


def test_logging_meters_and_log_related() -> None:
    logged = acl(log=True, name=["mylog"], severity=["warning"], action="drop", direction="from-lport",
                 match="tcp.dst == 80", priority=700)
    assert ("ls_in_acl", 1700, "reg0[9] == 1 && (tcp.dst == 80)",
            'log(name="mylog", severity=warning, verdict=drop); /* drop */') in flows(logged, True)
    metered = acl(log=True, meter=["fm"], action="reject", priority=702, match="tcp.dst == 82")
    assert flows(metered, False) == {
        ("ls_out_acl", 1702, "tcp.dst == 82", f'log(severity=info, verdict=reject, meter="fm"); {REJECT_OUT}')
    }
    fair = flows(metered, False, fair=frozenset({"fm"}))
    assert f'meter="fm__{ACL_KEY}"' in next(iter(fair))[3]
    related = acl(log=True, label=42, name=["rel"], options={"log-related": "true"}, match="udp.dst==7",
                  priority=107, action="allow-related")
    got = flows(related, True, inv=False)
    assert ("ls_in_acl", 65533,
            "!ct.est && ct.rel && !ct.new && ct_mark.blocked == 0 && ct_label.label == 42",
            'log(name="rel", severity=info, verdict=allow); next;') in got
    assert ("ls_in_acl", 65533,
            "ct.est && !ct.rel && !ct.new && ct.rpl && ct_mark.blocked == 0 && ct_label.label == 42",
            'log(name="rel", severity=info, verdict=allow); next;') in got
    # No label, no log, or not stateful: no log-related flows.
    assert all(f[1] != 65533 for f in flows(acl(log=True, options={"log-related": "true"}), True))
    assert all(f[1] != 65533 for f in flows(acl(label=3, options={"log-related": "true"}), True))


def test_smap_bool() -> None:
    assert smap_bool({}, "x", True) and not smap_bool({"x": "FALSE"}, "x", True)
    assert smap_bool({"x": "yes"}, "x", True)
    assert not smap_bool({"x": "yes"}, "x", False) and smap_bool({"x": "True"}, "x", False)


# --------------------------------------------------------------------------- switch-wide flows over a model


class Nb:
    def __init__(self, **tables: dict[Any, Any]) -> None:
        self.tables = tables

    def rows(self, table: str) -> dict[Any, Any]:
        return self.tables.get(table, {})


def _switch(nd: Northd, name: str, acls: list[Any]) -> Datapath:
    nb = SimpleNamespace(uuid=uuid.uuid4(), name=name, acls=acls, load_balancer=[], load_balancer_group=[],
                         other_config={}, dns_records=[], forwarding_groups=[], copp=[])
    dp = Datapath(str(nb.uuid), LS, name, nb)
    nd.add_datapath(dp)
    return dp


def _port(nd: Northd, dp: Datapath, name: str, type: str = "") -> Port:
    nb = SimpleNamespace(uuid=uuid.uuid4(), name=name, addresses=[], port_security=[], type=type, options={},
                         enabled=[], dynamic_addresses=[], dhcpv4_options=[], dhcpv6_options=[], tag=[],
                         parent_name=[], ha_chassis_group=[], up=[], external_ids={})
    p = Port(name, "lsp", dp, nb, str(nb.uuid), sb_type=type)
    dp.ports.append(p)
    nd.ports[name] = p
    return p


def test_port_group_acl_makes_switch_stateful() -> None:
    nd = Northd()
    sw = _switch(nd, "a", [])
    other = _switch(nd, "b", [])
    p = _port(nd, sw, "a1")
    _port(nd, sw, "ln", type="localnet")
    _port(nd, other, "b1")
    rel = acl(action="allow-related", match="outport == @pg1")
    pg = SimpleNamespace(uuid=uuid.uuid4(), name="pg1", ports=[p.nb], acls=[rel])
    nb = Nb(Port_Group={pg.uuid: pg}, NB_Global={}, Meter={})
    ctx = FlowCtx(nd, acl=build_acl_index(nd, nb))
    table = FlowTable(len(nd.by_index))
    build_lflows(nd, ctx, table)
    keys = {(f.stage.name, f.priority, f.match, f.actions, d) for f in table.flows() for d in f.datapaths}
    assert ("ls_out_acl", 1100, "reg0[7] == 1 && (outport == @pg1)", "reg0[1] = 1; next;", 0) in keys
    assert not any(k[0] == "ls_out_acl" and k[1] == 1100 and k[4] == 1 for k in keys)
    # Stateful ACL: conntrack defrag hint and the localnet skip flows in pre-ACL; egress pre-LB skip keeps ct.
    assert (LS_IN_PRE_ACL.name, 100, "ip", "reg0[0] = 1; next;", 0) in keys
    assert (LS_IN_PRE_ACL.name, 110, 'ip && inport == "ln"', "next;", 0) in keys
    assert (LS_IN_PRE_LB.name, 110, 'ip && inport == "ln"', "next;", 0) in keys
    assert (LS_OUT_PRE_LB.name, 110, 'ip && outport == "ln"', "next;", 0) in keys
    # The other switch has no ACL: the ACL stages are skipped.
    assert (LS_IN_ACL.name, 65535, "1", "next;", 1) in keys
