"""Router NAT and load-balancer VIP flows (``man ovn-northd``, checked against the reference's output).

Only gateway routers (``options:chassis``) and routers with distributed gateway ports (DGPs) get
them; a plain distributed router gets only the ARP / ND replies (90) for its rules' external IPs
(observed).  Each NAT rule is applied on one DGP D (chassisredirect port C): the one its ``gateway_port``
names (a rule naming another port gets only the ARP flow 90), else the router's only DGP, else the
first DGP (port order) with a network holding the external IP (none: ARP flow 90 only); on a
gateway router a rule with ``gateway_port`` gets the ARP flow only (:func:`nat_rule_gateway`,
observed).  Per NAT rule (owner ``("nat", uuid, router key)``), external IP E, logical IP/network L (family
``ip4``/``ip6``):

* ``lr_in_ip_input``: ARP replies (IPv6: ``nd_na`` replies to solicitations) for E (90); on D
  also a drop (91) and a reply limited to C (92; with one DGP always that DGP, whatever
  ``gateway_port`` says: :func:`nat_arp_gateway`), and for ``snat`` rules ``inport == D &&
  ip4.src == E`` is let through (120);
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
of D on P's chassis resolves its next hop dynamically (``lr_in_arp_resolve`` 90).  25.03
(``centralized_dgp_peer``): when D's peer switch port has a chassisredirect port of its own (no
localnet port there), such a rule is centralized like the others, and every rule of D answers ARP
/ ND with the 90 flow only (no D-specific 91 / 92 ones) (observed).  Such a rule with
a malformed M gets its ARP flows only on D; a gateway router ignores M (valid or not: observed).

Rule options (:class:`NatOpts`, observed): ``options:stateless`` on a ``dnat_and_snat`` rule
rewrites addresses instead of using conntrack (unSNAT ``next;`` in one flow, DNAT ``ip4.dst=L;
next;``, unDNAT ``next;``, SNAT ``ip4.src=E; next;`` in one flow, no ``ct.trk`` guard);
``external_port_range`` R is appended to the ct_snat/ct_dnat arguments (``ct_snat(E,R)``, as
written); ``allowed_ext_ips`` A adds ``&& ip4.src == $A`` to DNAT and ``&& ip4.dst == $A`` to SNAT;
``exempted_ext_ips`` X adds a ``next;`` bypass two priorities above (DNAT 102, SNAT prio+2); a rule
with both address sets only gets its ARP flows (90/91/92), and so does a ``dnat`` / ``dnat_and_snat``
rule whose logical IP is a network rather than a host (observed).  Stateless rules with address sets
on D steer the remote end in ``lr_in_gw_redirect`` (allowed: 75 ``outport == D && ip4.src == $A``
to C, 70 ``ip && ip4.dst == E`` drop; exempted: 75 drop).  A gateway router with an address in
``options:dnat_force_snat_ip`` prefixes its DNAT actions with ``flags.force_snat_for_dnat = 1;``.

Router-wide (owner ``("dp", key)``; routers with several DGPs use the first one, as their load
balancers do): with NAT rules ``lr_out_chk_dnat_local`` 50; with load
balancers the established / related ``lr_in_dnat`` flows (50, 70); with either, on gateway
routers, ``lr_out_undnat`` 50/100 and ``lr_out_post_undnat`` 50.

Per load balancer (owner ``("lb", uuid, router key)``): :mod:`.lr_lb` (also on plain distributed
routers, which get no NAT flows), and the router-wide ``lb_force_snat_ip`` / ``dnat_force_snat_ip``
flows of gateway routers (:func:`.lr_lb.build_lr_force_snat_flows`).

Inputs besides the router's NAT rows: its ports (DGPs and their networks, ``gateway_port``
resolution), its options, and the *names* of the NAT rules' address sets.

A rule whose external IP or type does not parse gets no flows and is warned about once
(``ctx.warn``, kind ``nat_bad_rule``, naming the NAT row); one whose logical IP/network does not
parse (trailing blanks, say) keeps its ARP / ND replies only.  The logical IP/network L is written
as the NB has it (``10.0.0.12/32``, `` 10.0.0.012``, a dotted mask: observed), its prefix length
taken from the mask.

``options:add_route=true`` on a ``dnat`` / ``dnat_and_snat`` rule with an IPv4 external IP E applied
on a DGP D (:func:`build_lsp_nat_add_route_flows`, observed): every other router with a port P on
D's switch (through a router-type switch port) routes E there -- ``lr_in_ip_routing`` 98 (a
connected /32 route) ``ip4.dst == E/32`` -> ``ip.ttl--; reg8[0..15] = 0; reg0 = ip4.dst; reg1 =
<P's first IPv4>; eth.src = <P's MAC>; outport = "P"; flags.loopback = 1; next;`` (a P without IPv4
networks: nothing; behaviour ``add_route_lla_neighbour``, 25.03: the same route from P's IPv6
link-local address, ``xxreg1 = fe80::...`` and ``reg9[9] = 0``, whatever IPv6 networks P has) -- and, on
gateway routers and when P is itself a DGP (not with ``options:dynamic_neigh_routers=true``), binds
those IPs: ``lr_in_arp_resolve`` 100 ``outport == "P" && reg0 ==
{E1, E2, ...}`` (rules in uuid order, one flow per MAC) -> ``eth.dst = <D's MAC, or the rule's
external_mac when distributed>; next;``.  IPv6 rules, ``snat`` rules and gateway routers' rules add
nothing.  Load balancers with ``options:add_route=true`` (own and groups') do the same for their
IPv4 VIPs on the switch of every DGP of the router (:func:`_add_route_vips`): routes 98 per VIP and
the VIPs appended to the bindings of D's MAC (after the NAT IPs; the order of a large VIP list is
not pinned down: observed in an OVS string set order that depends on the rows' uuids).  With several DGPs, the router's first DGP takes every such rule, another DGP only the
rules naming it as ``gateway_port`` or, without one, whose external IP is in its networks
(:func:`_routes_on`).  Those flows belong to the router-type switch port peering with D (owner ``("port",
name)``): they read the router's NAT rules and D (rebuilt with the router's scope, which rebuilds
its peer switch ports) and the switch's other router ports (rebuilt when routers attach to or
detach from the switch or one of their ports changes in place: every port of the switch is).

Incremental processing: NAT, load-balancer and router changes rebuild the router's scope; a
rebuild must remove :func:`nat_and_lb_owners` and the router's dp owner before calling
:func:`build_lr_nat_flows` (which reads :func:`.lr_common.router_info`, memoised under the
router's key: ``ctx.forget(router.key)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv6Address
from typing import Any

from ..lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_RESOLVE,
    LR_IN_CT_EXTRACT,
    LR_IN_DEFRAG,
    LR_IN_DNAT,
    LR_IN_GW_REDIRECT,
    LR_IN_IP_INPUT,
    LR_IN_IP_ROUTING,
    LR_IN_POST_UNSNAT,
    LR_IN_UNSNAT,
    LR_OUT_CHK_DNAT_LOCAL,
    LR_OUT_EGR_LOOP,
    LR_OUT_POST_SNAT,
    LR_OUT_POST_UNDNAT,
    LR_OUT_SNAT,
    LR_OUT_UNDNAT,
)
from ..lflow.table import FlowTable
from ..northd.addresses import (
    AddressError,
    IPAddress,
    format_ip,
    format_ipv6,
    format_mac,
    parse_mac,
    parse_nat_external_ip,
    solicited_node,
)
from ..northd.build import CENTRALIZED_DGP_PEER
from ..northd.lb_vips import is_template_lb, parse_vip
from ..northd.model import Datapath, Port
from ..northd.nat_rules import logical_ip, nat_rejection, rejects, valid_nats
from ..northd.ovs_order import sset_order
from ..ovsdb import fastrow
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .lr_common import (
    fmt_ip,
    gateway_mtu,
    gateway_mtu_bypass,
    network_addr_for,
    nexthop_family,
    parse_ip_strict,
    pkt_larger_len,
    port_nets,
    route_priority,
    router_info,
    router_nat_owned,
    smap_bool,
    src_ipv4_reg,
)
from .lr_ip_input import ARP_REPLY
from .lr_lb import (
    build_lr_force_snat_flows,
    build_router_lbs_flows,
    first_per_family,
    forces_snat_for_lb,
    nat_external_ips,
)
from .ls_lb import CT_EXTRACT_ACTIONS
from .owners import NatOwner, RouterLbOwner, dp_owner, nat_owner, port_owner, router_lb_owner
from .registers import (
    REG_ECMP_GROUP_ID,
    REG_INPORT_ETH_ADDR,
    REG_NEXT_HOP_IPV4,
    REG_NEXT_HOP_IPV6,
    REG_SRC_IPV6,
    REGBIT_DST_NAT_IP_LOCAL,
    REGBIT_EGRESS_LOOPBACK,
    REGBIT_PKT_LARGER,
)
from .router_addrs import reachable_vips, router_addrs, router_lb_vip_set_names

SNAT_TYPES = frozenset({"snat", "dnat_and_snat"})
DNAT_TYPES = frozenset({"dnat", "dnat_and_snat"})
EGR_LOOP = (
    'clone { ct_clear; inport = outport; outport = ""; eth.dst <-> eth.src; flags = 0; flags.loopback = 1; '
    f"flags.use_snat_zone = {REGBIT_DST_NAT_IP_LOCAL}; reg0 = 0; reg1 = 0; reg2 = 0; reg3 = 0; reg4 = 0; reg5 = 0; reg6 = 0; "
    f"reg7 = 0; reg8 = 0; reg9 = 0; {REGBIT_EGRESS_LOOPBACK} = 1; next(pipeline=ingress, table=0); }};"
)
# ... with the ``dgp_nat_no_czone`` behaviour (25.03): no SNAT-zone choice to carry over.
EGR_LOOP_NO_CZONE = EGR_LOOP.replace(f"flags.use_snat_zone = {REGBIT_DST_NAT_IP_LOCAL}; ", "")
# The neighbour advertisement for an IPv6 NAT external IP (``nd_na``, not ``nd_na_router``).
NAT_NA_REPLY = (
    f"nd_na {{ eth.src = {REG_INPORT_ETH_ADDR}; ip6.src = nd.target; nd.tll = {REG_INPORT_ETH_ADDR}; "
    "outport = inport; flags.loopback = 1; output; };"
)
CT_REL = "ct.rel && !ct.est && !ct.new"


def dnat_ct_flows(ctx: FlowCtx) -> tuple[tuple[int, str, str], ...]:
    """``lr_in_dnat``'s conntrack flows of a router with load balancers: established (and, when every
    chassis can NAT related traffic, related) connections, with their SNAT flags; the flags are in
    ``ct_mark`` or, for old chassis, ``ct_label`` (:mod:`.chassis_features`).  With the
    ``lb_ct_not_rpl`` behaviour (25.03) replies (``ct.rpl``) are left to the later stages."""
    features = ctx.features
    ct = features.ct
    est = f"ct.est && !ct.rel && !ct.new && {ct('natted')}"
    flows = [
        (50, est, "next;"),
        (70, f"{est} && {ct('force_snat')} == 1", "flags.force_snat_for_lb = 1; next;"),
        (70, f"{est} && {ct('skip_snat')} == 1", "flags.skip_snat_for_lb = 1; next;"),
    ]
    if features.ct_lb_related:
        flows += [
            (50, CT_REL, "ct_commit_nat;"),
            (70, f"{CT_REL} && {ct('force_snat')} == 1", "flags.force_snat_for_lb = 1; ct_commit_nat;"),
            (70, f"{CT_REL} && {ct('skip_snat')} == 1", "flags.skip_snat_for_lb = 1; ct_commit_nat;"),
        ]
    if ctx.profile.has("lb_ct_not_rpl"):
        flows = [(p, m.replace("!ct.new", "!ct.new && !ct.rpl", 1), x) for p, m, x in flows]
    return tuple(flows)


def _add_dnat_ct_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """:func:`dnat_ct_flows` of a router with load balancers and, with the ``ct_extract_lb_match``
    behaviour (26.03), ``lr_in_ct_extract`` 100 loading new connections' protocol and port."""
    i, owner = router.index, dp_owner(router)
    for prio, match, actions in dnat_ct_flows(ctx):
        table.add(i, LR_IN_DNAT, prio, match, actions, owner=owner)
    if ctx.profile.has("ct_extract_lb_match"):
        table.add(i, LR_IN_CT_EXTRACT, 100, "ct.new && ip", CT_EXTRACT_ACTIONS, owner=owner)


