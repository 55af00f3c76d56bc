"""Build the northd model (datapaths, ports, HA groups, tunnel keys) from NB and SB.

Malformed NB rows are reported once through ``WarnOnce`` (naming the row) and
skipped; everything else is still built.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..log import WarnOnce
from ..ovsdb.columns import opt
from .addresses import (
    AddressError,
    format_ip,
    format_mac,
    parse_ip,
    parse_lrp_networks,
    parse_lsp_address,
    parse_mac,
    parse_nat_external_ip,
    parse_port_security,
)
from .idpool import IdPool
from .ipam import assign_dynamic_addresses
from .lb_vips import is_template_lb, parse_vip
from .model import LR, LS, Datapath, HaChassis, HaGroup, Northd, Port
from .nat_rules import NAT_REJECTS_INVALID, nat_rejection
from .ovs_order import hmap_order, ovs_hash_string, sset_order, uuid_map_order
from .tnlkeys import (
    DP_KEY_MIN,
    PORT_KEY_MAX,
    PORT_KEY_MAX_VXLAN,
    PORT_KEY_MIN,
    KeyAssigner,
    dp_key_max,
    parse_requested_key,
)


def _uuid(row: Any) -> str:
    return str(row.uuid)


@dataclass(slots=True)
class KeyState:
    """Tunnel keys we assigned in earlier runs (kept until SB echoes them)."""

    dp: dict[str, int] = field(default_factory=dict)
    port: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (dp key, tunnel key)
    # Per datapath, the pool of port keys in use (kept for incremental port add/delete).
    port_pools: dict[str, IdPool] = field(default_factory=dict)
    max_port: int = PORT_KEY_MAX
    vxlan: bool | None = None  # the VXLAN mode of the last full build (None: from SB's chassis)
    ic: bool = False  # the IC VXLAN key range of the last full build (ic_vxlan_mode)
    requests_win: bool = True  # KeyAssigner.requests_win (every release's reference: tnlkeys.py)


def add_datapaths(nd: Northd, keys: KeyState, sb: Any, new: list[Datapath], w: Any) -> list[Datapath]:
    """Register datapaths created since the last build (incremental): tunnel keys as a full build
    would hand them out (the others keep theirs), the next dense indexes, an empty port-key pool
    each.  Returns those that got a key (a full pool is warned about and leaves one out)."""
    vx = keys.vxlan if keys.vxlan is not None else vxlan_mode(sb)
    pool = IdPool(DP_KEY_MIN, dp_key_max(vx, keys.ic), "datapath tunnel ids")
    new_keys = {dp.key for dp in new}
    ents: list[tuple[str, object, str, int | None, int | None, int | None]] = []
    for dp in _key_order([*nd.by_index, *new], nd.behaviours):
        table = "Logical_Switch" if dp.kind == LS else "Logical_Router"
        prev = None if dp.key in new_keys else dp.tunnel_key
        ents.append((dp.key, dp.nb.uuid, table, None, None, prev))
    assigned = KeyAssigner(pool, w, "datapath", requests_win=keys.requests_win).assign(ents)
    out: list[Datapath] = []
    for dp in new:
        k = assigned.get(dp.key)
        if k is None:
            continue
        dp.tunnel_key = k
        nd.add_datapath(dp)
        dp.external_ids = _dp_external_ids(dp)
        keys.dp[dp.key] = k
        keys.port_pools[dp.key] = IdPool(PORT_KEY_MIN, keys.max_port, "port tunnel ids")
        out.append(dp)
    return out


def vxlan_mode(sb: Any, nb: Any = None) -> bool:
    """True when a chassis uses VXLAN: keys must then fit VXLAN's narrower VNI space.  With ``nb``
    (the release reads NB_Global options:vxlan_mode, ``man ovn-nb``; 25.03): ``false`` there
    turns the mode off whatever the chassis use."""
    if nb is not None and any(str(g.options.get("vxlan_mode", "")).lower() == "false"
                              for g in nb.rows("NB_Global").values()):
        return False
    for ch in sb.rows("Chassis").values():
        for enc in ch.encaps:
            if enc.type == "vxlan":
                return True
    return False


def ic_vxlan_mode(nb: Any, profile: FlowProfile) -> bool:
    """Behaviour ``ic_vxlan_key_range`` (25.03, observed): does a Logical_Switch carry
    ``other_config:ic-vxlan_mode`` (``man ovn-nb``: set by ovn-ic when it runs VXLAN between
    availability zones)?  The reference narrows its datapath key range for any value of the key,
    ``false`` included."""
    return profile.has("ic_vxlan_key_range") and any(
        "ic-vxlan_mode" in ls.other_config for ls in nb.rows("Logical_Switch").values())


def build_northd(nb: Any, sb: Any, keys: KeyState, warn: WarnOnce, mac_prefix: str = "",
                 profile: FlowProfile = DEFAULT_PROFILE) -> Northd:
    """The model (of ``profile``'s release).  With ``mac_prefix`` (NB_Global options:mac_prefix) IPAM
    also runs.  ``profile``'s behaviours ``nb_vxlan_mode_option`` (NB_Global options:vxlan_mode is
    read: :func:`vxlan_mode`).  Requested tunnel keys are taken from entities that did not ask for
    them (``northd/tnlkeys.py``)."""
    vxlan_option = profile.has("nb_vxlan_mode_option")
    w = warn.warn
    nd = Northd(behaviours=profile.behaviours)
    vx = keys.vxlan = vxlan_mode(sb, nb if vxlan_option else None)
    keys.ic = ic_vxlan_mode(nb, profile)
    max_dp = dp_key_max(vx, keys.ic)
    max_port = PORT_KEY_MAX_VXLAN if vx else PORT_KEY_MAX
    _build_datapaths(nd, nb, sb, keys, max_dp, w)
    _build_ports(nd, sb, w, mutual=profile.has(LRP_PEER_CHECKS))
    if profile.has(LRP_PEER_CHECKS):
        unlink_conflicting_lsp_peers(nd, w)
    if profile.has(SWITCH_PEER_PORTS):
        for p in nd.ports.values():
            if p.kind == "lsp" and p.nb.type == "switch":
                switch_peer_port(p)
    if profile.has(CENTRALIZED_DGP_PEER):
        for router in nd.routers():
            make_switch_crp(router, nd, w)
    if profile.has(LPORT_MIRROR):
        make_mirror_ports(nd)
    if profile.has(TRANSIT_ROUTER_REMOTE_PORTS):
        mark_remote_router_ports(nd, sb)
    _assign_port_keys(nd, sb, keys, max_port, w)
    if profile.has(QOS_QUEUES):
        assign_qos_queues(nd, sb)
    _build_ha_groups(nd, nb, w)
    if install_ls_lb_from_router(nb):
        nd.lbs_from_routers = True
        _add_router_lbs_to_switches(nd)
    # ---- IPAM: dynamic addresses (ipam.py) ----
    if mac_prefix:
        assign_dynamic_addresses(nd, mac_prefix, w, profile.has("ipam_port_hash_order"))
    return nd


def _build_datapaths(nd: Northd, nb: Any, sb: Any, keys: KeyState, max_dp: int, w: Any) -> None:
    """Every switch and enabled router, with its tunnel key (requested, else the one SB or an
    earlier run gave it, else a fresh one); a datapath left without a key is not registered."""
    dps: list[Datapath] = []
    for row in sorted(nb.rows("Logical_Switch").values(), key=_uuid):
        dps.append(Datapath(_uuid(row), LS, row.name, row, behaviours=nd.behaviours))
    for row in sorted(nb.rows("Logical_Router").values(), key=_uuid):
        if opt(row.enabled) is False:
            continue  # a disabled router has no datapath (and so no ports), as in the reference
        dps.append(Datapath(_uuid(row), LR, row.name, row, behaviours=nd.behaviours))

    sb_dp_keys: dict[str, int] = {}
    for sbrow in sb.rows("Datapath_Binding").values():
        ids = sbrow.external_ids
        nbkey = ids.get("logical-switch") or ids.get("logical-router")
        if nbkey:
            sb_dp_keys[nbkey] = sbrow.tunnel_key
    dp_pool = IdPool(DP_KEY_MIN, max_dp, "datapath tunnel ids")
    ents = []
    for dp in _key_order(dps, nd.behaviours):
        req_s = (dp.nb.other_config if dp.kind == LS else dp.nb.options).get("requested-tnl-key")
        req, err = parse_requested_key(req_s, DP_KEY_MIN, max_dp)
        table = "Logical_Switch" if dp.kind == LS else "Logical_Router"
        if err:
            w("datapath_bad_requested_tnl_key", table, dp.nb.uuid, err, name=dp.name)
        ents.append((dp.key, dp.nb.uuid, table, req, sb_dp_keys.get(dp.key), keys.dp.get(dp.key)))
    assigned = KeyAssigner(dp_pool, w, "datapath", requests_win=keys.requests_win).assign(ents)
    keys.dp = dict(assigned)
    for dp in dps:
        k = assigned.get(dp.key)
        if k is None:
            continue  # pool exhausted: warned, not bound
        dp.tunnel_key = k
        nd.add_datapath(dp)
        dp.external_ids = _dp_external_ids(dp)


def _build_ports(nd: Northd, sb: Any, w: Any, mutual: bool = False) -> None:
    """The router and switch ports (name conflicts settled), router-to-router peers, RA options,
    chassisredirect ports and the router-type switch ports' ``nat_addresses``."""
    nd.name_winners = _name_winners(nd, sb)
    lrp_by_name: dict[str, Port] = {}
    for dp in nd.routers():
        is_gw_router = bool(dp.nb.options.get("chassis"))
        for lrp in sorted(dp.nb.ports, key=_uuid):
            p = _make_lrp(dp, lrp, is_gw_router, nd, w)
            if p is None:
                continue
            lrp_by_name[p.name] = p

    for dp in nd.switches():
        for lsp in sorted(dp.nb.ports, key=_uuid):
            _make_lsp(dp, lsp, nd, lrp_by_name, w)

    # Router-to-router peers.
    for p in lrp_by_name.values():
        if p.peer is None:
            peer_name = opt(p.nb.peer)
            if peer_name:
                other = nd.ports.get(peer_name)
                if other is not None and other.kind == "lrp":
                    if not mutual or opt(other.nb.peer) == p.name:
                        p.peer = other
                        p.options["peer"] = peer_name
                else:
                    w("lrp_missing_peer", "Logical_Router_Port", p.nb.uuid,
                      f"peer {peer_name!r} is not a logical router port", name=p.name)

    for p in lrp_by_name.values():
        if p.peer is not None:
            _set_ra_options(p)

    # Gateway (chassisredirect) ports.
    for p in list(lrp_by_name.values()):
        _make_crp(p, nd, w)
    for dp in nd.switches():
        for p in dp.ports:
            if p.is_router_lsp:
                _set_nat_addresses(p)


