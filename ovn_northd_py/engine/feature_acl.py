"""The ACL feature: NB ACL, Port_Group, Address_Set, Meter (+ Meter_Band) and ``Logical_Switch.acls``;
with 25.03's schemas also NB Sample, Sample_Collector, Sampling_App and SB ACL_ID.

These change no datapath or port, so they never recompute the northd node; their
handlers do work proportional to the change:

* flows (:func:`on_nb_flows`): the flows of an ACL on a switch are owned by
  ``("acl", acl uuid, switch key)`` (:mod:`ovn_northd_py.flows.acl_rules`); a change
  refreshes exactly the (ACL, switch) pairs it affects -- an ACL's content, a
  switch's own ACL list, a port group's ACL list or switch set.  A switch whose ACL
  facts change (first ACL, first stateful ACL; :mod:`ovn_northd_py.engine.ls_stateful`)
  also gets its datapath flows and its ports' DHCP-reply flows rebuilt, and, when its
  statefulness flips, every ACL on it.  Address sets feed no flow (matches name them).
  A meter change that makes a meter fair or not rebuilds the ACLs naming it; one that
  adds or removes a meter while some switch or router has a Copp recomputes (Copp
  meters become controller meters only when they exist).  25.03: a Sample or Sample_Collector
  change rebuilds the ACLs sampling with it, a Sampling_App change every sampled ACL; an ACL whose
  SB ACL_ID changed (allocated by the sb_sync node earlier in the same run, or written by the
  active instance while we stand by: :func:`on_acl_id_sb`) is rebuilt.
* SB (:meth:`AclSb.on_nb_sb`, full version :meth:`AclSb.sync_sb`): SB Port_Group rows and the
  port groups' ``_ip4``/``_ip6`` address sets of the changed groups, the changed NB
  address sets, the fair-meter copies of changed ACLs; a Meter change re-syncs the
  Meter table.  Port address changes reach the groups' address sets through
  :meth:`AclSb.on_northd_sb`, with the routers' ``_rtr_lb_`` sets.  The SB state (uuid -> name
  maps) lives in the :class:`AclSb` object of the graph.  SB ACL_ID (25.03) is synced whole
  (:mod:`ovn_northd_py.sync.acl_ids`) when an ACL that has or needs an id changes, and repaired on
  foreign edits.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..flows.acl_index import AclIndex, PgSwitchCount, nb_meters, pg_port_names, sampling_apps, sb_acl_ids
from ..flows.context import debug_drop_action
from ..flows.router_addrs import router_lb_vip_sets
from ..lflow.profile import FlowProfile
from ..northd.model import Datapath, Northd
from ..ovsdb.columns import opt
from ..ovsdb.connection import RowChange
from ..ovsdb.fastrow import set_values
from ..sync.acl_ids import has_acl_ids, persists, sync_acl_ids
from ..sync.address_sets import address_set_row, desired_address_sets, sync_address_sets, warn_name_clash
from ..sync.indexes import ADDRESS_SET_BY_NAME as IDX_ADDRESS_SET
from ..sync.indexes import METER_BY_NAME as IDX_METER
from ..sync.indexes import PORT_GROUP_BY_NAME as IDX_PORT_GROUP
from ..sync.meters import MeterSpec, acl_fair_meter, desired_meters, nb_meter_specs, sync_meter, sync_meters
from ..sync.port_groups import (
    PgDerived,
    desired_port_groups,
    pg_sb_groups,
    port_group_row,
    sync_port_groups,
)
from ..sync.rows import sync_one_row, update_set_column
from .engine import HandlerResult, handled
from .features import FlowFeatureCtx, SbFeatureCtx
from .flow_rebuild import rebuild_router_scope
from .ls_stateful import Work, apply
from .passthrough import PassCtx, set_atoms

# --------------------------------------------------------------------------- flows

SAMPLING_TABLES = frozenset({"Sample", "Sample_Collector", "Sampling_App"})  # NB 7.11 (25.03)


def _copp_in_use(nb: Any) -> bool:
    return any(opt(r.copp) is not None for t in ("Logical_Switch", "Logical_Router") for r in nb.rows(t).values())


def _row(rows: Any, key: str) -> Any:
    return rows.get(uuid.UUID(key))


def _meter_work(nb: Any, idx: AclIndex, w: Work) -> bool:
    """Meters: ACLs whose meter became (un)fair.  False: a recompute is needed (Copp meters)."""
    names, fair = nb_meters(nb)
    if names != idx.meters and _copp_in_use(nb):
        return False
    flipped = fair ^ idx.fair_meters
    if flipped:  # every ACL naming such a meter (memoised flows too, even where it is not applied now)
        for u, acl in nb.rows("ACL").items():
            if opt(acl.meter) in flipped:
                key = str(u)
                w.changed_acls.add(key)
                w.refresh.update((key, d) for d in idx.built.get(key, ()))
    idx.meters, idx.fair_meters = names, fair
    return True


def _pg_work(c: RowChange, nb: Any, nd: Northd, idx: AclIndex, w: Work) -> None:
    key = str(c.uuid)
    row = nb.rows("Port_Group").get(c.uuid)
    old_dps = idx.pg_dps.get(key, frozenset())
    old_acls = set(idx.pg_acls.get(key, ()))
    if row is None:
        new_dps: frozenset[str] = frozenset()
        new_acls: set[str] = set()
        idx.drop_pg(key)
        idx.pg_counts.pop(key, None)
    else:
        counts = idx.pg_counts.get(key)
        if counts is None:
            counts = idx.pg_counts[key] = PgSwitchCount()
        new_dps = counts.update(row, nd)
        new_acls = {str(a.uuid) for a in row.acls}
        idx.set_pg(key, row, new_dps)
    for a in old_acls | new_acls:
        dps = old_dps | new_dps if (a in old_acls) != (a in new_acls) else old_dps ^ new_dps
        w.refresh.update((a, d) for d in dps)
    if old_acls or new_acls:
        w.touched |= old_dps ^ new_dps if old_acls == new_acls else old_dps | new_dps


def on_nb_flows(changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    fctx, nd = h.fctx, h.nd
    idx = fctx.acl
    # Validate before changing anything.
    for c in changes:
        if c.table == "Logical_Switch":
            dp = nd.datapaths.get(str(c.uuid))
            if dp is None and str(c.uuid) in h.deleted:
                continue  # deleted: its flows go below
            if dp is None or not dp.is_switch:
                return False
    if any(c.table == "Sampling_App" for c in changes) and _debug_drop(h) != fctx.debug_drop:
        return False  # every drop flow changes (debug drop sampling's observation domain)
    w = Work()
    if any(c.table in ("Meter", "Meter_Band") for c in changes) and not _meter_work(h.nb, idx, w):
        return False
    _sampling_work(changes, h, w)
    if any(c.table == "ACL" for c in changes):
        _acl_id_work(h, w)
    for c in changes:
        if c.table == "ACL":
            key = str(c.uuid)
            w.changed_acls.add(key)
            dps = idx.built.get(key, set())
            w.refresh.update((key, d) for d in dps)
            w.touched |= dps  # its action may have become (or stopped being) stateful
        elif c.table == "Logical_Switch":
            if str(c.uuid) in h.deleted:  # the flows its ACLs had on it go
                key = str(c.uuid)
                w.refresh.update((a, key) for a in idx.dp_built.get(key, ()))
                for facts in (idx.ls_acls, idx.acl_facts, idx.dp_facts):
                    facts.pop(key, None)
                continue
            dp = nd.datapaths[str(c.uuid)]
            new = frozenset(str(a.uuid) for a in dp.nb.acls)
            old = idx.ls_acls.get(dp.key, frozenset())
            if new != old:
                w.refresh.update((a, dp.key) for a in new ^ old)
                w.touched.add(dp.key)
                idx.ls_acls[dp.key] = new
        elif c.table == "Port_Group":
            _pg_work(c, h.nb, nd, idx, w)
    for key in w.changed_acls:
        fctx.forget(key)
    apply(w, h)
    renamed = {str(c.uuid) for c in changes if c.table == "Address_Set" and c.event == "update" and "name" in c.columns}
    if renamed:
        _rebuild_nat_routers(renamed, h)
    return True


def _refresh_acls(keys: set[str], idx: AclIndex, w: Work) -> None:
    for key in keys:
        w.changed_acls.add(key)
        w.refresh.update((key, d) for d in idx.built.get(key, ()))


def _debug_drop(h: FlowFeatureCtx) -> str | None:
    """The debug drop action NB asks for now (NB_Global options, Sampling_App ``drop``)."""
    options: Mapping[str, str] = next((g.options for g in h.nb.rows("NB_Global").values()), {})
    return debug_drop_action(options, sampling_apps(h.nb))


def _sampling_work(changes: list[RowChange], h: FlowFeatureCtx, w: Work) -> None:
    """NB 7.11 sampling: a Sampling_App change refreshes every sampled ACL (their observation
    domains); a Sample or Sample_Collector change, the ACLs using them."""
    tables = {c.table for c in changes}
    if not tables & SAMPLING_TABLES:
        return
    idx = h.fctx.acl
    apps = sampling_apps(h.nb)
    all_sampled = "Sampling_App" in tables and apps != idx.sampling_apps
    idx.sampling_apps = apps
    samples = {c.uuid for c in changes if c.table == "Sample"}
    collectors = {c.uuid for c in changes if c.table == "Sample_Collector"}
    keys: set[str] = set()
    for u, acl in h.nb.rows("ACL").items():
        used = [*acl.sample_new, *acl.sample_est]
        if used and (all_sampled or any(
            s.uuid in samples or any(c.uuid in collectors for c in s.collectors) for s in used
        )):
            keys.add(str(u))
    _refresh_acls(keys, idx, w)


def _acl_id_work(h: FlowFeatureCtx, w: Work) -> None:
    """ACLs whose SB ACL_ID changed (allocated by the sb_sync node earlier in the run, or by the
    active instance) are refreshed."""
    idx = h.fctx.acl
    ids = sb_acl_ids(h.sb)
    changed = {k for k in ids.keys() | idx.acl_ids.keys() if ids.get(k) != idx.acl_ids.get(k)}
    idx.acl_ids = ids
    _refresh_acls(changed, idx, w)


def on_acl_id_sb(changes: list[RowChange], h: FlowFeatureCtx) -> HandlerResult:
    """``on_sb_flows``: SB ACL_ID rows changed (our own writes echoing, the active instance's writes
    seen by a standby, foreign edits): the ACLs whose id changed get their flows rebuilt."""
    if not h.sb_resynced and not any(c.table == "ACL_ID" for c in changes):
        return handled(False)
    w = Work()
    _acl_id_work(h, w)
    if not w.changed_acls:
        return handled(False)
    for key in w.changed_acls:
        h.fctx.forget(key)
    apply(w, h)
    return handled(True)


def _rebuild_nat_routers(address_sets: set[str], h: FlowFeatureCtx) -> None:
    """NAT rules name their ``allowed_ext_ips`` / ``exempted_ext_ips`` address sets in their
    matches: a renamed set rebuilds the routers of the rules that use it."""
    for router in h.nd.routers():
        for nat in router.nb.nat:
            used = {str(a.uuid) for a in (*nat.allowed_ext_ips, *nat.exempted_ext_ips)}
            if used & address_sets:
                rebuild_router_scope(router, h.fctx, h.table, set())
                break


# --------------------------------------------------------------------------- SB


@dataclass(slots=True)
class SbState:
    """What the SB handlers need to know about the previous NB contents."""

    as_names: dict[str, str] = field(default_factory=dict)  # NB Address_Set uuid -> name
    as_by_name: dict[str, str] = field(default_factory=dict)  # name -> NB Address_Set uuid
    pg_names: dict[str, str] = field(default_factory=dict)  # NB Port_Group uuid -> name
    pg_by_name: dict[str, str] = field(default_factory=dict)  # name -> NB Port_Group uuid
    pg_sb: dict[str, set[str]] = field(default_factory=dict)  # NB Port_Group uuid -> its SB Port_Group names
    sb_pg: dict[str, str] = field(default_factory=dict)  # SB Port_Group name -> NB Port_Group uuid
    pg_ports: dict[str, frozenset[str]] = field(default_factory=dict)  # NB Port_Group uuid -> port names
    port_pgs: dict[str, set[str]] = field(default_factory=dict)  # port name -> NB Port_Group uuids
    acl_meters: dict[str, str] = field(default_factory=dict)  # ACL uuid -> its fair meter copy
    txn: Any = None  # the transaction ``pending`` and ``pg_derived`` belong to
    pending: dict[tuple[str, str], Any] = field(default_factory=dict)  # (table, name) -> row inserted in txn
    # NB Port_Group uuid -> (its SB Port_Groups, its address sets) as computed in this transaction's
    # run (the model does not change within a run: a pod added to the cluster-wide group is seen by
    # the NB, northd and SB handlers, each reading the group's hundreds of ports otherwise).
    pg_derived: dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]] = field(default_factory=dict)
    pg_calc: dict[str, PgDerived] = field(default_factory=dict)  # NB Port_Group uuid -> its derived rows, kept

    def for_txn(self, txn: Any) -> None:
        if self.txn is not txn:
            self.txn, self.pending, self.pg_derived = txn, {}, {}

    def set_as(self, key: str, name: str) -> None:
        self.drop_as(key)
        self.as_names[key] = name
        self.as_by_name[name] = key

    def drop_as(self, key: str) -> None:
        name = self.as_names.pop(key, None)
        if name is not None and self.as_by_name.get(name) == key:
            del self.as_by_name[name]

    def set_pg(self, key: str, row: Any, sb_names: set[str], ports: frozenset[str] | None = None) -> None:
        """Remember NB Port_Group ``row`` (``ports``: the names of its ports, if known)."""
        if ports is None:
            ports = frozenset(pg_port_names(row))
        self.drop_pg(key, keep_ports=ports)
        self.pg_names[key] = row.name
        self.pg_by_name[row.name] = key
        self.pg_sb[key] = sb_names
        for n in sb_names:
            self.sb_pg[n] = key
        for name in ports - self.pg_ports.get(key, frozenset()):
            self.port_pgs.setdefault(name, set()).add(key)
        self.pg_ports[key] = ports

    def drop_pg(self, key: str, keep_ports: frozenset[str] = frozenset()) -> None:
        """Forget NB Port_Group ``key`` (but its ports in ``keep_ports``: :meth:`set_pg` again)."""
        name = self.pg_names.pop(key, None)
        if name is not None and self.pg_by_name.get(name) == key:
            del self.pg_by_name[name]
        for n in self.pg_sb.pop(key, set()):
            if self.sb_pg.get(n) == key:
                del self.sb_pg[n]
        old = self.pg_ports.pop(key, frozenset())
        for name in old - keep_ports:
            pgs = self.port_pgs.get(name)
            if pgs is not None:
                pgs.discard(key)
                if not pgs:
                    del self.port_pgs[name]
        if keep_ports:
            self.pg_ports[key] = old & keep_ports


_SET_COLUMNS: Mapping[str, str] = MappingProxyType({"Address_Set": "addresses", "Port_Group": "ports"})


def _alive(row: Any) -> Any:
    """``row``, or None if this transaction already deleted it (its columns are gone then)."""
    return row if row is not None and row._changes is not None else None


class AclSb:
    """The ACL feature's SB side: SB Port_Group, Address_Set and Meter, with what the SB hooks need
    to know about the previous NB contents (:class:`SbState`).  One per graph."""

    def __init__(self) -> None:
        self.state = SbState()

    def _sync(self, h: SbFeatureCtx, table: str, index: str, name: str, want: dict[str, Any] | None) -> None:
        self.state.for_txn(h.sb_txn)
        row = _alive(self.state.pending.get((table, name)) or h.sb_indexes[index].get(h.sb, name))
        col = _SET_COLUMNS.get(table)
        if row is not None and want is not None and col is not None and want.keys() == {"name", col}:
            # (found by its name: only the set differs; a mutate of what does)
            done = update_set_column(row, col, want[col])
            if done is not None:
                if done:
                    h.stats.bump(h.stats.updated, table)
                return
        if want is not None and col is not None and isinstance(want.get(col), frozenset):
            want = {**want, col: sorted(want[col])}  # (the IDL takes a list or set, not a frozenset)
        new = sync_one_row(h.sb_txn, table, row, want, h.stats)
        if row is None and new is not None:
            self.state.pending[(table, name)] = new

    def _sync_meter(self, h: SbFeatureCtx, name: str, spec: MeterSpec | None) -> None:
        self.state.for_txn(h.sb_txn)
        row = _alive(self.state.pending.get(("Meter", name)) or h.sb_indexes[IDX_METER].get(h.sb, name))
        new = sync_meter(h.sb_txn, row, name, spec, h.stats)
        if row is None and new is not None:
            self.state.pending[("Meter", name)] = new

    def _sync_pg(self, h: SbFeatureCtx, key: str, row: Any | None) -> None:
        """SB Port_Group rows and address sets of NB Port_Group ``key`` (``row``; None: deleted)."""
        old_name = self.state.pg_names.get(key)
        old_sb = self.state.pg_sb.get(key, set())
        groups, sets = self._pg_derived(h, key, row) if row is not None else ({}, {})
        for name in old_sb - groups.keys():
            self._sync(h, "Port_Group", IDX_PORT_GROUP, name, None)
        for name, ports in groups.items():
            self._sync(h, "Port_Group", IDX_PORT_GROUP, name, port_group_row(name, ports))
        if old_name is not None and (row is None or row.name != old_name):
            for suffix in ("_ip4", "_ip6"):
                self._sync_as(h, old_name + suffix)
        for name, addresses in sets.items():
            self._sync(h, "Address_Set", IDX_ADDRESS_SET, name, address_set_row(name, addresses))
            as_key = self.state.as_by_name.get(name)
            nb_set = _row(h.nb.rows("Address_Set"), as_key) if as_key is not None else None
            if nb_set is not None and h.warn is not None and row is not None:
                warn_name_clash(h.warn, nb_set, row.name)
        if row is None:
            self.state.drop_pg(key)
            self.state.pg_calc.pop(key, None)
        else:
            calc = self.state.pg_calc.get(key)
            self.state.set_pg(key, row, set(groups), calc.names if calc is not None else None)

    def _pg_derived(self, h: SbFeatureCtx, key: str, row: Any) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """(:func:`pg_sb_groups`, :func:`pg_address_sets`) of NB Port_Group ``row``, once per run."""
        self.state.for_txn(h.sb_txn)
        out = self.state.pg_derived.get(key)
        if out is None:
            calc = self.state.pg_calc.get(key)
            if calc is None:
                calc = self.state.pg_calc[key] = PgDerived()
            out = self.state.pg_derived[key] = calc.update(row, h.nd)
        return out

    def _sync_as(self, h: SbFeatureCtx, name: str, delete_unknown: bool = True) -> bool:
        """SB Address_Set ``name`` from what now defines it: an NB set, a port group, or (deleted) nothing.

        With ``delete_unknown`` false a name that is neither is left alone and False returned (sets
        northd defines otherwise, e.g. ``svc_monitor_mac``, are the full sync's)."""
        key = self.state.as_by_name.get(name)
        nb_set = _row(h.nb.rows("Address_Set"), key) if key is not None else None
        pg_key = self.state.pg_by_name.get(name[:-4]) if name.endswith(("_ip4", "_ip6")) else None
        pg = _row(h.nb.rows("Port_Group"), pg_key) if pg_key is not None else None
        if pg is not None:  # a port group's own set keeps its addresses; an NB set of that name is skipped
            if nb_set is not None and h.warn is not None:
                warn_name_clash(h.warn, nb_set, pg.name)
            sets = self._pg_derived(h, pg_key, pg)[1]  # type: ignore[arg-type]
            self._sync(h, "Address_Set", IDX_ADDRESS_SET, name, address_set_row(name, sets[name]))
            return True
        if nb_set is not None:
            self._sync(h, "Address_Set", IDX_ADDRESS_SET, name, address_set_row(name, set_values(nb_set, "addresses")))
            return True
        if not delete_unknown:
            return False
        self._sync(h, "Address_Set", IDX_ADDRESS_SET, name, None)
        return True

    def passthrough(self, table: str, u: str, modify: Mapping[str, Any], pc: PassCtx) -> list[dict[str, Any]] | None:
        """Pass-through (:mod:`.passthrough`) of an NB Address_Set's ``addresses`` change: SB
        Address_Set of the same name holds them verbatim (:meth:`_sync_as`) and no flow reads them,
        so the change is a ``mutate`` of that SB row by the addresses that join and leave.  Only
        for a set that :meth:`_sync_as` copies (no port group's set of that name), whose SB row
        holds exactly what the NB row holds before the change; else None (the engine's path)."""
        atoms = set_atoms(modify.get("addresses")) if table == "Address_Set" else None
        name = self.state.as_names.get(u)
        if atoms is None or name is None or self.state.as_by_name.get(name) != u:
            return None
        if name.endswith(("_ip4", "_ip6")) and name[:-4] in self.state.pg_by_name:
            return None
        nb_row = pc.nb.rows("Address_Set").get(uuid.UUID(u))
        sb_row = pc.sb_indexes[IDX_ADDRESS_SET].get(pc.sb, name)
        if nb_row is None or sb_row is None or nb_row.name != name:
            return None
        have = set_values(nb_row, "addresses")
        if set_values(sb_row, "addresses") != have:
            return None
        mutations: list[Any] = []
        joining = [a for a in atoms if a not in have]
        leaving = [a for a in atoms if a in have]
        if joining:
            mutations.append(["addresses", "insert", ["set", joining]])
        if leaving:
            mutations.append(["addresses", "delete", ["set", leaving]])
        if not mutations:
            return None
        return [{"op": "mutate", "table": "Address_Set", "where": [["_uuid", "==", ["uuid", str(sb_row.uuid)]]],
                 "mutations": mutations}]

    def sync_router_lb_sets(self, h: SbFeatureCtx, router: Datapath) -> None:
        """SB ``_rtr_lb_<key>_ip4`` / ``_ip6`` of ``router`` (its load balancers' VIPs inside its
        networks), after its load balancers or ports changed.  An NB set of that name wins."""
        want = router_lb_vip_sets(router)
        for fam in ("_ip4", "_ip6"):
            name = f"_rtr_lb_{router.tunnel_key}{fam}"
            if self.state.as_by_name.get(name) is not None:
                continue
            self._sync(h, "Address_Set", IDX_ADDRESS_SET, name, address_set_row(name, want[name]) if name in want else None)

    def _sync_meters(self, h: SbFeatureCtx) -> None:
        """The whole Meter table (meter changes are rare): NB meters and the fair copies."""
        want = desired_meters(h.nb, h.profile)
        seen: set[str] = set()
        for row in list(h.sb.rows("Meter").values()):
            if _alive(row) is None:
                continue
            name = row.name
            if name in seen or name not in want:
                sync_meter(h.sb_txn, row, name, None, h.stats)
            seen.add(name)
        for name, spec in want.items():
            self._sync_meter(h, name, spec)
        self._reset_acl_meters(h.nb, h.profile)

    def on_nb_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        nb = h.nb
        meters_synced = any(c.table in ("Meter", "Meter_Band") for c in changes)
        if meters_synced:  # rare: the whole table (fair copies included)
            self._sync_meters(h)
        meters = None
        for c in changes:
            key = str(c.uuid)
            if c.table == "Address_Set":
                row = nb.rows("Address_Set").get(c.uuid)
                old = self.state.as_names.get(key)
                self.state.drop_as(key)
                if row is not None:
                    self.state.set_as(key, row.name)
                    self._sync_as(h, row.name)
                if old is not None and (row is None or row.name != old):
                    self._sync_as(h, old)
            elif c.table == "Port_Group":
                self._sync_pg(h, key, nb.rows("Port_Group").get(c.uuid))
            elif c.table == "ACL" and not meters_synced:
                meters = nb_meter_specs(nb) if meters is None else meters
                row = nb.rows("ACL").get(c.uuid)
                fair = acl_fair_meter(row, meters, h.profile) if row is not None else None
                old = self.state.acl_meters.pop(key, None)
                if old is not None and (fair is None or fair[0] != old):
                    self._sync_meter(h, old, None)
                if fair is not None:
                    self.state.acl_meters[key] = fair[0]
                    self._sync_meter(h, fair[0], fair[1])
        if has_acl_ids(h.sb):
            ids = h.sb.rows("ACL_ID")
            acls = nb.rows("ACL")
            if any(c.table == "ACL" and (c.uuid in ids or ((a := acls.get(c.uuid)) is not None and persists(a)))
                   for c in changes):
                sync_acl_ids(h.sb_txn, h.sb, nb, h.stats, h.warn)
        return True

    def on_northd_sb(self, _changes: list[RowChange], h: SbFeatureCtx) -> bool:
        """Routers whose ports, NAT rules or load balancers changed: their ``_rtr_lb_`` address
        sets.  Ports that changed: the address sets (and SB rows) of the port groups holding them."""
        t = h.tracked
        if t is None:
            return False
        for key in t.routers_changed | t.lb_facts_routers:  # (the others' VIP sets stay)
            router = h.nd.datapaths.get(key)
            if router is not None:
                self.sync_router_lb_sets(h, router)
        pgs: set[str] = set()
        self.state.for_txn(h.sb_txn)
        for name in t.ports_changed | set(t.ports_deleted):
            for key in self.state.port_pgs.get(name, ()):
                pgs.add(key)
                calc = self.state.pg_calc.get(key)
                if calc is not None:  # (its next update looks at this port)
                    calc.mark((name,))
                    self.state.pg_derived.pop(key, None)
        rows = h.nb.rows("Port_Group")
        for key in pgs:
            self._sync_pg(h, key, _row(rows, key))
        return True

    def on_sb(self, changes: list[RowChange], h: SbFeatureCtx) -> bool:
        """Our SB rows changed (mostly our own writes echoing back): check each against the NB and repair."""
        sets: set[str] = set()
        groups: set[str] = set()
        meters = acl_ids = False
        for c in changes:
            if c.table in ("Meter", "Meter_Band"):
                meters = True
                continue
            if c.table == "ACL_ID":
                acl_ids = True
                continue
            idx_name = IDX_ADDRESS_SET if c.table == "Address_Set" else IDX_PORT_GROUP
            row = h.sb.rows(c.table).get(c.uuid)
            name = row.name if row is not None else h.sb_indexes[idx_name].key_of_uuid(c.uuid)
            if not isinstance(name, str):
                return False
            (sets if c.table == "Address_Set" else groups).add(name)
        index = h.sb_indexes[IDX_ADDRESS_SET]
        for name in sets:
            if not self._sync_as(h, name, delete_unknown=False) and _alive(index.get(h.sb, name)) is not None:
                return False  # a set neither an NB set nor a port group's (svc_monitor_mac...): the full sync's
        pg_rows = h.nb.rows("Port_Group")
        for name in groups:
            key = self.state.sb_pg.get(name)
            pg = _row(pg_rows, key) if key is not None else None
            ports = self._pg_derived(h, key, pg)[0].get(name) if pg is not None and key is not None else None
            self._sync(h, "Port_Group", IDX_PORT_GROUP, name, port_group_row(name, ports) if ports is not None else None)
        if meters:
            self._sync_meters(h)
        if acl_ids:
            sync_acl_ids(h.sb_txn, h.sb, h.nb, h.stats, h.warn)
        return True

    def _reset_acl_meters(self, nb: Any, profile: FlowProfile) -> None:
        meters = nb_meter_specs(nb)
        self.state.acl_meters = {}
        for acl in nb.rows("ACL").values():
            fair = acl_fair_meter(acl, meters, profile)
            if fair is not None:
                self.state.acl_meters[str(acl.uuid)] = fair[0]

    def sync_sb(self, h: SbFeatureCtx) -> None:
        """Full sync: SB Address_Set (NB sets, port groups' sets, ``svc_monitor_mac``, routers' load
        balancer VIPs), Port_Group and Meter."""
        nb, nd = h.nb, h.nd
        sync_address_sets(h.sb_txn, h.sb, desired_address_sets(nb, h.svc_monitor_mac, nd, h.warn,
                                                                 svc_monitor_macs=h.svc_monitor_macs), h.stats)
        sync_port_groups(h.sb_txn, h.sb, desired_port_groups(nb, nd), h.stats)
        sync_meters(h.sb_txn, h.sb, desired_meters(nb, h.profile), h.stats)
        sync_acl_ids(h.sb_txn, h.sb, nb, h.stats, h.warn)
        fresh = SbState()
        for u, a in nb.rows("Address_Set").items():
            fresh.set_as(str(u), a.name)
        for u, pg in nb.rows("Port_Group").items():
            fresh.set_pg(str(u), pg, set(pg_sb_groups(pg, nd)))
        meters, profile = nb_meter_specs(nb), h.profile
        for acl in nb.rows("ACL").values():
            fair = acl_fair_meter(acl, meters, profile)
            if fair is not None:
                fresh.acl_meters[str(acl.uuid)] = fair[0]
        self.state = fresh
