"""Which ACLs apply to which logical switch, and the switch facts the ACL stages read.

An ACL reaches a switch directly (``Logical_Switch.acls``) or through a
Port_Group (``Port_Group.acls``) that holds at least one port of the switch: the
ACL's flows then appear on every such switch, with the match as written
(``inport == @pg``, ``$pg_ip4``; observed on the reference).  One ACL row may be
referenced by several switches and groups; its flows are the same everywhere
except for the switch's statefulness.

A switch's own ACLs are read from its NB row (``dp.nb.acls``); the port-group
side lives in :class:`AclIndex`, built with the :class:`~.context.FlowCtx`
(:func:`build_acl_index`) and kept current by the ACL feature's incremental
handlers (:mod:`ovn_northd_py.engine.feature_acl`).

Switch facts (:func:`switch_acls`, memoised under the switch's key until
``ctx.forget(dp.key)``):

* ``has_acls``: an ACL of its own or through a port group;
* ``has_stateful_acl``: one of those ACLs is ``allow-related`` (``allow`` with a
  label, ``reject``... are not stateful on their own);
* ``has_lb_vip``: a load balancer with VIPs, directly or through a group;
* ``nf_groups`` (NB 7.18, 26.03): the Network_Function_Groups its ACLs name, with their
  direction (``from-lport`` or ``to-lport``), whatever the ACL's action.

A switch is *stateful* when it has a stateful ACL or a load balancer VIP: its ACL
stages then use the conntrack hints (``reg0[7]``..``reg0[10]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..northd.model import Datapath, Northd
from ..ovsdb import fastrow
from ..ovsdb.columns import opt

if TYPE_CHECKING:
    from .context import FlowCtx

ACL_FACTS = "acl_facts"  # FlowCtx memo kind of SwitchAcls, keyed by switch key


def smap_bool(options: Any, key: str, default: bool) -> bool:
    """``smap_get_bool``: with default true only "false" disables, with default false only "true" enables."""
    value = str(options.get(key, "")).lower()
    return value != "false" if default else value == "true"


@dataclass(slots=True)
class AclIndex:
    """The port-group side of ACL applicability, plus the NB-wide inputs of ACL flows.

    What the flows were built from, for the incremental handlers: ``built`` /
    ``dp_built`` the (ACL, switch) pairs holding flows (owner ``("acl", acl uuid,
    switch key)``), ``ls_acls`` each switch's own ACLs, ``acl_facts`` the switch
    facts its ACLs' flows used and ``dp_facts`` those its datapath flows used.
    """

    use_ct_inv_match: bool = True
    meters: frozenset[str] = frozenset()  # NB Meter names
    fair_meters: frozenset[str] = frozenset()  # NB Meter names with fair=true
    pgs: dict[str, Any] = field(default_factory=dict)  # pg uuid -> NB Port_Group row
    pg_acls: dict[str, tuple[str, ...]] = field(default_factory=dict)  # pg uuid -> its ACL uuids
    pg_dps: dict[str, frozenset[str]] = field(default_factory=dict)  # pg uuid -> switches of its ports
    pg_counts: dict[str, PgSwitchCount] = field(default_factory=dict)  # pg uuid -> pg_dps kept by delta
    dp_pgs: dict[str, set[str]] = field(default_factory=dict)  # switch key -> pgs with a port on it
    built: dict[str, set[str]] = field(default_factory=dict)  # acl uuid -> switches holding its flows
    dp_built: dict[str, set[str]] = field(default_factory=dict)  # switch key -> acls with flows on it
    ls_acls: dict[str, frozenset[str]] = field(default_factory=dict)  # switch key -> its own acl uuids
    acl_facts: dict[str, SwitchAcls] = field(default_factory=dict)  # switch key -> facts of its ACL flows
    dp_facts: dict[str, SwitchAcls] = field(default_factory=dict)  # switch key -> facts of its dp flows
    # NB 7.11 (25.03): NB Sampling_App id by type ("acl-new", "acl-est", "drop"), and the SB ACL_ID
    # of each persist-established ACL (acl uuid -> id; :mod:`ovn_northd_py.sync.acl_ids` allocates).
    sampling_apps: Mapping[str, int] = field(default_factory=dict)
    acl_ids: dict[str, int] = field(default_factory=dict)

    def mark_built(self, acl_key: str, dp_key: str) -> None:
        self.built.setdefault(acl_key, set()).add(dp_key)
        self.dp_built.setdefault(dp_key, set()).add(acl_key)

    def mark_removed(self, acl_key: str, dp_key: str) -> None:
        for m, k, v in ((self.built, acl_key, dp_key), (self.dp_built, dp_key, acl_key)):
            vals = m.get(k)
            if vals is not None:
                vals.discard(v)
                if not vals:
                    del m[k]

    def set_pg(self, key: str, row: Any, dps: frozenset[str]) -> None:
        """Record (or update) port group ``key``: its row, ACLs and switches."""
        self.drop_pg(key)
        self.pgs[key] = row
        self.pg_acls[key] = tuple(str(a.uuid) for a in row.acls)
        self.pg_dps[key] = dps
        for dp in dps:
            self.dp_pgs.setdefault(dp, set()).add(key)

    def drop_pg(self, key: str) -> None:
        self.pgs.pop(key, None)
        self.pg_acls.pop(key, None)
        for dp in self.pg_dps.pop(key, frozenset()):
            pgs = self.dp_pgs.get(dp)
            if pgs is not None:
                pgs.discard(key)
                if not pgs:
                    del self.dp_pgs[dp]

    def pg_acl_rows(self, dp_key: str) -> Iterator[Any]:
        """The ACL rows of the port groups with a port on switch ``dp_key``."""
        for pg in self.dp_pgs.get(dp_key, ()):
            row = self.pgs.get(pg)
            if row is not None:
                yield from row.acls


def _pg_port_names(pg: Any) -> tuple[str, ...]:
    d = pg.__dict__
    data = d.get("_data")
    datum = data.get("ports") if data is not None and not d.get("_changes") and not d.get("_mutations") else None
    if datum is None:
        return tuple(lsp.name for lsp in pg.ports)
    # The row's raw set, not ``pg.ports``: that sorts hundreds of rows by uuid in Python.
    rows = fastrow.plain_rows(pg._idl.tables["Logical_Switch_Port"].rows)
    return tuple(r.name for atom in datum.values if (r := rows.get(atom.value)) is not None)


def pg_port_names(pg: Any) -> tuple[str, ...]:
    """The names of NB Port_Group ``pg``'s ports, in no particular order (kept with the row until
    it changes)."""
    names: tuple[str, ...] = fastrow.derived(pg, "pg_port_names", _pg_port_names)
    return names


def pg_switches(pg: Any, nd: Northd) -> frozenset[str]:
    """Keys of the switches holding a port of Port_Group ``pg`` (ports found by name, as the reference does)."""
    out: set[str] = set()
    for name in pg_port_names(pg):
        port = nd.ports.get(name)
        if port is not None and port.kind == "lsp":
            out.add(port.dp.key)
    return frozenset(out)


@dataclass(slots=True)
class PgSwitchCount:
    """:func:`pg_switches` of one port group kept from one NB change of the group to the next: the
    switch each member port (by NB uuid) is on, and how many members each switch has.  A pod joining
    the cluster-wide group then costs the pod, not a pass over the group's thousands of names."""

    nd: Any = None  # the model the members were looked up in (a new one: counted again)
    on: dict[Any, str | None] = field(default_factory=dict)  # NB port uuid -> its switch key (None: none)
    counts: dict[str, int] = field(default_factory=dict)  # switch key -> members on it
    loose: set[Any] = field(default_factory=set)  # members on no switch (looked at again each time)

    def _count(self, u: Any, key: str | None, sign: int) -> None:
        if key is None:
            if sign > 0:
                self.loose.add(u)
            else:
                self.loose.discard(u)
            return
        n = self.counts.get(key, 0) + sign
        if n > 0:
            self.counts[key] = n
        else:
            self.counts.pop(key, None)

    def update(self, pg: Any, nd: Northd) -> frozenset[str]:
        """:func:`pg_switches` of ``pg`` now (its members that joined or left since the last call are
        looked at, and those that had no switch then)."""
        uuids = fastrow.raw_ref_uuids(pg, "ports")
        if uuids is None:
            self.nd = None
            return pg_switches(pg, nd)
        if nd is not self.nd:
            self.nd, self.on, self.counts, self.loose = nd, {}, {}, set()
        on = self.on
        for u in on.keys() - uuids:
            self._count(u, on.pop(u), -1)
        rows = fastrow.plain_rows(pg._idl.tables["Logical_Switch_Port"].rows)
        ports = nd.ports
        for u in [*self.loose, *(uuids - on.keys())]:
            r = rows.get(u)
            port = ports.get(r.name) if r is not None else None
            key = port.dp.key if port is not None and port.kind == "lsp" else None
            if u in on:
                self._count(u, on[u], -1)
            on[u] = key
            self._count(u, key, 1)
        return frozenset(self.counts)


