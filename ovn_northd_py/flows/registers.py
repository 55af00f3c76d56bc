"""Registers, register bits and logical flags the logical pipelines use, as the reference names and
writes them (``northd.c`` of OVN 23.03; the flow text must match it byte for byte).

Logical registers: ``reg0``..``reg9`` are 32 bits each; ``xreg0``..``xreg4`` are 64 bits
(``xregN`` = ``reg(2N)``:``reg(2N+1)``) and ``xxreg0`` / ``xxreg1`` 128 bits (``xxreg0`` =
``reg0``..``reg3``, ``xxreg1`` = ``reg4``..``reg7``), so the wide names overlap the narrow ones.
A register is meaningful only between the stages that set and read it (ranges below).

Logical switch pipeline::

    +----+----------------------------------------------+---+----------------------------------+
    | R0 | REGBIT_CONNTRACK_{DEFRAG,COMMIT,NAT}  [0..2]  |   |                                  |
    |    | REGBIT_{DHCP_OPTS,DNS_LOOKUP}_RESULT  [3..4]  |   |                                  |
    |    | REGBIT_HAIRPIN [6], REGBIT_HAIRPIN_REPLY [12] | X |                                  |
    |    | REGBIT_ACL_HINT_{ALLOW_NEW,ALLOW,DROP,BLOCK}  | X |                                  |
    |    |   [7..10], REGBIT_ACL_HINT_ALLOW_REL [17]     | R |    REG_LB_L2_AFF_BACKEND_IP6     |
    |    | REGBIT_LKUP_FDB [11], REGBIT_ACL_LABEL [13]   | E |    (ls_in_lb_aff_check ..        |
    |    | REGBIT_FROM_RAMP [14]                         | G |     ls_in_lb)                    |
    |    | REGBIT_PORT_SEC_DROP [15]                     | 0 |                                  |
    |    | REGBIT_ACL_STATELESS [16]                     |   |                                  |
    +----+----------------------------------------------+   |                                  |
    | R1 | REG_ORIG_DIP_IPV4 (>= ls_in_pre_stateful)     |   |                                  |
    +----+----------------------------------------------+   |                                  |
    | R2 | REG_ORIG_TP_DPORT [0..15]                     |   |                                  |
    |    |   (>= ls_in_pre_stateful)                     |   |                                  |
    +----+----------------------------------------------+   |                                  |
    | R3 | REG_ACL_LABEL (committed as ct_label.label)   |   |                                  |
    +----+----------------------------------------------+---+----------------------------------+
    | R4 | REG_LB_AFF_BACKEND_IP4                        | X |                                  |
    +----+----------------------------------------------+ X |                                  |
    | R5 | unused                                        | R | REG_ORIG_DIP_IPV6                |
    +----+----------------------------------------------+ E |   (>= ls_in_pre_stateful)        |
    | R6 | unused                                        | G |                                  |
    +----+----------------------------------------------+ 1 |                                  |
    | R7 | unused                                        |   |                                  |
    +----+----------------------------------------------+---+----------------------------------+
    | R8 | REG_LB_AFF_MATCH_PORT [0..15]                 |
    +----+----------------------------------------------+
    | R9 | REGBIT_KNOWN_LB_SESSION [6]                   |
    |    |   (ls_in_lb_aff_check .. ls_in_lb_aff_learn)  |
    +----+----------------------------------------------+

Logical router pipeline::

    +----+-------------------------------+---+---------------------+---+------------------------+
    | R0 | REGBIT_ND_RA_OPTS_RESULT [5]  |   |                     |   |                        |
    |    |   (lr_in_nd_ra_options ..     | X |                     |   |                        |
    |    |    lr_in_nd_ra_response)      | R | REG_INPORT_ETH_ADDR |   |                        |
    |    | REG_NEXT_HOP_IPV4             | E |  [0..47]            | X |                        |
    |    |   (>= lr_in_ip_routing; the   | G |  (lr_in_admission   | X |  REG_NEXT_HOP_IPV6     |
    |    |    LB affinity VIP before)    | 0 |   .. lr_in_ip_input)| R |   (>= lr_in_ip_routing;|
    +----+-------------------------------+   |                     | E |    the LB affinity VIP |
    | R1 | REG_SRC_IPV4                  |   |                     | G |    before)             |
    |    |   (>= lr_in_ip_routing)       |   |                     | 0 |                        |
    +----+-------------------------------+---+---------------------+   |                        |
    | R2 | unused                        |                         |   |                        |
    +----+-------------------------------+                         |   |                        |
    | R3 | unused                        |                         |   |                        |
    +----+-------------------------------+-------------------------+---+------------------------+
    | R4 | REG_LB_AFF_BACKEND_IP4        |                         |   | REG_SRC_IPV6           |
    +----+-------------------------------+                         | X |   (>= lr_in_ip_routing)|
    | R5 | unused                        |                         | X | REG_LB_L3_AFF_BACKEND_ |
    +----+-------------------------------+                         | R |   IP6 (<= lr_in_dnat)  |
    | R6 | unused                        |                         | E | REG_ECMP_ETH_FULL      |
    +----+-------------------------------+                         | G |   (saved and restored  |
    | R7 | REG_ROUTE_TABLE_ID            |                         | 1 |    within one flow)    |
    |    |   (lr_in_ip_routing_pre ..    |                         |   |                        |
    |    |    lr_in_ip_routing)          |                         |   |                        |
    +----+-------------------------------+-------------------------+---+------------------------+
    | R8 | REG_ECMP_GROUP_ID [0..15],    |
    |    | REG_ECMP_MEMBER_ID [16..31],  |
    |    | REG_LB_AFF_MATCH_PORT [0..15] |
    +----+-------------------------------+
    | R9 | REGBIT_EGRESS_LOOPBACK [0]    |
    |    | REGBIT_PKT_LARGER [1]         |
    |    | REGBIT_LOOKUP_NEIGHBOR_RESULT |
    |    |   [2]                         |
    |    | REGBIT_LOOKUP_NEIGHBOR_IP_    |
    |    |   RESULT [3]                  |
    |    | REGBIT_DST_NAT_IP_LOCAL [4]   |
    |    | REGBIT_KNOWN_ECMP_NH [5]      |
    |    | REGBIT_KNOWN_LB_SESSION [6]   |
    |    | REG_ORIG_TP_DPORT_ROUTER      |
    |    |   [16..31]                    |
    +----+-------------------------------+

Logical flags (``flags``, the MFF_LOG_FLAGS register; flows name most bits symbolically):
``flags[0]`` ``flags.loopback`` (output back to the inport allowed), ``flags[1]`` received from a
VXLAN tunnel (:data:`FLAGBIT_NOT_VXLAN`), ``flags[2]`` ``flags.force_snat_for_dnat``,
``flags[3]`` ``flags.force_snat_for_lb``; and, by name only, ``flags.skip_snat_for_lb`` and
``flags.use_snat_zone`` (the router pipeline's load-balancer SNAT choices).

Whole-register clears (``reg0 = 0; ... reg9 = 0;`` of the egress loopback, ``reg0 = 0;`` before
a ``reject``) are written out where they occur: they name no use of the register.
"""

