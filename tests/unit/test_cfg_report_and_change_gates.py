"""The cfg counters written into NB_Global (``CfgReport``, unmonitored), and the predicates that let a run
skip work no change asked for: ``column_touched`` (the daemon's loop options, the model's
install_ls_lb_from_router) and the NB changes that cannot change what nb_sync writes."""

from __future__ import annotations

import json

from ovn_northd_py.engine.nodes.nb_sync import _inert
from ovn_northd_py.ovsdb.connection import RowChange, column_touched
from ovn_northd_py.release import get_release
from ovn_northd_py.sync.globals import CfgReport, nb_monitored_columns


def _change(table: str, event: str = "update", columns: frozenset[str] = frozenset()) -> RowChange:
    return RowChange(event, table, "u1", columns, None, False)


_WHERE = ["_uuid", "==", ["uuid", "nbg"]]


def test_cfg_report_writes_sb_cfg_with_its_stamp_and_hv_cfg_with_the_chassis_stamp() -> None:
    assert CfgReport().ops("nbg", 5, (5, 777), now_ms=1000) == [
        {"op": "update", "table": "NB_Global", "row": {"sb_cfg": 5, "sb_cfg_timestamp": 1000},
         "where": [_WHERE, ["sb_cfg", "!=", 5]]},
        {"op": "update", "table": "NB_Global", "row": {"hv_cfg": 5, "hv_cfg_timestamp": 777},
         "where": [_WHERE, ["hv_cfg", "!=", 5]]}]


def test_cfg_report_writes_nothing_it_wrote_already() -> None:
    cfg = CfgReport()
    cfg.ops("nbg", 5, (4, 9), now_ms=1000)
    assert cfg.ops("nbg", 5, (4, 9), now_ms=2000) == []
    assert cfg.ops("nbg", None, None, now_ms=2000) == []
    assert cfg.ops("nbg", 5, (5, 10), now_ms=2000) == [
        {"op": "update", "table": "NB_Global", "row": {"hv_cfg": 5, "hv_cfg_timestamp": 10},
         "where": [_WHERE, ["hv_cfg", "!=", 5]]}]


def test_cfg_report_writes_again_once_it_forgot() -> None:
    cfg = CfgReport()
    cfg.ops("nbg", 5, None, now_ms=1000)
    cfg.forget()
    assert [op["row"] for op in cfg.ops("nbg", 5, None, now_ms=2000)] == [{"sb_cfg": 5, "sb_cfg_timestamp": 2000}]


def test_cfg_report_stamps_nb_cfg_timestamp_unconditionally() -> None:
    cfg = CfgReport()
    cfg.ops("nbg", 5, None, now_ms=1000)
    assert cfg.ops("nbg", 5, None, now_ms=2000, nb_cfg_timestamp=1500) == [
        {"op": "update", "table": "NB_Global", "row": {"nb_cfg_timestamp": 1500}, "where": [_WHERE]}]


def test_nb_global_columns_northd_writes_are_not_monitored() -> None:
    schema = json.loads(get_release("26.03").nb_schema.read_text())["tables"]["NB_Global"]["columns"]
    monitored = nb_monitored_columns(schema)
    assert {"nb_cfg", "options", "external_ids"} <= set(monitored)
    assert not {"sb_cfg", "sb_cfg_timestamp", "hv_cfg", "hv_cfg_timestamp", "nb_cfg_timestamp"} & set(monitored)


def test_column_touched_sees_creates_deletes_and_that_column_only() -> None:
    changes = [_change("Address_Set", columns=frozenset({"addresses"})),
               _change("NB_Global", columns=frozenset({"nb_cfg"}))]
    assert not column_touched(changes, "NB_Global", "options")
    assert column_touched([*changes, _change("NB_Global", columns=frozenset({"options", "nb_cfg"}))],
                          "NB_Global", "options")
    assert column_touched([_change("NB_Global", "create")], "NB_Global", "options")
    assert column_touched([_change("NB_Global", "delete")], "NB_Global", "options")
    # (from an index on: the changes already looked at are not read again)
    assert not column_touched([_change("NB_Global", "create"), *changes], "NB_Global", "options", start=1)


def test_address_set_and_nb_cfg_changes_are_inert_for_nb_sync() -> None:
    assert _inert([_change("Address_Set", columns=frozenset({"addresses"})),
                   _change("NB_Global", columns=frozenset({"nb_cfg"}))])
    assert _inert([_change("Port_Group", "create"), _change("ACL", "delete"), _change("Load_Balancer")])


def test_options_sb_cfg_bfd_and_port_changes_are_not_inert_for_nb_sync() -> None:
    assert not _inert([_change("NB_Global", columns=frozenset({"options"}))])
    assert not _inert([_change("NB_Global", columns=frozenset({"sb_cfg"}))])  # (someone else wrote it)
    assert not _inert([_change("NB_Global", "create")])
    assert not _inert([_change("BFD", columns=frozenset({"status"}))])
    assert not _inert([_change("Logical_Switch_Port", columns=frozenset({"up"}))])
