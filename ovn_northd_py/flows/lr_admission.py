"""Router ingress ``lr_in_admission`` (L2 admission control).

Observed on the reference (the priority-0 drop is in :mod:`.defaults`):

* every router: VLAN-tagged packets and multicast source MACs are dropped (100);
* every enabled router port P with MAC E: ``eth.mcast && inport == P`` and
  ``eth.dst == E && inport == P`` (50) store E in ``xreg0[0..47]``; on a distributed
  gateway port the ``eth.dst`` flow also requires ``is_chassis_resident("cr-P")``
  unless P's switch has a ``vtep`` port.  With ``options:gateway_mtu=M`` (any router)
  both flows first set ``reg9[1] = check_pkt_larger(M + 14)``; with
  ``options:gateway_mtu_bypass=X`` as well, priority-55 copies matching ``&& (X)``
  skip the check.

With the ``pmtud_tunnel_rx`` behaviour (25.03): ICMP "fragmentation needed" / "packet too big"
errors received from a tunnel (``flags.tunnel_rx == 1``) are dropped (110), except on a
distributed gateway port's MAC where its chassis-redirect port is not resident: those turn
back, entering as from that port (120).
"""

from __future__ import annotations

from ..lflow.stages import LR_IN_ADMISSION
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Port
from .context import FlowCtx
from .lr_common import gateway_mtu, gateway_mtu_bypass, has_vtep_lports, lrp_hint, pkt_larger_len, port_nets
from .owners import dp_owner, port_owner
from .registers import REG_INPORT_ETH_ADDR, REGBIT_PKT_LARGER

PMTUD_ICMP = "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0))"
TUNNEL_RX = "flags.tunnel_rx == 1"


def build_lr_admission_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    table.add(
        router.index, LR_IN_ADMISSION, 100, "vlan.present || eth.src[40]", "drop;", owner=dp_owner(router)
    )
    if ctx.profile.has("pmtud_tunnel_rx"):
        table.add(router.index, LR_IN_ADMISSION, 110, f"{PMTUD_ICMP} && {TUNNEL_RX}", "drop;", owner=dp_owner(router))


def build_lrp_admission_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    if port.kind != "lrp" or not port.enabled:
        return
    nets = port_nets(port, ctx)
    if nets is None:
        return
    mac = nets.ea_s
    store = f"{REG_INPORT_ETH_ADDR} = {mac}; next;"
    mtu = gateway_mtu(port)
    actions = f"{REGBIT_PKT_LARGER} = check_pkt_larger({pkt_larger_len(port, mtu, ctx)}); {store}" if mtu else store
    unicast = f'eth.dst == {mac} && inport == "{port.name}"'
    if port.crp is not None and not has_vtep_lports(port, ctx):
        unicast += f' && is_chassis_resident("{port.crp.name}")'
    mcast = f'eth.mcast && inport == "{port.name}"'
    owner = port_owner(port)
    h = lrp_hint(port)
    i = port.dp.index
    if port.crp is not None and ctx.profile.has("pmtud_tunnel_rx"):
        match = f'{PMTUD_ICMP} && eth.dst == {mac} && !is_chassis_resident("{port.crp.name}") && {TUNNEL_RX}'
        table.add(i, LR_IN_ADMISSION, 120, match, f'outport <-> inport; inport = "{port.name}"; next;',
                  hint=h, owner=owner)
    # 26.03 (gateway_mtu_ct_state): multicast is not measured (nor bypassed).
    unicast_only = ctx.profile.has("gateway_mtu_ct_state")
    table.add(i, LR_IN_ADMISSION, 50, unicast, actions, hint=h, owner=owner)
    table.add(i, LR_IN_ADMISSION, 50, mcast, store if unicast_only else actions, hint=h, owner=owner)
    bypass = gateway_mtu_bypass(port, ctx) if mtu else None
    if bypass:
        for match in (unicast,) if unicast_only else (unicast, mcast):
            table.add(i, LR_IN_ADMISSION, 55, f"{match} && ({bypass})", store, hint=h, owner=owner)
