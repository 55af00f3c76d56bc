"""Recognising the echo of a row our own transaction inserted (``RowChange.own``)."""

from __future__ import annotations

import uuid
from typing import Any

import ovs.db.data
import ovs.db.idl
import pytest

from ovn_northd_py.ovsdb.connection import _holds_exactly
from ovn_northd_py.release import DEFAULT_RELEASE


@pytest.fixture(scope="module")
def table() -> Any:
    helper = ovs.db.idl.SchemaHelper(location=str(DEFAULT_RELEASE.sb_schema))
    helper.register_all()
    return ovs.db.idl.Idl("unix:/nonexistent", helper).tables["Datapath_Binding"]


def _datum(table: Any, col: str, value: Any) -> Any:
    return ovs.db.data.Datum.from_json(table.columns[col].type, value)


def _echo(table: Any, cols: dict[str, Any]) -> Any:
    """A row as the IDL stores what the server sent (defaults of one-value columns included)."""
    data = ovs.db.idl.ColumnDefaultDict(table)
    for col, value in cols.items():
        data[col] = _datum(table, col, value)
    return ovs.db.idl.Row(None, table, uuid.uuid4(), data)


WRITTEN = {"tunnel_key": 5, "external_ids": ["map", [["name", "sw0"]]]}


def test_a_row_holding_what_we_wrote_is_our_echo(table: Any) -> None:
    written = {c: _datum(table, c, v) for c, v in WRITTEN.items()}
    assert _holds_exactly(_echo(table, WRITTEN), written)


def test_empty_columns_we_wrote_or_did_not_write_do_not_matter(table: Any) -> None:
    written = {c: _datum(table, c, v) for c, v in WRITTEN.items()}
    written["load_balancers"] = _datum(table, "load_balancers", ["set", []])
    assert _holds_exactly(_echo(table, WRITTEN), written)


def test_a_column_someone_else_changed_is_not_our_echo(table: Any) -> None:
    written = {c: _datum(table, c, v) for c, v in WRITTEN.items()}
    assert not _holds_exactly(_echo(table, {**WRITTEN, "tunnel_key": 6}), written)


def test_a_column_we_did_not_write_holding_a_value_is_not_our_echo(table: Any) -> None:
    written = {c: _datum(table, c, v) for c, v in WRITTEN.items()}
    lb = ["uuid", str(uuid.UUID(int=3))]
    assert not _holds_exactly(_echo(table, {**WRITTEN, "load_balancers": ["set", [lb]]}), written)
