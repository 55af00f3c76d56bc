"""The logical-flow stages, as data: every stage any OVN release we serve has.

Every stage of the logical switch (``ls_*``) and logical router (``lr_*``) pipelines,
with the ``stage-name`` string the reference ovn-northd writes into
``Logical_Flow.external_ids``.  Builders name these constants; which stages a release
has and at which ``Logical_Flow.table_id`` each sits is the release's stage table, in
its flow profile (:mod:`.profile`: ``FlowProfile.table_id(stage)``), so that a release
that renumbers or adds stages changes a profile, not the builders.

Names were read from the reference's own output (Debian 12's ovn-northd 23.03 over a
NB with switches, routers, a gateway router, NAT and load balancers) and cross-checked
against ``man ovn-northd``.  (The man page's headings are not a reliable source of
names: switch egress table 3 is headed "from-lport ACL hints", and ingress table 8,
"ACLs before LB", is ``ls_in_acl``.)  The constants below are listed in 23.03's table
order.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

DpType = Literal["ls", "lr"]
Pipeline = Literal["ingress", "egress"]

DP_TYPES: tuple[DpType, ...] = ("ls", "lr")
PIPELINES: tuple[Pipeline, ...] = ("ingress", "egress")

_PIPELINE_ABBREV: Mapping[str, str] = MappingProxyType({"ingress": "in", "egress": "out"})
_next_index = itertools.count().__next__


@dataclass(frozen=True, slots=True)
class Stage:
    """One table of one logical pipeline."""

    name: str  # the exact external_ids:stage-name, e.g. "ls_in_check_port_sec"
    dp_type: DpType
    pipeline: Pipeline
    # Dense, in creation order: where a flow profile keeps this stage's table id (not part of
    # the stage's identity; a profile resolves an equal stage made elsewhere by its name).
    index: int = field(default_factory=_next_index, compare=False, repr=False)

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
LS_IN_CHECK_PORT_SEC = Stage("ls_in_check_port_sec", "ls", "ingress")
LS_IN_APPLY_PORT_SEC = Stage("ls_in_apply_port_sec", "ls", "ingress")
LS_IN_LOOKUP_FDB = Stage("ls_in_lookup_fdb", "ls", "ingress")
LS_IN_PUT_FDB = Stage("ls_in_put_fdb", "ls", "ingress")
LS_IN_PRE_ACL = Stage("ls_in_pre_acl", "ls", "ingress")
LS_IN_PRE_LB = Stage("ls_in_pre_lb", "ls", "ingress")
LS_IN_PRE_STATEFUL = Stage("ls_in_pre_stateful", "ls", "ingress")
LS_IN_ACL_HINT = Stage("ls_in_acl_hint", "ls", "ingress")
LS_IN_ACL = Stage("ls_in_acl", "ls", "ingress")
LS_IN_QOS_MARK = Stage("ls_in_qos_mark", "ls", "ingress")
LS_IN_QOS_METER = Stage("ls_in_qos_meter", "ls", "ingress")
LS_IN_LB_AFF_CHECK = Stage("ls_in_lb_aff_check", "ls", "ingress")
LS_IN_LB = Stage("ls_in_lb", "ls", "ingress")
LS_IN_LB_AFF_LEARN = Stage("ls_in_lb_aff_learn", "ls", "ingress")
LS_IN_PRE_HAIRPIN = Stage("ls_in_pre_hairpin", "ls", "ingress")
LS_IN_NAT_HAIRPIN = Stage("ls_in_nat_hairpin", "ls", "ingress")
LS_IN_HAIRPIN = Stage("ls_in_hairpin", "ls", "ingress")
LS_IN_ACL_AFTER_LB = Stage("ls_in_acl_after_lb", "ls", "ingress")
LS_IN_STATEFUL = Stage("ls_in_stateful", "ls", "ingress")
LS_IN_ARP_RSP = Stage("ls_in_arp_rsp", "ls", "ingress")
LS_IN_DHCP_OPTIONS = Stage("ls_in_dhcp_options", "ls", "ingress")
LS_IN_DHCP_RESPONSE = Stage("ls_in_dhcp_response", "ls", "ingress")
LS_IN_DNS_LOOKUP = Stage("ls_in_dns_lookup", "ls", "ingress")
LS_IN_DNS_RESPONSE = Stage("ls_in_dns_response", "ls", "ingress")
LS_IN_EXTERNAL_PORT = Stage("ls_in_external_port", "ls", "ingress")
LS_IN_L2_LKUP = Stage("ls_in_l2_lkup", "ls", "ingress")
LS_IN_L2_UNKNOWN = Stage("ls_in_l2_unknown", "ls", "ingress")

# Logical switch egress.
LS_OUT_PRE_ACL = Stage("ls_out_pre_acl", "ls", "egress")
LS_OUT_PRE_LB = Stage("ls_out_pre_lb", "ls", "egress")
LS_OUT_PRE_STATEFUL = Stage("ls_out_pre_stateful", "ls", "egress")
LS_OUT_ACL_HINT = Stage("ls_out_acl_hint", "ls", "egress")
LS_OUT_ACL = Stage("ls_out_acl", "ls", "egress")
LS_OUT_QOS_MARK = Stage("ls_out_qos_mark", "ls", "egress")
LS_OUT_QOS_METER = Stage("ls_out_qos_meter", "ls", "egress")
LS_OUT_STATEFUL = Stage("ls_out_stateful", "ls", "egress")
LS_OUT_CHECK_PORT_SEC = Stage("ls_out_check_port_sec", "ls", "egress")
LS_OUT_APPLY_PORT_SEC = Stage("ls_out_apply_port_sec", "ls", "egress")

# Logical router ingress.
LR_IN_ADMISSION = Stage("lr_in_admission", "lr", "ingress")
LR_IN_LOOKUP_NEIGHBOR = Stage("lr_in_lookup_neighbor", "lr", "ingress")
LR_IN_LEARN_NEIGHBOR = Stage("lr_in_learn_neighbor", "lr", "ingress")
LR_IN_IP_INPUT = Stage("lr_in_ip_input", "lr", "ingress")
LR_IN_UNSNAT = Stage("lr_in_unsnat", "lr", "ingress")
LR_IN_DEFRAG = Stage("lr_in_defrag", "lr", "ingress")
LR_IN_LB_AFF_CHECK = Stage("lr_in_lb_aff_check", "lr", "ingress")
LR_IN_DNAT = Stage("lr_in_dnat", "lr", "ingress")
LR_IN_LB_AFF_LEARN = Stage("lr_in_lb_aff_learn", "lr", "ingress")
LR_IN_ECMP_STATEFUL = Stage("lr_in_ecmp_stateful", "lr", "ingress")
LR_IN_ND_RA_OPTIONS = Stage("lr_in_nd_ra_options", "lr", "ingress")
LR_IN_ND_RA_RESPONSE = Stage("lr_in_nd_ra_response", "lr", "ingress")
LR_IN_IP_ROUTING_PRE = Stage("lr_in_ip_routing_pre", "lr", "ingress")
LR_IN_IP_ROUTING = Stage("lr_in_ip_routing", "lr", "ingress")
LR_IN_IP_ROUTING_ECMP = Stage("lr_in_ip_routing_ecmp", "lr", "ingress")
LR_IN_POLICY = Stage("lr_in_policy", "lr", "ingress")
LR_IN_POLICY_ECMP = Stage("lr_in_policy_ecmp", "lr", "ingress")
LR_IN_ARP_RESOLVE = Stage("lr_in_arp_resolve", "lr", "ingress")
LR_IN_CHK_PKT_LEN = Stage("lr_in_chk_pkt_len", "lr", "ingress")
LR_IN_LARGER_PKTS = Stage("lr_in_larger_pkts", "lr", "ingress")
LR_IN_GW_REDIRECT = Stage("lr_in_gw_redirect", "lr", "ingress")
LR_IN_ARP_REQUEST = Stage("lr_in_arp_request", "lr", "ingress")

# Logical router egress.
LR_OUT_CHK_DNAT_LOCAL = Stage("lr_out_chk_dnat_local", "lr", "egress")
LR_OUT_UNDNAT = Stage("lr_out_undnat", "lr", "egress")
LR_OUT_POST_UNDNAT = Stage("lr_out_post_undnat", "lr", "egress")
LR_OUT_SNAT = Stage("lr_out_snat", "lr", "egress")
LR_OUT_POST_SNAT = Stage("lr_out_post_snat", "lr", "egress")
LR_OUT_EGR_LOOP = Stage("lr_out_egr_loop", "lr", "egress")
LR_OUT_DELIVERY = Stage("lr_out_delivery", "lr", "egress")

# Stages later releases add (OVN 25.03; names read from its reference's output).  23.03's
# ``ls_*_acl`` / ``ls_in_acl_after_lb`` became evaluation / sampling / action stages and its
# ``ls_*_qos_mark`` / ``ls_*_qos_meter`` one ``ls_*_qos``; the FDB lookup also runs on egress; the
# router gained DHCP relay stages and ``lr_in_post_unsnat``.
LS_IN_ACL_EVAL = Stage("ls_in_acl_eval", "ls", "ingress")
LS_IN_ACL_SAMPLE = Stage("ls_in_acl_sample", "ls", "ingress")
LS_IN_ACL_ACTION = Stage("ls_in_acl_action", "ls", "ingress")
LS_IN_QOS = Stage("ls_in_qos", "ls", "ingress")
LS_IN_ACL_AFTER_LB_EVAL = Stage("ls_in_acl_after_lb_eval", "ls", "ingress")
LS_IN_ACL_AFTER_LB_SAMPLE = Stage("ls_in_acl_after_lb_sample", "ls", "ingress")
LS_IN_ACL_AFTER_LB_ACTION = Stage("ls_in_acl_after_lb_action", "ls", "ingress")
LS_OUT_LOOKUP_FDB = Stage("ls_out_lookup_fdb", "ls", "egress")
LS_OUT_PUT_FDB = Stage("ls_out_put_fdb", "ls", "egress")
LS_OUT_ACL_EVAL = Stage("ls_out_acl_eval", "ls", "egress")
LS_OUT_ACL_SAMPLE = Stage("ls_out_acl_sample", "ls", "egress")
LS_OUT_ACL_ACTION = Stage("ls_out_acl_action", "ls", "egress")
LS_OUT_QOS = Stage("ls_out_qos", "ls", "egress")
LR_IN_DHCP_RELAY_REQ = Stage("lr_in_dhcp_relay_req", "lr", "ingress")
LR_IN_POST_UNSNAT = Stage("lr_in_post_unsnat", "lr", "ingress")
LR_IN_DHCP_RELAY_RESP_CHK = Stage("lr_in_dhcp_relay_resp_chk", "lr", "ingress")
LR_IN_DHCP_RELAY_RESP = Stage("lr_in_dhcp_relay_resp", "lr", "ingress")

# Stages OVN 26.03 adds (names read from its reference's output): port mirroring in the switch
# pipelines, the conntrack-tuple extraction before the load balancers (``*_ct_extract``), network
# functions around ``ls_*_stateful``, and the router's network-id and stateful-ECMP egress stages.
LS_IN_MIRROR = Stage("ls_in_mirror", "ls", "ingress")
LS_IN_CT_EXTRACT = Stage("ls_in_ct_extract", "ls", "ingress")
LS_IN_PRE_NETWORK_FUNCTION = Stage("ls_in_pre_network_function", "ls", "ingress")
LS_IN_NETWORK_FUNCTION = Stage("ls_in_network_function", "ls", "ingress")
LS_OUT_MIRROR = Stage("ls_out_mirror", "ls", "egress")
LS_OUT_PRE_NETWORK_FUNCTION = Stage("ls_out_pre_network_function", "ls", "egress")
LS_OUT_NETWORK_FUNCTION = Stage("ls_out_network_function", "ls", "egress")
LR_IN_CT_EXTRACT = Stage("lr_in_ct_extract", "lr", "ingress")
LR_IN_NETWORK_ID = Stage("lr_in_network_id", "lr", "ingress")
LR_IN_ECMP_STATEFUL_EGR = Stage("lr_in_ecmp_stateful_egr", "lr", "ingress")


ALL_STAGES: tuple[Stage, ...] = tuple(v for v in tuple(globals().values()) if isinstance(v, Stage))

STAGES_BY_NAME: Mapping[str, Stage] = MappingProxyType({s.name: s for s in ALL_STAGES})


def stage_by_name(name: str) -> Stage:
    """The stage called ``name`` (a ``stage-name`` value); KeyError if unknown."""
    return STAGES_BY_NAME[name]
