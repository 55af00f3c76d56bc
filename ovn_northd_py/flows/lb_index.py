"""Which datapaths use which load balancers and NAT rules, as of the last build.

The incremental load-balancer / NAT handlers (:mod:`ovn_northd_py.engine.feature_lb`) need the
*previous* attachments: after ``lb-del`` or a group losing a member the NB rows only tell the
present.  This index is built with every full flow build and updated by the handlers, one
datapath at a time (:meth:`LbIndex.set_dp`), so it always describes the flows in the table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ..northd.model import Datapath, Northd
from ..ovsdb import fastrow

# uuid -> its text, remembered (the same rows' uuids are turned into text over and over).
_text = functools.lru_cache(maxsize=1 << 18)(str)


def _own_lbs(row: Any) -> frozenset[str]:
    return frozenset(_text(u) for u in fastrow.ref_uuids(row, "load_balancer"))


def dp_lb_uuids(dp: Datapath) -> frozenset[str]:
    """The load balancers of a switch or router: its own and its groups'."""
    nb = dp.nb
    own: frozenset[str] = fastrow.derived(nb, "own_lb_texts", _own_lbs)
    groups = nb.load_balancer_group
    if not groups:
        return own
    out = set(own)
    for grp in groups:
        out |= group_members(grp)
    out.update(_text(lb.uuid) for lb in dp.lbs_from_routers)  # install_ls_lb_from_router
    return frozenset(out)


def dp_group_uuids(dp: Datapath) -> frozenset[str]:
    return frozenset(_text(u) for u in fastrow.ref_uuids(dp.nb, "load_balancer_group"))


def dp_nat_uuids(dp: Datapath) -> frozenset[str]:
    return frozenset(str(n.uuid) for n in dp.nb.nat) if dp.is_router else frozenset()


