"""The logical flow table ("lflow manager"): the only way builders add flows.

A flow is identified by ``(stage, priority, match, actions, controller_meter)``.  The
same flow added on several datapaths is one flow whose datapath set grows; the SB
writer then emits it with ``logical_datapath`` (one datapath) or a
``Logical_DP_Group`` (two or more, deduplicated by :meth:`FlowTable.groups`).

Datapaths are dense ints ``0..capacity-1``.  A flow on one datapath stores just
that int; on its second datapath it is promoted to a row of a shared packed bit
matrix (:class:`~ovn_northd_py.lflow.bitmap.BitmapPool`) and demoted again when it
is back to one.

Ownership, for incremental processing: every ``add`` may name an ``owner`` (any
hashable; the flow builders use the kinds of :mod:`ovn_northd_py.flows.owners`, e.g.
``("port", port name)``).  Each add is one reference to its (flow,
datapath) pair; :meth:`FlowTable.remove_owner` drops exactly the references that
owner made.  A pair stays while any reference remains (references made with
``owner=None`` are permanent), and a flow goes when its last datapath goes.

Changes: every flow whose datapath set changed, or that appeared or vanished, is
dirty until :meth:`FlowTable.take_changes`, which reports it as added, modified
or removed.  A flow that loses its last datapath keeps its id (and is revived in
place if re-added) until the next ``take_changes``; only then is its id freed for
reuse, so an id never means two different flows within one batch of changes.

Group-owned flows: a table made with ``group_owner_kinds`` counts, per flow, the references
made by owners of those kinds (tuple owners whose first item is one of them; the flow builders'
load balancers, which the reference adds through a datapath bitmap rather than datapath by
datapath).  :meth:`FlowTable.group_owned_only` says whether every reference to a flow is such
one; the SB writer of a release that keeps those flows in datapath groups of their own asks it.
Such a table may also know each group owner's ``group_scope`` (a datapath key when all its flows
are on that one datapath: a load balancer's per-router flows), so that purging deleted datapaths
scans only the owners that may hold references on them.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import numpy.typing as npt

from ovn_northd_py.lflow.bitmap import BitmapPool, IntArray, U8Array, key_bytes, pack_unchecked, unpack
from ovn_northd_py.lflow.stages import Stage

Owner = Hashable
FlowKey = tuple[str, int, str, str, str | None]  # (stage name, priority, match, actions, meter)
# add_specs: (stage, priority, match, actions, controller_meter, per_datapath, sample_drop)
FlowSpec7 = tuple[Stage, int, str, str, str | None, bool, bool]

PAIR_SHIFT = 24
MAX_DATAPATHS = 1 << PAIR_SHIFT  # datapath indices must fit in the low bits of a pair key
_DP_MASK = MAX_DATAPATHS - 1
MAX_PRIORITY = 65535
_DROP = re.compile(r"\bdrop;")  # the drop action (not a longer word ending so)
# A group owner's log up to this many entries is scanned in Python on a purge (a per-node load
# balancer's few flows); numpy's fixed cost per call is larger than that.
_SMALL_LOG = 48


def _pair(fid: int, dp: int) -> int:
    return (fid << PAIR_SHIFT) | dp


@dataclass(frozen=True, slots=True)
class LFlow:
    """A read-only view of one flow."""

    fid: int
    stage: Stage
    priority: int
    match: str
    actions: str
    controller_meter: str | None
    io_port: str | None
    hint: str | None
    datapaths: tuple[int, ...]
    tags: tuple[tuple[str, str], ...] = ()  # Logical_Flow tags besides in_out_port (rare)


@dataclass(frozen=True, slots=True)
class Changes:
    """Flow ids changed since the previous :meth:`FlowTable.take_changes`, each ascending.

    ``removed`` ids are no longer valid after this call and may be reused later.
    """

    added: list[int]
    modified: list[int]
    removed: list[int]

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.removed)


@dataclass(slots=True)
class DpGroups:
    """Deduplicated datapath groups of the flows on two or more datapaths.

    ``flow_ids[i]`` uses group ``group_ids[i]``; group ``g`` is the packed row
    ``bitmaps[g]`` (little bit order, ``capacity`` bits).
    """

    flow_ids: IntArray
    group_ids: IntArray
    bitmaps: U8Array
    capacity: int
    _by_flow: dict[int, int] | None = field(default=None, init=False, repr=False)

    def __len__(self) -> int:
        """Number of distinct groups."""
        return int(self.bitmaps.shape[0])

    def as_dict(self) -> dict[int, int]:
        """flow id -> group id."""
        if self._by_flow is None:
            self._by_flow = dict(zip(self.flow_ids.tolist(), self.group_ids.tolist(), strict=True))
        return self._by_flow

    def group_of(self, fid: int) -> int | None:
        """The group of flow ``fid``, or None if it is not on two or more datapaths."""
        return self.as_dict().get(fid)

    def members(self, gid: int) -> list[int]:
        """The datapath indices of group ``gid``, ascending."""
        return cast(list[int], unpack(self.bitmaps[gid]).tolist())

    def key(self, gid: int) -> bytes:
        """A capacity-independent identity of group ``gid`` (for matching existing SB groups)."""
        return key_bytes(self.bitmaps[gid])

    def flows_per_group(self) -> IntArray:
        return np.bincount(self.group_ids, minlength=len(self)).astype(np.int64)


class FlowTable:
    """Logical flows with their datapath sets, owners and pending changes."""

    __slots__ = (
        "_bits",
        "_capacity",
        "_dead",
        "_dirty",
        "_epoch",
        "_extra",
        "_free",
        "_gexempt",
        "_gkinds",
        "_gowners",
        "_grefs",
        "_gscope",
        "_hint",
        "_index",
        "_io_port",
        "_key",
        "_live",
        "_ndp",
        "_owners",
        "_reported",
        "_row",
        "_single",
        "_snap",
        "_stages",
        "_tags",
        "drop_action",
    )

    def __init__(self, capacity: int = 0, group_owner_kinds: frozenset[str] = frozenset(),
                 group_scope: Callable[[Owner], Hashable] | None = None) -> None:
        if not 0 <= capacity <= MAX_DATAPATHS:
            raise ValueError(f"capacity must be within 0..{MAX_DATAPATHS}")
        self._capacity = capacity
        self._index: dict[FlowKey, int] = {}
        self._stages: dict[str, Stage] = {}
        self._key: list[FlowKey | None] = []
        self._hint: list[str | None] = []
        self._io_port: list[str | None] = []
        self._tags: dict[int, tuple[tuple[str, str], ...]] = {}  # fid -> extra tags (few flows have any)
        self._single = array("i")  # the datapath when ndp == 1, else -1
        self._row = array("i")  # the bitmap row when ndp >= 2, else -1
        self._ndp = array("i")  # number of datapaths
        # What every ``drop;`` action becomes (debug drop sampling: flows.context.debug_drop_action);
        # None: flows are kept as added.  Set before the first add (a change rebuilds the table).
        self.drop_action: str | None = None
        self._reported = bytearray()  # 1 once take_changes reported the flow as added
        self._dirty: set[int] = set()
        # Datapath set of a reported flow when it first became dirty in this batch (a removed and
        # re-added owner often leaves a flow exactly as it was: take_changed then skips it).
        self._snap: dict[int, int | bytes | None] = {}
        self._free: list[int] = []
        # Replaced whenever a flow id is freed (and may later name another flow): ids handed out
        # under one epoch keep naming the same flows while it lasts (``add_specs``'s ``known``).
        self._epoch = object()
        self._extra: dict[int, int] = {}  # pair -> references beyond the first
        self._owners: dict[Owner, array[int]] = {}
        self._gkinds = group_owner_kinds
        # The group owners that hold references, by scope (``group_scope(owner)``, None without
        # one), in the order they appeared; kept in step with ``_owners``.
        self._gscope = group_scope
        self._gowners: dict[Hashable, dict[Owner, None]] = {}
        self._grefs: dict[int, int] = {}  # flow id -> references made by owners of those kinds
        self._gexempt: dict[Owner, dict[int, int]] = {}  # their per_datapath references (pair -> count)
        self._bits = BitmapPool(capacity)
        self._live = 0
        self._dead: set[int] = set()  # purged datapaths (purge_datapaths): never used again

    # -- capacity -------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Datapath indices 0..capacity-1 are accepted without growing."""
        return self._capacity

    def ensure_capacity(self, capacity: int) -> None:
        """Grow to at least ``capacity`` datapaths (never shrinks)."""
        if capacity > MAX_DATAPATHS:
            raise ValueError(f"at most {MAX_DATAPATHS} datapaths")
        if capacity > self._capacity:
            self._capacity = capacity
            self._bits.grow(capacity)

    def _grow_for(self, dp: int) -> None:
        if not 0 <= dp < MAX_DATAPATHS:
            raise IndexError(f"datapath index {dp} out of range 0..{MAX_DATAPATHS - 1}")
        self.ensure_capacity(min(MAX_DATAPATHS, max(dp + 1, 2 * self._capacity)))

    # -- adding ---------------------------------------------------------------

    def _debug_drop(self, actions: str) -> str:
        """``actions`` with its drop sampled: ``drop;``, or a trailing ``/* drop */`` (an action
        that drops by doing nothing more)."""
        drop = self.drop_action or "drop;"
        if actions.endswith("/* drop */"):
            return actions[: -len("/* drop */")] + drop
        return _DROP.sub(lambda _m: drop, actions)

    def _create(self, key: FlowKey, stage: Stage, io_port: str | None, hint: str | None) -> int:
        """The id for ``key``: a new flow, or a vanished one revived in place."""
        fid = self._index.get(key)
        if fid is not None:  # vanished since the last take_changes: revive in place
            self._tags.pop(fid, None)
            self._hint[fid] = hint
            self._io_port[fid] = io_port
            return fid
        priority = key[1]
        if not 0 <= priority <= MAX_PRIORITY:
            raise ValueError(f"priority {priority} out of range 0..{MAX_PRIORITY}")
        known = self._stages.setdefault(stage.name, stage)
        if known != stage:
            raise ValueError(f"two different stages are called {stage.name!r}")
        if self._free:
            fid = self._free.pop()
            self._key[fid] = key
            self._hint[fid] = hint
            self._io_port[fid] = io_port
            self._reported[fid] = 0
        else:
            fid = len(self._key)
            self._key.append(key)
            self._hint.append(hint)
            self._io_port.append(io_port)
            self._single.append(-1)
            self._row.append(-1)
            self._ndp.append(0)
            self._reported.append(0)
        self._index[key] = fid
        return fid

    def add(
        self,
        dp_index: int,
        stage: Stage,
        priority: int,
        match: str,
        actions: str,
        io_port: str | None = None,
        hint: str | None = None,
        controller_meter: str | None = None,
        owner: Owner | None = None,
        per_datapath: bool = False,
        tags: tuple[tuple[str, str], ...] = (),
        sample_drop: bool = True,
    ) -> int:
        """Add the flow on datapath ``dp_index``; returns its flow id.

        ``io_port``, ``hint`` (the stage-hint) and ``tags`` (Logical_Flow tags besides
        ``in_out_port``) are not part of the flow's identity: the first add of a flow sets them.  ``per_datapath``: the reference
        adds this flow datapath by datapath even for an owner of ``group_owner_kinds``
        (the reference is not counted as one of theirs).  ``sample_drop`` False: a drop the
        reference never samples (debug drop sampling, :attr:`drop_action`) stays as it is.
        """
        if not 0 <= dp_index < self._capacity:
            self._grow_for(dp_index)
        if self.drop_action is not None and sample_drop and "drop" in actions:
            actions = self._debug_drop(actions)
        # Keyed by the stage's name: a str caches its hash, a dataclass does not.
        key = (stage.name, priority, match, actions, controller_meter)
        fid = self._index.get(key)
        if fid is None or self._ndp[fid] == 0:
            fid = self._create(key, stage, io_port, hint)
            if tags:
                self._tags[fid] = tags
        self._link(fid, dp_index)
        if owner is not None:
            log = self._owners.get(owner)
            if log is None:
                log = self._owners[owner] = array("q")
                if self._gkinds and self._group_owned(owner):
                    self._gowners_of(owner)[owner] = None
            log.append((fid << PAIR_SHIFT) | dp_index)
            if self._gkinds and self._group_owned(owner):
                self._count_group_ref(owner, fid, (fid << PAIR_SHIFT) | dp_index, per_datapath)
        return fid

    def _count_group_ref(self, owner: Owner, fid: int, pair: int, per_datapath: bool) -> None:
        """One more reference by group owner ``owner`` to (fid, dp) (``pair``): counted for the
        flow, or as the owner's per-datapath exemption."""
        if per_datapath:
            exempt = self._gexempt.setdefault(owner, {})
            exempt[pair] = exempt.get(pair, 0) + 1
        else:
            self._grefs[fid] = self._grefs.get(fid, 0) + 1

    @property
    def epoch(self) -> object:
        """Stays the same (``is``) while no flow id is freed: flow ids :meth:`add_specs` returned
        under it still name the same flows."""
        return self._epoch

    def add_specs(
        self,
        dp_index: int,
        specs: Sequence[FlowSpec7],
        hint: str | None = None,
        owner: Owner | None = None,
        known: Sequence[int] | None = None,
    ) -> list[int]:
        """:meth:`add` of each ``(stage, priority, match, actions, controller_meter, per_datapath,
        sample_drop)`` of ``specs`` on ``dp_index``, all with ``hint`` and ``owner``; returns their
        flow ids, in order.  The same references, owner log and changes as one ``add`` each.

        ``known``: the ids an earlier call with the same ``specs`` returned under the current
        :attr:`epoch`: their keys are not built and looked up again (a load balancer's flows,
        the same on each of a hundred gateway routers sharing its group)."""
        if not specs:
            return []
        if not 0 <= dp_index < self._capacity:
            self._grow_for(dp_index)
        log, gowned = self._owner_log(owner) if owner is not None else (None, False)
        ndp, link = self._ndp, self._link
        out: list[int] = []
        for n, (stage, priority, match, actions, meter, per_dp, sample_drop) in enumerate(specs):
            fid = known[n] if known is not None else -1
            if fid < 0 or ndp[fid] == 0:  # (a flow emptied earlier in this batch: revived as add does)
                fid = self._spec_fid(stage, priority, match, actions, meter, sample_drop, hint)
            link(fid, dp_index)
            out.append(fid)
            if log is not None:
                pair = (fid << PAIR_SHIFT) | dp_index
                log.append(pair)
                if gowned:
                    self._count_group_ref(owner, fid, pair, per_dp)
        return out

    def add_specs_many(
        self,
        dp_indices: Sequence[int],
        specs: Sequence[FlowSpec7],
        hint: str | None,
        owners: Sequence[Owner],
    ) -> None:
        """:meth:`add_specs` of ``specs`` on each of the datapaths ``dp_indices``, with the owner at
        the same position of ``owners``: the same references, owner logs and changes, each flow's
        key built and looked up once and its datapaths set by one bitmap OR (a load balancer's
        flows on the hundreds of gateway routers of its group, in a full build).  A datapath
        listed twice (a load balancer a router has both itself and through a group) is one more
        reference each time, as two ``add_specs`` make: then it is ``add_specs`` datapath by
        datapath."""
        if not specs or not dp_indices:
            return
        if len(dp_indices) == 1 or len(set(dp_indices)) != len(dp_indices):
            for dp, owner in zip(dp_indices, owners, strict=True):
                self.add_specs(dp, specs, hint, owner)
            return
        hi = max(dp_indices)
        if min(dp_indices) < 0:
            raise IndexError(f"datapath index {min(dp_indices)} out of range")
        if hi >= self._capacity:
            self._grow_for(hi)
        packed = pack_unchecked(np.asarray(dp_indices, dtype=np.int64), self._capacity)
        fids: list[int] = []
        for stage, priority, match, actions, meter, _per_dp, sample_drop in specs:
            fid = self._spec_fid(stage, priority, match, actions, meter, sample_drop, hint)
            self._link_many(fid, packed)
            fids.append(fid)
        per_dp = [spec[5] for spec in specs]
        gowned = 0
        for dp, owner in zip(dp_indices, owners, strict=True):
            log, owned = self._owner_log(owner)
            pairs = [(fid << PAIR_SHIFT) | dp for fid in fids]
            log.extend(pairs)
            if owned:
                gowned += 1
                for k, pair in enumerate(pairs):
                    if per_dp[k]:
                        self._count_group_ref(owner, fids[k], pair, True)
        if gowned:
            grefs = self._grefs
            for k, fid in enumerate(fids):
                if not per_dp[k]:
                    grefs[fid] = grefs.get(fid, 0) + gowned

    def _spec_fid(self, stage: Stage, priority: int, match: str, actions: str, meter: str | None,
                  sample_drop: bool, hint: str | None) -> int:
        """The id of the flow an ``add_specs`` spec names: the existing flow, or one created (or
        revived, if emptied earlier in this batch) with ``hint``."""
        if self.drop_action is not None and sample_drop and "drop" in actions:
            actions = self._debug_drop(actions)
        key = (stage.name, priority, match, actions, meter)
        got = self._index.get(key)
        return self._create(key, stage, None, hint) if got is None or self._ndp[got] == 0 else got

    def _owner_log(self, owner: Owner) -> tuple[array[int], bool]:
        """``owner``'s log of (flow, datapath) pairs, made (and the owner registered as a group
        owner when it is one) on its first reference; and whether it is a group owner."""
        gowned = bool(self._gkinds) and self._group_owned(owner)
        log = self._owners.get(owner)
        if log is None:
            log = self._owners[owner] = array("q")
            if gowned:
                self._gowners_of(owner)[owner] = None
        return log, gowned

    def _group_owned(self, owner: Owner) -> bool:
        return type(owner) is tuple and bool(owner) and owner[0] in self._gkinds

    def _gowners_of(self, owner: Owner) -> dict[Owner, None]:
        """The (ordered) set of group owners of ``owner``'s scope."""
        scope = self._gscope(owner) if self._gscope is not None else None
        group = self._gowners.get(scope)
        if group is None:
            group = self._gowners[scope] = {}
        return group

    def _forget_group_owner(self, owner: Owner) -> None:
        group = self._gowners_of(owner)
        del group[owner]
        if not group:
            scope = self._gscope(owner) if self._gscope is not None else None
            del self._gowners[scope]

    def add_many(
        self,
        dp_indices: Iterable[int] | npt.NDArray[np.integer],
        stage: Stage,
        priority: int,
        match: str,
        actions: str,
        io_port: str | None = None,
        hint: str | None = None,
        controller_meter: str | None = None,
        owner: Owner | None = None,
        sample_drop: bool = True,
    ) -> int | None:
        """Add the flow on each distinct datapath of ``dp_indices`` (like one ``add`` each).

        Returns the flow id, or None (and does nothing) if ``dp_indices`` is empty.
        """
        dps = np.asarray(
            dp_indices if isinstance(dp_indices, np.ndarray) else list(dp_indices), dtype=np.int64
        ).reshape(-1)
        if dps.size == 0:
            return None
        lo, hi = int(dps.min()), int(dps.max())
        if lo < 0:
            raise IndexError(f"datapath index {lo} out of range")
        if hi >= self._capacity:
            self._grow_for(hi)
        if self.drop_action is not None and sample_drop and "drop" in actions:
            actions = self._debug_drop(actions)
        key = (stage.name, priority, match, actions, controller_meter)
        fid = self._index.get(key)
        if fid is None or self._ndp[fid] == 0:
            fid = self._create(key, stage, io_port, hint)
        if lo == hi:
            self._link(fid, lo)
            distinct = dps[:1]
        else:
            packed = pack_unchecked(dps, self._capacity)
            self._link_many(fid, packed)
            distinct = unpack(packed) if owner is not None else dps
        if owner is not None:
            log, gowned = self._owner_log(owner)
            log.frombytes(((fid << PAIR_SHIFT) | distinct).astype(np.int64).tobytes())
            if gowned:
                self._grefs[fid] = self._grefs.get(fid, 0) + int(distinct.size)
        return fid

    def _snapshot(self, fid: int) -> None:
        """Remember a reported flow's datapath set before its first change in this batch."""
        if fid not in self._dirty and self._reported[fid] and fid not in self._snap:
            n = self._ndp[fid]
            self._snap[fid] = self._single[fid] if n == 1 else self._bits.packed(self._row[fid]).tobytes() \
                if n >= 2 else None

    def _unchanged(self, fid: int) -> bool:
        """Is a dirty, still existing flow's datapath set the one it had before this batch?"""
        if fid not in self._snap:
            return False
        was = self._snap[fid]
        n = self._ndp[fid]
        if n == 1:
            return was == self._single[fid]
        return isinstance(was, bytes) and was == self._bits.packed(self._row[fid]).tobytes()

    def _link(self, fid: int, dp: int) -> None:
        """One more reference to (fid, dp)."""
        self._snapshot(fid)
        n = self._ndp[fid]
        if n >= 2:
            if self._bits.set_unchecked(self._row[fid], dp):
                self._ndp[fid] = n + 1
                self._dirty.add(fid)
            else:
                self._ref(fid, dp)
        elif n == 1:
            other = self._single[fid]
            if other == dp:
                self._ref(fid, dp)
                return
            self._promote(fid)
            self._bits.set_unchecked(self._row[fid], dp)
            self._ndp[fid] = 2
            self._dirty.add(fid)
        else:
            self._single[fid] = dp
            self._ndp[fid] = 1
            self._live += 1
            self._dirty.add(fid)

    def _promote(self, fid: int) -> None:
        """Move a single-datapath flow's datapath into a fresh bitmap row."""
        row = self._bits.alloc()
        self._bits.set_unchecked(row, self._single[fid])
        self._row[fid] = row
        self._single[fid] = -1

    def _link_many(self, fid: int, packed: U8Array) -> None:
        """References to (fid, dp) for the two or more datapaths set in ``packed``."""
        self._snapshot(fid)
        n = self._ndp[fid]
        if n == 0:
            self._row[fid] = self._bits.alloc()
            self._live += 1
        elif n == 1:
            self._promote(fid)
        added, already = self._bits.or_packed(self._row[fid], packed)
        for dp in already.tolist():
            self._ref(fid, dp)
        if added:
            self._ndp[fid] = n + added
            self._dirty.add(fid)

    def _ref(self, fid: int, dp: int) -> None:
        k = _pair(fid, dp)
        self._extra[k] = self._extra.get(k, 0) + 1

    # -- removing -------------------------------------------------------------

    def _unlink(self, fid: int, dp: int) -> None:
        """Drop one reference to (fid, dp)."""
        self._snapshot(fid)
        k = _pair(fid, dp)
        extra = self._extra.get(k)
        if extra is not None:
            if extra == 1:
                del self._extra[k]
            else:
                self._extra[k] = extra - 1
            return
        n = self._ndp[fid]
        if n == 1:
            if self._single[fid] != dp:
                return
            self._single[fid] = -1
            self._ndp[fid] = 0
            self._live -= 1
        elif n >= 2:
            row = self._row[fid]
            if not self._bits.clear(row, dp):
                return
            if n == 2:  # demote to a single datapath
                self._single[fid] = self._bits.first(row)
                self._bits.release(row)
                self._row[fid] = -1
            self._ndp[fid] = n - 1
        else:
            return
        self._dirty.add(fid)

    def remove_owner(self, owner: Owner) -> int:
        """Drop every reference ``owner`` made; returns how many there were."""
        log = self._owners.pop(owner, None)
        if log is None:
            return 0
        unlink = self._unlink
        if self._dead:  # (entries on purged datapaths were dropped already)
            dead = self._dead
            for k in log:
                if k & _DP_MASK not in dead:
                    unlink(k >> PAIR_SHIFT, k & _DP_MASK)
        else:
            for k in log:
                unlink(k >> PAIR_SHIFT, k & _DP_MASK)
        if self._gkinds and self._group_owned(owner):
            self._forget_group_owner(owner)
            self._release_group_refs(log, self._gexempt.pop(owner, None))
        return len(log)

    def _release_group_refs(self, keys: Iterable[int], exempt: dict[int, int] | None) -> None:
        """A group owner gives up its references ``keys`` (pair keys): each one counted in
        ``exempt`` (a per_datapath reference) uses up one exemption, every other one lowers its
        flow's group reference count (the entry goes with the last)."""
        grefs = self._grefs
        for k in keys:
            if exempt:
                e = exempt.get(k)
                if e:
                    exempt[k] = e - 1
                    continue
            fid = k >> PAIR_SHIFT
            n = grefs[fid] - 1
            if n:
                grefs[fid] = n
            else:
                del grefs[fid]

    def purge_datapaths(self, dps: Iterable[int], scopes: Collection[Hashable] | None = None) -> int:
        """Drop every reference any owner holds on the datapaths ``dps`` (deleted: the owners
        that are not theirs -- a load balancer, a port group... -- keep references the builders
        would no longer make); those bits must never be used again in this table.  Returns how
        many references there were.

        The logs of owners of ``group_owner_kinds`` are cleaned (their counts stay exact); the
        other owners keep their entries on those bits, which :meth:`remove_owner` then skips.
        ``scopes``: the scopes (``group_scope``) of ``dps``: group owners of any other scope hold
        no reference on them and are not scanned (e.g. the per-router flows of a load balancer on
        a router not deleted); None: every group owner is scanned."""
        targets = sorted(set(dps))
        if not targets:
            return 0
        self._dead.update(targets)
        n = 0
        if self._gkinds:
            groups = (self._gowners.values() if scopes is None
                      else [g for s in (None, *scopes) if (g := self._gowners.get(s)) is not None])
            small = frozenset(targets)
            for owner in [o for g in groups for o in g]:
                n += self._purge_log(owner, targets, small)
        single = np.frombuffer(self._single, dtype=np.intc)
        rows_of = np.frombuffer(self._row, dtype=np.intc)
        hits: list[tuple[int, int]] = []
        for dp in targets:
            hits += [(int(f), dp) for f in np.nonzero(single == dp)[0]]
            rows = self._bits.rows_with(dp)
            if rows.size:
                hits += [(int(f), dp) for f in np.nonzero(np.isin(rows_of, rows))[0]]
        del single, rows_of  # (no buffer export may outlive this: the arrays grow)
        for fid, dp in hits:
            n += 1 + self._extra.pop(_pair(fid, dp), 0)
            self._unlink(fid, dp)
        return n

    def _purge_log(self, owner: Owner, targets: list[int], target_set: frozenset[int]) -> int:
        """Drop a group owner's references on ``targets`` (log entries and counts)."""
        log = self._owners[owner]
        keep: array[int] | bytes
        if len(log) <= _SMALL_LOG:
            gone = [k for k in log if k & _DP_MASK in target_set]
            if not gone:
                return 0
            keep = array("q", [k for k in log if k & _DP_MASK not in target_set])
        else:
            a = np.frombuffer(log, dtype=np.int64)
            d = a & _DP_MASK
            hit = d == targets[0]  # (np.isin costs ~20 us a call: a few hundred owners per purge)
            for t in targets[1:]:
                hit |= d == t
            if not hit.any():
                return 0
            gone = a[hit].tolist()
            keep = a[~hit].tobytes()
            del a, d
        for k in gone:
            self._unlink(k >> PAIR_SHIFT, k & _DP_MASK)
        self._release_group_refs(gone, self._gexempt.get(owner))
        if keep:
            self._owners[owner] = keep if isinstance(keep, array) else array("q", keep)
        else:
            del self._owners[owner]
            self._forget_group_owner(owner)
        return len(gone)

    def has_owner(self, owner: Owner) -> bool:
        return owner in self._owners

    def owner_refs(self, owner: Owner) -> int:
        """Number of (flow, datapath) references ``owner`` holds."""
        log = self._owners.get(owner)
        return 0 if log is None else len(log)

    def clear(self) -> None:
        """Forget everything, including pending changes (capacity is kept)."""
        self.__init__(self._capacity, self._gkinds, self._gscope)  # type: ignore[misc]

    # -- changes --------------------------------------------------------------

    def take_changes(self) -> Changes:
        """Report and forget the flows changed since the last call.

        A flow both created and emptied within the batch is not reported at all.
        """
        added: list[int] = []
        modified: list[int] = []
        removed: list[int] = []
        for fid in sorted(self._dirty):
            reported = self._reported[fid]
            if self._ndp[fid] == 0:
                if reported:
                    removed.append(fid)
                self._release(fid)
            elif reported:
                modified.append(fid)
            else:
                self._reported[fid] = 1
                added.append(fid)
        self._dirty.clear()
        self._snap.clear()
        return Changes(added, modified, removed)

    def take_changed(self) -> tuple[list[int], list[tuple[Stage, FlowKey]]]:
        """Like :meth:`take_changes`, for a writer that works by flow identity: the ids of
        changed flows that still exist, and the (stage, key) of the flows that vanished."""
        alive: list[int] = []
        gone: list[tuple[Stage, FlowKey]] = []
        for fid in sorted(self._dirty):
            if self._ndp[fid] == 0:
                key = self._key[fid]
                if self._reported[fid] and key is not None:
                    gone.append((self._stages[key[0]], key))
                self._release(fid)
            elif not self._unchanged(fid):
                self._reported[fid] = 1
                alive.append(fid)
        self._dirty.clear()
        self._snap.clear()
        return alive, gone

    def pending_changes(self) -> int:
        """Number of dirty flows."""
        return len(self._dirty)

    def _release(self, fid: int) -> None:
        key = self._key[fid]
        if key is not None:
            del self._index[key]
        self._key[fid] = None
        self._hint[fid] = None
        self._io_port[fid] = None
        self._tags.pop(fid, None)
        self._reported[fid] = 0
        self._free.append(fid)
        self._epoch = object()

    # -- reading --------------------------------------------------------------

    def __len__(self) -> int:
        """Number of flows on at least one datapath."""
        return self._live

    def __contains__(self, fid: object) -> bool:
        return isinstance(fid, int) and 0 <= fid < len(self._ndp) and self._ndp[fid] > 0

    def __iter__(self) -> Iterator[int]:
        """Ids of the flows on at least one datapath, ascending."""
        ndp = self._ndp
        return (fid for fid in range(len(ndp)) if ndp[fid] > 0)

    def _check(self, fid: int) -> FlowKey:
        key = self._key[fid] if 0 <= fid < len(self._key) else None
        if key is None or self._ndp[fid] == 0:
            raise KeyError(f"no flow {fid}")
        return key

    def find(
        self, stage: Stage, priority: int, match: str, actions: str, controller_meter: str | None = None
    ) -> int | None:
        """The id of the flow with this identity, if it is on any datapath."""
        fid = self._index.get((stage.name, priority, match, actions, controller_meter))
        return fid if fid is not None and self._ndp[fid] > 0 else None

    def dp_count(self, fid: int) -> int:
        self._check(fid)
        return self._ndp[fid]

    def single_datapath(self, fid: int) -> int | None:
        """The flow's datapath if it is on exactly one (SB ``logical_datapath``), else None."""
        self._check(fid)
        return self._single[fid] if self._ndp[fid] == 1 else None

    def datapaths(self, fid: int) -> list[int]:
        """The flow's datapath indices, ascending."""
        self._check(fid)
        if self._ndp[fid] == 1:
            return [self._single[fid]]
        return cast(list[int], self._bits.members(self._row[fid]).tolist())

    def datapath_signature(self, fid: int) -> int | bytes:
        """Equal for two flows exactly when they are on the same datapaths: the datapath's index
        for a flow on one, else the packed bitmap (cheaper than :meth:`datapaths`)."""
        self._check(fid)
        if self._ndp[fid] == 1:
            return self._single[fid]
        return self._bits.packed(self._row[fid]).tobytes()

    def group_owned_only(self, fid: int) -> bool:
        """Were all of the flow's references made by owners of ``group_owner_kinds``?"""
        g = self._grefs.get(fid, 0)
        n = self._ndp[fid]
        if g < n or n == 0:
            return False
        if g == n and not self._extra:
            return True
        total = n
        extra = self._extra
        for dp in self.datapaths(fid):
            total += extra.get(_pair(fid, dp), 0)
        return g >= total

    def has_datapath(self, fid: int, dp: int) -> bool:
        self._check(fid)
        if self._ndp[fid] == 1:
            return self._single[fid] == dp
        return self._bits.test(self._row[fid], dp)

    def flow(self, fid: int, with_datapaths: bool = True) -> LFlow:
        """The flow's view (``with_datapaths=False``: its ``datapaths`` left empty)."""
        stage_name, priority, match, actions, meter = self._check(fid)
        stage = self._stages[stage_name]
        return LFlow(
            fid=fid,
            stage=stage,
            priority=priority,
            match=match,
            actions=actions,
            controller_meter=meter,
            io_port=self._io_port[fid],
            hint=self._hint[fid],
            datapaths=tuple(self.datapaths(fid)) if with_datapaths else (),
            tags=self._tags.get(fid, ()),
        )

    def flows(self) -> Iterator[LFlow]:
        return (self.flow(fid) for fid in self)

    # -- datapath groups ------------------------------------------------------

    def groups(self, flow_ids: Iterable[int] | None = None) -> DpGroups:
        """Deduplicated datapath groups for the flows on two or more datapaths.

        Over all flows, or only over ``flow_ids`` (others and single-datapath
        flows are left out).  Vectorised over the bitmap rows in place: see
        :func:`~ovn_northd_py.lflow.bitmap.dedup_rows`.
        """
        rows_all = np.array(self._row, dtype=np.int64)
        if flow_ids is None:
            fids = np.flatnonzero(rows_all >= 0).astype(np.int64)
        else:
            fids = np.unique(np.asarray(list(flow_ids), dtype=np.int64))
            fids = fids[(fids >= 0) & (fids < rows_all.size)]
            fids = fids[rows_all[fids] >= 0]
        unique, inverse = self._bits.dedup(rows_all[fids])
        return DpGroups(flow_ids=fids, group_ids=inverse, bitmaps=unique, capacity=self._capacity)

    def memory_bytes(self) -> int:
        """Rough bytes held by the table's own arrays (not the flow strings or dict)."""
        arrays = (self._single, self._row, self._ndp)
        owners = sum(log.itemsize * len(log) for log in self._owners.values())
        return self._bits.memory_bytes + sum(a.itemsize * len(a) for a in arrays) + owners
