"""The lowest-priority fallback flows of every stage.

Most stages end with a priority-0 ``match=1`` flow whose action is ``next;``; the
ones below differ (all observed on the reference, checked against ``man ovn-northd``):

* switch: ``ls_in_check_port_sec`` has no priority-0 flow (its fallback is the
  priority-50 port-security check, see :mod:`.ls_port_security`);
  ``ls_in_l2_lkup`` falls back to the MAC learning table, ``ls_in_l2_unknown``,
  ``ls_out_apply_port_sec`` output, ``ls_out_check_port_sec`` checks egress port
  security;
* switch conntrack/ACL stages (pre-ACL, pre-LB, pre-stateful, ACL hints, ACLs,
  ACLs after LB, stateful): their fallbacks depend on the switch's ACLs and load
  balancers and are built with the stages' other flows, in :mod:`.ls_acl`;
* router: several stages drop or reset a register; ``lr_out_delivery`` has its
  priority-0 drop only on a router with at least one enabled port.
"""

from __future__ import annotations

from typing import Final

from ..lflow.stages import (
    LR_IN_ADMISSION,
    LR_IN_ARP_REQUEST,
    LR_IN_ARP_RESOLVE,
    LR_IN_CHK_PKT_LEN,
    LR_IN_CT_EXTRACT,
    LR_IN_DEFRAG,
    LR_IN_DHCP_RELAY_REQ,
    LR_IN_DHCP_RELAY_RESP,
    LR_IN_DHCP_RELAY_RESP_CHK,
    LR_IN_DNAT,
    LR_IN_ECMP_STATEFUL,
    LR_IN_ECMP_STATEFUL_EGR,
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
    LR_IN_NETWORK_ID,
    LR_IN_POLICY,
    LR_IN_POLICY_ECMP,
    LR_IN_POST_UNSNAT,
    LR_IN_UNSNAT,
    LR_OUT_CHK_DNAT_LOCAL,
    LR_OUT_DELIVERY,
    LR_OUT_EGR_LOOP,
    LR_OUT_POST_SNAT,
    LR_OUT_POST_UNDNAT,
    LR_OUT_SNAT,
    LR_OUT_UNDNAT,
    LS_IN_APPLY_PORT_SEC,
    LS_IN_ARP_RSP,
    LS_IN_CT_EXTRACT,
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
    LS_IN_MIRROR,
    LS_IN_NAT_HAIRPIN,
    LS_IN_PRE_HAIRPIN,
    LS_IN_PUT_FDB,
    LS_IN_QOS,
    LS_IN_QOS_MARK,
    LS_IN_QOS_METER,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_CHECK_PORT_SEC,
    LS_OUT_LOOKUP_FDB,
    LS_OUT_MIRROR,
    LS_OUT_PUT_FDB,
    LS_OUT_QOS,
    LS_OUT_QOS_MARK,
    LS_OUT_QOS_METER,
    Stage,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Port
from .context import FlowCtx
from .ls_evpn import evpn_vni
from .owners import dp_owner, port_owner
from .registers import (
    REG_ECMP_GROUP_ID,
    REG_ROUTE_TABLE_ID,
    REGBIT_DST_NAT_IP_LOCAL,
    REGBIT_LOOKUP_NEIGHBOR_RESULT,
    REGBIT_PORT_SEC_DROP,
)

NEXT: Final = "next;"
DROP: Final = "drop;"

# Switch stages whose priority-0 flow does not depend on anything.
LS_FALLBACKS: Final[tuple[tuple[Stage, str], ...]] = (
    (LS_IN_APPLY_PORT_SEC, NEXT),
    (LS_IN_LOOKUP_FDB, NEXT),
    (LS_IN_PUT_FDB, NEXT),
    (LS_IN_QOS_MARK, NEXT),
    (LS_IN_QOS_METER, NEXT),
    (LS_IN_LB_AFF_CHECK, NEXT),
    (LS_IN_LB, NEXT),
    (LS_IN_LB_AFF_LEARN, NEXT),
    (LS_IN_PRE_HAIRPIN, NEXT),
    (LS_IN_NAT_HAIRPIN, NEXT),
    (LS_IN_HAIRPIN, NEXT),
    (LS_IN_ARP_RSP, NEXT),
    (LS_IN_DHCP_OPTIONS, NEXT),
    (LS_IN_DHCP_RESPONSE, NEXT),
    (LS_IN_DNS_LOOKUP, NEXT),
    (LS_IN_DNS_RESPONSE, NEXT),
    (LS_IN_EXTERNAL_PORT, NEXT),
    (LS_IN_L2_LKUP, "outport = get_fdb(eth.dst); next;"),
    (LS_IN_L2_UNKNOWN, "output;"),
    (LS_OUT_QOS_MARK, NEXT),
    (LS_OUT_QOS_METER, NEXT),
    (LS_OUT_CHECK_PORT_SEC, f"{REGBIT_PORT_SEC_DROP} = check_out_port_sec(); next;"),
    (LS_OUT_APPLY_PORT_SEC, "output;"),
)

# Router stages whose priority-0 flow does not depend on anything.
LR_FALLBACKS: Final[tuple[tuple[Stage, str], ...]] = (
    (LR_IN_ADMISSION, DROP),
    (LR_IN_LOOKUP_NEIGHBOR, f"{REGBIT_LOOKUP_NEIGHBOR_RESULT} = 1; next;"),
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
    (LR_IN_IP_ROUTING_PRE, f"{REG_ROUTE_TABLE_ID} = 0; next;"),
    (LR_IN_IP_ROUTING, DROP),
    (LR_IN_IP_ROUTING_ECMP, DROP),
    (LR_IN_POLICY, f"{REG_ECMP_GROUP_ID} = 0; next;"),
    (LR_IN_POLICY_ECMP, DROP),
    (LR_IN_ARP_RESOLVE, DROP),
    (LR_IN_CHK_PKT_LEN, NEXT),
    (LR_IN_LARGER_PKTS, NEXT),
    (LR_IN_GW_REDIRECT, NEXT),
    (LR_IN_ARP_REQUEST, "output;"),
    (LR_OUT_CHK_DNAT_LOCAL, f"{REGBIT_DST_NAT_IP_LOCAL} = 0; next;"),
    (LR_OUT_UNDNAT, NEXT),
    (LR_OUT_POST_UNDNAT, NEXT),
    (LR_OUT_SNAT, NEXT),
    (LR_OUT_POST_SNAT, NEXT),
    (LR_OUT_EGR_LOOP, NEXT),
)

# Router stages only some releases have (25.03's DHCP relay and post-unSNAT stages), each with a
# priority-0 ``next;`` where the release being served has the stage.
LR_OPTIONAL_FALLBACKS: Final[tuple[tuple[Stage, str], ...]] = (
    (LR_IN_DHCP_RELAY_REQ, NEXT),
    (LR_IN_POST_UNSNAT, NEXT),
    (LR_IN_DHCP_RELAY_RESP_CHK, NEXT),
    (LR_IN_DHCP_RELAY_RESP, NEXT),
)
# Stages only some releases have (26.03's mirror and conntrack-extraction stages), each with a
# priority-0 ``next;`` where the release being served has the stage.
LS_OPTIONAL_FALLBACKS: Final[tuple[tuple[Stage, str], ...]] = (
    (LS_IN_MIRROR, NEXT),
    (LS_OUT_MIRROR, NEXT),
    (LS_IN_CT_EXTRACT, NEXT),
)
# 26.03: lr_in_ecmp_stateful_egr, the last ingress stage, outputs (lr_in_arp_request goes on to it).
LR_OPTIONAL_FALLBACKS_2603: Final[tuple[tuple[Stage, str], ...]] = (
    (LR_IN_CT_EXTRACT, NEXT),
    (LR_IN_NETWORK_ID, NEXT),
    (LR_IN_ECMP_STATEFUL_EGR, "output;"),
)
# Behaviour "ls_qos_merged" (25.03): one QoS stage per pipeline instead of mark + meter.
QOS_MARK_METER: Final = frozenset({LS_IN_QOS_MARK, LS_IN_QOS_METER, LS_OUT_QOS_MARK, LS_OUT_QOS_METER})
QOS_MERGED: Final[tuple[tuple[Stage, str], ...]] = ((LS_IN_QOS, NEXT), (LS_OUT_QOS, NEXT))
# Behaviour "ls_egress_fdb" (25.03): the egress MAC learning stages.
EGRESS_FDB: Final[tuple[tuple[Stage, str], ...]] = ((LS_OUT_LOOKUP_FDB, NEXT), (LS_OUT_PUT_FDB, NEXT))


def build_ls_default_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The fallback flows of a switch's stages (conntrack/ACL stages: :mod:`.ls_acl`)."""
    owner = dp_owner(dp)
    merged = ctx.profile.has("ls_qos_merged")
    evpn = evpn_vni(dp, ctx) is not None  # (26.03's EVPN switches: their own lookup, flows/ls_evpn.py)
    for stage, actions in LS_FALLBACKS:
        if not (merged and stage in QOS_MARK_METER) and not (evpn and stage in (LS_IN_L2_LKUP, LS_IN_L2_UNKNOWN)):
            table.add(dp.index, stage, 0, "1", actions, owner=owner)
    extra = (QOS_MERGED if merged else ()) + (EGRESS_FDB if ctx.profile.has("ls_egress_fdb") else ())
    for stage, actions in extra:
        table.add(dp.index, stage, 0, "1", actions, owner=owner)
    for stage, actions in LS_OPTIONAL_FALLBACKS:
        if ctx.profile.has_stage(stage):
            table.add(dp.index, stage, 0, "1", actions, owner=owner)


def build_lr_default_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The priority-0 flows of a router's stages (``lr_out_delivery``: :func:`build_lrp_default_flows`)."""
    owner = dp_owner(dp)
    then_next = ctx.profile.has("arp_request_then_next")  # 26.03: lr_in_arp_request goes on
    for stage, actions in LR_FALLBACKS:
        if then_next and stage is LR_IN_ARP_REQUEST:
            actions = NEXT
        table.add(dp.index, stage, 0, "1", actions, owner=owner)
    for stage, actions in LR_OPTIONAL_FALLBACKS + LR_OPTIONAL_FALLBACKS_2603:
        if ctx.profile.has_stage(stage):
            table.add(dp.index, stage, 0, "1", actions, owner=owner)
    if ctx.profile.has("lr_delivery_default"):  # 25.03: with or without enabled ports
        table.add(dp.index, LR_OUT_DELIVERY, 0, "1", DROP, owner=owner)


def build_lrp_default_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """``lr_out_delivery``'s priority-0 drop, which a router has only while one of its ports is enabled.

    Each enabled router port holds a reference to it, so the flow goes with the last one.
    """
    if port.kind == "lrp" and port.enabled and not ctx.profile.has("lr_delivery_default"):
        table.add(port.dp.index, LR_OUT_DELIVERY, 0, "1", DROP, owner=port_owner(port))
