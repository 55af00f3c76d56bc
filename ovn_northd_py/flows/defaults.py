"""The lowest-priority fallback flows of every stage.

Most stages end with a priority-0 ``match=1`` flow whose action is ``next;``; the
ones below differ (all observed on the reference, checked against ``man ovn-northd``):

* switch: ``ls_in_check_port_sec`` has no priority-0 flow (its fallback is the
  priority-50 port-security check, see :mod:`.ls_port_security`);
  ``ls_in_l2_lkup`` falls back to the MAC learning table, ``ls_in_l2_unknown``,
  ``ls_out_apply_port_sec`` output, ``ls_out_check_port_sec`` checks egress port
  security;
* switch ACL stages: a switch with neither ACLs (its own or through a Port_Group
  holding one of its ports) nor a load balancer with VIPs skips ``acl_hint`` and
  ``acl`` with priority-65535 flows instead; otherwise they fall back at
  priority 0, with ``drop;`` in ``acl``/``acl_after_lb`` when the switch has
  ACLs and NB_Global ``options:default_acl_drop`` is true;
* router: several stages drop or reset a register; ``lr_out_delivery`` has its
  priority-0 drop only on a router with at least one enabled port.
"""

from __future__ import annotations

from typing import Any, Final

from ..lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_REQUEST,
    LR_IN_ARP_RESOLVE,
    LR_IN_CHK_PKT_LEN,
    LR_IN_DEFRAG,
    LR_IN_DNAT,
    LR_IN_ECMP_STATEFUL,
    LR_IN_GW_REDIRECT,
    LR_IN_IP_INPUT,
    LR_IN_IP_ROUTING,
    LR_IN_IP_ROUTING_ECMP,
    LR_IN_IP_ROUTING_PRE,
    LR_IN_LARGER_PKTS,
    LR_IN_LB_AFF_CHECK,
    LR_IN_LB_AFF_LEARN,
    LR_IN_LEARN_NEIGHBOR,
    LR_IN_LOOKUP_NEIGHBOR,
    LR_IN_ND_RA_OPTIONS,
    LR_IN_ND_RA_RESPONSE,
    LR_IN_POLICY,
    LR_IN_POLICY_ECMP,
    LR_IN_UNSNAT,
    LR_OUT_CHK_DNAT_LOCAL,
    LR_OUT_DELIVERY,
    LR_OUT_EGR_LOOP,
    LR_OUT_POST_SNAT,
    LR_OUT_POST_UNDNAT,
    LR_OUT_SNAT,
    LR_OUT_UNDNAT,
    LS_IN_ACL,
    LS_IN_ACL_AFTER_LB,
    LS_IN_ACL_HINT,
    LS_IN_APPLY_PORT_SEC,
    LS_IN_ARP_RSP,
    LS_IN_DHCP_OPTIONS,
    LS_IN_DHCP_RESPONSE,
    LS_IN_DNS_LOOKUP,
    LS_IN_DNS_RESPONSE,
    LS_IN_EXTERNAL_PORT,
    LS_IN_HAIRPIN,
    LS_IN_L2_LKUP,
    LS_IN_L2_UNKNOWN,
    LS_IN_LB,
    LS_IN_LB_AFF_CHECK,
    LS_IN_LB_AFF_LEARN,
    LS_IN_LOOKUP_FDB,
    LS_IN_NAT_HAIRPIN,
    LS_IN_PRE_ACL,
    LS_IN_PRE_HAIRPIN,
    LS_IN_PRE_LB,
    LS_IN_PRE_STATEFUL,
    LS_IN_PUT_FDB,
    LS_IN_QOS_MARK,
    LS_IN_QOS_METER,
    LS_IN_STATEFUL,
    LS_OUT_ACL,
    LS_OUT_ACL_HINT,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_CHECK_PORT_SEC,
    LS_OUT_PRE_ACL,
    LS_OUT_PRE_LB,
    LS_OUT_PRE_STATEFUL,
    LS_OUT_QOS_MARK,
    LS_OUT_QOS_METER,
    LS_OUT_STATEFUL,
    Stage,
)
from ..lflow.table import MAX_PRIORITY, FlowTable
from ..northd.model import Datapath, Port
from .context import FlowCtx, dp_owner, port_owner
from .registers import REGBIT_PORT_SEC_DROP

NEXT: Final = "next;"
DROP: Final = "drop;"

# Switch stages whose priority-0 flow does not depend on anything.
LS_FALLBACKS: Final[tuple[tuple[Stage, str], ...]] = (
    (LS_IN_APPLY_PORT_SEC, NEXT),
    (LS_IN_LOOKUP_FDB, NEXT),
    (LS_IN_PUT_FDB, NEXT),
    (LS_IN_PRE_ACL, NEXT),
    (LS_IN_PRE_LB, NEXT),
    (LS_IN_PRE_STATEFUL, NEXT),
    (LS_IN_QOS_MARK, NEXT),
    (LS_IN_QOS_METER, NEXT),
    (LS_IN_LB_AFF_CHECK, NEXT),
    (LS_IN_LB, NEXT),
    (LS_IN_LB_AFF_LEARN, NEXT),
    (LS_IN_PRE_HAIRPIN, NEXT),
    (LS_IN_NAT_HAIRPIN, NEXT),
    (LS_IN_HAIRPIN, NEXT),
    (LS_IN_STATEFUL, NEXT),
    (LS_IN_ARP_RSP, NEXT),
    (LS_IN_DHCP_OPTIONS, NEXT),
    (LS_IN_DHCP_RESPONSE, NEXT),
    (LS_IN_DNS_LOOKUP, NEXT),
    (LS_IN_DNS_RESPONSE, NEXT),
    (LS_IN_EXTERNAL_PORT, NEXT),
    (LS_IN_L2_LKUP, "outport = get_fdb(eth.dst); next;"),
    (LS_IN_L2_UNKNOWN, "output;"),
    (LS_OUT_PRE_ACL, NEXT),
    (LS_OUT_PRE_LB, NEXT),
    (LS_OUT_PRE_STATEFUL, NEXT),
    (LS_OUT_QOS_MARK, NEXT),
    (LS_OUT_QOS_METER, NEXT),
    (LS_OUT_STATEFUL, NEXT),
    (LS_OUT_CHECK_PORT_SEC, f"{REGBIT_PORT_SEC_DROP} = check_out_port_sec(); next;"),
    (LS_OUT_APPLY_PORT_SEC, "output;"),
)

