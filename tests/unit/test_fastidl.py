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

