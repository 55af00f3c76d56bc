"""Switch destination lookup: ``ls_in_l2_lkup`` and ``ls_in_l2_unknown``.

Observed on the reference (the fallbacks at priority 0 are in :mod:`.defaults`):

* every switch: service-monitor replies to ovn-controller (110), broadcast and
  multicast to ``_MC_flood`` (70); unknown destinations (``outport == "none"``
  after the MAC-learning lookup) go to ``_MC_unknown`` when that group has a
  member (an enabled, non-external port with ``unknown`` addresses), else are
  dropped (50);
* per port, except ``external`` ports: one flow per MAC of its addresses (the MAC an
  entry starts with, lower-cased; for ``dynamic`` entries the MAC IPAM assigned,
  ``Port.dynamic_addresses``) sending to the port, or dropping when the port is
  disabled (50); a disabled port (not ``external``) also drops in ``ls_in_l2_unknown`` (50);
* per router-type port whose router port exists (and whose router is enabled):

  - ``router`` in its addresses: the router port's MAC (50), matched only where
    the gateway port lives (``is_chassis_resident("cr-...")``) when the switch has a
    localnet port and the router port is a distributed gateway port, or sets
    ``options:reside-on-redirect-chassis`` on a router with exactly one; a
    distributed gateway port also takes the external MACs of the router's
    distributed NAT rules where their logical port lives (50);
  - unless the router port is disabled: ARP requests and neighbour solicitations
    for every IP the router port owns -- its networks (IPv6 link-local included),
    the external IPs of the router's dnat and dnat_and_snat rules (25.03: and snat rules) (on every port
    of the router, unless also a VIP) and the router's load-balancer VIPs inside the port's networks
    -- go to the router port (80); and when the switch has a port that is not
    a connected router port, also flooded to ``_MC_flood_l2`` (``clone``) and
    the router's own ARP/RARP/NS requests, matched by source MAC (router port
    MAC plus NAT external MACs, printed in OVS string-set order), are flooded
    to ``_MC_flood_l2`` (75, no stage-hint).

IGMP/MLD snooping (``Logical_Switch other_config:mcast_snoop=true``; every boolean option
below reads like ``smap_get_bool``: case-insensitive ``true``), observed on the reference
and ``man ovn-northd`` (Ingress Table 25):

* IGMP and MLD go to ovn-controller (``igmp;``, 100); IP multicast to 224.0.0.0/24 is
  flooded to ``_MC_flood_l2``, IPv6 ``ip6.mcast_flood`` to ``_MC_flood`` (85);
* unregistered IP multicast (80), unless ``other_config:mcast_flood_unregistered=true``
  (then no flow: the priority-70 flood applies): to ``_MC_mrouter_flood`` (a ``clone``)
  when a router-type port (enabled or not) connects to a router with
  ``options:mcast_relay=true`` (a disabled router does not count), and to
  ``_MC_static`` when an enabled port has ``options:mcast_flood=true``; with neither
  it is dropped.  The reference prints ``outport ="_MC_static"`` (one space) and
  leaves a trailing space after the clone alone;
* on an interconnect switch (``other_config:interconn-ts`` set), every ``remote`` port
  (enabled or not) also sends the IGMP/MLD it receives to ovn-controller
  (``ls_out_pre_lb``, 120, no stage-hint).

The groups (``_MC_static``, ``_MC_mrouter_flood``) are written by
:mod:`ovn_northd_py.sync.mcast`, with or without snooping.  Groups learnt by
ovn-controller (SB ``IGMP_Group``) and their priority-90 flows are not built.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..lflow.stages import LS_IN_L2_LKUP, LS_IN_L2_UNKNOWN, LS_OUT_PRE_LB
from ..lflow.table import FlowTable
from ..northd.addresses import LrpNetworks, format_ip, leading_mac
from ..northd.mcast_keys import MC_FLOOD, MC_FLOOD_L2, MC_MROUTER_FLOOD, MC_STATIC, MC_UNKNOWN
from ..northd.model import Datapath, Port
from ..northd.ovs_order import sset_order
from ..ovsdb.columns import opt
from .acl_index import smap_bool
from .context import FlowCtx, hint
from .copp import copp_meter
from .ls_evpn import build_ls_evpn_flows, evpn_vni
from .owners import dp_owner, port_owner
from .registers import FLAGBIT_NOT_VXLAN, REGBIT_NF_OUTPORT_SET
from .router_addrs import RouterAddrs, lrp_networks, reachable_vips, router_addrs


@dataclass(frozen=True, slots=True)
class SwitchL2:
    """Facts about a switch's ports that its L2 flows depend on."""

    has_unknown: bool  # unknown destinations go to _MC_unknown (23.03: the group has a member)
    has_localnet: bool
    has_non_router_port: bool  # a port other than a connected router port (any type, enabled or not)


