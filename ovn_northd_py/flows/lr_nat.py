"""Router NAT and load-balancer VIP flows (``man ovn-northd``, checked against the reference's output).

Only gateway routers (``options:chassis``) and routers with exactly one distributed gateway
port D (chassisredirect port C) get them.  Per NAT rule (owner ``("nat", uuid)``), external
IP E, logical IP/network L (family ``ip4``/``ip6``):

* ``lr_in_ip_input``: ARP replies (IPv6: ``nd_na`` replies to solicitations) for E (90); on D
  also a drop (91) and a reply limited to C (92), and for ``snat`` rules ``inport == D && ip4.src == E`` is let through (120);
* ``snat``/``dnat_and_snat``: ``lr_in_unsnat`` (gateway router: 90 ``ct_snat``; D: 100, one
  flow per loopback case) and ``lr_out_snat`` (gateway router: priority ``plen(L) + 1``; D:
  ``plen(L) + 129`` (both families) and one more with ``reg9[4]``);
* ``dnat``/``dnat_and_snat``: ``lr_in_dnat`` (100) and, on D, ``lr_out_undnat`` (100);
* on D: ``lr_in_arp_resolve`` binds E to D's MAC (100) and drops hair-pinned traffic (150),
  ``lr_out_chk_dnat_local`` (50) and ``lr_out_egr_loop`` (100) per E.

A ``dnat_and_snat`` rule on D with ``external_mac`` M and ``logical_port`` P is distributed: its
flows are limited to P's chassis instead of C (none on its unSNAT/DNAT/unDNAT), use M as source
MAC and add ``lr_in_admission`` 50 (traffic to M) and ``lr_in_gw_redirect`` 100 (sent from P's
chassis directly).  With D's ``options:gateway_mtu`` (a read of D's options) that admission flow
checks the packet length (``gateway_mtu_bypass``: a 55 copy without the check) and too-big
packets to E get an ICMP error from M and E (``lr_in_ip_input`` 160).  When any port of the
router has ``options:redirect-type=bridged`` (a read of the router's ports), traffic from L out
of D on P's chassis resolves its next hop dynamically (``lr_in_arp_resolve`` 90).

Router-wide (owner ``("dp", key)``): with NAT rules ``lr_out_chk_dnat_local`` 50; with load
balancers the established / related ``lr_in_dnat`` flows (50, 70); with either, on gateway
routers, ``lr_out_undnat`` 50/100 and ``lr_out_post_undnat`` 50.

Per load balancer (owner ``("lb", uuid, router key)``): :mod:`.lr_lb` (also on plain distributed
routers, which get no NAT flows), and the router-wide ``lb_force_snat_ip`` / ``dnat_force_snat_ip``
flows of gateway routers (:func:`.lr_lb.build_lr_force_snat_flows`).

Incremental processing: NAT, load-balancer and router changes take the recompute path; a
rebuild must remove :func:`nat_and_lb_owners` and the router's dp owner before calling
:func:`build_lr_nat_flows` (which reads :func:`.lr_common.router_info`, memoised under the
router's key: ``ctx.forget(router.key)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Address, IPv6Network, ip_network
from typing import Any

from ..lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_RESOLVE,
    LR_IN_DNAT,
    LR_IN_GW_REDIRECT,
    LR_IN_IP_INPUT,
    LR_IN_UNSNAT,
    LR_OUT_CHK_DNAT_LOCAL,
    LR_OUT_EGR_LOOP,
    LR_OUT_POST_UNDNAT,
    LR_OUT_SNAT,
    LR_OUT_UNDNAT,
)
from ..lflow.table import FlowTable
from ..northd.addresses import AddressError, format_ipv6, parse_mac, solicited_node
from ..northd.build import opt
from ..northd.model import Datapath, Port
from .context import FlowCtx, dp_owner, hint
from .lr_common import REGBIT_PKT_LARGER, fmt_ip, gateway_mtu, parse_ip_strict, port_nets, router_info
from .lr_ip_input import ARP_REPLY
from .lr_lb import build_lr_force_snat_flows, build_router_lb_flows, forces_snat_for_lb, nat_external_ips

NatOwner = tuple[str, str]
LbOwner = tuple[str, str, str]

SNAT_TYPES = frozenset({"snat", "dnat_and_snat"})
DNAT_TYPES = frozenset({"dnat", "dnat_and_snat"})
EGR_LOOP = (
    'clone { ct_clear; inport = outport; outport = ""; eth.dst <-> eth.src; flags = 0; flags.loopback = 1; '
    "flags.use_snat_zone = reg9[4]; reg0 = 0; reg1 = 0; reg2 = 0; reg3 = 0; reg4 = 0; reg5 = 0; reg6 = 0; "
    "reg7 = 0; reg8 = 0; reg9 = 0; reg9[0] = 1; next(pipeline=ingress, table=0); };"
)
# The neighbour advertisement for an IPv6 NAT external IP (``nd_na``, not ``nd_na_router``).
NAT_NA_REPLY = (
    "nd_na { eth.src = xreg0[0..47]; ip6.src = nd.target; nd.tll = xreg0[0..47]; "
    "outport = inport; flags.loopback = 1; output; };"
)
CT_EST = "ct.est && !ct.rel && !ct.new && ct_mark.natted"
CT_REL = "ct.rel && !ct.est && !ct.new"
DNAT_CT_FLOWS = (
    (50, CT_EST, "next;"),
    (50, CT_REL, "ct_commit_nat;"),
    (70, f"{CT_EST} && ct_mark.force_snat == 1", "flags.force_snat_for_lb = 1; next;"),
    (70, f"{CT_EST} && ct_mark.skip_snat == 1", "flags.skip_snat_for_lb = 1; next;"),
    (70, f"{CT_REL} && ct_mark.force_snat == 1", "flags.force_snat_for_lb = 1; ct_commit_nat;"),
    (70, f"{CT_REL} && ct_mark.skip_snat == 1", "flags.skip_snat_for_lb = 1; ct_commit_nat;"),
)


def nat_owner(nat_key: str) -> NatOwner:
    return ("nat", nat_key)


def lb_owner(lb_key: str, router_key: str) -> LbOwner:
    return ("lb", lb_key, router_key)


@dataclass(frozen=True, slots=True)
class NatGw:
    """Where a router's NAT happens: a gateway router (``dgp`` None) or its only DGP and its cr port."""

    dgp: Port | None
    cr: str | None

    def resident(self) -> str:
        return f' && is_chassis_resident("{self.cr}")' if self.cr else ""


