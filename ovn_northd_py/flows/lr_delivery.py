"""The router stages after ARP resolution, and the checks for oversized packets.

Observed on the reference (priority-0 fallbacks in :mod:`.defaults`):

* ``lr_in_chk_pkt_len``: per router port G with ``options:gateway_mtu=M``, packets
  leaving through G are measured (``reg9[1] = check_pkt_larger(M + 14)``, 50);
  ``options:gateway_mtu_bypass=X`` skips the check for ``X`` (55);
* ``lr_in_larger_pkts``: for such a G, packets from every other router port P that
  are too big get an ICMP error from P (150; IPv4 only if P has an IPv4 address,
  IPv6 from P's first configured address, else its link-local one; stage-hint P,
  owner G);
* ``lr_in_gw_redirect``: traffic to a distributed gateway port P goes to its
  chassisredirect port (50);
* ``lr_in_arp_request``: unresolved next hops trigger an ARP request or neighbour
  solicitation (100; the static-route solicitations are in :mod:`.lr_routing`);
* ``lr_out_snat``: neighbour solicitations skip SNAT (120, every router);
* ``lr_out_delivery``: every enabled router port outputs (100, no stage-hint), IP
  multicast from its own MAC with ``options:mcast_relay`` (110);
* 26.03 (behaviour ``lr_network_id``): ``lr_in_network_id`` numbers the next hop's network on
  its output port (:func:`build_lrp_network_id_flows`); (behaviour ``lr_ecmp_stateful_egr``)
  ``lr_in_ecmp_stateful_egr`` commits symmetric-ECMP replies (:func:`build_lrp_ecmp_egr_flows`).
"""

from __future__ import annotations

