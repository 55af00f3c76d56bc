"""Router NAT and load-balancer VIP flows (``man ovn-northd``, checked against the reference's output).

Only gateway routers (``options:chassis``) and routers with exactly one distributed gateway
port D (chassisredirect port C) get them.  Per NAT rule (owner ``("nat", uuid)``), external
IP E, logical IP/network L (family ``ip4``/``ip6``):

* ``lr_in_ip_input``: ARP replies for E (90); on D also a drop (91) and a reply limited to C
  (92), and for ``snat`` rules ``inport == D && ip4.src == E`` is let through (120);
* ``snat``/``dnat_and_snat``: ``lr_in_unsnat`` (gateway router: 90 ``ct_snat``; D: 100, one
  flow per loopback case) and ``lr_out_snat`` (gateway router: priority ``plen(L) + 1``; D:
  ``plen(L) + 129`` (both families) and one more with ``reg9[4]``);
* ``dnat``/``dnat_and_snat``: ``lr_in_dnat`` (100) and, on D, ``lr_out_undnat`` (100);
* on D: ``lr_in_arp_resolve`` binds E to D's MAC (100) and drops hair-pinned traffic (150),
  ``lr_out_chk_dnat_local`` (50) and ``lr_out_egr_loop`` (100) per E.

A ``dnat_and_snat`` rule on D with ``external_mac`` M and ``logical_port`` P is distributed: its
flows are limited to P's chassis instead of C (none on its unSNAT/DNAT/unDNAT), use M as source
MAC and add ``lr_in_admission`` 50 (traffic to M) and ``lr_in_gw_redirect`` 100 (sent from P's
chassis directly).

Router-wide (owner ``("dp", key)``): with NAT rules ``lr_out_chk_dnat_local`` 50; with load
balancers the established / related ``lr_in_dnat`` flows (50, 70); with either, on gateway
routers, ``lr_out_undnat`` 50/100 and ``lr_out_post_undnat`` 50.

Per load balancer (owner ``("lb", uuid, router key)``), per ``IP:PORT`` VIP with a protocol:
``lr_in_defrag`` 100 ``ct_dnat``, ``lr_in_dnat`` 120 ``ct_lb_mark`` and, on D,
``lr_out_undnat`` 120 for its backends.  VIPs without a port, IPv6 ND for NAT IPs, external
MACs, ``gateway_port``, LB options (affinity, hairpin, skip_snat, ...) and the ``$_rtr_lb``
ARP replies are not built here.

Incremental processing: NAT, load-balancer and router changes take the recompute path; a
rebuild must remove :func:`nat_and_lb_owners` and the router's dp owner before calling
:func:`build_lr_nat_flows` (which reads :func:`.lr_common.router_info`, memoised under the
router's key: ``ctx.forget(router.key)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any

from ..lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_RESOLVE,
    LR_IN_DEFRAG,
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
from ..northd.addresses import AddressError, parse_mac
from ..northd.build import opt
from ..northd.model import Datapath, Port
from .context import FlowCtx, dp_owner, hint
from .lr_common import fmt_ip, parse_ip_strict, port_nets, router_info
from .lr_ip_input import ARP_REPLY

NatOwner = tuple[str, str]
LbOwner = tuple[str, str, str]

SNAT_TYPES = frozenset({"snat", "dnat_and_snat"})
DNAT_TYPES = frozenset({"dnat", "dnat_and_snat"})
EGR_LOOP = (
    'clone { ct_clear; inport = outport; outport = ""; eth.dst <-> eth.src; flags = 0; flags.loopback = 1; '
    "flags.use_snat_zone = reg9[4]; reg0 = 0; reg1 = 0; reg2 = 0; reg3 = 0; reg4 = 0; reg5 = 0; reg6 = 0; "
    "reg7 = 0; reg8 = 0; reg9 = 0; reg9[0] = 1; next(pipeline=ingress, table=0); };"
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
        add(LR_IN_IP_INPUT, 90, f"arp.op == 1 && arp.tpa == {ext}", ARP_REPLY)
    if dgp is not None:
        inp, outp = f'inport == "{dgp.name}"', f'outport == "{dgp.name}"'
        nets = port_nets(dgp, ctx)
        if v4:
            add(LR_IN_IP_INPUT, 91, f"{inp} && arp.op == 1 && arp.tpa == {ext}", "drop;")
            reply = ARP_REPLY.replace("xreg0[0..47]", mac) if mac else ARP_REPLY
            add(LR_IN_IP_INPUT, 92, f"{inp} && arp.op == 1 && arp.tpa == {ext}{nat_res}", reply)
        if nat.type == "snat":
            add(LR_IN_IP_INPUT, 120, f"{inp} && {fam}.src == {ext}", "next;")
        if mac:
            add(
                LR_IN_ADMISSION,
                50,
                f"eth.dst == {mac} && {inp}{nat_res}",
                f"xreg0[0..47] = {nets.ea_s if nets else mac}; next;",
            )
            add(
                LR_IN_GW_REDIRECT,
                100,
                f"{fam}.src == {log_ip} && {outp}{nat_res}",
                f"eth.src = {mac}; {'reg1' if v4 else 'xxreg1'} = {ext}; next;",
            )
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


def _split_ip_port(text: str) -> tuple[str, int] | None:
    """``IP:PORT`` / ``[IP6]:PORT`` -> (formatted IP, port); None without a port or when malformed."""
    t = text.strip()
    if t.startswith("["):
        addr, _, rest = t[1:].partition("]")
        if not rest.startswith(":"):
            return None
        port_s = rest[1:]
    else:
        addr, sep, port_s = t.rpartition(":")
        if not sep or ":" in addr:
            return None
    ip = parse_ip_strict(addr)
    if ip is None or not port_s.isdigit() or not 0 < int(port_s) < 65536:
        return None
    return fmt_ip(ip), int(port_s)


def build_router_lb_flows(router: Datapath, gw: NatGw, lb: Any, table: FlowTable) -> None:
    """The flows of one load balancer on ``router`` (VIPs with a port only)."""
    i, owner, h = router.index, lb_owner(str(lb.uuid), router.key), hint(str(lb.uuid))
    proto = str(opt(lb.protocol) or "tcp")
    res = gw.resident()
    for vip_text, backends_text in sorted(lb.vips.items()):
        vip = _split_ip_port(vip_text)
        if vip is None:
            continue
        addr, port = vip
        fam = "ip6" if ":" in addr else "ip4"
        backends = [b for b in (_split_ip_port(x) for x in backends_text.split(",") if x.strip()) if b]
        if not backends:
            continue
        table.add(i, LR_IN_DEFRAG, 100, f"ip && {fam}.dst == {addr}", "ct_dnat;", hint=h, owner=owner)
        be = ",".join(f"[{a}]:{p}" if ":" in a else f"{a}:{p}" for a, p in backends)
        match = f"ct.new && !ct.rel && {fam} && {fam}.dst == {addr} && {proto} && {proto}.dst == {port}{res}"
        table.add(i, LR_IN_DNAT, 120, match, f"ct_lb_mark(backends={be});", hint=h, owner=owner)
        if gw.dgp is not None:
            alts = " || ".join(f"({fam}.src == {a} && {proto}.src == {p})" for a, p in backends)
            m = f'{fam} && ({alts}) && outport == "{gw.dgp.name}"{res}'
            table.add(i, LR_OUT_UNDNAT, 120, m, "ct_dnat_in_czone;", hint=h, owner=owner)


def build_lr_nat_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """A router's NAT and load-balancer flows (after removing :func:`nat_and_lb_owners` and its dp owner)."""
    gw = nat_gateway(router, ctx)
    lbs = router_lbs(router)
    if gw is None or not (router.nb.nat or lbs):
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
    for lb in lbs:
        build_router_lb_flows(router, gw, lb, table)
