"""SessionTap.reply_ahead / scan_ahead: a transaction's reply, which the server sends after the transaction's
own echo, can be seen before the IDL processes that echo; the IDL still gets every message, in
order.  transact_committed: what a reply must say for its transaction to count as committed."""

from __future__ import annotations

import select
import time
from collections.abc import Callable
from typing import Any

import ovs.db.idl
import ovs.jsonrpc

from ovn_northd_py.ovsdb.connection import DbConnection
from ovn_northd_py.ovsdb.raw import RawSb, transact_committed, update_sets


def _synced(env: Any) -> DbConnection:
    """An SB IDL in sync, with an SB_Global row it inserted (nb_cfg 0)."""
    conn = DbConnection("sb", env.sb.remote, env.release.sb_schema, {"SB_Global": None})
    deadline = time.monotonic() + 30
    while not conn.synced:
        assert time.monotonic() < deadline
        conn.run()
        time.sleep(0.01)
    txn = ovs.db.idl.Transaction(conn.idl)
    txn.insert(conn.idl.tables["SB_Global"]).nb_cfg = 0
    while (st := txn.commit()) == ovs.db.idl.Transaction.INCOMPLETE:
        assert time.monotonic() < deadline
        conn.run()
        time.sleep(0.01)
    assert st == ovs.db.idl.Transaction.SUCCESS
    while not conn.rows("SB_Global"):
        conn.run()
    return conn


def _reply(result: Any, kind: int = ovs.jsonrpc.Message.T_REPLY) -> Any:
    if kind == ovs.jsonrpc.Message.T_ERROR:
        return ovs.jsonrpc.Message.create_error({"error": "not leader"}, "id1")
    return ovs.jsonrpc.Message.create_reply(result, "id1")


def _write_nb_cfg(conn: DbConnection, value: int) -> tuple[RawSb, Any]:
    """A tap on the IDL's session, and the IDL's transaction setting SB_Global nb_cfg, sent."""
    raw = RawSb(conn.idl, "OVN_Southbound", None)
    row = next(iter(conn.rows("SB_Global").values()))
    txn = ovs.db.idl.Transaction(conn.idl)
    row.nb_cfg = value
    assert txn.commit() == ovs.db.idl.Transaction.INCOMPLETE
    return raw, txn


def _until(conn: DbConnection, read: Callable[[], Any]) -> Any:
    """What ``read`` returns once it is not None, waiting on the IDL's socket in between."""
    sock = conn.idl._session.rpc.stream.socket
    deadline = time.monotonic() + 30
    while (got := read()) is None:
        assert time.monotonic() < deadline
        select.select([sock], [], [], 1.0)
    return got


def test_the_reply_is_seen_before_the_idl_processes_the_echo_and_the_idl_then_gets_both(env: Any) -> None:
    conn = _synced(env)
    try:
        raw, txn = _write_nb_cfg(conn, 7)
        rid = txn._request_id
        reply = _until(conn, lambda: raw.tap.reply_ahead(rid))
        assert reply.type == ovs.jsonrpc.Message.T_REPLY and transact_committed(reply, 0)
        # Nothing was processed yet: the IDL still holds the old value, the transaction is open.
        assert next(iter(conn.rows("SB_Global").values())).nb_cfg == 0
        assert txn.commit() == ovs.db.idl.Transaction.INCOMPLETE
        assert raw.tap.reply_ahead(rid) is reply  # (asked again: the same, still queued)
        conn.run()
        assert next(iter(conn.rows("SB_Global").values())).nb_cfg == 7
        assert txn.commit() == ovs.db.idl.Transaction.SUCCESS
        assert not raw.tap._ahead
    finally:
        conn.close()


