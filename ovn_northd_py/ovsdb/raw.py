"""A lean bulk path on the IDL's own SB connection (and so under its lock).

Logical flows are the bulk of SB.  Letting the python-ovs IDL track them costs
about 90 us and 6 KB per row, mostly spent re-processing the server's echo of
our own inserts.  Instead, the tables we alone write in bulk (Logical_Flow,
Logical_DP_Group, Load_Balancer) are not monitored at all: we read them once
with a ``select`` (after each (re)connection), keep our own compact cache, and
write them with raw ``transact`` requests sent on the IDL's JSON-RPC session.
Every write transaction starts with an ``assert`` of the ``ovn_northd`` lock,
so it fails rather than writes when another northd holds the lock.

``SessionTap`` sits between the IDL and its session and takes out the replies
to our own requests before the IDL sees them.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
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


class SessionTap:
    """Wraps an ``ovs.jsonrpc.Session``; replies to our requests are kept, everything else passes."""

    def __init__(self, session: Any) -> None:
        self._s = session
        self.waiting: set[Any] = set()
        self.replies: dict[Any, Any] = {}

    def recv(self) -> Any:
        while True:
            msg = self._s.recv()
            if msg is None:
                return None
            if msg.id in self.waiting and msg.type in (ovs.jsonrpc.Message.T_REPLY, ovs.jsonrpc.Message.T_ERROR):
                self.waiting.discard(msg.id)
                self.replies[msg.id] = msg
                continue
            return msg

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

    def send(self, ops: list[dict[str, Any]], with_lock: bool = True) -> RawRequest | None:
        """Send one transaction; None if not connected."""
        if not self.tap.is_connected():
            return None
        head: list[Any] = [self.db_name]
        if with_lock and self.lock_name:
            head.append({"op": "assert", "lock": self.lock_name})
        rid = f"raw{next(_ids)}"
        rpc = getattr(self.tap._s, "rpc", None)
        if rpc is None or rpc.status:
            return None
        msg = ovs.jsonrpc.Message(ovs.jsonrpc.Message.T_REQUEST, "transact", head + ops, None, None, rid)
        # Serialise once with the C encoder (no key sorting) and queue the bytes.
        data = json.dumps(msg.to_json(), separators=(",", ":")).encode("utf-8")
        out = _bulk_output(rpc)
        was_empty = len(out) == 0
        out += data
        self.tap.waiting.add(rid)
        if was_empty:
            rpc.run()
        if rpc.status:
            self.tap.waiting.discard(rid)
            return None
        return RawRequest(rid, self.tap.get_seqno(), len(head) - 1)

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
        for r in results:
            if isinstance(r, dict) and "error" in r:
                return True, f"{r.get('error')}: {r.get('details', '')}"
        if len(results) < req.nops:
            return True, "short reply"
        return True, results[req.nops:]
