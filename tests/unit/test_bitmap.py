"""Packed datapath bitmaps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovn_northd_py.lflow.bitmap import (
    BitmapPool,
    dedup_rows,
    key_bytes,
    nbytes_for,
    pack,
    popcount,
    row_popcounts,
    unpack,
)


def test_nbytes_rounds_up_to_whole_64_bit_words() -> None:
    assert [nbytes_for(n) for n in (0, 1, 64, 65, 1000)] == [0, 8, 8, 16, 128]


def test_pack_uses_little_bit_order() -> None:
    assert pack([0, 9], 16).tolist()[:2] == [0b00000001, 0b00000010]


@given(st.sets(st.integers(0, 199)))
def test_unpack_inverts_pack(bits: set[int]) -> None:
    assert unpack(pack(bits, 200)).tolist() == sorted(bits)


def test_pack_rejects_out_of_range_bits() -> None:
    with pytest.raises(IndexError):
        pack([10], 10)


def test_popcount_counts_set_bits() -> None:
    assert popcount(pack([1, 2, 3, 70], 100)) == 4


def test_row_popcounts_counts_per_row() -> None:
    m = np.stack([pack([1], 16), pack([], 16), pack([0, 15], 16)])
    assert row_popcounts(m).tolist() == [1, 0, 2]


def test_key_bytes_does_not_depend_on_capacity() -> None:
    assert key_bytes(pack([3, 12], 16)) == key_bytes(pack([3, 12], 1000))


def test_dedup_rows_merges_identical_rows() -> None:
    m = np.stack([pack([1, 2], 64), pack([5], 64), pack([1, 2], 64)])
    unique, inverse = dedup_rows(m)
    assert unique.shape[0] == 2
    assert inverse[0] == inverse[2] != inverse[1]


def test_dedup_rows_maps_each_row_to_its_own_bits() -> None:
    m = np.stack([pack(s, 40) for s in ([1, 2], [3], [1, 2], [39], [3])])
    unique, inverse = dedup_rows(m)
    assert all((unique[g] == m[i]).all() for i, g in enumerate(inverse))


def test_dedup_rows_handles_rows_not_a_multiple_of_eight_bytes() -> None:
    m = np.array([[1, 2, 3], [1, 2, 3], [1, 2, 4]], dtype=np.uint8)
    unique, inverse = dedup_rows(m)
    assert unique.shape == (2, 3) and inverse[0] == inverse[1] != inverse[2]


def test_dedup_rows_can_select_rows_of_a_larger_matrix() -> None:
    m = np.stack([pack(s, 64) for s in ([1], [2], [1], [3])])
    unique, inverse = dedup_rows(m, [0, 2, 3])
    assert unique.shape[0] == 2 and inverse[0] == inverse[1] != inverse[2]


def test_dedup_rows_survives_a_hash_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    from ovn_northd_py.lflow import bitmap

    monkeypatch.setattr(bitmap, "_row_hashes", lambda words, sel: np.zeros(sel.size, dtype=np.uint64))
    m = np.stack([pack(s, 64) for s in ([1], [2], [1])])
    unique, inverse = dedup_rows(m)
    assert unique.shape[0] == 2 and inverse[0] == inverse[2] != inverse[1]


@given(st.lists(st.sets(st.integers(0, 130), max_size=5), max_size=30))
def test_dedup_rows_groups_exactly_the_equal_rows(sets: list[set[int]]) -> None:
    m = np.stack([pack(s, 131) for s in sets]) if sets else np.zeros((0, 24), dtype=np.uint8)
    unique, inverse = dedup_rows(m)
    assert unique.shape[0] == len({frozenset(s) for s in sets})
    assert all((unique[g] == m[i]).all() for i, g in enumerate(inverse))


def test_pool_dedup_groups_allocated_rows() -> None:
    pool = BitmapPool(100)
    rows = [pool.alloc() for _ in range(3)]
    for r, bit in zip(rows, (5, 99, 5), strict=True):
        pool.set(r, bit)
    unique, inverse = pool.dedup(rows)
    assert unique.shape[0] == 2 and inverse[0] == inverse[2] != inverse[1]


def test_dedup_rows_of_empty_matrix_is_empty() -> None:
    unique, inverse = dedup_rows(np.zeros((0, 4), dtype=np.uint8))
    assert unique.shape == (0, 4) and inverse.size == 0


def test_pool_set_reports_whether_bit_was_clear() -> None:
    pool = BitmapPool(16)
    row = pool.alloc()
    assert pool.set(row, 3) is True
    assert pool.set(row, 3) is False


def test_pool_clear_reports_whether_bit_was_set() -> None:
    pool = BitmapPool(16)
    row = pool.alloc()
    pool.set(row, 3)
    assert pool.clear(row, 3) is True
    assert pool.clear(row, 3) is False


def test_pool_rows_are_independent() -> None:
    pool = BitmapPool(16)
    a, b = pool.alloc(), pool.alloc()
    pool.set(a, 1)
    assert pool.members(b).tolist() == []


def test_pool_grows_rows_beyond_initial_allocation() -> None:
    pool = BitmapPool(8, rows=1)
    rows = [pool.alloc() for _ in range(100)]
    for r in rows:
        pool.set(r, r % 8)
    assert [pool.members(r).tolist() for r in rows] == [[r % 8] for r in rows]


def test_pool_grow_capacity_keeps_existing_bits() -> None:
    pool = BitmapPool(8)
    row = pool.alloc()
    pool.set(row, 7)
    pool.grow(1000)
    pool.set(row, 999)
    assert pool.members(row).tolist() == [7, 999]


def test_pool_rejects_bits_beyond_capacity() -> None:
    pool = BitmapPool(10)
    row = pool.alloc()
    with pytest.raises(IndexError):
        pool.set(row, 10)


def test_pool_released_row_comes_back_zeroed() -> None:
    pool = BitmapPool(16)
    row = pool.alloc()
    pool.set(row, 5)
    pool.release(row)
    again = pool.alloc()
    assert again == row and pool.count(again) == 0


def test_pool_first_returns_lowest_set_bit() -> None:
    pool = BitmapPool(64)
    row = pool.alloc()
    pool.set(row, 42)
    pool.set(row, 17)
    assert pool.first(row) == 17


def test_pool_first_of_empty_row_is_minus_one() -> None:
    pool = BitmapPool(64)
    assert pool.first(pool.alloc()) == -1


def test_pool_or_packed_counts_new_bits_and_lists_already_set_ones() -> None:
    pool = BitmapPool(32)
    row = pool.alloc()
    pool.set(row, 4)
    added, already = pool.or_packed(row, pack([2, 4, 9, 9], 32))
    assert (added, already.tolist()) == (2, [4])
    assert pool.members(row).tolist() == [2, 4, 9]


def test_pool_or_packed_rejects_a_row_of_the_wrong_width() -> None:
    pool = BitmapPool(32)
    with pytest.raises(ValueError):
        pool.or_packed(pool.alloc(), pack([1], 128))


def test_pool_take_stacks_rows() -> None:
    pool = BitmapPool(16)
    a, b = pool.alloc(), pool.alloc()
    pool.set(a, 0)
    pool.set(b, 15)
    assert pool.take([b, a])[:, :2].tolist() == [[0, 0x80], [1, 0]]
