"""Router ingress ``lr_in_nd_ra_options`` and ``lr_in_nd_ra_response`` (IPv6 router advertisements).

Observed on the reference (priority-0 fallbacks in :mod:`.defaults`): a router port
P with a peer, at least one configured IPv6 network and
``ipv6_ra_configs:address_mode`` one of ``slaac``, ``dhcpv6_stateful``,
``dhcpv6_stateless`` answers router solicitations sent to ``ff02::2`` (50):
``put_nd_ra_opts`` with the address mode, P's MAC, then a positive ``mtu``,
``router_preference`` unless absent or ``MEDIUM`` (any other value as is), ``rdnss``,
``dnssl`` and ``route_info`` when present (even empty), and
one ``prefix`` per configured IPv6 network; the response stage sends the
advertisement back from P's MAC and link-local address (50).
"""

from __future__ import annotations

from ..lflow.stages import LR_IN_ND_RA_OPTIONS, LR_IN_ND_RA_RESPONSE
from ..lflow.table import FlowTable
from ..northd.model import Port
from .context import FlowCtx
from .copp import copp_meter
from .lr_common import lrp_hint, net_s, port_nets
from .owners import port_owner
from .registers import REGBIT_ND_RA_OPTS_RESULT

ADDRESS_MODES = frozenset({"slaac", "dhcpv6_stateful", "dhcpv6_stateless"})


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def build_lrp_nd_ra_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    if port.kind != "lrp" or port.peer is None:
        return
    cfg = port.nb.ipv6_ra_configs
    mode = cfg.get("address_mode")
    nets = port_nets(port, ctx)
    if mode not in ADDRESS_MODES or nets is None or len(nets.ipv6) < 2:
        return
    opts = [f'addr_mode = "{mode}"', f"slla = {nets.ea_s}"]
    mtu = _int_or_none(cfg.get("mtu"))
    if mtu is not None and mtu > 0:
        opts.append(f"mtu = {mtu}")
    pref = cfg.get("router_preference", "MEDIUM")
    if pref != "MEDIUM":
        opts.append(f'router_preference = "{pref}"')
    for key, quoted in (("rdnss", False), ("dnssl", True), ("route_info", True)):
        value = cfg.get(key)
        if value is not None:
            opts.append(f'{key} = "{value}"' if quoted else f"{key} = {value}")
    opts += [f"prefix = {net_s(n)}" for n in nets.ipv6[:-1]]
    owner = port_owner(port)
    h = lrp_hint(port)
    i = port.dp.index
    head = f'inport == "{port.name}" && ip6.dst == ff02::2'
    table.add(
        i,
        LR_IN_ND_RA_OPTIONS,
        50,
        f"{head} && nd_rs",
        f"{REGBIT_ND_RA_OPTS_RESULT} = put_nd_ra_opts({', '.join(opts)}); next;",
        hint=h,
        owner=owner,
        controller_meter=copp_meter(port.dp, ctx, "nd-ra-opts"),
    )
    actions = (
        f"eth.dst = eth.src; eth.src = {nets.ea_s}; ip6.dst = ip6.src; ip6.src = {nets.lla.addr_s}; "
        "outport = inport; flags.loopback = 1; output;"
    )
    table.add(i, LR_IN_ND_RA_RESPONSE, 50, f"{head} && nd_ra && {REGBIT_ND_RA_OPTS_RESULT}", actions, hint=h, owner=owner)
