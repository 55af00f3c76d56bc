"""A lean bulk path on the IDL's own SB connection (and so under its lock).

Logical flows are the bulk of SB.  Letting the python-ovs IDL track them costs
about 90 us and 6 KB per row, mostly spent re-processing the server's echo of
our own inserts.  Instead, the tables we alone write in bulk (Logical_Flow,
Logical_DP_Group, Load_Balancer) are not monitored at all: we read them once
with a ``select`` (after each (re)connection), keep our own compact cache, and
write them with raw ``transact`` requests sent on the IDL's JSON-RPC session.
Every write transaction starts with an ``assert`` of the ``ovn_northd`` lock,
so it fails rather than writes when another northd holds the lock.

``SessionTap`` sits between the IDL and its session.  It takes out the replies
to our own requests and the updates of our own monitor before the IDL sees
them, and it can *attach* raw operations to the next ``transact`` the IDL sends:
one engine run's IDL changes and its flow/group/load-balancer changes then
travel as ONE transaction, so SB never holds a flow that names an address set,
port group or port that the same run deletes (or not yet inserts).  The IDL
processes its own results; the results of the attached operations (which come
after the IDL's own) are kept for the caller.
"""

from __future__ import annotations

import errno
import itertools
import json
import select
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import ovs.jsonrpc
import ovs.socket_util
import ovs.stream

_ids = itertools.count(1)


class _OutBuf:
    """The output queue of a python-ovs jsonrpc Connection, without its quadratic cost.

    ``Connection.run`` sends ``self.output`` and then keeps ``self.output[n:]``; with a
    str of 100 MB that re-encodes and copies the remainder on every partial send.
    This queue of byte chunks makes both O(1); the stream's ``send`` is wrapped to
    send from the head chunk.  ``+=`` of a str (the IDL's own messages) still works.
    """

    __slots__ = ("_chunks", "_len", "_off")

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._off = 0
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __iadd__(self, data: str | bytes) -> Self:
        b = data.encode("utf-8") if isinstance(data, str) else data
        if b:
            self._chunks.append(b)
            self._len += len(b)
        return self

    __add__ = __iadd__

    def __getitem__(self, s: slice) -> _OutBuf:
        n = s.start or 0
        self._len -= n
        while n:
            head = len(self._chunks[0]) - self._off
            if n < head:
                self._off += n
                break
            n -= head
            self._chunks.popleft()
            self._off = 0
        return self

    def head(self) -> memoryview:
        return memoryview(self._chunks[0])[self._off:]


def _stream_send(stream: Any, buf: Any) -> int:
    if not isinstance(buf, _OutBuf):
        return int(ovs.stream.Stream.send(stream, buf))
    try:
        err = stream.connect()
        if err:
            return -int(err)
        if not len(buf):
            return 0
        return int(stream.socket.send(buf.head()))
    except OSError as e:
        return -int(ovs.socket_util.get_exception_errno(e))


def _bulk_output(rpc: Any) -> _OutBuf:
    """Switch a Connection to the chunked output queue (once per connection)."""
    if not isinstance(rpc.output, _OutBuf):
        ob = _OutBuf()
        ob += rpc.output
        rpc.output = ob
        stream = rpc.stream
        stream.send = lambda buf, _s=stream: _stream_send(_s, buf)
    out: _OutBuf = rpc.output
    return out


# A request's operations are encoded this many at a time (see send_bulk).
_OPS_PER_CHUNK = 2000


def _json_default(obj: Any) -> Any:
    """An operation that builds its JSON when encoded (``json_value``: a flow writer's insert);
    else the text (python-ovs 3.1 puts a uuid.UUID object in a persist_uuid insert)."""
    value = getattr(obj, "json_value", None)
    return value() if value is not None else str(obj)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=_json_default)


def send_bulk(session: Any, msg: Any) -> int:
    """Queue ``msg`` on a python-ovs Session, serialised with the C encoder (no key sorting) into
    the chunked output queue.  Returns 0 or an errno, like ``Session.send``.

    A long ``params`` list (a cold sync's 70,000 inserts) is encoded a slice at a time, each
    slice written to the socket as far as it takes it before the next is encoded: the server
    parses the request while we encode the rest, and the whole text (30 MB, twice over as str
    and bytes) never sits in memory at once."""
    rpc = getattr(session, "rpc", None)
    if rpc is None:
        return errno.ENOTCONN
    if rpc.status:
        return int(rpc.status)
    j = msg.to_json()
    params = j.get("params")
    out = _bulk_output(rpc)
    if not isinstance(params, list) or len(params) <= _OPS_PER_CHUNK:
        was_empty = len(out) == 0
        out += _dumps(j).encode("utf-8")
        if was_empty:
            rpc.run()
        return int(rpc.status)
    rest = _dumps({k: v for k, v in j.items() if k != "params"})
    for i in range(0, len(params), _OPS_PER_CHUNK):
        text = _dumps(params[i:i + _OPS_PER_CHUNK])[1:-1]
        out += ('{"params":[' + text if i == 0 else "," + text).encode("utf-8")
        rpc.run()
    out += ("]" + ("," + rest[1:] if len(rest) > 2 else "}")).encode("utf-8")
    rpc.run()
    return int(rpc.status)


