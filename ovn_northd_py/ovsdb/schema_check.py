"""Check the server's schema version against the one we were built for.

A newer minor (or patch) version on the server is fine: OVSDB clients ignore
columns they do not know.  A different major version is a hard, clear error.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path


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
    """One ``get_schema`` call on a fresh connection to ``remote`` (unix:PATH or tcp:HOST:PORT)."""
    kind, _, addr = remote.partition(":")
    if kind == "unix":
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(addr), timeout)
    elif kind == "tcp":
        host, _, port = addr.rpartition(":")
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host.strip("[]"), int(port)), timeout)
    else:
        raise ValueError(f"schema check not supported for remote {remote!r}")
    try:
        writer.write(json.dumps({"method": "get_schema", "params": [db], "id": 0}).encode())
        await writer.drain()
        dec = json.JSONDecoder()
        buf = ""
        while True:
            chunk = await asyncio.wait_for(reader.read(65536), timeout)
            if not chunk:
                raise ConnectionError(f"{remote} closed the connection during get_schema")
            buf += chunk.decode()
            try:
                msg, _ = dec.raw_decode(buf.lstrip())
            except json.JSONDecodeError:
                continue
            if msg.get("error"):
                raise SchemaMismatch(f"{remote} has no database {db}: {msg['error']}")
            return msg["result"]
    finally:
        writer.close()
