"""Switch-wide flows of the conntrack/ACL stages (owner ``("dp", key)``; the ACLs' own flows: :mod:`.acl_rules`).

Stages ``ls_{in,out}_pre_acl``, ``ls_{in,out}_pre_lb``, ``ls_{in,out}_pre_stateful``,
``ls_{in,out}_acl_hint``, ``ls_{in,out}_acl``, ``ls_in_acl_after_lb`` and
``ls_{in,out}_stateful``.  Observed on the reference (facts: :mod:`.acl_index`):

* every switch: pre-ACL lets service-monitor traffic through (110) and falls back
  to ``next;``; pre-LB lets multicast, ND/MLD, service-monitor and stateless-ACL
  traffic (``reg0[16] == 1``) through (110); pre-stateful sends the NAT hint to
  ``ct_lb_mark`` (110) and the defrag hint to ``ct_next`` (100); the stateful stages
  commit ``reg0[1]`` with or without the ``reg3`` label (100); ND/MLD is always
  allowed in the ACL stages (65532);
* router ports (whose peer router exists and is enabled) and, unless the switch has
  a load-balancer VIP, localnet ports skip conntrack in pre-LB (110;
  ``ct_clear; next;`` on egress when the switch has no stateful ACL);
* a stateful ACL: pre-ACL sets the defrag hint for IP (100) except multicast,
  ND/MLD/DHCPv6 and router/localnet ports (110);
* a load-balancer VIP: pre-LB sets the NAT hint for IP (100);
* neither ACLs nor LB VIPs: ``acl_hint`` and ``acl`` are skipped at 65535;
  otherwise they fall back at 0 (``drop;`` in ``acl``/``acl_after_lb`` with ACLs
  and NB_Global ``options:default_acl_drop=true``) and service-monitor traffic is
  allowed (34000);
* stateful (a stateful ACL or an LB VIP): the ``acl_hint`` hints (7..1), the
  conntrack flows of the ACL stages (65532: replies, related, invalid/blocked
  drop, after-LB ``reg0[17]``) and the priority-1 commit of new connections (a drop
  with ``default_acl_drop``); ``use_ct_inv_match=false`` leaves ``ct.inv`` out;
* on every switch, ``ls_out_acl`` lets replies of ovn-controller's services through
  (34000, ``ct_commit; next;`` on a stateful switch): DNS (``udp.src == 53``) when the
  switch has DNS records, and DHCP per port (owner the port, stage-hint the
  DHCP_Options row) whose ``dhcpv4_options`` has ``server_id``, ``server_mac`` and
  ``lease_time`` (the cidr is not checked) or whose ``dhcpv6_options`` ``server_id`` is
  a MAC (replies from its EUI-64 link-local address); not for ``external`` ports,
  disabled ports included.
"""

from __future__ import annotations

from typing import Final

from ..lflow.stages import (
    LS_IN_ACL,
    LS_IN_ACL_AFTER_LB,
    LS_IN_ACL_HINT,
    LS_IN_PRE_ACL,
    LS_IN_PRE_LB,
    LS_IN_PRE_STATEFUL,
    LS_IN_STATEFUL,
    LS_OUT_ACL,
    LS_OUT_ACL_HINT,
    LS_OUT_PRE_ACL,
    LS_OUT_PRE_LB,
    LS_OUT_PRE_STATEFUL,
    LS_OUT_STATEFUL,
    Stage,
)
from ..lflow.table import MAX_PRIORITY, FlowTable
from ..northd.addresses import AddressError, EthAddr, format_ipv6
from ..northd.model import Datapath, Port
from ..ovsdb.columns import opt
from .acl_index import switch_acls
from .context import FlowCtx, hint
from .ls_dns import switch_has_dns_records
from .ls_l2 import peer_router_port
from .owners import dp_owner, port_owner
from .registers import (
    REG_ACL_LABEL,
    REGBIT_ACL_HINT_ALLOW,
    REGBIT_ACL_HINT_ALLOW_NEW,
    REGBIT_ACL_HINT_ALLOW_REL,
    REGBIT_ACL_HINT_BLOCK,
    REGBIT_ACL_HINT_DROP,
    REGBIT_ACL_LABEL,
    REGBIT_ACL_STATELESS,
    REGBIT_CONNTRACK_COMMIT,
    REGBIT_CONNTRACK_DEFRAG,
    REGBIT_CONNTRACK_NAT,
)