def flush(session: Any, timeout: float) -> bool:
    """Write what the session has queued, waiting for the socket to take it for up to
    ``timeout`` seconds (the server reads as we write).  True if nothing is left queued.  For a
    request the server should start on while we go on computing: a queued remainder would
    otherwise wait for the next turn of the loop."""
    rpc = getattr(session, "rpc", None)
    if rpc is None or rpc.status:
        return False
    deadline = time.monotonic() + timeout
    while True:
        rpc.run()
        if not rpc.get_backlog():
            return True
        left = deadline - time.monotonic()
        sock = getattr(rpc.stream, "socket", None)
        if left <= 0 or sock is None or rpc.status:
            return False
        select.select([], [sock], [], left)


def _name_persisted_inserts(params: list[Any]) -> None:
    """python-ovs 3.1 refers to a row inserted with ``persist_uuid`` by a named-uuid it never
    declares; declare it (an insert may carry both ``uuid`` and ``uuid-name``)."""
    for op in params[1:]:
        if isinstance(op, dict) and op.get("op") == "insert" and "uuid" in op and "uuid-name" not in op:
            op["uuid-name"] = "row" + str(op["uuid"]).replace("-", "_")


_T_REPLY = ovs.jsonrpc.Message.T_REPLY
_T_ERROR = ovs.jsonrpc.Message.T_ERROR
_T_NOTIFY = ovs.jsonrpc.Message.T_NOTIFY
_UPDATE_METHODS = frozenset({"update", "update2", "update3"})


def is_reply_to(msg: Any, request_id: Any) -> bool:
    return bool(msg.id == request_id and msg.type in (_T_REPLY, _T_ERROR))


def update_sets(msg: Any, table: str, column: str, value: Any) -> bool:
    """Whether ``msg`` is a monitor update (``update``, ``update2`` or ``update3``) in which a row
    of ``table`` changed ``column`` to ``value``.  Monitors see committed transactions only: the
    update of a value that only our write sets says that write committed."""
    if msg.type != _T_NOTIFY or msg.method not in _UPDATE_METHODS or not isinstance(msg.params, list) or not msg.params:
        return False
    updates = msg.params[-1]
    rows = updates.get(table) if isinstance(updates, dict) else None
    if not isinstance(rows, dict):
        return False
    for ru in rows.values():
        if not isinstance(ru, dict):
            continue
        new = ru.get("modify")  # (update2/3; update: "new" with the changed columns' "old")
        if new is None and isinstance(ru.get("old"), dict) and column in ru["old"]:
            new = ru.get("new")
        if isinstance(new, dict) and column in new and new[column] == value:
            return True
    return False


def transact_committed(reply: Any, pos: int) -> bool:
    """Whether ``reply`` (to a ``transact``) says the transaction committed and its operation
    ``pos`` (0: the first after the database name) updated exactly one row.  A failed operation
    has an error in its place, a failed commit one more result with an error."""
    results = reply.result if reply.type == _T_REPLY else None
    if not isinstance(results, list) or len(results) <= pos or results[pos] != {"count": 1}:
        return False
    return not any(isinstance(r, dict) and "error" in r for r in results)


# The row updates a lean monitor sends for an insert or a delete (no columns), shared by all:
# readers of ``SessionTap.updates`` must not modify them.
_INSERTED: dict[str, Any] = {"new": {}}
_DELETED: dict[str, Any] = {"old": {}}


def _compact(update: Any) -> Any:
    """A monitor update with its column-less inserts and deletes made one shared object each (a
    cold sync's echo of 60,000 inserts sits in memory beside the transaction's reply)."""
    if not isinstance(update, dict):
        return update
    for rows in update.values():
        if not isinstance(rows, dict):
            continue
        for u, ru in rows.items():
            if isinstance(ru, dict) and len(ru) == 1:
                if ru.get("new") == {}:
                    rows[u] = _INSERTED
                elif ru.get("old") == {}:
                    rows[u] = _DELETED
    return update


