"""SB Multicast_Group: the groups northd defines per logical switch and router.

Members (enabled ports only; a group without members is not written; keys in
:mod:`ovn_northd_py.northd.mcast_keys`), observed on the reference:

* switch ``_MC_flood``: every port; ``_MC_flood_l2``: every port but router-type ones;
  ``_MC_unknown``: ports with ``unknown`` addresses (not ``external`` ones);
* switch ``_MC_static``: ports with ``options:mcast_flood=true`` (any type);
  ``_MC_mrouter_flood``: ports with ``options:mcast_flood_reports=true`` and router-type
  ports connected to an enabled router with ``options:mcast_relay=true``; both with or
  without ``other_config:mcast_snoop``;
* router ``_MC_static``: router ports with ``options:mcast_flood=true`` (with or without
  ``options:mcast_relay``); a distributed gateway port is there as its chassisredirect port.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..flows.acl_index import smap_bool
from ..flows.ls_l2 import in_mc_mrouter_flood, in_mc_static, in_mc_unknown, receives_multicast
from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.mcast_keys import (
    MC_FLOOD,
    MC_FLOOD_KEY,
    MC_FLOOD_L2,
    MC_FLOOD_L2_KEY,
    MC_MROUTER_FLOOD,
    MC_MROUTER_FLOOD_KEY,
    MC_STATIC,
    MC_STATIC_KEY,
    MC_UNKNOWN,
    MC_UNKNOWN_KEY,
)
from ..northd.model import Datapath, Northd
from ..ovsdb.columns import opt
from .datapaths import dp_nb_key
from .rows import SyncStats, sync_table


def desired_groups(nd: Northd, profile: FlowProfile = DEFAULT_PROFILE) -> dict[tuple[str, str], tuple[int, list[str]]]:
    """(datapath NB key, group name) -> (tunnel key, port names)."""
    out: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for dp in nd.by_index:
        out.update(desired_groups_of(dp, profile))
    return out


# The groups a switch may have (the incremental SB sync compares these for a changed switch).
MC_NAMES = (MC_FLOOD, MC_FLOOD_L2, MC_UNKNOWN, MC_MROUTER_FLOOD, MC_STATIC)


def desired_groups_of(dp: Datapath, profile: FlowProfile = DEFAULT_PROFILE) -> dict[tuple[str, str], tuple[int, list[str]]]:
    """The groups of switch or router ``dp``: (dp key, name) -> (tunnel key, port names)."""
    if not dp.is_switch:
        return _router_groups(dp)
    out: dict[tuple[str, str], tuple[int, list[str]]] = {}
    flood: list[str] = []
    flood_l2: list[str] = []
    unknown: list[str] = []
    mrouter: list[str] = []
    static: list[str] = []
    for p in dp.ports:
        if p.kind == "mirror":  # (26.03's lport mirrors: observed in both flood groups)
            flood.append(p.name)
            flood_l2.append(p.name)
            continue
        if p.kind != "lsp" or not p.enabled:
            continue
        if not receives_multicast(p, profile):
            continue  # (26.03: in none of the switch's groups, observed)
        flood.append(p.crp.name if p.crp is not None else p.name)  # (its "lcrp" port instead: 25.03)
        if not p.is_router_lsp:
            flood_l2.append(p.name)
        if in_mc_unknown(p, profile):
            unknown.append(p.name)
        if in_mc_mrouter_flood(p):
            mrouter.append(p.name)
        if in_mc_static(p):
            static.append(p.name)
    for name, key, ports in (
        (MC_FLOOD, MC_FLOOD_KEY, flood),
        (MC_FLOOD_L2, MC_FLOOD_L2_KEY, flood_l2),
        (MC_UNKNOWN, MC_UNKNOWN_KEY, unknown),
        (MC_MROUTER_FLOOD, MC_MROUTER_FLOOD_KEY, mrouter),
        (MC_STATIC, MC_STATIC_KEY, static),
    ):
        if ports:
            out[(dp.key, name)] = (key, ports)
    return out


def _router_groups(dp: Datapath) -> dict[tuple[str, str], tuple[int, list[str]]]:
    """A router's ``_MC_static``: its enabled ports with ``options:mcast_flood=true`` (a distributed
    gateway port: its ``cr-`` port instead)."""
    if opt(dp.nb.enabled) is False:
        return {}  # a disabled router has no datapath
    static = [
        p.crp.name if p.crp is not None else p.name
        for p in dp.ports
        if p.kind == "lrp" and p.enabled and smap_bool(p.nb.options, "mcast_flood", False)
    ]
    return {(dp.key, MC_STATIC): (MC_STATIC_KEY, static)} if static else {}


def sync_multicast_groups(
    txn: Any, sb: Any, nd: Northd, dps: dict[Hashable, Any], pbs: dict[Hashable, Any], stats: SyncStats,
    profile: FlowProfile = DEFAULT_PROFILE,
) -> None:
    desired = {
        k: {"datapath": dps[k[0]], "name": k[1], "tunnel_key": key, "ports": [pbs[n] for n in ports]}
        for k, (key, ports) in desired_groups(nd, profile).items()
    }

    def key_of(row: Any) -> Hashable | None:
        nbk = dp_nb_key(row.datapath)
        return (nbk, row.name) if nbk else None

    sync_table(txn, "Multicast_Group", sb.rows("Multicast_Group"), key_of, desired, stats)