def _name_winners(nd: Northd, sb: Any) -> dict[str, tuple[str, str]]:
    """Port name -> (datapath key, row uuid) of the row that gets the name.  The row that already
    holds the SB binding keeps it (stability); otherwise router ports win over switch ports, then
    the lowest NB uuid."""
    sb_port_dp: dict[str, str] = {}
    for pb in sb.rows("Port_Binding").values():
        nbk = _sb_dp_key(pb)
        if nbk:
            sb_port_dp[pb.logical_port] = nbk
    cands: dict[str, list[tuple[str, str]]] = {}  # name -> [(datapath key, row uuid)]
    for dp in nd.routers():
        for lrp in sorted(dp.nb.ports, key=_uuid):
            cands.setdefault(lrp.name, []).append((dp.key, _uuid(lrp)))
    for dp in nd.switches():
        for lsp in sorted(dp.nb.ports, key=_uuid):
            cands.setdefault(lsp.name, []).append((dp.key, _uuid(lsp)))
    winners: dict[str, tuple[str, str]] = {}
    for name, cs in cands.items():
        held = [c for c in cs if c[0] == sb_port_dp.get(name)]
        winners[name] = (held or cs)[0]
    return winners


def _assign_port_keys(nd: Northd, sb: Any, keys: KeyState, max_port: int, w: Any) -> None:
    """Port tunnel keys, per datapath (as for datapaths: requested, else kept, else fresh); a port
    left without a key is dropped from the model."""
    sb_port_keys: dict[str, tuple[str, int]] = {}
    for pb in sb.rows("Port_Binding").values():
        nbkey = _sb_dp_key(pb)
        if nbkey:
            sb_port_keys[pb.logical_port] = (nbkey, pb.tunnel_key)
    new_port_keys: dict[str, tuple[str, int]] = {}
    for dp in nd.by_index:
        pool = IdPool(PORT_KEY_MIN, max_port, "port tunnel ids")
        ents = []
        for p in dp.ports:
            req_s = p.nb.options.get("requested-tnl-key") if p.kind in ("lsp", "lrp") else None
            req, err = parse_requested_key(req_s, PORT_KEY_MIN, max_port)
            table = "Logical_Switch_Port" if p.kind == "lsp" else "Logical_Router_Port"
            if err:
                w("port_bad_requested_tnl_key", table, p.nb.uuid, err, name=p.name)
            sbk = sb_port_keys.get(p.name)
            prev = keys.port.get(p.name)
            ents.append((
                p.name, p.nb.uuid, table, req,
                sbk[1] if sbk and sbk[0] == dp.key else None,
                prev[1] if prev and prev[0] == dp.key else None,
            ))
        # Like the reference, new port keys continue after the largest key in use on the datapath.
        got = KeyAssigner(pool, w, "port", bump_hint=True, requests_win=keys.requests_win,
                          keep_out_of_range=True).assign(ents)
        keys.port_pools[dp.key] = pool
        kept = []
        for p in dp.ports:
            k = got.get(p.name)
            if k is None:
                del nd.ports[p.name]
                continue
            p.tunnel_key = k
            new_port_keys[p.name] = (dp.key, k)
            kept.append(p)
        dp.ports = kept
    keys.port = new_port_keys
    keys.max_port = max_port
    for stale in set(keys.port_pools) - set(nd.datapaths):
        del keys.port_pools[stale]