class SessionTap:
    """Wraps an ``ovs.jsonrpc.Session``: replies to our requests and updates of our monitor are
    kept; raw operations can ride on the IDL's next ``transact``; everything else passes."""

    def __init__(self, session: Any) -> None:
        self._s = session
        self.waiting: set[Any] = set()
        self.replies: dict[Any, Any] = {}
        self.unread: set[Any] = set()  # requests whose replies nobody reads: dropped
        # Set by the caller right before ``Transaction.commit()``; taken by the next transact.
        self.attach_ops: list[Mapping[str, Any]] | None = None
        self.attached: dict[Any, int] = {}  # IDL request id -> index of the first attached result
        self.attached_results: dict[Any, list[Any] | str] = {}
        self.last_attached_id: Any = None
        self.monitor_id: str | None = None  # our current monitor
        # Every monitor of ours on this connection (python-ovs' IDL would take any "update" as its
        # own, so they never reach it), and those whose updates are dropped (cancelled because
        # what they watched no longer matters).  A monitor replaced by a newer one keeps being
        # read until its cancel is processed, so no change falls between the two.
        self.monitor_ids: set[str] = set()
        self.dropped_ids: set[str] = set()
        self.updates: list[dict[str, Any]] = []  # table-updates of our monitor, oldest first
        # Messages read ahead of the IDL (:meth:`reply_ahead`), oldest first, and the session seqno
        # they came with (a reconnection drops them: they belonged to the old connection).
        self._ahead: deque[Any] = deque()
        self._ahead_seqno = -1

    def send(self, msg: Any) -> int:
        if msg.type != ovs.jsonrpc.Message.T_REQUEST or msg.method != "transact":
            return int(self._s.send(msg))
        _name_persisted_inserts(msg.params)
        if self.attach_ops is None:
            return send_bulk(self._s, msg)
        ops, self.attach_ops = self.attach_ops, None
        offset = len(msg.params) - 1  # results are per operation; params[0] is the db name
        msg = ovs.jsonrpc.Message(msg.type, "transact", [*msg.params, *ops], None, None, msg.id)
        err = send_bulk(self._s, msg)
        if not err:
            self.attached[msg.id] = offset
            self.last_attached_id = msg.id
        return err

    def reply_ahead(self, request_id: Any, limit: int = 64) -> Any:
        """The reply to ``request_id`` if it has arrived, read ahead of the IDL (:meth:`scan_ahead`).
        The server sends a transaction's updates before its reply, so the reply can be known
        committed before the IDL processes the echo.  None if not (yet) received."""
        return self.scan_ahead(lambda msg: is_reply_to(msg, request_id), limit)

    def scan_ahead(self, found: Callable[[Any], bool], limit: int = 64) -> Any:
        """The first message for which ``found`` holds, among those read ahead of the IDL: every
        message before it (up to ``limit`` of them) is parsed and kept, untouched, for
        :meth:`recv` to hand out in order.  None if none such has arrived (yet)."""
        for msg in self._ahead:
            if found(msg):
                return msg
        seqno = self._s.get_seqno()
        if self._ahead and seqno != self._ahead_seqno:
            self._ahead.clear()
        self._ahead_seqno = seqno
        while len(self._ahead) < limit:
            msg = self._s.recv()
            if msg is None or self._s.get_seqno() != seqno:
                return None
            self._ahead.append(msg)
            if found(msg):
                return msg
        return None

    def _next(self) -> Any:
        if self._ahead:
            if self._s.get_seqno() == self._ahead_seqno:
                return self._ahead.popleft()
            self._ahead.clear()
        return self._s.recv()

    def recv_wait(self, poller: Any) -> None:
        if self._ahead:
            poller.immediate_wake()  # (read already: the socket may stay quiet)
        else:
            self._s.recv_wait(poller)

    def recv(self) -> Any:
        while True:
            msg = self._next()
            if msg is None:
                return None
            if msg.type in (_T_REPLY, _T_ERROR):
                if msg.id in self.waiting:
                    self.waiting.discard(msg.id)
                    if msg.id in self.unread:
                        self.unread.discard(msg.id)
                    else:
                        self.replies[msg.id] = msg
                    continue
                off = self.attached.pop(msg.id, None)
                if off is not None:
                    if msg.type == _T_ERROR or not isinstance(msg.result, list):
                        self.attached_results[msg.id] = f"error: {msg.error}"
                    else:
                        self.attached_results[msg.id] = msg.result[off:]
            elif (msg.type == ovs.jsonrpc.Message.T_NOTIFY and msg.method == "update"
                  and isinstance(msg.params, list) and len(msg.params) == 2 and msg.params[0] in self.monitor_ids):
                if msg.params[0] not in self.dropped_ids:
                    self.updates.append(_compact(msg.params[1]))
                continue
            return msg

    def forget(self) -> None:
        """After a reconnection: requests in flight and our monitor are gone with the old connection."""
        self.waiting.clear()
        self.replies.clear()
        self.unread.clear()
        self.attach_ops = None
        self.attached.clear()
        self.attached_results.clear()
        self.monitor_id = None
        self.monitor_ids.clear()
        self.dropped_ids.clear()
        self.updates.clear()
        self._ahead.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s, name)


