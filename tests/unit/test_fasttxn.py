"""The cheaper uuid substitution of a transaction's JSON gives what python-ovs's own walk gives."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from ovn_northd_py.ovsdb import fasttxn

NEW = uuid.UUID(int=7)
OLD = uuid.UUID(int=8)


def _txn() -> SimpleNamespace:
    t = SimpleNamespace(_txn_rows={NEW: SimpleNamespace(_data=None), OLD: SimpleNamespace(_data={})})
    t._substitute_uuids = lambda j: fasttxn._fast_substitute_uuids(t, j)
    return t


def test_sets_and_maps_of_strings_are_returned_as_they_are() -> None:
    t = _txn()
    big = ["set", [f"10.0.{i // 256}.{i % 256}" for i in range(1000)]]
    assert fasttxn._fast_substitute_uuids(t, big) is big
    m = ["map", [["a", "b"], ["c", "d"]]]
    assert fasttxn._fast_substitute_uuids(t, m) is m


def test_references_to_rows_inserted_in_the_transaction_become_named_uuids() -> None:
    t = _txn()
    got = fasttxn._fast_substitute_uuids(t, ["set", [["uuid", str(NEW)], ["uuid", str(OLD)]]])
    assert got[1][0][0] == "named-uuid" and got[1][1] == ["uuid", str(OLD)]
    got = fasttxn._fast_substitute_uuids(t, ["map", [["k", ["uuid", str(NEW)]]]])
    assert got[1][0][1][0] == "named-uuid"
    assert fasttxn._fast_substitute_uuids(t, ["uuid", str(NEW)])[0] == "named-uuid"


def test_the_walk_gives_python_ovs_result_for_any_json() -> None:
    t = _txn()
    orig_txn = SimpleNamespace(_txn_rows=t._txn_rows)
    orig_txn._substitute_uuids = lambda j: fasttxn._ORIG(orig_txn, j)
    new, old = ["uuid", str(NEW)], ["uuid", str(OLD)]
    cases = [
        ["set", [new, old, ["uuid", "not-a-uuid"]]],
        ["map", [["k", new], ["uuid", str(NEW)], [new, old]]],  # (a pair that looks like a reference)
        ["map", [[new, "x"], ["y", new]]],
        [1, "a", [new, [old, [new]]], ("t", new)],
        new, old, "s", 3, ["uuid", "x"], ["uuid", str(NEW), "extra"], [],
    ]
    for j in cases:
        assert fasttxn._fast_substitute_uuids(t, j) == fasttxn._ORIG(orig_txn, j), j
