"""The echo of our own SB writes (ovsdb/echoes.py): one expected change per row written."""

from __future__ import annotations

from ovn_northd_py.ovsdb.connection import RowChange
from ovn_northd_py.ovsdb.echoes import Echoes


def _echoes() -> Echoes:
    e = Echoes()
    e.creates["Datapath_Binding"] = 2
    e.rows[("Port_Binding", "u1", "update")] = 1
    e.rows[("IP_Multicast", "u2", "delete")] = 1
    return e


def test_each_written_row_is_taken_once():
    e = _echoes()
    assert e.take(RowChange("update", "Port_Binding", "u1", frozenset({"options"})))
    assert not e.take(RowChange("update", "Port_Binding", "u1", frozenset({"options"}))), \
        "a second change of the same row is someone else's"


def test_creates_are_counted_per_table():
    e = _echoes()
    assert e.take(RowChange("create", "Datapath_Binding", "x", frozenset()))
    assert e.take(RowChange("create", "Datapath_Binding", "y", frozenset()))
    assert not e.take(RowChange("create", "Datapath_Binding", "z", frozenset()))
    assert not e.take(RowChange("create", "Port_Binding", "w", frozenset()))


def test_other_events_of_a_written_row_are_not_ours():
    e = _echoes()
    assert not e.take(RowChange("update", "IP_Multicast", "u2", frozenset({"enabled"})))
    assert e.take(RowChange("delete", "IP_Multicast", "u2", frozenset()))