@dataclass(slots=True)
class RawRequest:
    id: str
    seqno: int  # session seqno at send time: a reconnect in between means it was lost
    nops: int


class RawSb:
    """Raw ``transact`` requests on the SB IDL's session."""

    def __init__(self, idl: Any, db_name: str, lock_name: str | None) -> None:
        self.idl = idl
        self.db_name = db_name
        self.lock_name = lock_name
        if not isinstance(idl._session, SessionTap):
            idl._session = SessionTap(idl._session)
        self.tap: SessionTap = idl._session

    def send(self, ops: Sequence[Mapping[str, Any]], with_lock: bool = True, method: str = "transact",
             params: list[Any] | None = None) -> RawRequest | None:
        """Send one transaction (or another request with ``params``); None if not connected."""
        if not self.tap.is_connected():
            return None
        head: list[Any] = [self.db_name]
        if with_lock and self.lock_name:
            head.append({"op": "assert", "lock": self.lock_name})
        rid = f"raw{next(_ids)}"
        body = params if params is not None else [*head, *ops]
        msg = ovs.jsonrpc.Message(ovs.jsonrpc.Message.T_REQUEST, method, body, None, None, rid)
        self.tap.waiting.add(rid)
        if send_bulk(self.tap._s, msg):
            self.tap.waiting.discard(rid)
            return None
        return RawRequest(rid, self.tap.get_seqno(), len(head) - 1 if params is None else 0)

    def flush(self, timeout: float) -> bool:
        """:func:`flush` of this session."""
        return flush(self.tap._s, timeout)

    def cancel_monitor(self, drop: bool = True) -> None:
        """Stop our monitor (if any).  ``drop``: its updates, and those already received, are
        dropped (else they keep coming until the server has processed the cancel)."""
        old, self.tap.monitor_id = self.tap.monitor_id, None
        if old is None:
            return
        if drop:
            self.tap.dropped_ids.add(old)
            self.tap.updates.clear()
        cancel = self.send([], method="monitor_cancel", params=[old])
        if cancel is not None:
            self.tap.unread.add(cancel.id)

    def monitor(self, requests: dict[str, Any], cancel_old: bool = False) -> RawRequest | None:
        """Start our own ``monitor`` (RFC 7047 v1 updates) on this connection; its updates collect
        in ``tap.updates``.  By default the previous monitor is dropped first (a ``select`` follows
        that reads everything again); ``cancel_old``: the previous one is cancelled after the new
        one is requested, so the two overlap instead of leaving a gap."""
        old = self.tap.monitor_id
        if not cancel_old:
            self.cancel_monitor()
        mon_id = f"northd-py-raw-{next(_ids)}"
        self.tap.monitor_ids.add(mon_id)
        req = self.send([], method="monitor", params=[self.db_name, mon_id, requests])
        if req is None:
            return None
        self.tap.unread.add(req.id)  # (initial contents: none are asked for)
        if not cancel_old:
            self.tap.updates.clear()
        self.tap.monitor_id = mon_id
        if cancel_old and old is not None:
            cancel = self.send([], method="monitor_cancel", params=[old])
            if cancel is not None:
                self.tap.unread.add(cancel.id)
        return req

    def poll(self, req: RawRequest) -> tuple[bool, Any]:
        """(done, result).  result is the list of op results, or an error string when failed."""
        msg = self.tap.replies.pop(req.id, None)
        if msg is None:
            if self.tap.get_seqno() != req.seqno:
                self.tap.waiting.discard(req.id)
                return True, "connection lost"
            return False, None
        if msg.type == ovs.jsonrpc.Message.T_ERROR:
            return True, f"error: {msg.error}"
        results = msg.result
        if not isinstance(results, list):
            return True, results  # (a monitor's initial contents)
        for r in results:
            if isinstance(r, dict) and "error" in r:
                return True, f"{r.get('error')}: {r.get('details', '')}"
        if len(results) < req.nops:
            return True, "short reply"
        return True, results[req.nops:]
