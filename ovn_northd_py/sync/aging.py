"""MAC binding and FDB aging: learned rows older than their threshold are deleted.

ovn-controller writes SB ``MAC_Binding`` rows (neighbours a router learned) and ``FDB`` rows
(MACs a switch learned), each with a ``timestamp`` (ms, ovn-controller's clock) of when it was
added or refreshed.  As ``ovn-nb(5)`` says, ovn-northd deletes them once they exceed:

* ``Logical_Router options:mac_binding_age_threshold`` (seconds; 0 or unset: never) for the
  MAC_Binding rows of that router's datapath.  From 25.03 the value may also be a list of
  ``[cidr:]threshold`` entries separated by ``;``: the longest prefix containing the row's
  ``ip`` decides, an entry without CIDR is the default, an IP that matches nothing (and no
  default) never ages, and a value not in that format disables aging for the router;
* ``Logical_Switch other_config:fdb_age_threshold`` (seconds; 25.03 on) for the FDB rows whose
  ``dp_key`` is that switch's tunnel key.

``NB_Global options:mac_binding_removal_limit`` / ``fdb_removal_limit`` bound how many rows one
transaction deletes (0: no bound); when a batch hits the bound the next one waits 5 s.

The deletes ride on an engine run's SB transaction (``Ctx.sb_extra_ops``): the daemon runs the
engine when :meth:`Aging.due` says so, and sleeps until :attr:`Aging.next_due` otherwise.  A row
is deleted by uuid: if ovn-controller deleted or refreshed it meanwhile, nothing worse than a
no-op happens (a refreshed row's echo reschedules it).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..northd.model import Northd

BATCH_DELAY_MS = 5000.0  # after a batch cut by the removal limit
RESCAN_MS = 1000.0  # at most one rescan a second after rows changed
UINT32_MAX = 4294967295

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Seconds by longest prefix (``default``: IPs matching no prefix; None: they never age)."""

    default: int | None
    by_prefix: tuple[tuple[Network, int], ...] = ()

    def for_ip(self, ip: str) -> int | None:
        if not self.by_prefix:
            return self.default
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return self.default
        best: tuple[int, int] | None = None
        for net, secs in self.by_prefix:
            if addr.version == net.version and addr in net and (best is None or net.prefixlen > best[0]):
                best = (net.prefixlen, secs)
        return best[1] if best is not None else self.default


def _seconds(text: str) -> int | None:
    text = text.strip()
    if not text.isdigit():
        return None
    v = int(text)
    return v if v <= UINT32_MAX else None


def parse_thresholds(value: str | None, cidrs: bool) -> Thresholds | None:
    """The option's thresholds; None when aging is off (unset, 0, or not in the format).

    ``cidrs``: the release reads ``[cidr:]threshold;...`` (25.03 on), else one integer."""
    if not value:
        return None
    if not cidrs:
        secs = _seconds(value)
        return Thresholds(secs) if secs else None
    default: int | None = None
    by_prefix: list[tuple[Network, int]] = []
    for entry in value.split(";"):
        prefix, sep, secs_text = entry.rpartition(":")
        secs = _seconds(secs_text)
        if secs is None:
            return None
        if not sep:
            default = secs
            continue
        try:
            net = ipaddress.ip_network(prefix.strip(), strict=False)
        except ValueError:
            return None
        by_prefix.append((net, secs))
    out = Thresholds(default or None, tuple((n, s) for n, s in by_prefix))
    if out.default is None and not any(s for _n, s in out.by_prefix):
        return None
    return out


def removal_limit(options: Mapping[str, str], key: str) -> int:
    v = _seconds(options.get(key, "") or "")
    return v or 0


@dataclass(slots=True)
class Candidate:
    """A row that may age: its table, uuid, timestamp and threshold (ms)."""

    table: str
    uuid: Any
    timestamp: int
    threshold_ms: int


def router_thresholds(nd: Northd, dp_uuid: Mapping[str, str], cidrs: bool) -> dict[str, Thresholds]:
    """SB Datapath_Binding uuid -> the router's thresholds (routers with aging on only).
    ``dp_uuid``: NB datapath key -> SB Datapath_Binding uuid."""
    out: dict[str, Thresholds] = {}
    for dp in nd.routers():
        t = parse_thresholds(dp.nb.options.get("mac_binding_age_threshold"), cidrs)
        u = dp_uuid.get(dp.key) if t is not None else None
        if t is not None and u is not None:
            out[u] = t
    return out


def switch_thresholds(nd: Northd) -> dict[int, int]:
    """Switch tunnel key -> FDB threshold (ms), switches with aging on only."""
    out: dict[int, int] = {}
    for dp in nd.switches():
        secs = _seconds(dp.nb.other_config.get("fdb_age_threshold", "") or "")
        if secs:
            out[dp.tunnel_key] = secs * 1000
    return out


def candidates(table: str, rows: Iterable[Any], threshold_ms: Callable[[Any], int | None]) -> list[Candidate]:
    """The rows of ``table`` that age (``threshold_ms(row)``: None or 0 when the row never does)."""
    out: list[Candidate] = []
    for row in rows:
        if row._data is None:
            continue
        ms = threshold_ms(row)
        if ms:
            out.append(Candidate(table, row.uuid, int(row.timestamp), ms))
    return out