@dataclass(frozen=True, slots=True)
class NatGw:
    """Where NAT happens: a gateway router (``dgp`` None) or a distributed gateway port and its cr port."""

    dgp: Port | None
    cr: str | None

    def resident(self) -> str:
        return f' && is_chassis_resident("{self.cr}")' if self.cr else ""


def _dgp_gw(dgp: Port) -> NatGw:
    return NatGw(dgp, dgp.crp.name if dgp.crp is not None else None)


def nat_gateway(router: Datapath, ctx: FlowCtx) -> NatGw | None:
    """Where a router's router-wide NAT / load-balancer flows happen: a gateway router, or its
    first distributed gateway port (port order; the one its load balancers use); None on a plain
    distributed router."""
    info = router_info(router, ctx)
    if info.is_gateway:
        return NatGw(None, None)
    if info.dgps:
        return _dgp_gw(info.dgps[0])
    return None


def _dgp_for_ip(router: Datapath, ctx: FlowCtx, text: str) -> Port | None:
    """The first distributed gateway port (port order) with a network holding ``text``."""
    ip = parse_ip_strict(text.strip())
    if ip is None:
        return None
    for dgp in router_info(router, ctx).dgps:
        nets = port_nets(dgp, ctx)
        if nets is not None and network_addr_for(nets, ip) is not None:
            return dgp
    return None


def _named_dgp(router: Datapath, ctx: FlowCtx, row: Any) -> Port | None:
    key = str(row.uuid)
    return next((p for p in router_info(router, ctx).dgps if p.nb_key == key), None)


