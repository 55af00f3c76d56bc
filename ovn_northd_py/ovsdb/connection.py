"""One database connection: a python-ovs IDL on the asyncio loop, with change tracking.

The IDL does reconnect with backoff, re-monitoring after reconnect and the OVSDB
lock.  We add: registering only the columns we read, per-row change tracking for
the incremental engine, a "resynced" flag when the session reconnects (the IDL
then replaces its contents wholesale, so consumers must recompute), and state
for metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import ovs.db.idl
import ovs.db.types
import ovs.jsonrpc
import ovs.stream

from . import fastdatum, fastidl, fastrow, fastrpc, fasttxn
from .aiopoll import AsyncPoller

T = TypeVar("T")

fastdatum.install()
fastidl.install()
fastrow.install()
fastrpc.install()
fasttxn.install()

# python-ovs logs through ovs.vlog, which ovn_northd_py.log sets up (destinations and levels).

# Small tables whose handlers need the old values of changed columns.
OLD_VALUE_TABLES = frozenset({"NB_Global", "SB_Global", "Load_Balancer", "Load_Balancer_Group", "Logical_Router"})
# Of those, the tables whose deleted rows' last values are kept too (``old`` of a delete).
OLD_ROW_TABLES = {"Load_Balancer": ("vips", "options"), "Load_Balancer_Group": ("load_balancer",)}


@dataclass(slots=True)
class RowChange:
    event: str  # "create" | "update" | "delete"
    table: str
    uuid: Any
    columns: frozenset[str]  # columns that changed (update only)
    # old values of the changed columns, for tables in OLD_VALUE_TABLES (a deleted row's last
    # values of the columns OLD_ROW_TABLES names); reference sets as uuid sets
    old: dict[str, Any] | None = None
    # A create that is the echo of a row our own transaction inserted, holding exactly what we
    # wrote (``DbConnection.expect_inserts``): consumers that only compare rows with what they
    # want may skip it.
    own: bool = False


# python-ovs reads a connection 4 KiB at a time, each chunk decoded, re-encoded and fed to the
# JSON parser in Python: ~7,000 turns of that loop for the 30 MB echo of a 100-node cold sync.
RECV_CHUNK = 1 << 20


def column_touched(changes: list[RowChange], table: str, column: str, start: int = 0) -> bool:
    """Do the tracked ``changes[start:]`` create or delete a row of ``table``, or change its ``column``?"""
    return any(c.table == table and (c.event != "update" or column in c.columns) for c in changes[start:])


def read_in_large_chunks(session: Any) -> None:
    """Make the session's current stream hand out up to :data:`RECV_CHUNK` bytes per read
    (whatever python-ovs asks for).  Once per stream: a reconnection's new stream is wrapped on
    its first read."""
    rpc = getattr(session, "rpc", None)
    stream = getattr(rpc, "stream", None)
    if stream is None or stream.__dict__.get("_npy_large_reads"):
        return
    recv = stream.recv

    def recv_large(n: int) -> Any:
        return recv(max(n, RECV_CHUNK))

    stream.recv = recv_large
    stream._npy_large_reads = True


def note_messages(session: Any) -> None:
    """Make the session's current connection record whether its last ``recv`` returned a message
    (``_npy_last_msg``), so that a ``None`` from the session's own ``recv`` can be told apart: the
    socket had nothing more, or the session answered an echo probe itself (more may follow).
    Once per connection, like :func:`read_in_large_chunks`."""
    rpc = getattr(session, "rpc", None)
    if rpc is None or rpc.__dict__.get("_npy_noted"):
        return
    recv = rpc.recv

    def recv_noted() -> Any:
        error, msg = recv()
        rpc._npy_last_msg = msg is not None
        return error, msg

    rpc.recv = recv_noted
    rpc._npy_noted = True


def _old_value(row: Any, column: str) -> Any:
    """A column's value in ``row`` (an IDL row, or the old values the IDL hands ``notify``): reference
    columns as the set of the uuids they hold (converting them to rows would sort them, and rows
    deleted in the same update are gone already)."""
    ctype = row._table.columns[column].type
    if ctype.key.ref_table_name and ctype.value is None:
        datum = row._data.get(column)
        return frozenset(atom.value for atom in datum.values) if datum is not None else frozenset()
    return getattr(row, column)


class _TrackingIdl(ovs.db.idl.Idl):  # type: ignore[misc]
    """An Idl that records per-row changes between two ``take_changes()`` calls."""

    def __init__(self, remote: str, helper: Any, **kw: Any) -> None:
        self.changes: list[RowChange] = []
        self.track = True
        # uuid -> the columns we wrote, of rows our transaction in flight inserts (persisted uuids)
        self.expect_own: dict[Any, dict[str, Any]] = {}
        # The tables whose old values ``notify`` reads (fastidl copies a changed column for those only).
        self.old_value_tables = OLD_VALUE_TABLES
        # table -> row events seen (every insert, update and delete the server sent, tracked or
        # not): what :meth:`DbConnection.table_memo` keys on.
        self.table_events: dict[str, int] = {}
        super().__init__(remote, helper, **kw)

    def notify(self, event: str, row: Any, updates: Any = None) -> None:
        table = row._table.name
        self.table_events[table] = self.table_events.get(table, 0) + 1
        if event != ovs.db.idl.ROW_CREATE:
            fastrow.invalidate(row)
        if not self.track:
            return
        cols: frozenset[str] = frozenset(updates._data.keys()) if updates is not None else frozenset()
        old = None
        if updates is not None and table in OLD_VALUE_TABLES:
            old = {c: _old_value(updates, c) for c in cols}
        elif event == ovs.db.idl.ROW_DELETE and table in OLD_ROW_TABLES:
            old = {c: _old_value(row, c) for c in OLD_ROW_TABLES[table]}
        own = False
        if event == ovs.db.idl.ROW_CREATE and self.expect_own:
            written = self.expect_own.pop(row.uuid, None)
            own = written is not None and _holds_exactly(row, written)
        self.changes.append(RowChange(event, table, row.uuid, cols, old, own))


def _is_default(datum: Any) -> bool:
    """The column's default: empty, or (a column of exactly one value) its type's default atom.
    (python-ovs's own ``is_default`` never holds for the latter.)"""
    values = datum.values
    if not values:
        return True
    if len(values) != 1 or datum.type.value is not None:
        return False
    return bool(next(iter(values)).value == datum.type.key.type.default)


def _holds_exactly(row: Any, written: dict[str, Any]) -> bool:
    """Whether a row the server sent holds what we wrote into it, and nothing else."""
    data = row._data
    for col, want in written.items():
        have = dict.get(data, col)
        if have is None:
            if not _is_default(want):
                return False
        elif have != want:
            return False
    return all(col in written or _is_default(have) for col, have in dict.items(data))


@dataclass(slots=True)
class DbConnection:
    """A named IDL connection (``nb`` or ``sb``)."""

    name: str
    remote: str
    schema_path: Path
    # table -> columns to monitor (None: all); tables and columns the schema lacks are left out
    tables: dict[str, Iterable[str] | None]
    lock_name: str | None = None
    probe_interval_ms: int | None = None
    idl: _TrackingIdl = field(init=False)
    schema_name: str = field(init=False)
    schema_version: str = field(init=False)
    _last_session_seqno: int = field(default=-1, init=False)
    _last_change_seqno: int = field(default=-1, init=False)
    resynced: bool = field(default=True, init=False)
    connects: int = field(default=0, init=False)  # session seqno changes seen (connects and disconnects)
    _monitor_canceled: bool = field(default=False, init=False)  # the server sent monitor_canceled
    _swallowed: bool = field(default=False, init=False)  # the session answered an echo in this run
    # (table, kind) -> (the table's rows object, its event count, the value): :meth:`table_memo`
    _memos: dict[tuple[str, str], tuple[Any, int, Any]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        helper = ovs.db.idl.SchemaHelper(location=str(self.schema_path))
        self.schema_name = helper.schema_json["name"]
        self.schema_version = helper.schema_json["version"]
        have = helper.schema_json["tables"]
        for table, cols in self.tables.items():
            if table not in have:
                continue  # a table of another release's schema (e.g. newer)
            if cols is None:
                helper.register_table(table)
            else:
                helper.register_columns(table, [c for c in cols if c in have[table]["columns"]])
        kw: dict[str, Any] = {}
        if self.probe_interval_ms is not None:
            kw["probe_interval"] = self.probe_interval_ms
        self.idl = _TrackingIdl(self.remote, helper, **kw)
        if self.probe_interval_ms is not None:
            # (python-ovs ignores the argument on unix sockets; --probe-interval applies to every remote.)
            self.set_probe_interval(self.probe_interval_ms)
        if "," in self.remote:
            # A clustered database: after its leader went away every member answers "not leader"
            # until a new one is elected; keep trying them every second instead of backing off
            # to python-ovs' 8 s (which delayed SB writes by up to ~13 s after a leader change).
            self.idl._session.reconnect.set_backoff(1000, 1000)
        if self.lock_name:
            self.idl.set_lock(self.lock_name)
        session = self.idl._session
        recv = session.recv

        def recv_noting_cancels() -> Any:
            read_in_large_chunks(session)
            note_messages(session)
            msg = recv()
            if msg is None:
                rpc = session.rpc
                if rpc is not None and rpc.__dict__.get("_npy_last_msg"):
                    self._swallowed = True  # (an echo probe the session answered: read on)
            elif msg.type == ovs.jsonrpc.Message.T_NOTIFY and msg.method == "monitor_canceled":
                self._monitor_canceled = True
            return msg

        session.recv = recv_noting_cancels

    # --- loop integration ---
    def run(self) -> bool:
        """Process what the server sent.  True if the contents (or lock state) changed."""
        with fastrow.busy():
            self._run_idl()
        if self._monitor_canceled:
            # The server dropped our monitors: a live conversion of the database to another
            # schema (``ovsdb-client convert``, an upgrade).  python-ovs ignores the notification
            # and would get no more updates: reconnect (the IDL monitors afresh, and the daemon
            # asks the servers' release again after a reconnection).
            self._monitor_canceled = False
            self.idl.force_reconnect()
        seq = self.idl._session.get_seqno()
        if seq != self._last_session_seqno:
            # (Re)connected or disconnected: the IDL will repopulate from scratch.
            self._last_session_seqno = seq
            self.idl.expect_own = {}
            self.resynced = True
            self.connects += 1
        changed = self.idl.change_seqno != self._last_change_seqno
        self._last_change_seqno = self.idl.change_seqno
        return changed

    def _run_idl(self) -> None:
        """``idl.run()``, making sure a connection the server closed is seen as closed now.

        The IDL stops reading at a message its session consumes itself (the server's echo probe),
        so the end of a connection the server dropped (e.g. its inactivity probe went unanswered
        while we were frozen) would only be read on the next loop iteration, which would act on a
        lock the server freed with the connection.  So: read again when the first run stopped at
        such a message (not when it stopped because the socket had nothing more: a second run
        then costs a whole pass of the IDL's loop on every change), and when the connection
        reports an error, let the session drop it now."""
        session = self.idl._session
        for _ in range(2):
            rpc = session.rpc
            self._swallowed = False
            self.idl.run()
            if rpc is None or session.rpc is not rpc:
                return
            if rpc.get_status():
                session.run()  # (disconnects: is_connected() turns false, the seqno moves)
                return
            if not self._swallowed:
                return

    def wait(self, poller: AsyncPoller) -> None:
        self.idl.wait(poller)

    def expect_inserts(self, txn: Any) -> None:
        """Before ``txn`` is committed: the rows it inserts with a uuid of ours (``persist_uuid``)
        and no mutations, so that their echo can be recognised (``RowChange.own``).  Replaces
        what an earlier transaction left expected."""
        expect: dict[Any, dict[str, Any]] = {}
        for row in txn._txn_rows.values():
            d = row.__dict__
            if d.get("_data") is None and d.get("_changes") and d.get("_persist_uuid") and not d.get("_mutations"):
                expect[row.uuid] = dict(d["_changes"])
        self.idl.expect_own = expect

    def take_changes(self) -> tuple[list[RowChange], bool]:
        """The tracked row changes since the last call, and whether a full resync happened."""
        changes, self.idl.changes = self.idl.changes, []
        resynced, self.resynced = self.resynced, False
        return changes, resynced

    # --- state ---
    @property
    def connected(self) -> bool:
        return bool(self.idl._session.is_connected())

    @property
    def synced(self) -> bool:
        """Connected and monitoring.  (While the session is down the IDL keeps its last state,
        MONITORING included, until it reconnects: that is not "synced".)"""
        return (self.connected and bool(self.idl.has_ever_connected())
                and self.idl.state == self.idl.IDL_S_MONITORING)

    @property
    def has_lock(self) -> bool:
        """Whether we hold the lock *now*.  The IDL keeps ``has_lock`` set across a disconnection
        until it reconnects and asks again; a lock held on a connection that is gone is not held
        (the server released it, and another instance may have it).  And a cluster member grants
        its own, local lock before the IDL has found that it is not the leader and moved on: the
        lock counts once we monitor through the connection that holds it."""
        return self.connected and bool(self.idl.has_lock) and self.idl.state == self.idl.IDL_S_MONITORING

    @property
    def lock_contended(self) -> bool:
        return bool(self.idl.is_lock_contended)

    @property
    def probe_interval(self) -> int:
        """The inactivity probe interval in force (read back from the session's reconnect FSM)."""
        return int(self.idl._session.reconnect.get_probe_interval())

    def default_probe_interval_ms(self) -> int:
        """The interval without NB_Global options:northd_probe_interval: ``--probe-interval`` if
        given, else python-ovs' (and ovn-northd's) default: 5000 ms, none on unix sockets."""
        if self.probe_interval_ms is not None:
            return max(0, self.probe_interval_ms)
        first = self.remote.split(",")[0].strip()
        return 5000 if ovs.stream.stream_or_pstream_needs_probes(first) else 0

    def set_probe_interval(self, ms: int) -> None:
        """0 disables probes; a nonzero value below 1000 ms is raised to 1000 (by the FSM)."""
        self.idl._session.reconnect.set_probe_interval(ms)

    def rows(self, table: str) -> dict[Any, Any]:
        return self.idl.tables[table].rows

    def table_memo(self, table: str, kind: str, compute: Callable[[Any], T]) -> T:
        """``compute(rows)`` of ``table``'s committed rows, computed again only once the server
        changed the table: a row inserted, updated or deleted (every such event goes through the
        IDL's ``notify``), or the table re-read after a reconnection (python-ovs then replaces its
        rows object, and a table that comes back empty sends no event).  Not for what a
        transaction being built writes: the IDL's rows answer with its pending values."""
        rows = self.idl.tables[table].rows
        events = self.idl.table_events.get(table, 0)
        memo = self._memos.get((table, kind))
        if memo is not None and memo[0] is rows and memo[1] == events:
            return cast(T, memo[2])
        value = compute(rows)
        self._memos[(table, kind)] = (rows, events, value)
        return value

    def close(self) -> None:
        self.idl.close()