# Router stages whose priority-0 flow does not depend on anything.
LR_FALLBACKS: Final[tuple[tuple[Stage, str], ...]] = (
    (LR_IN_ADMISSION, DROP),
    (LR_IN_LOOKUP_NEIGHBOR, "reg9[2] = 1; next;"),
    (LR_IN_LEARN_NEIGHBOR, DROP),
    (LR_IN_IP_INPUT, NEXT),
    (LR_IN_UNSNAT, NEXT),
    (LR_IN_DEFRAG, NEXT),
    (LR_IN_LB_AFF_CHECK, NEXT),
    (LR_IN_DNAT, NEXT),
    (LR_IN_LB_AFF_LEARN, NEXT),
    (LR_IN_ECMP_STATEFUL, NEXT),
    (LR_IN_ND_RA_OPTIONS, NEXT),
    (LR_IN_ND_RA_RESPONSE, NEXT),
    (LR_IN_IP_ROUTING_PRE, "reg7 = 0; next;"),
    (LR_IN_IP_ROUTING, DROP),
    (LR_IN_IP_ROUTING_ECMP, DROP),
    (LR_IN_POLICY, "reg8[0..15] = 0; next;"),
    (LR_IN_POLICY_ECMP, DROP),
    (LR_IN_ARP_RESOLVE, DROP),
    (LR_IN_CHK_PKT_LEN, NEXT),
    (LR_IN_LARGER_PKTS, NEXT),
    (LR_IN_GW_REDIRECT, NEXT),
    (LR_IN_ARP_REQUEST, "output;"),
    (LR_OUT_CHK_DNAT_LOCAL, "reg9[4] = 0; next;"),
    (LR_OUT_UNDNAT, NEXT),
    (LR_OUT_POST_UNDNAT, NEXT),
    (LR_OUT_SNAT, NEXT),
    (LR_OUT_POST_SNAT, NEXT),
    (LR_OUT_EGR_LOOP, NEXT),
)

ACL_SKIP_STAGES: Final[tuple[Stage, ...]] = (LS_IN_ACL_HINT, LS_IN_ACL, LS_OUT_ACL_HINT, LS_OUT_ACL)


def build_ls_default_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The fallback flows of a switch's stages (ACL stages: :func:`build_ls_acl_default_flows`)."""
    owner = dp_owner(dp)
    for stage, actions in LS_FALLBACKS:
        table.add(dp.index, stage, 0, "1", actions, owner=owner)
    build_ls_acl_default_flows(dp, ctx, table)


def _lbs_have_vips(lbs: Any) -> bool:
    return any(lb.vips for lb in lbs)


def ls_has_lb_vips(dp: Datapath) -> bool:
    """A load balancer with VIPs is attached to the switch, directly or through a group."""
    nb = dp.nb
    return _lbs_have_vips(nb.load_balancer) or any(
        _lbs_have_vips(g.load_balancer) for g in nb.load_balancer_group
    )


def ls_has_acls(dp: Datapath, ctx: FlowCtx) -> bool:
    """The switch has ACLs of its own or a port in a Port_Group with ACLs."""
    return bool(dp.nb.acls) or dp.key in ctx.pg_acl_switches


def build_ls_acl_default_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Fallbacks of ``acl_hint``, ``acl`` (both pipelines) and ``acl_after_lb``."""
    owner = dp_owner(dp)
    has_acls = ls_has_acls(dp, ctx)
    if not has_acls and not ls_has_lb_vips(dp):
        for stage in ACL_SKIP_STAGES:
            table.add(dp.index, stage, MAX_PRIORITY, "1", NEXT, owner=owner)
        table.add(dp.index, LS_IN_ACL_AFTER_LB, 0, "1", NEXT, owner=owner)
        return
    verdict = DROP if has_acls and ctx.default_acl_drop else NEXT
    table.add(dp.index, LS_IN_ACL_HINT, 0, "1", NEXT, owner=owner)
    table.add(dp.index, LS_OUT_ACL_HINT, 0, "1", NEXT, owner=owner)
    for stage in (LS_IN_ACL, LS_OUT_ACL, LS_IN_ACL_AFTER_LB):
        table.add(dp.index, stage, 0, "1", verdict, owner=owner)


def build_lr_default_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The priority-0 flows of a router's stages (``lr_out_delivery``: :func:`build_lrp_default_flows`)."""
    owner = dp_owner(dp)
    for stage, actions in LR_FALLBACKS:
        table.add(dp.index, stage, 0, "1", actions, owner=owner)


def build_lrp_default_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """``lr_out_delivery``'s priority-0 drop, which a router has only while one of its ports is enabled.

    Each enabled router port holds a reference to it, so the flow goes with the last one.
    """
    if port.kind == "lrp" and port.enabled:
        table.add(port.dp.index, LR_OUT_DELIVERY, 0, "1", DROP, owner=port_owner(port))
