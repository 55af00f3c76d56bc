"""Incremental attach / detach of router ports: Logical_Router_Port rows added to or removed from
a router, and router-type switch ports added to or removed from a switch.

Handled without a recompute: router ports without gateway chassis / HA chassis group (no
chassisredirect port to create or drop), their router-type switch peers, and router-to-router
``peer`` links.  Anything ambiguous (a name in use, two switch ports claiming one router port, a
router port both named by a switch port and ``peer``-ed to another router port, a switch with
IPAM, a requested tunnel key) makes :func:`plan_router_ports` return None: the caller recomputes.

Contract (as for the rest of :mod:`.incremental`): planning validates and changes nothing;
:func:`apply_router_ports` cannot fail.  Tunnel keys of existing ports are never touched; new
ports get keys from their datapath's pool.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..ovsdb.columns import opt
from .addresses import AddressError, parse_lrp_networks
from .build import (
    KeyState,
    _make_lrp,
    _set_nat_addresses,
    lsp_port,
    refresh_router_derived,
    resolve_lrp_peer,
    update_lrp_in_place,
)
from .idpool import IdPoolExhausted
from .ipam import switch_has_ipam_keys, uses_dynamic_addresses
from .model import LR, Datapath, Northd, Port


@dataclass(slots=True)
class RouterPortPlan:
    lrp_added: list[tuple[Datapath, Any]] = field(default_factory=list)  # (router, LRP row)
    lrp_removed: list[Port] = field(default_factory=list)
    rlsp_added: list[tuple[Datapath, Any]] = field(default_factory=list)  # (switch, router-type LSP row)
    rlsp_removed: list[Port] = field(default_factory=list)
    relink: list[Port] = field(default_factory=list)  # existing router-type LSPs to rebuild (peer found / lost)

    def __bool__(self) -> bool:
        return bool(self.lrp_added or self.lrp_removed or self.rlsp_added or self.rlsp_removed)

    @property
    def added_lrp_uuids(self) -> set[str]:
        return {str(row.uuid) for _, row in self.lrp_added}


def _valid_networks(lrp: Any) -> bool:
    try:
        nets = parse_lrp_networks(lrp.mac, list(lrp.networks))
    except AddressError:
        return False
    return not nets.errors and (bool(nets.ipv4) or len(nets.ipv6) > 1)


def plan_router_ports(
    nd: Northd,
    keys: KeyState,
    lr_rows: Any,
    router_keys: set[str],
    rlsp_added: list[tuple[Datapath, Any]],
    rlsp_removed: list[Port],
    other_new_names: set[str],
    other_removed_names: set[str],
    new_dps: dict[str, Datapath] | None = None,
) -> RouterPortPlan | None:
    """``new_dps``: datapaths created in this batch (not registered yet; their pools come later).

    Three checks, each returning None for a recompute: which router ports come and go
    (:func:`_plan_router_membership`), the new names and pools (:func:`_names_and_pools_ok`),
    and who links to whom afterwards (:func:`_plan_links`)."""
    new_dps = new_dps or {}
    plan = RouterPortPlan(rlsp_added=list(rlsp_added), rlsp_removed=list(rlsp_removed))
    if not _plan_router_membership(nd, keys, lr_rows, router_keys, new_dps, plan):
        return None
    if not plan:
        return plan
    removed_names = {p.name for p in plan.lrp_removed} | {p.name for p in plan.rlsp_removed} | other_removed_names
    if not _names_and_pools_ok(nd, keys, plan, other_new_names, removed_names, new_dps):
        return None
    if not _plan_links(nd, plan, removed_names):
        return None
    return plan


def _plan_router_membership(nd: Northd, keys: KeyState, lr_rows: Any, router_keys: set[str],
                            new_dps: dict[str, Datapath], plan: RouterPortPlan) -> bool:
    """The router ports added to / removed from the routers whose ``ports`` changed, into ``plan``;
    False when one needs a recompute (a gateway port, a requested key, invalid networks)."""
    for key in router_keys:
        r = nd.datapaths.get(key) or new_dps.get(key)
        row = lr_rows.get(uuid.UUID(key))
        if r is None or row is None or r.kind != LR or (r.key not in keys.port_pools and key not in new_dps):
            return False
        now = {str(lrp.uuid): lrp for lrp in row.ports}
        have = {p.nb_key: p for p in r.ports if p.kind == "lrp"}
        if len(have) != len([p for p in r.ports if p.kind == "lrp"]):
            return False
        for u, p in have.items():
            if u not in now:
                if p.crp is not None:
                    return False
                plan.lrp_removed.append(p)
        for u, lrp in now.items():
            if u in have:
                continue
            if list(lrp.gateway_chassis) or opt(lrp.ha_chassis_group) is not None:
                return False
            if lrp.options.get("requested-tnl-key") or not _valid_networks(lrp):
                return False
            plan.lrp_added.append((r, lrp))
    return True


def _names_and_pools_ok(nd: Northd, keys: KeyState, plan: RouterPortPlan, other_new_names: set[str],
                        removed_names: set[str], new_dps: dict[str, Datapath]) -> bool:
    """Are the new ports' names free, their switches' key pools known and no IPAM in the way?"""
    new_names = [row.name for _, row in plan.lrp_added] + [row.name for _, row in plan.rlsp_added]
    seen = set(other_new_names)
    for name in new_names:
        if not name or name in seen:
            return False
        seen.add(name)
        held = nd.ports.get(name)
        if held is not None and name not in removed_names:
            return False
        winner = nd.name_winners.get(name)
        if held is None and winner is not None:
            return False  # a row that lost the name to another: let the recompute arbitrate
    for dp, lsp in plan.rlsp_added:
        if (dp.key not in keys.port_pools and dp.key not in new_dps) or lsp.options.get("requested-tnl-key"):
            return False
        if switch_has_ipam_keys(dp.nb.other_config) and uses_dynamic_addresses(nd):
            return False
    for p in plan.rlsp_removed:
        if switch_has_ipam_keys(p.dp.nb.other_config) and uses_dynamic_addresses(nd):
            return False
    return True


def _plan_links(nd: Northd, plan: RouterPortPlan, removed_names: set[str]) -> bool:
    """Who links to whom afterwards: the existing router-type switch ports to rebuild go to
    ``plan.relink``; False when the links are ambiguous (keep to simple cases)."""
    new_lrps = {row.name: row for _, row in plan.lrp_added}
    removed_lrps = {p.name for p in plan.lrp_removed}
    targets: dict[str, str] = {}  # router port name -> the switch port linking to it
    for _, lsp in plan.rlsp_added:
        rp = lsp.options.get("router-port")
        if not rp:
            continue
        if rp in targets:
            return False
        targets[rp] = lsp.name
        if rp in new_lrps:
            if opt(new_lrps[rp].peer):
                return False
            continue
        q = nd.ports.get(rp)
        if q is None or rp in removed_lrps:
            continue  # dangling (warned by lsp_port)
        if q.kind != "lrp" or opt(q.nb.peer):
            return False
        if q.peer is not None and q.peer.name not in removed_names:
            return False
    if new_lrps:
        for p in nd.ports.values():
            if p.is_router_lsp and p.peer is None and p.name not in removed_names:
                rp = p.nb.options.get("router-port")
                if rp in new_lrps:
                    if rp in targets or opt(new_lrps[rp].peer):
                        return False
                    targets[rp] = p.name
                    plan.relink.append(p)
        for name, row in new_lrps.items():
            peer = opt(row.peer)
            if peer and name not in targets:
                other = nd.ports.get(peer)
                if other is not None and other.kind == "lrp" and other.peer is not None and other.peer.kind == "lsp":
                    return False  # keep to simple cases
    for p in plan.lrp_removed:
        q = p.peer
        if q is not None and q.kind == "lsp" and q.name not in removed_names:
            plan.relink.append(q)
        if q is not None and q.kind == "lsp" and switch_has_ipam_keys(q.dp.nb.other_config) \
                and uses_dynamic_addresses(nd):
            return False
    return True


def _insert_lrp(r: Datapath, p: Port) -> None:
    """Where a full build puts it: router ports in NB uuid order, chassisredirect ports last."""
    r.ports.remove(p)
    i = 0
    while i < len(r.ports) and r.ports[i].kind == "lrp" and r.ports[i].nb_key < p.nb_key:
        i += 1
    r.ports.insert(i, p)


def apply_router_ports(nd: Northd, keys: KeyState, plan: RouterPortPlan, t: Any, warn: Any,
                       preassigned: dict[str, int] | None = None) -> None:
    """Apply a validated plan; record what changed in ``t`` (an incremental ``Tracked``).
    ``preassigned``: NB port uuid -> tunnel key already taken from its datapath's pool (the ports
    of a datapath created in the same batch, numbered as a full build would)."""
    a = _Apply(nd, keys, t, warn, preassigned if preassigned is not None else {})
    a.detach(plan)  # 1.
    a.add_router_ports(plan)  # 2.
    a.link_switch_ports(plan)  # 3.
    a.resolve_router_peers(plan)  # 4.
    a.refresh_derived()  # 5.


@dataclass(slots=True)
class _Apply:
    """One :func:`apply_router_ports` run, step by step."""

    nd: Northd
    keys: KeyState
    t: Any
    warn: Any
    preassigned: dict[str, int]
    touched_lrps: set[str] = field(default_factory=set)  # router ports whose derived values to refresh
    routers: set[str] = field(default_factory=set)  # routers whose derived values to refresh

    def drop(self, p: Port) -> None:
        nd, keys, t = self.nd, self.keys, self.t
        p.dp.ports.remove(p)
        if nd.ports.get(p.name) is p:
            del nd.ports[p.name]
        nd.name_winners.pop(p.name, None)
        pool = keys.port_pools.get(p.dp.key)
        if pool is not None:
            pool.free(p.tunnel_key)
        keys.port.pop(p.name, None)
        t.ports_deleted[p.name] = p.dp.key
        t.ports_changed.discard(p.name)
        t.dps_changed.add(p.dp.key)

    def register(self, p: Port, row: Any, table: str) -> bool:
        nd, keys, t = self.nd, self.keys, self.t
        try:
            k = self.preassigned.pop(p.nb_key, None)
            p.tunnel_key = k if k is not None else keys.port_pools[p.dp.key].allocate()
        except IdPoolExhausted as e:
            self.warn("port_tnl_key_exhausted", table, row.uuid, str(e), name=p.name)
            return False
        nd.ports[p.name] = p
        nd.name_winners[p.name] = (p.dp.key, p.nb_key)
        keys.port[p.name] = (p.dp.key, p.tunnel_key)
        t.ports_changed.add(p.name)
        t.ports_deleted.pop(p.name, None)
        t.dps_changed.add(p.dp.key)
        return True

    def detach(self, plan: RouterPortPlan) -> None:
        """The router-type switch ports and router ports that leave."""
        for q in plan.rlsp_removed:
            lrp = q.peer
            self.drop(q)
            self.t.attach_changed.add(q.dp.key)
            if lrp is not None and lrp.kind == "lrp" and lrp.peer is q:
                self.t.detached_peers[q.name] = lrp.dp.key
                lrp.peer = None
                lrp.options.pop("peer", None)
                self.touched_lrps.add(lrp.name)
        for p in plan.lrp_removed:
            qq = p.peer
            self.drop(p)
            self.routers.add(p.dp.key)
            if qq is not None and qq.kind == "lsp" and qq.peer is p:
                self.t.attach_changed.add(qq.dp.key)

    def add_router_ports(self, plan: RouterPortPlan) -> None:
        """New router ports (appended to their router; _make_lrp registers the name)."""
        for r, row in plan.lrp_added:
            is_gw = bool(r.nb.options.get("chassis"))
            made = _make_lrp(r, row, is_gw, self.nd, self.warn)
            if made is None:
                continue
            del self.nd.ports[made.name]
            if not self.register(made, row, "Logical_Router_Port"):
                r.ports.remove(made)
                continue
            _insert_lrp(r, made)
            self.touched_lrps.add(made.name)
            self.routers.add(r.key)

    def link_switch_ports(self, plan: RouterPortPlan) -> None:
        """Switch ports linking to router ports: new ones, and existing ones whose peer appeared or left."""
        nd, t = self.nd, self.t
        lrps = {p.name: p for p in nd.ports.values() if p.kind == "lrp"}
        for dp, row in plan.rlsp_added:
            q = lsp_port(dp, row, lrps, self.warn)
            dp.ports.append(q)
            if not self.register(q, row, "Logical_Switch_Port"):
                dp.ports.remove(q)
                continue
            _set_nat_addresses(q)
            t.attach_changed.add(dp.key)
            if q.peer is not None:
                self.touched_lrps.add(q.peer.name)
        for old in plan.relink:
            if nd.ports.get(old.name) is not old:
                continue
            new = lsp_port(old.dp, old.nb, lrps, self.warn)
            new.tunnel_key = old.tunnel_key
            old.dp.ports[old.dp.ports.index(old)] = new
            nd.ports[new.name] = new
            _set_nat_addresses(new)
            t.ports_changed.add(new.name)
            t.dps_changed.add(new.dp.key)
            t.attach_changed.add(new.dp.key)
            if new.peer is not None:
                self.touched_lrps.add(new.peer.name)

    def resolve_router_peers(self, plan: RouterPortPlan) -> None:
        """Router-to-router peers: of the new router ports, and of any router port naming a new
        port or one that left."""
        new_names = {row.name for _, row in plan.lrp_added}
        gone = {p.name for p in plan.lrp_removed}
        for q in list(self.nd.ports.values()):
            if q.kind != "lrp" or (q.peer is not None and q.peer.kind == "lsp"):
                continue
            if q.name in new_names or opt(q.nb.peer) in new_names or (q.peer is not None and q.peer.name in gone):
                resolve_lrp_peer(self.nd, q, self.warn)
                self.touched_lrps.add(q.name)

    def refresh_derived(self) -> None:
        """Values derived from the links."""
        nd, t = self.nd, self.t
        for name in self.touched_lrps:
            tp = nd.ports.get(name)
            if tp is None or tp.kind != "lrp":
                continue
            t.ports_changed |= update_lrp_in_place(tp)
            self.routers.add(tp.dp.key)
        for key in self.routers:
            rd = nd.datapaths.get(key)
            if rd is None:
                continue
            t.ports_changed |= refresh_router_derived(rd)
            t.routers_changed.add(key)
            t.dps_changed.add(key)
