"""The IDL row read cache (ovsdb/fastrow.py), against a real NB server."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ovn_northd_py.ovsdb import fastrow
from ovn_northd_py.ovsdb.connection import DbConnection


def _run_until(conn: DbConnection, done: Any) -> None:
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline
        conn.run()
        time.sleep(0.01)


def _one_row(env: Any, table: str, *nbctl: str) -> tuple[DbConnection, Any]:
    """A connection monitoring ``table``, once ``ovn-nbctl nbctl...`` put its one row there."""
    env.nbctl(*nbctl)
    conn = DbConnection("nb", env.nb.remote, env.release.nb_schema, {table: None})
    _run_until(conn, lambda: conn.synced and conn.rows(table))
    (row,) = conn.rows(table).values()
    return conn, row


def _lb(env: Any) -> tuple[DbConnection, Any]:
    return _one_row(env, "Load_Balancer", "lb-add", "lb0", "10.0.0.10:80", "10.0.1.2:8080", "tcp",
                    "--", "set", "Load_Balancer", "lb0", "options:reject=true")


def test_a_read_hands_out_a_copy_and_peek_the_cached_value_itself(env: Any) -> None:
    conn, row = _lb(env)
    try:
        first = row.options
        first["reject"] = "false"  # (a caller's copy)
        assert row.options == {"reject": "true"}
        assert fastrow.peek(row, "options") is fastrow.peek(row, "options") == {"reject": "true"}
    finally:
        conn.close()


def test_peek_sees_a_change_the_server_sent(env: Any) -> None:
    conn, row = _lb(env)
    try:
        assert fastrow.peek(row, "options") == {"reject": "true"}
        env.nbctl("set", "Load_Balancer", "lb0", "options:reject=false")
        _run_until(conn, lambda: row.options.get("reject") == "false")
        assert fastrow.peek(row, "options") == {"reject": "false"}
    finally:
        conn.close()


def test_uuid_str_is_the_rows_uuid_as_text(env: Any) -> None:
    conn, row = _lb(env)
    try:
        assert fastrow.uuid_str(row) == str(row.uuid)
        assert fastrow.uuid_str(row) is fastrow.uuid_str(row)
    finally:
        conn.close()


def test_peek_of_a_missing_attribute_gives_the_default_or_raises(env: Any) -> None:
    conn, row = _lb(env)
    try:
        assert fastrow.peek(row, "no_such_column", None) is None
        with pytest.raises(AttributeError):
            fastrow.peek(row, "no_such_column")
    finally:
        conn.close()


def test_every_column_reads_as_python_ovs_converts_it(env: Any) -> None:
    # (plain sets and maps are read straight from their atoms: the same values as the IDL's own
    # conversion, for sets, maps, optional scalars and references alike)
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-set-addresses", "p1",
              "00:00:00:00:00:02 10.0.0.2", "00:00:00:00:00:01 10.0.0.1",
              "--", "set", "Logical_Switch_Port", "p1", "tag_request=7", "options:b=2", "options:a=1",
              "--", "create", "Address_Set", "name=as1", "addresses=\"10.0.0.9\",\"10.0.0.10\",\"10.0.0.1\"")
    tables = {"Logical_Switch": None, "Logical_Switch_Port": None, "Address_Set": None}
    conn = DbConnection("nb", env.nb.remote, env.release.nb_schema, tables)
    try:
        _run_until(conn, lambda: conn.synced and conn.rows("Address_Set") and conn.rows("Logical_Switch"))
        rows = [*conn.rows("Address_Set").values(), *conn.rows("Logical_Switch").values(),
                *conn.rows("Logical_Switch_Port").values()]
        for row in rows:
            for col, datum in row._data.items():
                assert fastrow._to_python(datum, row) == datum.to_python(row._uuid_to_row), col
        (as1,) = conn.rows("Address_Set").values()
        assert as1.addresses == ["10.0.0.1", "10.0.0.10", "10.0.0.9"]
    finally:
        conn.close()


def test_scalar_reads_a_single_value_as_getattr_does(env: Any) -> None:
    conn, row = _lb(env)
    try:
        assert fastrow.scalar(row, "name") == row.name == "lb0"
        assert fastrow.scalar(row, "protocol") == row.protocol  # (an optional column: getattr's list)
    finally:
        conn.close()


def _address_set(env: Any) -> tuple[DbConnection, Any]:
    return _one_row(env, "Address_Set", "create", "Address_Set", "name=as1", 'addresses="10.0.0.1","10.0.0.2"')


def test_set_values_is_kept_with_the_row_until_the_server_changes_it(env: Any) -> None:
    conn, row = _address_set(env)
    try:
        first = fastrow.set_values(row, "addresses")
        assert first == frozenset({"10.0.0.1", "10.0.0.2"})
        assert fastrow.set_values(row, "addresses") is first  # (read once)
        env.nbctl("add", "Address_Set", "as1", "addresses", "10.0.0.3")
        _run_until(conn, lambda: "10.0.0.3" in row.addresses)
        assert fastrow.set_values(row, "addresses") == frozenset({"10.0.0.1", "10.0.0.2", "10.0.0.3"})
    finally:
        conn.close()


def test_set_values_reads_the_committed_set_under_a_pending_mutation(env: Any) -> None:
    """The base a mutate is computed against: what the server holds, not the transaction's."""
    from ovs.db.idl import Transaction

    conn, row = _address_set(env)
    try:
        txn = Transaction(conn.idl)
        row.addvalue("addresses", "10.0.0.9")
        assert fastrow.set_values(row, "addresses") == frozenset({"10.0.0.1", "10.0.0.2"})
        txn.abort()
    finally:
        conn.close()


