"""Router ingress ``lr_in_arp_resolve``: next hop IP to Ethernet address.

Observed on the reference (NAT-rule flows of this stage are not built here; the
priority-0 drop is in :mod:`.defaults`):

* every router: multicast was resolved by routing (500); otherwise the MAC_Binding
  table is consulted (``get_arp``/``get_nd``, 1);
* static bindings (100), ``outport == Q && reg0 == A`` / ``xxreg0 == A`` setting
  ``eth.dst``:

  - router ports peered directly: on Q's router, P's IPv4 addresses as
    ``reg0== A`` or ``reg0== {A, B}`` (sic, no space) and its IPv6 addresses
    (link-local last) as ``xxreg0 == ...``.  Built with P, which owns them;
  - switch ports on a switch Q is attached to: every enabled port that is not a
    router-type port, one flow per IP of its addresses
    (:func:`.lsp_addrs.lsp_addresses`) in one of Q's networks.  Built with, and
    owned by, the switch port.  A ``virtual`` port with ``virtual-parents`` instead
    resolves its ``virtual-ip`` (IPv4: ``reg0``, IPv6: ``xxreg0``) to 00:00:00:00:00:00 (the parent is not known
    to northd), on one router port only: the first attached router port in the
    order of the reference's port hash map (:func:`.lr_common.hmap_bucket`; ties
    and a map grown larger by earlier deletions are not modelled) whose networks
    hold the VIP;
  - other router ports R on that switch (enabled or not): all R's IPv4 addresses
    in one flow (a set when several) and all its IPv6 ones, unless Q's router has
    ``options:dynamic_neigh_routers`` or the router-type switch port of Q is
    disabled.  Their stage hint is that of Q's router-type switch port, but they
    are built with, and owned by, R's router-type switch port, like a VIF's: a
    router joining a switch of N routers brings its own bindings on the others,
    and each other port adds its one binding on the newcomer
    (:func:`build_lsp_arp_resolve_flows` with ``only``); leaving with its router,
    it takes its own bindings along and the others' go with its datapath;
* IPs of a router port that are also SNAT external IPs or load-balancer VIPs are
  dropped (2), one set per port and family;
* a distributed gateway port D with ``options:redirect-type=bridged`` (any case): traffic
  out of D away from its gateway chassis goes to D's own MAC (50).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address

from ..lflow.stages import LR_IN_ARP_RESOLVE
from ..lflow.table import FlowTable
from ..northd.addresses import (
    LrpNetworks,
    parse_ip,
)
from ..northd.model import Datapath, Port
from .context import FlowCtx, hint
from .lr_common import (
    braces,
    fmt_ip,
    hmap_bucket,
    hmap_mask,
    ip_set,
    lrp_hint,
    nexthop_family_match,
    parse_ip_strict,
    port_nets,
    router_info,
    router_nat_owned,
)
from .lsp_addrs import lsp_addresses
from .owners import dp_owner, port_owner
from .registers import REG_NEXT_HOP_IPV4, REG_NEXT_HOP_IPV6


@dataclass(frozen=True, slots=True)
class AttachedRouter:
    """A router port attached to a switch through the router-type switch port ``lsp``."""

    lsp: Port
    lrp: Port
    nets: LrpNetworks
    dynamic_neigh: bool  # its router learns other routers' MACs dynamically


def _attached(sw: Datapath, ctx: FlowCtx) -> tuple[AttachedRouter, ...]:
    out: list[AttachedRouter] = []
    for p in sw.ports:
        q = p.peer
        if p.kind != "lsp" or not p.is_router_lsp or q is None or q.kind != "lrp":
            continue
        nets = port_nets(q, ctx)
        if nets is not None:
            out.append(AttachedRouter(p, q, nets, router_info(q.dp, ctx).dynamic_neigh))
    return tuple(out)


def attached_routers(sw: Datapath, ctx: FlowCtx) -> tuple[AttachedRouter, ...]:
    """The router ports attached to switch ``sw`` (memoised under the switch's key)."""
    return ctx.cached("lr_attached", sw.key, lambda: _attached(sw, ctx))


def build_lr_arp_resolve_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    owner = dp_owner(router)
    i = router.index
    table.add(i, LR_IN_ARP_RESOLVE, 500, "ip4.mcast || ip6.mcast", "next;", owner=owner)
    table.add(i, LR_IN_ARP_RESOLVE, 1, nexthop_family_match(ctx, False), f"get_arp(outport, {REG_NEXT_HOP_IPV4}); next;",
              owner=owner)
    table.add(i, LR_IN_ARP_RESOLVE, 1, nexthop_family_match(ctx, True), f"get_nd(outport, {REG_NEXT_HOP_IPV6}); next;",
              owner=owner)


def _bridged(port: Port) -> bool:
    """Router port ``port`` has ``options:redirect-type=bridged`` (any case)."""
    return str(port.nb.options.get("redirect-type", "")).lower() == "bridged"


def build_lrp_arp_resolve_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """A router port's addresses on its directly peered router, and its NAT-owned IPs."""
    if port.kind != "lrp":
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    owner = port_owner(port)
    h = lrp_hint(port)
    if port.crp is not None and _bridged(port):
        table.add(
            port.dp.index,
            LR_IN_ARP_RESOLVE,
            50,
            f'outport == "{port.name}" && !is_chassis_resident("{port.crp.name}")',
            f"eth.dst = {nets.ea_s}; next;",
            hint=h,
            owner=owner,
        )
    excluded = router_nat_owned(port.dp, ctx)
    for fam, addrs in (("ip4", [n.addr_s for n in nets.ipv4]), ("ip6", [n.addr_s for n in nets.ipv6])):
        owned = [a for a in addrs if parse_ip(a) in excluded]
        if owned:
            table.add(
                port.dp.index,
                LR_IN_ARP_RESOLVE,
                2,
                f"{fam}.dst == {braces(owned)}",
                "drop;",
                hint=h,
                owner=owner,
            )
    peer = port.peer
    if peer is None or peer.kind != "lrp":
        return
    actions = f"eth.dst = {nets.ea_s}; next;"
    out = f'outport == "{peer.name}"'
    if nets.ipv4:
        match = f"{out} && {REG_NEXT_HOP_IPV4}== {ip_set([n.addr_s for n in nets.ipv4])}"
        table.add(peer.dp.index, LR_IN_ARP_RESOLVE, 100, match, actions, hint=h, owner=owner)
    match = f"{out} && {REG_NEXT_HOP_IPV6} == {ip_set([n.addr_s for n in nets.ipv6])}"
    table.add(peer.dp.index, LR_IN_ARP_RESOLVE, 100, match, actions, hint=h, owner=owner)


def build_lsp_arp_resolve_flows(port: Port, ctx: FlowCtx, table: FlowTable, only: Port | None = None) -> None:
    """The static bindings a switch port gives the routers attached to its switch; with ``only``
    (a router port attached to the switch), those on that router port alone (not for a virtual
    port, whose one binding is on the first router port that fits: none)."""
    if port.kind != "lsp":
        return
    attached = attached_routers(port.dp, ctx)
    routers = attached if only is None else tuple(ar for ar in attached if ar.lrp is only)
    if not routers:
        return
    if port.is_router_lsp:
        _router_lsp_flows(port, attached, routers, ctx, table)
        return
    if not port.enabled:
        return
    owner = port_owner(port)
    h = hint(port.nb_key)
    if port.sb_type == "virtual":
        if only is None:
            _virtual_flows(port, routers, ctx, table)
        return
    addresses = lsp_addresses(port)
    # 26.03 (bridged_dgp_no_lsp_binding, observed): a switch port's addresses (a VIF's, a
    # localport's) are not bound on a distributed gateway port with redirect-type=bridged.
    skip_bridged = ctx.profile.has("bridged_dgp_no_lsp_binding")
    for ar in routers:
        if skip_bridged and ar.lrp.crp is not None and _bridged(ar.lrp):
            continue
        out = f'outport == "{ar.lrp.name}"'
        i = ar.lrp.dp.index
        for entry in addresses:
            actions = f"eth.dst = {entry.ea_s}; next;"
            for n4 in entry.ipv4:
                if any(n.contains(n4.addr) for n in ar.nets.ipv4):
                    table.add(
                        i,
                        LR_IN_ARP_RESOLVE,
                        100,
                        f"{out} && {REG_NEXT_HOP_IPV4} == {n4.addr_s}",
                        actions,
                        hint=h,
                        owner=owner,
                    )
            for n6 in entry.ipv6:
                if any(n.contains(n6.addr) for n in ar.nets.ipv6):
                    table.add(
                        i,
                        LR_IN_ARP_RESOLVE,
                        100,
                        f"{out} && {REG_NEXT_HOP_IPV6} == {n6.addr_s}",
                        actions,
                        hint=h,
                        owner=owner,
                    )


def _virtual_flows(port: Port, routers: tuple[AttachedRouter, ...], ctx: FlowCtx, table: FlowTable) -> None:
    # 25.03 (no_unbound_virtual_resolve): no 00:00:00:00:00:00 binding for a virtual IP (observed
    # with no parent claiming it).
    if not port.nb.options.get("virtual-parents") or ctx.profile.has("no_unbound_virtual_resolve"):
        return
    vip = parse_ip_strict(str(port.nb.options.get("virtual-ip", "")))
    if vip is None:
        return
    v4 = isinstance(vip, IPv4Address)
    reg = REG_NEXT_HOP_IPV4 if v4 else REG_NEXT_HOP_IPV6
    mask = hmap_mask(len(ctx.nd.ports))
    for ar in sorted(routers, key=lambda r: hmap_bucket(r.lsp.name, mask)):
        if any(n.contains(vip) for n in (ar.nets.ipv4 if v4 else ar.nets.ipv6)):  # type: ignore[arg-type]
            match = f'outport == "{ar.lrp.name}" && {reg} == {fmt_ip(vip)}'
            table.add(
                ar.lrp.dp.index,
                LR_IN_ARP_RESOLVE,
                100,
                match,
                "eth.dst = 00:00:00:00:00:00; next;",
                hint=hint(port.nb_key),
                owner=port_owner(port),
            )
            return


def _router_lsp_flows(port: Port, routers: tuple[AttachedRouter, ...], targets: tuple[AttachedRouter, ...],
                      ctx: FlowCtx, table: FlowTable) -> None:
    """The bindings of router-type port ``port``'s router port addresses on the ``targets`` (of the
    switch's attached ``routers``): on each target's router, with the stage hint of the target's
    router-type port (the reference builds them from that side), owned by ``port``."""
    mine = _binding_texts(port.dp.key, routers, ctx).get(port.name)
    if mine is None:
        return
    me, actions, v4, v6 = mine
    owner = port_owner(port)
    for ar in targets:
        if ar is me or ar.lrp is me.lrp or ar.dynamic_neigh or not ar.lsp.enabled:
            continue
        out = f'outport == "{ar.lrp.name}"'
        h = hint(ar.lsp.nb_key)
        i = ar.lrp.dp.index
        if v4 is not None:
            table.add(i, LR_IN_ARP_RESOLVE, 100, f"{out} && {REG_NEXT_HOP_IPV4} == {v4}", actions, hint=h, owner=owner)
        table.add(i, LR_IN_ARP_RESOLVE, 100, f"{out} && {REG_NEXT_HOP_IPV6} == {v6}", actions, hint=h, owner=owner)


def _binding_texts(sw_key: str, routers: tuple[AttachedRouter, ...], ctx: FlowCtx
                   ) -> dict[str, tuple[AttachedRouter, str, str | None, str]]:
    """Per attached router port, by its router-type switch port's name: its binding action and
    address sets as text (the same on every other router port of the switch, so built once per
    switch: a join switch with N routers has N² bindings).  Memoised under the switch's key, like
    :func:`attached_routers`."""

    def compute() -> dict[str, tuple[AttachedRouter, str, str | None, str]]:
        out = {}
        for other in routers:
            v4 = ip_set([n.addr_s for n in other.nets.ipv4]) if other.nets.ipv4 else None
            out[other.lsp.name] = (other, f"eth.dst = {other.nets.ea_s}; next;", v4,
                                   ip_set([n.addr_s for n in other.nets.ipv6]))
        return out

    return ctx.cached("lr_attached_texts", sw_key, compute)
