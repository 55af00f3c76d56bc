"""Thresholds and batches of MAC binding / FDB aging (sync/aging.py), from ovn-nb(5)."""

from __future__ import annotations

from ovn_northd_py.sync.aging import Aging, Candidate, expire, parse_thresholds


def test_23_03_threshold_is_one_integer():
    t = parse_thresholds("300", cidrs=False)
    assert t is not None and t.for_ip("10.0.0.1") == 300
    assert parse_thresholds("0", cidrs=False) is None
    assert parse_thresholds("", cidrs=False) is None
    assert parse_thresholds("10.0.0.0/8:300", cidrs=False) is None
    assert parse_thresholds("4294967296", cidrs=False) is None


def test_25_03_longest_prefix_wins_and_default_applies_elsewhere():
    t = parse_thresholds("192.168.0.0/16:300;192.168.10.0/24:0;fe80::/10:600;1200", cidrs=True)
    assert t is not None
    assert t.for_ip("192.168.1.1") == 300
    assert t.for_ip("192.168.10.5") == 0
    assert t.for_ip("fe80::5") == 600
    assert t.for_ip("10.1.1.1") == 1200


def test_25_03_without_default_unmatched_ips_never_age():
    t = parse_thresholds("10.0.0.0/8:30", cidrs=True)
    assert t is not None and t.for_ip("11.0.0.1") is None and t.for_ip("10.2.3.4") == 30


def test_25_03_malformed_value_disables_aging():
    for bad in ("10.0.0.0/33:30", "x:30", "10.0.0.0/8:abc", "30;", "10.0.0.0/8:-1"):
        assert parse_thresholds(bad, cidrs=True) is None, bad


def test_expire_returns_aged_rows_and_next_due():
    cands = [Candidate("MAC_Binding", i, ts, 10_000) for i, ts in enumerate((0, 5_000, 8_000))]
    gone, nxt, cut = expire(cands, now_ms=12_000, limit=0)
    assert [c.uuid for c in gone] == [0] and nxt == 15_000 and not cut


def test_expire_limit_takes_oldest_first_and_waits_5_s():
    cands = [Candidate("FDB", i, ts, 1_000) for i, ts in enumerate((300, 100, 200))]
    gone, nxt, cut = expire(cands, now_ms=10_000, limit=2)
    assert [c.uuid for c in gone] == [1, 2] and nxt == 15_000 and cut


def test_aging_rescans_at_most_once_a_second_after_changes():
    a = Aging()
    a.last_scan, a.dirty, a.next_due = 1_000.0, True, None
    assert not a.due(1_500.0) and a.wake_at(1_500.0) == 2_000.0
    assert a.due(2_000.0)


def test_only_changes_to_what_a_scan_reads_call_for_a_rescan() -> None:
    from ovn_northd_py.ovsdb.connection import RowChange
    from ovn_northd_py.sync.aging import inputs_changed

    pod = [RowChange("create", "Logical_Switch_Port", "u1", frozenset()),
           RowChange("update", "Logical_Switch", "u2", frozenset({"ports"})),
           RowChange("update", "Address_Set", "u3", frozenset({"addresses"}))]
    assert not inputs_changed(pod)
    assert inputs_changed([*pod, RowChange("update", "Logical_Router", "u4", frozenset({"options"}))])
    assert inputs_changed([*pod, RowChange("delete", "Logical_Switch", "u2", frozenset())])
    assert inputs_changed([*pod, RowChange("update", "MAC_Binding", "u5", frozenset({"timestamp"}))])
    assert not inputs_changed([RowChange("update", "FDB", "u6", frozenset({"mac"})), *pod], start=1)
