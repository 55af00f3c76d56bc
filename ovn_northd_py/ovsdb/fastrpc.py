"""A cheaper python-ovs ``jsonrpc.Connection.recv``: every message the daemon reads (an NB change,
SB's echo of our write) goes through it, on the path from a change to ``--wait=sb`` returning.

python-ovs builds a new incremental UTF-8 decoder on every call, and after each message its C JSON
parser consumed, it encodes the whole input buffer back to UTF-8 to cut the consumed bytes off and
decodes the rest again.  Here the decoder lives as long as the connection (a character split
between two reads is decoded whole, where python-ovs' per-call decoder lost its first bytes when
the split fell between two calls), and input that is all ASCII, as the servers' JSON almost
always is, is cut where the parser stopped without the round trip (the parser counts bytes;
for ASCII text they are characters).  Errors, end of stream, the Python parser's path and the
message handling itself (``__process_msg``: parse errors, bad messages, debug logging) are
python-ovs' own.
"""

from __future__ import annotations

import codecs
import errno
import os
import sys
from typing import Any

import ovs.json
import ovs.jsonrpc
import ovs.vlog

_Connection = ovs.jsonrpc.Connection
_ORIG_RECV = _Connection.recv
_DECODER = "_npy_decoder"
_state = {"installed": False}
vlog = ovs.vlog.Vlog("jsonrpc")


def _decoder(conn: Any) -> Any:
    d = conn.__dict__.get(_DECODER)
    if d is None:
        d = conn.__dict__[_DECODER] = codecs.getincrementaldecoder("utf-8")()
    return d


def _fast_recv(self: Any) -> tuple[int, Any]:
    if self.status:
        return self.status, None
    if ovs.json.PARSER != ovs.json.PARSER_C or sys.platform == "win32":
        return _ORIG_RECV(self)  # type: ignore[no-any-return]
    while True:
        if not self.input:
            error, data = self.stream.recv(4096)
            if not error and data:
                try:
                    text = _decoder(self).decode(data)
                except UnicodeError:
                    error = errno.EILSEQ
            if error:
                if error == errno.EAGAIN:
                    return error, None
                vlog.warn(f"{self.name}: receive error: {os.strerror(error)}")
                self.error(error)
                return self.status, None
            if not data:
                self.error(ovs.jsonrpc.EOF)
                return ovs.jsonrpc.EOF, None
            self.input = text  # (empty: the first bytes of a character, the rest comes next read)
            self.received_bytes += len(text)
            continue
        if self.parser is None:
            self.parser = ovs.json.Parser()
        inp = self.input
        n = self.parser.feed(inp)
        self.input = inp[n:] if inp.isascii() else inp.encode("utf-8")[n:].decode("utf-8")
        if self.parser.is_done():
            msg = self._Connection__process_msg()
            if msg:
                return 0, msg
            return self.status, None


def install() -> None:
    """Patch ``ovs.jsonrpc.Connection`` (idempotent)."""
    if not _state["installed"]:
        _Connection.recv = _fast_recv
        _state["installed"] = True
