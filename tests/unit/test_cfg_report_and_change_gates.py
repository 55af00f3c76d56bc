"""The cfg counters written into NB_Global (``nb_cfg_columns``), and the predicates that let a run
skip work no change asked for: ``column_touched`` (the daemon's loop options, the model's
install_ls_lb_from_router) and the NB changes that cannot change what nb_sync writes."""

from __future__ import annotations

from types import SimpleNamespace

from ovn_northd_py.engine.nodes.nb_sync import _inert
from ovn_northd_py.ovsdb.connection import RowChange, column_touched
from ovn_northd_py.sync.globals import nb_cfg_columns


def _change(table: str, event: str = "update", columns: frozenset[str] = frozenset()) -> RowChange:
    return RowChange(event, table, "u1", columns, None, False)


def test_nb_cfg_columns_writes_sb_cfg_with_its_stamp_and_hv_cfg_with_the_chassis_stamp() -> None:
    row = SimpleNamespace(sb_cfg=4, hv_cfg=3)
    assert nb_cfg_columns(row, 5, (5, 777), now_ms=1000) == {
        "sb_cfg": 5, "sb_cfg_timestamp": 1000, "hv_cfg": 5, "hv_cfg_timestamp": 777}


def test_nb_cfg_columns_writes_nothing_that_already_holds() -> None:
    row = SimpleNamespace(sb_cfg=5, hv_cfg=5)
    assert nb_cfg_columns(row, 5, (5, 777), now_ms=1000) == {}
    assert nb_cfg_columns(row, None, None, now_ms=1000) == {}
    assert nb_cfg_columns(SimpleNamespace(sb_cfg=5, hv_cfg=4), 5, (5, 9), now_ms=1000) == {
        "hv_cfg": 5, "hv_cfg_timestamp": 9}


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
