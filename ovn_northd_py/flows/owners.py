"""Flow owners: which NB entity produced a flow, so that incremental processing can drop and rebuild
exactly that entity's flows (:meth:`~ovn_northd_py.lflow.table.FlowTable.remove_owner`).

Every flow builder adds its flows with one of these owners (a tuple whose first item names the
kind); nothing else is an owner of a built flow.

==================  =======================================  ==============================  ===========================
kind                owner                                    flows                           built / rebuilt by
==================  =======================================  ==============================  ===========================
datapath            ``("dp", datapath key)``                 datapath-wide flows of a        ``flows.build_datapath_flows``
                                                             switch or router
port                ``("port", port name)``                  one port's flows (switch,       ``flows.build_port_flows``
                                                             router, chassisredirect)
switch LB           ``("lb", lb uuid)``                      a load balancer's flows on all  :mod:`.ls_lb`
                                                             the switches using it
router LB           ``("lb", lb uuid, router key)``          a load balancer's flows on one  :mod:`.lr_lb`, :mod:`.lr_nat`
                                                             router
ACL                 ``("acl", acl uuid, switch key)``        one ACL's flows on one switch   :mod:`.acl_rules`
QoS                 ``("qos", qos uuid, switch key)``        one QoS row's flows on one      :mod:`.ls_qos`
                                                             switch
static route        ``("route", route uuid)``                one static route's flows (an    :mod:`.lr_routing`
                                                             ECMP group's: its first route)
policy              ``("policy", policy uuid)``              one routing policy's flows      :mod:`.lr_policy`
NAT                 ``("nat", nat uuid)``                    one NAT rule's flows            :mod:`.lr_nat`
==================  =======================================  ==============================  ===========================

Keys are text: a datapath's key is its NB uuid (``Datapath.key``), a port's its name, every other
kind names its NB row's uuid.  (The flow table itself accepts any hashable owner; its unit tests use
others.)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final, Literal

from ..lflow.table import FlowTable
from ..northd.model import Datapath, Port

OWNER_DP: Final = "dp"
OWNER_PORT: Final = "port"
OWNER_LB: Final = "lb"
OWNER_ACL: Final = "acl"
OWNER_QOS: Final = "qos"
OWNER_ROUTE: Final = "route"
OWNER_POLICY: Final = "policy"
OWNER_NAT: Final = "nat"
OWNER_DHCP_RELAY: Final = "dhcp_relay"

OwnerKind = Literal["dp", "port", "lb", "acl", "qos", "route", "policy", "nat", "dhcp_relay"]

DpOwner = tuple[Literal["dp"], str]
PortOwner = tuple[Literal["port"], str]
SwitchLbOwner = tuple[Literal["lb"], str]
RouterLbOwner = tuple[Literal["lb"], str, str]
AclOwner = tuple[Literal["acl"], str, str]
QosOwner = tuple[Literal["qos"], str, str]
RouteOwner = tuple[Literal["route"], str, str]
PolicyOwner = tuple[Literal["policy"], str, str]
NatOwner = tuple[Literal["nat"], str, str]
DhcpRelayOwner = tuple[Literal["dhcp_relay"], str]  # a switch's DHCP relay (25.03), by switch key

Owner = (
    DpOwner | PortOwner | SwitchLbOwner | RouterLbOwner | AclOwner | QosOwner | RouteOwner | PolicyOwner | NatOwner
    | DhcpRelayOwner
)


# Owners whose flows the reference adds to a datapath bitmap at once (a load balancer's, on all
# its switches or routers) rather than datapath by datapath: a release with the
# ``lb_flow_dp_groups`` behaviour keeps flows only they add in datapath groups of their own.
GROUP_OWNER_KINDS: Final = frozenset({OWNER_LB})


def new_flow_table(capacity: int = 0) -> FlowTable:
    """A flow table for the builders (counting the references of :data:`GROUP_OWNER_KINDS`, each
    scoped by :func:`group_scope`)."""
    return FlowTable(capacity, GROUP_OWNER_KINDS, group_scope)


def dp_owner(dp: Datapath) -> DpOwner:
    return (OWNER_DP, dp.key)


def port_owner(port: Port) -> PortOwner:
    return (OWNER_PORT, port.name)


def switch_lb_owner(lb_key: str) -> SwitchLbOwner:
    return (OWNER_LB, lb_key)


def router_lb_owner(lb_key: str, router_key: str) -> RouterLbOwner:
    return (OWNER_LB, lb_key, router_key)


def group_scope(owner: Hashable) -> Hashable:
    """The datapath key that holds every flow of a group owner, when there is one: the router of a
    load balancer's per-router flows (built on that router's datapath alone: :func:`router_lb_owner`);
    None for a load balancer's switch flows (on all its switches).  Purging deleted datapaths
    (:meth:`FlowTable.purge_datapaths` with their keys as ``scopes``) scans no other router's."""
    if type(owner) is tuple and len(owner) == 3 and owner[0] == OWNER_LB:
        return owner[2]
    return None


def acl_owner(acl_key: str, dp_key: str) -> AclOwner:
    return (OWNER_ACL, acl_key, dp_key)


def qos_owner(qos_key: str, dp_key: str) -> QosOwner:
    return (OWNER_QOS, qos_key, dp_key)


def route_owner(uuid: str, router_key: str) -> RouteOwner:
    """A static route's flows on one router (a route row may be listed by several routers)."""
    return (OWNER_ROUTE, uuid, router_key)


def policy_owner(uuid: str, router_key: str) -> PolicyOwner:
    """A policy's flows on one router (a policy row may be listed by several routers)."""
    return (OWNER_POLICY, uuid, router_key)


def nat_owner(nat_key: str, router_key: str) -> NatOwner:
    """A NAT rule's flows on one router (a NAT row may be listed by several routers)."""
    return (OWNER_NAT, nat_key, router_key)


def dhcp_relay_owner(switch_key: str) -> DhcpRelayOwner:
    return (OWNER_DHCP_RELAY, switch_key)
