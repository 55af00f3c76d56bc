"""Switch port security: ``ls_in_check_port_sec``, ``ls_in_apply_port_sec``, ``ls_out_check_port_sec``,
``ls_out_apply_port_sec``.

In OVN 23.03 the port_security rules themselves are enforced by ovn-controller
(``check_in_port_sec()`` / ``check_out_port_sec()`` read Port_Binding.port_security),
so the logical flows only set and test ``REGBIT_PORT_SEC_DROP``.  Observed on the reference:

* every switch: drop VLAN-tagged frames (unless ``other_config:vlan-passthru`` is
  true, any case) and multicast source MACs (100), check
  ingress port security for everything else (50, not 1 as ``man ovn-northd`` says),
  drop when the bit is set (50 on both apply stages), skip the egress check for
  multicast destinations (100);
* a disabled port (any type but ``external``): ``inport == P`` sets the drop bit (100);
* an enabled ``vtep`` port: skips to ``ls_in_hairpin`` marking the packet as coming from a
  RAMP switch (70) -- the man page says the L2 lookup table, the reference jumps to
  the hairpin stage; a switch with any ``vtep`` port (enabled or not) sends such packets
  on from ``ls_in_hairpin`` to ``ls_in_l2_lkup`` (1000, a datapath flow: it reads the ports);
* port security counts (no MAC learning, :mod:`.ls_fdb`) only through entries that begin with a
  MAC, read as leniently as ``addresses`` (:func:`has_port_security`): a port whose entries are all
  unusable (``""``, ``"bogus"``) learns MACs like a port without port security, while
  ``"<mac> foo"`` or ``"<mac> 10.0.0.300"`` count;
* an enabled port whose Port_Binding has ``options:qdisc_queue_id`` (the NB option copied
  verbatim, not validated; or 1, chosen by northd for a localnet port with QoS parameters): the
  same flow prefixed with ``set_queue(ID);`` (70; vtep ports get the prefix on their flow);
  on a localnet port also the egress ``outport == P`` -> ``set_queue(ID); output;`` (100).
"""

from __future__ import annotations

from typing import Final

from ..lflow.stages import (
    LS_IN_APPLY_PORT_SEC,
    LS_IN_ARP_RSP,
    LS_IN_CHECK_PORT_SEC,
    LS_IN_HAIRPIN,
    LS_IN_L2_LKUP,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_CHECK_PORT_SEC,
)
from ..lflow.table import FlowTable
from ..northd.addresses import AddressError, extract_lport_addresses, parse_mac
from ..northd.build import QOS_QUEUES, first_localnet
from ..northd.model import Datapath, Port
from ..northd.nat_rules import valid_nats
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .lr_common import parse_ip_strict, router_info
from .ls_l2 import peer_router_port
from .lsp_addrs import lsp_addresses
from .owners import dp_owner, port_owner
from .registers import REGBIT_EXT_ARP, REGBIT_FROM_RAMP, REGBIT_FROM_ROUTER_PORT, REGBIT_PORT_SEC_DROP
from .router_addrs import lrp_networks

CHECK_IN_PORT_SEC = f"{REGBIT_PORT_SEC_DROP} = check_in_port_sec(); next;"
# Behaviour "pmtud_tunnel_rx" (25.03): ICMP "fragmentation needed" / "packet too big" errors.
PMTUD: Final = "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0))"
TUNNEL_RX: Final = "flags.tunnel_rx == 1"


def has_port_security(port: Port) -> bool:
    """Does one of the port's ``port_security`` entries begin with a MAC (the reference skips the others)?"""
    return any(extract_lport_addresses(entry).addresses is not None for entry in port.nb.port_security)


