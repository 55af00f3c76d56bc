"""The iteration order of an Open vSwitch string set, for matches that list set members.

Some reference matches print the members of a string set (``eth.src == {A, B, C}``)
in the order the set iterates, which is neither sorted nor insertion order.  An
OVS string set is a hash map: 32-bit murmur-style hash of the string (basis 0),
bucket ``hash & mask``, buckets walked in index order, each bucket a list with
the newest node first; the bucket array grows (``mask`` = smeared ``n / 2``, at
least 3) once ``n / 2 > mask`` and is rebuilt by walking the old buckets in
order and pushing every node onto its new bucket's head.

Checked against the reference on sets of 2, 3, 6 and 10 MACs (see the unit tests).
"""

from __future__ import annotations

from collections.abc import Iterable

_M32 = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def _mhash_add(h: int, data: int) -> int:
    data = (data * 0xCC9E2D51) & _M32
    data = _rot(data, 15)
    data = (data * 0x1B873593) & _M32
    h ^= data
    h = _rot(h, 13)
    return (h * 5 + 0xE6546B64) & _M32


def _mhash_finish(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def ovs_hash_bytes(data: bytes, basis: int = 0) -> int:
    """Open vSwitch's ``hash_bytes``: 4-byte little-endian words, zero-padded tail, length finish."""
    h = basis & _M32
    n = len(data)
    full = n - n % 4
    for i in range(0, full, 4):
        h = _mhash_add(h, int.from_bytes(data[i : i + 4], "little"))
    if full < n:
        h = _mhash_add(h, int.from_bytes(data[full:].ljust(4, b"\0"), "little"))
    return _mhash_finish(h ^ n)


def ovs_hash_string(s: str, basis: int = 0) -> int:
    return ovs_hash_bytes(s.encode(), basis)


def calc_mask(capacity: int) -> int:
    """An OVS hmap's bucket mask for ``capacity`` nodes."""
    return _calc_mask(capacity)


def _calc_mask(capacity: int) -> int:
    mask = capacity // 2
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> shift
    return mask | ((mask & 1) << 1)


def hmap_order(items: Iterable[tuple[int, str]]) -> list[str]:
    """The iteration order of an OVS hmap after inserting ``(hash, item)`` in turn.

    Bucket ``hash & mask``, buckets walked in index order, newest node first in a bucket; the
    bucket array grows (mask = smeared ``n / 2``) once ``n / 2 > mask`` and is rebuilt by walking
    the old buckets in order and pushing every node onto its new bucket's head.
    """
    mask = 0
    buckets: list[list[tuple[int, str]]] = [[]]
    for n, (h, item) in enumerate(items, 1):
        buckets[h & mask].insert(0, (h, item))
        if n // 2 > mask:
            new_mask = _calc_mask(n)
            if new_mask > mask:
                grown: list[list[tuple[int, str]]] = [[] for _ in range(new_mask + 1)]
                for bucket in buckets:
                    for node in bucket:
                        grown[node[0] & new_mask].insert(0, node)
                buckets, mask = grown, new_mask
    return [item for bucket in buckets for _, item in bucket]


def uuid_map_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of an OVS hmap keyed by ``uuid_hash`` (a uuid's first 32 bits) after
    inserting the uuids ``keys`` in turn: the reference's maps of datapaths (and of rows)."""
    return hmap_order((int(k.replace("-", "")[:8], 16), k) for k in keys)


def sset_order(items: Iterable[str]) -> list[str]:
    """The distinct ``items`` in the order an OVS ``sset`` built by adding them in turn iterates."""
    return hmap_order((ovs_hash_string(item), item) for item in dict.fromkeys(items))
