"""The addresses a switch port owns, as the ARP/ND responder, DHCP and external-port flows read them.

Observed on the reference (23.03):

* each ``addresses`` entry ``"MAC [IP ...]"`` is read leniently: the MAC (any case,
  printed lower-case) and the IPs before the first bad token (``"<mac> 10.0.0.1 foo
  10.0.0.11"`` owns 10.0.0.1 only; a prefix such as ``10.0.0.1/24`` is allowed and
  dropped when printed; IPv6 addresses print as glibc ``inet_ntop`` does);
* a ``dynamic`` entry stands for the addresses IPAM assigned (``dynamic_addresses``);
* ``router`` on a router-type port stands for its router port's MAC and networks,
  the EUI-64 link-local address included -- when the router port exists and its
  router is enabled; elsewhere ``router`` and ``unknown`` own nothing.

Not reproduced: the reference's scanf artefacts on malformed IPv4 text (``010.0.0.4``
is 10.0.0.4 for both, but ``10.0.0.300`` reads as 10.0.0.44 there and stops the
entry here); see :mod:`ovn_northd_py.northd.addresses`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ..northd.addresses import LportAddresses, extract_lport_addresses, is_dynamic_address
from ..northd.model import Port
from .ls_l2 import peer_router_port
from .router_addrs import lrp_networks


def router_lsp_addresses(port: Port) -> LportAddresses | None:
    """What ``router`` in the addresses of a router-type port stands for (None: nothing)."""
    lrp = peer_router_port(port)
    if lrp is None:
        return None
    nets = lrp_networks(lrp)
    if nets is None:
        return None
    return LportAddresses("router", nets.mac, nets.ipv4, nets.ipv6)


def lsp_addresses(port: Port) -> list[LportAddresses]:
    """The (MAC, IPs) entries switch port ``port`` owns, in ``addresses`` order."""
    out: list[LportAddresses] = []
    dynamic_seen = False
    for entry in port.nb.addresses:
        if entry == "unknown":
            continue
        if entry == "router":
            if port.is_router_lsp:
                rtr = router_lsp_addresses(port)
                if rtr is not None:
                    out.append(rtr)
            continue
        if is_dynamic_address(entry):
            if not dynamic_seen and port.dynamic_addresses:
                parsed = extract_lport_addresses(port.dynamic_addresses).addresses
                if parsed is not None:
                    out.append(parsed)
            dynamic_seen = True
            continue
        parsed = extract_lport_addresses(entry).addresses
        if parsed is not None:
            out.append(parsed)
    return out


def lsp_health_checks(port: Port) -> list[Any]:
    """Behaviour ``lsp_health_checks`` (26.03): the health checks of switch port ``port`` whose
    ``address`` is one of the port's own IPs (observed: a check of an address the port does not
    have, or of a port without addresses, gets no Service_Monitor row and no ARP reply flow; OVN
    26.03's ovn-northd.at "Logical Switch Port Health Check - lflow/service monitor
    synchronization")."""
    checks = getattr(port.nb, "health_checks", ())
    if not checks:
        return []
    own: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    for e in lsp_addresses(port):
        own.update(ipaddress.ip_address(n.addr_s) for n in e.ipv4)
        own.update(ipaddress.ip_address(n.addr_s) for n in e.ipv6)
    out = []
    for hc in checks:
        try:
            if ipaddress.ip_address(str(hc.address).strip("[]")) in own:
                out.append(hc)
        except ValueError:
            continue
    return out
