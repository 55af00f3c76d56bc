"""External ports: ``ls_in_external_port`` (the priority-0 fallback is in :mod:`.defaults`).

Traffic of an ``external`` port enters through a localnet port; only the chassis that
claimed the external port (its HA chassis group's active member) may answer it.
Observed on the reference (23.03), for every external port -- enabled or not, with or
without an HA chassis group -- and every localnet port of its switch, for each MAC of
its addresses, and for each router-type port of the switch whose router port exists
(its addresses as :mod:`.lsp_addrs` reads them): drop, where the external port is not
resident, ARP requests for each IPv4 address and neighbour solicitations for each IPv6
address of the router-type port, and anything sent to its MAC (100).

Its DHCP flows are in :mod:`.ls_dhcp`.
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_EXTERNAL_PORT
from ..lflow.table import FlowTable
from ..northd.model import Port
from .context import FlowCtx, hint
from .ls_arp_rsp import nd_ns_match
from .ls_l2 import peer_router_port
from .lsp_addrs import lsp_addresses
from .owners import port_owner


def build_lsp_external_port_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of one external port (they read its switch's localnet and router-type ports)."""
    if port.kind != "lsp" or port.sb_type != "external":
        return
    macs = [e.ea_s for e in lsp_addresses(port)]
    if not macs:
        return
    localnets = [p.name for p in port.dp.ports if p.kind == "lsp" and p.sb_type == "localnet"]
    routers = [p for p in port.dp.ports if p.is_router_lsp and peer_router_port(p) is not None]
    if not localnets or not routers:
        return
    router_entries = [e for rp in routers for e in lsp_addresses(rp)]
    not_resident = f'!is_chassis_resident("{port.name}")'
    i, owner, h = port.dp.index, port_owner(port), hint(port.nb_key)
    for ln in localnets:
        for mac in macs:
            head = f'inport == "{ln}" && eth.src == {mac}'
            for entry in router_entries:
                for n4 in entry.ipv4:
                    match = f"{head} && {not_resident} && arp.tpa == {n4.addr_s} && arp.op == 1"
                    table.add(i, LS_IN_EXTERNAL_PORT, 100, match, "drop;", hint=h, owner=owner, io_port=ln)
                for n6 in entry.ipv6:
                    match = f"{head} && {not_resident} && {nd_ns_match(n6.addr_s, n6.sn_addr_s)}"
                    table.add(i, LS_IN_EXTERNAL_PORT, 100, match, "drop;", hint=h, owner=owner, io_port=ln)
                match = f"{head} && eth.dst == {entry.ea_s} && {not_resident}"
                table.add(i, LS_IN_EXTERNAL_PORT, 100, match, "drop;", hint=h, owner=owner, io_port=ln)