def idl_row_order(uuids: Iterable[str]) -> list[str]:
    """The order the reference's NB IDL walks the rows ``uuids`` of one table after a cold start.

    The initial rows arrive as one JSON object per table, parsed into an OVS string hash map
    (keyed by ``hash_string`` of the uuid text), and are inserted in that map's order into the
    IDL's row map, keyed by the uuid's first 32 bits.  Checked against the reference's fresh
    datapath tunnel keys (it numbers switches, then routers, in this order).
    """
    return uuid_map_order(hmap_order((ovs_hash_string(u), u) for u in sorted(uuids)))


def _key_order(dps: list[Datapath], behaviours: frozenset[str]) -> list[Datapath]:
    """Datapaths in the order the reference hands out fresh tunnel keys: switches, then routers,
    each in :func:`idl_row_order`.  Behaviour ``dp_keys_datapath_map_order`` (26.03): each kind
    through a datapath map of the reference's own, filled in that order (``uuid_map_order``;
    observed on 1031 switches and on 300 switches with 300 routers: every fresh key)."""
    via_map = DP_KEYS_DATAPATH_MAP_ORDER in behaviours
    out: list[Datapath] = []
    for kind in (LS, LR):
        by_key = {dp.key: dp for dp in dps if dp.kind == kind}
        order = idl_row_order(by_key)
        out += [by_key[k] for k in (uuid_map_order(order) if via_map else order)]
    return out


def _dp_external_ids(dp: Datapath) -> dict[str, str]:
    nb = dp.nb
    ids = {"logical-switch" if dp.kind == LS else "logical-router": dp.key, "name": dp.name}
    if dp.kind == LS:
        n2 = nb.external_ids.get("neutron:network_name")
        if n2:
            ids["name2"] = n2
        ts = nb.other_config.get("interconn-ts")
        if ts:
            ids["interconn-ts"] = ts
    else:
        n2 = nb.external_ids.get("neutron:router_name")
        if n2:
            ids["name2"] = n2
        if str(nb.options.get("always_learn_from_arp_request", "")).lower() == "false":
            ids["always_learn_from_arp_request"] = "false"  # observed: only an explicit false
        age = nb.options.get("mac_binding_age_threshold")
        if age is not None and DP_MAC_BINDING_AGE in dp.behaviours:
            ids["mac_binding_age_threshold"] = age  # observed on 25.03: the option as written
        z = nb.options.get("snat-ct-zone")
        if z is not None:
            with contextlib.suppress(ValueError):
                ids["snat-ct-zone"] = str(int(z))
    return ids


def _claim_name(nd: Northd, name: str, table: str, row: Any, w: Any, dp_key: str) -> bool:
    if not name:
        w("port_empty_name", table, row.uuid, "port has an empty name")
        return False
    winner = nd.name_winners.get(name)
    other = nd.ports.get(name)
    if other is not None or (winner is not None and winner != (dp_key, _uuid(row))):
        by = other.nb_key if other else winner[1] if winner else "?"
        kind = "logical router port" if table == "Logical_Router_Port" else "logical port"
        # "duplicate logical [router ]port NAME": the C daemon's words, which OVN's tests grep for.
        w("duplicate_port_name", table, row.uuid, f"duplicate {kind} {name} (the name is already used by {by})",
          name=name)
        return False
    return True


def _sb_dp_key(pb: Any) -> str | None:
    ids = getattr(pb.datapath, "external_ids", None)
    if not ids:
        return None
    return ids.get("logical-switch") or ids.get("logical-router")


def _make_lrp(dp: Datapath, lrp: Any, is_gw_router: bool, nd: Northd, w: Any) -> Port | None:
    name = lrp.name
    if not _claim_name(nd, name, "Logical_Router_Port", lrp, w, dp.key):
        return None
    try:
        nets = parse_lrp_networks(lrp.mac, list(lrp.networks))
    except AddressError as e:
        w("lrp_bad_mac", "Logical_Router_Port", lrp.uuid, str(e), name=name)
        return None
    for err in nets.errors:
        w("lrp_bad_network", "Logical_Router_Port", lrp.uuid, str(err), name=name)
    for err in nets.lenient:
        w("lrp_lenient_network", "Logical_Router_Port", lrp.uuid, str(err), name=name)
    # Observed: a port none of whose networks parses is kept, with only its EUI-64 link-local
    # address (which parse_lrp_networks always appends).
    p = Port(name, "lrp", dp, lrp, _uuid(lrp))
    p.sb_type = "l3gateway" if is_gw_router else "patch"
    if is_gw_router:
        p.options["l3gateway-chassis"] = dp.nb.options["chassis"]
    p.mac = [" ".join([lrp.mac, *lrp.networks])]
    p.external_ids = dict(lrp.external_ids)
    p.enabled = opt(lrp.enabled) is not False
    nd.ports[name] = p
    dp.ports.append(p)
    return p


def _make_lsp(dp: Datapath, lsp: Any, nd: Northd, lrps: dict[str, Port], w: Any) -> None:
    if not _claim_name(nd, lsp.name, "Logical_Switch_Port", lsp, w, dp.key):
        return
    p = lsp_port(dp, lsp, lrps, w)
    nd.ports[p.name] = p
    dp.ports.append(p)


