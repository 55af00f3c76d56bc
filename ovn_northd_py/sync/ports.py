"""SB Port_Binding, HA_Chassis_Group / HA_Chassis."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from types import MappingProxyType
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.addresses import AddressError, parse_ip_cidr, parse_lrp_networks
from ..northd.build import chassis_is_remote
from ..northd.model import Northd, Port
from ..ovsdb.columns import opt
from .dynamic_routing_ids import dynamic_routing_pb_options
from .rows import SyncStats, insert_row, norm, sync_table


def chassis_by_name(sb: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ch in sb.rows("Chassis").values():
        out[ch.name] = ch
        if ch.hostname:
            out.setdefault(ch.hostname, ch)
    return out


def sync_ha_groups(txn: Any, sb: Any, nd: Northd, stats: SyncStats) -> dict[str, Any]:
    """One SB HA_Chassis_Group per gateway port / NB HA group; HA_Chassis rows are its children."""
    chassis = chassis_by_name(sb)
    out: dict[str, Any] = {}
    existing = {g.name: g for g in sb.rows("HA_Chassis_Group").values()}
    for name, g in existing.items():
        if name not in nd.ha_groups:
            g.delete()
            stats.bump(stats.deleted, "HA_Chassis_Group")
    for name, want in nd.ha_groups.items():
        old = existing.get(name)
        is_new = old is None
        have: dict[str, Any] = {}
        if old is not None:
            have = {hc.external_ids.get("chassis-name", ""): hc for hc in old.ha_chassis}
        rows = []
        changed = is_new or len(have) != len(want.chassis)
        # (Rows with our own uuids, so their echo is known as ours; the HA_Chassis rows before the
        # group that names them: a transaction may not name a row with a given uuid before the
        # operation inserting it.)
        for hc in want.chassis:
            ch = chassis.get(hc.chassis_name)
            row = have.get(hc.chassis_name)
            if row is None:
                row = insert_row(txn, "HA_Chassis")
                row.external_ids = {"chassis-name": hc.chassis_name}
                row.priority = hc.priority
                row.chassis = [ch] if ch is not None else []
                changed = True
            else:
                if row.priority != hc.priority:
                    row.priority = hc.priority
                if norm(row.chassis) != norm([ch] if ch is not None else []):
                    row.chassis = [ch] if ch is not None else []
            rows.append(row)
        grp = old
        if grp is None:
            grp = insert_row(txn, "HA_Chassis_Group")
            grp.name = name
            stats.bump(stats.inserted, "HA_Chassis_Group")
        if is_new or norm(grp.external_ids) != norm(want.external_ids):
            grp.external_ids = want.external_ids
        if changed:
            grp.ha_chassis = rows
            if not is_new:
                stats.bump(stats.updated, "HA_Chassis_Group")
        out[name] = grp
    return out


def port_mirror_names(p: Port) -> list[str]:
    """The names of the NB mirrors a switch port's ``mirror_rules`` names (none for router ports)."""
    if p.kind != "lsp":
        return []
    return sorted({str(m.name) for m in getattr(p.nb, "mirror_rules", ())})


def sb_mirror_rows(sb: Any) -> dict[str, Any]:
    """name -> SB Mirror row (rows inserted by the transaction being built included)."""
    return {str(r.name): r for r in sb.rows("Mirror").values() if getattr(r, "name", None) is not None}


def pb_mirror_rules(p: Port, mirrors: dict[str, Any]) -> list[Any]:
    """The SB Mirror rows for a port's Port_Binding ``mirror_rules`` (see :mod:`.mirrors`)."""
    return [mirrors[n] for n in port_mirror_names(p) if n in mirrors]


def _with_plen(word: str) -> str:
    """A router port network as 25.03 writes it in ``mac``: with its prefix length."""
    if "/" in word:
        return word
    return f"{word}/128" if ":" in word else f"{word}/32"


def _parses(network: str) -> bool:
    try:
        parse_ip_cidr(network, lenient=True)
    except AddressError:
        return False
    return True


def pb_mac(p: Port, profile: FlowProfile = DEFAULT_PROFILE) -> list[str]:
    """A Port_Binding's ``mac``: a router port's (and its chassisredirect port's) is ``MAC networks``
    as NB writes them; with the ``lrp_mac_plen`` behaviour (25.03) as parsed (observed: the MAC in
    lower case, an IPv4 octet above 255 read modulo 256), each network with its prefix length."""
    if p.kind in ("lrp", "crp") and profile.has("lrp_mac_plen") and p.mac:
        try:
            nets = parse_lrp_networks(p.nb.mac, list(p.nb.networks))
        except AddressError:
            mac, *words = p.mac[0].split(" ")
            # (observed: a network that does not parse, e.g. ``foo/24``, is left out)
            return [" ".join([mac, *(_with_plen(n) for n in words if _parses(n))])]
        # (IPv4 then IPv6, without the link-local address the parser adds last)
        words = [f"{n.addr_s}/{n.plen}" for n in nets.ipv4] + [f"{n.addr_s}/{n.plen}" for n in nets.ipv6[:-1]]
        return [" ".join([nets.ea_s, *words])]
    return p.mac