def nat_gateway(router: Datapath, ctx: FlowCtx) -> NatGw | None:
    info = router_info(router, ctx)
    if info.is_gateway:
        return NatGw(None, None)
    if len(info.dgps) == 1:
        dgp = info.dgps[0]
        return NatGw(dgp, dgp.crp.name if dgp.crp is not None else None)
    return None


def router_lbs(router: Datapath) -> list[Any]:
    lbs = list(router.nb.load_balancer)
    for group in router.nb.load_balancer_group:
        lbs += list(group.load_balancer)
    return lbs


def nat_and_lb_owners(router: Datapath) -> list[Any]:
    """The owners of a router's per-NAT-rule and per-load-balancer flows."""
    owners: list[Any] = [nat_owner(str(n.uuid)) for n in router.nb.nat]
    owners += [lb_owner(str(lb.uuid), router.key) for lb in router_lbs(router)]
    return owners


def _logical(text: str) -> tuple[str, int] | None:
    """The logical IP/network as the reference writes it (host address without ``/32``) and its plen."""
    try:
        net: IPv4Network | IPv6Network = ip_network(text.strip(), strict=False)
    except ValueError:
        return None
    if net.prefixlen == net.max_prefixlen:
        return str(net.network_address), net.prefixlen
    return str(net), net.prefixlen


