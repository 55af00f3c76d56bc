"""QoS flows (``ls_{in,out}_qos_{mark,meter}``) on small hand-built models.

Expected strings are those of the reference ovn-northd 23.03 for the same QoS rows
(see tests/parity/test_qos.py, which checks them against the reference itself).
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from test_flows_l2 import Net

from ovn_northd_py.flows import FlowCtx, build_lflows
from ovn_northd_py.flows.ls_qos import (
    QosFlow,
    build_qos_flows,
    qos_flows,
    qos_index,
    remove_qos_flows,
)
from ovn_northd_py.flows.owners import qos_owner
from ovn_northd_py.lflow.stages import LS_IN_QOS_MARK, LS_IN_QOS_METER, LS_OUT_QOS_MARK, LS_OUT_QOS_METER
from ovn_northd_py.lflow.table import FlowTable

_n = 0


def qos(direction: str, priority: int, match: str, dscp: int | None = None, **bandwidth: int) -> SimpleNamespace:
    global _n
    _n += 1
    return SimpleNamespace(
        uuid=uuid.UUID(f"{_n:08x}-0000-4000-8000-00000000a0a0"),
        direction=direction,
        priority=priority,
        match=match,
        action={} if dscp is None else {"dscp": dscp},
        bandwidth=dict(bandwidth),
        external_ids={},
    )


def test_mark_and_meter_per_direction() -> None:
    assert qos_flows(qos("from-lport", 100, "ip4.src == 10.0.0.1", dscp=12)) == (
        QosFlow(LS_IN_QOS_MARK, 100, "ip4.src == 10.0.0.1", "ip.dscp = 12; next;"),
    )
    assert qos_flows(qos("to-lport", 200, "ip6.dst == fd00::1", dscp=0)) == (
        QosFlow(LS_OUT_QOS_MARK, 200, "ip6.dst == fd00::1", "ip.dscp = 0; next;"),
    )
    assert qos_flows(qos("from-lport", 300, 'inport == "p1"', rate=1000, burst=200)) == (
        QosFlow(LS_IN_QOS_METER, 300, 'inport == "p1"', "set_meter(1000, 200); next;"),
    )
    assert qos_flows(qos("to-lport", 300, "ip4", rate=500)) == (
        QosFlow(LS_OUT_QOS_METER, 300, "ip4", "set_meter(500); next;"),
    )


def test_both_actions_and_rows_without_flows() -> None:
    assert qos_flows(qos("from-lport", 150, "ip6", dscp=10, rate=100, burst=10)) == (
        QosFlow(LS_IN_QOS_MARK, 150, "ip6", "ip.dscp = 10; next;"),
        QosFlow(LS_IN_QOS_METER, 150, "ip6", "set_meter(100, 10); next;"),
    )
    assert qos_flows(qos("to-lport", 60, "udp", burst=2000)) == ()  # a burst alone meters nothing
    assert qos_flows(qos("to-lport", 92, "ip4")) == ()
    # The match is the reference's too: written as is, even when ovn-controller cannot parse it.
    assert qos_flows(qos("from-lport", 90, "ip4.src == ", dscp=1))[0].match == "ip4.src == "


def _keys(table: FlowTable, dp: Any) -> set[tuple[str, int, str, str, str | None]]:
    return {
        (f.stage.name, f.priority, f.match, f.actions, f.hint) for f in table.flows() if dp.index in f.datapaths
        if "qos" in f.stage.name and f.priority
    }


def test_full_build_owners_and_index() -> None:
    net = Net()
    sw1, sw2 = net.switch("sw1"), net.switch("sw2")
    shared = qos("from-lport", 100, "ip4", dscp=12)
    own = qos("to-lport", 50, "tcp", dscp=48, rate=2000)
    sw1.nb.qos_rules = [shared, own]
    sw2.nb.qos_rules = [shared]
    table = FlowTable(2)
    ctx = FlowCtx(net.nd)
    build_lflows(net.nd, ctx, table)
    h_shared, h_own = str(shared.uuid)[:8], str(own.uuid)[:8]
    assert _keys(table, sw1) == {
        ("ls_in_qos_mark", 100, "ip4", "ip.dscp = 12; next;", h_shared),
        ("ls_out_qos_mark", 50, "tcp", "ip.dscp = 48; next;", h_own),
        ("ls_out_qos_meter", 50, "tcp", "set_meter(2000); next;", h_own),
    }
    assert _keys(table, sw2) == {("ls_in_qos_mark", 100, "ip4", "ip.dscp = 12; next;", h_shared)}
    idx = qos_index(ctx)
    assert idx.built == {str(shared.uuid): {sw1.key, sw2.key}, str(own.uuid): {sw1.key}}
    assert idx.dp_built == {sw1.key: {str(shared.uuid), str(own.uuid)}, sw2.key: {str(shared.uuid)}}
    # One owner per (row, switch): removing the shared row from sw1 leaves sw2's flow.
    assert table.owner_refs(qos_owner(str(shared.uuid), sw1.key)) == 1
    remove_qos_flows(str(shared.uuid), sw1.key, ctx, table)
    assert ("ls_in_qos_mark", 100, "ip4", "ip.dscp = 12; next;", h_shared) not in _keys(table, sw1)
    assert _keys(table, sw2) == {("ls_in_qos_mark", 100, "ip4", "ip.dscp = 12; next;", h_shared)}
    assert idx.built[str(shared.uuid)] == {sw2.key}
    # Rebuilding it restores exactly what the full build made.
    build_qos_flows(shared, sw1, ctx, table)
    assert len(_keys(table, sw1)) == 3
    remove_qos_flows(str(own.uuid), sw1.key, ctx, table)
    remove_qos_flows(str(shared.uuid), sw1.key, ctx, table)
    assert _keys(table, sw1) == set()
    assert sw1.key not in idx.dp_built


def test_priority_zero_flows_stay_in_defaults() -> None:
    net = Net()
    sw = net.switch("sw")
    f = net.build()
    for stage in (LS_IN_QOS_MARK, LS_IN_QOS_METER, LS_OUT_QOS_MARK, LS_OUT_QOS_METER):
        assert f.keys(sw, stage) == {(0, "1", "next;")}