def peer_router_port(port: Port) -> Port | None:
    """The router port a router-type switch port connects to, if it exists and its router is enabled."""
    peer = port.peer
    if port.kind != "lsp" or peer is None or peer.kind != "lrp":
        return None
    if opt(peer.dp.nb.enabled) is False:
        return None
    return peer


def in_mc_unknown(port: Port, profile: FlowProfile = DEFAULT_PROFILE) -> bool:
    """A member of ``_MC_unknown``: an enabled port with ``unknown`` addresses, not ``external``
    (25.03, behaviour ``mc_unknown_external``: external ports too)."""
    if port.kind != "lsp" or not port.enabled or not port.has_unknown:
        return False
    return port.sb_type != "external" or profile.has("mc_unknown_external")


def _switch_l2(dp: Datapath, profile: FlowProfile) -> SwitchL2:
    lsps = [p for p in dp.ports if p.kind == "lsp"]
    # 25.03 (mc_unknown_external): to _MC_unknown as soon as a port has ``unknown`` addresses
    # (enabled or not, even when the group has no member: observed).
    if profile.has("mc_unknown_external"):
        unknown = any(p.has_unknown for p in lsps)
    else:
        unknown = any(in_mc_unknown(p) for p in lsps)
    return SwitchL2(
        has_unknown=unknown,
        has_localnet=any(p.sb_type == "localnet" for p in lsps),
        has_non_router_port=any(peer_router_port(p) is None for p in lsps),
    )


def switch_l2(dp: Datapath, ctx: FlowCtx) -> SwitchL2:
    return ctx.cached("switch_l2", dp.key, lambda: _switch_l2(dp, ctx.profile))


@dataclass(frozen=True, slots=True)
class SwitchMcast:
    """A switch's multicast settings and the facts about its ports its multicast flows read."""

    snoop: bool  # other_config:mcast_snoop
    flood_unregistered: bool  # other_config:mcast_flood_unregistered
    interconnect: bool  # other_config:interconn-ts is set
    relay: bool  # a router-type port connects to an (enabled) router with options:mcast_relay
    static: bool  # the _MC_static group has a member


def in_mc_static(port: Port) -> bool:
    """A member of the switch's ``_MC_static`` group: an enabled port with ``options:mcast_flood``."""
    return port.kind == "lsp" and port.enabled and smap_bool(port.nb.options, "mcast_flood", False)


def relay_router_port(port: Port) -> bool:
    """Does the router-type switch port connect to a router with ``options:mcast_relay=true``?"""
    lrp = peer_router_port(port)
    return lrp is not None and smap_bool(lrp.dp.nb.options, "mcast_relay", False)


def in_mc_mrouter_flood(port: Port) -> bool:
    """A member of ``_MC_mrouter_flood``: an enabled port with ``options:mcast_flood_reports``, or
    connected to a relay router."""
    if port.kind != "lsp" or not port.enabled:
        return False
    return smap_bool(port.nb.options, "mcast_flood_reports", False) or relay_router_port(port)


def receives_multicast(port: Port, profile: FlowProfile = DEFAULT_PROFILE) -> bool:
    """False for a switch port with ``options:receive_multicast=false`` (26.03, behaviour
    ``lsp_receive_multicast``): it is in none of its switch's multicast groups (:mod:`..sync.mcast`)."""
    return not (profile.has("lsp_receive_multicast")
                and str(port.nb.options.get("receive_multicast", "")).lower() == "false")