def mac_binding_threshold(routers: Mapping[str, Thresholds]) -> Callable[[Any], int | None]:
    """A MAC_Binding row's threshold (ms): its router's, for its IP."""
    def threshold_ms(row: Any) -> int | None:
        dp = row.datapath
        if isinstance(dp, list):
            dp = dp[0] if dp else None
        t = routers.get(str(dp.uuid)) if dp is not None else None
        secs = t.for_ip(row.ip) if t is not None else None
        return secs * 1000 if secs else None
    return threshold_ms


def expire(cands: list[Candidate], now_ms: float, limit: int) -> tuple[list[Candidate], float | None, bool]:
    """(rows to delete now, when the next one expires: None if never, whether ``limit`` cut the
    batch).  ``limit`` > 0 bounds the batch (oldest first); a cut batch schedules the next one 5 s
    later."""
    gone: list[Candidate] = []
    next_due: float | None = None
    for c in cands:
        due = c.timestamp + c.threshold_ms
        if due <= now_ms:
            gone.append(c)
        elif next_due is None or due < next_due:
            next_due = float(due)
    if limit and len(gone) > limit:
        gone.sort(key=lambda c: c.timestamp)
        return gone[:limit], now_ms + BATCH_DELAY_MS, True
    return gone, next_due, False


def delete_ops(gone: Iterable[Candidate]) -> list[dict[str, Any]]:
    return [{"op": "delete", "table": c.table, "where": [["_uuid", "==", ["uuid", str(c.uuid)]]]} for c in gone]


# What a scan reads, by table: the columns whose update matters (None: any change of the table's
# rows); a row created or deleted always matters.
AGING_INPUTS: Mapping[str, frozenset[str] | None] = MappingProxyType({
    "MAC_Binding": None, "FDB": None, "Datapath_Binding": None,  # SB
    "Logical_Router": frozenset({"options"}), "Logical_Switch": frozenset({"other_config"}),  # NB
    "NB_Global": frozenset({"options"}),
})


def inputs_changed(changes: list[Any], start: int = 0) -> bool:
    """Do the tracked row changes ``changes[start:]`` (``RowChange``) touch what a scan reads?
    (A pod joining a switch, an address set, a load balancer: no rescan.)"""
    for c in changes[start:]:
        if c.table not in AGING_INPUTS:
            continue
        cols = AGING_INPUTS[c.table]
        if cols is None or c.event != "update" or not cols.isdisjoint(c.columns):
            return True
    return False


@dataclass(slots=True)
class Aging:
    """When aging must look again, and what it deleted (``deleted``: table -> rows)."""

    next_due: float | None = None  # ms (wall clock), None: nothing ages
    dirty: bool = True  # rows, thresholds or datapaths changed since the last scan
    hold_until: float = 0.0  # a batch was cut by a removal limit: no other before this (ms)
    last_scan: float = field(default=-RESCAN_MS)
    deleted: dict[str, int] = field(default_factory=dict)

    def changed(self) -> None:
        self.dirty = True

    def due(self, now_ms: float) -> bool:
        if now_ms < self.hold_until:
            return False
        if self.dirty and now_ms - self.last_scan >= RESCAN_MS:
            return True
        return self.next_due is not None and now_ms >= self.next_due

    def wake_at(self, now_ms: float) -> float | None:
        """When the loop must wake up for aging (ms, wall clock)."""
        at = self.next_due
        if self.dirty:
            rescan = self.last_scan + RESCAN_MS
            at = rescan if at is None else min(at, rescan)
        return at if at is None else max(at, now_ms, self.hold_until)

    def run(self, sb: Any, nd: Northd, dp_uuid: Mapping[str, str], nb_options: Mapping[str, str],
            now_ms: float, cidrs: bool, fdb: bool) -> list[dict[str, Any]]:
        """The deletes due now (for the run's SB transaction); reschedules."""
        self.dirty = False
        self.last_scan = now_ms
        ops: list[dict[str, Any]] = []
        nexts: list[float] = []
        held = False
        batches: list[tuple[str, list[Candidate], str]] = []
        routers = router_thresholds(nd, dp_uuid, cidrs)
        if routers:
            batches.append(("MAC_Binding", candidates("MAC_Binding", sb.rows("MAC_Binding").values(),
                                                      mac_binding_threshold(routers)), "mac_binding_removal_limit"))
        switches = switch_thresholds(nd) if fdb else {}
        if switches:
            batches.append(("FDB", candidates("FDB", sb.rows("FDB").values(), lambda row: switches.get(row.dp_key)),
                            "fdb_removal_limit"))
        for table, cands, limit_key in batches:
            gone, nxt, cut = expire(cands, now_ms, removal_limit(nb_options, limit_key))
            held = held or cut
            ops += delete_ops(gone)
            self._count(table, len(gone))
            if nxt is not None:
                nexts.append(nxt)
        self.next_due = min(nexts) if nexts else None
        if held:
            self.hold_until = now_ms + BATCH_DELAY_MS
        return ops

    def _count(self, table: str, n: int) -> None:
        if n:
            self.deleted[table] = self.deleted.get(table, 0) + n