NEXT: Final = "next;"
DROP: Final = "drop;"
SVC_MON_DST: Final = "eth.dst == $svc_monitor_mac"
SVC_MON_SRC: Final = "eth.src == $svc_monitor_mac"
ND_MLD: Final = "nd || nd_rs || nd_ra || mldv1 || mldv2"
ND_MLD_ACL: Final = "nd || nd_ra || nd_rs || mldv1 || mldv2"
ND_MLD_DHCP6: Final = f"{ND_MLD} || (udp && udp.src == 546 && udp.dst == 547)"
SKIP_PRIORITY: Final = 110
ACL_CT_PRIORITY: Final = 65532
SVC_MON_ACL_PRIORITY: Final = 34000

# acl_hint: (priority, match, hint bits set), highest first; see man ovn-northd "ACL hints".
HINTS: Final[tuple[tuple[int, str, tuple[str, ...]], ...]] = (
    (7, "ct.new && !ct.est", (REGBIT_ACL_HINT_ALLOW_NEW, REGBIT_ACL_HINT_DROP)),
    (6, "!ct.new && ct.est && !ct.rpl && {blocked} == 1", (REGBIT_ACL_HINT_ALLOW_NEW, REGBIT_ACL_HINT_DROP)),
    (5, "!ct.trk", (REGBIT_ACL_HINT_ALLOW, REGBIT_ACL_HINT_DROP)),
    (4, "!ct.new && ct.est && !ct.rpl && {blocked} == 0", (REGBIT_ACL_HINT_ALLOW, REGBIT_ACL_HINT_BLOCK)),
    (3, "!ct.est", (REGBIT_ACL_HINT_DROP,)),
    (2, "ct.est && {blocked} == 1", (REGBIT_ACL_HINT_DROP,)),
    (1, "ct.est && {blocked} == 0", (REGBIT_ACL_HINT_BLOCK,)),
)  # {blocked}: ct_mark.blocked, or ct_label.blocked for old chassis (FlowCtx.features)


def conntrack_skip_ports(dp: Datapath, skip_localnet: bool) -> list[Port]:
    """Router ports (peer router present and enabled) and, if ``skip_localnet``, localnet ports."""
    return [
        p
        for p in dp.ports
        if p.kind == "lsp" and (peer_router_port(p) is not None or skip_localnet and p.sb_type == "localnet")
    ]


def _skip_ports(
    dp: Datapath, table: FlowTable, ports: list[Port], stages: tuple[Stage, Stage], out_actions: str
) -> None:
    owner = dp_owner(dp)
    for p in ports:
        h = hint(p.nb_key)
        table.add(dp.index, stages[0], SKIP_PRIORITY, f'ip && inport == "{p.name}"', NEXT, hint=h, owner=owner,
                  io_port=p.name)
        table.add(dp.index, stages[1], SKIP_PRIORITY, f'ip && outport == "{p.name}"', out_actions, hint=h,
                  owner=owner, io_port=p.name)


def build_ls_pre_acl_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_{in,out}_pre_acl`` (stateless ACLs add their own flows, :mod:`.acl_rules`)."""
    owner = dp_owner(dp)
    i = dp.index
    table.add(i, LS_IN_PRE_ACL, SKIP_PRIORITY, SVC_MON_DST, NEXT, owner=owner)
    table.add(i, LS_OUT_PRE_ACL, SKIP_PRIORITY, SVC_MON_SRC, NEXT, owner=owner)
    for stage in (LS_IN_PRE_ACL, LS_OUT_PRE_ACL):
        table.add(i, stage, 0, "1", NEXT, owner=owner)
    if not switch_acls(dp, ctx).has_stateful_acl:
        return
    _skip_ports(dp, table, conntrack_skip_ports(dp, True), (LS_IN_PRE_ACL, LS_OUT_PRE_ACL), NEXT)
    for stage in (LS_IN_PRE_ACL, LS_OUT_PRE_ACL):
        table.add(i, stage, SKIP_PRIORITY, "eth.mcast", NEXT, owner=owner)
        table.add(i, stage, SKIP_PRIORITY, ND_MLD_DHCP6, NEXT, owner=owner)
        table.add(i, stage, 100, "ip", f"{REGBIT_CONNTRACK_DEFRAG} = 1; next;", owner=owner)


def build_ls_pre_lb_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_{in,out}_pre_lb`` except the load balancers' own flows."""
    owner = dp_owner(dp)
    i = dp.index
    facts = switch_acls(dp, ctx)
    table.add(i, LS_IN_PRE_LB, SKIP_PRIORITY, SVC_MON_DST, NEXT, owner=owner)
    table.add(i, LS_OUT_PRE_LB, SKIP_PRIORITY, SVC_MON_SRC, NEXT, owner=owner)
    for stage in (LS_IN_PRE_LB, LS_OUT_PRE_LB):
        table.add(i, stage, SKIP_PRIORITY, "eth.mcast", NEXT, owner=owner)
        table.add(i, stage, SKIP_PRIORITY, ND_MLD, NEXT, owner=owner)
        table.add(i, stage, SKIP_PRIORITY, f"{REGBIT_ACL_STATELESS} == 1", NEXT, owner=owner)
        table.add(i, stage, 0, "1", NEXT, owner=owner)
        if facts.has_lb_vip:
            table.add(i, stage, 100, "ip", f"{REGBIT_CONNTRACK_NAT} = 1; next;", owner=owner)
    out_actions = NEXT if facts.has_stateful_acl else "ct_clear; next;"
    ports = conntrack_skip_ports(dp, not facts.has_lb_vip)
    _skip_ports(dp, table, ports, (LS_IN_PRE_LB, LS_OUT_PRE_LB), out_actions)