def nat_rule_gateway(router: Datapath, ctx: FlowCtx, nat: Any) -> NatGw | None:
    """Where one NAT rule is applied (observed; ``man ovn-nb`` NAT ``gateway_port``), or None (no flows).

    A gateway router: there, unless ``gateway_port`` is set.  A router with distributed gateway
    ports: ``gateway_port`` when it names one of them (else nothing); without it, the only DGP,
    or with several the first whose networks hold ``external_ip``."""
    info = router_info(router, ctx)
    named = opt(nat.gateway_port)
    if info.is_gateway:
        return None if named is not None else NatGw(None, None)
    if not info.dgps:
        return None
    if named is not None:
        dgp = _named_dgp(router, ctx, named)
    elif len(info.dgps) == 1:
        dgp = info.dgps[0]
    else:
        dgp = _dgp_for_ip(router, ctx, nat.external_ip)
    return _dgp_gw(dgp) if dgp is not None else None


def nat_arp_gateway(router: Datapath, ctx: FlowCtx, nat: Any) -> NatGw | None:
    """The gateway whose port answers ARP / ND for a NAT rule's external IP (``lr_in_ip_input`` 91/92).

    Observed: the only DGP whatever ``gateway_port`` says; with several, as :func:`nat_rule_gateway`."""
    info = router_info(router, ctx)
    if info.is_gateway or not info.dgps:
        return NatGw(None, None)
    if len(info.dgps) == 1:
        return _dgp_gw(info.dgps[0])
    return nat_rule_gateway(router, ctx, nat)


def router_lbs(router: Datapath) -> list[Any]:
    lbs = list(router.nb.load_balancer)
    for group in router.nb.load_balancer_group:
        lbs += list(group.load_balancer)
    return lbs


def nat_and_lb_owners(router: Datapath) -> list[NatOwner | RouterLbOwner]:
    """The owners of a router's per-NAT-rule and per-load-balancer flows."""
    owners: list[NatOwner | RouterLbOwner] = [nat_owner(str(n.uuid), router.key) for n in router.nb.nat]
    owners += [router_lb_owner(str(lb.uuid), router.key) for lb in router_lbs(router)]
    return owners


@dataclass(frozen=True, slots=True)
class NatOpts:
    """The per-rule options that shape a NAT rule's flows (``man ovn-nb`` NAT table).

    ``stateless``: ``options:stateless`` on a ``dnat_and_snat`` rule (addresses rewritten, no
    conntrack); ``allowed`` / ``exempted``: the names of the ``allowed_ext_ips`` /
    ``exempted_ext_ips`` address sets; ``port_range``: ``external_port_range`` as written
    (appended to the ct_snat/ct_dnat arguments, not validated: observed)."""

    stateless: bool
    allowed: str | None
    exempted: str | None
    port_range: str

    @staticmethod
    def of(nat: Any) -> NatOpts:
        allowed, exempted = opt(nat.allowed_ext_ips), opt(nat.exempted_ext_ips)
        return NatOpts(
            stateless=nat.type == "dnat_and_snat" and smap_bool(nat.options, "stateless", False),
            allowed=str(allowed.name) if allowed is not None else None,
            exempted=str(exempted.name) if exempted is not None else None,
            port_range=str(nat.external_port_range or "").strip(),
        )

    def ct_arg(self, addr: str) -> str:
        return f"{addr},{self.port_range}" if self.port_range else addr


def dnat_forces_snat(router: Datapath, ctx: FlowCtx) -> bool:
    """A gateway router whose ``options:dnat_force_snat_ip`` holds an address (either family)."""
    return router_info(router, ctx).is_gateway and bool(
        first_per_family(str(router.nb.options.get("dnat_force_snat_ip", "")))
    )


