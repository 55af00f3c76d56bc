"""SB ``Advertised_MAC_Binding`` (26.03, behaviour ``evpn``), as observed on sid's reference:

* ``Advertised_MAC_Binding`` (``ovn-sb(5)``: the IP/MAC bindings an EVPN switch announces): on a
  switch whose ``other_config:dynamic-routing-redistribute`` lists ``ip``, one row per (port, IP,
  MAC) of its VIFs' addresses and of its router-type ports (the router port's MAC and addresses,
  link-local ones left out), ``logical_port`` the switch port.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..flows.context import FlowCtx
from ..flows.ls_evpn import evpn_vni
from ..flows.lsp_addrs import lsp_addresses
from ..flows.router_addrs import lrp_networks
from ..lflow.profile import FlowProfile
from ..northd.model import Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, dangling, sync_table

TABLE = "Advertised_MAC_Binding"
def mac_binding_key(row: Any) -> tuple[str, str, str, str] | None:
    dp, port = getattr(row, "datapath", None), getattr(row, "logical_port", None)
    if dangling(dp, port):  # its switch or port is being deleted: a key nothing wants (deleted)
        return ("", "", str(row.uuid), "")
    key = dp_nb_key(dp) if dp is not None else None
    if key is None or port is None:
        return None
    return (key, str(port.logical_port), str(row.ip), str(row.mac))


def desired_bindings(nd: Northd, profile: FlowProfile) -> list[tuple[str, str, str, str]]:
    """(switch key, port, IP, MAC) of every binding to announce."""
    ctx = FlowCtx(nd, profile=profile)
    out: dict[tuple[str, str, str, str], None] = {}
    for sw in nd.switches():
        if evpn_vni(sw, ctx) is None:
            continue
        kinds = {w.strip() for w in str(sw.nb.other_config.get("dynamic-routing-redistribute", "")).split(",")}
        if "ip" not in kinds:
            continue
        for p in sw.ports:
            if p.kind != "lsp":
                continue
            if p.is_router_lsp:
                lrp = p.peer
                nets = lrp_networks(lrp) if lrp is not None and lrp.kind == "lrp" else None
                if nets is None:
                    continue
                mac = nets.ea_s
                for n4 in nets.ipv4:
                    out[(sw.key, p.name, n4.addr_s, mac)] = None
                for n6 in nets.ipv6:
                    if n6 is not nets.lla and not n6.addr_s.startswith("fe80:"):
                        out[(sw.key, p.name, n6.addr_s, mac)] = None
                continue
            if p.sb_type not in ("", "virtual"):
                continue
            for entry in lsp_addresses(p):
                mac = str(entry.mac)
                for a4 in entry.ipv4:
                    out[(sw.key, p.name, str(a4.addr), mac)] = None
                for a6 in entry.ipv6:
                    out[(sw.key, p.name, str(a6.addr), mac)] = None
    return list(out)


def sync_sb_advertised_mac_bindings(txn: Any, sb: Any, nd: Northd, profile: FlowProfile, stats: SyncStats) -> None:
    """Full sync of SB Advertised_MAC_Binding (26.03's SB schema on, behaviour ``evpn``)."""
    if TABLE not in sb.idl.tables:
        return
    desired: dict[Hashable, dict[str, Any]] = {}
    keys = desired_bindings(nd, profile) if profile.has("evpn") else []
    if keys:
        dps = {k: r for r in sb.rows("Datapath_Binding").values() if (k := dp_nb_key(r))}
        pbs = {r.logical_port: r for r in sb.rows("Port_Binding").values()}
        for key in keys:
            dp, pb = dps.get(key[0]), pbs.get(key[1])
            if dp is not None and pb is not None:
                desired[key] = {"datapath": dp, "logical_port": pb, "ip": key[2], "mac": key[3], "external_ids": {}}
    sync_table(txn, TABLE, sb.rows(TABLE), mac_binding_key, desired, stats)