def nb_meters(nb: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(names of every NB Meter, names of the fair ones)."""
    names: set[str] = set()
    fair: set[str] = set()
    for m in nb.rows("Meter").values():
        names.add(m.name)
        if opt(m.fair) is True:
            fair.add(m.name)
    return frozenset(names), frozenset(fair)


def sampling_apps(nb: Any) -> Mapping[str, int]:
    """NB Sampling_App (7.11): id by application type; {} without the table."""
    try:
        rows = nb.rows("Sampling_App")
    except (KeyError, AttributeError):
        return {}
    return {str(r.type): int(r.id) for r in rows.values()}


def sb_acl_ids(sb: Any) -> dict[str, int]:
    """SB ACL_ID (20.41): id by row uuid (the NB ACL's uuid); {} without the table (or SB)."""
    if sb is None:
        return {}
    try:
        rows = sb.rows("ACL_ID")
    except (KeyError, AttributeError):
        return {}
    return {str(u): int(r.id) for u, r in rows.items()}


def build_acl_index(nd: Northd, nb: Any, sb: Any = None) -> AclIndex:
    """The index for NB ``nb`` (anything with ``rows(table)``) over the northd model ``nd``; ACL ids
    from SB ``sb``."""
    idx = AclIndex()
    idx.sampling_apps = sampling_apps(nb)
    idx.acl_ids = sb_acl_ids(sb)
    for row in nb.rows("NB_Global").values():
        idx.use_ct_inv_match = smap_bool(row.options, "use_ct_inv_match", True)
        break
    idx.meters, idx.fair_meters = nb_meters(nb)
    for u, pg in nb.rows("Port_Group").items():
        idx.set_pg(str(u), pg, pg_switches(pg, nd))
    return idx


# --------------------------------------------------------------------------- switch facts


def _lbs_have_vips(lbs: Iterable[Any]) -> bool:
    return any(fastrow.peek(lb, "vips") for lb in lbs)


def ls_has_lb_vips(dp: Datapath) -> bool:
    """A load balancer with VIPs is attached to the switch, directly or through a group.  (Read
    without copies: every switch of a cluster-wide group of hundreds asks on each service added.)"""
    nb = dp.nb
    return _lbs_have_vips(fastrow.peek(nb, "load_balancer")) or any(
        _lbs_have_vips(fastrow.peek(g, "load_balancer")) for g in fastrow.peek(nb, "load_balancer_group"))


@dataclass(frozen=True, slots=True)
class SwitchAcls:
    has_acls: bool
    has_stateful_acl: bool
    has_lb_vip: bool
    # The highest ACL ``tier`` (NB 7.11) of the switch's from-lport, from-lport after-LB and
    # to-lport ACLs: a tier changes the matches of every ACL of its stage and the action stage.
    tiers: tuple[int, int, int] = (0, 0, 0)
    # (direction, Network_Function_Group uuid) of the ACLs naming a group, sorted (26.03).
    nf_groups: tuple[tuple[str, str], ...] = ()

    @property
    def stateful(self) -> bool:
        """ACLs use the conntrack hints: a stateful ACL or a load balancer VIP."""
        return self.has_stateful_acl or self.has_lb_vip


def stateless_acl_with_lb(dp: Datapath, ctx: FlowCtx) -> bool:
    """Behaviour ``stateless_acl_with_lb`` (26.03): the switch's
    ``other_config:enable-stateless-acl-with-lb=true`` (``man ovn-nb``: stateless ACLs work with
    load balancers, ``ct.inv`` packets not dropped)."""
    return ctx.profile.has("stateless_acl_with_lb") and smap_bool(
        dp.nb.other_config, "enable-stateless-acl-with-lb", False)


def switch_acl_rows(dp: Datapath, ctx: FlowCtx) -> dict[str, Any]:
    """acl uuid -> row of every ACL applied to switch ``dp`` (its own, then its port groups')."""
    out: dict[str, Any] = {fastrow.uuid_str(a): a for a in dp.nb.acls}
    for a in ctx.acl.pg_acl_rows(dp.key):
        out.setdefault(fastrow.uuid_str(a), a)
    return out


def _tiers(rows: list[Any]) -> tuple[int, int, int]:
    top = [0, 0, 0]
    table = getattr(rows[0], "_table", None) if rows else None
    if table is not None and "tier" not in table.columns:  # an NB schema without tiers (before 7.11)
        return (0, 0, 0)
    for a in rows:
        t = int(getattr(a, "tier", 0) or 0)
        if t:
            i = 2 if a.direction != "from-lport" else 1 if smap_bool(a.options, "apply-after-lb", False) else 0
            top[i] = max(top[i], t)
    return (top[0], top[1], top[2])


def acl_nf_group(acl: Any) -> Any:
    """The Network_Function_Group row ACL ``acl`` redirects to (NB 7.18), or None."""
    return opt(getattr(acl, "network_function_group", None))


def _nf_groups(rows: Iterable[Any]) -> tuple[tuple[str, str], ...]:
    out = set()
    for a in rows:
        g = acl_nf_group(a)
        if g is not None:
            out.add((str(a.direction), str(g.uuid)))
    return tuple(sorted(out))


def _switch_acls(dp: Datapath, ctx: FlowCtx) -> SwitchAcls:
    rows = switch_acl_rows(dp, ctx)
    return SwitchAcls(
        has_acls=bool(rows),
        has_stateful_acl=any(a.action == "allow-related" for a in rows.values()),
        has_lb_vip=ls_has_lb_vips(dp),
        tiers=_tiers(list(rows.values())),
        nf_groups=_nf_groups(rows.values()) if ctx.profile.has("network_function") else (),
    )


def switch_acls(dp: Datapath, ctx: FlowCtx) -> SwitchAcls:
    """The ACL facts of switch ``dp`` (memoised: ``ctx.forget(dp.key)`` when they may change)."""
    return ctx.cached(ACL_FACTS, dp.key, lambda: _switch_acls(dp, ctx))