def build_nat_rule_flows(router: Datapath, nat: Any, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of one NAT rule on ``router`` (see the module doc): the ARP / ND replies for its
    external IP, then -- for a rule that applies -- its distributed gateway port's flows, its SNAT
    and its DNAT flows."""
    if rejects(ctx.profile) and (why := nat_rejection(nat, router)) is not None:
        ctx.warn("nat_bad_rule", "NAT", nat.uuid, why, router=router.name)
        return  # 25.03 (northd/nat_rules.py): not even the ARP / ND replies
    parsed = parse_nat_external_ip(nat.external_ip)
    logical = logical_ip(nat.logical_ip)
    add = _NatAdd(table, router.index, nat_owner(str(nat.uuid), router.key), hint(str(nat.uuid)))
    if parsed is None and nat.type in SNAT_TYPES | DNAT_TYPES:
        head = parse_nat_external_ip(nat.external_ip, arp=True)
        if head is not None and ctx.profile.has("nat_external_ip_text"):
            # 25.03 (observed): an address followed by junk is answered for (ARP) as the address,
            # and every other flow of the rule names the text as written.
            parsed = (head[0], str(nat.external_ip))
        elif head is not None:
            # Observed: an address followed by junk is answered for (ARP), and nothing else.
            _build_nat_arp_flows(router, nat, ctx, head[0], add)
    if parsed is None or nat.type not in SNAT_TYPES | DNAT_TYPES:
        reason = f"bad external_ip {nat.external_ip!r}" if parsed is None else f"bad type {nat.type!r}"
        ctx.warn("nat_bad_rule", "NAT", nat.uuid, reason, router=router.name)
        return
    ext_ip, ext = parsed
    if ext != fmt_ip(ext_ip) and ext == str(nat.external_ip):
        ctx.warn("nat_bad_rule", "NAT", nat.uuid, f"bad external_ip {nat.external_ip!r}: used as written, as the "
                 "reference does", router=router.name)
    elif ext != fmt_ip(ext_ip):
        ctx.warn("nat_lenient_external_ip", "NAT", nat.uuid,
                 f"external_ip {nat.external_ip!r} read as {fmt_ip(ext_ip)}, as the reference does",
                 router=router.name)
    o = NatOpts.of(nat)
    _build_nat_arp_flows(router, nat, ctx, ext_ip, add)
    if logical is None:
        # Observed: a logical IP that does not parse leaves the rule its ARP / ND replies only.
        ctx.warn("nat_bad_rule", "NAT", nat.uuid, f"bad logical_ip {nat.logical_ip!r}", router=router.name)
        return
    log_ip, plen = logical
    gw = nat_rule_gateway(router, ctx, nat)
    if gw is None or (o.allowed and o.exempted) or (gw.dgp is not None and _bad_distributed(nat)):
        return  # e.g. both address sets: the rule is not considered
    if nat.type in DNAT_TYPES and plen != (128 if ":" in log_ip else 32):
        # Observed: a DNAT rule needs a host logical IP; a network only answers ARP (and warns).
        ctx.warn("nat_bad_rule", "NAT", nat.uuid, f"bad logical_ip {nat.logical_ip!r} for {nat.type}",
                 router=router.name)
        return
    dmac = _distributed_mac(nat) if gw.dgp is not None and not centralized_dgp(gw.dgp, ctx) else None
    mac = dmac.norm if dmac is not None else None
    xmatch, xprio = _extra_match(nat, ctx)
    r = _NatRule(nat, o, ext, ext_ip.version == 4, log_ip, plen, gw, dmac, mac,
                 # A distributed (floating) IP is handled on its logical port's chassis, with its own MAC.
                 f' && is_chassis_resident("{opt(nat.logical_port)}")' if mac else gw.resident(),
                 xmatch, xprio)
    if r.dgp is not None:
        _build_nat_dgp_flows(router, ctx, r, r.dgp, add)
    if nat.type in SNAT_TYPES:
        _build_snat_flows(r, add, ctx, tracks_snat_replies(router, ctx))
    if nat.type in DNAT_TYPES:
        _build_dnat_flows(router, ctx, r, add)


def _extra_match(nat: Any, ctx: FlowCtx) -> tuple[str, int | None]:
    """25.03 (behaviour "nat_match_priority", observed): a rule with a ``match`` adds
    `` && (MATCH)`` to its DNAT / SNAT flows (after the rule's own conditions, before the
    connection-state test) at priority ``300 + priority`` instead of 100 (DNAT) or the logical
    network's prefix length (SNAT); ``priority`` without a ``match`` changes nothing."""
    if not ctx.profile.has("nat_match_priority"):
        return "", None
    match = str(getattr(nat, "match", "") or "")
    if not match:
        return "", None
    return f" && ({match})", 300 + int(getattr(nat, "priority", 0) or 0)


@dataclass(frozen=True, slots=True)
class _NatAdd:
    """Adds one NAT rule's flows (its router, owner and stage-hint)."""

    table: FlowTable
    dp: int
    owner: NatOwner
    hint: str

    def __call__(self, stage: Any, prio: int, match: str, actions: str) -> None:
        self.table.add(self.dp, stage, prio, match, actions, hint=self.hint, owner=self.owner)


@dataclass(frozen=True, slots=True)
class _NatRule:
    """A NAT rule that applies, with what its flows share."""

    nat: Any
    o: NatOpts
    ext: str  # the external IP, normalised
    v4: bool
    log_ip: str
    plen: int
    gw: NatGw
    dmac: NatMac | None  # the external MAC of a distributed (floating) IP
    mac: str | None  # ... normalised
    nat_res: str  # where the rule is handled: `` && is_chassis_resident(...)`` or ""
    xmatch: str = ""  # the rule's own match (25.03): `` && (MATCH)`` or ""
    xprio: int | None = None  # the priority of its DNAT / SNAT flows when it has a match

    @property
    def fam(self) -> str:
        return "ip4" if self.v4 else "ip6"

    @property
    def dgp(self) -> Port | None:
        return self.gw.dgp

    @property
    def set_src(self) -> str:
        return f"eth.src = {self.mac}; " if self.mac else ""

    @property
    def in_res(self) -> str:
        """UnSNAT / DNAT of a distributed IP happen wherever the packet is."""
        return "" if self.mac else self.gw.resident()

    @property
    def inp(self) -> str:
        assert self.dgp is not None
        return f'inport == "{self.dgp.name}"'

    @property
    def outp(self) -> str:
        assert self.dgp is not None
        return f'outport == "{self.dgp.name}"'


def _build_nat_arp_flows(router: Datapath, nat: Any, ctx: FlowCtx, ext_ip: IPAddress, add: _NatAdd) -> None:
    """ARP / ND replies for the external IP: every rule, on the port resolved for it."""
    ext = fmt_ip(ext_ip)
    arp_gw = nat_arp_gateway(router, ctx, nat)
    arp_dgp = arp_gw.dgp if arp_gw is not None else None
    nat_mac = _nat_mac(nat) if arp_dgp is not None else None  # observed: any type with a logical port
    arp_mac = nat_mac.raw if nat_mac is not None else None
    if ext_ip.version == 4:
        resolve, resolve_reply = f"arp.op == 1 && arp.tpa == {ext}", ARP_REPLY
    else:
        sn = format_ipv6(solicited_node(IPv6Address(ext_ip)))
        resolve, resolve_reply = f"ip6.dst == {{{ext}, {sn}}} && nd_ns && nd.target == {ext}", NAT_NA_REPLY
    add(LR_IN_IP_INPUT, 90, resolve, resolve_reply)
    if arp_gw is not None and arp_dgp is not None and not centralized_dgp(arp_dgp, ctx):
        inp = f'inport == "{arp_dgp.name}"'
        arp_res = f' && is_chassis_resident("{opt(nat.logical_port)}")' if arp_mac else arp_gw.resident()
        add(LR_IN_IP_INPUT, 91, f"{inp} && {resolve}", "drop;")
        reply = resolve_reply.replace(REG_INPORT_ETH_ADDR, arp_mac) if arp_mac else resolve_reply
        add(LR_IN_IP_INPUT, 92, f"{inp} && {resolve}{arp_res}", reply)


def _build_nat_dgp_flows(router: Datapath, ctx: FlowCtx, r: _NatRule, dgp: Port, add: _NatAdd) -> None:
    """The flows of a rule applied on a distributed gateway port: admission and MTU checks of a
    floating IP, gateway redirects, bindings, the local-DNAT mark and the egress loopback."""
    fam, ext, o, mac, dmac, nat_res = r.fam, r.ext, r.o, r.mac, r.dmac, r.nat_res
    inp, outp = r.inp, r.outp
    nets = port_nets(dgp, ctx)
    if r.nat.type == "snat":
        add(LR_IN_IP_INPUT, 120, f"{inp} && {fam}.src == {ext}", "next;")
    if mac:
        store = f"{REG_INPORT_ETH_ADDR} = {nets.ea_s if nets else mac}; next;"
        mtu = gateway_mtu(dgp)
        admit = f"eth.dst == {mac} && {inp}{nat_res}"
        add(LR_IN_ADMISSION, 50, admit,
            f"{REGBIT_PKT_LARGER} = check_pkt_larger({pkt_larger_len(dgp, mtu, ctx)}); {store}" if mtu else store)
        if mtu:
            bypass = gateway_mtu_bypass(dgp, ctx)
            if bypass:
                add(LR_IN_ADMISSION, 55, f"{admit} && ({bypass})", store)
            add(
                LR_IN_IP_INPUT,
                160,
                f"{inp} && {REGBIT_PKT_LARGER} && {REGBIT_EGRESS_LOOPBACK} == 0 && {fam} && {fam}.dst == {ext}",
                _frag_needed(fam, dmac.raw if dmac else mac, ext, mtu, dgp.name),
            )
        add(
            LR_IN_GW_REDIRECT,
            100,
            f"{fam}.src == {r.log_ip} && {outp}{nat_res}",
            f"eth.src = {dmac.raw if dmac else mac}; {src_ipv4_reg(ctx) if r.v4 else REG_SRC_IPV6} = {ext}; next;",
        )
        if any(_bridged(q) for q in router.ports if q.kind == "lrp"):
            lookup = f"get_arp(outport, {REG_NEXT_HOP_IPV4})" if r.v4 else f"get_nd(outport, {REG_NEXT_HOP_IPV6})"
            add(LR_IN_ARP_RESOLVE, 90, f"{outp} && {fam}.src == {r.log_ip}{nat_res}", f"{lookup}; next;")
    if o.stateless and r.gw.cr:
        # Observed: stateless rules with address sets steer the remote end's traffic.
        if o.allowed:
            add(LR_IN_GW_REDIRECT, 75, f"{outp} && {fam}.src == ${o.allowed}", f'outport = "{r.gw.cr}"; next;')
            add(LR_IN_GW_REDIRECT, 70, f"ip && {fam}.dst == {ext}", "drop;")
        elif o.exempted:
            add(LR_IN_GW_REDIRECT, 75, f"{outp} && {fam}.src == ${o.exempted}", "drop;")
    bound_mac = dmac.raw if dmac else (nets.ea_s if nets is not None else None)
    if bound_mac is not None:
        reg = REG_NEXT_HOP_IPV4 if r.v4 else REG_NEXT_HOP_IPV6
        add(LR_IN_ARP_RESOLVE, 100, f"{outp} && {reg} == {ext}", f"eth.dst = {bound_mac}; next;")
    add(LR_IN_ARP_RESOLVE, 150, f"{inp} && {outp} && {fam}.dst == {ext}", "drop;")
    if ctx.separate_nat_zones():
        add(LR_OUT_EGR_LOOP, 100, f"{fam}.dst == {ext} && {outp}{nat_res}", EGR_LOOP_NO_CZONE)
        return
    add(LR_OUT_CHK_DNAT_LOCAL, 50, f"ip && {fam}.dst == {ext}{nat_res}", f"{REGBIT_DST_NAT_IP_LOCAL} = 1; next;")
    add(LR_OUT_EGR_LOOP, 100, f"{fam}.dst == {ext} && {outp}{nat_res}", EGR_LOOP)


def _build_snat_flows(r: _NatRule, add: _NatAdd, ctx: FlowCtx, reverse: bool) -> None:
    """unSNAT and SNAT of a snat / dnat_and_snat rule (gateway router, or on its DGP)."""
    fam, ext, o, log_ip, in_res = r.fam, r.ext, r.o, r.log_ip, r.in_res
    # allowed_ext_ips / exempted_ext_ips: the remote end (here the destination of SNAT).
    snat_allow = f" && {fam}.dst == ${o.allowed}" if o.allowed else ""
    if r.dgp is None:
        add(LR_IN_UNSNAT, 90, f"ip && {fam}.dst == {ext}", "next;" if o.stateless else "ct_snat;")
        m = f"ip && {fam}.src == {log_ip}{snat_allow}{r.xmatch}"
        prio = r.plen + 1 if r.xprio is None else r.xprio
        if o.stateless:
            add(LR_OUT_SNAT, prio, m, f"{fam}.src={ext}; next;")
        else:
            add(LR_OUT_SNAT, prio, f"{m} && (!ct.trk || !ct.rpl)", f"ct_snat({o.ct_arg(ext)});")
        if o.exempted:
            add(LR_OUT_SNAT, prio + 2, f"ip && {fam}.src == {log_ip} && {fam}.dst == ${o.exempted}", "next;")
        return
    head = f"ip && {fam}.dst == {ext} && {r.inp}"
    if ctx.separate_nat_zones():
        # (``reverse``: tracks_snat_replies: the chassis' zone tracking, and no ct-commit-all)
        _build_dgp_snat_flows(r, add, head, snat_allow, reverse, ctx.profile.has("dgp_nat_reply_tracked"))
        return
    # A 25.03 router in the common zone (NB_Global options:use_common_zone=true, observed): the
    # residence check before the loopback flag (none on a stateless rule's unSNAT), SNAT skips
    # replies.
    late = ctx.profile.has("dgp_nat_no_czone")
    if late:
        res_head, after = f"{head}{in_res}", ""
    else:
        res_head, after = head, in_res
    if o.stateless:
        add(LR_IN_UNSNAT, 100, res_head if late else f"{head} && flags.loopback == 0{in_res}", "next;")
    else:
        add(LR_IN_UNSNAT, 100, f"{res_head} && flags.loopback == 0{after}", "ct_snat_in_czone;")
        add(
            LR_IN_UNSNAT,
            100,
            f"{res_head} && flags.loopback == 1 && flags.use_snat_zone == 1{after}",
            "ct_snat;",
        )
    m = f"ip && {fam}.src == {log_ip} && {r.outp}{r.nat_res}"
    base = r.plen + 129 if r.xprio is None else r.xprio
    set_src = r.set_src
    x = r.xmatch
    if o.stateless:
        add(LR_OUT_SNAT, base, f"{m}{snat_allow}{x}", f"{set_src}{fam}.src={ext}; next;")
    else:
        arg = o.ct_arg(ext)
        track = " && (!ct.trk || !ct.rpl)" if late else ""
        add(LR_OUT_SNAT, base, f"{m}{snat_allow}{x}{track}", f"{set_src}ct_snat_in_czone({arg});")
        add(LR_OUT_SNAT, base + 1, f"{m}{snat_allow}{x}{track} && {REGBIT_DST_NAT_IP_LOCAL} == 1",
            f"{set_src}{REGBIT_DST_NAT_IP_LOCAL} = 0; ct_snat({arg});")
    if o.exempted:
        add(LR_OUT_SNAT, base + 2, f"{m} && {fam}.dst == ${o.exempted}", "next;")


def _build_dgp_snat_flows(r: _NatRule, add: _NatAdd, head: str, snat_allow: str, zone_tracking: bool,
                          reply_tracked: bool = False) -> None:
    """unSNAT / SNAT of a rule on a DGP with the ``dgp_nat_no_czone`` behaviour (25.03): SNAT in
    the SNAT zone, with the state of the reverse direction (entering through the DGP) tracked by
    ``lr_out_post_undnat`` 70 / ``lr_out_snat`` and committed to that zone by
    ``lr_out_post_snat`` when new (observed); ``zone_tracking`` False (a chassis without
    ct-commit-to-zone / ct-next-zone, whose ovn-controller knows neither action, or the router's
    ct-commit-all: :func:`tracks_snat_replies`): the SNAT flow only.

    ``reply_tracked`` (behaviour ``dgp_nat_reply_tracked``, 26.03, observed): the reverse
    direction's ``ct_snat`` skips replies (``(!ct.trk || !ct.rpl)``), and a stateful
    dnat_and_snat rule's reverse direction goes through the DNAT zone the same way
    (``lr_out_post_undnat`` 75 ``ct_next(dnat);``, ``lr_out_snat`` / ``lr_out_post_snat`` at
    the SNAT priority + 5: ``ct_dnat;`` / ``ct_commit_to_zone(dnat);``).  The
    ``lr_out_post_undnat`` 75 flow carries the rule's allowed_ext_ips (``<fam>.dst == $<set>``)
    and its ``match`` option (``&& (<match>)``) like the SNAT flow (observed, 26.03)."""
    fam, ext, o, log_ip = r.fam, r.ext, r.o, r.log_ip
    add(LR_IN_UNSNAT, 100, f"{head}{r.in_res}", "next;" if o.stateless else "ct_snat;")
    m = f"ip && {fam}.src == {log_ip} && {r.outp}{r.nat_res}"
    base = r.plen + 129 if r.xprio is None else r.xprio
    x = r.xmatch
    if o.stateless:
        add(LR_OUT_SNAT, base, f"{m}{snat_allow}{x}", f"{r.set_src}{fam}.src={ext}; next;")
    else:
        track = " && (!ct.trk || !ct.rpl)"
        if r.nat.type == "snat" and zone_tracking:
            add(LR_OUT_POST_UNDNAT, 70, f"{m}{snat_allow}{x}{track}", "ct_next(snat);")
        add(LR_OUT_SNAT, base, f"{m}{snat_allow}{x}{track}", f"{r.set_src}ct_snat({o.ct_arg(ext)});")
        # The reverse direction: allowed_ext_ips as its source (observed).
        back_allow = f" && {fam}.src == ${o.allowed}" if o.allowed else ""
        back0 = f"ip && {fam}.dst == {log_ip} && {r.inp}{r.nat_res}"
        back = f"{back0}{back_allow}{x}"
        if r.nat.type == "snat" and zone_tracking:  # (observed: not for dnat_and_snat rules)
            add(LR_OUT_SNAT, base, f"{back}{track}" if reply_tracked else back, "ct_snat;")
            add(LR_OUT_POST_SNAT, base, f"{back} && ct.new", "ct_commit_to_zone(snat);")
        elif reply_tracked and zone_tracking and r.nat.type != "snat":
            add(LR_OUT_POST_UNDNAT, 75, f"{m}{snat_allow}{x}{track}", "ct_next(dnat);")
            add(LR_OUT_SNAT, base + 5, f"{back}{track}", "ct_dnat;")
            add(LR_OUT_POST_SNAT, base + 5, f"{back} && ct.new", "ct_commit_to_zone(dnat);")
    if o.exempted:
        add(LR_OUT_SNAT, base + 2, f"{m} && {fam}.dst == ${o.exempted}", "next;")


def _build_dnat_flows(router: Datapath, ctx: FlowCtx, r: _NatRule, add: _NatAdd) -> None:
    """DNAT (and, on a DGP, unDNAT) of a dnat / dnat_and_snat rule."""
    fam, ext, o, log_ip = r.fam, r.ext, r.o, r.log_ip
    # allowed_ext_ips / exempted_ext_ips: the remote end (here the source of DNAT).
    dnat_allow = f" && {fam}.src == ${o.allowed}" if o.allowed else ""
    if r.dgp is None:
        m = f"ip && {fam}.dst == {ext}"
        force = "flags.force_snat_for_dnat = 1; " if dnat_forces_snat(router, ctx) else ""
        act = f"{fam}.dst={log_ip}; next;" if o.stateless else f"ct_dnat({o.ct_arg(log_ip)});"
        add(LR_IN_DNAT, 100 if r.xprio is None else r.xprio, f"{m}{dnat_allow}{r.xmatch}",
            f"{force}flags.loopback = 1; {act}")
        if o.exempted:
            add(LR_IN_DNAT, 102, f"{m} && {fam}.src == ${o.exempted}", "next;")
        return
    m = f"ip && {fam}.dst == {ext} && {r.inp}{r.in_res}"
    czone = "" if ctx.separate_nat_zones() else "_in_czone"
    act = f"{fam}.dst={log_ip}; next;" if o.stateless else f"ct_dnat{czone}({o.ct_arg(log_ip)});"
    add(LR_IN_DNAT, 100 if r.xprio is None else r.xprio, f"{m}{dnat_allow}{r.xmatch}", act)
    if o.exempted:
        add(LR_IN_DNAT, 102, f"{m} && {fam}.src == ${o.exempted}", "next;")
    add(
        LR_OUT_UNDNAT,
        100,
        f"ip && {fam}.src == {log_ip} && {r.outp}{r.in_res}",
        f"{r.set_src}next;" if o.stateless else f"{r.set_src}ct_dnat{czone};",
    )


def _bridged(port: Port) -> bool:
    """Does router port ``port`` have ``options:redirect-type=bridged`` (any case)?"""
    return str(port.nb.options.get("redirect-type", "")).lower() == "bridged"


def _frag_needed(fam: str, mac: str, ext: str, mtu: int, port: str) -> str:
    """The ICMP error for a too-big packet to a distributed floating IP (sent back from its MAC/IP)."""
    head = f"{REGBIT_EGRESS_LOOPBACK} = 1; {REGBIT_PKT_LARGER} = 0; eth.dst = eth.src; eth.src = {mac}; {fam}.dst = {fam}.src; {fam}.src = {ext}; "
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


@dataclass(frozen=True, slots=True)
class NatMac:
    """A NAT rule's ``external_mac`` as written (``raw``) and normalised (``norm``).

    Observed: the MAC is valid with leading blanks and 1-digit bytes (``" a:0:0:0:0:aa"``) but not
    with trailing junk; the ARP reply (92), the ICMP "too big" error (160), the
    ``lr_in_arp_resolve`` binding and the ``lr_in_gw_redirect`` action use it as written, the other
    flows (and ``nat_addresses``) normalised."""

    raw: str
    norm: str


def _nat_mac(nat: Any) -> NatMac | None:
    """The external MAC of a rule with a valid ``external_mac`` and a ``logical_port`` (any type)."""
    mac, lport = opt(nat.external_mac), opt(nat.logical_port)
    if not mac or not lport:
        return None
    try:
        value = parse_mac(str(mac).lstrip())
    except AddressError:
        return None
    return NatMac(str(mac), format_mac(value))


def centralized_dgp(dgp: Port, ctx: FlowCtx) -> bool:
    """Behaviour ``centralized_dgp_peer`` (25.03, observed): is ``dgp`` a distributed gateway port
    whose peer switch port got a chassisredirect port of its own (its switch has no localnet port:
    :func:`..northd.build.centralized_dgp_peer`)?  Its NAT is then centralized: the rules'
    ``external_mac`` / ``logical_port`` are not used (no distributed floating IP: everything on the
    gateway chassis), and their external IPs get no per-port ARP / ND flows (91 / 92), only the
    router-wide replies (90)."""
    if not ctx.profile.has(CENTRALIZED_DGP_PEER):
        return False
    q = dgp.peer
    return q is not None and q.kind == "lsp" and q.crp is not None


def _distributed_mac(nat: Any) -> NatMac | None:
    """The external MAC of a distributed ``dnat_and_snat`` rule (with a valid MAC and a logical port)."""
    return _nat_mac(nat) if nat.type == "dnat_and_snat" else None


def _bad_distributed(nat: Any) -> bool:
    """A ``dnat_and_snat`` rule with a logical port and an unusable ``external_mac`` (observed: only
    its ARP / ND replies are installed)."""
    return (nat.type == "dnat_and_snat" and bool(opt(nat.logical_port)) and bool(opt(nat.external_mac))
            and _nat_mac(nat) is None)


def build_lr_nat_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """A router's NAT and load-balancer flows (after removing :func:`nat_and_lb_owners` and its dp owner)."""
    gw = nat_gateway(router, ctx)
    lbs = router_lbs(router)
    build_lr_force_snat_flows(router, ctx, table)
    if gw is None:
        if lbs and not router_info(router, ctx).dgps:  # a plain distributed router: its LB flows only
            _build_lbs(router, NatGw(None, None), lbs, ctx, table, gateway=False)
        for nat in router.nb.nat:  # ... and the ARP / ND replies (90) for its NAT rules' external IPs
            build_nat_rule_flows(router, nat, ctx, table)
        return
    if not (router.nb.nat or lbs):
        return
    i, owner = router.index, dp_owner(router)
    if lbs:
        _add_dnat_ct_flows(router, ctx, table)
    if router.nb.nat and not ctx.separate_nat_zones():
        table.add(
            i, LR_OUT_CHK_DNAT_LOCAL, 50, f"ip && {ctx.features.ct('natted')} == 1", f"{REGBIT_DST_NAT_IP_LOCAL} = 1; next;",
            owner=owner
        )
    if gw.dgp is None:
        table.add(i, LR_OUT_UNDNAT, 50, "ip", "flags.loopback = 1; ct_dnat;", owner=owner)
        table.add(i, LR_OUT_UNDNAT, 100, "nd || nd_rs || nd_ra", "next;", owner=owner)
        if not ct_commit_all(router, ctx):
            table.add(i, LR_OUT_POST_UNDNAT, 50, "ip && ct.new", "ct_commit { } ; next; ", owner=owner)
    build_ct_commit_all_flows(router, ctx, table)
    for nat in sorted(router.nb.nat, key=lambda n: str(n.uuid)):
        build_nat_rule_flows(router, nat, ctx, table)
    _build_lbs(router, gw, lbs, ctx, table)


def ct_commit_all(router: Datapath, ctx: FlowCtx) -> bool:
    """Logical_Router ``options:ct-commit-all`` (``man ovn-nb``) with the ``ct_commit_all``
    behaviour (25.03)."""
    return ctx.profile.has("ct_commit_all") and smap_bool(router.nb.options, "ct-commit-all", False)


def tracks_snat_replies(router: Datapath, ctx: FlowCtx) -> bool:
    """Does a snat rule on a DGP (25.03) track and commit the replies in the SNAT zone itself
    (:func:`_build_dgp_snat_flows`)?  Observed: only when every chassis has ``ct-commit-to-zone``
    and ``ct-next-zone``, and not with ``ct-commit-all`` (whose flows do it for all traffic)."""
    f = ctx.features
    return f.ct_commit_to_zone and f.ct_next_zone and not ct_commit_all(router, ctx)


def build_ct_commit_all_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``options:ct-commit-all`` (``man ovn-northd``: POST USNAT, DEFRAG, DNAT, POST UNDNAT, SNAT),
    observed on 25.03: on a gateway router, or on each of a router's DGPs D (chassisredirect C;
    matches + ``inport == D``/``outport == D && is_chassis_resident(C)``), when the router has a
    load balancer or a stateful NAT rule and every chassis has ``ct-commit-to-zone`` and
    ``ct-next-zone``, all priority 10: lr_in_post_unsnat ``ip && ct.new`` -> ``flags.unsnat_new = 1;
    next;`` and ``ip && !ct.trk`` -> ``flags.unsnat_not_tracked = 1; next;``; lr_in_defrag ``ip &&
    (!ct.trk || !ct.rpl)`` -> ``ct_next(dnat);``; lr_in_dnat ``ip && ct.new`` ->
    ``ct_commit_to_zone(dnat);``; lr_out_post_undnat ``ip && (!ct.trk || !ct.rpl) &&
    flags.unsnat_not_tracked == 1`` -> ``ct_next(snat);`` and ``ip && flags.unsnat_new == 1`` ->
    ``next;``; lr_out_snat ``ip && (!ct.trk || !ct.rpl) && flags.unsnat_new == 1`` and ``ip &&
    ct.new`` -> ``ct_commit_to_zone(snat);``.  (The man page's ``flags.unsnat_not_tracked == 1`` in
    the last match is not there.)  A gateway router with the option loses lr_out_post_undnat 50
    (features or not)."""
    if not ct_commit_all(router, ctx) or not (ctx.features.ct_commit_to_zone and ctx.features.ct_next_zone):
        return
    if not router_lbs(router) and all(NatOpts.of(n).stateless for n in router.nb.nat):
        return
    info = router_info(router, ctx)
    if info.is_gateway:
        places = [("", "")]
    else:
        places = [(f' && inport == "{g.dgp.name}"{g.resident()}', f' && outport == "{g.dgp.name}"{g.resident()}')
                  for g in map(_dgp_gw, info.dgps) if g.dgp is not None]
    i, owner = router.index, dp_owner(router)
    for inp, outp in places:
        for stage, match, actions in (
            (LR_IN_POST_UNSNAT, f"ip && ct.new{inp}", "flags.unsnat_new = 1; next;"),
            (LR_IN_POST_UNSNAT, f"ip && !ct.trk{inp}", "flags.unsnat_not_tracked = 1; next;"),
            (LR_IN_DEFRAG, f"ip && (!ct.trk || !ct.rpl){inp}", "ct_next(dnat);"),
            (LR_IN_DNAT, f"ip && ct.new{inp}", "ct_commit_to_zone(dnat);"),
            (LR_OUT_POST_UNDNAT, f"ip && (!ct.trk || !ct.rpl) && flags.unsnat_not_tracked == 1{outp}",
             "ct_next(snat);"),
            (LR_OUT_POST_UNDNAT, f"ip && flags.unsnat_new == 1{outp}", "next;"),
            (LR_OUT_SNAT, f"ip && (!ct.trk || !ct.rpl) && flags.unsnat_new == 1{outp}", "ct_commit_to_zone(snat);"),
            (LR_OUT_SNAT, f"ip && ct.new{outp}", "ct_commit_to_zone(snat);"),
        ):
            table.add(i, stage, 10, match, actions, owner=owner)


def build_router_lbs_only(router: Datapath, lbs: list[Any], ctx: FlowCtx, table: FlowTable) -> None:
    """The per-router flows of load balancers ``lbs`` alone (owners ``router_lb_owner(lb, router)``,
    removed first), as :func:`build_lr_nat_flows` builds them, for a router whose other flows stay:
    same NAT context and same :func:`router_lb_facts`."""
    gw = nat_gateway(router, ctx)
    gateway = True
    if gw is None:
        if router_info(router, ctx).dgps:
            return  # (a router whose NAT gateway is unusable builds no load-balancer flows)
        gw, gateway = NatGw(None, None), False
    force, nat_ips = forces_snat_for_lb(router, ctx), nat_external_ips(router)
    build_router_lbs_flows(router, gw, lbs, table, force_snat=force, nat_ips=nat_ips, gateway=gateway, ctx=ctx)


def remember_router_lb_facts(router: Datapath, ctx: FlowCtx) -> tuple[Any, ...]:
    """:func:`router_lb_facts` as the router's flows were just built, memoised under its key (so
    any change that makes the router's memos stale, ``ctx.forget(router.key)``, drops them too)."""
    return ctx.cached(LB_FACTS, router.key, lambda: router_lb_facts(router, ctx))


