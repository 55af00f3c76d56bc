"""DHCPv4 relay (25.03, ``DHCP_Relay``, ``Logical_Router_Port.dhcp_relay``): ``lr_in_ip_input``,
``lr_in_dhcp_relay_req``, ``lr_in_dhcp_relay_resp_chk``, ``lr_in_dhcp_relay_resp`` and the
switch's ``ls_in_l2_lkup`` flows.

Observed on the 25.03 reference (``man ovn-northd``, Ingress Tables 3, 4, 19, 20 and the
switch's L2 lookup): on a switch with ``other_config:dhcp_relay_port`` (any value), every
router-type port whose router port has a ``dhcp_relay`` row with ``servers`` an IPv4 address (a
server that does not parse: nothing) gets the router flows below; the switch flows are the named
port's only.  With L the router port, A its first IPv4 address and S the server:

* ``lr_in_ip_input`` 110: requests from the switch (``inport == L && ip4.src == 0.0.0.0 &&
  ip4.dst == 255.255.255.255 && ip.frag == 0 && udp.src == 68 && udp.dst == 67``) are checked
  (``reg9[7] = dhcp_relay_req_chk(A, S);next;``), replies from S to A (``ip.frag == 0``,
  udp 67 -> 67) go on;
* ``lr_in_dhcp_relay_req`` 100 / 1: a checked request is sent from A to S (udp.src 67), else
  dropped;
* ``lr_in_dhcp_relay_resp_chk`` 100: replies from S to A are checked, their destination kept in
  reg2; ``lr_in_dhcp_relay_resp`` 100 / 1: a checked reply goes out of L from A to udp port 68,
  else is dropped;
* ``ls_in_l2_lkup`` 100, per VIF of the switch (enabled or not; M the MAC of its first address
  entry, empty when that is not a MAC, e.g. ``unknown``): its DHCP broadcasts
  (``inport == P && eth.src == M && ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255 &&
  udp.src == 68 && udp.dst == 67``) go to the router port (``eth.dst = L's MAC; outport =
  R; next;``).

Every action ends with the reference's comment (``/* DHCP_RELAY_REQ */`` or
``/* DHCP_RELAY_RESP */``).  The flows of one switch's relay are owned by
``("dhcp_relay", switch key)``; the engine's ``dhcp_relay`` feature rebuilds them
(:mod:`ovn_northd_py.engine.feature_dhcp_relay`).
"""

from __future__ import annotations

from ipaddress import IPv4Address