def lsp_port(dp: Datapath, lsp: Any, lrps: dict[str, Port], w: Any) -> Port:
    """The Port for one Logical_Switch_Port of switch ``dp`` (not registered in the model).

    For a router-type port this links it with its peer router port in ``lrps``.
    """
    name = lsp.name
    p = Port(name, "lsp", dp, lsp, _uuid(lsp))
    p.enabled = opt(lsp.enabled) is not False
    p.mac = list(lsp.addresses)
    p.port_security = list(lsp.port_security)
    for a in lsp.addresses:
        try:
            parsed = parse_lsp_address(a)
        except AddressError as e:
            w("lsp_bad_address", "Logical_Switch_Port", lsp.uuid, str(e), name=name, address=a)
            continue
        if getattr(parsed, "kind", None) == "unknown":
            p.has_unknown = True
    for a in lsp.port_security:
        try:
            parse_port_security(a)
        except AddressError as e:
            w("lsp_bad_port_security", "Logical_Switch_Port", lsp.uuid, str(e), name=name, address=a)
    ids = dict(lsp.external_ids)
    pname = ids.get("neutron:port_name")
    if pname:
        ids["name"] = pname
    p.external_ids = ids
    if lsp.type == "router":
        p.is_router_lsp = True
        rp_name = lsp.options.get("router-port")
        peer = lrps.get(rp_name) if rp_name else None
        p.sb_type = "patch"
        if rp_name:
            p.options["peer"] = rp_name  # kept even when dangling, as the reference does
        if peer is None:
            w("lsp_missing_router_port", "Logical_Switch_Port", lsp.uuid,
              f"router-port {rp_name!r} does not name a logical router port", name=name)
        elif opt(peer.nb.peer):
            # A router port with a router peer of its own keeps it (observed, 23.03 and 25.03);
            # 23.03 still connects the switch port to it, 25.03 does not (lrp_peer_checks, where
            # build_northd warns).
            p.peer = peer
            if peer.sb_type == "l3gateway":
                p.sb_type = "l3gateway"
                p.options["l3gateway-chassis"] = peer.options["l3gateway-chassis"]
        else:
            p.peer = peer
            peer.peer = p
            peer.options["peer"] = name
            p.options["peer"] = peer.name
            if peer.sb_type == "l3gateway":
                p.sb_type = "l3gateway"
                p.options["l3gateway-chassis"] = peer.options["l3gateway-chassis"]
    else:
        p.sb_type = lsp.type
        if lsp.type not in LSP_TYPES:
            w("lsp_unknown_type", "Logical_Switch_Port", lsp.uuid,
              f"unknown type {lsp.type!r}: bound as a plain port (Port_Binding type \"\")", name=name)
        p.options = dict(lsp.options)
        # Observed: the switch's other_config:vlan-passthru (true, any case) is copied to every
        # non-router port's Port_Binding options.
        if dp.nb.other_config.get("vlan-passthru", "").lower() == "true":
            p.options["vlan-passthru"] = "true"
        # Observed: a localnet port with QoS parameters gets a queue on the physical device,
        # ``qdisc_queue_id=1`` (each localnet port has a queue space of its own), unless the NB
        # names one; its flows then set_queue() it (flows/ls_port_security.py).
        if (lsp.type == "localnet" and "qdisc_queue_id" not in p.options
                and any(k in lsp.options for k in QOS_PARAMS)):
            p.options["qdisc_queue_id"] = "1"
        # Observed: an empty parent_name (``lsp-add SW PORT "" TAG``, how a localnet port gets
        # its VLAN) is copied as it is, and its tag_request becomes the tag.
        p.parent_port = opt(lsp.parent_name)
        p.tag = opt(lsp.tag)
        if p.tag is None and p.parent_port is not None and opt(lsp.tag_request) is not None:
            p.tag = _tag_for(dp, lsp)
        rc = lsp.options.get("requested-chassis")
        if rc:
            p.requested_chassis = rc
    return p


QOS_PARAMS = ("qos_max_rate", "qos_burst", "qos_min_rate")
# Behaviour of 25.03 (lflow/profile.py): queue ids from one pool, qos_physical_network.
QOS_QUEUES = "qos_queues_global"
# Behaviour of 26.03 (lflow/profile.py): fresh datapath keys in the order of a map of the
# reference's own (_key_order).
DP_KEYS_DATAPATH_MAP_ORDER = "dp_keys_datapath_map_order"


def has_qos(p: Port) -> bool:
    """A VIF or localnet switch port with QoS parameters (``options:qos_max_rate`` / ``qos_burst`` /
    ``qos_min_rate``), which gets a queue (behaviour ``qos_queues_global``)."""
    return p.kind == "lsp" and p.sb_type in ("", "localnet") and any(k in p.nb.options for k in QOS_PARAMS)


def first_localnet(dp: Datapath) -> Port | None:
    """The switch's first localnet port (NB uuid order), whose network its QoS queues are on."""
    lns = [p for p in dp.ports if p.kind == "lsp" and p.sb_type == "localnet"]
    return min(lns, key=lambda p: p.nb_key) if lns else None


def assign_qos_queues(nd: Northd, sb: Any) -> None:
    """Behaviour ``qos_queues_global`` (observed on 25.03's reference): every port with QoS
    parameters (:func:`has_qos`) gets ``options:qdisc_queue_id`` from one pool for all switches
    (1, 2, ...; the NB's own value is not kept), numbered switch by switch in the order of the
    reference's datapath map (uuid first 32 bits, filled in its IDL's order) and port by port in NB
    uuid order (the map holds the routers too); a port keeps the id its Port_Binding already has.  On a switch with a localnet
    port, also ``options:qos_physical_network``: the network_name of its first localnet port."""
    held: dict[str, int] = {}
    for pb in sb.rows("Port_Binding").values():
        q = pb.options.get("qdisc_queue_id")
        if q is not None and q.isdigit():
            held[pb.logical_port] = int(q)
    switches = {dp.key: dp for dp in nd.switches()}
    # (One map of every datapath: the switches inserted first, then the routers, each in IDL order.)
    keys = idl_row_order(switches) + idl_row_order(dp.key for dp in nd.routers())
    order = uuid_map_order(keys)
    wanting: list[Port] = []
    for key in order:
        dp = switches.get(key)
        if dp is None:
            continue
        ln = first_localnet(dp)
        net = ln.nb.options.get("network_name") if ln is not None else None
        for p in sorted((p for p in dp.ports if has_qos(p)), key=lambda p: p.nb_key):
            if net is not None:
                p.options["qos_physical_network"] = net
            wanting.append(p)
    used: set[int] = set()
    fresh: list[Port] = []
    for p in wanting:
        q = held.get(p.name)
        if q is not None and q not in used:
            used.add(q)
            p.options["qdisc_queue_id"] = str(q)
        else:
            fresh.append(p)
    nxt = 1
    for p in fresh:
        while nxt in used:
            nxt += 1
        used.add(nxt)
        p.options["qdisc_queue_id"] = str(nxt)


def _tag_for(dp: Datapath, lsp: Any) -> int | None:
    """A container port's VLAN tag: tag_request when non-zero, else the smallest tag (1..4095)
    not used by another child of the same parent.  nb_sync writes it back to NB ``tag``."""
    req = opt(lsp.tag_request)
    if req:
        return int(req)
    parent = opt(lsp.parent_name)
    used = {opt(o.tag) for o in dp.nb.ports if o is not lsp and opt(o.parent_name) == parent}
    used |= {q.tag for q in dp.ports if q.parent_port == parent}
    for t in range(1, 4096):
        if t not in used:
            return t
    return None