LB_FACTS = "rtr_lb_facts"


def router_lb_facts(router: Datapath, ctx: FlowCtx) -> tuple[Any, ...]:
    """Everything a router's flows other than its load balancers' own read of its load-balancer
    set: whether it has any (DNAT ct flows), the names of its ``_rtr_lb`` VIP sets, per port the
    port addresses that are VIPs and the VIPs inside its networks (ARP/ND, drops), the NAT IPs
    that are VIPs, and the ``add_route`` VIPs.  Equal before and after a change of its load
    balancers: only those load balancers' flows need building again."""
    addrs = router_addrs(router, ctx)
    owned = router_nat_owned(router, ctx)
    vip_texts = {format_ip(v) for v in addrs.lb_vips}
    ports = []
    for p in router.ports:
        nets = port_nets(p, ctx) if p.kind == "lrp" else None
        if nets is None:
            continue
        own = [*(n.addr for n in nets.ipv4), *(n.addr for n in nets.ipv6)]
        ports.append((p.name, frozenset(a for a in own if a in owned), tuple(reachable_vips(nets, addrs.lb_vips))))
    lbs = router_lbs(router)
    return (bool(lbs), router_lb_vip_set_names(router, ctx), tuple(ports),
            frozenset(n for n in addrs.nat_ips if n in vip_texts), tuple(_add_route_vips(lbs)))