def _switch_mcast(dp: Datapath, profile: FlowProfile = DEFAULT_PROFILE) -> SwitchMcast:
    cfg = dp.nb.other_config
    lsps = [p for p in dp.ports if p.kind == "lsp" and receives_multicast(p, profile)]
    return SwitchMcast(
        snoop=smap_bool(cfg, "mcast_snoop", False),
        flood_unregistered=smap_bool(cfg, "mcast_flood_unregistered", False),
        interconnect=cfg.get("interconn-ts") is not None,
        relay=any(relay_router_port(p) for p in lsps),
        static=any(in_mc_static(p) for p in lsps),
    )


def switch_mcast(dp: Datapath, ctx: FlowCtx) -> SwitchMcast:
    return ctx.cached("switch_mcast", dp.key, lambda: _switch_mcast(dp, ctx.profile))


def unregistered_mcast_action(mc: SwitchMcast) -> str:
    """What ``ls_in_l2_lkup`` does with unregistered IP multicast on a snooping switch (80)."""
    to_static = f'outport ="{MC_STATIC}"; output;' if mc.static else ""
    if mc.relay:
        return f'clone {{ outport = "{MC_MROUTER_FLOOD}"; output; }}; {to_static}'
    return to_static or "drop;"


def build_ls_mcast_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The IGMP/MLD snooping flows of a switch with ``other_config:mcast_snoop=true``."""
    mc = switch_mcast(dp, ctx)
    if not mc.snoop:
        return
    owner = dp_owner(dp)
    i = dp.index
    meter = copp_meter(dp, ctx, "igmp")
    # 26.03 (igmp_loopback_flag): reports ovn-controller sends back (flags.igmp_loopback) are not
    # snooped again.
    head = "flags.igmp_loopback == 0 && " if ctx.profile.has("igmp_loopback_flag") else ""
    for match in ("igmp", "(mldv1 || mldv2)" if head else "mldv1 || mldv2"):
        table.add(i, LS_IN_L2_LKUP, 100, head + match, "igmp;", owner=owner, controller_meter=meter)
    table.add(
        i, LS_IN_L2_LKUP, 85, "ip4.mcast && ip4.dst == 224.0.0.0/24", f'outport = "{MC_FLOOD_L2}"; output;',
        owner=owner,
    )
    table.add(i, LS_IN_L2_LKUP, 85, "ip6.mcast_flood", f'outport = "{MC_FLOOD}"; output;', owner=owner)
    if not mc.flood_unregistered:
        table.add(i, LS_IN_L2_LKUP, 80, "ip4.mcast || ip6.mcast", unregistered_mcast_action(mc), owner=owner)


def build_lsp_mcast_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """A ``remote`` port of a snooping interconnect switch: its IGMP/MLD go to ovn-controller too
    (26.03, ``igmp_loopback_flag``: unless ovn-controller sent them back, ``&& flags.igmp_loopback == 0``)."""
    if port.sb_type != "remote":
        return
    mc = switch_mcast(port.dp, ctx)
    if not (mc.snoop and mc.interconnect):
        return
    owner = port_owner(port)
    # (26.03, igmp_loopback_flag: not the reports ovn-controller sent back, observed)
    tail = " && flags.igmp_loopback == 0" if ctx.profile.has("igmp_loopback_flag") else ""
    for proto in ("igmp", "(mldv1 || mldv2)"):
        table.add(
            port.dp.index, LS_OUT_PRE_LB, 120, f'inport == "{port.name}" && {proto}{tail}', "clone { igmp; }; next;",
            owner=owner,
        )


def switch_has_unknown(dp: Datapath, ctx: FlowCtx) -> bool:
    """Does the switch send unknown destinations to ``_MC_unknown`` (:class:`SwitchL2`)?"""
    return switch_l2(dp, ctx).has_unknown


def _output(port: Port) -> str:
    return f'outport = "{port.name}"; output;' if port.enabled else "drop;"


def build_ls_l2_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Datapath-wide destination lookup flows of a switch."""
    owner = dp_owner(dp)
    i = dp.index
    table.add(
        i,
        LS_IN_L2_LKUP,
        110,
        "eth.dst == $svc_monitor_mac && (tcp || icmp || icmp6)",
        "handle_svc_check(inport);",
        owner=owner,
        controller_meter=copp_meter(dp, ctx, "svc-monitor"),
    )
    if ctx.profile.has("l2_mcast_flood_l2"):
        # 26.03: multicast goes to _MC_flood_l2 (70, IP 71), except ARP (71) and neighbour
        # advertisements / router solicitations and advertisements (72), which reach the routers
        # too (_MC_flood); a packet sent back here by a network function keeps its outport (100).
        table.add(i, LS_IN_L2_LKUP, 70, "eth.mcast", f'outport = "{MC_FLOOD_L2}"; output;', owner=owner)
        table.add(i, LS_IN_L2_LKUP, 71, "eth.mcast && arp", f'outport = "{MC_FLOOD}"; output;', owner=owner)
        # (with a multicast-relay router attached, a copy goes to _MC_mrouter_flood; with a port
        # of options:mcast_flood, one to _MC_static)
        mc = switch_mcast(dp, ctx)
        relay = f'clone {{ outport = "{MC_MROUTER_FLOOD}"; output; }}; ' if mc.relay else ""
        static = f'clone {{ outport = "{MC_STATIC}"; output; }}; ' if mc.static else ""
        table.add(i, LS_IN_L2_LKUP, 71, "eth.mcast && ip", f'{relay}{static}outport = "{MC_FLOOD_L2}"; output;',
                  owner=owner)
        table.add(i, LS_IN_L2_LKUP, 72, "eth.mcast && (nd_na || nd_rs || nd_ra)", f'outport = "{MC_FLOOD}"; output;',
                  owner=owner)
        table.add(i, LS_IN_L2_LKUP, 100, f"{REGBIT_NF_OUTPORT_SET} == 1", "output;", owner=owner)
    else:
        table.add(i, LS_IN_L2_LKUP, 70, "eth.mcast", f'outport = "{MC_FLOOD}"; output;', owner=owner)
    if ctx.profile.has("lsp_l2_options") and dp.nb.other_config.get("broadcast-arps-to-all-routers", "").lower() == "false":
        # 25.03: ARP requests and neighbour solicitations go to the switch's ports, not its routers.
        table.add(i, LS_IN_L2_LKUP, 72, "eth.mcast && (arp.op == 1 || nd_ns)", f'outport = "{MC_FLOOD_L2}"; output;',
                  owner=owner)
    unknown = f'outport = "{MC_UNKNOWN}"; output;' if switch_has_unknown(dp, ctx) else "drop;"
    if evpn_vni(dp, ctx) is not None:
        build_ls_evpn_flows(dp, ctx, table, unknown)  # (26.03's EVPN switches: their own lookup)
    else:
        table.add(i, LS_IN_L2_UNKNOWN, 50, 'outport == "none"', unknown, owner=owner)
    build_ls_mcast_flows(dp, ctx, table)


