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


def _lb(env: Any) -> tuple[DbConnection, Any]:
    env.nbctl("lb-add", "lb0", "10.0.0.10:80", "10.0.1.2:8080", "tcp", "--", "set", "Load_Balancer", "lb0",
              "options:reject=true")
    conn = DbConnection("nb", env.nb.remote, env.release.nb_schema, {"Load_Balancer": None})
    _run_until(conn, lambda: conn.synced and conn.rows("Load_Balancer"))
    (row,) = conn.rows("Load_Balancer").values()
    return conn, row


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