from __future__ import annotations

from typing import Final

# ---- Logical switch: reg0 bits ----
REGBIT_CONNTRACK_DEFRAG: Final = "reg0[0]"  # send to conntrack (ct_next) in pre_stateful
REGBIT_CONNTRACK_COMMIT: Final = "reg0[1]"  # commit the connection in the stateful stage
REGBIT_CONNTRACK_NAT: Final = "reg0[2]"  # send to conntrack (ct_lb_mark) in pre_stateful
REGBIT_DHCP_OPTS_RESULT: Final = "reg0[3]"  # put_dhcp(v6)_opts succeeded
REGBIT_DNS_LOOKUP_RESULT: Final = "reg0[4]"  # dns_lookup found an answer
REGBIT_HAIRPIN: Final = "reg0[6]"  # load-balanced traffic going back out of its inport
REGBIT_ACL_HINT_ALLOW_NEW: Final = "reg0[7]"  # ACL hints, as ``man ovn-northd`` names them
REGBIT_ACL_HINT_ALLOW: Final = "reg0[8]"
REGBIT_ACL_HINT_DROP: Final = "reg0[9]"
REGBIT_ACL_HINT_BLOCK: Final = "reg0[10]"
REGBIT_LKUP_FDB: Final = "reg0[11]"  # lookup_fdb() found the inport/eth.src pair
REGBIT_HAIRPIN_REPLY: Final = "reg0[12]"  # reply of a hairpinned load-balanced connection
REGBIT_ACL_LABEL: Final = "reg0[13]"  # commit reg3 as ct_label.label
REGBIT_FROM_RAMP: Final = "reg0[14]"  # packet came from a VTEP (RAMP) port
REGBIT_PORT_SEC_DROP: Final = "reg0[15]"  # port security check failed
REGBIT_ACL_STATELESS: Final = "reg0[16]"  # matched an allow-stateless ACL: skip conntrack
REGBIT_ACL_HINT_ALLOW_REL: Final = "reg0[17]"  # reply or related traffic of an allowed connection
# OVN 25.03 (behaviour "acl_eval_action", lflow/profile.py): an ACL with persist-established
# commits reg0[20] as ct_mark.allow_established; ls_*_acl_eval sets reg0[21] for such a session.
REGBIT_ACL_PERSIST_ID: Final = "reg0[20]"
REGBIT_ACL_HINT_ALLOW_EST: Final = "reg0[21]"  # established session of a persist-established ACL
REGBIT_FROM_ROUTER_PORT: Final = "reg0[18]"  # 25.03: the packet came in from a router port