def _build_lbs(router: Datapath, gw: NatGw, lbs: list[Any], ctx: FlowCtx, table: FlowTable,
               gateway: bool = True) -> None:
    """The load balancers' flows (:mod:`.lr_lb`) and, on any router with one, DNAT's ct flows."""
    if not gateway:
        _add_dnat_ct_flows(router, ctx, table)
    force, nat_ips = forces_snat_for_lb(router, ctx), nat_external_ips(router)
    keep = ctx.keep_router_lbs
    # (the flows of those in ``keep`` were kept: the router's NAT context is unchanged)
    todo = [lb for lb in lbs if str(lb.uuid) not in keep] if keep else lbs
    build_router_lbs_flows(router, gw, todo, table, force_snat=force, nat_ips=nat_ips, gateway=gateway, ctx=ctx)


def _routes_on(router: Datapath, ctx: FlowCtx, nat: Any, dgp: Port) -> bool:
    """Are NAT rule ``nat``'s add_route flows on the switch of DGP ``dgp`` (observed)?  The router's
    first DGP (the one :func:`nat_gateway` picks; the only one) takes every rule, whatever its
    ``gateway_port``; another DGP the rules whose ``gateway_port`` names it and, without
    ``gateway_port``, those whose external IP is in one of its networks.  Behaviour
    ``add_route_rule_dgp`` (25.03): the first of several DGPs is not special, it takes its own
    rules only."""
    dgps = router_info(router, ctx).dgps
    if dgp is dgps[0] and (len(dgps) == 1 or not ctx.profile.has("add_route_rule_dgp")):
        return True
    named = opt(nat.gateway_port)
    if named is not None:
        return dgp.nb_key == str(named.uuid)
    return _dgp_for_ip(router, ctx, nat.external_ip) is dgp