def _is_distributed_nat(nat: Any) -> bool:
    """A ``dnat_and_snat`` rule with a logical port and an external MAC (valid or not), whose
    external IP parses, leniently (observed: a rule with a bad external IP does not count; one
    whose IPv4 octets are above 255 does, and so does an address followed by junk:
    :func:`parse_nat_external_ip` with ``arp``)."""
    if not (nat.type == "dnat_and_snat" and opt(nat.logical_port) and opt(nat.external_mac)):
        return False
    return parse_nat_external_ip(nat.external_ip, arp=True) is not None


def _nat_dgp(dgps: list[Port], nat: Any) -> Port | None:
    """The distributed gateway port a NAT rule applies on, of a router with several
    (``man ovn-nb`` NAT ``gateway_port``: the named one, else the first holding ``external_ip``)."""
    named = opt(nat.gateway_port)
    if named is not None:
        return next((q for q in dgps if q.nb_key == str(named.uuid)), None)
    ip = nat.external_ip.strip()
    for q in dgps:
        try:
            nets = parse_lrp_networks(q.nb.mac, list(q.nb.networks))
            addr = parse_ip(ip)
        except AddressError:
            continue
        family = nets.ipv6 if ":" in ip else nets.ipv4
        if any(n.contains(addr) for n in family):  # type: ignore[arg-type]
            return q
    return None


def _garp_lb_vips(router: Datapath) -> list[str]:
    """The router's load-balancer VIPs as ``nat_addresses`` lists them (observed): IPv4 ones, then
    IPv6 ones, each in the iteration order of an OVS string set filled load balancer by load
    balancer (own ones, then groups'), each's VIPs in the order of its ``vips`` map; only the VIPs
    the load balancer uses (:func:`.lb_vips.parse_vip`).  A template
    load balancer's usable VIPs are listed as written (``^VAR``, with the IPv4 ones)."""
    lbs = list(router.nb.load_balancer)
    for grp in router.nb.load_balancer_group:
        lbs.extend(grp.load_balancer)
    v4: list[str] = []
    v6: list[str] = []
    each = "template_lb_backends_each" in router.behaviours  # 26.03: template backends one by one
    for lb in lbs:
        template = is_template_lb(lb)
        for key in sset_order(str(k) for k in lb.vips):
            parsed = parse_vip(lb, key, each)
            if isinstance(parsed, str):
                continue  # observed: a VIP the load balancer skips (a bad backend, say) is not listed
            addr = parsed[0].ip if template else _vip_addr(key)
            if addr is not None:
                (v6 if ":" in addr else v4).append(addr)
    return sset_order(v4) + sset_order(v6)


def _vip_addr(key: str) -> str | None:
    """The normalised address of a VIP key (``IP``, ``IP:PORT``, ``[IP6]``, ``[IP6]:PORT``, ``IP6``)."""
    text = key.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return format_ip(parse_ip(text))
    except AddressError:
        return None


def _set_nat_addresses(p: Port) -> None:
    """Port_Binding.nat_addresses of a router-type LSP: what ovn-controller announces with GARPs.

    (As observed on the reference.)  ``nat-addresses=router`` on a port whose peer router is a
    gateway router or has a distributed gateway port (DGP): the peer's MAC with the router's
    central NAT external IPs (IPv4, in NAT row order, duplicates kept, the peer's own addresses left
    out) and LB VIPs (:func:`_garp_lb_vips`), plus one entry per distributed IPv4 NAT.  On a router
    with several DGPs only the NAT rules applied on the peer count (:func:`_nat_dgp`).  Any other
    ``nat-addresses`` value is copied under the same condition.  Separately, the peer's MAC
    and IPv4 addresses are announced when the peer is a DGP, resides on the redirect chassis
    of the router's only DGP, or is on a gateway router while this switch has a localnet port.
    (The IPv4 addresses of its valid networks; the MAC alone when it has none.)
    Entries are limited to the gateway chassis (is_chassis_resident) of the peer when it is a DGP;
    the peer's own addresses of a non-DGP peer to the router's first DGP's, its NAT / VIP entry not.
    """
    peer = p.peer
    if peer is None or peer.kind != "lrp":
        return
    spec = p.nb.options.get("nat-addresses")
    router = peer.dp
    gw_router = peer.sb_type == "l3gateway"
    dgps = [q for q in router.ports if q.kind == "lrp" and q.crp is not None]
    dgp = peer if peer in dgps else (dgps[0] if dgps else None)
    suffix = f' is_chassis_resident("{dgp.crp.name}")' if dgp is not None and dgp.crp is not None else ""
    mac = peer.nb.mac
    out: list[str] = []
    if spec == "router":
        if gw_router or dgps:
            central: list[str] = []
            own_ips = {n.split("/")[0] for n in peer.nb.networks}
            # (observed: every NB rule, also those 25.03 rejects elsewhere: nat_rules.py)
            for nat in sorted(router.nb.nat, key=_uuid):
                if ":" in nat.external_ip:
                    continue  # GARPs are IPv4 only
                if len(dgps) > 1 and _nat_dgp(dgps, nat) is not peer:
                    continue  # several DGPs: each announces the NAT rules applied on it
                if parse_nat_external_ip(nat.external_ip) is None:
                    continue  # observed: a rule with a malformed external IP is not announced
                if dgps and _is_distributed_nat(nat):
                    try:  # observed: normalised; a malformed external MAC drops the rule's entry
                        ext_mac = format_mac(parse_mac(str(opt(nat.external_mac)).lstrip()))
                    except AddressError:
                        continue
                    lport = opt(nat.logical_port)
                    out.append(f'{ext_mac} {nat.external_ip} is_chassis_resident("{lport}")')
                elif nat.external_ip not in own_ips:  # those are announced below
                    central.append(nat.external_ip)
            vips: list[str] = []
            if p.nb.options.get("exclude-lb-vips-from-garp") != "true":
                vips = _garp_lb_vips(router)
            if central or vips:
                # observed: limited to the gateway chassis only when the peer is itself a DGP
                out.append(" ".join([mac, *central, *vips]) + (suffix if peer in dgps else ""))
    elif spec and (gw_router or dgps):
        out.append(spec)
    garp = False
    if dgps:
        if peer in dgps or (peer.nb.options.get("reside-on-redirect-chassis") == "true" and len(dgps) == 1):
            garp = True
    elif gw_router and any(q.sb_type == "localnet" for q in p.dp.ports):
        garp = True
    if garp:
        # Observed: the IPv4 addresses of the peer's valid networks; the entry is written even
        # without any (the MAC alone).
        try:
            ipv4 = [n.addr_s for n in parse_lrp_networks(mac, list(peer.nb.networks)).ipv4]
        except AddressError:
            ipv4 = []
        out.append(" ".join([mac, *ipv4]) + suffix)
    p.garp_entry = out[-1] if garp else None
    p.nat_addresses = out