def port_macs(port: Port, dynamic_entries: bool = True) -> list[str]:
    """The MACs ``ls_in_l2_lkup`` sends to ``port``: its addresses' and the one IPAM assigned.

    A ``MAC dynamic`` entry counts with its MAC even when IPAM assigned nothing (not with
    ``dynamic_entries`` False: 25.03, only what IPAM assigned).
    """
    macs: list[str] = []
    for entry in port.nb.addresses:
        if entry in ("unknown", "router") or (not dynamic_entries and "dynamic" in entry.split()):
            continue
        mac = leading_mac(entry)
        if mac is not None:
            macs.append(str(mac))
    if port.dynamic_addresses:
        mac = leading_mac(port.dynamic_addresses)
        if mac is not None:
            macs.append(str(mac))
    return macs


def build_lsp_l2_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Per-port destination lookup flows of a switch port."""
    if port.kind != "lsp":
        return
    build_lsp_mcast_flows(port, ctx, table)
    owner = port_owner(port)
    h = hint(port.nb_key)
    i = port.dp.index
    if not port.enabled and port.sb_type != "external":
        table.add(i, LS_IN_L2_UNKNOWN, 50, f'outport == "{port.name}"', "drop;", hint=h, owner=owner,
                  io_port=port.name)
    if port.sb_type == "external":
        return
    action = _output(port)
    lrp = peer_router_port(port)
    if ctx.profile.has("lsp_l2_options"):
        opts = port.nb.options
        if port.sb_type == "" and port.has_unknown and opts.get("force_fdb_lookup", "").lower() == "true":
            return  # 25.03: its MACs are learnt (FDB), not looked up here
        if (port.enabled and port.sb_type == "" and opts.get("pkt_clone_type") == "mc_unknown"
                and switch_has_unknown(port.dp, ctx)):
            # 25.03: a copy to the ports with unknown addresses too (on a switch that has some)
            action = f'clone {{outport = "{port.name}"; output; }};outport = "{MC_UNKNOWN}"; output;'
    # 25.03 ("ls_router_port_mac"): a router-type port's own addresses give no flow (its router
    # port's MAC flow stands, resident-only where it is so).
    if lrp is None or not ctx.profile.has("ls_router_port_mac"):
        for mac in port_macs(port, not ctx.profile.has("l2_dynamic_needs_ipam")):
            table.add(i, LS_IN_L2_LKUP, 50, f"eth.dst == {mac}", action, hint=h, owner=owner)
    if lrp is not None:
        build_lsp_router_l2_flows(port, lrp, ctx, table)


def _resident_port(lrp: Port, dgps: dict[str, str], sw: SwitchL2) -> str | None:
    """The chassisredirect port whose chassis alone may take the router port's MAC, if any."""
    if not sw.has_localnet:
        return None
    if lrp.name in dgps:
        return dgps[lrp.name]
    if lrp.nb.options.get("reside-on-redirect-chassis", "").lower() == "true" and len(dgps) == 1:
        return next(iter(dgps.values()))
    return None