def test_no_reply_yet_reads_what_came_and_hands_it_to_the_idl_in_order(env: Any) -> None:
    conn = _synced(env)
    try:
        raw = RawSb(conn.idl, "OVN_Southbound", None)
        assert raw.tap.reply_ahead("no-such-request") is None  # (nothing came: nothing waits)
        env.sbctl("set", "SB_Global", ".", "nb_cfg=5")  # another writer: an update, no reply of ours
        sock = conn.idl._session.rpc.stream.socket
        deadline = time.monotonic() + 30
        while not raw.tap._ahead:
            assert time.monotonic() < deadline
            select.select([sock], [], [], 1.0)
            assert raw.tap.reply_ahead("no-such-request") is None
        conn.run()
        assert next(iter(conn.rows("SB_Global").values())).nb_cfg == 5
        assert not raw.tap._ahead
    finally:
        conn.close()


def test_a_committed_reply_has_no_error_and_its_operation_updated_one_row() -> None:
    assert transact_committed(_reply([{}, {"count": 1}, {"count": 1}]), 2)
    assert transact_committed(_reply([{}, {"uuid": ["uuid", "x"]}, {"count": 1}]), 2)


def test_a_failed_operation_or_commit_or_a_missing_row_is_not_committed() -> None:
    assert not transact_committed(_reply([{}, {"error": "constraint violation"}]), 1)  # failed op
    assert not transact_committed(_reply([{}, {"count": 1}, {"error": "commit failed"}]), 1)  # commit
    assert not transact_committed(_reply([{}, {"count": 0}]), 1)  # the row is gone
    assert not transact_committed(_reply([{}]), 1)  # (short)
    assert not transact_committed(_reply(None, ovs.jsonrpc.Message.T_ERROR), 0)


def test_the_echo_of_a_write_is_found_ahead_of_the_idl_by_the_value_it_set(env: Any) -> None:
    conn = _synced(env)
    try:
        raw, txn = _write_nb_cfg(conn, 9)
        echo = _until(conn, lambda: raw.tap.scan_ahead(lambda m: update_sets(m, "SB_Global", "nb_cfg", 9)))
        assert echo.type == ovs.jsonrpc.Message.T_NOTIFY
        assert not update_sets(echo, "SB_Global", "nb_cfg", 8)
        assert not update_sets(echo, "SB_Global", "options", 9)
        assert not update_sets(echo, "Chassis", "nb_cfg", 9)
        assert next(iter(conn.rows("SB_Global").values())).nb_cfg == 0  # (not processed yet)
        def completed() -> Any:
            conn.run()
            return None if txn.commit() == ovs.db.idl.Transaction.INCOMPLETE else True

        _until(conn, completed)
        assert next(iter(conn.rows("SB_Global").values())).nb_cfg == 9
    finally:
        conn.close()


def _update(method: str, params: list[Any]) -> Any:
    return ovs.jsonrpc.Message.create_notify(method, params)


def test_update_sets_reads_every_monitor_update_format_and_nothing_else() -> None:
    u = "0f2d6e5a-7f0b-4b8e-9a51-1f7c2b6f8a10"
    assert update_sets(_update("update3", ["m", "last", {"SB_Global": {u: {"modify": {"nb_cfg": 3}}}}]),
                       "SB_Global", "nb_cfg", 3)
    assert update_sets(_update("update2", ["m", {"SB_Global": {u: {"modify": {"nb_cfg": 3}}}}]),
                       "SB_Global", "nb_cfg", 3)
    assert update_sets(_update("update", ["m", {"SB_Global": {u: {"old": {"nb_cfg": 2}, "new": {"nb_cfg": 3}}}}]),
                       "SB_Global", "nb_cfg", 3)
    # An insert, an unchanged column of an update (v1 "new" carries every column), a delete, a reply.
    assert not update_sets(_update("update3", ["m", "last", {"SB_Global": {u: {"insert": {"nb_cfg": 3}}}}]),
                           "SB_Global", "nb_cfg", 3)
    assert not update_sets(_update("update", ["m", {"SB_Global": {u: {"old": {"options": ["map", []]},
                                                                        "new": {"nb_cfg": 3}}}}]),
                           "SB_Global", "nb_cfg", 3)
    assert not update_sets(_update("update3", ["m", "last", {"SB_Global": {u: {"delete": None}}}]),
                           "SB_Global", "nb_cfg", 3)
    assert not update_sets(_reply([{"count": 1}]), "SB_Global", "nb_cfg", 3)
