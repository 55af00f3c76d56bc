"""Router ingress ``lr_in_policy`` and ``lr_in_policy_ecmp`` (``Logical_Router_Policy``).

Observed on the reference (priority-0 fallbacks in :mod:`.defaults`): every policy
becomes one flow at its own priority with its match copied verbatim:

* ``allow``: ``reg8[0..15] = 0; next;``; ``drop``: ``drop;``;
* ``reroute`` to one next hop H (``nexthops``, else the deprecated ``nexthop``, which 26.03
  ignores: behaviour ``policy_nexthop_ignored``):
  ``reg0 = H; reg1 = A; eth.src = E; outport = P; flags.loopback = 1;
  reg8[0..15] = 0; next;`` (``xxreg`` for IPv6) where P is the first router port
  (port order) with a network holding H and A its address there; no flow when no
  port reaches H or H is not an address;
* ``reroute`` to several next hops: every such policy (uuid order) takes the next
  ECMP group id G, valid or not.  If a next hop is not an address or the families
  differ, nothing is built.  Otherwise ``lr_in_policy_ecmp`` gets one priority-100
  flow per next hop (sorted as strings, member ids from 1) until one is not
  reachable; only when all are, the policy's flow selects a member
  (``reg8[0..15] = G; reg8[16..31] = select(1, ..., n);``);
* ``output_port`` (26.03, behaviour ``policy_output_port``) of a one-hop reroute: that port, from
  its address in the next hop's network, else its first of the family (:func:`_output_port_hop`);
  an ECMP reroute with one is left out, warned (as the reference), taking no group id;
* ``options:pkt_mark=M`` (a positive 32-bit integer) prefixes ``pkt.mark = M;`` to
  the actions of allow and reroute policies (to the member flows for ECMP).

Policy chains (25.03, behaviour "policy_chains", observed): a router whose policies name chains
(``chain``) numbers them from 1 in the order they first appear (policies in uuid order; the
reference numbers them across routers, in its own router order).  Every policy of such a router
then matches ``reg9[16..31] == C && (MATCH)`` (C: its chain's number, 0 for the default chain);
(except ECMP reroutes, whose flow keeps the bare match); ``jump`` to a chain of the router gives ``reg9[16..31]=C; next(pipeline=ingress, table=T);``
(T: ``lr_in_policy``), to any other chain nothing, and a warning naming the policy (the reference's
log line: ``Logical router: R, policy action 'jump' follows to non-existent chain C``; ours says
the same as the warning's reason, once).  (Not reproduced: when some router has
chains, the reference also prefixes the policies of some routers without chains with
``reg9[16..31] == 0``, which ones varying from run to run with the same NB.)

Non-ECMP traffic passes ``lr_in_policy_ecmp`` (150, :mod:`.lr_routing`).  Owners: ``("policy", uuid)``;
stage-hints: the policy.
"""

from __future__ import annotations

from ipaddress import IPv6Address
from typing import Any

from ..lflow.stages import LR_IN_POLICY, LR_IN_POLICY_ECMP
from ..lflow.table import FlowTable
from ..northd.addresses import IPAddress
from ..northd.model import Datapath, Port
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .lr_common import (
    find_lrp_for_ip,
    fmt_ip,
    nexthop_family,
    output_port_addr_for,
    parse_ip_strict,
    port_nets,
    src_ipv4_reg,
)
from .lr_routing import chain_walk, routers_before
from .owners import policy_owner
from .registers import (
    REG_ECMP_GROUP_ID,
    REG_ECMP_MEMBER_ID,
    REG_NEXT_HOP_IPV4,
    REG_NEXT_HOP_IPV6,
    REG_POLICY_CHAIN_ID,
    REG_SRC_IPV6,
)


def _pkt_mark(row: Any) -> str:
    text = str(row.options.get("pkt_mark", ""))
    if not text.isdigit():
        return ""
    mark = int(text)
    return f"pkt.mark = {mark}; " if 0 < mark <= 0xFFFFFFFF else ""


def _nexthops(row: Any, ctx: FlowCtx) -> list[str]:
    """The policy's next hops: ``nexthops`` sorted as strings, else the deprecated ``nexthop``
    -- except with behaviour ``policy_nexthop_ignored`` (26.03, observed; ovn-nb(5): the
    column "is ignored by northd"): a reroute policy with only ``nexthop`` has no next hop and
    gets no flow."""
    hops = sorted(str(h) for h in row.nexthops)
    if not hops and not ctx.profile.has("policy_nexthop_ignored"):
        single = opt(row.nexthop)
        if single:
            hops = [str(single)]
    return hops