def resolve_lrp_peer(nd: Northd, p: Port, w: Any) -> None:
    """A router port's router-to-router ``peer`` (unless a switch port links to it), as a full
    build resolves it."""
    if p.peer is not None and p.peer.kind == "lsp":
        return
    p.peer = None
    p.options.pop("peer", None)
    peer_name = opt(p.nb.peer)
    if not peer_name:
        return
    other = nd.ports.get(peer_name)
    if other is not None and other.kind == "lrp":
        p.peer = other
        p.options["peer"] = peer_name
    else:
        w("lrp_missing_peer", "Logical_Router_Port", p.nb.uuid,
          f"peer {peer_name!r} is not a logical router port", name=p.name)


def update_lrp_in_place(p: Port) -> set[str]:
    """Re-derive a router port's values from its (updated, still valid) NB row, keeping its
    identity, tunnel key and links; returns the names of the ports that changed (it, and its
    chassisredirect port when the MAC moved)."""
    lrp = p.nb
    changed = {p.name}
    p.mac = [" ".join([lrp.mac, *lrp.networks])]
    p.external_ids = dict(lrp.external_ids)
    p.enabled = opt(lrp.enabled) is not False
    for k in [k for k in p.options if k.startswith(("ipv6_ra_", "ipv6_prefix"))]:
        del p.options[k]
    if p.peer is not None:
        _set_ra_options(p)
    crp = p.crp
    if crp is not None or (_ignored_gateway(p) and NO_IGNORED_GW_CRP not in p.dp.behaviours):
        if p.peer is not None:
            p.options["chassis-redirect-port"] = "cr-" + p.name
        else:
            p.options.pop("chassis-redirect-port", None)
    if crp is not None:
        before = (dict(crp.options), list(crp.mac), dict(crp.external_ids))
        _derive_crp(p, crp)
        # (A dynamic-routing router's chassisredirect port takes options from the router port's:
        # sync/dynamic_routing_ids.py.)
        if (crp.options, crp.mac, crp.external_ids) != before or \
                str(p.dp.nb.options.get("dynamic-routing", "")).lower() == "true":
            changed.add(crp.name)
    return changed


def garps_lb_vips(router: Datapath) -> bool:
    """Does a switch port peering with ``router`` announce its load-balancer VIPs
    (``nat-addresses=router`` without ``exclude-lb-vips-from-garp=true``: :func:`_set_nat_addresses`)?
    Nothing else :func:`refresh_router_derived` computes reads the router's load balancers."""
    for p in router.ports:
        q = p.peer
        if p.kind == "lrp" and q is not None and q.kind == "lsp" and q.is_router_lsp:
            options = q.nb.options
            if options.get("nat-addresses") == "router" and options.get("exclude-lb-vips-from-garp") != "true":
                return True
    return False


def refresh_router_derived(router: Datapath) -> set[str]:
    """Recompute what ``router``'s ports derive from its NAT rules and load balancers (the
    chassisredirect ports' ``always-redirect``, the peer switch ports' ``nat_addresses``);
    returns the names of the ports that changed."""
    changed: set[str] = set()
    for p in router.ports:
        if p.kind == "crp":
            before = p.options.get("always-redirect")
            dgp = next((q for q in router.ports if q.kind == "lrp" and q.crp is p), None)
            if dgp is None or not _always_redirect(dgp):
                p.options.pop("always-redirect", None)
            else:
                p.options["always-redirect"] = "true"
            if p.options.get("always-redirect") != before:
                changed.add(p.name)  # (the only value _derive_crp takes from the router)
        elif p.kind == "lrp" and p.peer is not None and p.peer.kind == "lsp" and p.peer.is_router_lsp:
            q = p.peer
            before_addrs = list(q.nat_addresses)
            _set_nat_addresses(q)
            if q.nat_addresses != before_addrs:
                changed.add(q.name)
    return changed


RA_ADDRESS_MODES = frozenset({"slaac", "dhcpv6_stateful", "dhcpv6_stateless"})


