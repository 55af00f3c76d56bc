"""What the logical flows of one OVN release look like, as data: its flow profile.

Builders name stages (the constants of :mod:`.stages`) and never table ids.  A
:class:`FlowProfile` says which stages a release has and at which ``Logical_Flow.table_id``
each sits (its stage table, per datapath type and pipeline), plus the release's registers
vocabulary and behaviour switches.  Whatever turns a stage into an SB row or into a
``next(pipeline=..., table=N)`` action asks the profile of the release being served
(``FlowCtx.profile``, chosen by the daemon from the connected schema versions:
:mod:`ovn_northd_py.release`), so a release that renumbers or adds stages is a new profile,
not an ``if version`` in the builders.  A builder that must behave differently asks
:meth:`FlowProfile.has` for the behaviour by name.

Resolving a stage is cheap: every :class:`~.stages.Stage` has a dense ``index`` and a profile
keeps its table ids in a tuple by that index (:attr:`FlowProfile.table_ids`, -1 for a stage the
release lacks), so a loop over hundreds of thousands of flows pays a tuple index per flow, not a
dict lookup (:func:`table_id_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .stages import (
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
    LS_IN_ACL,
    LS_IN_ACL_ACTION,
    LS_IN_ACL_AFTER_LB,
    LS_IN_ACL_AFTER_LB_ACTION,
    LS_IN_ACL_AFTER_LB_EVAL,
    LS_IN_ACL_AFTER_LB_SAMPLE,
    LS_IN_ACL_EVAL,
    LS_IN_ACL_HINT,
    LS_IN_ACL_SAMPLE,
    LS_IN_APPLY_PORT_SEC,
    LS_IN_ARP_RSP,
    LS_IN_CHECK_PORT_SEC,
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
    LS_IN_NETWORK_FUNCTION,
    LS_IN_PRE_ACL,
    LS_IN_PRE_HAIRPIN,
    LS_IN_PRE_LB,
    LS_IN_PRE_NETWORK_FUNCTION,
    LS_IN_PRE_STATEFUL,
    LS_IN_PUT_FDB,
    LS_IN_QOS,
    LS_IN_QOS_MARK,
    LS_IN_QOS_METER,
    LS_IN_STATEFUL,
    LS_OUT_ACL,
    LS_OUT_ACL_ACTION,
    LS_OUT_ACL_EVAL,
    LS_OUT_ACL_HINT,
    LS_OUT_ACL_SAMPLE,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_CHECK_PORT_SEC,
    LS_OUT_LOOKUP_FDB,
    LS_OUT_MIRROR,
    LS_OUT_NETWORK_FUNCTION,
    LS_OUT_PRE_ACL,
    LS_OUT_PRE_LB,
    LS_OUT_PRE_NETWORK_FUNCTION,
    LS_OUT_PRE_STATEFUL,
    LS_OUT_PUT_FDB,
    LS_OUT_QOS,
    LS_OUT_QOS_MARK,
    LS_OUT_QOS_METER,
    LS_OUT_STATEFUL,
    DpType,
    Pipeline,
    Stage,
)

StageTable = Mapping[tuple[DpType, Pipeline], tuple[Stage, ...]]


class StageNotInProfile(LookupError):
    """A flow names a stage the release being served does not have."""


@dataclass(frozen=True, slots=True, eq=False)
class FlowProfile:
    """One release's stage table, registers and behaviours.

    ``tables``: per (datapath type, pipeline), the release's stages in table order (a stage's
    table id is its position).  ``registers``: symbolic register / flag name -> the expression
    the release uses for it (:meth:`register`).  ``behaviours``: names of the behaviours the
    release has beyond the baseline (23.03), asked with :meth:`has`.
    """

    name: str  # the OVN release, e.g. "23.03"
    tables: StageTable
    behaviours: frozenset[str] = frozenset()
    registers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # SB_Global options:northd_internal_version (release, SB schema, internal flow version), which
    # ovn-controller compares with its own under ovn-match-northd-version.
    northd_internal_version: str = "23.03.1-20.27.0-70.6"
    # The chassis features (SB Chassis other_config flags, flows/chassis_features.py) the release's
    # northd asks every chassis for, and those its debug/chassis-features-list prints.
    chassis_features: tuple[str, ...] = ("ct_no_masked_label", "ct_lb_related", "mac_binding_timestamp")
    chassis_features_listed: tuple[str, ...] = ("ct_no_masked_label", "ct_lb_related", "mac_binding_timestamp")
    # Under construction: flows in stages it lacks are dropped instead of refused
    # (sync/lflow_desired.py), so that a partial port can be measured against the reference.
    draft: bool = False
    # Derived (__post_init__): table id by Stage.index, -1 where the release lacks the stage.
    table_ids: tuple[int, ...] = field(init=False)
    stages: frozenset[Stage] = field(init=False)
    _by_name: Mapping[str, Stage] = field(init=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Stage] = {}
        ids: dict[int, int] = {}
        for (dp_type, pipeline), table in self.tables.items():
            for tid, st in enumerate(table):
                if (st.dp_type, st.pipeline) != (dp_type, pipeline):
                    raise ValueError(f"OVN {self.name}: stage {st.name} is not a {dp_type} {pipeline} stage")
                if st.name in by_name:
                    raise ValueError(f"OVN {self.name}: stage {st.name} is listed twice")
                by_name[st.name] = st
                ids[st.index] = tid
        size = max(ids, default=-1) + 1
        object.__setattr__(self, "table_ids", tuple(ids.get(i, -1) for i in range(size)))
        object.__setattr__(self, "stages", frozenset(by_name.values()))
        object.__setattr__(self, "_by_name", MappingProxyType(by_name))
        object.__setattr__(self, "tables", MappingProxyType(dict(self.tables)))
        object.__setattr__(self, "registers", MappingProxyType(dict(self.registers)))

    def __repr__(self) -> str:
        return f"FlowProfile({self.name!r})"

    # ---- stages ----
    def has_stage(self, stage: Stage) -> bool:
        return self._by_name.get(stage.name) == stage

    def table_id(self, stage: Stage) -> int:
        """The ``Logical_Flow.table_id`` of ``stage`` in this release; :class:`StageNotInProfile`
        if the release has no such stage."""
        i = stage.index
        if i < len(self.table_ids) and (tid := self.table_ids[i]) >= 0:
            return tid
        known = self._by_name.get(stage.name)
        if known is not None and known == stage:  # an equal Stage made elsewhere (another index)
            return self.table_ids[known.index]
        raise StageNotInProfile(
            f"OVN {self.name} has no logical flow stage {stage.name!r} ({stage.dp_type} {stage.pipeline}); "
            f"its {stage.dp_type} {stage.pipeline} stages are: "
            f"{', '.join(s.name for s in self.tables.get((stage.dp_type, stage.pipeline), ()))}"
        )

    def stages_for(self, dp_type: DpType, pipeline: Pipeline) -> tuple[Stage, ...]:
        """The stages of one pipeline in table order (index == table id)."""
        return self.tables.get((dp_type, pipeline), ())

    def stage_at(self, dp_type: DpType, pipeline: Pipeline, table_id: int) -> Stage:
        """The stage at ``table_id`` of one pipeline; IndexError if out of range."""
        if table_id < 0:
            raise IndexError(table_id)
        return self.stages_for(dp_type, pipeline)[table_id]

    def stage_named(self, name: str) -> Stage | None:
        """The release's stage called ``name`` (a ``stage-name`` value), if it has one."""
        return self._by_name.get(name)

    # ---- registers and behaviours ----
    def register(self, name: str) -> str:
        """The expression this release uses for the register or flag called ``name``."""
        try:
            return self.registers[name]
        except KeyError:
            raise LookupError(f"OVN {self.name}'s flow profile names no register {name!r}") from None

    def has(self, behaviour: str) -> bool:
        """Does this release have the behaviour called ``behaviour``?"""
        return behaviour in self.behaviours