from ..lflow.stages import (
    LR_IN_DHCP_RELAY_REQ,
    LR_IN_DHCP_RELAY_RESP,
    LR_IN_DHCP_RELAY_RESP_CHK,
    LR_IN_IP_INPUT,
    LS_IN_L2_LKUP,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath, Northd, Port
from ..ovsdb.columns import opt
from .context import FlowCtx, hint
from .lr_common import parse_ip_strict
from .lsp_addrs import lsp_addresses
from .owners import DhcpRelayOwner, dhcp_relay_owner
from .registers import REG_DHCP_RELAY_DIP_IPV4, REGBIT_DHCP_RELAY_REQ_CHK, REGBIT_DHCP_RELAY_RESP_CHK
from .router_addrs import lrp_networks

REQ = " /* DHCP_RELAY_REQ */"
RESP = " /* DHCP_RELAY_RESP */"


def switch_relays_dhcp(switch: Datapath, ctx: FlowCtx) -> bool:
    """25.03 (behaviour "dhcp_relay_skips_dhcp", observed): a switch whose
    ``other_config:dhcp_relay_port`` names a router-type port whose router port has a ``dhcp_relay``
    row (whatever its server) answers no DHCP itself (no ``ls_in_dhcp_options`` /
    ``ls_in_dhcp_response`` / DHCP reply flows for its ports)."""
    if not ctx.profile.has("dhcp_relay_skips_dhcp"):
        return False
    name = switch.nb.other_config.get("dhcp_relay_port")
    if not name:
        return False
    lsp = next((p for p in switch.ports if p.kind == "lsp" and p.name == name), None)
    lrp = lsp.peer if lsp is not None else None
    return lrp is not None and lrp.kind == "lrp" and opt(getattr(lrp.nb, "dhcp_relay", None)) is not None


def _relay(lsp: Port) -> tuple[Port, str, str, str] | None:
    """(router port, its MAC, its first IPv4 address, the server) of a router-type switch port whose
    router port has a DHCP_Relay row with an IPv4 server."""
    lrp = lsp.peer if lsp.kind == "lsp" else None
    if lrp is None or lrp.kind != "lrp":
        return None
    relay = opt(getattr(lrp.nb, "dhcp_relay", None))
    if relay is None:
        return None
    server = parse_ip_strict(str(opt(relay.servers) or ""))
    nets = lrp_networks(lrp)
    if not isinstance(server, IPv4Address) or nets is None or not nets.ipv4:
        return None
    return lrp, nets.ea_s, nets.ipv4[0].addr_s, str(server)


def build_switch_dhcp_relay_flows(switch: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The relay flows of one switch (on the switch and on its relay router ports' routers)."""
    if not switch.is_switch or not ctx.profile.has_stage(LR_IN_DHCP_RELAY_REQ):
        return
    name = switch.nb.other_config.get("dhcp_relay_port")
    if not name:
        return
    owner = dhcp_relay_owner(switch.key)
    for lsp in switch.ports:
        found = _relay(lsp)
        if found is None:
            continue
        _router_flows(found, owner, table)
        if lsp.name == name:
            mac = found[1]
            action = f'eth.dst = {mac}; outport = "{lsp.name}"; next;{REQ}'
            for vif in switch.ports:
                if vif.kind != "lsp" or vif.sb_type != "":
                    continue
                match = (f'inport == "{vif.name}" && eth.src == {_first_mac(vif)} && ip4.src == 0.0.0.0 && '
                         "ip4.dst == 255.255.255.255 && udp.src == 68 && udp.dst == 67")
                table.add(switch.index, LS_IN_L2_LKUP, 100, match, action, hint=hint(vif.nb_key), owner=owner,
                          io_port=vif.name)


def _router_flows(found: tuple[Port, str, str, str], owner: DhcpRelayOwner, table: FlowTable) -> None:
    lrp, _mac, addr, srv = found
    port = lrp.name
    r, h = lrp.dp.index, hint(lrp.nb_key)
    req = f'inport == "{port}" && ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255'
    table.add(r, LR_IN_IP_INPUT, 110, f"{req} && ip.frag == 0 && udp.src == 68 && udp.dst == 67",
              f"{REGBIT_DHCP_RELAY_REQ_CHK} = dhcp_relay_req_chk({addr}, {srv});next;{REQ}", hint=h, owner=owner)
    table.add(r, LR_IN_IP_INPUT, 110, f"ip4.src == {srv} && ip4.dst == {addr} && ip.frag == 0 && udp.src == 67 && "
              "udp.dst == 67", f"next;{RESP}", hint=h, owner=owner)
    req_m = f"{req} && udp.src == 68 && udp.dst == 67"
    table.add(r, LR_IN_DHCP_RELAY_REQ, 100, f"{req_m} && {REGBIT_DHCP_RELAY_REQ_CHK}",
              f"ip4.src = {addr}; ip4.dst = {srv}; udp.src = 67; next;{REQ}", hint=h, owner=owner)
    table.add(r, LR_IN_DHCP_RELAY_REQ, 1, f"{req_m} && {REGBIT_DHCP_RELAY_REQ_CHK} == 0", f"drop;{REQ}",
              hint=h, owner=owner, sample_drop=False)
    table.add(r, LR_IN_DHCP_RELAY_RESP_CHK, 100, f"ip4.src == {srv} && ip4.dst == {addr} && udp.src == 67 && "
              "udp.dst == 67", f"{REG_DHCP_RELAY_DIP_IPV4} = ip4.dst; {REGBIT_DHCP_RELAY_RESP_CHK} = "
              f"dhcp_relay_resp_chk({addr}, {srv}); next;{RESP}", hint=h, owner=owner)
    resp_m = f"ip4.src == {srv} && {REG_DHCP_RELAY_DIP_IPV4} == {addr} && udp.src == 67 && udp.dst == 67"
    table.add(r, LR_IN_DHCP_RELAY_RESP, 100, f"{resp_m} && {REGBIT_DHCP_RELAY_RESP_CHK}",
              f'ip4.src = {addr}; udp.dst = 68; outport = "{port}"; output;{RESP}', hint=h, owner=owner)
    table.add(r, LR_IN_DHCP_RELAY_RESP, 1, f"{resp_m} && {REGBIT_DHCP_RELAY_RESP_CHK} == 0", f"drop;{RESP}",
              hint=h, owner=owner, sample_drop=False)


def _first_mac(vif: Port) -> str:
    """The MAC of the port's first parsed address entry (:func:`.lsp_addrs.lsp_addresses`), ""
    if none (observed: ``eth.src == `` for a port without addresses, or with ``MAC dynamic`` and
    nothing assigned; with only ``unknown`` the reference prints uninitialised bytes: "" here)."""
    entries = lsp_addresses(vif)
    return entries[0].ea_s if entries else ""


def build_all_dhcp_relay_flows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    for dp in nd.by_index:
        if dp.is_switch:
            build_switch_dhcp_relay_flows(dp, ctx, table)


__all__ = ["build_all_dhcp_relay_flows", "build_switch_dhcp_relay_flows", "switch_relays_dhcp"]
