"""SB Datapath_Binding and IP_Multicast."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..northd.model import Northd
from .rows import SyncStats, sync_table


def dp_nb_key(sb_dp: Any) -> str | None:
    """The NB uuid a Datapath_Binding stands for; None when it is not ours (or is being deleted)."""
    ids = getattr(sb_dp, "external_ids", None)
    if not ids:
        return None
    return ids.get("logical-switch") or ids.get("logical-router")


def desired_datapaths(nd: Northd) -> dict[Hashable, dict[str, Any]]:
    return {dp.key: {"external_ids": dp.external_ids, "tunnel_key": dp.tunnel_key} for dp in nd.by_index}


def sync_datapaths(txn: Any, sb: Any, nd: Northd, stats: SyncStats) -> dict[Hashable, Any]:
    """Insert and update; stale datapaths are deleted by ``prune_datapaths`` once their
    dependants (ports, groups, flows) have been synced in the same transaction."""
    return sync_table(txn, "Datapath_Binding", sb.rows("Datapath_Binding"), dp_nb_key,
                      desired_datapaths(nd), stats, delete_stale=False)


def prune_datapaths(txn: Any, sb: Any, nd: Northd, stats: SyncStats, still_referenced: Any) -> bool:
    """Delete stale datapaths, except those logical flows still reference (strongly): the flow
    writer removes those flows first, and the next run deletes the datapath.  True if any waits."""
    waiting = False

    def key_of(row: Any) -> Any:
        nonlocal waiting
        k = dp_nb_key(row)
        if k is not None and k not in nd.datapaths and str(row.uuid) in still_referenced:
            waiting = True
            return None
        return k

    sync_table(txn, "Datapath_Binding", sb.rows("Datapath_Binding"), key_of, desired_datapaths(nd), stats)
    return waiting


def _int(cfg: dict[str, str], key: str, default: int, lo: int, hi: int) -> int:
    try:
        v = int(cfg.get(key, default))
    except ValueError:
        return default
    return v if lo <= v <= hi else default


def sync_ip_multicast(txn: Any, sb: Any, nd: Northd, dps: dict[Hashable, Any], stats: SyncStats) -> None:
    desired: dict[Hashable, dict[str, Any]] = {}
    for dp in nd.switches():
        cfg = dp.nb.other_config
        idle = _int(cfg, "mcast_idle_timeout", 300, 15, 3600)
        desired[dp.key] = {
            "datapath": dps[dp.key],
            "enabled": cfg.get("mcast_snoop") == "true",
            "querier": cfg.get("mcast_querier", "true") == "true",
            "eth_src": cfg.get("mcast_eth_src", ""),
            "ip4_src": cfg.get("mcast_ip4_src", ""),
            "ip6_src": cfg.get("mcast_ip6_src", ""),
            "table_size": _int(cfg, "mcast_table_size", 2048, 1, 32766),
            "idle_timeout": idle,
            "query_interval": _int(cfg, "mcast_query_interval", idle // 2, 1, idle),
            "query_max_resp": _int(cfg, "mcast_query_max_response", 1, 1, 10),
        }

    def key_of(row: Any) -> Hashable | None:
        # An IP_Multicast row whose datapath is gone (weak reference) is stale: key it uniquely.
        return dp_nb_key(row.datapath) or ("orphan", row.uuid)

    sync_table(txn, "IP_Multicast", sb.rows("IP_Multicast"), key_of, desired, stats)
