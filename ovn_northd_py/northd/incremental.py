"""Incremental update of the northd model (datapaths, ports, tunnel keys, derived port values).

Handled without a recompute:

* switches and routers created: their datapaths get tunnel keys as a full build would hand them
  out, and their ports are added like the others;
* switches and routers deleted, when none of their ports stays linked to a port that survives the
  batch (a node leaving takes its switch, gateway router and the ports peering them together)
  and none is a gateway port, has an HA chassis group or QoS, or uses IPAM: their ports go, the
  other datapaths keep their tunnel keys and bits, and the deleted one's bit stays unused
  (``Northd.slots``);
* switch ports (any type but ``router``, no HA chassis group) added to, removed from, or updated
  on a switch -- except address changes on a switch with IPAM, which may move other ports'
  dynamic addresses;
* router ports attached or detached (a router's ``ports``) and router-type switch ports added or
  removed, without gateway chassis (:mod:`.router_ports`); router ports updated in place
  (addresses, options, ``peer``, ...: :data:`LRP_IN_PLACE`);
* NAT rule and load-balancer changes: the values router ports derive from them
  (``always-redirect``, peer switch ports' ``nat_addresses``) are refreshed;
* NB_Global counter bumps and the options northd fills in itself; our own write-backs (``up``,
  ``dynamic_addresses``);
* tables and columns the engine's features take (``flow_only_tables`` / ``flow_only_columns``:
  ACLs, routes, QoS, ...) change nothing here: their handlers rebuild flows and derived SB tables.

Anything else returns None, and the caller falls back to a full recompute.

Contract: on None the model has not been touched -- the changes are classified and validated
first (:func:`_classify`, :func:`_plan`), then applied (:func:`_apply`, which cannot fail).  On
success the returned ``Tracked`` names exactly what changed, for the downstream nodes (SB sync,
flows, NB write-back).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..ovsdb import fastrow
from ..ovsdb.columns import opt
from ..ovsdb.connection import RowChange, column_touched
from .addresses import AddressError, parse_lrp_networks
from .build import (
    CENTRALIZED_DGP_PEER,
    LPORT_MIRROR,
    LRP_PEER_CHECKS,
    QOS_PARAMS,
    QOS_QUEUES,
    TRANSIT_ROUTER_REMOTE_PORTS,
    KeyState,
    add_datapaths,
    garps_lb_vips,
    has_qos,
    ic_vxlan_mode,
    install_ls_lb_from_router,
    lport_mirrors,
    lsp_port,
    refresh_router_derived,
    resolve_lrp_peer,
    update_lrp_in_place,
)
from .idpool import IdPoolExhausted
from .ipam import switch_has_ipam_keys, uses_dynamic_addresses
from .lb_touch import LB_TABLES, lb_change_views, views_touch_router
from .model import LR, LS, Datapath, Northd, Port
from .router_ports import RouterPortPlan, apply_router_ports, plan_router_ports

# NB_Global columns that change on every `ovn-nbctl --wait` or that we write ourselves.
NB_GLOBAL_COUNTERS = frozenset(
    {"nb_cfg", "nb_cfg_timestamp", "sb_cfg", "sb_cfg_timestamp", "hv_cfg", "hv_cfg_timestamp"}
)
# NB_Global options northd adds itself when missing.
NORTHD_OPTIONS = frozenset({"mac_prefix", "svc_monitor_mac", "svc_monitor_mac_dst", "max_tunid",
                            "northd_internal_version"})
# Logical_Router columns whose changes alter values derived from the router's NAT / load balancers.
ROUTER_DERIVED_COLUMNS = frozenset({"nat", "load_balancer", "load_balancer_group"})
# Logical_Router_Port columns whose updates are applied in place (anything else: recompute).
LRP_IN_PLACE = frozenset({"mac", "networks", "options", "enabled", "ipv6_ra_configs", "ipv6_prefix",
                          "external_ids", "status", "peer"})
# Logical_Switch_Port columns we write back ourselves, or that change nothing we build.
LSP_WRITEBACK = frozenset({"up", "dynamic_addresses"})
# An update touching any of these may change the port's kind or identity: recompute.
LSP_STRUCTURAL = frozenset({"name", "type", "parent_name", "tag_request", "ha_chassis_group"})


@dataclass(slots=True)
class Tracked:
    """What an incremental run of the northd node changed."""

    ports_changed: set[str] = field(default_factory=set)  # added or updated, by logical_port
    ports_deleted: dict[str, str] = field(default_factory=dict)  # logical_port -> datapath key
    dps_changed: set[str] = field(default_factory=set)  # switches whose port set or port kinds changed
    # Routers one of whose ports changed in place (addresses, options): every flow of the router,
    # of its peers and of the switches it is attached to may read them.
    routers_changed: set[str] = field(default_factory=set)
    # Switches a router port was attached to or detached from: every port of theirs binds the
    # attached routers' addresses (and they bind its own).
    attach_changed: set[str] = field(default_factory=set)
    # Routers whose NAT rules or load balancers changed (SB address sets derived from their VIPs).
    lb_routers: set[str] = field(default_factory=set)
    # Of those, the ones whose load-balancer facts (VIPs in their networks...) the change may
    # touch (:mod:`.lb_touch`); on the others only the changed load balancers' own flows differ.
    lb_facts_routers: set[str] = field(default_factory=set)
    # Datapaths created (switches / routers added to NB): their SB rows are inserted, and every
    # feature sees them as an update of all its columns.
    dps_added: set[str] = field(default_factory=set)
    # Datapaths deleted (by key; the Datapath as it was, its bit in ``index``): their ports are in
    # ``ports_deleted``; every feature sees them as an update of all its columns.
    dps_deleted: dict[str, Datapath] = field(default_factory=dict)
    # Router-type switch ports that left their switch, by name: the router their router port is
    # on (whose datapath holds what the switch's other ports bound there).
    detached_peers: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.ports_changed or self.ports_deleted or self.dps_changed or self.routers_changed
                    or self.attach_changed or self.lb_routers or self.dps_added or self.dps_deleted)


def _is_plain(lsp: Any) -> bool:
    # (A "switch" port, peering another switch's: 25.03 models it in the recompute, build.py.)
    return lsp.type not in ("router", "switch") and not lsp.ha_chassis_group and not (
        opt(lsp.parent_name) and opt(lsp.tag_request) is not None and not lsp.tag
    )


def apply_nb_changes(nd: Northd, keys: KeyState, nb: Any, changes: list[RowChange], warn: Any,
                     sb: Any = None, *, flow_only_tables: frozenset[str] = frozenset(),
                     flow_only_columns: Mapping[str, frozenset[str]] | None = None,
                     profile: FlowProfile = DEFAULT_PROFILE) -> Tracked | None:
    """Apply NB row changes to the model incrementally; None when a recompute is needed.

    ``flow_only_tables`` / ``flow_only_columns`` (table -> columns): what the engine's features take
    (they feed only flows and derived SB tables, never the model: their handlers rebuild those).

    Three steps: :func:`_classify` the changes, :func:`_plan` (validate) what they do to the
    model -- both return None, having changed nothing, when a recompute is needed -- then
    :func:`_apply` the plan, which cannot fail."""
    # install_ls_lb_from_router: which switch gets which LB follows the topology (a full build
    # keeps it; the build sets ``lbs_from_routers`` when the option is on, so NB_Global's options
    # are read again only when they change).
    if nd.lbs_from_routers or (column_touched(changes, "NB_Global", "options") and install_ls_lb_from_router(nb)):
        return None
    batch = _classify(nb, changes, flow_only_tables, flow_only_columns or {})
    if batch is None:
        return None
    if _nothing_for_the_model(batch, changes):
        return Tracked()
    if profile.has(CENTRALIZED_DGP_PEER) and _touches_dgp_peers(nd, nb, batch):
        return None
    if profile.has(QOS_QUEUES) and _touches_qos(nd, nb, batch):
        return None
    if profile.has(LRP_PEER_CHECKS) and _touches_peers(nd, nb, batch):
        return None
    if profile.has(LPORT_MIRROR) and _touches_lport_mirrors(nd, nb, changes, batch):
        return None
    plan = _plan(nd, keys, nb, batch, sb, profile)
    if plan is None:
        return None
    return _apply(nd, keys, nb, changes, plan, warn, sb)


@dataclass(slots=True)
class _Batch:
    """The NB changes the model handles incrementally, by kind (:func:`_classify`)."""

    switch_changes: set[str] = field(default_factory=set)  # switches whose ``ports`` changed
    router_port_changes: set[str] = field(default_factory=set)  # routers whose ``ports`` changed
    lsp_updates: dict[str, frozenset[str]] = field(default_factory=dict)  # LSP uuid -> changed columns
    lrp_updates: dict[str, frozenset[str]] = field(default_factory=dict)  # LRP uuid -> changed columns
    created: dict[str, str] = field(default_factory=dict)  # NB uuid of a new switch / router -> its table
    deleted: set[str] = field(default_factory=set)  # NB uuids of switches / routers deleted


@dataclass(slots=True)
class _Plan:
    """What a batch does to the model, validated (:func:`_plan`); :func:`_apply` carries it out."""

    new_dps: dict[str, Datapath]
    removed: list[tuple[Datapath, Port]]  # plain switch ports removed
    added: list[tuple[Datapath, Any]]  # (switch, LSP row) of plain switch ports added
    updated: list[tuple[Datapath, Port, Any]]  # plain switch ports updated in place
    rplan: RouterPortPlan  # router ports and router-type switch ports attached / detached
    lrp_ports: list[Port]  # router ports updated in place
    lrp_updates: dict[str, frozenset[str]]
    gone: dict[str, Datapath] = field(default_factory=dict)  # datapaths deleted, by key


# The NB tables whose changes the steps below read themselves, not through the batch: NAT rules
# and load balancers (the values router ports derive from them, _apply), a router's derived
# columns, lport mirrors (_touches_lport_mirrors).
_READ_BEYOND_BATCH = frozenset({"NAT", "Load_Balancer", "Load_Balancer_Group", "Logical_Router", "Mirror"})


def _nothing_for_the_model(b: _Batch, changes: list[RowChange]) -> bool:
    """Changes only the features take (an address set, an ACL, a port group, our own NB_Global
    write's echo): nothing for the model to plan or apply."""
    return not (b.switch_changes or b.router_port_changes or b.lsp_updates or b.lrp_updates or b.created
                or b.deleted) and not any(c.table in _READ_BEYOND_BATCH for c in changes)


def _classify(nb: Any, changes: list[RowChange], flow_only: frozenset[str],
              feature_columns: Mapping[str, frozenset[str]]) -> _Batch | None:
    """Sort the changes by what they touch; None when one needs a recompute."""
    b = _Batch()
    ls_feature_columns = feature_columns.get("Logical_Switch", frozenset())  # e.g. acls: the features' handlers
    lr_feature_columns = feature_columns.get("Logical_Router", frozenset())  # e.g. static_routes
    lrp_feature_columns = feature_columns.get("Logical_Router_Port", frozenset())  # e.g. dhcp_relay
    for c in changes:
        if c.table == "NB_Global":
            if c.event != "update" or not _nb_global_change_is_ours(c, nb):
                return None
        elif c.table in ("Logical_Switch", "Logical_Router") and c.event == "create":
            b.created[str(c.uuid)] = c.table
        elif c.table in ("Logical_Switch", "Logical_Router") and c.event == "delete":
            b.deleted.add(str(c.uuid))
        elif c.table == "Logical_Switch":
            if c.event != "update" or not c.columns <= {"ports"} | ls_feature_columns:
                return None
            if "ports" in c.columns:
                b.switch_changes.add(str(c.uuid))
        elif c.table == "Logical_Router":
            # Columns that feed the engine's features (routes, policies, NAT, ...) and its port set.
            if c.event != "update" or not c.columns <= lr_feature_columns | {"ports"}:
                return None
            if "ports" in c.columns:
                b.router_port_changes.add(str(c.uuid))
        elif c.table == "Logical_Router_Port":
            if c.event != "update":
                continue  # an added / removed row: seen through its router's ``ports``
            cols = c.columns - lrp_feature_columns
            if not cols:
                continue  # feeds only a feature's flows
            if not cols <= LRP_IN_PLACE:
                return None
            b.lrp_updates[str(c.uuid)] = b.lrp_updates.get(str(c.uuid), frozenset()) | cols
        elif c.table == "Logical_Switch_Port":
            if c.event == "update":
                cols = b.lsp_updates.get(str(c.uuid), frozenset()) | c.columns
                b.lsp_updates[str(c.uuid)] = cols
        elif c.table in flow_only:
            continue  # feeds only flows / derived SB tables: handled by the feature's handlers
        # (NAT and load-balancer changes also refresh the router ports' derived values in _apply.)
        else:
            return None
    return b


def _touches_peers(nd: Northd, nb: Any, b: _Batch) -> bool:
    """Behaviour ``lrp_peer_checks`` (router ports peer only when both name the other; a switch
    port naming a router port with a peer of its own stays unconnected): may the batch change who
    peers with whom?  Then recompute.  Conservative: a router port's ``peer`` changed, or router
    ports / router-type switch ports come or go while some router port names a peer."""
    if any("peer" in cols for cols in b.lrp_updates.values()):
        return True
    if not (b.router_port_changes or b.switch_changes):
        return False
    lrps = nb.rows("Logical_Router_Port")
    if not any(opt(lrp.peer) for lrp in lrps.values()):
        return False
    if b.router_port_changes:
        return True
    lss = nb.rows("Logical_Switch")
    for key in b.switch_changes:
        row = lss.get(_as_uuid(key, lss))
        now = {lsp.name for lsp in row.ports if lsp.type == "router"} if row is not None else set()
        dp = nd.datapaths.get(key)
        had = {p.name for p in dp.ports if p.kind == "lsp" and p.is_router_lsp} if dp is not None else set()
        if now != had:
            return True
    return False


def _touches_remote_lrps(nd: Northd, nb: Any, b: _Batch, rplan: RouterPortPlan) -> bool:
    """Behaviour ``transit_router_remote_ports``: may the batch make a router port remote or not
    (:func:`.build.mark_remote_router_ports`; its router's flows follow)?  Then recompute: a router
    port added or removed with ``options:requested-chassis`` or remote, or one whose options
    changed and that has it (or was remote)."""
    if any(row.options.get("requested-chassis") for _, row in rplan.lrp_added) or any(
            p.sb_type == "remote" for p in rplan.lrp_removed):
        return True
    rows = nb.rows("Logical_Router_Port")
    for key, cols in b.lrp_updates.items():
        if "options" not in cols:
            continue
        row = rows.get(_as_uuid(key, rows))
        p = nd.ports.get(row.name) if row is not None else None
        if (row is not None and row.options.get("requested-chassis")) or (p is not None and p.sb_type == "remote"):
            return True
    return False


def _has_dgp(rows: Any) -> bool:
    """Do these NB router ports include a distributed gateway port (or one about to be)?"""
    return any(list(lrp.gateway_chassis) or opt(lrp.ha_chassis_group) is not None for lrp in rows)


def _touches_dgp_peers(nd: Northd, nb: Any, b: _Batch) -> bool:
    """Behaviour ``centralized_dgp_peer``: may the batch change which switch ports have a
    chassisredirect port (:func:`.build.centralized_dgp_peer`: a switch's localnet ports, a router's
    gateway ports, their peers) or what it copies (the switch port's addresses)?  Then recompute.
    Conservative: any port change on a switch attached to a router with a gateway port, any
    router-type switch port updated, any port change of a router with a gateway port."""
    if not (b.switch_changes or b.router_port_changes or b.lrp_updates or b.lsp_updates or b.created):
        return False  # (no port, switch or router in the batch: e.g. an address set, an ACL)
    gw_routers = {r.key for r in nd.routers() if any(p.kind == "lrp" and p.crp is not None for p in r.ports)}
    touched_switches: set[str] = set()
    for key in gw_routers:
        for p in nd.datapaths[key].ports:
            if p.kind == "lrp" and p.peer is not None and p.peer.kind == "lsp":
                touched_switches.add(p.peer.dp.key)
    if b.switch_changes & touched_switches or b.router_port_changes & gw_routers:
        return True
    lss = nb.rows("Logical_Switch")
    lrp_rows: dict[str, list[Any]] | None = None
    for key in b.switch_changes:  # a router-type port added to another switch may peer a gateway port
        row = lss.get(_as_uuid(key, lss))
        if row is None:
            return True
        for lsp in row.ports:
            if lsp.type == "router" and lsp.name not in nd.ports:
                if lrp_rows is None:
                    lrp_rows = _lrps_by_name(nb)
                if _may_peer_dgp(lsp, lrp_rows):
                    return True
    lrps = nb.rows("Logical_Router_Port")
    for key in b.lrp_updates:
        lrp = next((q for q in nd.ports.values() if q.nb_key == key and q.kind == "lrp"), None)
        if lrp is None or lrp.dp.key in gw_routers:
            return True
    for key in b.router_port_changes:
        row = nb.rows("Logical_Router").get(_as_uuid(key, lrps))
        if row is not None and _has_dgp(row.ports):
            return True
    lsps = nb.rows("Logical_Switch_Port")
    for key, cols in b.lsp_updates.items():
        if cols <= _WRITTEN_BACK:
            continue  # (our own write-back echoing: nothing the chassisredirect ports depend on)
        row = lsps.get(_as_uuid(key, lsps))
        if row is None or row.type == "router":
            return True
        lsp = nd.ports.get(row.name)
        if lsp is None or lsp.dp.key in touched_switches:
            return True
    for key, table in b.created.items():
        row = nb.rows(table).get(_as_uuid(key, lsps))
        if row is None:
            return True
        if table == "Logical_Router" and _has_dgp(row.ports):
            return True
        if table == "Logical_Switch" and any(lsp.type == "router" for lsp in row.ports):
            if lrp_rows is None:
                lrp_rows = _lrps_by_name(nb)
            if any(lsp.type == "router" and _may_peer_dgp(lsp, lrp_rows) for lsp in row.ports):
                return True
    return False


def _lrps_by_name(nb: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in nb.rows("Logical_Router_Port").values():
        out.setdefault(r.name, []).append(r)
    return out


def _may_peer_dgp(lsp: Any, lrp_rows: dict[str, list[Any]]) -> bool:
    """May a router-type switch port peer a distributed gateway port?  Only if the router port its
    ``router-port`` names (any NB row of that name) has gateway chassis or an HA chassis group."""
    rp = lsp.options.get("router-port")
    return bool(rp) and _has_dgp(lrp_rows.get(rp, []))


# Logical_Switch_Port columns northd itself writes back to NB (nb_sync): an update touching only
# these changes neither the chassisredirect ports of DGP peers nor the QoS queues.
_WRITTEN_BACK = frozenset({"up", "dynamic_addresses", "tag"})


_MIRROR_FLOW_ONLY = frozenset({"mirror_rules", "filter", "index", "external_ids"})


def _touches_lport_mirrors(nd: Northd, nb: Any, changes: list[RowChange], b: _Batch) -> bool:
    """Behaviour ``lport_mirror``: may the changes add or remove a mirror port
    (:func:`.build.make_mirror_ports`) or change the Mirror_Rules its flows read?  Then recompute (the
    declared fallback of lport mirrors).  Conservative, and nothing to check while NB has no lport
    mirror and the model no mirror port: a Mirror's ``type`` or ``sink`` (or name) changed, a switch
    port's ``mirror_rules`` changed, a switch port added or removed that is a mirror's sink or has an
    lport mirror."""
    # (None of the three below in the batch: nothing to look at, whatever NB holds -- the scan of
    # every port that says whether any mirror exists would be a fixed cost of every run.)
    if not (b.switch_changes or b.created) and not any(c.table == "Mirror" for c in changes) \
            and not any("mirror_rules" in cols for cols in b.lsp_updates.values()):
        return False
    sinks = {str(m.sink) for m in nb.rows("Mirror").values() if m.type == "lport"}
    if not sinks and not any(p.kind == "mirror" for p in nd.ports.values()):
        return False
    # A new mirror is attached to no port yet; a deleted one attached somewhere changes that port's
    # mirror_rules (a weak reference) too; rules, filters and indexes change flows only (the mirror
    # feature's handler).
    if any(c.table == "Mirror" and c.event == "update" and not c.columns <= _MIRROR_FLOW_ONLY for c in changes):
        return True
    if any("mirror_rules" in cols for cols in b.lsp_updates.values()):
        return True
    lss = nb.rows("Logical_Switch")
    for key in b.switch_changes | set(b.created):
        row = lss.get(_as_uuid(key, lss))
        dp = nd.datapaths.get(key)
        before = {p.name: p for p in dp.ports if p.kind == "lsp"} if dp is not None else {}
        now = {str(lsp.name): lsp for lsp in row.ports} if row is not None else {}
        for name in before.keys() ^ now.keys():
            row_of = now[name] if name in now else before[name].nb
            if name in sinks or lport_mirrors(row_of):
                return True
    return False


def _asks_qos(lsp: Any) -> bool:
    return any(k in lsp.options for k in QOS_PARAMS)


def _touches_qos(nd: Northd, nb: Any, b: _Batch) -> bool:
    """Behaviour ``qos_queues_global``: may the batch change a port's queue or QoS network
    (:func:`.build.assign_qos_queues`)?  Then recompute.  Conservative: any port change on a switch
    with a QoS port, any port with QoS parameters added or updated.  Looks at the batch's switches
    only (their ports)."""
    if not (b.switch_changes or b.lsp_updates or b.created):
        return False
    has: dict[str, bool] = {}

    def qos_switch(key: str) -> bool:  # a switch with a QoS port (in the model)
        v = has.get(key)
        if v is None:
            dp = nd.datapaths.get(key)
            v = has[key] = dp is not None and any(has_qos(p) for p in dp.ports)
        return v

    if any(qos_switch(key) for key in b.switch_changes):
        return True
    lss, lsps = nb.rows("Logical_Switch"), nb.rows("Logical_Switch_Port")
    for key in b.switch_changes:
        row = lss.get(_as_uuid(key, lss))
        if row is None or any(lsp.name not in nd.ports and _asks_qos(lsp) for lsp in row.ports):
            return True
    for key, cols in b.lsp_updates.items():
        if cols <= _WRITTEN_BACK:
            continue  # (our own write-back echoing: no queue depends on it)
        row = lsps.get(_as_uuid(key, lsps))
        if row is None or _asks_qos(row):
            return True
        p = nd.ports.get(row.name)
        if p is None or qos_switch(p.dp.key):
            return True
    for key, table in b.created.items():
        row = lss.get(_as_uuid(key, lss)) if table == "Logical_Switch" else None
        if row is not None and any(_asks_qos(lsp) for lsp in row.ports):
            return True
    return False


def _gone_datapaths(nd: Northd, nb: Any, b: _Batch, profile: FlowProfile) -> dict[str, Datapath] | None:
    """The datapaths of the switches and routers deleted in this batch; None when one needs a
    recompute: a gateway (chassisredirect) port, an HA chassis group, QoS (queues are numbered
    across switches) or IPAM with dynamic addresses on one of their ports, a port name another NB
    row also claims (it would get the name), or a row created again in the same batch."""
    gone: dict[str, Datapath] = {}
    for key in b.deleted:
        dp = nd.datapaths.get(key)
        if dp is None:
            continue  # (a disabled router, or one left without a tunnel key: no datapath)
        if key in b.created or key in b.switch_changes or key in b.router_port_changes:
            return None
        for p in dp.ports:  # (model values only: the NB row is gone)
            if p.kind not in ("lsp", "lrp") or p.crp is not None or p.ha_group or p.dynamic_addresses or (
                    profile.has(QOS_QUEUES) and has_qos(p)):
                return None
        gone[key] = dp
    if not gone:
        return gone
    names = {p.name for dp in gone.values() for p in dp.ports}
    for table in ("Logical_Switch_Port", "Logical_Router_Port"):
        for row in fastrow.plain_rows(nb.rows(table)).values():
            if fastrow.scalar(row, "name") in names:
                return None  # a row surviving (or moving) under one of their names
    return gone


def _unhonoured_request(nb_options: Any, key: int | None) -> bool:
    """Does an entity request a tunnel key (valid or not) other than the one it holds?"""
    req = nb_options.get("requested-tnl-key")
    if req is None:
        return False
    try:
        return int(req, 0) != key
    except ValueError:
        return False


def _frees_a_requested_key(nd: Northd, leaving: list[Port], gone: dict[str, Datapath]) -> bool:
    """Does a port or datapath leave while another on its datapath (or another datapath) requests
    a key it did not get?  The leaving one may free it: the recompute grants the request (OVN
    26.03's ovn-northd.at "port requested-tnl-key -- conflict resolved on deletion")."""
    dps = {p.dp.key for p in leaving}
    for key in dps:
        dp = nd.datapaths.get(key)
        if dp is None or key in gone:
            continue
        going = {p.name for p in leaving if p.dp.key == key}
        for q in dp.ports:
            if q.kind in ("lsp", "lrp") and q.name not in going and _unhonoured_request(q.nb.options, q.tunnel_key):
                return True
    if gone:
        for dp in nd.datapaths.values():
            if dp.key not in gone and _unhonoured_request(
                    dp.nb.other_config if dp.kind == LS else dp.nb.options, dp.tunnel_key):
                return True
    return False


def _gone_cleanly(gone: dict[str, Datapath], leaving: set[str], arriving: set[str]) -> bool:
    """Does every port of the deleted datapaths leave without a survivor linked to it (its peer
    on a deleted datapath too, or leaving in this batch), and no new port take one of their names?"""
    for dp in gone.values():
        for p in dp.ports:
            if p.name in arriving:
                return False
            q = p.peer
            if q is not None and q.dp.key not in gone and q.name not in leaving:
                return False
    return True


def _remove_gone(nd: Northd, keys: KeyState, gone: dict[str, Datapath], t: Tracked) -> None:
    """Take the deleted datapaths and their ports out of the model (their bits stay unused)."""
    for key, dp in gone.items():
        for p in dp.ports:
            if nd.ports.get(p.name) is p:
                del nd.ports[p.name]
            if nd.name_winners.get(p.name, ("",))[0] == key:
                del nd.name_winners[p.name]
            keys.port.pop(p.name, None)
            t.ports_deleted[p.name] = key
        nd.remove_datapath(dp)
        keys.dp.pop(key, None)
        keys.port_pools.pop(key, None)
        t.dps_deleted[key] = dp


def _scrub_gone(t: Tracked) -> None:
    """What the other steps recorded about the deleted datapaths (peers losing their links)."""
    gone = set(t.dps_deleted)
    names = {n for n, k in t.ports_deleted.items() if k in gone}
    t.ports_changed -= names
    for s in (t.dps_changed, t.routers_changed, t.attach_changed, t.lb_routers, t.lb_facts_routers):
        s -= gone


def _plan(nd: Northd, keys: KeyState, nb: Any, b: _Batch, sb: Any, profile: FlowProfile) -> _Plan | None:
    """Validate the batch against the model, changing nothing; None when a recompute is needed."""
    new_dps = _new_datapaths(nd, nb, b.created)
    if new_dps is None or (new_dps and sb is None):
        return None
    gone = _gone_datapaths(nd, nb, b, profile)
    if gone is None:
        return None
    # A switch with other_config:ic-vxlan_mode created or deleted (the first / the last): another
    # datapath key range.
    if (new_dps or gone) and ic_vxlan_mode(nb, profile) != keys.ic:
        return None
    gone_names = {p.name for dp in gone.values() for p in dp.ports}
    for key, dp in new_dps.items():
        (b.switch_changes if dp.kind == LS else b.router_port_changes).add(key)
    members = _switch_membership(nd, nb, b.switch_changes, new_dps)
    if members is None:
        return None
    removed, added, rlsp_added, rlsp_removed = members
    # A port with an HA chassis group (external) coming or going: the SB HA_Chassis_Group rows
    # follow the ports that use them (a group no port uses is deleted): recompute.
    if any(p.ha_group for _, p in removed) or any(
            lsp.type == "external" and opt(lsp.ha_chassis_group) is not None for _, lsp in added):
        return None
    updated = _lsp_updates(nd, nb, b.lsp_updates, added, rlsp_added)
    if updated is None:
        return None

    # IPAM: any address change on a switch with IPAM may move other ports' dynamic addresses.
    ipam_touched = [dp for dp, _ in removed] + [dp for dp, _ in added]
    ipam_touched += [dp for dp, _, lsp in updated if "addresses" in b.lsp_updates.get(str(lsp.uuid), ())]
    if any(switch_has_ipam_keys(dp.nb.other_config) for dp in ipam_touched) and (
        uses_dynamic_addresses(nd) or any(_asks_dynamic(lsp) for _, lsp in added)
        or any(_asks_dynamic(lsp) for _, _, lsp in updated)
    ):
        return None

    # Validate names (and that we have the switch's key pool) before touching anything.
    removed_names = {p.name for _, p in removed}
    seen: set[str] = set()
    for dp, lsp in added:
        if dp.key not in keys.port_pools and dp.key not in new_dps:
            return None
        name = lsp.name
        if not name or name in seen or (name in nd.ports and name not in removed_names):
            return None
        if lsp.options.get("requested-tnl-key"):
            return None
        seen.add(name)

    rplan = plan_router_ports(nd, keys, nb.rows("Logical_Router"), b.router_port_changes, rlsp_added, rlsp_removed,
                              {lsp.name for _, lsp in added}, removed_names | gone_names, new_dps)
    if rplan is None:
        return None
    if gone:
        leaving = removed_names | gone_names | {p.name for p in rplan.lrp_removed} | {
            p.name for p in rplan.rlsp_removed}
        if not _gone_cleanly(gone, leaving, {lsp.name for _, lsp in added} | {
                row.name for _, row in rplan.rlsp_added} | {row.name for _, row in rplan.lrp_added}):
            return None
    if profile.has(TRANSIT_ROUTER_REMOTE_PORTS) and _touches_remote_lrps(nd, nb, b, rplan):
        return None
    leaving_ports = [p for _, p in removed] + rplan.lrp_removed + rplan.rlsp_removed
    if _frees_a_requested_key(nd, leaving_ports, gone):
        return None
    lrp_updates = dict(b.lrp_updates)
    for u in rplan.added_lrp_uuids:
        lrp_updates.pop(u, None)  # built from its present row anyway
    lrp_ports = _lrp_updates(nd, nb, lrp_updates)
    if lrp_ports is None:
        return None
    return _Plan(new_dps, removed, added, updated, rplan, lrp_ports, lrp_updates, gone)


_Members = tuple[list[tuple[Datapath, Port]], list[tuple[Datapath, Any]], list[tuple[Datapath, Any]], list[Port]]


def _switch_membership(nd: Northd, nb: Any, switch_changes: set[str], new_dps: dict[str, Datapath]) -> _Members | None:
    """Port membership of the switches whose ``ports`` changed: (plain ports removed, plain ports
    added, router-type ports added, router-type ports removed); None when a recompute is needed."""
    ls_rows = nb.rows("Logical_Switch")
    removed: list[tuple[Datapath, Port]] = []
    added: list[tuple[Datapath, Any]] = []
    rlsp_added: list[tuple[Datapath, Any]] = []
    rlsp_removed: list[Port] = []
    claimed: dict[str, str] = {}  # lsp uuid -> switch key, for rows now in some changed switch
    for key in switch_changes:
        sdp = nd.datapaths.get(key) or new_dps.get(key)
        row = ls_rows.get(_as_uuid(key, ls_rows))
        if sdp is None or row is None or sdp.kind != LS:
            return None
        dp = sdp
        now = {str(lsp.uuid): lsp for lsp in row.ports}
        have = {p.nb_key: p for p in dp.ports if p.kind == "lsp"}
        for u, p in have.items():
            if u not in now:
                if p.is_router_lsp:
                    rlsp_removed.append(p)
                else:
                    removed.append((dp, p))
        for u, lsp in now.items():
            if u in claimed:
                return None  # one row in two switches: let the recompute arbitrate
            claimed[u] = key
            if u not in have:
                other = nd.ports.get(str(lsp.name))
                if other is not None and other.nb_key == u and other.dp.key not in switch_changes:
                    return None  # a row another switch lists too: let the recompute arbitrate
                if lsp.type == "router" and not lsp.ha_chassis_group:
                    rlsp_added.append((dp, lsp))
                elif not _is_plain(lsp):
                    return None
                else:
                    added.append((dp, lsp))
    # A row that left a switch is gone with it (rows of Logical_Switch_Port live by their
    # switches' references) unless another switch still lists it: a changed one (a move), or an
    # unchanged one, which the recompute arbitrates.
    lsp_rows = nb.rows("Logical_Switch_Port")
    for p in [q for _, q in removed] + rlsp_removed:
        if p.nb_key not in claimed and lsp_rows.get(_as_uuid(p.nb_key, lsp_rows)) is not None:
            return None
    return removed, added, rlsp_added, rlsp_removed


def _lsp_updates(nd: Northd, nb: Any, lsp_updates: dict[str, frozenset[str]], added: list[tuple[Datapath, Any]],
                 rlsp_added: list[tuple[Datapath, Any]]) -> list[tuple[Datapath, Port, Any]] | None:
    """Updates of switch ports that stay where they are: (switch, port, row) of those to rebuild;
    None when one needs a recompute."""
    lsp_rows = nb.rows("Logical_Switch_Port")
    updated: list[tuple[Datapath, Port, Any]] = []
    for u, cols in lsp_updates.items():
        if not cols - LSP_WRITEBACK:
            if "dynamic_addresses" in cols and not _dynamic_addresses_are_ours(nd, lsp_rows.get(_as_uuid(u, lsp_rows))):
                return None  # set by someone else: IPAM decides whether it stays
            if not ("up" in cols and _up_feeds_flows(nb, lsp_rows.get(_as_uuid(u, lsp_rows)))):
                continue
        if cols & LSP_STRUCTURAL:
            return None
        lsp = lsp_rows.get(_as_uuid(u, lsp_rows))
        if lsp is None:
            continue  # deleted in the same batch: handled as a removal
        bound = nd.ports.get(lsp.name)
        if bound is None or any(a[1] is lsp for a in rlsp_added):
            if any(a[1] is lsp for a in added) or any(a[1] is lsp for a in rlsp_added):
                continue
            return None  # not bound (e.g. it lost a name conflict): recompute
        p = bound
        if p.nb_key != u or p.kind != "lsp" or p.is_router_lsp or lsp.type == "switch":
            return None
        if "options" in cols and lsp.options.get("requested-tnl-key") is not None:
            return None
        updated.append((p.dp, p, lsp))
    return updated


def _apply(nd: Northd, keys: KeyState, nb: Any, changes: list[RowChange], plan: _Plan, warn: Any,
           sb: Any) -> Tracked:
    """Carry out a validated plan; returns what changed."""
    t = Tracked()
    _remove_gone(nd, keys, plan.gone, t)  # first: the steps below see only what stays
    preassigned: dict[str, int] = {}  # NB port uuid -> tunnel key, for the ports of new datapaths
    added = plan.added
    if plan.new_dps:
        missing = _add_new_datapaths(nd, keys, sb, plan.new_dps, t, preassigned, warn)
        added = [(dp, lsp) for dp, lsp in added if dp.key not in missing]
    _apply_switch_ports(nd, keys, plan, added, t, preassigned, warn)
    if plan.rplan:
        apply_router_ports(nd, keys, plan.rplan, t, warn, preassigned)
    routers = {r.key: r for r in _nat_lb_routers(nd, nb, changes)}
    t.lb_routers |= set(routers)
    lb_only: set[str] = set()  # routers reached only by load-balancer changes
    if routers:
        views = lb_change_views(changes, nb)
        opaque = {r.key for r in _nat_lb_routers(nd, nb, [c for c in changes if c.table not in LB_TABLES])}
        t.lb_facts_routers |= {k for k, r in routers.items()
                               if views is None or k in opaque or views_touch_router(views, r)}
        if views is not None:
            lb_only = set(routers) - opaque
    for p in plan.lrp_ports:
        if "peer" in plan.lrp_updates.get(p.nb_key, ()):
            old_peer = p.peer
            resolve_lrp_peer(nd, p, warn)
            if old_peer is not None and old_peer.kind == "lrp":
                t.routers_changed.add(old_peer.dp.key)
            if p.peer is not None:
                t.routers_changed.add(p.peer.dp.key)
        t.ports_changed |= update_lrp_in_place(p)
        t.routers_changed.add(p.dp.key)
        # Multicast groups read router ports' enabled / mcast_flood (the router's _MC_static, the
        # attached switch's _MC_mrouter_flood).
        t.dps_changed.add(p.dp.key)
        if p.peer is not None and p.peer.kind == "lsp":
            t.dps_changed.add(p.peer.dp.key)
        routers[p.dp.key] = p.dp
        lb_only.discard(p.dp.key)
    for key, router in routers.items():
        if key in lb_only and not garps_lb_vips(router):
            continue  # what its ports derive reads no load balancer
        t.ports_changed |= refresh_router_derived(router)
    # A router's NAT flows read its gateway ports' switches' localnet ports (a VLAN tag there
    # changes the gateway_mtu check): those routers are rebuilt whole.
    localnet = {dp.key for dp, p in plan.removed if p.sb_type == "localnet"}
    localnet |= {dp.key for dp, p, lsp in plan.updated if "localnet" in (p.sb_type, lsp.type)}
    localnet |= {dp.key for dp, lsp in added if lsp.type == "localnet"}
    t.routers_changed |= _attached_routers(nd, localnet)
    # A vtep port on a switch decides its distributed gateway ports' always-redirect.
    vtep = {dp.key for dp, p in plan.removed if p.sb_type == "vtep"}
    vtep |= {dp.key for dp, p, lsp in plan.updated if "vtep" in (p.sb_type, lsp.type)}
    vtep |= {dp.key for dp, lsp in added if lsp.type == "vtep"}
    for key in _attached_routers(nd, vtep):
        attached = nd.datapaths.get(key)
        if attached is not None:
            t.routers_changed.add(key)
            t.ports_changed |= refresh_router_derived(attached)
    _scrub_gone(t)
    return t


def _add_new_datapaths(nd: Northd, keys: KeyState, sb: Any, new_dps: dict[str, Datapath], t: Tracked,
                       preassigned: dict[str, int], warn: Any) -> set[str]:
    """Register the datapaths created in this batch and reserve their ports' tunnel keys in
    ``preassigned``; returns the keys of those left out (no tunnel key left)."""
    for dp in add_datapaths(nd, keys, sb, list(new_dps.values()), warn):
        t.dps_added.add(dp.key)
        t.dps_changed.add(dp.key)
        if dp.kind == LR:
            t.routers_changed.add(dp.key)
        # A full build numbers a new datapath's ports in NB uuid order (switch ports, router
        # ports); the add paths below take these keys.
        rows = sorted(dp.nb.ports, key=lambda r: str(r.uuid))
        new_pool = keys.port_pools[dp.key]
        for r in rows:
            preassigned[str(r.uuid)] = new_pool.allocate()
    return set(new_dps) - t.dps_added


def _apply_switch_ports(nd: Northd, keys: KeyState, plan: _Plan, added: list[tuple[Datapath, Any]], t: Tracked,
                        preassigned: dict[str, int], warn: Any) -> None:
    """Remove, update and add the plain switch ports of the plan."""
    for dp, p in plan.removed:
        dp.ports.remove(p)
        if nd.ports.get(p.name) is p:
            del nd.ports[p.name]
        pool = keys.port_pools.get(dp.key)
        if pool is not None:
            pool.free(p.tunnel_key)
        keys.port.pop(p.name, None)
        t.ports_deleted[p.name] = dp.key
        t.dps_changed.add(dp.key)
    for dp, p, lsp in plan.updated:
        new = lsp_port(dp, lsp, {}, warn)
        new.tunnel_key = p.tunnel_key
        new.dynamic_addresses = p.dynamic_addresses  # its addresses did not change (else: recompute)
        new.ha_group = p.ha_group  # ha_chassis_group and type are structural: unchanged
        dp.ports[dp.ports.index(p)] = new
        nd.ports[new.name] = new
        t.ports_changed.add(new.name)
        t.dps_changed.add(dp.key)  # switch-wide flows and groups may depend on any port
    for dp, lsp in added:
        p = lsp_port(dp, lsp, {}, warn)
        pool = keys.port_pools[dp.key]
        try:
            p.tunnel_key = preassigned.pop(p.nb_key) if p.nb_key in preassigned else pool.allocate()
        except IdPoolExhausted as e:
            warn("port_tnl_key_exhausted", "Logical_Switch_Port", lsp.uuid, str(e), name=lsp.name)
            continue
        dp.ports.append(p)
        nd.ports[p.name] = p
        nd.name_winners[p.name] = (dp.key, p.nb_key)
        keys.port[p.name] = (dp.key, p.tunnel_key)
        t.ports_changed.add(p.name)
        t.ports_deleted.pop(p.name, None)
        t.dps_changed.add(dp.key)


def _attached_routers(nd: Northd, switches: set[str]) -> set[str]:
    """The routers with a port peered with one of ``switches``."""
    out: set[str] = set()
    for key in switches:
        sw = nd.datapaths.get(key)
        for q in sw.ports if sw is not None else ():
            if q.is_router_lsp and q.peer is not None:
                out.add(q.peer.dp.key)
    return out


def _lrp_updates(nd: Northd, nb: Any, updates: dict[str, frozenset[str]]) -> list[Port] | None:
    """The router ports whose in-place updates we can apply; None when one needs a recompute
    (invalid addresses, a requested tunnel key other than its own, a port we do not bind, a
    switch with IPAM next to it)."""
    if not updates:
        return []
    rows = nb.rows("Logical_Router_Port")
    out: list[Port] = []
    for u, cols in updates.items():
        lrp = rows.get(_as_uuid(u, rows))
        if lrp is None:
            return None
        p = nd.ports.get(lrp.name)
        if p is None or p.kind != "lrp" or p.nb_key != u:
            return None
        req = lrp.options.get("requested-tnl-key")
        if req is not None and req != str(p.tunnel_key):
            return None
        if "mac" in cols or "networks" in cols:
            try:
                nets = parse_lrp_networks(lrp.mac, list(lrp.networks))
            except AddressError:
                return None
            if nets.errors or (not nets.ipv4 and len(nets.ipv6) <= 1):
                return None  # the recompute warns about it (and keeps the port, link-local only)
        q = p.peer
        if q is not None and q.kind == "lsp" and switch_has_ipam_keys(q.dp.nb.other_config):
            return None
        out.append(p)
    return out


def _new_datapaths(nd: Northd, nb: Any, created: dict[str, str]) -> dict[str, Datapath] | None:
    """Datapaths for the switches and routers created in this batch (not registered yet); None
    when one needs a recompute (a requested tunnel key, a disabled router, a row already gone)."""
    out: dict[str, Datapath] = {}
    for key, table in created.items():
        if key in nd.datapaths:
            return None
        rows = nb.rows(table)
        row = rows.get(_as_uuid(key, rows))
        if row is None:
            return None
        if table == "Logical_Switch":
            if row.other_config.get("requested-tnl-key"):
                return None
            out[key] = Datapath(key, LS, row.name, row, behaviours=nd.behaviours)
        else:
            if opt(row.enabled) is False or row.options.get("requested-tnl-key"):
                return None
            out[key] = Datapath(key, LR, row.name, row, behaviours=nd.behaviours)
    return out


def _nat_lb_routers(nd: Northd, nb: Any, changes: list[RowChange]) -> list[Datapath]:
    """Routers whose NAT rules or load balancers (own, or through a group) changed.

    (Compared as uuid objects: this runs for every load-balancer change, over every group's
    members and every router.)"""
    nats: set[Any] = set()
    lbs: set[Any] = set()
    groups: set[Any] = set()
    routers: set[str] = set()
    for c in changes:
        if c.table == "NAT":
            nats.add(c.uuid)
        elif c.table == "Load_Balancer":
            lbs.add(c.uuid)
        elif c.table == "Load_Balancer_Group":
            groups.add(c.uuid)
        elif c.table == "Logical_Router" and c.event == "update" and c.columns & ROUTER_DERIVED_COLUMNS:
            routers.add(str(c.uuid))
    if not (nats or lbs or groups or routers):
        return []
    if lbs:
        for g in nb.rows("Load_Balancer_Group").values():
            if not lbs.isdisjoint(fastrow.ref_uuids(g, "load_balancer")):
                groups.add(g.uuid)
    out: list[Datapath] = []
    for dp in nd.routers():
        r = dp.nb
        if (dp.key in routers or (nats and not nats.isdisjoint(fastrow.ref_uuids(r, "nat")))
                or (lbs and not lbs.isdisjoint(fastrow.ref_uuids(r, "load_balancer")))
                or (groups and not groups.isdisjoint(fastrow.ref_uuids(r, "load_balancer_group")))):
            out.append(dp)
    return out


def _asks_dynamic(lsp: Any) -> bool:
    return any("dynamic" in a.split() for a in lsp.addresses)


def _up_feeds_flows(nb: Any, lsp: Any) -> bool:
    """With NB_Global ``ignore_lsp_down=false`` a VIF's ARP/ND responder flows depend on its ``up``."""
    if lsp is None or lsp.type in ("router", "localport"):
        return False
    return any(g.options.get("ignore_lsp_down", "").lower() == "false" for g in nb.rows("NB_Global").values())


def _nb_global_change_is_ours(c: RowChange, nb: Any) -> bool:
    """Counter bumps, or options northd itself added (mac_prefix, ...) with the values it chose."""
    cols = c.columns - NB_GLOBAL_COUNTERS
    if not cols:
        return True
    if cols != {"options"} or c.old is None:
        return False
    row = nb.rows("NB_Global").get(c.uuid)
    if row is None:
        return False
    old, new = dict(c.old.get("options") or {}), dict(row.options)
    changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    # Only keys that were absent before (northd filling in its own defaults) are ours.
    return changed <= NORTHD_OPTIONS and all(k not in old for k in changed)


def _dynamic_addresses_are_ours(nd: Northd, lsp: Any) -> bool:
    """Does the row's dynamic_addresses hold what IPAM assigned (our own write echoing back)?"""
    if lsp is None:
        return True
    p = nd.ports.get(lsp.name)
    if p is None or p.nb_key != str(lsp.uuid):
        return True
    want = [p.dynamic_addresses] if p.dynamic_addresses else []
    return list(lsp.dynamic_addresses) == want


def _as_uuid(key: str, rows: Any) -> Any:
    return uuid.UUID(key)