from ..lflow.stages import (
    LR_IN_ARP_REQUEST,
    LR_IN_CHK_PKT_LEN,
    LR_IN_ECMP_STATEFUL_EGR,
    LR_IN_GW_REDIRECT,
    LR_IN_LARGER_PKTS,
    LR_IN_NETWORK_ID,
    LR_OUT_DELIVERY,
    LR_OUT_POST_SNAT,
    LR_OUT_SNAT,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Port
from .context import FlowCtx
from .copp import copp_meter
from .lr_common import (
    arp_request_then,
    first_ipv4,
    first_ipv6,
    gateway_mtu,
    gateway_mtu_bypass,
    has_vtep_lports,
    lrp_hint,
    nexthop_family_match,
    pkt_larger_len,
    port_nets,
    router_info,
    src_ipv4_reg,
)
from .lr_ip_input import frag_needed_actions
from .owners import dp_owner, port_owner
from .registers import (
    FLAG_NETWORK_ID,
    REG_CT_STATE,
    REG_CT_STATE_BIT_DNAT,
    REG_CT_STATE_BIT_RPL,
    REG_CT_STATE_BIT_TRK,
    REG_NEXT_HOP_IPV4,
    REG_NEXT_HOP_IPV6,
    REGBIT_ECMP_COMMIT,
    REGBIT_EGRESS_LOOPBACK,
    REGBIT_PKT_LARGER,
)


def build_lr_delivery_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    owner = dp_owner(router)
    i = router.index
    # 25.03 also outputs the packet itself after the request (``arp_request_then_output``).
    then = arp_request_then(ctx)
    table.add(
        i,
        LR_IN_ARP_REQUEST,
        100,
        f"eth.dst == 00:00:00:00:00:00 && {nexthop_family_match(ctx, False)}",
        f"arp {{ eth.dst = ff:ff:ff:ff:ff:ff; arp.spa = {src_ipv4_reg(ctx)}; arp.tpa = {REG_NEXT_HOP_IPV4}; arp.op = 1; output; }};{then}",
        owner=owner,
        controller_meter=copp_meter(router, ctx, "arp-resolve"),
    )
    table.add(
        i,
        LR_IN_ARP_REQUEST,
        100,
        f"eth.dst == 00:00:00:00:00:00 && {nexthop_family_match(ctx, True)}",
        f"nd_ns {{ nd.target = {REG_NEXT_HOP_IPV6}; output; }};{then}",
        owner=owner,
        controller_meter=copp_meter(router, ctx, "nd-ns-resolve"),
    )
    table.add(i, LR_OUT_SNAT, 120, "nd_ns", "next;", owner=owner)
    if ctx.profile.has("lr_network_id"):  # a next hop in none of the port's networks
        table.add(i, LR_IN_NETWORK_ID, 105, "1", f"{FLAG_NETWORK_ID} = 0; next;", owner=owner)


# flags.network_id has 4 bits: a port's networks after the 16th are all network 0.
MAX_NETWORK_IDS = 16


def build_lrp_network_id_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Behaviour ``lr_network_id`` (26.03; ``man ovn-northd`` "Network ID", observed):
    ``lr_in_network_id`` 110 per network of router port P (its IPv4 networks, then its configured
    IPv6 ones, each family numbered from 0 in the port's order): ``outport == P && ip4 && reg0 ==
    A/PLEN`` (IPv6: ``ip6 && xxreg0 == A/PLEN``) -> ``flags.network_id = N; next;``, which
    ``lb_force_snat_ip=router_ip`` SNAT flows match on."""
    if port.kind != "lrp" or not ctx.profile.has("lr_network_id"):
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    i, owner = port.dp.index, port_owner(port)
    for fam, reg, family in (("ip4", REG_NEXT_HOP_IPV4, [(a.addr_s, a.plen) for a in nets.ipv4]),
                             ("ip6", REG_NEXT_HOP_IPV6, [(a.addr_s, a.plen) for a in nets.ipv6[:-1]])):
        for n, (addr, plen) in enumerate(family):
            match = f'outport == "{port.name}" && {fam} && {reg} == {addr}/{plen}'
            nid = n if n < MAX_NETWORK_IDS else 0
            table.add(i, LR_IN_NETWORK_ID, 110, match, f"{FLAG_NETWORK_ID} = {nid}; next;", owner=owner)


def build_lrp_ecmp_egr_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Behaviour ``lr_ecmp_stateful_egr`` (26.03, observed): ``lr_in_ecmp_stateful_egr`` 100 per
    router port and chassisredirect port P: a packet routing marked (``reg9[10] == 1 && ip &&
    outport == P``) commits its next hop's MAC and P's tunnel key (``ct_commit {
    ct_label.ecmp_reply_eth = eth.dst; ct_mark.ecmp_reply_port = K;}; output;``)."""
    if port.kind not in ("lrp", "crp") or not ctx.profile.has("lr_ecmp_stateful_egr"):
        return
    key = port.tunnel_key
    actions = (f"ct_commit {{ ct_label.ecmp_reply_eth = eth.dst; {ctx.features.ct('ecmp_reply_port')} = {key};}}; "
               "output;")
    table.add(port.dp.index, LR_IN_ECMP_STATEFUL_EGR, 100, f'{REGBIT_ECMP_COMMIT} == 1 && ip && outport == "{port.name}"',
              actions, owner=port_owner(port))


def build_lrp_delivery_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    if port.kind != "lrp":
        return
    owner = port_owner(port)
    i = port.dp.index
    name = port.name
    if port.enabled:
        table.add(i, LR_OUT_DELIVERY, 100, f'outport == "{name}"', "output;", owner=owner)
        nets = port_nets(port, ctx)
        if router_info(port.dp, ctx).mcast_relay and nets is not None:
            match = f'(ip4.mcast || ip6.mcast) && outport == "{name}"'
            table.add(i, LR_OUT_DELIVERY, 110, match, f"eth.src = {nets.ea_s}; output;", owner=owner)
    if port.crp is not None and not has_vtep_lports(port, ctx):
        table.add(
            i,
            LR_IN_GW_REDIRECT,
            50,
            f'outport == "{name}"',
            f'outport = "{port.crp.name}"; next;',
            hint=lrp_hint(port),
            owner=owner,
        )
    mtu = gateway_mtu(port)
    if mtu is None or port_nets(port, ctx) is None:
        return
    h = lrp_hint(port)
    out = f'outport == "{name}"'
    # 26.03 (gateway_mtu_ct_state): the conntrack state is saved for lr_in_larger_pkts (reg4[0..7]),
    # when every chassis has ct-state-save (observed: else 25.03's two flows).
    ct_state = ctx.profile.has("gateway_mtu_ct_state") and ctx.features.ct_state_save
    go_on = f"{REG_CT_STATE} = ct_state_save(); next;" if ct_state else "next;"
    table.add(
        i, LR_IN_CHK_PKT_LEN, 50, out, f"{REGBIT_PKT_LARGER} = check_pkt_larger({pkt_larger_len(port, mtu, ctx)}); {go_on}",
        hint=h, owner=owner
    )
    bypass = gateway_mtu_bypass(port, ctx)
    if bypass:
        table.add(i, LR_IN_CHK_PKT_LEN, 55, f"{out} && ({bypass})", go_on, hint=h, owner=owner)
    # The saved state: tracked (bit 5), reply (3), DNATed (7).
    dnat_reply = f"{REG_CT_STATE_BIT_TRK} && {REG_CT_STATE_BIT_RPL} && {REG_CT_STATE_BIT_DNAT}" if ct_state \
        else "ct.trk && ct.rpl && ct.dnat"
    nets_by_port = router_info(port.dp, ctx).nets
    # 25.03 (icmp_snat_larger_pkts): the error for a reply of a DNATed connection (160) is SNATed
    # back (flags.icmp_snat, committed in lr_out_post_snat 100 when every chassis has
    # ct-commit-nat-v2: ``ct_commit_nat(snat)`` is unknown to older ovn-controllers; observed: the 160
    # flows whether or not).
    icmp_snat = ctx.profile.has("icmp_snat_larger_pkts")
    if icmp_snat and ctx.features.ct_commit_nat_v2:
        table.add(i, LR_OUT_POST_SNAT, 100, "icmp && flags.icmp_snat == 1", "ct_commit_nat(snat);", owner=owner)

    def larger(match: str, actions: str, fam: str, oh: str) -> None:
        meter = copp_meter(port.dp, ctx, f"{fam}-error")
        table.add(i, LR_IN_LARGER_PKTS, 150, match, actions, hint=oh, owner=owner, controller_meter=meter)
        if icmp_snat:
            table.add(i, LR_IN_LARGER_PKTS, 160, f"{match} && {dnat_reply}",
                      actions.replace("_error {", "_error {flags.icmp_snat = 1; ", 1),
                      hint=oh, owner=owner, controller_meter=meter)

    for other in port.dp.ports:
        nets = nets_by_port.get(other.name)
        if other is port or other.kind != "lrp" or nets is None:
            continue
        head = f'inport == "{other.name}" && {out}'
        oh = lrp_hint(other)
        src4 = first_ipv4(nets)
        if src4 is not None:
            larger(f"{head} && ip4 && {REGBIT_PKT_LARGER} && {REGBIT_EGRESS_LOOPBACK} == 0",
                   frag_needed_actions("ip4", nets.ea_s, src4, mtu), "icmp4", oh)
        larger(f"{head} && ip6 && {REGBIT_PKT_LARGER} && {REGBIT_EGRESS_LOOPBACK} == 0",
               frag_needed_actions("ip6", nets.ea_s, first_ipv6(nets), mtu), "icmp6", oh)