def build_nat_rule_flows(router: Datapath, gw: NatGw, nat: Any, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of one NAT rule on ``router`` (see the module doc)."""
    ext_ip = parse_ip_strict(nat.external_ip.strip())
    logical = _logical(nat.logical_ip)
    if ext_ip is None or logical is None or nat.type not in SNAT_TYPES | DNAT_TYPES:
        return
    ext = fmt_ip(ext_ip)
    v4 = ext_ip.version == 4
    fam = "ip4" if v4 else "ip6"
    log_ip, plen = logical
    i, owner, h = router.index, nat_owner(str(nat.uuid)), hint(str(nat.uuid))

    def add(stage: Any, prio: int, match: str, actions: str) -> None:
        table.add(i, stage, prio, match, actions, hint=h, owner=owner)

    dgp, res = gw.dgp, gw.resident()
    mac = _distributed_mac(nat) if dgp is not None else None
    # A distributed (floating) IP is handled on its logical port's chassis, with its own MAC.
    nat_res = f' && is_chassis_resident("{opt(nat.logical_port)}")' if mac else res
    set_src = f"eth.src = {mac}; " if mac else ""
    if v4:
        resolve, resolve_reply = f"arp.op == 1 && arp.tpa == {ext}", ARP_REPLY
    else:
        sn = format_ipv6(solicited_node(IPv6Address(ext_ip)))
        resolve, resolve_reply = f"ip6.dst == {{{ext}, {sn}}} && nd_ns && nd.target == {ext}", NAT_NA_REPLY
    add(LR_IN_IP_INPUT, 90, resolve, resolve_reply)
    if dgp is not None:
        inp, outp = f'inport == "{dgp.name}"', f'outport == "{dgp.name}"'
        nets = port_nets(dgp, ctx)
        add(LR_IN_IP_INPUT, 91, f"{inp} && {resolve}", "drop;")
        reply = resolve_reply.replace("xreg0[0..47]", mac) if mac else resolve_reply
        add(LR_IN_IP_INPUT, 92, f"{inp} && {resolve}{nat_res}", reply)
        if nat.type == "snat":
            add(LR_IN_IP_INPUT, 120, f"{inp} && {fam}.src == {ext}", "next;")
        if mac:
            store = f"xreg0[0..47] = {nets.ea_s if nets else mac}; next;"
            mtu = gateway_mtu(dgp)
            admit = f"eth.dst == {mac} && {inp}{nat_res}"
            add(LR_IN_ADMISSION, 50, admit, f"{REGBIT_PKT_LARGER} = check_pkt_larger({mtu + 14}); {store}"
                if mtu else store)
            if mtu:
                bypass = dgp.nb.options.get("gateway_mtu_bypass")
                if bypass:
                    add(LR_IN_ADMISSION, 55, f"{admit} && ({bypass})", store)
                add(
                    LR_IN_IP_INPUT,
                    160,
                    f"{inp} && {REGBIT_PKT_LARGER} && reg9[0] == 0 && {fam} && {fam}.dst == {ext}",
                    _frag_needed(fam, mac, ext, mtu, dgp.name),
                )
            add(
                LR_IN_GW_REDIRECT,
                100,
                f"{fam}.src == {log_ip} && {outp}{nat_res}",
                f"eth.src = {mac}; {'reg1' if v4 else 'xxreg1'} = {ext}; next;",
            )
            if any(_bridged(q) for q in router.ports if q.kind == "lrp"):
                lookup = "get_arp(outport, reg0)" if v4 else "get_nd(outport, xxreg0)"
                add(LR_IN_ARP_RESOLVE, 90, f"{outp} && {fam}.src == {log_ip}{nat_res}", f"{lookup}; next;")
        bound_mac = mac or (nets.ea_s if nets is not None else None)
        if bound_mac is not None:
            reg = "reg0" if v4 else "xxreg0"
            add(LR_IN_ARP_RESOLVE, 100, f"{outp} && {reg} == {ext}", f"eth.dst = {bound_mac}; next;")
        add(LR_IN_ARP_RESOLVE, 150, f"{inp} && {outp} && {fam}.dst == {ext}", "drop;")
        add(LR_OUT_CHK_DNAT_LOCAL, 50, f"ip && {fam}.dst == {ext}{nat_res}", "reg9[4] = 1; next;")
        add(LR_OUT_EGR_LOOP, 100, f"{fam}.dst == {ext} && {outp}{nat_res}", EGR_LOOP)
    in_res = "" if mac else res  # unSNAT/DNAT of a distributed IP happen wherever the packet is
    if nat.type in SNAT_TYPES:
        if dgp is None:
            add(LR_IN_UNSNAT, 90, f"ip && {fam}.dst == {ext}", "ct_snat;")
            add(
                LR_OUT_SNAT,
                plen + 1,
                f"ip && {fam}.src == {log_ip} && (!ct.trk || !ct.rpl)",
                f"ct_snat({ext});",
            )
        else:
            head = f"ip && {fam}.dst == {ext} && {inp}"
            add(LR_IN_UNSNAT, 100, f"{head} && flags.loopback == 0{in_res}", "ct_snat_in_czone;")
            add(
                LR_IN_UNSNAT,
                100,
                f"{head} && flags.loopback == 1 && flags.use_snat_zone == 1{in_res}",
                "ct_snat;",
            )
            m = f"ip && {fam}.src == {log_ip} && {outp}{nat_res}"
            base = plen + 129
            add(LR_OUT_SNAT, base, m, f"{set_src}ct_snat_in_czone({ext});")
            add(LR_OUT_SNAT, base + 1, f"{m} && reg9[4] == 1", f"{set_src}reg9[4] = 0; ct_snat({ext});")
    if nat.type in DNAT_TYPES:
        if dgp is None:
            add(LR_IN_DNAT, 100, f"ip && {fam}.dst == {ext}", f"flags.loopback = 1; ct_dnat({log_ip});")
        else:
            add(LR_IN_DNAT, 100, f"ip && {fam}.dst == {ext} && {inp}{in_res}", f"ct_dnat_in_czone({log_ip});")
            add(
                LR_OUT_UNDNAT,
                100,
                f"ip && {fam}.src == {log_ip} && {outp}{in_res}",
                f"{set_src}ct_dnat_in_czone;",
            )


def _bridged(port: Port) -> bool:
    """Does router port ``port`` have ``options:redirect-type=bridged`` (any case)?"""
    return str(port.nb.options.get("redirect-type", "")).lower() == "bridged"


def _frag_needed(fam: str, mac: str, ext: str, mtu: int, port: str) -> str:
    """The ICMP error for a too-big packet to a distributed floating IP (sent back from its MAC/IP)."""
    head = f"reg9[0] = 1; reg9[1] = 0; eth.dst = eth.src; eth.src = {mac}; {fam}.dst = {fam}.src; {fam}.src = {ext}; "
    tail = f'outport = "{port}"; flags.loopback = 1; output; }};'
    if fam == "ip4":
        return (
            f"icmp4_error {{{head}ip.ttl = 254; icmp4.type = 3; /* Destination Unreachable. */ icmp4.code = 4; "
            f"/* Frag Needed and DF was Set. */ icmp4.frag_mtu = {mtu}; {tail}"
        )
    return (
        f"icmp6_error {{{head}ip.ttl = 254; icmp6.type = 2; /* Packet Too Big. */ icmp6.code = 0; "
        f"icmp6.frag_mtu = {mtu}; {tail}"
    )


def _distributed_mac(nat: Any) -> str | None:
    """The external MAC of a distributed ``dnat_and_snat`` rule (with a valid MAC and a logical port)."""
    mac, lport = opt(nat.external_mac), opt(nat.logical_port)
    if nat.type != "dnat_and_snat" or not mac or not lport:
        return None
    try:
        parse_mac(mac)
    except AddressError:
        return None
    return str(mac).strip()


def build_lr_nat_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """A router's NAT and load-balancer flows (after removing :func:`nat_and_lb_owners` and its dp owner)."""
    gw = nat_gateway(router, ctx)
    lbs = router_lbs(router)
    build_lr_force_snat_flows(router, ctx, table)
    if gw is None:
        if lbs and not router_info(router, ctx).dgps:  # a plain distributed router: its LB flows only
            _build_lbs(router, NatGw(None, None), lbs, ctx, table, gateway=False)
        return
    if not (router.nb.nat or lbs):
        return
    i, owner = router.index, dp_owner(router)
    if lbs:
        for prio, match, actions in DNAT_CT_FLOWS:
            table.add(i, LR_IN_DNAT, prio, match, actions, owner=owner)
    if router.nb.nat:
        table.add(
            i, LR_OUT_CHK_DNAT_LOCAL, 50, "ip && ct_mark.natted == 1", "reg9[4] = 1; next;", owner=owner
        )
    if gw.dgp is None:
        table.add(i, LR_OUT_UNDNAT, 50, "ip", "flags.loopback = 1; ct_dnat;", owner=owner)
        table.add(i, LR_OUT_UNDNAT, 100, "nd || nd_rs || nd_ra", "next;", owner=owner)
        table.add(i, LR_OUT_POST_UNDNAT, 50, "ip && ct.new", "ct_commit { } ; next; ", owner=owner)
    for nat in sorted(router.nb.nat, key=lambda n: str(n.uuid)):
        build_nat_rule_flows(router, gw, nat, ctx, table)
    _build_lbs(router, gw, lbs, ctx, table)


def _build_lbs(router: Datapath, gw: NatGw, lbs: list[Any], ctx: FlowCtx, table: FlowTable,
               gateway: bool = True) -> None:
    """The load balancers' flows (:mod:`.lr_lb`) and, on any router with one, DNAT's ct flows."""
    if not gateway:
        for prio, match, actions in DNAT_CT_FLOWS:
            table.add(router.index, LR_IN_DNAT, prio, match, actions, owner=dp_owner(router))
    force, nat_ips = forces_snat_for_lb(router, ctx), nat_external_ips(router)
    for lb in lbs:
        build_router_lb_flows(router, gw, lb, table, force_snat=force, nat_ips=nat_ips, gateway=gateway)
