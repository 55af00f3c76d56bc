"""Datapath bitmaps: packed numpy bit rows and vectorised deduplication.

A bitmap over ``capacity`` datapaths is a row of uint8 bytes, bit ``i`` at byte
``i >> 3``, mask ``1 << (i & 7)`` (numpy's ``bitorder="little"``).  Rows are padded
to whole 64-bit words so a matrix of rows can be viewed as uint64 for hashing.
Rows live in a :class:`BitmapPool`, one shared growable 2-D array, so a flow that
needs a bitmap costs one row index plus ``capacity / 8`` bytes, and a whole set of
rows can be gathered into one matrix and deduplicated with ``np.unique``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, cast

import numpy as np
import numpy.typing as npt

BITORDER: Literal["little"] = "little"

U8Array = npt.NDArray[np.uint8]
IntArray = npt.NDArray[np.int64]

_POPCOUNT: U8Array = np.array([i.bit_count() for i in range(256)], dtype=np.uint8)
_POPCOUNT.flags.writeable = False  # a constant table


def nbytes_for(capacity: int) -> int:
    """Bytes in a packed row of ``capacity`` bits: whole 64-bit words."""
    return ((capacity + 63) >> 6) << 3


def pack(indices: Iterable[int] | IntArray, capacity: int) -> U8Array:
    """A packed row with the bits of ``indices`` set (duplicates are harmless)."""
    idx = np.asarray(indices if isinstance(indices, np.ndarray) else list(indices), dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= capacity):
        raise IndexError(f"bit index out of range 0..{capacity - 1}")
    return pack_unchecked(idx, capacity)


def pack_unchecked(idx: IntArray, capacity: int) -> U8Array:
    """:func:`pack` for indices already known to be within ``0..capacity-1``."""
    bools = np.zeros(nbytes_for(capacity) * 8, dtype=bool)
    bools[idx] = True
    return np.packbits(bools, bitorder=BITORDER)


def unpack(packed: U8Array) -> IntArray:
    """The indices of the set bits of one packed row, ascending."""
    return np.flatnonzero(np.unpackbits(packed, bitorder=BITORDER)).astype(np.int64)


def popcount(packed: U8Array) -> int:
    """Number of set bits in a packed row (or in all rows of a matrix)."""
    return int.from_bytes(np.ascontiguousarray(packed).tobytes(), "little").bit_count()


def row_popcounts(matrix: U8Array) -> IntArray:
    """Set bits per row of a packed matrix."""
    return cast(IntArray, _POPCOUNT[matrix].sum(axis=1, dtype=np.int64))


def key_bytes(packed: U8Array) -> bytes:
    """A capacity-independent identity for a bitmap: its bytes without trailing zeros."""
    return packed.tobytes().rstrip(b"\0")


_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
_HASH_SEED = np.uint64(0xCBF29CE484222325)
_VERIFY_CHUNK = 8192


def _row_hashes(words: npt.NDArray[np.uint64], sel: IntArray) -> npt.NDArray[np.uint64]:
    """A 64-bit hash per selected row, one vectorised pass per word column."""
    h = np.full(sel.size, _HASH_SEED, dtype=np.uint64)
    shift = np.uint64(31)
    for j in range(words.shape[1]):
        h ^= words[sel, j]
        h *= _HASH_MUL  # wraps modulo 2**64
        h ^= h >> shift
    return h


def _dedup_exact(rows: U8Array) -> tuple[U8Array, IntArray]:
    """Deduplicate by sorting the rows as opaque byte strings (a void view)."""
    width = rows.shape[1]
    rows = np.ascontiguousarray(rows)
    voids = rows.view(np.dtype((np.void, width))).ravel()
    _, first, inverse = np.unique(voids, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1).astype(np.int64)


def dedup_rows(matrix: U8Array, rows: npt.ArrayLike | None = None) -> tuple[U8Array, IntArray]:
    """Deduplicate the rows of a packed matrix (or only the ``rows`` selected from it).

    Returns ``(unique, inverse)``: the distinct rows and, for each input row, the
    index of its distinct row.  Vectorised: one 64-bit hash per row computed a word
    column at a time, one ``np.unique`` over the hashes, then a chunked comparison
    of every row with its group's representative; on a hash collision it falls back
    to an exact sort of the rows as byte strings.  Selecting ``rows`` avoids
    copying the whole selection at once.
    """
    if matrix.ndim != 2:
        raise ValueError("dedup_rows needs a 2-D matrix")
    sel = np.arange(matrix.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
    k, width = sel.size, matrix.shape[1]
    if k == 0:
        return np.zeros((0, width), dtype=np.uint8), np.zeros(0, dtype=np.int64)
    if width == 0:
        return np.zeros((1, 0), dtype=np.uint8), np.zeros(k, dtype=np.int64)
    if width % 8 or not matrix.flags.c_contiguous:
        padded = np.zeros((k, -(-width // 8) * 8), dtype=np.uint8)
        padded[:, :width] = matrix[sel]
        unique, inverse = dedup_rows(padded)
        return np.ascontiguousarray(unique[:, :width]), inverse
    words = matrix.view(np.uint64)
    _, first, inverse = np.unique(_row_hashes(words, sel), return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    rep = sel[first[inverse]]
    for start in range(0, k, _VERIFY_CHUNK):
        stop = start + _VERIFY_CHUNK
        if not np.array_equal(words[sel[start:stop]], words[rep[start:stop]]):
            return _dedup_exact(matrix[sel])
    return matrix[sel[first]], inverse


class BitmapPool:
    """Growable rows of packed bits sharing one 2-D uint8 array.

    Rows are handed out by :meth:`alloc` and given back by :meth:`release`; the
    number of columns (``capacity``, in bits) grows for every row at once.
    Single-bit operations go through a flat memoryview (much cheaper than numpy
    scalar indexing); whole-row operations use numpy.
    """

    __slots__ = ("_capacity", "_flat", "_free", "_m", "_nbytes", "_next")

    def __init__(self, capacity: int = 0, rows: int = 0) -> None:
        if capacity < 0 or rows < 0:
            raise ValueError("capacity and rows must be >= 0")
        self._capacity = capacity
        self._nbytes = nbytes_for(capacity)
        self._m: U8Array = np.zeros((max(rows, 1), self._nbytes), dtype=np.uint8)
        self._flat = self._m.data.cast("B") if self._m.size else memoryview(b"")
        self._free: list[int] = []
        self._next = 0  # rows [0, _next) have been handed out at least once

    @property
    def capacity(self) -> int:
        """Bits per row."""
        return self._capacity

    @property
    def nbytes(self) -> int:
        """Bytes per row."""
        return self._nbytes

    @property
    def rows_in_use(self) -> int:
        return self._next - len(self._free)

    @property
    def memory_bytes(self) -> int:
        """Bytes held by the backing array."""
        return int(self._m.nbytes)

    def _rebuild(self, rows: int, nbytes: int) -> None:
        old = self._m
        new = np.zeros((rows, nbytes), dtype=np.uint8)
        keep_rows, keep_bytes = min(rows, old.shape[0]), min(nbytes, old.shape[1])
        new[:keep_rows, :keep_bytes] = old[:keep_rows, :keep_bytes]
        self._flat.release()
        self._m = new
        self._nbytes = nbytes
        self._flat = new.data.cast("B") if new.size else memoryview(b"")

    def grow(self, capacity: int) -> None:
        """Make every row at least ``capacity`` bits wide (never shrinks)."""
        if capacity <= self._capacity:
            return
        nbytes = nbytes_for(capacity)
        if nbytes != self._nbytes:
            self._rebuild(self._m.shape[0], nbytes)
        self._capacity = capacity

    def alloc(self) -> int:
        """A fresh all-zero row."""
        if self._free:
            return self._free.pop()
        if self._next == self._m.shape[0]:
            self._rebuild(max(2 * self._m.shape[0], 64), self._nbytes)
        row = self._next
        self._next += 1
        return row

    def release(self, row: int) -> None:
        """Zero ``row`` and make it available to :meth:`alloc`."""
        self._check_row(row)
        self._m[row] = 0
        self._free.append(row)

    def _check_row(self, row: int) -> None:
        if not 0 <= row < self._next:
            raise IndexError(f"row {row} not allocated")

    def _check_bit(self, bit: int) -> None:
        if not 0 <= bit < self._capacity:
            raise IndexError(f"bit {bit} out of range 0..{self._capacity - 1}")

    def set(self, row: int, bit: int) -> bool:
        """Set one bit; True if it was clear."""
        self._check_bit(bit)
        i = row * self._nbytes + (bit >> 3)
        mask = 1 << (bit & 7)
        v = self._flat[i]
        if v & mask:
            return False
        self._flat[i] = v | mask
        return True

    def clear(self, row: int, bit: int) -> bool:
        """Clear one bit; True if it was set."""
        self._check_bit(bit)
        i = row * self._nbytes + (bit >> 3)
        mask = 1 << (bit & 7)
        v = self._flat[i]
        if not v & mask:
            return False
        self._flat[i] = v & ~mask & 0xFF
        return True

    def rows_with(self, bit: int) -> IntArray:
        """The rows (handed out) with ``bit`` set."""
        if not 0 <= bit < self._capacity:
            return np.zeros(0, dtype=np.int64)
        col = self._m[: self._next, bit >> 3] & (1 << (bit & 7))
        return np.nonzero(col)[0].astype(np.int64)

    def test(self, row: int, bit: int) -> bool:
        if not 0 <= bit < self._capacity:
            return False
        return bool(self._flat[row * self._nbytes + (bit >> 3)] & (1 << (bit & 7)))

    def set_unchecked(self, row: int, bit: int) -> bool:
        """:meth:`set` for a bit known to be within capacity (the hot path of the flow table)."""
        i = row * self._nbytes + (bit >> 3)
        mask = 1 << (bit & 7)
        v = self._flat[i]
        if v & mask:
            return False
        self._flat[i] = v | mask
        return True

    def or_packed(self, row: int, packed: U8Array) -> tuple[int, IntArray]:
        """OR a packed row (``nbytes`` wide) into ``row``.

        Returns how many bits were newly set and the indices of those already set.
        """
        if packed.shape != (self._nbytes,):
            raise ValueError(f"packed row must be {self._nbytes} bytes")
        r = self._m[row]
        already = packed & r
        n_already = popcount(already)
        r |= packed
        if n_already == 0:
            return popcount(packed), np.zeros(0, dtype=np.int64)
        return popcount(packed) - n_already, unpack(already)

    def packed(self, row: int) -> U8Array:
        """A copy of one row."""
        self._check_row(row)
        return cast(U8Array, self._m[row].copy())

    def members(self, row: int) -> IntArray:
        """Indices of the set bits of ``row``, ascending."""
        self._check_row(row)
        return unpack(self._m[row])[: self._capacity]

    def first(self, row: int) -> int:
        """The lowest set bit of ``row``, or -1."""
        self._check_row(row)
        nz = np.flatnonzero(self._m[row])
        if nz.size == 0:
            return -1
        byte = int(nz[0])
        v = int(self._m[row, byte])
        return byte * 8 + ((v & -v).bit_length() - 1)

    def count(self, row: int) -> int:
        self._check_row(row)
        return popcount(self._m[row])

    def take(self, rows: npt.ArrayLike) -> U8Array:
        """The given rows stacked into a new (k, nbytes) matrix."""
        idx = np.asarray(rows, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self._next):
            raise IndexError("row not allocated")
        return self._m[idx]

    def dedup(self, rows: npt.ArrayLike) -> tuple[U8Array, IntArray]:
        """:func:`dedup_rows` over the given allocated rows, without stacking them first."""
        idx = np.asarray(rows, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self._next):
            raise IndexError("row not allocated")
        return dedup_rows(self._m, idx)
