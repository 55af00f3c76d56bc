"""Tunnel-key assignment for datapaths and ports.

Invariant (tunnel-key stability): a datapath or port that already has a key keeps
it, with one exception: an explicit ``requested-tnl-key`` (``ovn-nb(5)``: "ovn-northd
honors the configured value"; ovn-ic sets it for transit switches, whose keys must be
the same everywhere).  Keys come, in order of preference, from (1) what SB already
holds for the same NB entity, (2) what we assigned in an earlier run but SB has not
echoed yet, (3) a valid ``requested-tnl-key``, (4) a fresh key from the pool.  A key
requested by one entity and held by another that did not request it is taken from
the holder, which gets a fresh key and a warning naming it (``requests_win``, as both
the 23.03 and 25.03 references do: OVN's ovn-northd.at "datapath/port
requested-tnl-key"); two entities requesting the same key: the one holding it keeps
it, the other's request is refused with a warning.  Nothing else ever renumbers a key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .idpool import (
    DP_KEY_MAX_DEFAULT,
    DP_KEY_MAX_VXLAN,
    DP_KEY_MAX_VXLAN_IC,
    DP_KEY_MIN,
    PORT_KEY_MAX,
    PORT_KEY_MAX_VXLAN,
    PORT_KEY_MIN,
    IdPool,
    IdPoolExhausted,
)

DP_KEY_MAX_GENEVE = DP_KEY_MAX_DEFAULT  # SB_Global options:max_tunid without VXLAN chassis
__all__ = ["DP_KEY_MAX_GENEVE", "DP_KEY_MAX_VXLAN", "DP_KEY_MAX_VXLAN_IC", "DP_KEY_MIN", "PORT_KEY_MAX", "PORT_KEY_MAX_VXLAN",
           "PORT_KEY_MIN", "KeyAssigner", "dp_key_max", "parse_requested_key"]

Warn = Callable[[str, str, object, str], None]


def dp_key_max(vxlan: bool, ic: bool = False) -> int:
    """The largest datapath tunnel key (SB_Global ``options:max_tunid``): 1023 in the IC VXLAN range
    (:func:`.build.ic_vxlan_mode`, whatever the chassis' encapsulation), else 4095 in VXLAN mode,
    else the Geneve range."""
    if ic:
        return DP_KEY_MAX_VXLAN_IC
    return DP_KEY_MAX_VXLAN if vxlan else DP_KEY_MAX_GENEVE


def parse_requested_key(value: str | None, lo: int, hi: int) -> tuple[int | None, str | None]:
    """(key, error) for an options:requested-tnl-key value; (None, None) when absent."""
    if value is None:
        return None, None
    try:
        k = int(value, 0)
    except ValueError:
        return None, f"requested-tnl-key {value!r} is not an integer"
    if not lo <= k <= hi:
        return None, f"requested-tnl-key {k} is out of range {lo}..{hi}"
    return k, None


@dataclass(slots=True)
class KeyAssigner:
    """Assign keys to a set of entities within one pool, honouring stability and requests."""

    pool: IdPool
    warn: Warn
    kind: str
    bump_hint: bool = False
    # Requests win (observed on 23.03 and 25.03): a requested key held by an entity that did not
    # request it is taken from it (it gets a fresh one); else requests only get keys nobody holds.
    requests_win: bool = True
    # A key held outside the pool's range (a VXLAN chassis appeared and narrowed it) is kept, not
    # renumbered (observed for ports, OVN's ovn-northd.at "check port tunnel ids exhaustion; vxlan
    # chassis pops up midflight"); else such an entity gets a fresh key.
    keep_out_of_range: bool = False
    assigned: dict[str, int] = field(default_factory=dict)

    def assign(
        self,
        entities: list[tuple[str, object, str, int | None, int | None, int | None]],
    ) -> dict[str, int]:
        """entities: (identity, nb row uuid, NB table, requested, in SB, previously assigned).
        Returns identity -> key."""
        out: dict[str, int] = {}
        # 1. Every entity holds on to its current key (SB first, then our own earlier choice),
        # even one that requests another: it gives the key up only if its request is granted.
        held: dict[str, int] = {}
        outside: set[int] = set()  # held keys beyond the pool's range (keep_out_of_range)
        wanted: set[int] = set()
        if self.requests_win:  # (keys asked for by an entity not holding them yet)
            wanted = {e[3] for e in entities if e[3] is not None and e[3] != (e[4] if e[4] is not None else e[5])}
        for ident, row, table, requested, sb_key, prev in entities:
            current = sb_key if sb_key is not None else prev
            if current is not None and current in wanted and requested != current:
                self.warn(f"{self.kind}_tnl_key_given_to_request", table, row,
                          f"tunnel key {current} is requested by another entity: this one gets a new key")
                continue  # (given up to a request; a fresh key below)
            if current is not None and self.pool.reserve(current, bump_hint=self.bump_hint):
                held[ident] = current
            elif (current is not None and self.keep_out_of_range and not self.pool.in_range(current)
                  and current not in outside):
                held[ident] = current
                outside.add(current)
        # 2. Requests, granted only from keys nobody holds.
        fresh: list[tuple[str, object, str]] = []
        for ident, row, table, requested, _sb_key, _prev in entities:
            current = held.get(ident)
            if requested is not None and requested != current:
                if self.pool.reserve(requested, bump_hint=self.bump_hint):
                    out[ident] = requested
                    if current is not None:
                        self.pool.free(current)
                    continue
                self.warn(
                    f"{self.kind}_requested_tnl_key_taken", table, row,
                    f"requested-tnl-key {requested} is already in use",
                )
            if current is not None:
                out[ident] = current
            else:
                fresh.append((ident, row, table))
        # 3. Fresh keys.
        for ident, row, table in fresh:
            try:
                out[ident] = self.pool.allocate()
            except IdPoolExhausted as e:
                self.warn(f"{self.kind}_tnl_key_exhausted", table, row, str(e))
        self.assigned = out
        return out
