"""Control plane protection (NB ``Copp``): the controller meter of a datapath's flows of one kind.

Observed on the reference (23.03): a switch's or router's ``copp`` names, per protocol
(``arp``, ``nd-na``, ``dhcpv4-opts``, ``dns``, ``igmp``, ``svc-monitor``, ``reject``, ...),
an NB Meter; flows of that kind carry it as their ``controller_meter`` only while a Meter
of that name exists.  On a switch: ``nd-na`` meters the ports' ``nd_na`` / ``nd_na_router`` answers (not the
ARP answers: ``arp`` is a router meter), ``dhcpv4-opts`` / ``dhcpv6-opts`` the ``put_dhcp_opts`` /
``put_dhcpv6_opts`` flows, ``dns`` the ``dns_lookup`` flow, ``igmp`` the IGMP/MLD snooping
flows, ``svc-monitor`` the ``handle_svc_check`` flow, ``reject`` the ACL rejects.  On a router:
``arp`` / ``nd-na`` / ``nd-ns`` the ``lr_in_learn_neighbor`` ``put_arp`` / ``put_nd`` flows,
``nd-na`` also the ``nd_na_router`` / ``nd_na`` answers (own addresses, load-balancer VIPs),
``arp-resolve`` / ``nd-ns-resolve`` the ``lr_in_arp_request`` ARP requests and solicitations (the
static routes' too), ``tcp-reset`` the TCP resets and SCTP aborts, ``icmp4-error`` /
``icmp6-error`` the other ICMP errors (unreachable, TTL exceeded, too big in ``lr_in_ip_input``
and ``lr_in_larger_pkts``), ``nd-ra-opts`` ``put_nd_ra_opts``, ``bfd`` ``handle_bfd_msg``,
``reject`` load balancers' reject VIPs (switches and routers), ``event-elb`` the load balancers'
``trigger_event`` flows (``ls_in_pre_lb`` / ``lr_in_dnat`` 130, :func:`.ls_lb.raises_event`).

Flows reading it depend on the datapath's ``copp`` and the Copp row (changes recompute) and
on which NB meters exist (the ACL feature recomputes when that set changes while a Copp is
in use).
"""

from __future__ import annotations

from ..northd.model import Datapath
from ..ovsdb.columns import opt
from .context import FlowCtx


def copp_meter(dp: Datapath, ctx: FlowCtx, proto: str) -> str | None:
    """The datapath's Copp meter for ``proto`` (e.g. "reject"), if that NB Meter exists."""
    copp = opt(getattr(dp.nb, "copp", None))
    if copp is None:
        return None
    meter = copp.meters.get(proto)
    return meter if meter and meter in ctx.acl.meters else None