def build_lsp_nat_add_route_flows(port: Port, ctx: FlowCtx, table: FlowTable, only: Port | None = None) -> None:
    """The ``add_route`` flows of the NAT rules applied on the distributed gateway port peering with
    router-type switch port ``port``, on the other routers attached to its switch (module doc); with
    ``only`` (a router port attached to the switch), on that router port's router alone.

    Behaviour ``add_route_any_router`` (25.03, observed): the router port peering ``port`` need not
    be a DGP: on a gateway router the routes and bindings are those of a DGP (its own MAC; every
    rule); on any other router only the bindings are written (no routes)."""
    dgp = port.peer
    if not port.is_router_lsp or dgp is None or dgp.kind != "lrp":
        return
    router = dgp.dp
    lbs = router_lbs(router)
    if opt(router.nb.enabled) is False or not (router.nb.nat or lbs):
        return
    info = router_info(router, ctx)
    is_dgp = dgp in info.dgps
    if not is_dgp and not ctx.profile.has("add_route_any_router"):
        return
    routes = is_dgp or info.is_gateway
    dgp_nets = port_nets(dgp, ctx)
    if dgp_nets is None:
        return
    by_mac: dict[str, list[str]] = {}
    for nat in sorted(valid_nats(router, ctx.profile), key=lambda n: str(n.uuid)):
        if nat.type not in DNAT_TYPES or not smap_bool(nat.options, "add_route", False):
            continue
        ext = parse_ip_strict(nat.external_ip.strip())
        if ext is None or ext.version != 4 or logical_ip(nat.logical_ip) is None or _bad_distributed(nat):
            continue  # observed: nor for a distributed rule with a malformed external MAC
        if is_dgp and not _routes_on(router, ctx, nat, dgp):
            continue
        dmac = _distributed_mac(nat) if is_dgp else None  # (observed: centralized or not)
        by_mac.setdefault(dmac.raw if dmac else dgp_nets.ea_s, []).append(fmt_ip(ext))
    vips = _add_route_vips(lbs)
    if vips:
        own = by_mac.setdefault(dgp_nets.ea_s, [])
        own += [v for v in vips if v not in own]
    if not by_mac:
        return
    owner = port_owner(port)
    for q in port.dp.ports:
        p = q.peer
        if q is port or not q.is_router_lsp or p is None or p.kind != "lrp" or p.dp is router:
            continue
        if only is not None and p is not only:
            continue
        if opt(p.dp.nb.enabled) is False:
            continue
        nets = port_nets(p, ctx)
        if nets is None:
            continue
        if nets.ipv4:
            src = f"{src_ipv4_reg(ctx)} = {nets.ipv4[0].addr_s}; "
            family = nexthop_family(ctx, False)
        elif ctx.profile.has("add_route_lla_neighbour"):
            src, family = f"{REG_SRC_IPV6} = {nets.lla.addr_s}; ", nexthop_family(ctx, True)
        else:
            continue
        i = p.dp.index
        tail = (f"{REG_ECMP_GROUP_ID} = 0; {REG_NEXT_HOP_IPV4} = ip4.dst; {src}"
                f'eth.src = {nets.ea_s}; outport = "{p.name}"; flags.loopback = 1; {family}next;')
        prio = route_priority(ctx, 32, "connected")
        for ips in by_mac.values() if routes else ():
            for ip in ips:
                table.add(i, LR_IN_IP_ROUTING, prio, f"ip4.dst == {ip}/32", f"ip.ttl--; {tail}", owner=owner)
        info = router_info(p.dp, ctx)
        # Observed: a neighbour port that is itself a DGP binds too; dynamic_neigh_routers binds nothing.
        if (info.is_gateway or p in info.dgps) and not smap_bool(p.dp.nb.options, "dynamic_neigh_routers", False):
            for mac, ips in by_mac.items():
                table.add(i, LR_IN_ARP_RESOLVE, 100, f'outport == "{p.name}" && {REG_NEXT_HOP_IPV4} == {{{", ".join(ips)}}}',
                          f"eth.dst = {mac}; next;", owner=owner)


def _add_route_vips(lbs: list[Any]) -> list[str]:
    """The IPv4 VIPs of the load balancers with ``options:add_route=true`` (observed): the iteration
    order of an OVS string set of their VIP addresses (both families; with backends or not), filled
    load balancer by load balancer, each's VIPs in sorted key order; template load balancers'
    left out."""
    ips: list[str] = []
    for lb in lbs:
        if not smap_bool(fastrow.peek(lb, "options"), "add_route", False) or is_template_lb(lb):
            continue
        for key in sorted(str(k) for k in lb.vips):
            parsed = parse_vip(lb, key)
            if not isinstance(parsed, str):
                ips.append(parsed[0].ip)
    return [ip for ip in sset_order(ips) if ":" not in ip]