def _next_hop(router: Datapath, ctx: FlowCtx, ip: IPAddress) -> str | None:
    """``[xx]reg0 = H; [xx]reg1 = A; eth.src = E; outport = P;`` or None if unreachable."""
    found = find_lrp_for_ip(router, ctx, ip)
    if found is None:
        return None
    port, addr = found
    nets = port_nets(port, ctx)
    assert nets is not None
    return _hop_actions(ip, port, addr, nets.ea_s, ctx)


def _output_port_hop(ctx: FlowCtx, ip: IPAddress, name: str) -> str | None:
    """Behaviour ``policy_output_port`` (26.03): a reroute policy's ``output_port`` is the port,
    from its address in the next hop's network, else its first address of that family (none: no
    flow).  (Observed: the port may be another router's; its own networks are read.)"""
    port = ctx.nd.ports.get(name)
    nets = port_nets(port, ctx) if port is not None and port.kind == "lrp" else None
    if port is None or nets is None:
        return None
    addr = output_port_addr_for(nets, ip)
    if addr is None:
        return None
    return _hop_actions(ip, port, addr, nets.ea_s, ctx)


def _hop_actions(ip: IPAddress, port: Port, addr: str, mac: str, ctx: FlowCtx) -> str:
    v6 = isinstance(ip, IPv6Address)
    nh_reg, src_reg = (REG_NEXT_HOP_IPV6, REG_SRC_IPV6) if v6 else (REG_NEXT_HOP_IPV4, src_ipv4_reg(ctx))
    return f'{nh_reg} = {fmt_ip(ip)}; {src_reg} = {addr}; eth.src = {mac}; outport = "{port.name}";'


def _chain(row: Any, column: str) -> str:
    return str(opt(getattr(row, column, None)) or "")


def policy_chain_ids(rows: list[Any]) -> dict[str, int]:
    """Chain name -> its number (from 1, first appearance in ``rows``)."""
    ids: dict[str, int] = {}
    for row in rows:
        name = _chain(row, "chain")
        if name and name not in ids:
            ids[name] = len(ids) + 1
    return ids


def build_lr_policy_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The router's policies, each owned by ``("policy", uuid, router key)``."""
    i = router.index
    gid = 0
    rows = sorted(router.nb.policies, key=lambda r: str(r.uuid))
    v2503 = ctx.profile.has("policy_ecmp_chain_order")
    # (the walk over every router before it only when a policy may form an ECMP group)
    gids = _chain_gids(router, ctx, rows) if v2503 and any(len(r.nexthops) > 1 for r in rows) else {}
    chains = policy_chain_ids(rows) if ctx.profile.has("policy_chains") else {}
    prefixed = bool(chains)
    for row in rows:
        uuid = str(row.uuid)
        owner = policy_owner(uuid, router.key)
        h = hint(uuid)
        priority = int(row.priority)
        match = str(row.match)
        if prefixed:
            match = f"{REG_POLICY_CHAIN_ID} == {chains.get(_chain(row, 'chain'), 0)} && ({match})"
        if row.action == "jump":
            target = chains.get(_chain(row, "jump_chain"))
            if target is not None:
                actions = f"{REG_POLICY_CHAIN_ID}={target}; next(pipeline=ingress, table={ctx.profile.table_id(LR_IN_POLICY)});"
                table.add(i, LR_IN_POLICY, priority, match, actions, hint=h, owner=owner)
            elif ctx.profile.has("policy_chains"):
                ctx.warn("policy_jump_no_chain", "Logical_Router_Policy", row.uuid,
                         f"Logical router: {router.name}, policy action 'jump' follows to non-existent chain "
                         f"{_chain(row, 'jump_chain')}", router=router.name)
        elif row.action == "drop":
            table.add(i, LR_IN_POLICY, priority, match, "drop;", hint=h, owner=owner)
        elif row.action == "allow":
            table.add(
                i,
                LR_IN_POLICY,
                priority,
                match,
                f"{_pkt_mark(row)}{REG_ECMP_GROUP_ID} = 0; next;",
                hint=h,
                owner=owner,
            )
        elif row.action == "reroute":
            hops = _nexthops(row, ctx)
            out = opt(getattr(row, "output_port", None)) if ctx.profile.has("policy_output_port") else None
            if out is not None and len(hops) > 1:
                ctx.warn("policy_output_port_ecmp", "Logical_Router_Policy", row.uuid,
                         "output_port only supported on non-ECMP reroute policies", router=router.name)
                continue
            if len(hops) == 1:
                ip = parse_ip_strict(hops[0])
                if out is not None:
                    hop = _output_port_hop(ctx, ip, str(out.name)) if ip is not None else None
                else:
                    hop = _next_hop(router, ctx, ip) if ip is not None else None
                if hop is not None:
                    fam = nexthop_family(ctx, isinstance(ip, IPv6Address))
                    actions = f"{_pkt_mark(row)}{hop} flags.loopback = 1; {REG_ECMP_GROUP_ID} = 0; {fam}next;"
                    table.add(i, LR_IN_POLICY, priority, match, actions, hint=h, owner=owner)
            elif len(hops) > 1:
                gid += 1
                # Observed: the ECMP reroute's flow keeps the policy's match without its chain.
                _add_ecmp_policy(router, ctx, table, row, hops, gids.get(uuid, gid), str(row.match), v2503)