def _reachable_vips(lrp: Port, nets: LrpNetworks, rtr: RouterAddrs, ctx: FlowCtx) -> list[str]:
    """:func:`.router_addrs.reachable_vips` of the router's load-balancer VIPs (those it answers
    for, behaviour ``l2_lb_neighbor_responder``) in the router port's networks, remembered per
    router port with the router's other facts (a gateway router with the cluster's 500 services
    and a join switch of 100 routers: each port's VIPs are worked out once, not on every rebuild
    of the join switch's ports)."""
    memo: dict[str, tuple[RouterAddrs, LrpNetworks, list[str]]] = ctx.cached("router_l2_vips", lrp.dp.key, dict)
    hit = memo.get(lrp.name)
    if hit is not None and hit[0] is rtr and hit[1] == nets:
        return hit[2]
    lb_vips = rtr.lb_vips
    if ctx.profile.has("l2_lb_neighbor_responder") and rtr.silent_vips:
        lb_vips = tuple(v for v in lb_vips if v not in rtr.silent_vips)
    out = reachable_vips(nets, lb_vips)
    memo[lrp.name] = (rtr, nets, out)
    return out


def build_lsp_router_l2_flows(port: Port, lrp: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows a router-type switch port gets for the router port ``lrp`` it connects to."""
    nets = lrp_networks(lrp)
    if nets is None:
        return
    owner = port_owner(port)
    h = hint(port.nb_key)
    i = port.dp.index
    sw = switch_l2(port.dp, ctx)
    rtr = router_addrs(lrp.dp, ctx)
    mac = nets.ea_s
    # 25.03 (behaviour "ls_router_port_mac"): a router-type port is reached by its router port's
    # MAC whatever its addresses.
    # 25.03 ("centralized_dgp_peer"): the port has a chassisredirect port of its own (``cr``); what
    # goes to the router port goes to the port where the gateway port is resident, else to ``cr``.
    cr = port.crp.name if port.crp is not None else None
    if "router" in port.nb.addresses or ctx.profile.has("ls_router_port_mac"):
        action = _output(port)
        if cr is not None:
            cr_action = f'outport = "{cr}"; output;' if port.enabled else "drop;"
            table.add(i, LS_IN_L2_LKUP, 50, f'eth.dst == {mac} && !is_chassis_resident("{cr}")', cr_action,
                      hint=h, owner=owner)
            table.add(i, LS_IN_L2_LKUP, 50, f'eth.dst == {mac} && is_chassis_resident("{cr}")', action,
                      hint=h, owner=owner)
        else:
            resident = _resident_port(lrp, rtr.dgps, sw)
            match = f"eth.dst == {mac}" + (f' && is_chassis_resident("{resident}")' if resident else "")
            table.add(i, LS_IN_L2_LKUP, 50, match, action, hint=h, owner=owner)
        if lrp.name in rtr.dgps:
            for ext_mac, lport in rtr.distributed_nats:
                table.add(
                    i,
                    LS_IN_L2_LKUP,
                    50,
                    f'eth.dst == {ext_mac} && is_chassis_resident("{lport}")',
                    action,
                    hint=h,
                    owner=owner,
                )
    if not lrp.enabled:
        return
    def to(name: str) -> str:
        out = f'outport = "{name}"; output;'
        return f'clone {{{out} }}; outport = "{MC_FLOOD_L2}"; output;' if sw.has_non_router_port else out

    # (match suffix, action): to the port, or with a "cr" port split by where the gateway port is.
    targets = [("", to(port.name))] if cr is None else [
        (f' && !is_chassis_resident("{cr}")', to(cr)), (f' && is_chassis_resident("{cr}")', to(port.name))]
    v4 = [n.addr_s for n in nets.ipv4]
    v6 = [n.addr_s for n in nets.ipv6]
    nat_ips = rtr.nat_ips
    if ctx.profile.has("l2_arp_snat_ips"):  # 25.03: the snat rules' external IPs too
        nat_ips = (*nat_ips, *rtr.snat_ips)
    if nat_ips:  # A NAT IP that is also a load-balancer VIP is announced like a VIP: only inside the port's networks.
        vips = ctx.cached("router_vip_texts", lrp.dp.key, lambda: frozenset(format_ip(v) for v in rtr.lb_vips))
        nat_ips = tuple(n for n in nat_ips if n not in vips)
    for ip in (*nat_ips, *_reachable_vips(lrp, nets, rtr, ctx)):
        ips = v6 if ":" in ip else v4
        if ip not in ips:
            ips.append(ip)
    for ip in v4:
        for suffix, action in targets:
            match = f"{FLAGBIT_NOT_VXLAN} && arp.op == 1 && arp.tpa == {ip}{suffix}"
            table.add(i, LS_IN_L2_LKUP, 80, match, action, hint=h, owner=owner)
    for ip in v6:
        for suffix, action in targets:
            match = f"{FLAGBIT_NOT_VXLAN} && nd_ns && nd.target == {ip}{suffix}"
            table.add(i, LS_IN_L2_LKUP, 80, match, action, hint=h, owner=owner)
    if sw.has_non_router_port:
        if ctx.profile.has("l2_flood_router_mac_first"):  # 25.03: the router port's MAC, then NAT MACs
            macs = ", ".join([mac, *(m for m in sset_order(list(rtr.nat_macs)) if m != mac)])
        else:
            macs = ", ".join(sset_order([mac, *rtr.nat_macs]))
        # 26.03 (l2_mcast_flood_l2): broadcast requests only.
        bcast = " && eth.dst == ff:ff:ff:ff:ff:ff" if ctx.profile.has("l2_mcast_flood_l2") else ""
        match = f"eth.src == {{{macs}}}{bcast} && (arp.op == 1 || rarp.op == 3 || nd_ns)"
        table.add(i, LS_IN_L2_LKUP, 75, match, f'outport = "{MC_FLOOD_L2}"; output;', owner=owner)
