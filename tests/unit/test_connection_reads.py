"""A connection reads its server in large chunks (python-ovs asks for 4 KiB at a time)."""

from __future__ import annotations

import json
import time
from typing import Any

from ovn_northd_py.ovsdb.connection import DbConnection


def _synced(conn: DbConnection) -> DbConnection:
    deadline = time.monotonic() + 30
    while not conn.synced:
        assert time.monotonic() < deadline, "no initial contents"
        conn.run()
        time.sleep(0.01)
    return conn


def test_a_large_row_arrives_whole_through_large_reads(env: Any) -> None:
    addrs = [f"10.{i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(6000)]  # ~100 KB of JSON
    env.nbctl("create", "Address_Set", "name=big", f"addresses={json.dumps(addrs)}")
    tables: dict[str, Any] = {"Address_Set": None}
    conn = _synced(DbConnection("nb", env.nb.remote, env.release.nb_schema, tables))
    try:
        stream = conn.idl._session.rpc.stream
        assert stream._npy_large_reads  # (each read asks the socket for RECV_CHUNK bytes)
        (row,) = conn.rows("Address_Set").values()
        assert sorted(row.addresses) == sorted(addrs)
    finally:
        conn.close()