def pb_options(p: Port, profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, str]:
    """A Port_Binding's ``options``.  With ``pb_router_port_acl`` (26.03), a router-type switch port
    whose peer is a distributed gateway port and which has ``options:enable_router_port_acl=true``
    also has ``enable_router_port_acl=true`` (observed on sid's reference; not with another peer)."""
    if (p.is_router_lsp and profile.has("pb_router_port_acl") and p.peer is not None and p.peer.crp is not None
            and p.nb.options.get("enable_router_port_acl", "").lower() == "true"):
        return {**p.options, "enable_router_port_acl": "true"}
    if p.kind in ("lrp", "crp"):
        dr = dynamic_routing_pb_options(p, profile)  # (25.03 on: options:dynamic-routing routers)
        if dr:
            return {**p.options, **dr}
    return p.options


def pb_nat_addresses(p: Port, profile: FlowProfile = DEFAULT_PROFILE) -> list[str]:
    """A Port_Binding's ``nat_addresses``; with ``exclude_router_ips_from_garp`` (26.03, observed) a
    router-type port with ``nat-addresses=router`` and ``exclude-router-ips-from-garp=true`` has no
    entry for its router port's own addresses (``man ovn-nb``)."""
    if (p.garp_entry is not None and profile.has("exclude_router_ips_from_garp")
            and p.nb.options.get("nat-addresses") == "router"
            and p.nb.options.get("exclude-router-ips-from-garp", "").lower() == "true"):
        return [a for a in p.nat_addresses if a != p.garp_entry]
    return p.nat_addresses


def pb_tag(p: Port, profile: FlowProfile = DEFAULT_PROFILE) -> list[int]:
    """A Port_Binding's ``tag``; with the ``localnet_tag_request`` behaviour (25.03, observed) a
    localnet port without parent_name has its non-zero ``tag_request`` as tag."""
    if p.tag is not None:
        return [p.tag]
    if p.sb_type == "localnet" and p.nb is not None and profile.has("localnet_tag_request"):
        req = opt(p.nb.tag_request)
        if req:
            return [int(req)]
    return []


def desired_pb(p: Port, dps: dict[Hashable, Any], groups: dict[str, Any], chassis: dict[str, Any],
               mirrors: dict[str, Any] | None = None, profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, Any]:
    rc = chassis.get(p.requested_chassis) if p.requested_chassis else None
    grp = groups.get(p.ha_group) if p.ha_group else None
    out = {
        "logical_port": p.name,
        "datapath": dps[p.dp.key],
        "tunnel_key": p.tunnel_key,
        "type": pb_type(p),
        "options": pb_options(p, profile),
        "mac": pb_mac(p, profile),
        "port_security": p.port_security,
        "parent_port": [p.parent_port] if p.parent_port is not None else [],
        "tag": pb_tag(p, profile),
        "external_ids": p.external_ids,
        "nat_addresses": pb_nat_addresses(p, profile),
        "ha_chassis_group": [grp] if grp is not None else [],
        "gateway_chassis": [],
        "requested_chassis": [rc] if rc is not None else [],
        "mirror_rules": pb_mirror_rules(p, mirrors) if mirrors else [],
    }
    if p.mirror_port is not None:  # (a "mirror" port, 26.03: SB schema 21.x has the column)
        out["mirror_port"] = [p.mirror_port]
    if p.sb_type == "remote" and p.kind == "lrp":
        # transit_router_remote_ports (25.03, observed): bound to its (remote) requested chassis.
        out["chassis"] = [rc] if rc is not None else []
    elif p.sb_type == "remote" and profile.has("remote_port_binding"):
        # 25.03 (observed): northd binds a remote port to its requested chassis when that chassis
        # is remote (other_config:is-remote=true), marked options:is-remote-nb-bound=true; else
        # unbinds it.
        bound = rc is not None and chassis_is_remote(rc)
        out["chassis"] = [rc] if bound else []
        if bound:
            out["options"] = {**out["options"], "is-remote-nb-bound": "true"}
    return out


# Port_Binding types northd writes (``man ovn-sb``); a switch port of any other type (``man
# ovn-nb`` names the known ones) gets the empty type, as observed on 23.03 and 25.03.
PB_TYPES = frozenset({"", "patch", "l3gateway", "chassisredirect", "localnet", "localport", "l2gateway", "vtep",
                      "external", "virtual", "remote"})


def pb_type(p: Port) -> str:
    """The Port_Binding type of ``p``: a switch port's known type, else ""; the ports northd makes
    itself keep theirs (26.03's lport-mirror ports ``mp-<switch>-<sink>``: ``mirror``)."""
    if p.kind == "mirror":
        return p.sb_type
    return p.sb_type if p.sb_type in PB_TYPES else ""