def table_id_of(profile: FlowProfile, ids: tuple[int, ...], stage: Stage) -> int:
    """``profile.table_id(stage)`` with the fast path inlined by callers in hot loops:

        tid = ids[st.index] if st.index < len(ids) else -1
        if tid < 0: tid = table_id_of(profile, ids, st)   # slow path: ad-hoc Stage, or raises
    """
    i = stage.index
    if i < len(ids) and ids[i] >= 0:
        return ids[i]
    return profile.table_id(stage)


# OVN 23.03, as Debian 12's ovn-northd writes it (tests/unit/test_stages.py checks it against
# names and ids read from the reference's output and the man page).
OVN_23_03 = FlowProfile(
    "23.03",
    {
        ("ls", "ingress"): (
            LS_IN_CHECK_PORT_SEC, LS_IN_APPLY_PORT_SEC, LS_IN_LOOKUP_FDB, LS_IN_PUT_FDB, LS_IN_PRE_ACL,
            LS_IN_PRE_LB, LS_IN_PRE_STATEFUL, LS_IN_ACL_HINT, LS_IN_ACL, LS_IN_QOS_MARK, LS_IN_QOS_METER,
            LS_IN_LB_AFF_CHECK, LS_IN_LB, LS_IN_LB_AFF_LEARN, LS_IN_PRE_HAIRPIN, LS_IN_NAT_HAIRPIN,
            LS_IN_HAIRPIN, LS_IN_ACL_AFTER_LB, LS_IN_STATEFUL, LS_IN_ARP_RSP, LS_IN_DHCP_OPTIONS,
            LS_IN_DHCP_RESPONSE, LS_IN_DNS_LOOKUP, LS_IN_DNS_RESPONSE, LS_IN_EXTERNAL_PORT, LS_IN_L2_LKUP,
            LS_IN_L2_UNKNOWN,
        ),
        ("ls", "egress"): (
            LS_OUT_PRE_ACL, LS_OUT_PRE_LB, LS_OUT_PRE_STATEFUL, LS_OUT_ACL_HINT, LS_OUT_ACL, LS_OUT_QOS_MARK,
            LS_OUT_QOS_METER, LS_OUT_STATEFUL, LS_OUT_CHECK_PORT_SEC, LS_OUT_APPLY_PORT_SEC,
        ),
        ("lr", "ingress"): (
            LR_IN_ADMISSION, LR_IN_LOOKUP_NEIGHBOR, LR_IN_LEARN_NEIGHBOR, LR_IN_IP_INPUT, LR_IN_UNSNAT,
            LR_IN_DEFRAG, LR_IN_LB_AFF_CHECK, LR_IN_DNAT, LR_IN_LB_AFF_LEARN, LR_IN_ECMP_STATEFUL,
            LR_IN_ND_RA_OPTIONS, LR_IN_ND_RA_RESPONSE, LR_IN_IP_ROUTING_PRE, LR_IN_IP_ROUTING,
            LR_IN_IP_ROUTING_ECMP, LR_IN_POLICY, LR_IN_POLICY_ECMP, LR_IN_ARP_RESOLVE, LR_IN_CHK_PKT_LEN,
            LR_IN_LARGER_PKTS, LR_IN_GW_REDIRECT, LR_IN_ARP_REQUEST,
        ),
        ("lr", "egress"): (
            LR_OUT_CHK_DNAT_LOCAL, LR_OUT_UNDNAT, LR_OUT_POST_UNDNAT, LR_OUT_SNAT, LR_OUT_POST_SNAT,
            LR_OUT_EGR_LOOP, LR_OUT_DELIVERY,
        ),
    },
)