# ---- Logical switch: other registers ----
REG_ORIG_DIP_IPV4: Final = "reg1"  # a load-balanced packet's original destination IPv4
REG_ORIG_DIP_IPV6: Final = "xxreg1"  # ... IPv6
REG_ORIG_TP_DPORT: Final = "reg2[0..15]"  # ... and its original L4 destination port
REG_ACL_LABEL: Final = "reg3"  # the ACL label (upstream REG_LABEL)
REG_ACL_ID: Final = "reg2[16..31]"  # 25.03: the ACL id committed as ct_label.acl_id
REG_LB_L2_AFF_BACKEND_IP6: Final = "xxreg0"  # the IPv6 backend chk_lb_aff() found (switch)

# ---- Logical switch, OVN 25.03 (behaviour "acl_eval_action"): ACL verdicts, tiers, sampling ----
REGBIT_ACL_VERDICT_ALLOW: Final = "reg8[16]"  # ls_*_acl_eval decided: allow
REGBIT_ACL_VERDICT_DROP: Final = "reg8[17]"  # ... drop
REGBIT_ACL_VERDICT_REJECT: Final = "reg8[18]"  # ... reject
REG_ACL_TIER: Final = "reg8[30..31]"  # the ACL tier being evaluated
# Sampling (NB Sample of an ACL): observation point ids of new and established sessions (the ACL's
# label when it has one, else the Sample's metadata) and the collector ids (a Sample of one
# collector, else 0); the "new" ones drive ls_*_acl_sample, the "est" ones are committed.
REG_OBS_POINT_ID_NEW: Final = "reg3"  # (= REG_ACL_LABEL)
REG_OBS_POINT_ID_EST: Final = "reg9"  # committed as ct_label.obs_point_id
REG_OBS_COLLECTOR_ID_NEW: Final = "reg8[0..7]"
REG_OBS_COLLECTOR_ID_EST: Final = "reg8[8..15]"  # committed as ct_mark.obs_collector_id
REG_OBS_STAGE: Final = "reg8[19..20]"  # the ACL's eval stage (0, 1 after LB, 2 egress); ct_mark.obs_stage

# ---- Switches and routers: load-balancer affinity ----
REG_LB_AFF_BACKEND_IP4: Final = "reg4"  # the IPv4 backend chk_lb_aff() found
REG_LB_AFF_MATCH_PORT: Final = "reg8[0..15]"  # ... and its port

# ---- Logical router: reg0 bit ----
REGBIT_ND_RA_OPTS_RESULT: Final = "reg0[5]"  # put_nd_ra_opts succeeded

# ---- Logical router: routing ----
REG_NEXT_HOP_IPV4: Final = "reg0"
REG_NEXT_HOP_IPV6: Final = "xxreg0"
REG_SRC_IPV4: Final = "reg1"  # the output port's address (ARP request source)
REG_SRC_IPV6: Final = "xxreg1"  # ... (NS source)
REG_INPORT_ETH_ADDR: Final = "xreg0[0..47]"  # the inport's MAC, stored by lr_in_admission
REG_ROUTE_TABLE_ID: Final = "reg7"  # the inport's route table (lr_in_ip_routing_pre)
REG_ECMP_GROUP_ID: Final = "reg8[0..15]"  # 0: not ECMP
REG_ECMP_MEMBER_ID: Final = "reg8[16..31]"
REG_LB_L3_AFF_BACKEND_IP6: Final = "xxreg1"  # the IPv6 backend chk_lb_aff() found (router)
# Holds ct_label for a moment (push / pop) to read the ECMP reply MAC out of it.
REG_ECMP_ETH_FULL: Final = "xxreg1"
REG_ECMP_ETH_FIELD: Final = "xxreg1[32..79]"  # ct_label.ecmp_reply_eth within REG_ECMP_ETH_FULL

