"""A raw transaction of thousands of operations, encoded and sent a slice at a time, arrives whole."""

from __future__ import annotations

import time
from typing import Any

from ovn_northd_py.ovsdb.connection import DbConnection
from ovn_northd_py.ovsdb.raw import RawSb, _compact


def test_a_transaction_of_many_operations_is_sent_whole(env: Any) -> None:
    conn = DbConnection("sb", env.sb.remote, env.release.sb_schema, {"SB_Global": None})
    try:
        deadline = time.monotonic() + 30
        while not conn.synced:
            assert time.monotonic() < deadline
            conn.run()
            time.sleep(0.01)
        raw = RawSb(conn.idl, "OVN_Southbound", None)
        ops = [{"op": "insert", "table": "Address_Set", "row": {"name": f"as{i}", "addresses": ["set", [f"10.0.{i // 256}.{i % 256}"]]}}
               for i in range(4500)]  # (three slices and a bit)
        req = raw.send(ops)
        assert req is not None
        while True:
            assert time.monotonic() < deadline
            conn.run()
            done, result = raw.poll(req)
            if done:
                break
            time.sleep(0.01)
        assert isinstance(result, list) and len(result) == 4500
        rows = env.sb_rows("Address_Set")
        assert sorted(r["name"] for r in rows) == sorted(f"as{i}" for i in range(4500))
    finally:
        conn.close()


def test_column_less_inserts_and_deletes_of_a_monitor_update_are_shared_objects() -> None:
    update = {"Logical_Flow": {"u1": {"new": {}}, "u2": {"old": {}}, "u3": {"old": {"match": "a"}, "new": {"match": "b"}}},
              "Logical_DP_Group": {"g1": {"new": {}}}}
    out = _compact(update)
    assert out == {"Logical_Flow": {"u1": {"new": {}}, "u2": {"old": {}}, "u3": {"old": {"match": "a"}, "new": {"match": "b"}}},
                   "Logical_DP_Group": {"g1": {"new": {}}}}
    assert out["Logical_Flow"]["u1"] is out["Logical_DP_Group"]["g1"]
    assert out["Logical_Flow"]["u3"]["new"] == {"match": "b"}