def unbind_from_remote(row: Any, want: dict[str, Any] | None, profile: FlowProfile = DEFAULT_PROFILE,
                       port: Port | None = None) -> None:
    """``remote_port_binding``: a switch port that is not (or no longer) remote loses a remote
    chassis binding (only northd binds there); a router port keeps it (observed: a transit
    router's port that stops being remote stays bound).  (A binding this run's transaction inserted
    has no ``chassis`` yet: a run that writes bindings incrementally and then syncs them all reads
    it.)"""
    if want is None or "chassis" in want or row is None or not profile.has("remote_port_binding"):
        return
    if port is not None and port.kind == "lrp":
        return
    bound = getattr(row, "chassis", None)
    if bound and chassis_is_remote(bound[0]):
        want["chassis"] = []


PB_ON_INSERT: Mapping[str, Any] = MappingProxyType({"up": (False,)})  # ovn-controller owns `up` afterwards


def sync_port_bindings(
    txn: Any, sb: Any, nd: Northd, dps: dict[Hashable, Any], groups: dict[str, Any], stats: SyncStats,
    profile: FlowProfile = DEFAULT_PROFILE,
) -> dict[Hashable, Any]:
    chassis = chassis_by_name(sb)
    mirrors = sb_mirror_rows(sb)
    desired: dict[Hashable, dict[str, Any]] = {
        p.name: desired_pb(p, dps, groups, chassis, mirrors, profile) for p in nd.ports.values()
    }
    if profile.has("remote_port_binding"):
        for row in sb.rows("Port_Binding").values():
            unbind_from_remote(row, desired.get(row.logical_port), profile, nd.ports.get(row.logical_port))
    return sync_table(
        txn, "Port_Binding", sb.rows("Port_Binding"), lambda r: r.logical_port, desired, stats,
        on_insert=PB_ON_INSERT,
    )




def _router_groups(nd: Northd) -> dict[str, str]:
    """Router key -> the key of its *router group*: routers connected to each other directly
    (router-to-router peers) or through switches (the reference's ``lrouter_group``)."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for router in nd.routers():
        find(router.key)
        for p in router.ports:
            peer = p.peer if p.kind == "lrp" else None
            if peer is None:
                continue
            if peer.kind == "lrp":
                parent[find(peer.dp.key)] = find(router.key)
            elif peer.kind == "lsp":
                for q in peer.dp.ports:
                    if q.kind == "lsp" and q.is_router_lsp and q.peer is not None and q.peer.kind == "lrp":
                        parent[find(q.peer.dp.key)] = find(router.key)
    return {k: find(k) for k in list(parent)}


def desired_ref_chassis(sb: Any, nd: Northd, profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, dict[str, Any]]:
    """SB HA_Chassis_Group name -> the chassis its ``ref_chassis`` lists (by uuid: row), as the
    reference computes it: for a gateway port's group of more than one chassis, the chassis
    where a switch port is bound (Port_Binding.chassis; behaviour ``ref_chassis_additional``,
    observed on 25.03: its ``additional_chassis`` too) whose switch is attached to a router of
    the gateway port's router group.  Every other group: none."""
    multi = {n for n, g in nd.ha_groups.items() if len(g.chassis) > 1}
    out: dict[str, dict[str, Any]] = {}
    if not multi:
        return out
    group_of = _router_groups(nd)
    names_of: dict[str, set[str]] = {}  # router group -> its gateway ports' HA groups
    for router in nd.routers():
        for p in router.ports:
            if p.kind == "crp" and p.ha_group in multi:
                names_of.setdefault(group_of[router.key], set()).add(p.ha_group)
    if not names_of:
        return out
    additional = profile.has("ref_chassis_additional")
    for pb in sb.rows("Port_Binding").values():
        bound = list(getattr(pb, "chassis", None) or [])[:1]  # (a binding inserted by this run: none)
        if additional:
            bound += list(getattr(pb, "additional_chassis", None) or [])
        if not bound:
            continue
        lsp = nd.ports.get(pb.logical_port)
        if lsp is None or lsp.kind != "lsp":
            continue
        attached = next((q.peer.dp for q in lsp.dp.ports if q.kind == "lsp" and q.is_router_lsp
                         and q.peer is not None and q.peer.kind == "lrp"), None)
        if attached is None:
            continue
        for name in names_of.get(group_of.get(attached.key, ""), ()):
            for ch in bound:
                out.setdefault(name, {})[str(ch.uuid)] = ch
    return out


def sync_ref_chassis(sb: Any, nd: Northd, groups: dict[str, Any] | None = None,
                     profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Write every SB HA_Chassis_Group's ``ref_chassis`` (:func:`desired_ref_chassis`); ``groups``:
    name -> row (default: SB's rows)."""
    if groups is None:
        groups = {g.name: g for g in sb.rows("HA_Chassis_Group").values()}
    want = desired_ref_chassis(sb, nd, profile)
    for name, row in groups.items():
        chassis = want.get(name, {})
        if sorted(str(r.uuid) for r in getattr(row, "ref_chassis", [])) != sorted(chassis):  # (new: unset)
            row.ref_chassis = [chassis[u] for u in sorted(chassis)]
