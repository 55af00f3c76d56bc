"""fastrpc: python-ovs' ``jsonrpc.Connection.recv`` without a decoder per call and without the
UTF-8 round trip of the input after each message, on a real socket pair."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator

import ovs.jsonrpc
import pytest

from ovn_northd_py.ovsdb import connection  # noqa: F401  (installs fastrpc)
from ovn_northd_py.ovsdb.fastrpc import _fast_recv


class _Stream:
    """The part of an ovs.stream.Stream that Connection.recv uses, over one end of a socket pair."""

    name = "unix:test"

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def recv(self, n: int) -> tuple[int, bytes | None]:
        try:
            return 0, self.sock.recv(n)
        except BlockingIOError:
            return errno.EAGAIN, None

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def pair() -> Iterator[tuple[ovs.jsonrpc.Connection, socket.socket]]:
    a, b = socket.socketpair()
    a.setblocking(False)
    try:
        yield ovs.jsonrpc.Connection(_Stream(a)), b
    finally:
        a.close()
        b.close()


def _drain(conn: ovs.jsonrpc.Connection) -> tuple[list[ovs.jsonrpc.Message], int]:
    out = []
    while True:
        error, msg = conn.recv()
        if msg is None:
            return out, error
        out.append(msg)


def test_it_is_what_connection_recv_runs() -> None:
    assert ovs.jsonrpc.Connection.recv is _fast_recv


def test_back_to_back_messages_come_out_one_by_one_then_eagain(pair) -> None:
    conn, peer = pair
    peer.send(b'{"id":1,"method":"echo","params":[]}{"id":null,"method":"update3","params":["m","l",{}]}'
              b'{"id":7,"result":[{"count":1}],"error":null}')
    msgs, error = _drain(conn)
    assert [(m.type, m.id) for m in msgs] == [(ovs.jsonrpc.Message.T_REQUEST, 1),
                                              (ovs.jsonrpc.Message.T_NOTIFY, None),
                                              (ovs.jsonrpc.Message.T_REPLY, 7)]
    assert error == errno.EAGAIN


def test_a_message_split_between_reads_waits_for_its_end(pair) -> None:
    conn, peer = pair
    text = b'{"id":3,"result":["a"],"error":null}'
    peer.send(text[:10])
    assert _drain(conn) == ([], errno.EAGAIN)
    peer.send(text[10:])
    msgs, _ = _drain(conn)
    assert [m.result for m in msgs] == [["a"]]


def test_a_character_split_between_two_calls_is_read_whole(pair) -> None:
    conn, peer = pair
    blob = '{"id":4,"result":["é漢字"],"error":null}{"id":5,"result":[],"error":null}'.encode()
    cut = blob.index("漢".encode()) + 1  # (inside the character's three bytes)
    peer.send(blob[:cut])
    assert _drain(conn) == ([], errno.EAGAIN)
    peer.send(blob[cut:])
    msgs, _ = _drain(conn)
    assert [m.result for m in msgs] == [["é漢字"], []]


def test_end_of_stream_after_a_message_is_eof(pair) -> None:
    conn, peer = pair
    peer.send(b'{"id":6,"result":[],"error":null}')
    peer.close()
    msgs, error = _drain(conn)
    assert [m.id for m in msgs] == [6] and error == ovs.jsonrpc.EOF
    assert conn.recv() == (ovs.jsonrpc.EOF, None)


def test_a_message_that_is_not_json_rpc_is_a_protocol_error(pair) -> None:
    conn, peer = pair
    peer.send(b'{"no":"method"}')
    assert _drain(conn) == ([], errno.EPROTO)
    assert conn.get_status() == errno.EPROTO


def test_malformed_json_is_a_protocol_error(pair) -> None:
    conn, peer = pair
    peer.send(b'{"id":8,"result":]')
    assert _drain(conn) == ([], errno.EPROTO)