def build_ls_pre_stateful_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_{in,out}_pre_stateful`` and ``ls_{in,out}_stateful`` (load balancers add their VIP flows)."""
    owner = dp_owner(dp)
    i = dp.index
    for stage in (LS_IN_PRE_STATEFUL, LS_OUT_PRE_STATEFUL):
        table.add(i, stage, 110, f"{REGBIT_CONNTRACK_NAT} == 1", f"{ctx.features.ct_lb};", owner=owner)
        table.add(i, stage, 100, f"{REGBIT_CONNTRACK_DEFRAG} == 1", "ct_next;", owner=owner)
        table.add(i, stage, 0, "1", NEXT, owner=owner)
    commit = f"{REGBIT_CONNTRACK_COMMIT} == 1"
    blocked = ctx.features.ct("blocked")
    for stage in (LS_IN_STATEFUL, LS_OUT_STATEFUL):
        table.add(i, stage, 100, f"{commit} && {REGBIT_ACL_LABEL} == 0",
                  f"ct_commit {{ {blocked} = 0; }}; next;", owner=owner)
        table.add(i, stage, 100, f"{commit} && {REGBIT_ACL_LABEL} == 1",
                  f"ct_commit {{ {blocked} = 0; ct_label.label = {REG_ACL_LABEL}; }}; next;", owner=owner)
        table.add(i, stage, 0, "1", NEXT, owner=owner)


def build_ls_acl_stage_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_{in,out}_acl_hint``, ``ls_{in,out}_acl`` and ``ls_in_acl_after_lb`` switch-wide flows."""
    owner = dp_owner(dp)
    i = dp.index
    facts = switch_acls(dp, ctx)
    for stage in (LS_IN_ACL, LS_OUT_ACL, LS_IN_ACL_AFTER_LB):
        table.add(i, stage, ACL_CT_PRIORITY, ND_MLD_ACL, NEXT, owner=owner)
    if not facts.has_acls and not facts.has_lb_vip:
        for stage in (LS_IN_ACL_HINT, LS_IN_ACL, LS_OUT_ACL_HINT, LS_OUT_ACL):
            table.add(i, stage, MAX_PRIORITY, "1", NEXT, owner=owner)
        table.add(i, LS_IN_ACL_AFTER_LB, 0, "1", NEXT, owner=owner)
        return
    verdict = DROP if facts.has_acls and ctx.default_acl_drop else NEXT
    for stage in (LS_IN_ACL_HINT, LS_OUT_ACL_HINT):
        table.add(i, stage, 0, "1", NEXT, owner=owner)
    for stage in (LS_IN_ACL, LS_OUT_ACL, LS_IN_ACL_AFTER_LB):
        table.add(i, stage, 0, "1", verdict, owner=owner)
    table.add(i, LS_IN_ACL, SVC_MON_ACL_PRIORITY, SVC_MON_DST, NEXT, owner=owner)
    table.add(i, LS_OUT_ACL, SVC_MON_ACL_PRIORITY, SVC_MON_SRC, NEXT, owner=owner)
    if not facts.stateful:
        return
    ct_blocked = ctx.features.ct("blocked")
    for stage in (LS_IN_ACL_HINT, LS_OUT_ACL_HINT):
        for prio, match, bits in HINTS:
            table.add(i, stage, prio, match.format(blocked=ct_blocked), "".join(f"{b} = 1; " for b in bits) + NEXT,
                      owner=owner)
    inv = "!ct.inv && " if ctx.acl.use_ct_inv_match else ""
    blocked = f"ct.inv || (ct.est && ct.rpl && {ct_blocked} == 1)" if inv else f"(ct.est && ct.rpl && {ct_blocked} == 1)"
    reply = f"ct.est && !ct.rel && !ct.new && {inv}ct.rpl && {ct_blocked} == 0"
    related = f"!ct.est && ct.rel && !ct.new && {inv}{ct_blocked} == 0"
    # Related traffic is NATed only when every chassis can (ovn-ct-lb-related).
    rel_nat = "ct_commit_nat;" if ctx.features.ct_lb_related else NEXT
    rel = f"{REGBIT_ACL_HINT_ALLOW_REL} = 1; "
    clear = f"{REGBIT_ACL_HINT_DROP} = 0; {REGBIT_ACL_HINT_BLOCK} = 0; "
    new_verdict = DROP if ctx.default_acl_drop else f"{REGBIT_CONNTRACK_COMMIT} = 1; next;"
    for stage, ingress in ((LS_IN_ACL, True), (LS_OUT_ACL, False)):
        table.add(i, stage, ACL_CT_PRIORITY, blocked, DROP, owner=owner)
        table.add(i, stage, ACL_CT_PRIORITY, reply, f"{clear}{rel}{NEXT}" if ingress else NEXT, owner=owner)
        table.add(i, stage, ACL_CT_PRIORITY, related, f"{rel}{rel_nat}" if ingress else rel_nat, owner=owner)
        table.add(i, stage, 1, "ip && !ct.est", new_verdict, owner=owner)
        table.add(i, stage, 1, f"ip && ct.est && {ct_blocked} == 1", f"{REGBIT_CONNTRACK_COMMIT} = 1; next;",
                  owner=owner)
    table.add(i, LS_IN_ACL_AFTER_LB, ACL_CT_PRIORITY, f"{REGBIT_ACL_HINT_ALLOW_REL} == 1", NEXT, owner=owner)


