"""SB Datapath_Binding and IP_Multicast."""

from __future__ import annotations

from typing import Any, Hashable

from ..northd.model import Northd
from .rows import SyncStats, sync_table


def dp_nb_key(sb_dp: Any) -> str | None:
    ids = sb_dp.external_ids
    return ids.get("logical-switch") or ids.get("logical-router")


def sync_datapaths(txn: Any, sb: Any, nd: Northd, stats: SyncStats) -> dict[Hashable, Any]:
    desired = {
        dp.key: {"external_ids": dp.external_ids, "tunnel_key": dp.tunnel_key} for dp in nd.by_index
    }
    return sync_table(txn, "Datapath_Binding", sb.rows("Datapath_Binding"), dp_nb_key, desired, stats)


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
        d = row.datapath
        return dp_nb_key(d) if d is not None else ("orphan", row.uuid)

    sync_table(txn, "IP_Multicast", sb.rows("IP_Multicast"), key_of, desired, stats)
