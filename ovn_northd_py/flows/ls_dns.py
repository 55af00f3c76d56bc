"""Native DNS: ``ls_in_dns_lookup`` and ``ls_in_dns_response`` (fallbacks in :mod:`.defaults`).

Observed on the reference (23.03): a switch one of whose ``dns_records`` rows has at
least one record looks up every ``udp.dst == 53`` packet (100) and answers successful
lookups from the packet's inport, one flow for IPv4 and one for IPv6 (100, same match).
No stage-hint.  The records themselves reach ovn-controller through the SB ``DNS`` table
(:mod:`ovn_northd_py.sync.dns`).
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_DNS_LOOKUP, LS_IN_DNS_RESPONSE
from ..lflow.table import FlowTable
from ..northd.model import Datapath
from .context import FlowCtx
from .copp import copp_meter
from .owners import dp_owner
from .registers import REGBIT_DNS_LOOKUP_RESULT


def switch_has_dns_records(dp: Datapath) -> bool:
    return dp.is_switch and any(row.records for row in dp.nb.dns_records)


def build_ls_dns_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """DNS lookup and response flows of a switch with DNS records."""
    if not switch_has_dns_records(dp):
        return
    owner = dp_owner(dp)
    i = dp.index
    table.add(
        i, LS_IN_DNS_LOOKUP, 100, "udp.dst == 53", f"{REGBIT_DNS_LOOKUP_RESULT} = dns_lookup(); next;", owner=owner,
        controller_meter=copp_meter(dp, ctx, "dns"),
    )
    match = f"udp.dst == 53 && {REGBIT_DNS_LOOKUP_RESULT}"
    for ip in ("ip4", "ip6"):
        action = (
            f"eth.dst <-> eth.src; {ip}.src <-> {ip}.dst; udp.dst = udp.src; udp.src = 53; "
            "outport = inport; flags.loopback = 1; output;"
        )
        table.add(i, LS_IN_DNS_RESPONSE, 100, match, action, owner=owner)
