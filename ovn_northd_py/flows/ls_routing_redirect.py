"""Routing protocol control plane redirect (25.03, behaviour ``routing_protocol_redirect``; ``man
ovn-nb``, Logical_Router_Port ``options:routing-protocol-redirect`` and ``routing-protocols``).

A router port R naming, in ``routing-protocol-redirect``, a switch port P of the switch its peer
switch port S is on, with ``routing-protocols`` listing ``BGP`` (TCP port 179) and / or ``BFD``
(UDP port 3784), makes that switch send the protocols' traffic for R's addresses to P (observed on
25.03's reference, all owned by S, stage-hint S):

* ``ls_in_l2_lkup`` 100, per address A of R (its IPv4 addresses, then its IPv6 ones, link-local
  included) and protocol port N: ``ipX.dst == A && tcp.dst == N`` and ``... tcp.src == N`` (``udp``
  for BFD) -> ``outport = "P"; output;``;
* ``ls_in_l2_lkup`` 100: ARP replies ``arp.op == 2 && arp.tpa == A`` (IPv4) and neighbour
  advertisements ``ip6.dst == A && nd_na`` (IPv6) are cloned to P and go on to S;
* ``ls_in_check_port_sec`` 80: P may not send ARP replies, neighbour advertisements or router
  advertisements (``inport == "P" && arp.op == 2`` / ``nd_na`` / ``nd_ra`` ->
  ``reg0[15] = 1; next;``).

No flow when P is not a port of that switch or no protocol is known.

26.03 (behaviour ``routing_redirect_bfd_clone``): when R has OVN's own BFD sessions (an NB ``BFD``
row names it, e.g. a static route with ``--bfd``), its BFD traffic is cloned to P and goes on to S
(as the ARP replies), instead of going to P alone.
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_CHECK_PORT_SEC, LS_IN_L2_LKUP
from ..lflow.table import FlowTable
from ..northd.model import Port
from .context import FlowCtx, hint
from .owners import port_owner
from .registers import REGBIT_PORT_SEC_DROP
from .router_addrs import lrp_networks

_PROTOCOLS = (("BGP", "tcp", 179), ("BFD", "udp", 3784))


def build_lsp_routing_redirect_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    lrp = port.peer
    if (port.kind != "lsp" or not port.is_router_lsp or lrp is None or lrp.kind != "lrp"
            or not ctx.profile.has("routing_protocol_redirect")):
        return
    opts = lrp.nb.options
    target = str(opts.get("routing-protocol-redirect", ""))
    names = {n.strip() for n in str(opts.get("routing-protocols", "")).split(",")}
    protocols = [(proto, n) for name, proto, n in _PROTOCOLS if name in names]
    if not target or not protocols or not any(p.kind == "lsp" and p.name == target for p in port.dp.ports):
        return
    nets = lrp_networks(lrp)
    if nets is None:
        return
    i, owner, h = port.dp.index, port_owner(port), hint(port.nb_key)
    addrs = [("ip4", n.addr_s) for n in nets.ipv4] + [("ip6", n.addr_s) for n in nets.ipv6]
    to_target = f'outport = "{target}"; output;'
    clone = f'clone {{ outport = "{target}"; output; }}; outport = "{port.name}"; output;'
    bfd_clone = ctx.profile.has("routing_redirect_bfd_clone") and lrp.name in ctx.bfd_ports
    for proto, n in protocols:
        actions = clone if bfd_clone and proto == "udp" else to_target
        for fam, a in addrs:
            for side in ("dst", "src"):
                table.add(i, LS_IN_L2_LKUP, 100, f"{fam}.dst == {a} && {proto}.{side} == {n}", actions,
                          hint=h, owner=owner)
    for fam, a in addrs:
        match = f"arp.op == 2 && arp.tpa == {a}" if fam == "ip4" else f"ip6.dst == {a} && nd_na"
        table.add(i, LS_IN_L2_LKUP, 100, match, clone, hint=h, owner=owner)
    for what in ("arp.op == 2", "nd_na", "nd_ra"):
        table.add(i, LS_IN_CHECK_PORT_SEC, 80, f'inport == "{target}" && {what}', f"{REGBIT_PORT_SEC_DROP} = 1; next;",
                  hint=h, owner=owner)