def _service_reply_actions(dp: Datapath, ctx: FlowCtx) -> str:
    return "ct_commit; next;" if switch_acls(dp, ctx).stateful else NEXT


def build_ls_dns_reply_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_out_acl`` 34000: DNS replies from ovn-controller, on a switch with DNS records."""
    if switch_has_dns_records(dp):
        table.add(dp.index, LS_OUT_ACL, SVC_MON_ACL_PRIORITY, "udp.src == 53", _service_reply_actions(dp, ctx),
                  owner=dp_owner(dp))


def build_lsp_dhcp_reply_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_out_acl`` 34000: DHCPv4/DHCPv6 replies from ovn-controller to one switch port."""
    if port.kind != "lsp" or port.sb_type == "external":
        return
    v4, v6 = opt(port.nb.dhcpv4_options), opt(port.nb.dhcpv6_options)
    if v4 is None and v6 is None:
        return
    actions = _service_reply_actions(port.dp, ctx)
    owner = port_owner(port)
    out = f'outport == "{port.name}"'
    if v4 is not None:
        o = v4.options
        server_id, server_mac = o.get("server_id"), o.get("server_mac")
        if server_id is not None and server_mac is not None and "lease_time" in o:
            match = f"{out} && eth.src == {server_mac} && ip4.src == {server_id} && udp && udp.src == 67 && udp.dst == 68"
            table.add(port.dp.index, LS_OUT_ACL, SVC_MON_ACL_PRIORITY, match, actions, hint=hint(str(v4.uuid)),
                      owner=owner, io_port=port.name)
    if v6 is not None:
        server = v6.options.get("server_id")
        try:
            lla = EthAddr.parse(server).ipv6_lla() if server is not None else None
        except AddressError:
            lla = None
        if lla is not None:
            match = (f"{out} && eth.src == {server} && ip6.src == {format_ipv6(lla)} && udp && udp.src == 547"
                     " && udp.dst == 546")
            table.add(port.dp.index, LS_OUT_ACL, SVC_MON_ACL_PRIORITY, match, actions, hint=hint(str(v6.uuid)),
                      owner=owner, io_port=port.name)


def build_ls_acl_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Every switch-wide flow of the conntrack/ACL stages of switch ``dp``."""
    ctx.acl.dp_facts[dp.key] = switch_acls(dp, ctx)
    build_ls_pre_acl_flows(dp, ctx, table)
    build_ls_pre_lb_flows(dp, ctx, table)
    build_ls_pre_stateful_flows(dp, ctx, table)
    build_ls_acl_stage_flows(dp, ctx, table)
    build_ls_dns_reply_flows(dp, ctx, table)