# OVN 25.03, as Debian 13's ovn-northd writes it: its stage table (tests/parity/test_releases.py
# checks it against that reference's output) and the behaviours 25.03 has beyond 23.03 (the
# parity tests and ``python -m ovn_northd_py.parity --release 25.03`` compare the flows).
OVN_25_03 = FlowProfile(
    "25.03",
    {
        ("ls", "ingress"): (
            LS_IN_CHECK_PORT_SEC, LS_IN_APPLY_PORT_SEC, LS_IN_LOOKUP_FDB, LS_IN_PUT_FDB, LS_IN_PRE_ACL,
            LS_IN_PRE_LB, LS_IN_PRE_STATEFUL, LS_IN_ACL_HINT, LS_IN_ACL_EVAL, LS_IN_ACL_SAMPLE,
            LS_IN_ACL_ACTION, LS_IN_QOS, LS_IN_LB_AFF_CHECK, LS_IN_LB, LS_IN_LB_AFF_LEARN, LS_IN_PRE_HAIRPIN,
            LS_IN_NAT_HAIRPIN, LS_IN_HAIRPIN, LS_IN_ACL_AFTER_LB_EVAL, LS_IN_ACL_AFTER_LB_SAMPLE,
            LS_IN_ACL_AFTER_LB_ACTION, LS_IN_STATEFUL, LS_IN_ARP_RSP, LS_IN_DHCP_OPTIONS, LS_IN_DHCP_RESPONSE,
            LS_IN_DNS_LOOKUP, LS_IN_DNS_RESPONSE, LS_IN_EXTERNAL_PORT, LS_IN_L2_LKUP, LS_IN_L2_UNKNOWN,
        ),
        ("ls", "egress"): (
            LS_OUT_LOOKUP_FDB, LS_OUT_PUT_FDB, LS_OUT_PRE_ACL, LS_OUT_PRE_LB, LS_OUT_PRE_STATEFUL,
            LS_OUT_ACL_HINT, LS_OUT_ACL_EVAL, LS_OUT_ACL_SAMPLE, LS_OUT_ACL_ACTION, LS_OUT_QOS,
            LS_OUT_STATEFUL, LS_OUT_CHECK_PORT_SEC, LS_OUT_APPLY_PORT_SEC,
        ),
        ("lr", "ingress"): (
            LR_IN_ADMISSION, LR_IN_LOOKUP_NEIGHBOR, LR_IN_LEARN_NEIGHBOR, LR_IN_IP_INPUT, LR_IN_DHCP_RELAY_REQ,
            LR_IN_UNSNAT, LR_IN_POST_UNSNAT, LR_IN_DEFRAG, LR_IN_LB_AFF_CHECK, LR_IN_DNAT, LR_IN_LB_AFF_LEARN,
            LR_IN_ECMP_STATEFUL, LR_IN_ND_RA_OPTIONS, LR_IN_ND_RA_RESPONSE, LR_IN_IP_ROUTING_PRE,
            LR_IN_IP_ROUTING, LR_IN_IP_ROUTING_ECMP, LR_IN_POLICY, LR_IN_POLICY_ECMP,
            LR_IN_DHCP_RELAY_RESP_CHK, LR_IN_DHCP_RELAY_RESP, LR_IN_ARP_RESOLVE, LR_IN_CHK_PKT_LEN,
            LR_IN_LARGER_PKTS, LR_IN_GW_REDIRECT, LR_IN_ARP_REQUEST,
        ),
        ("lr", "egress"): (
            LR_OUT_CHK_DNAT_LOCAL, LR_OUT_UNDNAT, LR_OUT_POST_UNDNAT, LR_OUT_SNAT, LR_OUT_POST_SNAT,
            LR_OUT_EGR_LOOP, LR_OUT_DELIVERY,
        ),
    },
    behaviours=frozenset({
        # lr_in_admission: ICMP frag-needed / packet-too-big errors from a tunnel
        # (flags.tunnel_rx == 1) dropped (110), or turned back at a DGP whose cr-port is not
        # resident (120); ls_in_pre_lb 110 lets them skip the load balancers.
        "pmtud_tunnel_rx",
        # lr_in_learn_neighbor: the priority-100 "no need to learn" flow (reg9[2] == 1, or
        # ``reg9[2] == 1 || reg9[3] == 0``) refreshes the MAC cache entry (``mac_cache_use; next;``).
        "mac_cache_use",
        # lr_in_ip_input: per-IPv6-address ``handle_dhcpv6_reply`` flows (100) only on router ports
        # with options:prefix_delegation=true (any case; peered or not), 23.03: on every port.
        "dhcpv6_reply_prefix_delegation",
        # Routing sets reg9[9] (1: IPv4 next hop in reg0, the port's address in reg5 instead of
        # reg1; 0: IPv6 in xxreg0/xxreg1); lr_in_arp_resolve / lr_in_arp_request test reg9[9]
        # instead of ip4 / ip6.
        "lr_nexthop_v4_bit",
        # lr_in_arp_request: ``arp {...}; output;`` / ``nd_ns {...}; output;`` (the packet itself
        # goes on too).
        "arp_request_then_output",
        # lr_in_ip_routing priorities 8*plen + 0 (source static route) / 4 (destination static
        # route) / 6 (connected), instead of 3*plen + 0/1/2.
        "route_priority_x8",
        # Source-IP static routes of the main table match ``reg7 == 0 && ...`` too.
        "src_route_reg7",
        # Dynamic routing (options:dynamic-routing): SB Advertised_Route rows
        # (sync/advertised_routes.py), SB Learned_Route rows as lr_in_ip_routing routes at priority
        # 8*plen + 2 (flows/dynamic_routing.py), Port_Binding options:dynamic-routing* of gateway
        # router ports (northd/build.py).
        "dynamic_routing",
        # Advertised_Route (25.03, not 26.03): connected-as-host also announces the NAT external
        # addresses and load-balancer VIPs of the routers on the port's switch and of its own
        # router; of a router with a port peered
        # directly with another router, the ports after it (hash order of the names) announce no
        # neighbour's NAT / load balancers.
        "dynamic_routing_host_nat",
        "dynamic_routing_peer_hides_switch_neighbours",
        # lr_in_dnat's established / related flows of a router with load balancers add
        # ``!ct.rpl``.
        "lb_ct_not_rpl",
        # A router load balancer's VIP without backends (no reject) is a bare ``drop;``: no
        # skip_snat / force_snat flag first (flows/lr_lb.py).
        "lb_drop_no_snat_flag",
        # NAT on a distributed gateway port without the common zone: ct_snat / ct_dnat(B) /
        # ct_dnat instead of the *_in_czone actions, one unSNAT flow, SNAT with
        # ``(!ct.trk || !ct.rpl)`` plus the reverse direction tracked (lr_out_post_undnat 70) and
        # committed (lr_out_post_snat); no lr_out_chk_dnat_local flows but the priority-0 one
        # (gateway routers too); no
        # ``flags.use_snat_zone`` in the egress loopback; load-balancer unDNAT (120) matches
        # ``(inport == DGP || outport == DGP)``.  NB_Global options:use_common_zone=true brings the
        # common zone back (FlowCtx.separate_nat_zones), with 25.03's match order and SNAT
        # skipping replies (flows/lr_nat.py).
        "dgp_nat_no_czone",
        # Logical_Router options:ct-commit-all (man ovn-nb): every new connection of a router with
        # stateful NAT or load balancers committed to the DNAT and SNAT zones (lr_nat.py).
        "ct_commit_all",
        # gateway_mtu's check_pkt_larger: a localnet port's tag_request 0 without a parent_name
        # is no VLAN (lr_common.pkt_larger_len).
        "vlan_tag0_needs_parent",
        # SB Port_Binding tag of a localnet port without parent_name: its non-zero tag_request.
        "localnet_tag_request",
        # New SB Static_MAC_Binding / Chassis_Template_Var rows get the NB row's uuid.
        "sb_rows_nb_uuid",
        # Port_Binding.chassis of a remote port: its requested chassis when that one is remote.
        "remote_port_binding",
        # HA_Chassis_Group.ref_chassis also counts the ports' Port_Binding.additional_chassis.
        "ref_chassis_additional",
        # NB_Global options:vxlan_mode=false: no VXLAN mode (tunnel key ranges) whatever the chassis.
        "nb_vxlan_mode_option",
        # A Logical_Switch with other_config:ic-vxlan_mode: datapath keys 1..1023, SB_Global
        # max_tunid 1023 (northd/build.ic_vxlan_mode).
        "ic_vxlan_key_range",
        # A router port whose options:requested-chassis is a remote chassis: a remote Port_Binding
        # bound there (northd/build.mark_remote_router_ports); its router floods ARP replies and
        # NAs to the remote ports (flows/lr_neighbor.py).
        "transit_router_remote_ports",
        # NB Logical_Router_Port status:hosting-chassis: where the port's chassisredirect port is bound.
        "lrp_hosting_chassis",
        # No lr_in_unsnat 120 bypass for a load-balancer VIP that is also a NAT external IP
        # (observed on gateway routers and DGPs, snat and dnat_and_snat).
        "no_lb_unsnat_bypass",
        # lr_in_gw_redirect 200 per load-balancer VIP with backends on a DGP router: replies from
        # the backends (``ip4 && ((ip4.src == B && tcp.src == P) || ...) && outport == DGP``) go
        # to the chassis-redirect port.
        "lb_backend_gw_redirect",
        # A router with several distributed gateway ports gets its load-balancer flows that name
        # a DGP (lr_in_dnat with is_chassis_resident, unDNAT, gw_redirect) once per DGP, and
        # Load_Balancer options:use_stateless_nat (man ovn-nb) makes them stateless there.
        "lb_each_dgp",
        # lr_in_lookup_neighbor 110 (always_learn_from_arp_request=false): a link-local multicast
        # NA is looked up by nd.target, not ip6.src.
        "nd_na_lookup_target",
        # Load-balancer registers: the original destination in reg4 (IPv6 xxreg1)
        # and reg2[0..15] on switches and routers (was reg1 / reg0 + reg9[16..31]); switch VIP
        # flows load them instead of ``reg0[1] = 0;``; affinity: the check matches the packet,
        # the backend found is in the same registers, router VIP flows with affinity load the VIP;
        # fragments marked reg0[19] in ls_in_pre_stateful 115 (every switch) and their destination
        # read back from conntrack in ls_in_lb 110.
        # (A template load balancer's switch affinity flows, and the VIP its router lr_in_dnat flow
        # loads, keep its address family: 23.03 writes them as IPv6, 25.03's router affinity flows
        # still are.)
        "lb_vip_regs_v2",
        # Router affinity flows of a skip_snat load balancer keep skip_snat even when the router
        # forces SNAT for load-balanced traffic (23.03: force_snat wins).
        "lb_affinity_skip_snat",
        # lr_in_larger_pkts 160: a copy of each gateway_mtu error flow for replies of DNATed
        # connections (``&& ct.trk && ct.rpl && ct.dnat``) setting flags.icmp_snat, which
        # lr_out_post_snat 100 commits (``ct_commit_nat(snat)``).
        "icmp_snat_larger_pkts",
        # lr_in_arp_resolve: no ``eth.dst = 00:00:00:00:00:00`` flow for a virtual port's IP
        # (observed unclaimed).
        "no_unbound_virtual_resolve",
        # Chassis features ct-no-masked-label and ovn-ct-lb-related are no longer read: always on
        # (ct_mark flags, ct_lb_mark, related traffic NATed; no SB_Global lb_hairpin_use_ct_mark).
        # (Expressed by ``chassis_features`` below, which does not list them; kept as a name.)
        "ct_features_assumed",
        # ---- SB tables ----
        # SB_Global options arp_ns_explicit_output=true and register_consolidation=true (features
        # northd tells ovn-controller about).
        "sb_feature_options",
        # SB_Global options:lb_hairpin_use_ct_mark: NB_Global's, copied as is (23.03: dropped, and
        # "false" while a chassis lacks ct-no-masked-label).
        "sb_hairpin_ct_mark_copied",
        # RBAC_Permission: BFD, IGMP_Group and Service_Monitor authorised by chassis_name; FDB
        # may update timestamp, IGMP_Group protocol.
        "rbac_2503",
        # DHCPv6_Options codes: bootfile_name (59), bootfile_name_alt (254), fqdn (39, type
        # domain: not in the 23.03 schema).
        "dhcpv6_boot_fqdn",
        # Port_Binding mac of a router port (and its chassisredirect port): every network with its
        # prefix length (``50.0.0.1/32`` where NB says ``50.0.0.1``).
        "lrp_mac_plen",
        # Load_Balancer: a row per NB load balancer on switches or routers, naming them in
        # ls_datapath_group / lr_datapath_group (datapath_group empty; columns 23.03's schema
        # lacks), without external_ids:lb_id, its uuid the NB row's.
        "lb_split_datapath_groups",
        # Port_Binding: the switch port peering a router's only distributed gateway port, on a switch
        # without a localnet port, gets a chassisredirect port "cr-<switch port>" (northd/build.py
        # make_switch_crp), which replaces it in _MC_flood; ls_in_l2_lkup sends the router port's
        # MAC and ARP/NS to it where the gateway port is not resident.
        "centralized_dgp_peer",
        # Port_Binding options:qdisc_queue_id of every VIF / localnet port with QoS parameters, from
        # one pool, and options:qos_physical_network (northd/build.py assign_qos_queues);
        # ls_out_apply_port_sec 110 sets a VIF's queue on its switch's first localnet port.
        "qos_queues_global",
        # ---- switch pipeline ----
        # ACLs set verdict bits (reg8[16..18]) in ls_{in,out}_acl_eval / ls_in_acl_after_lb_eval and
        # ls_*_acl_action acts on them (ls_*_acl_sample in between); labels also load the
        # observation registers; sessions of persist-established ACLs are let through.
        "acl_eval_action",
        # ls_{in,out}_pre_acl: no conntrack skip for a router port whose peer is a distributed
        # gateway port and has options:enable_router_port_acl=true.
        "router_port_acl",
        # SB Meter: the per-ACL copy of a fair meter only for ACLs that log (23.03: every ACL
        # naming the meter).
        "fair_meter_logged_acls",
        # ls_{in,out}_stateful commit ct_mark.allow_established, ct_label.acl_id and (labelled)
        # the observation fields instead of ct_label.label.
        "ct_commit_acl_id",
        # QoS marking and metering are one stage, ls_{in,out}_qos (23.03: qos_mark + qos_meter).
        "ls_qos_merged",
        # The egress pipeline starts with ls_out_lookup_fdb / ls_out_put_fdb.
        "ls_egress_fdb",
        # ls_in_arp_rsp answers broadcast ARP requests (eth.dst == ff:ff:ff:ff:ff:ff) and multicast
        # neighbour solicitations (nd_ns_mcast && ip6.dst == <solicited-node>) only.
        "arp_nd_rsp_bcast_mcast",
        # ls_in_l2_lkup sends the router port's MAC to a router-type port even without "router"
        # in its addresses.
        "ls_router_port_mac",
        # ls_in_l2_lkup 80: ARP requests for a router's snat external IPs go to the router too (as
        # for its dnat / dnat_and_snat ones).
        "l2_arp_snat_ips",
        # _MC_unknown takes enabled external ports with "unknown" addresses too; ls_in_l2_unknown
        # sends to it whenever a port (enabled or not) has "unknown" addresses.
        "mc_unknown_external",
        # ls_in_l2_lkup 80: no ARP/NS flow for a router load-balancer VIP whose load balancers all
        # have options:neighbor_responder=none.
        "l2_lb_neighbor_responder",
        # ls_in_l2_lkup 50: a "MAC dynamic" address gives a flow only once IPAM assigned it.
        "l2_dynamic_needs_ipam",
        # lr_out_delivery's priority-0 drop on every router (23.03: only while a port is enabled).
        "lr_delivery_default",
        # (pmtud_tunnel_rx, on switches: ls_in_check_port_sec sends ICMP "packet too big" errors
        # back (per router and VIF port) or drops them; pre-ACL / pre-LB let them through; router
        # ports mark their traffic (reg0[18]).)
        # ls_in_dhcp_options: DHCPv4 discover and request in one flow
        # ((ip4.src == {IP, 0.0.0.0} && ip4.dst == {SRV, 255.255.255.255})), DHCPv6 with ip6.mcast.
        "dhcp_merged_matches",
        # ls_in_arp_rsp lets ARP/NS from a VTEP (RAMP) port through at 65535 on a switch with one.
        "arp_rsp_skip_ramp",
        # ls_in_arp_rsp: options:arp_proxy answers at 30 what did not come from a router port
        # (reg0[18] == 0), addresses with their prefix lengths, IPv6 ones with nd_na_router; on
        # such a switch no "inport == <localnet>" skip flow (100).
        "arp_proxy_v2",
        # ls_in_lookup_fdb of a localnet port sets flags.localnet before lookup_fdb().
        "fdb_localnet_flag",
        # ls_out_acl_eval lets DHCP replies to a port through only when the port has an address in
        # the DHCP_Options cidr (and is enabled).
        "dhcp_reply_needs_address",
        # ls_in_l2_lkup's flood of a router's own ARP/NS (75) lists the router port's MAC first,
        # then the NAT external MACs (23.03: one OVS string-set order for all).
        "l2_flood_router_mac_first",
        # ECMP symmetric replies without chk_ecmp_nh / commit_ecmp_nh: plain ct_next / ct_commit
        # and replies matched by ct_mark.ecmp_reply_port alone (lr_routing; observed with and
        # without NB_Global options:ecmp_nexthop_monitor_enable, which also fills SB ECMP_Nexthop:
        # sync/ecmp_nexthop.py).
        "ecmp_symmetric_plain",
        # NAT ``match`` / ``priority`` (NB columns 25.03 added): lr_nat._extra_match.
        "nat_match_priority",
        # Logical_Router_Policy chain / jump_chain / action=jump (lr_policy).
        "policy_chains",
        # A NAT external_ip of an address followed by junk ("1.2.3.4.5"): ARP for the address, the
        # rule's other flows with the text as written (23.03: ARP only).
        "nat_external_ip_text",
        # A NAT rule with a malformed external_mac, a dnat / dnat_and_snat rule whose logical_ip is
        # not one address, or a snat rule whose logical_ip does not parse is rejected as a whole
        # (no flows, not even ARP; no flooding, no nat-addresses): northd/nat_rules.py.
        "nat_rejects_invalid",
        # SB DNS rows: the NB row's uuid, options:ovn-owned, no external_ids:dns_id (sync/dns.py).
        "dns_nb_uuid",
        # Logical_Switch_Port options force_fdb_lookup, pkt_clone_type=mc_unknown,
        # disable_arp_nd_rsp, and Logical_Switch other_config:broadcast-arps-to-all-routers=false
        # (flows/ls_l2.py, flows/ls_arp_rsp.py).
        "lsp_l2_options",
        # A switch relaying DHCP (flows/dhcp_relay.switch_relays_dhcp) serves no DHCP options itself.
        "dhcp_relay_skips_dhcp",
        # A static route with options:ecmp_symmetric_reply is an ECMP group even alone
        # (``reg8[16..31] = 1; next;`` and its lr_in_ip_routing_ecmp member flow).
        "symmetric_route_group",
        # Logical_Router_Static_Route selection_fields: an ECMP group's select() hashes them
        # (``select(values=(...); hash_fields="...")``, per-protocol flows for tp_src / tp_dst).
        "route_selection_fields",
        # A static route's next hop may be of the other family than its prefix (IPv4 routes over
        # an IPv6 next hop and back): the next hop's registers and reg9[9].
        "route_mixed_family",
        # Logical_Switch_Port type "switch" (options:peer: another switch's port): a patch port
        # with an implicit "unknown" address (northd/build.py switch_peer_port), always up.
        "switch_peer_ports",
        # Router ports peer each other only when both name the other (one-sided: no peer); a
        # router-type switch port naming a router port with a router peer of its own is not
        # connected (warned).
        "lrp_peer_checks",
        # Logical_Router_Port options:routing-protocol-redirect / routing-protocols (BGP, BFD):
        # the peer switch sends that traffic to the named switch port (flows/ls_routing_redirect.py).
        "routing_protocol_redirect",
        # Logical_Router options:mac_binding_age_threshold takes [cidr:]threshold entries.
        "mac_binding_age_cidrs",
        # ... and the router's Datapath_Binding external_ids carry the option as written
        # (northd/build.py DP_MAC_BINDING_AGE).
        "dp_mac_binding_age",
        # Port_Binding ipv6_ra_prefixes lists a router port's NB ipv6_prefix too, with
        # options:prefix=true (northd/build.py RA_PD_PREFIXES).
        "ra_pd_prefixes",
        # A router's _rtr_lb_<key>_ip6 address set takes its template load balancers' VIPs, IPv4
        # ones too (flows/router_addrs.router_lb_vip_sets).
        "rtr_lb_template_vips_ip6",
        # NAT / load-balancer add_route from any router, not only a DGP: a gateway router's routes
        # and bindings, another router's bindings (lr_nat.build_lsp_nat_add_route_flows).
        "add_route_any_router",
        # ... and the first of several DGPs routes only the rules applied on it (lr_nat._routes_on).
        "add_route_rule_dgp",
        # ... and a neighbour port without IPv4 networks routes them too, from its IPv6 link-local
        # address (lr_nat.build_lsp_nat_add_route_flows).
        "add_route_lla_neighbour",
        # A gateway router's port with gateway chassis names no chassis-redirect-port
        # (northd/build.py NO_IGNORED_GW_CRP).
        "no_ignored_gw_crp",
        # ECMP group and member ids in the reference's walk of a router's routes, not uuid order
        # (flows/lr_routing._chain_order).
        "ecmp_route_chain_order",
        # Policy ECMP group ids in the same walk (flows/lr_policy._chain_gids); an ECMP reroute's
        # next hops that do not parse or that no port reaches are left out (one left: member 1).
        "policy_ecmp_chain_order",
        # Logical_Switch other_config:fdb_age_threshold ages FDB rows (NB_Global fdb_removal_limit).
        "fdb_aging",
        # ---- chassis features (flows/chassis_features.py) ----
        # A chassis feature found off stays off until an existing chassis' other_config is
        # updated (observed: deleting the chassis that lacked it, a recompute or a new chassis
        # announcing it change nothing).
        "chassis_features_latched",
    }),
    northd_internal_version="25.03.0-20.41.0-77.6",
    # (observed: flows of a 23.03 ovn-controller, which announces none of the new ones, and
    # debug/chassis-features-list, which prints mac_binding_timestamp only)
    chassis_features=("mac_binding_timestamp", "fdb_timestamp", "ls_dpg_column", "ct_commit_nat_v2",
                      "ct_commit_to_zone", "sample_with_reg", "ct_next_zone", "ct_label_flush"),
    chassis_features_listed=("mac_binding_timestamp",),
)