# ---- Logical router: reg9 bits ----
REGBIT_EGRESS_LOOPBACK: Final = "reg9[0]"  # recirculated by the egress loopback
REGBIT_PKT_LARGER: Final = "reg9[1]"  # check_pkt_larger(): larger than the gateway MTU
REGBIT_LOOKUP_NEIGHBOR_RESULT: Final = "reg9[2]"  # lookup_arp / lookup_nd: binding known
REGBIT_LOOKUP_NEIGHBOR_IP_RESULT: Final = "reg9[3]"  # learning allowed for the sender's IP
REGBIT_DST_NAT_IP_LOCAL: Final = "reg9[4]"  # destination is a NAT IP local to this chassis
REGBIT_KNOWN_ECMP_NH: Final = "reg9[5]"  # chk_ecmp_nh(_mac): reply of a symmetric ECMP route
REGBIT_KNOWN_LB_SESSION: Final = "reg9[6]"  # chk_lb_aff(): an affinity session exists
REG_ORIG_TP_DPORT_ROUTER: Final = "reg9[16..31]"  # a load-balanced packet's original L4 port
REGBIT_DHCP_RELAY_REQ_CHK: Final = "reg9[7]"  # 25.03: dhcp_relay_req_chk() succeeded
REGBIT_DHCP_RELAY_RESP_CHK: Final = "reg9[8]"  # 25.03: dhcp_relay_resp_chk() succeeded
REG_DHCP_RELAY_DIP_IPV4: Final = "reg2"  # 25.03: a relayed DHCP reply's original destination
REG_POLICY_CHAIN_ID: Final = "reg9[16..31]"  # 25.03 lr_in_policy: the chain being evaluated (0: default)

# ---- Load balancers, releases with the ``lb_vip_regs_v2`` behaviour (25.03) ----
# A load-balanced packet's original destination (switches and routers): IPv4 in reg4 (was reg1
# on switches, reg0 on routers), IPv6 in xxreg1, its L4 port in reg2[0..15]; the backend
# chk_lb_aff() found goes to the same registers.
REG_ORIG_DIP_IPV4_V2: Final = "reg4"
REG_ORIG_DIP_IPV6_V2: Final = "xxreg1"
REG_ORIG_TP_DPORT_V2: Final = "reg2[0..15]"
REGBIT_IP_FRAG: Final = "reg0[19]"  # switch: a fragment, sent to conntrack in ls_in_pre_stateful

# ---- Logical router, releases with the ``lr_nexthop_v4_bit`` behaviour (25.03) ----
REG_SRC_IPV4_R5: Final = "reg5"  # the output port's IPv4 address (ARP request source), was reg1
REGBIT_NEXTHOP_IS_IPV4: Final = "reg9[9]"  # set by routing: 1 IPv4 next hop (reg0), 0 IPv6 (xxreg0)

# ---- Logical flags ----
FLAGBIT_NOT_VXLAN: Final = "flags[1] == 0"  # packet did not come in over a VXLAN tunnel

# ---- OVN 26.03 ----
# Behaviour "ct_extract_lb_match": the ls_in_ct_extract / lr_in_ct_extract stages load a new
# connection's protocol and destination port (ct_proto(), ct_tp_dst()) for the load balancers to
# match on instead of ``tcp.dst == P``.
REG_CT_PROTO: Final = "reg1[16..23]"
REG_CT_TP_DST: Final = "reg1[0..15]"
# Behaviour "network_function" (switch): the ACL matched a network function (reg8[21]), on its
# request direction (reg8[22]); the network function (group) id in reg0[22..29].
REGBIT_NF_ENABLED: Final = "reg8[21]"
REGBIT_NF_ORIG_DIR: Final = "reg8[22]"
REG_NF_ID: Final = "reg0[22..29]"
# ls_in_l2_lkup: the packet already has its outport (set by the network-function stage).
REGBIT_NF_OUTPORT_SET: Final = "reg8[23]"
# Behaviour "lr_ecmp_stateful_egr" (router): the routing stage decided a symmetric-ECMP reply
# must be committed (lr_in_ecmp_stateful_egr).
REGBIT_ECMP_COMMIT: Final = "reg9[10]"
# Behaviour "lr_network_id": which network of its output port the next hop is in (4 bits).
FLAG_NETWORK_ID: Final = "flags.network_id"
# Behaviour "ext_arp_filter" (switch): an ARP request from a localnet port (REGBIT_EXT_ARP).
REGBIT_EXT_ARP: Final = "reg0[22]"
# Behaviour "gateway_mtu_ct_state" (router): lr_in_chk_pkt_len saves the conntrack state
# (ct_state_save()) for lr_in_larger_pkts to test (bits: 5 tracked, 3 reply, 7 DNATed).
REG_CT_STATE: Final = "reg4[0..7]"
REG_CT_STATE_BIT_TRK: Final = "reg4[5]"
REG_CT_STATE_BIT_RPL: Final = "reg4[3]"
REG_CT_STATE_BIT_DNAT: Final = "reg4[7]"