def _no_read(_row: Any) -> frozenset[Any]:
    raise AssertionError("read every atom again")


def test_set_values_carries_over_the_servers_diff_without_reading_every_atom(env: Any) -> None:
    """A change of one address (the server sends the toggled atoms) carries the kept set over to the
    row's new version: the same set as the column now holds, not built again."""
    conn, row = _address_set(env)
    try:
        fastrow.set_values(row, "addresses")
        env.nbctl("add", "Address_Set", "as1", "addresses", "10.0.0.3", "--",
                  "remove", "Address_Set", "as1", "addresses", "10.0.0.1")
        _run_until(conn, lambda: "10.0.0.3" in row.addresses)
        carried = fastrow.derived(row, "set:addresses", _no_read)
        assert carried == frozenset({"10.0.0.2", "10.0.0.3"}) == frozenset(row.addresses)
        assert fastrow.set_values(row, "addresses") is carried
    finally:
        conn.close()


def test_set_values_not_kept_before_a_diff_is_read_after_it(env: Any) -> None:
    conn, row = _address_set(env)
    try:
        env.nbctl("remove", "Address_Set", "as1", "addresses", "10.0.0.2")
        _run_until(conn, lambda: "10.0.0.2" not in row.addresses)
        assert fastrow.set_values(row, "addresses") == frozenset({"10.0.0.1"})
    finally:
        conn.close()


def _write_both(row: Any, column: str, value: Any) -> tuple[Any, Any]:
    """What the row's transaction holds for ``column`` after ``row.column = value``, written by
    the fast path and by python-ovs' own (the row's pending change reset in between)."""
    out = []
    before = row._changes.get(column)
    for write in (fastrow._fast_setattr, fastrow._ORIG_SETATTR):
        row._changes.pop(column, None)
        if before is not None:
            row._changes[column] = before
        write(row, column, value)
        got = row._changes.get(column)
        out.append(got.to_json() if got is not None else None)
    return out[0], out[1]


def test_a_write_leaves_the_transaction_as_python_ovs_would(env: Any) -> None:
    from ovs.db.idl import Transaction

    conn, row = _lb(env)
    try:
        txn = Transaction(conn.idl)
        new = txn.insert(conn.idl.tables["Load_Balancer"])
        cases = [("name", "lb1"), ("options", {"reject": "false", "a": "b"}), ("options", {"reject": "true"}),
                 ("protocol", ["udp"]), ("protocol", []), ("protocol", "bogus"), ("vips", {"10.0.0.1:80": "10.0.1.1:80"}),
                 ("selection_fields", ["ip_src", "ip_dst"]), ("selection_fields", ["nope"]), ("name", 3)]
        for target in (row, new):
            for column, value in cases:
                fast, orig = _write_both(target, column, value)
                assert fast == orig, (column, value)
        assert row.uuid in txn._txn_rows and new.uuid in txn._txn_rows
        txn.abort()
    finally:
        conn.close()