# OVN 26.03 (served): its stage table as Debian sid's ovn-northd 26.03 writes it (tests/parity/
# test_releases.py checks it against that reference's output); its behaviours are 25.03's plus
# those 26.03 adds (the differences still open: tests/parity/known_draft_differences.txt).
OVN_26_03 = FlowProfile(
    "26.03",
    {
        ("ls", "ingress"): (
            LS_IN_CHECK_PORT_SEC, LS_IN_APPLY_PORT_SEC, LS_IN_MIRROR, LS_IN_LOOKUP_FDB, LS_IN_PUT_FDB,
            LS_IN_PRE_ACL, LS_IN_PRE_LB, LS_IN_PRE_STATEFUL, LS_IN_ACL_HINT, LS_IN_ACL_EVAL, LS_IN_ACL_SAMPLE,
            LS_IN_ACL_ACTION, LS_IN_QOS, LS_IN_CT_EXTRACT, LS_IN_LB_AFF_CHECK, LS_IN_LB, LS_IN_LB_AFF_LEARN,
            LS_IN_PRE_HAIRPIN, LS_IN_NAT_HAIRPIN, LS_IN_HAIRPIN, LS_IN_ACL_AFTER_LB_EVAL,
            LS_IN_ACL_AFTER_LB_SAMPLE, LS_IN_ACL_AFTER_LB_ACTION, LS_IN_PRE_NETWORK_FUNCTION, LS_IN_STATEFUL,
            LS_IN_NETWORK_FUNCTION, LS_IN_ARP_RSP, LS_IN_DHCP_OPTIONS, LS_IN_DHCP_RESPONSE, LS_IN_DNS_LOOKUP,
            LS_IN_DNS_RESPONSE, LS_IN_EXTERNAL_PORT, LS_IN_L2_LKUP, LS_IN_L2_UNKNOWN,
        ),
        ("ls", "egress"): (
            LS_OUT_LOOKUP_FDB, LS_OUT_PUT_FDB, LS_OUT_PRE_ACL, LS_OUT_PRE_LB, LS_OUT_PRE_STATEFUL,
            LS_OUT_ACL_HINT, LS_OUT_ACL_EVAL, LS_OUT_ACL_SAMPLE, LS_OUT_ACL_ACTION, LS_OUT_MIRROR, LS_OUT_QOS,
            LS_OUT_PRE_NETWORK_FUNCTION, LS_OUT_STATEFUL, LS_OUT_NETWORK_FUNCTION, LS_OUT_CHECK_PORT_SEC,
            LS_OUT_APPLY_PORT_SEC,
        ),
        ("lr", "ingress"): (
            LR_IN_ADMISSION, LR_IN_LOOKUP_NEIGHBOR, LR_IN_LEARN_NEIGHBOR, LR_IN_IP_INPUT, LR_IN_DHCP_RELAY_REQ,
            LR_IN_UNSNAT, LR_IN_POST_UNSNAT, LR_IN_DEFRAG, LR_IN_CT_EXTRACT, LR_IN_LB_AFF_CHECK, LR_IN_DNAT,
            LR_IN_LB_AFF_LEARN, LR_IN_ECMP_STATEFUL, LR_IN_ND_RA_OPTIONS, LR_IN_ND_RA_RESPONSE,
            LR_IN_IP_ROUTING_PRE, LR_IN_IP_ROUTING, LR_IN_IP_ROUTING_ECMP, LR_IN_POLICY, LR_IN_POLICY_ECMP,
            LR_IN_DHCP_RELAY_RESP_CHK, LR_IN_DHCP_RELAY_RESP, LR_IN_ARP_RESOLVE, LR_IN_CHK_PKT_LEN,
            LR_IN_LARGER_PKTS, LR_IN_GW_REDIRECT, LR_IN_NETWORK_ID, LR_IN_ARP_REQUEST,
            LR_IN_ECMP_STATEFUL_EGR,
        ),
        ("lr", "egress"): (
            LR_OUT_CHK_DNAT_LOCAL, LR_OUT_UNDNAT, LR_OUT_POST_UNDNAT, LR_OUT_SNAT, LR_OUT_POST_SNAT,
            LR_OUT_EGR_LOOP, LR_OUT_DELIVERY,
        ),
    },
    behaviours=(OVN_25_03.behaviours - {
        # 26.03 bypasses lr_in_unsnat again for a load-balancer VIP that is also a NAT external IP.
        "no_lb_unsnat_bypass",
        # lr_in_arp_request goes on to lr_in_ecmp_stateful_egr (arp_request_then_next).
        "arp_request_then_output",
        # Dynamic routing: no NAT addresses among the host routes, every neighbour's NAT rules and
        # load balancers announced.
        "dynamic_routing_host_nat",
        "dynamic_routing_peer_hides_switch_neighbours",
    }) | frozenset({
        # Fresh datapath tunnel keys: switches, then routers, each in the order of a map keyed by
        # the NB uuid's first 32 bits filled in the IDL's order (northd/build._key_order).
        "dp_keys_datapath_map_order",
        # The load balancers match a new connection's protocol and destination port on
        # reg1[16..23] / reg1[0..15], which ls_in_ct_extract / lr_in_ct_extract (100, on switches
        # with VIPs and routers with load balancers) load with ct_proto() / ct_tp_dst(); the
        # switch's fragment flows (ls_in_lb 110) match established connections only.
        "ct_extract_lb_match",
        # The new-connection ACL hints (ls_*_acl_hint 7, 6) set the commit bit (reg0[1]); the
        # allow-new ACL flows and ls_*_acl_eval 1 no longer do.
        "acl_hint_commits_new",
        # ls_*_acl_eval 65532: replies match ``ct.est && !ct.rel && ct.rpl``, related traffic
        # without ``!ct.inv``.
        "acl_ct_match_v26",
        # Network functions: ls_*_acl_eval's conntrack flows restore reg8[21] from ct_label.nf,
        # ls_*_stateful commits ct_label.nf / nf_id (110 with a network function, 100 without),
        # ls_{in,out}_pre_network_function and ls_{in,out}_network_function flows on every switch.
        "network_function",
        # Mirrors of type lport: a mp-<switch>-<sink> Port_Binding of type mirror per switch and sink
        # (northd/build.py make_mirror_ports, in _MC_flood / _MC_flood_l2), ls_in_mirror /
        # ls_out_mirror flows of the mirrored ports and their Mirror_Rules (flows/ls_mirror.py).
        "lport_mirror",
        # Logical_Router_Policy output_port (NB 7.18): a one-hop reroute leaves through that port
        # (flows/lr_policy.py); an ECMP reroute with one is left out.
        "policy_output_port",
        # Logical_Router_Policy's deprecated ``nexthop`` column is ignored (ovn-nb(5): "ignored by
        # northd"): a reroute policy with only ``nexthop`` gets no lr_in_policy flow (observed).
        "policy_nexthop_ignored",
        # Logical_Switch_Port health_checks (Logical_Switch_Port_Health_Check): Service_Monitor rows
        # of type logical-switch-port (sync/service_monitor.py), ls_in_arp_rsp 110 for their source
        # IPs, NB status written back from SB.
        "lsp_health_checks",
        # A switch port with options:receive_multicast=false is in none of its switch's multicast
        # groups (_MC_flood, _MC_flood_l2, _MC_unknown...: sync/mcast.py).
        "lsp_receive_multicast",
        # A router-type switch port with nat-addresses=router and
        # options:exclude-router-ips-from-garp=true: no nat_addresses entry for its router port's
        # own addresses (sync/ports.py).
        "exclude_router_ips_from_garp",
        # NB_Global options:acl_ct_translation=true: stateful switches' ACL eval flows tagged
        # acl_ct_translation=true, no eth.mcast pre-ACL flows (FlowCtx.acl_ct_translation).
        "acl_ct_translation",
        # Logical_Switch other_config:enable-stateless-acl-with-lb=true: VIP traffic to conntrack in
        # ls_in_pre_stateful (105, 150), stateless traffic through it on the way out (ls_out_pre_lb
        # 115, ls_out_stateful 110), ct.inv not dropped (flows/ls_acl.py, ls_lb.py).
        "stateless_acl_with_lb",
        # Load_Balancer options:distributed=true: ct_lb_mark_local with the backends' logical ports
        # (ip_port_mappings) in the switch and router VIP flows (flows/ls_lb.py lb_backends).
        "lb_distributed",
        # lr_in_ip_input: TTL-expired packets get ICMP time exceeded per port (30) and per IPv4
        # network of their source (31); the plain drop moves to 29.
        "ttl_exceeded_per_port",
        # lr_in_arp_request's flows end with ``next;`` (the stage's fallback too).
        "arp_request_then_next",
        # ls_in_l2_lkup: multicast to _MC_flood_l2 (70, IP 71) but ARP (71) and NA/RS/RA (72) to
        # _MC_flood; a network function's returning packet output as is (100); a router's own
        # ARP/NS flooding (75) for broadcasts only.
        "l2_mcast_flood_l2",
        # (with a multicast-relay router attached, eth.mcast && ip (71) is also cloned to
        # _MC_mrouter_flood.)
        # ls_in_l2_lkup 100 of a snooping switch: IGMP / MLD only when not looped back by
        # ovn-controller (flags.igmp_loopback == 0).
        "igmp_loopback_flag",
        # ls_out_pre_lb's ``ct_clear`` of router / localnet ports also resets flags.pkt_sampled.
        "pkt_sampled_flag",
        # lr_in_network_id: the next hop's network index on its output port (110) or 0 (105);
        # lb_force_snat_ip=router_ip SNATs to that network's address (lr_out_snat 110, first
        # address 105).
        "lr_network_id",
        # lb_force_snat_ip=router_ip on a gateway router: lr_in_unsnat 110 un-SNATs every address of
        # a peered port (each IPv4 network's, each non-link-local IPv6 one's), not only its first
        # per family (flows/lr_lb.py).
        "force_snat_router_ip_unsnat_all",
        # lr_in_ecmp_stateful_egr: per router port (and chassisredirect port) commit of
        # symmetric-ECMP replies (reg9[10]).
        "lr_ecmp_stateful_egr",
        # NAT on a distributed gateway port: the reverse direction's ct_snat skips replies, and a
        # dnat_and_snat rule's reverse direction is tracked and committed in the DNAT zone
        # (lr_out_post_undnat 75, lr_out_snat / lr_out_post_snat at the SNAT priority + 5).
        "dgp_nat_reply_tracked",
        # ARP requests from a switch's localnet ports go on only where a gateway (DGP's
        # chassisredirect port, gateway router port) or a distributed NAT's logical port is
        # (ls_in_check_port_sec 75, ls_in_apply_port_sec 70/75/85, reg0[22]); the DGP's
        # lr_in_lookup_neighbor ARP flows drop is_chassis_resident, and it ignores multicast NA/NS
        # elsewhere (120).
        "ext_arp_filter",
        "dgp_neighbor_lookup_anywhere",
        # Gateway MTU: lr_in_chk_pkt_len saves the conntrack state (reg4[0..7] = ct_state_save())
        # which lr_in_larger_pkts 160 tests (reg4[5] && reg4[3] && reg4[7]); ARP bypasses the
        # check (``(arp)``, ``(arp || X)``); multicast admission is not measured.
        "gateway_mtu_ct_state",
        # ECMP symmetric reply without next-hop checks: one lr_in_ecmp_stateful commit per member
        # port ((ct.new || ct.est)), replies recognised by ct_mark.ecmp_reply_port alone, symmetric
        # members marking reg9[10] for lr_in_ecmp_stateful_egr.
        "ecmp_symmetric_ct_mark",
        # ECMP symmetric reply (lr_in_ip_routing 10300) of a route whose next hop is of the other
        # family than its prefix: the source register of the next hop's family (xxreg1 for an IPv6
        # next hop), where 25.03 used the prefix's.
        "symmetric_reply_nexthop_src",
        # routing-protocols=BFD on a router port with OVN BFD sessions (an NB BFD row names it): its
        # BFD traffic is cloned to the redirect target and goes on to the router
        # (flows/ls_routing_redirect.py).
        "routing_redirect_bfd_clone",
        # Load_Balancer options:use_stateless_nat=true: the backend chosen statelessly
        # (lr_in_ct_extract 120 select into reg1[0..15], lr_in_dnat per DGP and backend), no
        # lr_in_defrag flow (flows/lr_lb.py).
        "lb_stateless_select",
        # lr_in_arp_resolve: no binding of a switch port's addresses (a VIF's, a localport's) on a
        # distributed gateway port with redirect-type=bridged.
        "bridged_dgp_no_lsp_binding",
        # IPAM visits a switch's ports in the order of a hash map of them by name (northd/ipam.py,
        # ``port_hash_order``), no longer in NB uuid order.
        "ipam_port_hash_order",
        # ls_in_arp_rsp 50: on a switch with an arp_proxy router port, unicast ARP requests to an
        # answered address's MAC (and NS to the address) go on with ``next;``.
        "arp_proxy_unicast_next",
        # debug/chassis-features-list prints ``name: value`` (no padding to 23 columns).
        "chassis_features_list_unpadded",
        # Ports of type "switch" skip conntrack as router ports do: ls_{in,out}_pre_lb 110 on every
        # switch, ls_{in,out}_pre_acl 110 with a stateful ACL, ``next;`` both ways (flows/ls_acl.py).
        "switch_port_skips_conntrack",
        # Template load balancers: backends read one by one (a ``^`` one as written, any other an
        # explicit address, mixing allowed, a bad one drops the VIP), ct_lb_mark with the NB text as
        # written, affinity flows keeping explicit backends' ports, SB vips ``[VIP6]`` bracketed
        # without a port too (northd/lb_vips.py, flows/ls_lb.py).
        "template_lb_backends_each",
        # lr_in_ip_input 100 ``ip4.dst == ^VIP`` -> next; for each template VIP of a router's load
        # balancers (flows/lr_lb.py).
        "template_vip_ip_input",
        # ---- SB tables (SB schema 21.x) ----
        # SB_Global / NB_Global options:svc_monitor_mac_dst (random unless NB sets it), also in the
        # svc_monitor_mac Address_Set.
        "svc_monitor_mac_dst",
        # Datapath_Binding nb_uuid and type; routers' external_ids:disable_garp_rarp.
        "dp_binding_nb_uuid",
        # RBAC_Permission for Learned_Route (ovn-controller inserts and updates it).
        "rbac_learned_route",
        # Load_Balancer options without hairpin_orig_tuple=true.
        "no_hairpin_orig_tuple",
        # Service_Monitor rows of load balancers' health checks say type=load-balancer.
        "service_monitor_type",
        # DNS rows with the NB row's uuid, no external_ids:dns_id, options:ovn-owned (default
        # false).
        "dns_nb_uuid",
        # Logical_DP_Group: the flows only load balancers add (on all their switches or routers at
        # once) have datapath groups of their own, apart from the other flows on the same
        # datapaths (sync/lflow_desired.py, ``FlowTable.group_owned_only``).
        "lb_flow_dp_groups",
        # Port_Binding options of a router-type switch port peering a distributed gateway port:
        # enable_router_port_acl=true when NB sets it (sync/ports.py).
        "pb_router_port_acl",
        # ACL sampling (ls_*_acl_sample): sampling actions set flags.pkt_sampled, established-session
        # sampling matches it clear; collector_set is the whole set_id (flows/acl_rules.py).
        "acl_sample_pkt_flag",
        "sample_set_id_full",
        # lr_in_ip_routing_ecmp: an ECMP group with a discard route drops on every member (25.03's
        # reference exits on such a group).
        "ecmp_discard_drops_group",
        # Dynamic routing: a learned route whose next hop is in none of its port's networks goes
        # out of that port from its first address of the next hop's family (as a static route with
        # an output port); the Learned_Route rows of a router without options:dynamic-routing are
        # deleted (and give no flow).
        "learned_route_any_nexthop",
        "learned_route_cleanup",
        # Dynamic routing's Datapath_Binding external_ids (vrf id, prefix next hops; an EVPN
        # switch's VNI and settings) and Port_Binding options:dynamic-routing-no-learning /
        # -redistribute-local-only (sync/dynamic_routing_ids.py).
        "dynamic_routing_dp_ids",
        # EVPN switches (other_config:dynamic-routing-vni): from_evpn_vtep / to_evpn_vtep and
        # remote FDB flows (flows/ls_evpn.py), SB Advertised_MAC_Binding (sync/evpn.py).
        "evpn",
    }),
    northd_internal_version="26.03.1-21.8.0-82.14",
    # (observed: flows of a 23.03 ovn-controller, which announces none of them: 25.03's and
    # ct-state-save)
    chassis_features=(*OVN_25_03.chassis_features, "ct_state_save"),
    # (debug/chassis-features-list prints every one of them: observed, unpadded)
    chassis_features_listed=(*OVN_25_03.chassis_features, "ct_state_save"),
)

DEFAULT_PROFILE = OVN_23_03

__all__ = [
    "DEFAULT_PROFILE",
    "OVN_23_03",
    "OVN_25_03",
    "OVN_26_03",
    "FlowProfile",
    "StageNotInProfile",
    "StageTable",
    "table_id_of",
]
