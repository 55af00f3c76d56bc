"""Incremental handling of DHCP relay (25.03: ``DHCP_Relay`` rows, ``Logical_Router_Port.dhcp_relay``).

A switch's relay flows (:mod:`ovn_northd_py.flows.dhcp_relay`, owner ``("dhcp_relay", switch
key)``) read the relay row, the router port naming it, the switch's VIFs and the router port's
addresses.  Any change to the relay rows or to a router port's ``dhcp_relay`` column
(``on_nb_flows``), or any port / attachment change of an incremental northd run
(``on_northd_flows``), rebuilds the relay flows of every switch: they are few (a handful of
flows per switch with ``other_config:dhcp_relay_port``), and a switch's ``other_config``
change recomputes anyway.
"""

from __future__ import annotations

from ..flows import build_port_flows
from ..flows.dhcp_relay import build_switch_dhcp_relay_flows
from ..flows.owners import dhcp_relay_owner, port_owner
from ..ovsdb.connection import RowChange
from .features import FlowFeatureCtx


def _rebuild_all(h: FlowFeatureCtx) -> None:
    for dp in h.nd.by_index:
        if dp.is_switch:
            h.table.remove_owner(dhcp_relay_owner(dp.key))
            build_switch_dhcp_relay_flows(dp, h.fctx, h.table)


def on_nb_flows(_changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    """DHCP_Relay rows or a router port's ``dhcp_relay`` changed: the relay flows, and the port
    flows of the switches naming a relay port (whether they answer DHCP themselves follows)."""
    _rebuild_all(h)
    for dp in h.nd.by_index:
        if dp.is_switch and dp.nb.other_config.get("dhcp_relay_port"):
            h.fctx.forget(dp.key)
            for port in dp.ports:
                h.table.remove_owner(port_owner(port))
                build_port_flows(port, h.fctx, h.table)
    return True


def on_northd_flows(_changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    """Ports added, changed or deleted, routers attached or changed: relay flows may differ."""
    if h.tracked is not None and h.tracked:
        _rebuild_all(h)
    return True
