"""The cheaper IDL row update fills and stores what python-ovs's own does, warnings included."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import ovs.db.idl
import pytest

from ovn_northd_py.ovsdb import fastidl
from ovn_northd_py.release import DEFAULT_RELEASE

U = str(uuid.UUID(int=5))


@pytest.fixture(scope="module")
def idl() -> Any:
    helper = ovs.db.idl.SchemaHelper(location=str(DEFAULT_RELEASE.sb_schema))
    helper.register_all()
    return ovs.db.idl.Idl("unix:/nonexistent", helper)


ROWS = {
    "Port_Binding": [
        {"logical_port": "p1", "tunnel_key": 3, "datapath": ["uuid", U], "mac": ["set", ["00:00:00:00:00:01 10.0.0.1"]],
         "options": ["map", [["a", "b"]]], "type": ""},
        {"logical_port": "p2"},
        {"logical_port": "p3", "tunnel_key": 0, "up": False, "nonexistent_column": 1},
        {"logical_port": 7, "tunnel_key": "x"},
        {},
    ],
    "Datapath_Binding": [{"tunnel_key": 1, "external_ids": ["map", [["name", "sw0"]]]}, {"tunnel_key": 99999999}],
    "Logical_Flow": [{"logical_datapath": ["uuid", U], "pipeline": "ingress", "table_id": 2, "priority": 100,
                      "match": "1", "actions": "next;"}, {"pipeline": "bogus", "priority": -1}],
}


def _apply(idl: Any, table: str, row_json: dict[str, Any], add_default: Any, row_update: Any) -> Any:
    t = idl.tables[table]
    row = ovs.db.idl.Row(idl, t, uuid.uuid4(), ovs.db.idl.ColumnDefaultDict(t))
    rj = copy.deepcopy(row_json)
    warnings: list[str] = []
    orig_warn = ovs.db.idl.vlog.warn
    ovs.db.idl.vlog.warn = warnings.append
    try:
        add_default(idl, t, rj)
        changed = row_update(idl, t, row, rj)
    finally:
        ovs.db.idl.vlog.warn = orig_warn
    stored = {k: v.to_json() for k, v in dict.items(row._data)}
    return rj, changed, stored, warnings


@pytest.mark.parametrize("table,row_json", [(t, r) for t, rows in ROWS.items() for r in rows])
def test_row_update_matches_python_ovs(idl: Any, table: str, row_json: dict[str, Any]) -> None:
    fast = _apply(idl, table, row_json, fastidl._fast_add_default, fastidl._fast_row_update)
    orig = _apply(idl, table, row_json, fastidl._ORIG_ADD_DEFAULT, fastidl._ORIG_ROW_UPDATE)
    assert fast == orig



DIFFS = [
    ("Port_Binding", {"mac": ["set", ["00:00:00:00:00:02 10.0.0.2"]]}),  # a set gains one
    ("Port_Binding", {"mac": ["set", ["00:00:00:00:00:01 10.0.0.1"]]}),  # ... and loses one
    ("Port_Binding", {"options": ["map", [["a", "c"], ["d", "e"]]]}),  # a map: one changed, one new
    ("Port_Binding", {"tunnel_key": 9, "up": ["set", [True]]}),  # a single value, an optional one
    ("Port_Binding", {"nonexistent_column": 1, "tunnel_key": "x"}),  # warnings
]


def _diffed(idl: Any, table: str, diff: dict[str, Any], apply_diff: Any, old_value_tables: Any) -> Any:
    t = idl.tables[table]
    row = ovs.db.idl.Row(idl, t, uuid.uuid4(), ovs.db.idl.ColumnDefaultDict(t))
    fastidl._ORIG_ROW_UPDATE(idl, t, row, copy.deepcopy(ROWS["Port_Binding"][0]))
    warnings: list[str] = []
    orig_warn = ovs.db.idl.vlog.warn
    ovs.db.idl.vlog.warn = warnings.append
    idl.old_value_tables = old_value_tables
    try:
        old = apply_diff(idl, t, row, copy.deepcopy(diff))
    finally:
        ovs.db.idl.vlog.warn = orig_warn
        del idl.old_value_tables
    stored = {k: v.to_json() for k, v in dict.items(row._data)}
    return stored, {k: v.to_json() for k, v in old.items()}, sorted(old), warnings


@pytest.mark.parametrize("table,diff", DIFFS)
def test_apply_diff_matches_python_ovs(idl: Any, table: str, diff: dict[str, Any]) -> None:
    orig = _diffed(idl, table, diff, fastidl._ORIG_APPLY_DIFF, None)
    assert _diffed(idl, table, diff, fastidl._fast_apply_diff, None) == orig  # (old values kept: all)
    fast = _diffed(idl, table, diff, fastidl._fast_apply_diff, frozenset({"NB_Global"}))
    assert (fast[0], fast[2], fast[3]) == (orig[0], orig[2], orig[3])  # (old values not kept: the columns)
