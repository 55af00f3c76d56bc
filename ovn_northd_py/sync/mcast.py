"""SB Multicast_Group: the groups northd defines per logical switch."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..flows.ls_l2 import in_mc_unknown
from ..northd.mcast_keys import (
    MC_FLOOD,
    MC_FLOOD_KEY,
    MC_FLOOD_L2,
    MC_FLOOD_L2_KEY,
    MC_UNKNOWN,
    MC_UNKNOWN_KEY,
)
from ..northd.model import Datapath, Northd
from .datapaths import dp_nb_key
from .rows import SyncStats, sync_table


def desired_groups(nd: Northd) -> dict[tuple[str, str], tuple[int, list[str]]]:
    """(datapath NB key, group name) -> (tunnel key, port names)."""
    out: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for dp in nd.switches():
        out.update(desired_groups_of(dp))
    return out


MC_NAMES = (MC_FLOOD, MC_FLOOD_L2, MC_UNKNOWN)


def desired_groups_of(dp: Datapath) -> dict[tuple[str, str], tuple[int, list[str]]]:
    out: dict[tuple[str, str], tuple[int, list[str]]] = {}
    flood: list[str] = []
    flood_l2: list[str] = []
    unknown: list[str] = []
    for p in dp.ports:
        if p.kind != "lsp" or not p.enabled:
            continue
        flood.append(p.name)
        if not p.is_router_lsp:
            flood_l2.append(p.name)
        if in_mc_unknown(p):
            unknown.append(p.name)
    for name, key, ports in (
        (MC_FLOOD, MC_FLOOD_KEY, flood),
        (MC_FLOOD_L2, MC_FLOOD_L2_KEY, flood_l2),
        (MC_UNKNOWN, MC_UNKNOWN_KEY, unknown),
    ):
        if ports:
            out[(dp.key, name)] = (key, ports)
    return out


def sync_multicast_groups(
    txn: Any, sb: Any, nd: Northd, dps: dict[Hashable, Any], pbs: dict[Hashable, Any], stats: SyncStats
) -> None:
    desired = {
        k: {"datapath": dps[k[0]], "name": k[1], "tunnel_key": key, "ports": [pbs[n] for n in ports]}
        for k, (key, ports) in desired_groups(nd).items()
    }

    def key_of(row: Any) -> Hashable | None:
        nbk = dp_nb_key(row.datapath)
        return (nbk, row.name) if nbk else None

    sync_table(txn, "Multicast_Group", sb.rows("Multicast_Group"), key_of, desired, stats)