def _cfg_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _set_ra_options(p: Port) -> None:
    """Port_Binding ``ipv6_ra_*`` options of a peered router port sending periodic RAs (and
    ``ipv6_prefix_delegation`` / ``ipv6_prefix`` for its ``options:prefix_delegation`` / ``prefix``).

    (As observed on the reference.)  Only with ``ipv6_ra_configs:send_periodic`` ``true`` (any
    case) and a valid ``address_mode``: the mode, ``max_interval`` (default 600, clamped to
    4..1800), ``min_interval`` (default a third of the maximum, clamped to 3..3/4 of it), a
    positive ``mtu``, ``prf`` (``router_preference`` HIGH or LOW, else MEDIUM), ``rdnss``,
    ``dnssl`` and ``route_info`` when present (even empty), the IPv6 prefixes and the port's MAC and link-local
    address.
    """
    # Prefix delegation (observed, peered ports only): options:prefix_delegation / options:prefix.
    for key, sb_key in (("prefix_delegation", "ipv6_prefix_delegation"), ("prefix", "ipv6_prefix")):
        if str(p.nb.options.get(key, "")).lower() == "true":
            p.options[sb_key] = "true"
    cfg = p.nb.ipv6_ra_configs
    mode = cfg.get("address_mode")
    if str(cfg.get("send_periodic", "")).lower() != "true" or mode not in RA_ADDRESS_MODES:
        return
    try:
        nets = parse_lrp_networks(p.nb.mac, list(p.nb.networks))
    except AddressError:
        return
    o = p.options
    o["ipv6_ra_send_periodic"] = "true"
    o["ipv6_ra_address_mode"] = mode
    max_i = _cfg_int(cfg.get("max_interval"))
    max_i = min(max(600 if max_i is None else max_i, 4), 1800)
    min_i = _cfg_int(cfg.get("min_interval"))
    min_i = min(max(max_i // 3 if min_i is None else min_i, 3), max_i * 3 // 4)
    o["ipv6_ra_max_interval"] = str(max_i)
    o["ipv6_ra_min_interval"] = str(min_i)
    mtu = _cfg_int(cfg.get("mtu"))
    if mtu is not None and mtu > 0:
        o["ipv6_ra_mtu"] = str(mtu)
    pref = cfg.get("router_preference")
    o["ipv6_ra_prf"] = pref if pref in ("HIGH", "LOW") else "MEDIUM"
    for key in ("rdnss", "dnssl", "route_info"):
        if key in cfg:
            o[f"ipv6_ra_{key}"] = cfg[key]
    prefixes = [f"{n.network_s}/{n.plen}" for n in nets.ipv6[:-1]]
    if RA_PD_PREFIXES in p.dp.behaviours and str(p.nb.options.get("prefix", "")).lower() == "true":
        prefixes += sorted(str(x) for x in p.nb.ipv6_prefix)  # 25.03: the delegated prefixes too
    o["ipv6_ra_prefixes"] = " ".join(prefixes)
    o["ipv6_ra_src_eth"] = nets.ea_s
    o["ipv6_ra_src_addr"] = nets.lla.addr_s


def _always_redirect(p: Port) -> bool:
    """Does DGP ``p``'s chassisredirect port get ``always-redirect`` (observed)?  Unless its router
    has a distributed NAT rule, ``p`` has ``options:redirect-type=bridged`` (exactly) or the switch
    behind ``p`` has a ``vtep`` port."""
    if p.nb.options.get("redirect-type") == "bridged":
        return False
    peer = p.peer
    if peer is not None and peer.kind == "lsp" and any(q.kind == "lsp" and q.sb_type == "vtep" for q in peer.dp.ports):
        return False
    return not any(_is_distributed_nat(nat) for nat in _nats(p.dp))


def _nats(router: Datapath) -> list[Any]:
    """The router's NAT rules, without those its release rejects (``nat_rejects_invalid``)."""
    if NAT_REJECTS_INVALID not in router.behaviours:
        return list(router.nb.nat)
    return [n for n in router.nb.nat if nat_rejection(n, router) is None]


def _derive_crp(p: Port, crp: Port) -> None:
    """The chassisredirect port's values derived from its router port (and the router's NAT)."""
    lrp = p.nb
    crp.options = {"distributed-port": p.name}
    if "redirect-type" in lrp.options:
        crp.options["redirect-type"] = lrp.options["redirect-type"]
    if _always_redirect(p):
        crp.options["always-redirect"] = "true"
    crp.mac = list(p.mac)
    crp.external_ids = dict(p.external_ids)


def _ignored_gateway(p: Port) -> bool:
    """A port of a gateway router with gateway chassis / an HA chassis group: no chassisredirect
    port, yet (observed) the port still names one (``chassis-redirect-port``) when it has a peer."""
    return p.sb_type == "l3gateway" and bool(list(p.nb.gateway_chassis) or opt(p.nb.ha_chassis_group))


def _make_crp(p: Port, nd: Northd, w: Any) -> None:
    lrp = p.nb
    gcs = list(lrp.gateway_chassis)
    hag = opt(lrp.ha_chassis_group)
    if not gcs and hag is None:
        return
    if p.sb_type == "l3gateway":
        w("lrp_gateway_on_gateway_router", "Logical_Router_Port", lrp.uuid,
          "gateway chassis on a port of a gateway router is ignored", name=p.name)
        if p.peer is not None and NO_IGNORED_GW_CRP not in p.dp.behaviours:
            p.options["chassis-redirect-port"] = "cr-" + p.name
        return
    name = "cr-" + p.name
    if name in nd.ports:
        w("duplicate_port_name", "Logical_Router_Port", lrp.uuid, f"derived port {name!r} already exists")
        return
    crp = Port(name, "crp", p.dp, lrp, p.nb_key)
    crp.sb_type = "chassisredirect"
    p.crp = crp
    if p.peer is not None:
        p.options["chassis-redirect-port"] = name
    _derive_crp(p, crp)
    crp.ha_group = hag.name if hag is not None else p.name
    nd.ports[name] = crp
    p.dp.ports.append(crp)


# Behaviour of 25.03 (lflow/profile.py): a router's Datapath_Binding external_ids carry its
# options:mac_binding_age_threshold.
DP_MAC_BINDING_AGE = "dp_mac_binding_age"

# Behaviour of 25.03 (lflow/profile.py): the port of a gateway router with gateway chassis / an HA
# chassis group names no chassisredirect port in its Port_Binding (23.03: it does, when peered).
NO_IGNORED_GW_CRP = "no_ignored_gw_crp"

# Behaviour of 25.03 (lflow/profile.py): a router port's Port_Binding ipv6_ra_prefixes also lists
# its NB ipv6_prefix (the prefixes delegated to it) when it has options:prefix=true.
RA_PD_PREFIXES = "ra_pd_prefixes"

# Behaviour of 25.03 (lflow/profile.py): a switch port peering a centralized gateway port gets a
# chassisredirect port of its own.
# Behaviour of 25.03 (lflow/profile.py): router ports peer each other only when both name the
# other; a switch port naming a router port that has a router peer of its own is not connected.
LRP_PEER_CHECKS = "lrp_peer_checks"


def unlink_conflicting_lsp_peers(nd: Northd, w: Any) -> None:
    """``lrp_peer_checks``: a router-type switch port whose router port has a router peer of its
    own stays unconnected, warned (the reference's words, observed: ``Bad configuration: The peer
    of the switch port 'LSP' (LRP peer: 'LRP') has its own peer configuration: 'PEER'``)."""
    for p in nd.ports.values():
        q = p.peer
        if p.kind == "lsp" and p.is_router_lsp and q is not None and q.kind == "lrp" and q.peer is not p \
                and opt(q.nb.peer):
            p.peer = None
            w("lsp_router_port_peered", "Logical_Switch_Port", p.nb.uuid,
              f"Bad configuration: The peer of the switch port '{p.name}' (LRP peer: '{q.name}') has its own "
              f"peer configuration: '{opt(q.nb.peer)}'", name=p.name)


# Logical_Switch_Port types (``man ovn-nb``; "switch": 25.03's).
LSP_TYPES = frozenset({"", "router", "switch", "localnet", "localport", "l2gateway", "vtep", "external", "virtual",
                       "remote"})
SWITCH_PEER_PORTS = "switch_peer_ports"


def switch_peer_port(p: Port) -> None:
    """A switch port of type ``switch`` (``man ovn-nb``: a connection to another logical switch,
    ``options:peer`` naming that switch's port; behaviour ``switch_peer_ports``, 25.03): it always
    has an implicit ``unknown`` address (so: in ``_MC_unknown``, MAC learning like a VIF with
    ``unknown``), and its Port_Binding is a ``patch`` port with the NB options (observed)."""
    p.sb_type = "patch"
    p.has_unknown = True


TRANSIT_ROUTER_REMOTE_PORTS = "transit_router_remote_ports"


def chassis_is_remote(chassis: Any) -> bool:
    """An SB Chassis of another availability zone (``other_config:is-remote=true``, ovn-ic)."""
    return str(chassis.other_config.get("is-remote", "false")).lower() == "true"


def mark_remote_router_ports(nd: Northd, sb: Any) -> None:
    """Behaviour ``transit_router_remote_ports`` (25.03, observed; ovn-northd.at "Transit router -
    remote ports"): a router port (``patch``) whose ``options:requested-chassis`` names an SB
    Chassis (by name or hostname) with ``other_config:is-remote=true`` -- a port of a transit
    router that lives in another availability zone -- is a ``remote`` Port_Binding bound to that
    chassis (``chassis`` and ``requested_chassis``); one naming a local chassis stays ``patch``."""
    wanted = {p.nb.options.get("requested-chassis") for p in nd.ports.values() if p.kind == "lrp"} - {None, ""}
    if not wanted:
        return
    remote: set[str] = set()
    for ch in sb.rows("Chassis").values():
        if chassis_is_remote(ch):
            remote.update(n for n in (ch.name, ch.hostname) if n)
    for p in nd.ports.values():
        rc = p.nb.options.get("requested-chassis") if p.kind == "lrp" else None
        if rc and rc in remote and p.sb_type == "patch":
            p.sb_type = "remote"
            p.requested_chassis = rc


CENTRALIZED_DGP_PEER = "centralized_dgp_peer"


def centralized_dgp_peer(router: Datapath) -> Port | None:
    """The router-type switch port that gets a chassisredirect port (behaviour
    ``centralized_dgp_peer``, observed on 25.03's reference; its NEWS: routing is centralized where
    needed): the peer of ``router``'s distributed gateway port when the router has exactly one and
    the peer's switch has no ``localnet`` port."""
    dgps = [p for p in router.ports if p.kind == "lrp" and p.crp is not None]
    if len(dgps) != 1:
        return None
    q = dgps[0].peer
    if q is None or q.kind != "lsp" or not q.is_router_lsp:
        return None
    if any(r.kind == "lsp" and r.sb_type == "localnet" for r in q.dp.ports):
        return None
    return q


def make_switch_crp(router: Datapath, nd: Northd, w: Any) -> Port | None:
    """The ``cr-<switch port>`` port of :func:`centralized_dgp_peer` (kind ``lcrp``), on the switch, as
    observed: type ``chassisredirect``, ``options:distributed-port`` the switch port, ``mac`` the
    switch port's addresses, the gateway port's HA chassis group, no external_ids; its tunnel key
    after the switch's ports'.  It replaces the switch port in ``_MC_flood``."""
    q = centralized_dgp_peer(router)
    if q is None:
        return None
    dgp_crp = next(p.crp for p in router.ports if p.kind == "lrp" and p.crp is not None)
    name = "cr-" + q.name
    if name in nd.ports:
        w("duplicate_port_name", "Logical_Switch_Port", q.nb.uuid, f"derived port {name!r} already exists")
        return None
    crp = Port(name, "lcrp", q.dp, q.nb, q.nb_key)
    crp.sb_type = "chassisredirect"
    crp.options = {"distributed-port": q.name}
    crp.mac = list(q.mac)
    crp.ha_group = dgp_crp.ha_group
    q.crp = crp
    nd.ports[name] = crp
    q.dp.ports.append(crp)
    return crp


LPORT_MIRROR = "lport_mirror"


def lport_mirrors(lsp: Any) -> list[Any]:
    """The NB Mirror rows of type ``lport`` a switch port's ``mirror_rules`` names, by name."""
    return sorted((m for m in getattr(lsp, "mirror_rules", ()) if m.type == "lport"), key=lambda m: str(m.name))


def mirror_port_name(dp: Datapath, sink: str) -> str:
    return f"mp-{dp.name}-{sink}"


class MirrorPortNb:
    """The ``nb`` of a mirror port: no NB row of its own, so the columns of an empty switch port
    (``uuid``: its sink's, for warnings and ``explain``), so that code reading ports' NB columns
    sees nothing to act on."""

    def __init__(self, uuid: Any, name: str) -> None:
        self.uuid = uuid
        self.name = name
        self.type = "mirror"
        self.options: dict[str, str] = {}
        self.external_ids: dict[str, str] = {}

    def __getattr__(self, column: str) -> list[Any]:
        return []  # every other (optional or set) column: empty


def make_mirror_ports(nd: Northd) -> None:
    """Behaviour ``lport_mirror`` (26.03): a switch port with a Mirror of type ``lport`` gets, on its
    switch, a port ``mp-<switch>-<sink>`` of SB type ``mirror`` (``mirror_port``: the sink), one per
    switch and sink (observed on sid's reference: the sink is a switch port of any switch; a
    mirror whose sink names no switch port has none)."""
    for dp in nd.switches():
        for p in list(dp.ports):
            if p.kind != "lsp":
                continue
            for m in lport_mirrors(p.nb):
                sink = nd.ports.get(str(m.sink))
                name = mirror_port_name(dp, str(m.sink))
                if sink is None or sink.kind != "lsp" or name in nd.ports:
                    continue
                mp = Port(name, "mirror", dp, MirrorPortNb(sink.nb.uuid, name), sink.nb_key, sb_type="mirror",
                          mirror_port=sink.name)
                nd.ports[name] = mp
                dp.ports.append(mp)


def install_ls_lb_from_router(nb: Any) -> bool:
    """NB_Global ``options:install_ls_lb_from_router``: switches get the load balancers of the
    routers they are attached to (their flows, and the SB Load_Balancer rows' datapaths), not the
    switch-wide LB flows of a switch with its own VIPs (as the reference)."""
    return any(str(g.options.get("install_ls_lb_from_router", "false")).lower() == "true"
               for g in nb.rows("NB_Global").values())


def _add_router_lbs_to_switches(nd: Northd) -> None:
    for router in nd.routers():
        lbs = list(router.nb.load_balancer)
        for grp in router.nb.load_balancer_group:
            lbs.extend(grp.load_balancer)
        if not lbs:
            continue
        for p in router.ports:
            peer = p.peer if p.kind == "lrp" else None
            if peer is not None and peer.kind == "lsp":
                sw = peer.dp
                have = {str(lb.uuid) for lb in sw.lbs_from_routers}
                for lb in lbs:
                    if str(lb.uuid) not in have:
                        have.add(str(lb.uuid))
                        sw.lbs_from_routers.append(lb)


def _build_ha_groups(nd: Northd, nb: Any, w: Any) -> None:
    for p in nd.ports.values():
        if p.kind == "crp":
            lrp = p.nb
            hag = opt(lrp.ha_chassis_group)
            if hag is not None:
                _add_nb_ha_group(nd, hag)
            else:
                chs = [HaChassis(gc.chassis_name, gc.priority) for gc in lrp.gateway_chassis]
                nd.ha_groups[p.name[3:]] = HaGroup(p.name[3:], chs)
        elif p.kind == "lsp" and p.sb_type == "external":
            hag = opt(p.nb.ha_chassis_group)
            if hag is not None:
                _add_nb_ha_group(nd, hag)
                p.ha_group = hag.name


def _add_nb_ha_group(nd: Northd, hag: Any) -> None:
    if hag.name in nd.ha_groups:
        return
    chs = [HaChassis(hc.chassis_name, hc.priority) for hc in hag.ha_chassis]
    nd.ha_groups[hag.name] = HaGroup(hag.name, chs, dict(hag.external_ids))


def iter_enabled_lsps(dp: Datapath) -> Iterable[Port]:
    return (p for p in dp.ports if p.kind == "lsp" and p.enabled)