@dataclass(slots=True)
class LbIndex:
    dp_lbs: dict[str, frozenset[str]] = field(default_factory=dict)  # datapath key -> LB uuids
    lb_dps: dict[str, set[str]] = field(default_factory=dict)  # LB uuid -> datapath keys
    dp_groups: dict[str, frozenset[str]] = field(default_factory=dict)  # datapath key -> LB group uuids
    group_dps: dict[str, set[str]] = field(default_factory=dict)  # LB group uuid -> datapath keys
    group_lbs: dict[str, frozenset[str]] = field(default_factory=dict)  # LB group (in use) -> LB uuids
    dp_nats: dict[str, frozenset[str]] = field(default_factory=dict)  # router key -> NAT uuids
    nat_dps: dict[str, set[str]] = field(default_factory=dict)  # NAT uuid -> router keys (a row may be shared)
    # SB Load_Balancer rows to compare at the next incremental flow sync (LB uuids).
    sb_dirty: set[str] = field(default_factory=set)

    # Datapath key -> (its NB row's stamp, its groups' members, the load balancers it has from
    # routers) when last recorded: a datapath whose row did not change since gets its groups' changes
    # only (:meth:`_set_dp_groups`).
    dp_seen: dict[str, tuple[Any, tuple[frozenset[str], ...], tuple[str, ...]]] = field(default_factory=dict)
    # A service joining a group on hundreds of datapaths: the members' difference is the same for
    # each of them, computed once.  Bounded, and holding what it keys on (identities are compared
    # only while the objects live).
    _diffs: dict[tuple[int, int], tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]] = \
        field(default_factory=dict, compare=False, repr=False)

    def set_dp(self, dp: Datapath | None, key: str) -> frozenset[str]:
        """Record datapath ``key``'s present attachments (``dp`` None: it is gone); returns the
        load balancers it gained or lost."""
        if dp is not None:
            moved = self._set_dp_groups(dp, key)
            if moved is not None:
                return moved
        self.dp_seen.pop(key, None)
        lbs = dp_lb_uuids(dp) if dp is not None else frozenset()
        groups = dp_group_uuids(dp) if dp is not None else frozenset()
        nats = dp_nat_uuids(dp) if dp is not None else frozenset()
        old = self.dp_lbs.get(key, frozenset())
        _move(self.lb_dps, key, old, lbs)
        _move(self.group_dps, key, self.dp_groups.get(key, frozenset()), groups)
        if dp is not None:
            for grp in dp.nb.load_balancer_group:
                self.group_lbs[str(grp.uuid)] = group_members(grp)
        for g in self.dp_groups.get(key, frozenset()) - groups:
            if g not in self.group_dps:
                self.group_lbs.pop(g, None)
        _move(self.nat_dps, key, self.dp_nats.get(key, frozenset()), nats)
        _store(self.dp_lbs, key, lbs)
        _store(self.dp_groups, key, groups)
        _store(self.dp_nats, key, nats)
        if dp is not None:
            st = fastrow.stamp(dp.nb)
            if st is not None:
                self.dp_seen[key] = (st, tuple(group_members(g) for g in dp.nb.load_balancer_group),
                                     tuple(_text(lb.uuid) for lb in dp.lbs_from_routers))
        return old ^ lbs

    def _set_dp_groups(self, dp: Datapath, key: str) -> frozenset[str] | None:
        """:meth:`set_dp` of a datapath whose NB row and load balancers from routers are as last
        recorded: only its groups' members may differ (a service added to the cluster-wide group:
        one load balancer more on each of its hundreds of switches and routers, not their whole
        lists again).  None: not known to be so (the full way)."""
        seen = self.dp_seen.get(key)
        if seen is None:
            return None
        st = fastrow.stamp(dp.nb)
        if st is None or st is not seen[0]:
            return None
        if tuple(_text(lb.uuid) for lb in dp.lbs_from_routers) != seen[2]:
            return None
        grps = dp.nb.load_balancer_group
        members = tuple(group_members(g) for g in grps)
        if len(members) != len(seen[1]):
            return None
        added: set[str] = set()
        removed: set[str] = set()
        for new, was in zip(members, seen[1], strict=True):
            if new is not was:
                more, fewer = self._members_diff(new, was)
                added |= more
                removed |= fewer
        self.dp_seen[key] = (st, members, seen[2])
        for g, m in zip(grps, members, strict=True):
            self.group_lbs[str(g.uuid)] = m
        if not added and not removed:
            return frozenset()
        old = self.dp_lbs.get(key, frozenset())
        own: frozenset[str] = fastrow.derived(dp.nb, "own_lb_texts", _own_lbs)
        gained = added - old
        lost = {lb for lb in removed - added if lb in old and lb not in own and lb not in seen[2]
                and not any(lb in m for m in members)}
        if not gained and not lost:
            return frozenset()
        lbs = (old | gained) - lost if lost else old | gained  # (one copy, not two, for a service added)
        for x in lost:
            users = self.lb_dps.get(x)
            if users is not None:
                users.discard(key)
                if not users:
                    del self.lb_dps[x]
        for x in gained:
            self.lb_dps.setdefault(x, set()).add(key)
        _store(self.dp_lbs, key, lbs)
        return frozenset(gained | lost)

    def _members_diff(self, new: frozenset[str], was: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
        """(``new - was``, ``was - new``), once per pair of member sets."""
        k = (id(new), id(was))
        hit = self._diffs.get(k)
        if hit is None or hit[0] is not new or hit[1] is not was:
            if len(self._diffs) >= 64:
                self._diffs.clear()
            hit = self._diffs[k] = (new, was, new - was, was - new)
        return hit[2], hit[3]

    def switches_of(self, lb: str, nd: Northd) -> list[Datapath]:
        out = []
        for key in sorted(self.lb_dps.get(lb, ())):
            dp = nd.datapaths.get(key)
            if dp is not None and dp.is_switch:
                out.append(dp)
        return out

    def routers_of(self, lb: str, nd: Northd) -> list[Datapath]:
        return [dp for key in sorted(self.lb_dps.get(lb, ())) if (dp := nd.datapaths.get(key)) is not None
                and dp.is_router]


def _move(index: dict[str, set[str]], key: str, old: frozenset[str], new: frozenset[str]) -> None:
    for x in old - new:
        users = index.get(x)
        if users is not None:
            users.discard(key)
            if not users:
                del index[x]
    for x in new - old:
        index.setdefault(x, set()).add(key)


def _store(index: dict[str, frozenset[str]], key: str, value: frozenset[str]) -> None:
    if value:
        index[key] = value
    else:
        index.pop(key, None)


def build_lb_index(nd: Northd) -> LbIndex:
    idx = LbIndex()
    for dp in nd.by_index:
        idx.set_dp(dp, dp.key)
    return idx


def _group_members(grp: Any) -> frozenset[str]:
    return frozenset(_text(u) for u in fastrow.ref_uuids(grp, "load_balancer"))


def group_members(grp: Any) -> frozenset[str]:
    """The uuids of the group's load balancers (kept with the NB row until it changes: every
    switch and router of a cluster-wide group reads them)."""
    members: frozenset[str] = fastrow.derived(grp, "lb_group_members", _group_members)
    return members
