"""The logical-flow stage table of OVN 23.03, as data.

Every stage of the logical switch (``ls_*``) and logical router (``lr_*``) pipelines,
with the table id and the ``stage-name`` string the reference ovn-northd writes into
``Logical_Flow.external_ids``.  Numbering and names were read from the reference's
own output (Debian 12's ovn-northd 23.03 over a NB with switches, routers, a gateway
router, NAT and load balancers) and cross-checked against ``man ovn-northd``.

Table ids count from 0 separately in each (datapath type, pipeline); they are the
``Logical_Flow.table_id`` values, not OpenFlow table numbers.  Every stage gets at least
a priority-0 flow from the reference, so its output covers the whole table: 27 switch
ingress, 10 switch egress, 22 router ingress and 7 router egress stages, numbered
without gaps.  (The man page's headings are not a reliable source of names: switch
egress table 3 is headed "from-lport ACL hints", and ingress table 8, "ACLs before LB",
is ``ls_in_acl``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DpType = Literal["ls", "lr"]
Pipeline = Literal["ingress", "egress"]

DP_TYPES: tuple[DpType, ...] = ("ls", "lr")
PIPELINES: tuple[Pipeline, ...] = ("ingress", "egress")

_PIPELINE_ABBREV: dict[str, str] = {"ingress": "in", "egress": "out"}


@dataclass(frozen=True, slots=True)
class Stage:
    """One table of one logical pipeline."""

    name: str  # the exact external_ids:stage-name, e.g. "ls_in_check_port_sec"
    dp_type: DpType
    pipeline: Pipeline
    table_id: int

    @property
    def prefix(self) -> str:
        """``ls_in``, ``ls_out``, ``lr_in`` or ``lr_out``."""
        return f"{self.dp_type}_{_PIPELINE_ABBREV[self.pipeline]}"

    @property
    def short_name(self) -> str:
        """The name without its prefix, e.g. ``check_port_sec``."""
        return self.name[len(self.prefix) + 1 :]

    def __str__(self) -> str:
        return self.name


# Logical switch ingress.
LS_IN_CHECK_PORT_SEC = Stage("ls_in_check_port_sec", "ls", "ingress", 0)
LS_IN_APPLY_PORT_SEC = Stage("ls_in_apply_port_sec", "ls", "ingress", 1)
LS_IN_LOOKUP_FDB = Stage("ls_in_lookup_fdb", "ls", "ingress", 2)
LS_IN_PUT_FDB = Stage("ls_in_put_fdb", "ls", "ingress", 3)
LS_IN_PRE_ACL = Stage("ls_in_pre_acl", "ls", "ingress", 4)
LS_IN_PRE_LB = Stage("ls_in_pre_lb", "ls", "ingress", 5)
LS_IN_PRE_STATEFUL = Stage("ls_in_pre_stateful", "ls", "ingress", 6)
LS_IN_ACL_HINT = Stage("ls_in_acl_hint", "ls", "ingress", 7)
LS_IN_ACL = Stage("ls_in_acl", "ls", "ingress", 8)
LS_IN_QOS_MARK = Stage("ls_in_qos_mark", "ls", "ingress", 9)
LS_IN_QOS_METER = Stage("ls_in_qos_meter", "ls", "ingress", 10)
LS_IN_LB_AFF_CHECK = Stage("ls_in_lb_aff_check", "ls", "ingress", 11)
LS_IN_LB = Stage("ls_in_lb", "ls", "ingress", 12)
LS_IN_LB_AFF_LEARN = Stage("ls_in_lb_aff_learn", "ls", "ingress", 13)
LS_IN_PRE_HAIRPIN = Stage("ls_in_pre_hairpin", "ls", "ingress", 14)
LS_IN_NAT_HAIRPIN = Stage("ls_in_nat_hairpin", "ls", "ingress", 15)
LS_IN_HAIRPIN = Stage("ls_in_hairpin", "ls", "ingress", 16)
LS_IN_ACL_AFTER_LB = Stage("ls_in_acl_after_lb", "ls", "ingress", 17)
LS_IN_STATEFUL = Stage("ls_in_stateful", "ls", "ingress", 18)
LS_IN_ARP_RSP = Stage("ls_in_arp_rsp", "ls", "ingress", 19)
LS_IN_DHCP_OPTIONS = Stage("ls_in_dhcp_options", "ls", "ingress", 20)
LS_IN_DHCP_RESPONSE = Stage("ls_in_dhcp_response", "ls", "ingress", 21)
LS_IN_DNS_LOOKUP = Stage("ls_in_dns_lookup", "ls", "ingress", 22)
LS_IN_DNS_RESPONSE = Stage("ls_in_dns_response", "ls", "ingress", 23)
LS_IN_EXTERNAL_PORT = Stage("ls_in_external_port", "ls", "ingress", 24)
LS_IN_L2_LKUP = Stage("ls_in_l2_lkup", "ls", "ingress", 25)
LS_IN_L2_UNKNOWN = Stage("ls_in_l2_unknown", "ls", "ingress", 26)

# Logical switch egress.
LS_OUT_PRE_ACL = Stage("ls_out_pre_acl", "ls", "egress", 0)
LS_OUT_PRE_LB = Stage("ls_out_pre_lb", "ls", "egress", 1)
LS_OUT_PRE_STATEFUL = Stage("ls_out_pre_stateful", "ls", "egress", 2)
LS_OUT_ACL_HINT = Stage("ls_out_acl_hint", "ls", "egress", 3)
LS_OUT_ACL = Stage("ls_out_acl", "ls", "egress", 4)
LS_OUT_QOS_MARK = Stage("ls_out_qos_mark", "ls", "egress", 5)
LS_OUT_QOS_METER = Stage("ls_out_qos_meter", "ls", "egress", 6)
LS_OUT_STATEFUL = Stage("ls_out_stateful", "ls", "egress", 7)
LS_OUT_CHECK_PORT_SEC = Stage("ls_out_check_port_sec", "ls", "egress", 8)
LS_OUT_APPLY_PORT_SEC = Stage("ls_out_apply_port_sec", "ls", "egress", 9)

# Logical router ingress.
LR_IN_ADMISSION = Stage("lr_in_admission", "lr", "ingress", 0)
LR_IN_LOOKUP_NEIGHBOR = Stage("lr_in_lookup_neighbor", "lr", "ingress", 1)
LR_IN_LEARN_NEIGHBOR = Stage("lr_in_learn_neighbor", "lr", "ingress", 2)
LR_IN_IP_INPUT = Stage("lr_in_ip_input", "lr", "ingress", 3)
LR_IN_UNSNAT = Stage("lr_in_unsnat", "lr", "ingress", 4)
LR_IN_DEFRAG = Stage("lr_in_defrag", "lr", "ingress", 5)
LR_IN_LB_AFF_CHECK = Stage("lr_in_lb_aff_check", "lr", "ingress", 6)
LR_IN_DNAT = Stage("lr_in_dnat", "lr", "ingress", 7)
LR_IN_LB_AFF_LEARN = Stage("lr_in_lb_aff_learn", "lr", "ingress", 8)
LR_IN_ECMP_STATEFUL = Stage("lr_in_ecmp_stateful", "lr", "ingress", 9)
LR_IN_ND_RA_OPTIONS = Stage("lr_in_nd_ra_options", "lr", "ingress", 10)
LR_IN_ND_RA_RESPONSE = Stage("lr_in_nd_ra_response", "lr", "ingress", 11)
LR_IN_IP_ROUTING_PRE = Stage("lr_in_ip_routing_pre", "lr", "ingress", 12)
LR_IN_IP_ROUTING = Stage("lr_in_ip_routing", "lr", "ingress", 13)
LR_IN_IP_ROUTING_ECMP = Stage("lr_in_ip_routing_ecmp", "lr", "ingress", 14)
LR_IN_POLICY = Stage("lr_in_policy", "lr", "ingress", 15)
LR_IN_POLICY_ECMP = Stage("lr_in_policy_ecmp", "lr", "ingress", 16)
LR_IN_ARP_RESOLVE = Stage("lr_in_arp_resolve", "lr", "ingress", 17)
LR_IN_CHK_PKT_LEN = Stage("lr_in_chk_pkt_len", "lr", "ingress", 18)
LR_IN_LARGER_PKTS = Stage("lr_in_larger_pkts", "lr", "ingress", 19)
LR_IN_GW_REDIRECT = Stage("lr_in_gw_redirect", "lr", "ingress", 20)
LR_IN_ARP_REQUEST = Stage("lr_in_arp_request", "lr", "ingress", 21)

# Logical router egress.
LR_OUT_CHK_DNAT_LOCAL = Stage("lr_out_chk_dnat_local", "lr", "egress", 0)
LR_OUT_UNDNAT = Stage("lr_out_undnat", "lr", "egress", 1)
LR_OUT_POST_UNDNAT = Stage("lr_out_post_undnat", "lr", "egress", 2)
LR_OUT_SNAT = Stage("lr_out_snat", "lr", "egress", 3)
LR_OUT_POST_SNAT = Stage("lr_out_post_snat", "lr", "egress", 4)
LR_OUT_EGR_LOOP = Stage("lr_out_egr_loop", "lr", "egress", 5)
LR_OUT_DELIVERY = Stage("lr_out_delivery", "lr", "egress", 6)


def _table_id(stage: Stage) -> int:
    return stage.table_id


ALL_STAGES: tuple[Stage, ...] = tuple(v for v in tuple(globals().values()) if isinstance(v, Stage))

STAGES_BY_NAME: dict[str, Stage] = {s.name: s for s in ALL_STAGES}

STAGES: dict[tuple[DpType, Pipeline], tuple[Stage, ...]] = {
    (dp, pl): tuple(sorted((s for s in ALL_STAGES if s.dp_type == dp and s.pipeline == pl), key=_table_id))
    for dp in DP_TYPES
    for pl in PIPELINES
}

LS_INGRESS_STAGES = STAGES["ls", "ingress"]
LS_EGRESS_STAGES = STAGES["ls", "egress"]
LR_INGRESS_STAGES = STAGES["lr", "ingress"]
LR_EGRESS_STAGES = STAGES["lr", "egress"]


def stage_by_name(name: str) -> Stage:
    """The stage called ``name`` (a ``stage-name`` value); KeyError if unknown."""
    return STAGES_BY_NAME[name]


def stages_for(dp_type: DpType, pipeline: Pipeline) -> tuple[Stage, ...]:
    """The stages of one pipeline in table order (index == table_id)."""
    return STAGES[dp_type, pipeline]


def stage_at(dp_type: DpType, pipeline: Pipeline, table_id: int) -> Stage:
    """The stage at ``table_id`` of one pipeline; IndexError if out of range."""
    if table_id < 0:
        raise IndexError(table_id)
    return STAGES[dp_type, pipeline][table_id]