def build_ls_port_sec_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The datapath-wide port-security flows of a switch (the egress check's fallback is a default)."""
    owner = dp_owner(dp)
    i = dp.index
    if dp.nb.other_config.get("vlan-passthru", "").lower() != "true":
        table.add(i, LS_IN_CHECK_PORT_SEC, 100, "vlan.present", "drop;", owner=owner)
    table.add(i, LS_IN_CHECK_PORT_SEC, 100, "eth.src[40]", "drop;", owner=owner)
    table.add(i, LS_IN_CHECK_PORT_SEC, 50, "1", CHECK_IN_PORT_SEC, owner=owner)
    table.add(i, LS_IN_APPLY_PORT_SEC, 50, f"{REGBIT_PORT_SEC_DROP} == 1", "drop;", owner=owner)
    table.add(i, LS_OUT_CHECK_PORT_SEC, 100, "eth.mcast", f"{REGBIT_PORT_SEC_DROP} = 0; next;", owner=owner)
    table.add(i, LS_OUT_APPLY_PORT_SEC, 50, f"{REGBIT_PORT_SEC_DROP} == 1", "drop;", owner=owner)
    if ctx.profile.has("pmtud_tunnel_rx"):
        table.add(i, LS_IN_CHECK_PORT_SEC, 105, f"{PMTUD} && {TUNNEL_RX}", "drop;", owner=owner)
    if any(p.sb_type == "vtep" for p in dp.ports if p.kind == "lsp"):
        if ctx.profile.has("arp_rsp_skip_ramp"):
            table.add(i, LS_IN_ARP_RSP, 65535, f"{REGBIT_FROM_RAMP} == 1 && (arp || nd_ns)",
                      "flags.loopback = 1; next;", owner=owner)
        table.add(i, LS_IN_HAIRPIN, 1000, f"{REGBIT_FROM_RAMP} == 1",
                  f"next(pipeline=ingress, table={ctx.profile.table_id(LS_IN_L2_LKUP)});", owner=owner)
        # From the VTEP switch, to a distributed gateway port resident here: ARP/ND hairpin.
        for p in dp.ports:
            rp = p.peer if p.kind == "lsp" and p.is_router_lsp else None
            if rp is not None and rp.kind == "lrp" and rp.crp is not None:
                table.add(i, LS_IN_HAIRPIN, 2000, f'{REGBIT_FROM_RAMP} == 1 && is_chassis_resident("{rp.crp.name}")',
                          "next;", owner=owner)


def ext_arp_resident(port: Port, ctx: FlowCtx) -> str | None:
    """Behaviour ``ext_arp_filter`` (26.03): where ARP requests from the switch's localnet ports may
    be answered for router-type switch port ``port``: its peer's chassisredirect port (a
    distributed gateway port) or the peer itself (on a gateway router); None otherwise."""
    rp = peer_router_port(port)
    if rp is None:
        return None
    if rp.crp is not None:
        return rp.crp.name
    return rp.name if router_info(rp.dp, ctx).is_gateway else None


def ext_arp_allowed(port: Port, ctx: FlowCtx) -> list[tuple[int, str]]:
    """Behaviour ``ext_arp_filter`` (26.03, observed): the ``ls_in_apply_port_sec`` (priority,
    match) pairs that let localnet ARP requests through for router-type switch port ``port``:
    where its gateway is resident (75, :func:`ext_arp_resident`) and, when its router has a
    distributed gateway port (whichever port of it this is), for the external IP of each
    distributed dnat_and_snat rule of the router (``external_mac`` and ``logical_port``, an IPv4
    external IP that parses) where that logical port is (85)."""
    rp = peer_router_port(port)
    if rp is None:
        return []
    out: list[tuple[int, str]] = []
    resident = ext_arp_resident(port, ctx)
    if resident is not None:
        out.append((75, f'{REGBIT_EXT_ARP} == 1 && is_chassis_resident("{resident}")'))
    if not router_info(rp.dp, ctx).dgps:
        return out
    for nat in valid_nats(rp.dp, ctx.profile):
        lport, mac = opt(nat.logical_port), opt(nat.external_mac)
        ext = str(nat.external_ip).strip()
        if nat.type != "dnat_and_snat" or not lport or not mac or ":" in ext:
            continue
        if parse_ip_strict(ext) is None:  # (observed: not for an external IP that does not parse)
            continue
        try:
            parse_mac(str(mac).lstrip())
        except AddressError:
            continue
        out.append((85, f'{REGBIT_EXT_ARP} == 1 && arp.tpa == {ext} && is_chassis_resident("{lport}")'))
    return out


# The ports whose ARP requests come from outside (observed: l2gateway ports as localnet ones).
_EXT_ARP_PORT_TYPES = ("localnet", "l2gateway")


def _filters_ext_arp(dp: Datapath, ctx: FlowCtx) -> bool:
    """Does switch ``dp`` filter its localnet (and l2gateway) ports' ARP requests: it has such ports and a
    router port whose gateway is resident somewhere (:func:`ext_arp_resident`; observed: a
    ``reside-on-redirect-chassis`` port alone does not make it filter)."""
    return (any(p.kind == "lsp" and p.sb_type in _EXT_ARP_PORT_TYPES for p in dp.ports)
            and any(p.is_router_lsp and ext_arp_resident(p, ctx) is not None for p in dp.ports if p.kind == "lsp"))


def build_ls_ext_arp_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Behaviour ``ext_arp_filter`` (26.03, observed; ``man ovn-northd`` ingress table 0): on a
    switch that filters them (:func:`_filters_ext_arp`), ARP requests from its localnet ports are
    marked (``ls_in_check_port_sec`` 75: ``reg0[22] = 1``) and dropped where no router port lets them
    through (``ls_in_apply_port_sec`` 70, :func:`ext_arp_allowed`)."""
    if not ctx.profile.has("ext_arp_filter") or not _filters_ext_arp(dp, ctx):
        return
    owner = dp_owner(dp)
    for p in dp.ports:
        if p.kind == "lsp" and p.sb_type in _EXT_ARP_PORT_TYPES:
            table.add(dp.index, LS_IN_CHECK_PORT_SEC, 75, f'arp.op == 1 && inport == "{p.name}"',
                      f"{REGBIT_EXT_ARP} = 1; next;", owner=owner)
    table.add(dp.index, LS_IN_APPLY_PORT_SEC, 70, f"{REGBIT_EXT_ARP} == 1", "drop;", owner=owner,
              sample_drop=False)  # (observed: never a debug drop sample)


def build_lsp_ext_arp_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Behaviour ``ext_arp_filter`` (26.03): a router-type port's :func:`ext_arp_allowed` flows, on a
    switch that filters localnet ARP requests."""
    if port.kind != "lsp" or not port.is_router_lsp or not ctx.profile.has("ext_arp_filter"):
        return
    if not _filters_ext_arp(port.dp, ctx):
        return
    for prio, match in ext_arp_allowed(port, ctx):
        table.add(port.dp.index, LS_IN_APPLY_PORT_SEC, prio, match, "next;", owner=port_owner(port))


def build_lsp_port_sec_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Per-port flows: disabled ports, VTEP ports, queue ids."""
    if port.kind != "lsp":
        return
    owner = port_owner(port)
    h = hint(port.nb_key)
    i = port.dp.index
    inport = f'inport == "{port.name}"'
    if ctx.profile.has("pmtud_tunnel_rx"):
        build_lsp_pmtud_flows(port, ctx, table)
    if not port.enabled and port.sb_type != "external":
        table.add(
            i, LS_IN_CHECK_PORT_SEC, 100, inport, f"{REGBIT_PORT_SEC_DROP} = 1; next;", hint=h, owner=owner,
            io_port=port.name,
        )
        return
    queue_id = port.options.get("qdisc_queue_id")  # the Port_Binding's (northd may have chosen it)
    set_queue = f"set_queue({queue_id}); " if queue_id is not None else ""
    if port.sb_type == "vtep":
        skip = f"{REGBIT_FROM_RAMP} = 1; next(pipeline=ingress, table={ctx.profile.table_id(LS_IN_HAIRPIN)});"
        table.add(i, LS_IN_CHECK_PORT_SEC, 70, inport, set_queue + skip, hint=h, owner=owner, io_port=port.name)
    elif set_queue:
        table.add(i, LS_IN_CHECK_PORT_SEC, 70, inport, set_queue + CHECK_IN_PORT_SEC, hint=h, owner=owner,
                  io_port=port.name)
    if set_queue and port.sb_type == "localnet":
        outport = f'outport == "{port.name}"'
        table.add(i, LS_OUT_APPLY_PORT_SEC, 100, outport, set_queue + "output;", hint=h, owner=owner,
                  io_port=port.name)
    if port.sb_type == "localnet" and ctx.profile.has(QOS_QUEUES) and first_localnet(port.dp) is port:
        # 25.03: the switch's enabled VIFs with a queue (assigned, or their NB qdisc_queue_id) have it
        # set on their way out of its first localnet port.
        for q in port.dp.ports:
            qid = q.options.get("qdisc_queue_id") if q.kind == "lsp" and q.sb_type == "" and q.enabled else None
            if qid is not None:
                table.add(i, LS_OUT_APPLY_PORT_SEC, 110, f'outport == "{port.name}" && inport == "{q.name}"',
                          f"set_queue({qid}); output;", hint=h, owner=owner, io_port=port.name)


def build_lcrp_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of a switch port's chassisredirect port (kind ``lcrp``, behaviour
    ``centralized_dgp_peer``), observed on 25.03's reference: like the router-type port it stands
    for, its traffic is marked as from a router port (``ls_in_check_port_sec`` 70,
    ``reg0[18] = 1; next;``, with ``pmtud_tunnel_rx``).  (Its ``ls_in_l2_lkup`` flows are the switch
    port's: :func:`.ls_l2.build_lsp_router_l2_flows`.)"""
    if ctx.profile.has("pmtud_tunnel_rx"):
        name = port.name
        table.add(port.dp.index, LS_IN_CHECK_PORT_SEC, 70, f'inport == "{name}"',
                  f"{REGBIT_FROM_ROUTER_PORT} = 1; next;", io_port=name, hint=hint(port.nb_key), owner=port_owner(port))


def build_lsp_pmtud_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """Behaviour ``pmtud_tunnel_rx`` (OVN 25.03), observed on the reference (``ls_in_check_port_sec``):

    * an enabled router-type port (whether its router port exists or not): its traffic is marked
      (``reg0[18] = 1; next;``, 70); one whose router port exists: an ICMP "too big" error received from a tunnel is sent back (120): for a gateway router
      the one from the router port's MAC to the port (``outport <-> inport; next;``), for a
      distributed router the one to the router port's MAC (re-entering ``ls_in_l2_lkup``);
    * any other port with addresses (VIF, localport, external, l2gateway, virtual, vtep): the error
      from its MAC to it, when it is not resident here, is sent back (110, one flow per MAC);
    * the rest is dropped (105, :func:`build_ls_port_sec_flows`).
    """
    owner = port_owner(port)
    h = hint(port.nb_key)
    i = port.dp.index
    name = port.name
    lrp = peer_router_port(port)
    if port.is_router_lsp and port.enabled:  # (observed: its router port may be missing or disabled)
        table.add(i, LS_IN_CHECK_PORT_SEC, 70, f'inport == "{name}"', f"{REGBIT_FROM_ROUTER_PORT} = 1; next;", io_port=name,
                  hint=h, owner=owner)
    if lrp is not None:
        nets = lrp_networks(lrp)
        if nets is None:
            return
        mac = lrp.nb.mac  # (observed: as NB writes it, e.g. in upper case)
        if lrp.sb_type == "l3gateway":
            match = f'{PMTUD} && eth.src == {mac} && outport == "{name}" && {TUNNEL_RX}'
            action = "outport <-> inport; next;"
        else:
            match = f"{PMTUD} && eth.dst == {mac} && {TUNNEL_RX}"
            action = f"outport <-> inport; next(pipeline=ingress,table={ctx.profile.table_id(LS_IN_L2_LKUP)});"
        table.add(i, LS_IN_CHECK_PORT_SEC, 120, match, action, hint=h, owner=owner)
        return
    if port.is_router_lsp:  # (observed: its router port missing, its addresses give no flow)
        return
    for entry in lsp_addresses(port):
        match = (f'{PMTUD} && eth.src == {entry.ea_s} && outport == "{name}" && !is_chassis_resident("{name}")'
                 f" && {TUNNEL_RX}")
        table.add(i, LS_IN_CHECK_PORT_SEC, 110, match, "outport <-> inport; next;", hint=h, owner=owner)