def _inserted(router: Datapath, ctx: FlowCtx, row: Any) -> bool:
    """Is the policy in the reference's parsed-policy map (observed on 25.03): all but a reroute
    to one next hop that does not parse or that no router port reaches (26.03, behaviour
    ``policy_output_port``: its ``output_port`` does; an ECMP reroute with one is left out; behaviour
    ``policy_nexthop_ignored``, 26.03: nor a reroute without ``nexthops``)."""
    hops = _nexthops(row, ctx)
    if row.action != "reroute":
        return True
    out = opt(getattr(row, "output_port", None)) if ctx.profile.has("policy_output_port") else None
    if not hops and ctx.profile.has("policy_nexthop_ignored"):
        return False  # (observed, 26.03: a reroute without next hops is not in the map)
    if len(hops) != 1:
        return out is None or len(hops) < 2
    ip = parse_ip_strict(hops[0])
    if ip is None:
        return False
    if out is not None:
        return _output_port_hop(ctx, ip, str(out.name)) is not None
    return _next_hop(router, ctx, ip) is not None


def _chain_gids(router: Datapath, ctx: FlowCtx, rows: list[Any]) -> dict[str, int]:
    """Behaviour ``policy_ecmp_chain_order`` (25.03, observed): the ECMP group ids of the
    router's reroute policies with several next hops, numbered in the reference's walk of its
    parsed policies -- the same list order as its routes (:func:`.lr_routing.chain_walk`): the
    :func:`_inserted` policies of the routers before it, then its own in uuid order, each pushed
    onto the list's head, the list reversed at each growth of the map."""
    before = sum(sum(1 for r in other.nb.policies if _inserted(other, ctx, r))
                 for other in routers_before(router, ctx))
    order = chain_walk([r for r in rows if _inserted(router, ctx, r)], before)
    multi = [r for r in order if r.action == "reroute" and len(_nexthops(r, ctx)) > 1]
    return {str(r.uuid): n for n, r in enumerate(multi, start=1)}


def _add_ecmp_policy(
    router: Datapath, ctx: FlowCtx, table: FlowTable, row: Any, hops: list[str], gid: int, policy_match: str,
    v2503: bool = False,
) -> None:
    ips = [parse_ip_strict(h) for h in hops]
    valid = [ip for ip in ips if ip is not None]
    if v2503:
        # 25.03 (observed): the next hops that parse and that a router port reaches; none, or of
        # both families: no flow.
        valid = [ip for ip in valid if _next_hop(router, ctx, ip) is not None]
        if not valid or len({isinstance(ip, IPv6Address) for ip in valid}) != 1:
            return
    elif len(valid) != len(ips) or len({isinstance(ip, IPv6Address) for ip in valid}) != 1:
        return
    uuid = str(row.uuid)
    owner = policy_owner(uuid, router.key)
    h = hint(uuid)
    mark = _pkt_mark(row)
    for mid, ip in enumerate(valid, start=1):
        hop = _next_hop(router, ctx, ip)
        if hop is None:
            return
        match = f"{REG_ECMP_GROUP_ID} == {gid} && {REG_ECMP_MEMBER_ID} == {mid}"
        table.add(
            router.index,
            LR_IN_POLICY_ECMP,
            100,
            match,
            f"{mark}{hop} flags.loopback = 1; {nexthop_family(ctx, isinstance(ip, IPv6Address))}next;",
            hint=h,
            owner=owner,
        )
    ids = ", ".join(str(m) for m in range(1, len(valid) + 1))
    actions = f"{REG_ECMP_GROUP_ID} = {gid}; {REG_ECMP_MEMBER_ID} = select({ids});"
    if v2503 and len(valid) == 1:
        actions = f"{REG_ECMP_GROUP_ID} = {gid}; {REG_ECMP_MEMBER_ID} = 1; next;"
    table.add(router.index, LR_IN_POLICY, int(row.priority), policy_match, actions, hint=h, owner=owner)
