"""Tunnel-key ID pools.

A pool hands out integer keys in ``min_id..max_id`` (inclusive).  Allocation
mimics the reference ovn-northd: the search starts just *after* a hint (the
last key handed out), runs to ``max_id``, wraps to ``min_id`` and ends at the
hint itself.  With the default hint (``min_id - 1``) an empty pool hands out
``min_id, min_id + 1, ...``.

Observed in the reference (23.03), which the callers reproduce by how they seed
the pool on each run:

* datapath keys: search from the start on every run, existing keys do not move
  the hint (a freed low key is reused first);
* port keys per datapath: the hint is the largest key already in use on the
  datapath (``reserve(..., bump_hint=True)``), so a freed key below it is only
  reused after wrapping past 32767;
* IGMP multicast groups: hint starts at 32773, first key 32774
  (see :mod:`ovn_northd_py.northd.mcast_keys`).

Used keys are kept in a ``bytearray`` covering the range from ``min_id`` up to a
lazily grown high-water mark; the search uses ``bytearray.find`` (a C ``memchr``
loop), so allocation is O(1) amortized for the usual sequential pattern and a
fast linear scan of the occupied prefix in the worst case, never a Python loop
over the range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from ovn_northd_py.northd import mcast_keys

# Datapath_Binding.tunnel_key: 24 bits (Geneve VNI space).
DP_KEY_MIN: Final = 1
DP_KEY_MAX: Final = (1 << 24) - 1
# SB_Global options:max_tunid written by the reference: 16711680 (0xff0000)
# without VXLAN chassis (the top 0xffff keys are left to ovn-ic transit
# switches), 4095 as soon as any Chassis has a vxlan Encap.
DP_KEY_MAX_DEFAULT: Final = 16711680
DP_KEY_MAX_VXLAN: Final = 4095
# ... 1023 (VXLAN or not) while a Logical_Switch has other_config:ic-vxlan_mode (any value: observed,
# 25.03; ovn-ic sets it on transit switches when it runs VXLAN between availability zones).
DP_KEY_MAX_VXLAN_IC: Final = 1023

# Port_Binding.tunnel_key: 1..32767 (15 bits); with VXLAN only 1..2047 are
# usable (the reference warns "Tunnel key N for port P is incompatible with
# VXLAN" for a requested key of 2048, 2047 is accepted).
PORT_KEY_MIN: Final = 1
PORT_KEY_MAX: Final = (1 << 15) - 1
PORT_KEY_MAX_VXLAN: Final = 2047

MCAST_KEY_MIN: Final = mcast_keys.MCAST_KEY_MIN
MCAST_KEY_MAX: Final = mcast_keys.MCAST_KEY_MAX

_FREE: Final = 0
_USED: Final = 1


class IdPoolExhausted(RuntimeError):
    """Every key of a pool is in use."""

    def __init__(self, name: str, min_id: int, max_id: int) -> None:
        # (worded as the reference's warning: "all port tunnel ids exhausted")
        super().__init__(f"all {name} exhausted (range {min_id}..{max_id})")
        self.pool_name = name
        self.min_id = min_id
        self.max_id = max_id


@dataclass(slots=True)
class IdPool:
    """Keys ``min_id..max_id`` with a wrap-around "next after hint" allocator."""

    min_id: int
    max_id: int
    name: str
    hint: int | None = None  # last key handed out; None means min_id - 1
    _used: bytearray = field(default_factory=bytearray, init=False, repr=False)
    _count: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.min_id > self.max_id:
            raise ValueError(f"{self.name}: empty range {self.min_id}..{self.max_id}")
        if self.hint is None:
            self.hint = self.min_id - 1

    # -- queries ---------------------------------------------------------
    @property
    def size(self) -> int:
        return self.max_id - self.min_id + 1

    def in_range(self, id_: int) -> bool:
        return self.min_id <= id_ <= self.max_id

    def __contains__(self, id_: object) -> bool:
        if not isinstance(id_, int) or not self.in_range(id_):
            return False
        off = id_ - self.min_id
        return off < len(self._used) and self._used[off] == _USED

    def __len__(self) -> int:
        return self._count

    def is_full(self) -> bool:
        return self._count >= self.size

    # -- updates ---------------------------------------------------------
    def reserve(self, id_: int, *, bump_hint: bool = False) -> bool:
        """Mark an existing or requested key as used.

        False if ``id_`` is out of range or already in use.  With ``bump_hint``
        the hint moves up to ``id_`` when that is above it (the reference's
        behaviour for port keys already present on a datapath).
        """
        if not self.in_range(id_) or id_ in self:
            return False
        self._mark(id_)
        if bump_hint and self.hint is not None and id_ > self.hint:
            self.hint = id_
        return True

    def allocate(self) -> int:
        """Hand out the first free key after the hint (wrapping); it becomes the hint."""
        if self.is_full():
            raise IdPoolExhausted(self.name, self.min_id, self.max_id)
        id_ = self._find_free()
        self._mark(id_)
        self.hint = id_
        return id_

    def free(self, id_: int) -> bool:
        """Release a key; False if it was not in use (or out of range)."""
        if id_ not in self:
            return False
        self._used[id_ - self.min_id] = _FREE
        self._count -= 1
        return True

    # -- internals -------------------------------------------------------
    def _mark(self, id_: int) -> None:
        off = id_ - self.min_id
        if off >= len(self._used):
            # Grow geometrically (amortized O(1)), never past the range.
            new_len = min(self.size, max(off + 1, 2 * len(self._used), 64))
            self._used.extend(bytes(new_len - len(self._used)))
        self._used[off] = _USED
        self._count += 1

    def _first_free_from(self, start_off: int, end_off: int) -> int | None:
        """First free offset in [start_off, end_off), or None."""
        if start_off >= end_off:
            return None
        tracked = len(self._used)
        if start_off >= tracked:
            return start_off  # beyond the high-water mark everything is free
        off = self._used.find(_FREE, start_off, min(end_off, tracked))
        if off >= 0:
            return off
        return tracked if tracked < end_off else None

    def _find_free(self) -> int:
        assert self.hint is not None
        hint_off = self.hint - self.min_id
        # Search (hint, max] then [min, hint]; an out-of-range hint is clamped.
        start = hint_off + 1 if 0 <= hint_off + 1 < self.size else 0
        off = self._first_free_from(start, self.size)
        if off is None:
            off = self._first_free_from(0, start)
        if off is None:  # pragma: no cover - guarded by is_full()
            raise IdPoolExhausted(self.name, self.min_id, self.max_id)
        return self.min_id + off


def datapath_key_pool(max_tunid: int = DP_KEY_MAX_DEFAULT) -> IdPool:
    """Datapath_Binding tunnel keys, 1..max_tunid (SB_Global options:max_tunid)."""
    return IdPool(DP_KEY_MIN, min(max_tunid, DP_KEY_MAX), "datapath")


def port_key_pool(datapath: str, *, vxlan: bool = False) -> IdPool:
    """Port_Binding tunnel keys of one datapath."""
    return IdPool(PORT_KEY_MIN, PORT_KEY_MAX_VXLAN if vxlan else PORT_KEY_MAX, f"port ({datapath})")


def ip_mcast_key_pool(datapath: str) -> IdPool:
    """Keys for IGMP/MLD-learnt multicast groups of one datapath (first key 32774)."""
    return IdPool(
        mcast_keys.IP_MCAST_KEY_MIN,
        mcast_keys.IP_MCAST_KEY_MAX,
        f"multicast group ({datapath})",
        hint=mcast_keys.IP_MCAST_KEY_MIN,
    )
