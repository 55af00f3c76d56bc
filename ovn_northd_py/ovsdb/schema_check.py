"""Check the server's schema version against the one we were built for.

A newer minor (or patch) version on the server is fine: OVSDB clients ignore
columns they do not know.  A different major version is a hard, clear error.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ovs.jsonrpc
import ovs.stream

from .aiopoll import AsyncPoller


class SchemaMismatch(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, s: str) -> SchemaVersion:
        parts = [int(p) for p in s.split(".")]
        while len(parts) < 3:
            parts.append(0)
        return cls(parts[0], parts[1], parts[2])

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def local_schema(path: Path) -> dict:
    with open(path) as f:
        return json.load(f)


def check_compatible(db: str, ours: str, theirs: str) -> None:
    """Raise SchemaMismatch unless the server's schema ``theirs`` can serve a client built for ``ours``."""
    a, b = SchemaVersion.parse(ours), SchemaVersion.parse(theirs)
    if a.major != b.major:
        raise SchemaMismatch(
            f"{db} schema version mismatch: ovn-northd-py is built for {db} {a} but the server has {b} "
            f"(different major version)"
        )
    if (b.minor, b.patch) < (a.minor, a.patch):
        raise SchemaMismatch(
            f"{db} schema version mismatch: ovn-northd-py needs {db} >= {a} but the server has {b}"
        )


async def fetch_server_schema(remote: str, db: str, timeout: float = 5.0) -> dict:
    """One ``get_schema`` call on a fresh connection to ``remote``: any python-ovs active stream
    (``unix:``, ``tcp:``, ``ssl:`` with the PKI of ``ovsdb.tls``), driven on the asyncio loop."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout

    async def wait(arm: Any) -> None:
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError(f"{remote}: no answer to get_schema within {timeout:g}s")
        p = AsyncPoller()
        arm(p)
        p.timer_wait(left * 1000)
        await p.block()

    err, stream = ovs.stream.Stream.open(remote)
    if err:
        if err == errno.EAFNOSUPPORT:
            raise ValueError(f"unsupported remote {remote!r}")
        raise OSError(err, f"{remote}: {os.strerror(err)}")
    try:
        while True:
            err = stream.connect()
            if err == 0:
                break
            if err != errno.EAGAIN:
                raise OSError(err, f"{remote}: {os.strerror(err)}")
            await wait(lambda p: (stream.run_wait(p), stream.connect_wait(p)))
        conn = ovs.jsonrpc.Connection(stream)
        stream = None  # owned by conn now
        try:
            conn.send(ovs.jsonrpc.Message.create_request("get_schema", [db]))
            while True:
                conn.run()
                err, msg = conn.recv()
                if msg is not None:
                    if msg.error:
                        raise SchemaMismatch(f"{remote} has no database {db}: {msg.error}")
                    return dict(msg.result)
                if err and err != errno.EAGAIN:
                    if err == ovs.jsonrpc.EOF:
                        raise ConnectionError(f"{remote} closed the connection during get_schema")
                    raise OSError(err, f"{remote}: {os.strerror(err)}")
                await wait(lambda p: (conn.wait(p), conn.recv_wait(p)))
        finally:
            conn.close()
    finally:
        if stream is not None:
            stream.close()
