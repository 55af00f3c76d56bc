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

from collections.abc import Hashable
from typing import Any, Final

from ..lflow.stages import (
    LS_IN_ACL,
    LS_IN_ACL_ACTION,
    LS_IN_ACL_AFTER_LB,
    LS_IN_ACL_AFTER_LB_ACTION,
    LS_IN_ACL_AFTER_LB_EVAL,
    LS_IN_ACL_AFTER_LB_SAMPLE,
    LS_IN_ACL_EVAL,
    LS_IN_ACL_HINT,
    LS_IN_ACL_SAMPLE,
    LS_IN_PRE_ACL,
    LS_IN_PRE_LB,
    LS_IN_PRE_STATEFUL,
    LS_IN_STATEFUL,
    LS_OUT_ACL,
    LS_OUT_ACL_ACTION,
    LS_OUT_ACL_EVAL,
    LS_OUT_ACL_HINT,
    LS_OUT_ACL_SAMPLE,
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
from .acl_index import smap_bool, stateless_acl_with_lb, switch_acls
from .acl_rules import reject_action, switch_acl_tiers
from .context import FlowCtx, hint
from .copp import copp_meter
from .dhcp_relay import switch_relays_dhcp
from .ls_dhcp import dhcp4_config, dhcp6_config
from .ls_dns import switch_has_dns_records
from .ls_evpn import build_evpn_skip_flows
from .ls_l2 import peer_router_port
from .ls_network_function import build_ls_network_function_flows
from .lsp_addrs import lsp_addresses
from .owners import dp_owner, port_owner
from .registers import (
    REG_ACL_ID,
    REG_ACL_LABEL,
    REG_ACL_TIER,
    REG_NF_ID,
    REG_OBS_COLLECTOR_ID_EST,
    REG_OBS_POINT_ID_EST,
    REG_OBS_STAGE,
    REGBIT_ACL_HINT_ALLOW,
    REGBIT_ACL_HINT_ALLOW_EST,
    REGBIT_ACL_HINT_ALLOW_NEW,
    REGBIT_ACL_HINT_ALLOW_REL,
    REGBIT_ACL_HINT_BLOCK,
    REGBIT_ACL_HINT_DROP,
    REGBIT_ACL_LABEL,
    REGBIT_ACL_PERSIST_ID,
    REGBIT_ACL_STATELESS,
    REGBIT_ACL_VERDICT_ALLOW,
    REGBIT_ACL_VERDICT_DROP,
    REGBIT_ACL_VERDICT_REJECT,
    REGBIT_CONNTRACK_COMMIT,
    REGBIT_CONNTRACK_DEFRAG,
    REGBIT_CONNTRACK_NAT,
    REGBIT_NF_ENABLED,
)

NEXT: Final = "next;"
DROP: Final = "drop;"
SVC_MON_DST: Final = "eth.dst == $svc_monitor_mac"
SVC_MON_SRC: Final = "eth.src == $svc_monitor_mac"
ND_MLD: Final = "nd || nd_rs || nd_ra || mldv1 || mldv2"
ND_MLD_ACL: Final = "nd || nd_ra || nd_rs || mldv1 || mldv2"
ND_MLD_DHCP6: Final = f"{ND_MLD} || (udp && udp.src == 546 && udp.dst == 547)"
SKIP_PRIORITY: Final = 110
# Behaviour "pmtud_tunnel_rx": ICMP "too big" errors received from a tunnel skip conntrack.
PMTUD_TUNNEL_RX: Final = (
    "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0)) && flags.tunnel_rx == 1"
)
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


def _add_acl_hints(i: int, table: FlowTable, owner: Hashable, ctx: FlowCtx) -> str:
    """The ``ls_*_acl_hint`` flows of a stateful switch (both pipelines, every release); returns the
    conntrack field that holds "blocked" (``ct_mark.blocked``, or ``ct_label.blocked`` for old chassis)."""
    ct_blocked = ctx.features.ct("blocked")
    # Behaviour "acl_hint_commits_new" (26.03): the hints of a new connection (7, 6) also set the
    # commit bit, which the allow ACLs then leave alone.
    commit_new = ctx.profile.has("acl_hint_commits_new")
    for stage in (LS_IN_ACL_HINT, LS_OUT_ACL_HINT):
        for prio, match, bits in HINTS:
            if commit_new and REGBIT_ACL_HINT_ALLOW_NEW in bits:
                bits = (*bits, REGBIT_CONNTRACK_COMMIT)
            table.add(i, stage, prio, match.format(blocked=ct_blocked), "".join(f"{b} = 1; " for b in bits) + NEXT,
                      owner=owner)
    return ct_blocked


def conntrack_skip_ports(dp: Datapath, skip_localnet: bool) -> list[Port]:
    """Router ports (peer router present and enabled) and, if ``skip_localnet``, localnet ports."""
    return [
        p
        for p in dp.ports
        if p.kind == "lsp" and (peer_router_port(p) is not None or (skip_localnet and p.sb_type == "localnet"))
    ]


def switch_peer_skip_ports(dp: Datapath, ctx: FlowCtx) -> list[Port]:
    """Behaviour ``switch_port_skips_conntrack`` (26.03, observed): every port of type ``switch``
    (whether or not its ``options:peer`` names an existing port, enabled or not) skips conntrack
    like a router port, in ``ls_{in,out}_pre_lb`` 110 on every switch (with or without a
    load-balancer VIP) and in ``ls_{in,out}_pre_acl`` 110 on a switch with a stateful ACL; both
    directions only go on (``next;``: no ``ct_clear`` on the way out, even without a stateful ACL)."""
    if not ctx.profile.has("switch_port_skips_conntrack"):
        return []
    return [p for p in dp.ports if p.kind == "lsp" and p.nb.type == "switch"]


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


def _router_port_acl(port: Port) -> bool:
    """Behaviour ``router_port_acl`` (25.03): a router-type port whose peer is a distributed gateway
    port and has ``options:enable_router_port_acl=true`` goes through conntrack (no pre-ACL skip;
    pre-LB still skips it)."""
    peer = peer_router_port(port)
    return peer is not None and peer.crp is not None and smap_bool(port.nb.options, "enable_router_port_acl", False)


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
    build_evpn_skip_flows(dp, ctx, table, (LS_IN_PRE_ACL, LS_OUT_PRE_ACL), NEXT)  # (26.03's EVPN switches)
    ports = conntrack_skip_ports(dp, True)
    if ctx.profile.has("router_port_acl"):
        ports = [p for p in ports if not _router_port_acl(p)]
    _skip_ports(dp, table, ports + switch_peer_skip_ports(dp, ctx), (LS_IN_PRE_ACL, LS_OUT_PRE_ACL), NEXT)
    if ctx.profile.has("pmtud_tunnel_rx"):
        table.add(i, LS_IN_PRE_ACL, SKIP_PRIORITY, PMTUD_TUNNEL_RX, NEXT, owner=owner)
    for stage in (LS_IN_PRE_ACL, LS_OUT_PRE_ACL):
        if not ctx.acl_ct_translation:  # (26.03, observed: multicast is not kept out of conntrack then)
            table.add(i, stage, SKIP_PRIORITY, "eth.mcast", NEXT, owner=owner)
        table.add(i, stage, SKIP_PRIORITY, ND_MLD_DHCP6, NEXT, owner=owner)
        table.add(i, stage, 100, "ip", f"{REGBIT_CONNTRACK_DEFRAG} = 1; next;", owner=owner)


def build_ls_pre_lb_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_{in,out}_pre_lb`` except the load balancers' own flows."""
    owner = dp_owner(dp)
    i = dp.index
    facts = switch_acls(dp, ctx)
    table.add(i, LS_IN_PRE_LB, SKIP_PRIORITY, SVC_MON_DST, NEXT, owner=owner)
    if ctx.profile.has("pmtud_tunnel_rx"):  # written by the reference without the blank after "||"
        table.add(i, LS_IN_PRE_LB, SKIP_PRIORITY, PMTUD_TUNNEL_RX.replace("|| (ip6", "||(ip6"), NEXT, owner=owner)
    table.add(i, LS_OUT_PRE_LB, SKIP_PRIORITY, SVC_MON_SRC, NEXT, owner=owner)
    for stage in (LS_IN_PRE_LB, LS_OUT_PRE_LB):
        table.add(i, stage, SKIP_PRIORITY, "eth.mcast", NEXT, owner=owner)
        table.add(i, stage, SKIP_PRIORITY, ND_MLD, NEXT, owner=owner)
        table.add(i, stage, SKIP_PRIORITY, f"{REGBIT_ACL_STATELESS} == 1", NEXT, owner=owner)
        table.add(i, stage, 0, "1", NEXT, owner=owner)
        if facts.has_lb_vip:
            table.add(i, stage, 100, "ip", f"{REGBIT_CONNTRACK_NAT} = 1; next;", owner=owner)
    if facts.has_lb_vip and stateless_acl_with_lb(dp, ctx):  # (observed) stateless traffic to conntrack
        table.add(i, LS_OUT_PRE_LB, 115, f"{REGBIT_ACL_STATELESS} == 1", f"{REGBIT_CONNTRACK_NAT} = 1; next;",
                  owner=owner)
    out_actions = NEXT if facts.has_stateful_acl else "ct_clear; next;"
    if out_actions != NEXT and ctx.profile.has("pkt_sampled_flag"):  # 26.03: the sampling flag is reset too
        out_actions = "flags.pkt_sampled = 0; " + out_actions
    build_evpn_skip_flows(dp, ctx, table, (LS_IN_PRE_LB, LS_OUT_PRE_LB), out_actions)  # (26.03's EVPN switches)
    ports = conntrack_skip_ports(dp, not facts.has_lb_vip)
    _skip_ports(dp, table, ports, (LS_IN_PRE_LB, LS_OUT_PRE_LB), out_actions)
    _skip_ports(dp, table, switch_peer_skip_ports(dp, ctx), (LS_IN_PRE_LB, LS_OUT_PRE_LB), NEXT)


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
    if ctx.profile.has("ct_commit_acl_id"):
        persist = f"ct_mark.allow_established = {REGBIT_ACL_PERSIST_ID}; "
        acl_id = f"ct_label.acl_id = {REG_ACL_ID}; "
        obs = (f"ct_mark.obs_stage = {REG_OBS_STAGE}; ct_mark.obs_collector_id = {REG_OBS_COLLECTOR_ID_EST}; "
               f"ct_label.obs_point_id = {REG_OBS_POINT_ID_EST}; ")
        unlabelled = f"ct_commit {{ {blocked} = 0; {persist}{acl_id}}}; next;"
        labelled = f"ct_commit {{ {blocked} = 0; {persist}{obs}{acl_id}}}; next;"
    else:
        unlabelled = f"ct_commit {{ {blocked} = 0; }}; next;"
        labelled = f"ct_commit {{ {blocked} = 0; ct_label.label = {REG_ACL_LABEL}; }}; next;"
    nf = ctx.profile.has("network_function")
    if switch_acls(dp, ctx).has_lb_vip and stateless_acl_with_lb(dp, ctx):  # (observed) not committed
        table.add(i, LS_OUT_STATEFUL, 110, f"{REGBIT_ACL_STATELESS} == 1 && ct.new", NEXT, owner=owner)
    for stage in (LS_IN_STATEFUL, LS_OUT_STATEFUL):
        for bit, actions in ((0, unlabelled), (1, labelled)):
            match = f"{commit} && {REGBIT_ACL_LABEL} == {bit}"
            if nf:  # 26.03: the connection's network function (none: 0) committed with it
                table.add(i, stage, 110, f"{match} && {REGBIT_NF_ENABLED} == 1",
                          actions.replace("}; next;", f"ct_label.nf = 1; ct_label.nf_id = {REG_NF_ID}; }}; next;"),
                          owner=owner)
                actions = actions.replace("}; next;", "ct_label.nf = 0; ct_label.nf_id = 0; }; next;")
            table.add(i, stage, 100, match, actions, owner=owner)
        table.add(i, stage, 0, "1", NEXT, owner=owner)
    if nf:
        build_ls_network_function_flows(dp, ctx, table)


def build_ls_acl_stage_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_{in,out}_acl_hint``, ``ls_{in,out}_acl`` and ``ls_in_acl_after_lb`` switch-wide flows."""
    if ctx.profile.has("acl_eval_action"):
        build_ls_acl_eval_stage_flows(dp, ctx, table)
        return
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
    ct_blocked = _add_acl_hints(i, table, owner, ctx)
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


# Behaviour "acl_eval_action": (eval, sample, action) stages replacing ls_in_acl,
# ls_in_acl_after_lb and ls_out_acl.
ACL_TIERS: Final[tuple[tuple[Stage, Stage, Stage], ...]] = (
    (LS_IN_ACL_EVAL, LS_IN_ACL_SAMPLE, LS_IN_ACL_ACTION),
    (LS_IN_ACL_AFTER_LB_EVAL, LS_IN_ACL_AFTER_LB_SAMPLE, LS_IN_ACL_AFTER_LB_ACTION),
    (LS_OUT_ACL_EVAL, LS_OUT_ACL_SAMPLE, LS_OUT_ACL_ACTION),
)
ALLOW_VERDICT: Final = f"{REGBIT_ACL_VERDICT_ALLOW} = 1; "
CLEAR_VERDICT: Final = (
    f"{REGBIT_ACL_VERDICT_ALLOW} = 0; {REGBIT_ACL_VERDICT_DROP} = 0; {REGBIT_ACL_VERDICT_REJECT} = 0; "
)


def build_ls_acl_eval_stage_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Behaviour ``acl_eval_action`` (OVN 25.03): the ACL stages are ``ls_*_acl_eval`` (ACLs set the
    allow / drop / reject verdict bits, reg8[16..18]), ``ls_*_acl_sample`` and ``ls_*_acl_action``
    (acts on the verdict and clears it).  Observed on the reference:

    * every switch: ND/MLD sets the allow bit in the three eval stages (65532); the sample stages
      fall back to ``next;``;
    * neither ACLs nor LB VIPs: ``acl_hint`` and ``acl_eval`` (not after-LB) are skipped at 65535,
      the after-LB eval and the three action stages fall back to ``next;``;
    * otherwise: eval falls back to ``next;`` (0); with ACLs, the action stages act on the verdict
      (1000: allow, drop, reject re-entering at ``ls_out_qos`` / ``ls_in_l2_lkup``) and fall back
      to clearing it (and ``/* drop */`` with ``default_acl_drop``, the priority-1 new-connection
      flow then being a plain ``next;``), with only LB VIPs they fall back to ``next;``;
      service-monitor traffic is allowed (34000);
    * stateful: as before with the allow / drop bits set instead of verdict actions, plus the
      sessions of persist-established ACLs (``ct_mark.allow_established``: reg0[21] ingress).
    """
    owner = dp_owner(dp)
    i = dp.index
    facts = switch_acls(dp, ctx)
    allow_next = ALLOW_VERDICT + NEXT
    commit_new = ctx.profile.has("acl_hint_commits_new")
    nf = f"{REGBIT_NF_ENABLED} = ct_label.nf; " if ctx.profile.has("network_function") else ""
    for ev, sample, _ in ACL_TIERS:
        table.add(i, ev, ACL_CT_PRIORITY, ND_MLD_ACL, allow_next, owner=owner)
        table.add(i, sample, 0, "1", NEXT, owner=owner)
    if not facts.has_acls and not facts.has_lb_vip:
        for stage in (LS_IN_ACL_HINT, LS_IN_ACL_EVAL, LS_OUT_ACL_HINT, LS_OUT_ACL_EVAL):
            table.add(i, stage, MAX_PRIORITY, "1", NEXT, owner=owner)
        table.add(i, LS_IN_ACL_AFTER_LB_EVAL, 0, "1", NEXT, owner=owner)
        for _, _, act in ACL_TIERS:
            table.add(i, act, 0, "1", NEXT, owner=owner)
        return
    for stage in (LS_IN_ACL_HINT, LS_OUT_ACL_HINT):
        table.add(i, stage, 0, "1", NEXT, owner=owner)
    tiers = switch_acl_tiers(dp, ctx)
    for ev, _, act in ACL_TIERS:
        table.add(i, ev, 0, "1", NEXT, owner=owner)
        if not facts.has_acls:
            table.add(i, act, 0, "1", NEXT, owner=owner)
            continue
        top = tiers.get(ev, 0)
        clear = CLEAR_VERDICT + (f"{REG_ACL_TIER} = 0; " if top else "")
        table.add(i, act, 0, "1", clear + ("/* drop */" if ctx.default_acl_drop else NEXT), owner=owner)
        table.add(i, act, 1000, f"{REGBIT_ACL_VERDICT_ALLOW} == 1", clear + NEXT, owner=owner)
        table.add(i, act, 1000, f"{REGBIT_ACL_VERDICT_DROP} == 1", clear + "/* drop */", owner=owner)
        table.add(i, act, 1000, f"{REGBIT_ACL_VERDICT_REJECT} == 1",
                  clear + reject_action(act is not LS_OUT_ACL_ACTION, ctx.profile),
                  controller_meter=copp_meter(dp, ctx, "reject"), owner=owner)
        # Tiers: what no ACL of tier T decided is evaluated again at tier T + 1, up to the top one.
        again = f"next(pipeline={ev.pipeline},table={ctx.profile.table_id(ev)});"
        for t in range(top):
            table.add(i, act, 500, f"{REG_ACL_TIER} == {t}", f"{REG_ACL_TIER} = {t + 1}; {again}", owner=owner)
    table.add(i, LS_IN_ACL_EVAL, SVC_MON_ACL_PRIORITY, SVC_MON_DST, allow_next, owner=owner)
    table.add(i, LS_OUT_ACL_EVAL, SVC_MON_ACL_PRIORITY, SVC_MON_SRC, allow_next, owner=owner)
    if not facts.stateful:
        return
    _add_acl_hints(i, table, owner, ctx)
    inv = "!ct.inv && " if ctx.acl.use_ct_inv_match else ""
    # (enable-stateless-acl-with-lb: ct.inv packets are not dropped, observed)
    blocked = ("ct.inv || (ct.est && ct.rpl && ct_mark.blocked == 1)" if inv and not stateless_acl_with_lb(dp, ctx)
               else "(ct.est && ct.rpl && ct_mark.blocked == 1)")
    reply = f"ct.est && !ct.rel && !ct.new && {inv}ct.rpl && ct_mark.blocked == 0"
    related = f"!ct.est && ct.rel && !ct.new && {inv}ct_mark.blocked == 0"
    if ctx.profile.has("acl_ct_match_v26"):  # 26.03: replies without !ct.new / !ct.inv, related without !ct.inv
        reply = "ct.est && !ct.rel && ct.rpl && ct_mark.blocked == 0"
        related = "!ct.est && ct.rel && !ct.new && ct_mark.blocked == 0"
    established = "ct.est && ct_mark.allow_established == 1"
    rel = f"{REGBIT_ACL_HINT_ALLOW_REL} = 1; "
    clear = f"{REGBIT_ACL_HINT_DROP} = 0; {REGBIT_ACL_HINT_BLOCK} = 0; "
    commit = "" if commit_new else f"{REGBIT_CONNTRACK_COMMIT} = 1; "
    # With default_acl_drop the action stages drop what no ACL allowed.
    new_verdict = NEXT if ctx.default_acl_drop else f"{commit}next;"
    allowed = nf + allow_next  # (network_function: the connection's network function flag comes back)
    for stage, ingress in ((LS_IN_ACL_EVAL, True), (LS_OUT_ACL_EVAL, False)):
        table.add(i, stage, ACL_CT_PRIORITY, blocked, f"{REGBIT_ACL_VERDICT_DROP} = 1; {NEXT}", owner=owner)
        table.add(i, stage, ACL_CT_PRIORITY, reply, f"{clear}{rel}{allowed}" if ingress else allowed,
                  owner=owner)
        table.add(i, stage, ACL_CT_PRIORITY, related,
                  f"{rel}{nf}{ALLOW_VERDICT}ct_commit_nat;" if ingress else f"{nf}{ALLOW_VERDICT}ct_commit_nat;",
                  owner=owner)
        table.add(i, stage, ACL_CT_PRIORITY, established,
                  f"{REGBIT_ACL_HINT_ALLOW_EST} = 1; {allowed}" if ingress else allowed, owner=owner)
        table.add(i, stage, 1, "ip && !ct.est", new_verdict, owner=owner)
        table.add(i, stage, 1, "ip && ct.est && ct_mark.blocked == 1", f"{commit}{allow_next}", owner=owner)
    for bit in (REGBIT_ACL_HINT_ALLOW_REL, REGBIT_ACL_HINT_ALLOW_EST):
        table.add(i, LS_IN_ACL_AFTER_LB_EVAL, ACL_CT_PRIORITY, f"{bit} == 1", allow_next, owner=owner)


def _service_reply_actions(dp: Datapath, ctx: FlowCtx, dns: bool = False) -> str:
    commit = "ct_commit; " if switch_acls(dp, ctx).stateful else ""
    if ctx.profile.has("acl_eval_action"):  # 25.03: the allow bit; only DNS commits (stateful)
        return ALLOW_VERDICT + (commit if dns else "") + NEXT
    return commit + NEXT


def _service_reply_stage(ctx: FlowCtx) -> Stage:
    return LS_OUT_ACL_EVAL if ctx.profile.has("acl_eval_action") else LS_OUT_ACL


def build_ls_dns_reply_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_out_acl`` 34000: DNS replies from ovn-controller, on a switch with DNS records."""
    if switch_has_dns_records(dp):
        # 25.03 matches only the replies ovn-controller injects.
        match = "flags.from_ctrl && udp.src == 53" if ctx.profile.has("acl_eval_action") else "udp.src == 53"
        table.add(dp.index, _service_reply_stage(ctx), SVC_MON_ACL_PRIORITY, match,
                  _service_reply_actions(dp, ctx, dns=True), owner=dp_owner(dp))


def build_lsp_dhcp_reply_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """``ls_out_acl`` 34000: DHCPv4/DHCPv6 replies from ovn-controller to one switch port."""
    if port.kind != "lsp" or port.sb_type == "external":
        return
    if not port.enabled and ctx.profile.has("acl_eval_action"):  # 25.03: not for disabled ports
        return
    if switch_relays_dhcp(port.dp, ctx):
        return
    if port.is_router_lsp and ctx.profile.has("dhcp_reply_needs_address"):  # 25.03: nor router-type ones
        return
    stage = _service_reply_stage(ctx)
    v4, v6 = opt(port.nb.dhcpv4_options), opt(port.nb.dhcpv6_options)
    if ctx.profile.has("dhcp_reply_needs_address"):
        v4, v6 = _served_dhcp_rows(port, v4, v6)
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
            table.add(port.dp.index, stage, SVC_MON_ACL_PRIORITY, match, actions, hint=hint(str(v4.uuid)),
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
            table.add(port.dp.index, stage, SVC_MON_ACL_PRIORITY, match, actions, hint=hint(str(v6.uuid)),
                      owner=owner, io_port=port.name)


def _served_dhcp_rows(port: Port, v4: Any, v6: Any) -> tuple[Any, Any]:
    """Behaviour ``dhcp_reply_needs_address`` (25.03): a DHCP_Options row counts only when the port
    has an address in its cidr (and, for DHCPv4, the row is usable: :func:`.ls_dhcp.dhcp4_config`)."""
    entries = lsp_addresses(port)
    if v4 is not None:
        cfg4 = dhcp4_config(v4, port)
        if cfg4 is None or not any(cfg4.cidr.contains(n.addr) for e in entries for n in e.ipv4):
            v4 = None
    if v6 is not None:
        cfg6 = dhcp6_config(v6)
        if cfg6 is None or not any(cfg6.cidr.contains(n.addr) for e in entries for n in e.ipv6):
            v6 = None
    return v4, v6


def build_ls_acl_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Every switch-wide flow of the conntrack/ACL stages of switch ``dp``."""
    ctx.acl.dp_facts[dp.key] = switch_acls(dp, ctx)
    build_ls_pre_acl_flows(dp, ctx, table)
    build_ls_pre_lb_flows(dp, ctx, table)
    build_ls_pre_stateful_flows(dp, ctx, table)
    build_ls_acl_stage_flows(dp, ctx, table)
    build_ls_dns_reply_flows(dp, ctx, table)
