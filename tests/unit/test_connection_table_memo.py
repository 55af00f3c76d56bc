"""``DbConnection.table_memo``: a value computed from a table is kept until the server changes that
table (insert, update, delete) or the table is read again after a reconnection."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ovn_northd_py.ovsdb.connection import DbConnection
from ovn_northd_py.sync.globals import hv_cfg


def _run_until(conn: DbConnection, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while True:
        conn.run()
        if done():
            return
        assert time.monotonic() < deadline, "the server's update did not arrive"
        time.sleep(0.01)


def _sb(env: Any) -> DbConnection:
    conn = DbConnection("sb", env.sb.remote, env.release.sb_schema, {"Chassis_Private": None, "Address_Set": None})
    _run_until(conn, lambda: conn.synced)
    return conn


def _counting(calls: list[int]) -> Callable[[Any], int]:
    def compute(rows: Any) -> int:
        calls.append(1)
        return sum(r.nb_cfg for r in rows.values())
    return compute


def test_table_memo_computes_once_while_the_table_is_unchanged(env: Any) -> None:
    env.sbctl("create", "Chassis_Private", "name=hv1", "nb_cfg=3")
    conn = _sb(env)
    try:
        _run_until(conn, lambda: len(conn.rows("Chassis_Private")) == 1)
        calls: list[int] = []
        assert conn.table_memo("Chassis_Private", "sum", _counting(calls)) == 3
        env.sbctl("create", "Address_Set", "name=as1")  # (another table's change)
        _run_until(conn, lambda: len(conn.rows("Address_Set")) == 1)
        assert conn.table_memo("Chassis_Private", "sum", _counting(calls)) == 3
        assert len(calls) == 1
    finally:
        conn.close()


def test_table_memo_follows_updates_inserts_and_deletes(env: Any) -> None:
    env.sbctl("create", "Chassis_Private", "name=hv1", "nb_cfg=3")
    conn = _sb(env)
    try:
        _run_until(conn, lambda: len(conn.rows("Chassis_Private")) == 1)
        memo = lambda: conn.table_memo("Chassis_Private", "sum", _counting([]))  # noqa: E731
        assert memo() == 3
        env.sbctl("set", "Chassis_Private", "hv1", "nb_cfg=5")
        _run_until(conn, lambda: memo() == 5)
        env.sbctl("create", "Chassis_Private", "name=hv2", "nb_cfg=7")
        _run_until(conn, lambda: memo() == 12)
        env.sbctl("destroy", "Chassis_Private", "hv1")
        _run_until(conn, lambda: memo() == 7)
    finally:
        conn.close()


def test_hv_cfg_forgets_the_chassis_a_restarted_server_no_longer_has(env: Any) -> None:
    """A table that comes back empty after a reconnection sends no event: the memo still sees it."""
    env.sbctl("create", "Chassis_Private", "name=hv1", "nb_cfg=3", "nb_cfg_timestamp=100")
    conn = _sb(env)
    try:
        _run_until(conn, lambda: len(conn.rows("Chassis_Private")) == 1)
        assert hv_cfg(conn, 9) == (3, 100)
        env.sb.stop()
        env.sb.db_path.unlink()  # (the server comes back with an empty database)
        env.sb.start()
        _run_until(conn, lambda: conn.synced and conn.connects >= 2 and not conn.rows("Chassis_Private"))
        assert hv_cfg(conn, 9) == (9, 0)
    finally:
        conn.close()
