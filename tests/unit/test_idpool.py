"""Tunnel-key ID pools and the reserved multicast keys."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovn_northd_py.northd import mcast_keys
from ovn_northd_py.northd.idpool import (
    DP_KEY_MAX_DEFAULT,
    DP_KEY_MAX_VXLAN,
    PORT_KEY_MAX,
    PORT_KEY_MAX_VXLAN,
    IdPool,
    IdPoolExhausted,
    datapath_key_pool,
    ip_mcast_key_pool,
    port_key_pool,
)


def test_fresh_pool_allocates_in_order() -> None:
    pool = IdPool(1, 100, "t")
    assert [pool.allocate() for _ in range(5)] == [1, 2, 3, 4, 5]
    assert len(pool) == 5
    assert 3 in pool and 6 not in pool


def test_exhaustion_raises_clear_error() -> None:
    pool = IdPool(1, 3, "port (ls1)")
    for _ in range(3):
        pool.allocate()
    with pytest.raises(IdPoolExhausted) as exc:
        pool.allocate()
    msg = str(exc.value)
    assert "port (ls1)" in msg and "1..3" in msg
    assert exc.value.min_id == 1 and exc.value.max_id == 3


def test_reserve_conflict_and_out_of_range() -> None:
    pool = IdPool(1, 10, "t")
    assert pool.reserve(5) is True
    assert pool.reserve(5) is False
    assert pool.reserve(0) is False
    assert pool.reserve(11) is False
    assert pool.reserve(-1) is False
    assert len(pool) == 1


def test_allocation_skips_reserved() -> None:
    pool = IdPool(1, 10, "t")
    for k in (1, 2, 4):
        pool.reserve(k)
    assert [pool.allocate() for _ in range(3)] == [3, 5, 6]


def test_reserve_does_not_move_hint_by_default() -> None:
    # Datapath keys in the reference: a freed low key is reused first.
    pool = IdPool(1, 5000, "datapath")
    for k in (1, 2, 4, 4095):
        pool.reserve(k)
    assert pool.allocate() == 3
    assert pool.allocate() == 5


def test_bump_hint_follows_max_reserved_key() -> None:
    # Port keys in the reference: the search starts after the largest key in use.
    pool = IdPool(1, PORT_KEY_MAX, "port")
    for k in (4, 1, 3):
        pool.reserve(k, bump_hint=True)
    assert pool.allocate() == 5
    pool2 = IdPool(1, PORT_KEY_MAX, "port")
    for k in (1, 3, 4, 32767):
        pool2.reserve(k, bump_hint=True)
    assert pool2.allocate() == 2  # wraps past the maximum


def test_hint_wraps_and_reuses_freed_keys() -> None:
    pool = IdPool(1, 5, "t")
    assert [pool.allocate() for _ in range(5)] == [1, 2, 3, 4, 5]
    assert pool.free(2) is True
    assert pool.free(2) is False
    assert pool.allocate() == 2
    pool.free(4)
    pool.free(1)
    assert pool.allocate() == 4  # next after the hint (2), not the lowest
    assert pool.allocate() == 1


def test_free_unknown_or_out_of_range() -> None:
    pool = IdPool(10, 20, "t")
    assert pool.free(15) is False
    assert pool.free(99) is False
    assert 99 not in pool
    assert "x" not in pool


def test_explicit_hint_and_out_of_range_hint() -> None:
    pool = IdPool(1, 10, "t", hint=7)
    assert pool.allocate() == 8
    pool = IdPool(1, 10, "t", hint=1000)
    assert pool.allocate() == 1


def test_empty_range_rejected() -> None:
    with pytest.raises(ValueError, match="empty range"):
        IdPool(5, 4, "t")


def test_full_port_range_is_fast() -> None:
    pool = port_key_pool("ls1")
    start = time.perf_counter()
    keys = [pool.allocate() for _ in range(PORT_KEY_MAX)]
    elapsed = time.perf_counter() - start
    assert keys == list(range(1, PORT_KEY_MAX + 1))
    assert pool.is_full()
    with pytest.raises(IdPoolExhausted):
        pool.allocate()
    assert elapsed < 1.0


def test_refill_after_wrap_is_fast() -> None:
    # Dense pool with scattered holes: each allocation must not be a Python scan.
    pool = IdPool(1, PORT_KEY_MAX, "t")
    for _ in range(PORT_KEY_MAX):
        pool.allocate()
    for k in range(1, PORT_KEY_MAX + 1, 7):
        pool.free(k)
    start = time.perf_counter()
    got = [pool.allocate() for _ in range(len(range(1, PORT_KEY_MAX + 1, 7)))]
    assert got == list(range(1, PORT_KEY_MAX + 1, 7))
    assert time.perf_counter() - start < 1.0


def test_large_datapath_range_lazy() -> None:
    pool = datapath_key_pool()
    assert pool.max_id == DP_KEY_MAX_DEFAULT == 16711680
    assert pool.reserve(DP_KEY_MAX_DEFAULT)
    assert pool.allocate() == 1
    assert datapath_key_pool(DP_KEY_MAX_VXLAN).max_id == 4095


def test_factories() -> None:
    assert port_key_pool("ls", vxlan=True).max_id == PORT_KEY_MAX_VXLAN == 2047
    mc = ip_mcast_key_pool("ls")
    assert mc.allocate() == mcast_keys.IP_MCAST_FIRST_KEY == 32774
    assert mc.allocate() == 32775


def test_reserved_multicast_keys() -> None:
    assert dict(mcast_keys.RESERVED_MULTICAST_GROUPS) == {
        "_MC_flood": 32768,
        "_MC_unknown": 32769,
        "_MC_mrouter_flood": 32770,
        "_MC_static": 32771,
        "_MC_flood_l2": 32772,
    }
    assert mcast_keys.reserved_key("_MC_flood_l2") == 32772
    assert mcast_keys.reserved_key("239.1.1.1") is None
    assert mcast_keys.is_reserved_key(32772) and not mcast_keys.is_reserved_key(32773)


def _model_allocate(used: set[int], lo: int, hi: int, hint: int) -> int:
    order = list(range(hint + 1, hi + 1)) + list(range(lo, min(hint, hi) + 1))
    return next(k for k in order if k not in used)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=40),
    st.lists(
        st.tuples(
            st.sampled_from(["alloc", "free", "reserve", "bump"]), st.integers(min_value=-2, max_value=45)
        )
    ),
)
def test_matches_reference_model(size: int, ops: list[tuple[str, int]]) -> None:
    lo, hi = 1, size
    pool = IdPool(lo, hi, "m")
    used: set[int] = set()
    hint = lo - 1
    for op, arg in ops:
        if op == "alloc":
            if len(used) == size:
                with pytest.raises(IdPoolExhausted):
                    pool.allocate()
                continue
            expect = _model_allocate(used, lo, hi, hint)
            assert pool.allocate() == expect
            used.add(expect)
            hint = expect
        elif op == "free":
            assert pool.free(arg) == (arg in used)
            used.discard(arg)
        else:
            ok = lo <= arg <= hi and arg not in used
            assert pool.reserve(arg, bump_hint=op == "bump") == ok
            if ok:
                used.add(arg)
                if op == "bump":
                    hint = max(hint, arg)
        assert len(pool) == len(used)
        assert all((k in pool) == (k in used) for k in range(lo - 1, hi + 2))
