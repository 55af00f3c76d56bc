"""Router ingress ``lr_in_lookup_neighbor`` and ``lr_in_learn_neighbor``.

Observed on the reference (priority-0 fallbacks in :mod:`.defaults`).  With the
router's ``options:always_learn_from_arp_request`` true (the default):

* lookup (100): ARP replies, neighbour advertisements and solicitations look the
  sender up (``reg9[2] = lookup_arp/lookup_nd(...)``); per IPv4 network S/L of every
  router port P (enabled or not), ARP requests ``inport == P && arp.spa == S/L`` too,
  with ``is_chassis_resident("cr-P")`` on a distributed gateway port;
* learn: skip when found (100), learn from ARP / NA / NS (90), NA without target
  link-layer address learns ``eth.src`` (95), NS from the unspecified address or
  without source link-layer address is not learnt (95).

With it false, ``reg9[3]`` also tells whether learning is allowed: the lookups set
it (``= 1`` for replies/NA, ``lookup_nd_ip`` for NS, ``lookup_arp_ip`` for requests
from the subnet), ARP requests for the port's own address get a priority-110 flow
setting it to 1, link-local NAs to a multicast address a priority-110 lookup, and
the learn stage skips on ``reg9[2] == 1 || reg9[3] == 0``.

A router with a remote port (behaviour ``transit_router_remote_ports``, 25.03:
:func:`ovn_northd_py.northd.build.mark_remote_router_ports`) also floods ARP replies and NAs to
its remote ports: ``flood_remote;`` before the final ``next;`` of those lookups (observed).
"""

from __future__ import annotations

from ..lflow.stages import LR_IN_LEARN_NEIGHBOR, LR_IN_LOOKUP_NEIGHBOR
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Port
from .context import FlowCtx
from .copp import copp_meter
from .lr_common import lrp_hint, net_s, port_nets, router_info
from .owners import dp_owner, port_owner
from .registers import REGBIT_LOOKUP_NEIGHBOR_IP_RESULT, REGBIT_LOOKUP_NEIGHBOR_RESULT

LOOKUP_ARP = f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} = lookup_arp(inport, arp.spa, arp.sha); "
LOOKUP_NA = f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} = lookup_nd(inport, nd.target, nd.tll); "
LOOKUP_NS = f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} = lookup_nd(inport, ip6.src, nd.sll); "


def build_lr_neighbor_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    owner = dp_owner(router)
    i = router.index
    always = router_info(router, ctx).always_learn
    # 25.03 refreshes the MAC cache entry of a neighbour it does not learn (``mac_cache_use``).
    skip = "mac_cache_use; next;" if ctx.profile.has("mac_cache_use") else "next;"
    # 25.03 looks a link-local multicast NA up by its target (``nd_na_lookup_target``).
    na_src = "nd.target" if ctx.profile.has("nd_na_lookup_target") else "ip6.src"

    def lookup(priority: int, match: str, actions: str) -> None:
        table.add(i, LR_IN_LOOKUP_NEIGHBOR, priority, match, actions, owner=owner)

    def learn(priority: int, match: str, actions: str, proto: str | None = None) -> None:
        meter = copp_meter(router, ctx, proto) if proto else None
        table.add(i, LR_IN_LEARN_NEIGHBOR, priority, match, actions, owner=owner, controller_meter=meter)

    # 25.03 (transit_router_remote_ports): a router with remote ports floods the replies to them.
    flood = "flood_remote; " if any(p.sb_type == "remote" for p in router.ports if p.kind == "lrp") else ""
    if always:
        lookup(100, "arp.op == 2", LOOKUP_ARP + flood + "next;")
        lookup(100, "nd_na", LOOKUP_NA + flood + "next;")
        lookup(100, "nd_ns", LOOKUP_NS + "next;")
        learn(100, f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} == 1", skip)
    else:
        lookup(100, "arp.op == 2", LOOKUP_ARP + f"{REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} = 1; {flood}next;")
        lookup(100, "nd_na", LOOKUP_NA + f"{REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} = 1; {flood}next;")
        lookup(100, "nd_ns", LOOKUP_NS + f"{REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} = lookup_nd_ip(inport, ip6.src); next;")
        lookup(
            110,
            "nd_na && ip6.src == fe80::/10 && ip6.dst == ff00::/8",
            f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} = lookup_nd(inport, {na_src}, nd.tll); "
            f"{REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} = lookup_nd_ip(inport, {na_src}); {flood}next;",
        )
        learn(100, f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} == 1 || {REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} == 0", skip)
    learn(95, "nd_na && nd.tll == 0", "put_nd(inport, nd.target, eth.src); next;", "nd-na")
    learn(95, "nd_ns && (ip6.src == 0 || nd.sll == 0)", "next;")
    learn(90, "arp", "put_arp(inport, arp.spa, arp.sha); next;", "arp")
    learn(90, "nd_na", "put_nd(inport, nd.target, nd.tll); next;", "nd-na")
    learn(90, "nd_ns", "put_nd(inport, ip6.src, nd.sll); next;", "nd-ns")


def build_lrp_neighbor_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    if port.kind != "lrp":
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    always = router_info(port.dp, ctx).always_learn
    resident = f' && is_chassis_resident("{port.crp.name}")' if port.crp is not None else ""
    owner = port_owner(port)
    h = lrp_hint(port)
    i = port.dp.index
    if port.crp is not None and ctx.profile.has("dgp_neighbor_lookup_anywhere"):
        # 26.03 (observed): ARP requests are looked up on every chassis (the switch filters the
        # ones from its localnet ports, ls_in_check_port_sec 75); multicast NA / NS off the
        # gateway chassis are not learnt (120).
        resident = ""
        table.add(i, LR_IN_LOOKUP_NEIGHBOR, 120,
                  f'inport == "{port.name}" && (nd_na || nd_ns) && eth.mcast && !is_chassis_resident("{port.crp.name}")',
                  f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} = 1; next;", hint=h, owner=owner)
    for net in nets.ipv4:
        head = f'inport == "{port.name}" && arp.spa == {net_s(net)}'
        if always:
            match = f"{head} && arp.op == 1{resident}"
            table.add(i, LR_IN_LOOKUP_NEIGHBOR, 100, match, LOOKUP_ARP + "next;", hint=h, owner=owner)
            continue
        match = f"{head} && arp.tpa == {net.addr_s} && arp.op == 1{resident}"
        table.add(
            i, LR_IN_LOOKUP_NEIGHBOR, 110, match, LOOKUP_ARP + f"{REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} = 1; next;", hint=h, owner=owner
        )
        match = f"{head} && arp.op == 1{resident}"
        actions = LOOKUP_ARP + f"{REGBIT_LOOKUP_NEIGHBOR_IP_RESULT} = lookup_arp_ip(inport, arp.spa); next;"
        table.add(i, LR_IN_LOOKUP_NEIGHBOR, 100, match, actions, hint=h, owner=owner)
