"""SB Datapath_Binding and IP_Multicast."""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from ..flows.acl_index import smap_bool
from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Datapath, Northd
from .dynamic_routing_ids import dynamic_routing_dp_ids
from .rows import SyncStats, sync_table


def dp_nb_key(sb_dp: Any) -> str | None:
    """The NB uuid a Datapath_Binding stands for; None when it is not ours (or is being deleted)."""
    ids = getattr(sb_dp, "external_ids", None)
    if not ids:
        return None
    key = ids.get("logical-switch") or ids.get("logical-router")
    return None if key is None else str(key)


def dp_uuids(sb: Any) -> dict[str, str]:
    """NB datapath key -> SB Datapath_Binding uuid, for the datapaths that are ours."""
    out: dict[str, str] = {}
    for row in sb.rows("Datapath_Binding").values():
        k = dp_nb_key(row)
        if k:
            out[k] = str(row.uuid)
    return out


class LazyDpUuids(Mapping[str, str]):
    """:func:`dp_uuids`, read from SB on first use: most incremental runs (a change of an
    address set, a port group member, ``nb_cfg`` alone) plan no flow on any datapath, and the
    scan of every Datapath_Binding row would be a fixed cost of each run.  Valid for one run
    (SB does not change under it)."""

    def __init__(self, sb: Any) -> None:
        self._sb = sb
        self._map: dict[str, str] | None = None

    @property
    def scanned(self) -> bool:
        """Has the run read every Datapath_Binding row (for the run's debug record)?"""
        return self._map is not None

    def _read(self) -> dict[str, str]:
        if self._map is None:
            self._map = dp_uuids(self._sb)
        return self._map

    def __getitem__(self, key: str) -> str:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


def desired_datapath(dp: Datapath, profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, Any]:
    """One datapath's Datapath_Binding row.  Behaviour ``dp_binding_nb_uuid`` (26.03, SB 21.x;
    observed): the row also names its NB row (``nb_uuid``) and its ``type`` (``logical-switch`` /
    ``logical-router``), and a router's ``external_ids`` carry ``disable_garp_rarp`` (its NB option
    read as a boolean, default false)."""
    if not profile.has("dp_binding_nb_uuid"):
        return {"external_ids": dp.external_ids, "tunnel_key": dp.tunnel_key}
    ids = dp.external_ids
    if dp.is_router:
        garp = smap_bool(dp.nb.options, "disable_garp_rarp", False)
        ids = {**ids, "disable_garp_rarp": "true" if garp else "false"}
    dr = dynamic_routing_dp_ids(dp, profile)  # (26.03: dynamic routing and EVPN settings)
    if dr:
        ids = {**ids, **dr}
    return {"external_ids": ids, "tunnel_key": dp.tunnel_key, "nb_uuid": [uuid.UUID(dp.key)],
            "type": ["logical-router" if dp.is_router else "logical-switch"]}


def desired_datapaths(nd: Northd, profile: FlowProfile = DEFAULT_PROFILE) -> dict[Hashable, dict[str, Any]]:
    """Every datapath's row (:func:`desired_datapath`), by NB key."""
    return {dp.key: desired_datapath(dp, profile) for dp in nd.by_index}


def sync_datapaths(txn: Any, sb: Any, nd: Northd, stats: SyncStats,
                   profile: FlowProfile = DEFAULT_PROFILE) -> dict[Hashable, Any]:
    """Insert and update; stale datapaths are deleted by ``prune_datapaths`` once their
    dependants (ports, groups, flows) have been synced in the same transaction."""
    return sync_table(txn, "Datapath_Binding", sb.rows("Datapath_Binding"), dp_nb_key,
                      desired_datapaths(nd, profile), stats, delete_stale=False)


def prune_datapaths(txn: Any, sb: Any, nd: Northd, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    """Delete stale datapaths.  The flows, groups and load balancers that reference them go in
    the same SB transaction (the daemon plans every flow when a datapath is deleted).

    Datapath_Binding belongs to northd: like the reference, a row that names no logical switch or
    router (someone else's) is deleted too; its tunnel key would otherwise block ours forever."""
    def key_of(row: Any) -> Hashable:
        return dp_nb_key(row) or ("not a datapath of ours", row.uuid)

    sync_table(txn, "Datapath_Binding", sb.rows("Datapath_Binding"), key_of, desired_datapaths(nd, profile), stats)


U64 = 1 << 64


def smap_ullong(cfg: Any, key: str, default: int) -> int:
    """``smap_get_ullong``: ``strtoull`` base 10 over the whole value (leading blanks and a sign
    allowed, a minus wraps modulo 2**64), else ``default``."""
    text = cfg.get(key)
    if text is None:
        return default
    body = text.lstrip(" \t\n\v\f\r")
    sign = 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if not body or not body.isascii() or not body.isdigit():
        return default
    value = int(body)
    if value >= U64:
        return default  # ERANGE
    return (sign * value) % U64


def as_int64(value: int) -> int:
    """An unsigned 64-bit value as the OVSDB integer (int64) it is written as."""
    return value - U64 if value >= 1 << 63 else value


def _clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, value))


def ip_multicast_config(cfg: Any) -> dict[str, Any]:
    """The IP_Multicast columns of a switch with ``other_config`` ``cfg``.

    Observed on the reference: booleans read like ``smap_get_bool`` (``mcast_snoop`` only
    "true", ``mcast_querier`` anything but "false", case-insensitive); the numbers like
    ``smap_get_ullong`` (an unparsable value is the default); ``mcast_idle_timeout`` is
    clamped to 15..3600 and ``mcast_query_interval`` (default half the idle timeout) to
    1..3600; ``mcast_table_size`` (default 2048) and ``mcast_query_max_response``
    (default 1) are written as given, even 0 or negative; the source addresses as given.
    """
    idle = _clamp(smap_ullong(cfg, "mcast_idle_timeout", 300), 15, 3600)
    return {
        "enabled": smap_bool(cfg, "mcast_snoop", False),
        "querier": smap_bool(cfg, "mcast_querier", True),
        "eth_src": cfg.get("mcast_eth_src", ""),
        "ip4_src": cfg.get("mcast_ip4_src", ""),
        "ip6_src": cfg.get("mcast_ip6_src", ""),
        "table_size": as_int64(smap_ullong(cfg, "mcast_table_size", 2048)),
        "idle_timeout": idle,
        "query_interval": _clamp(smap_ullong(cfg, "mcast_query_interval", idle // 2), 1, 3600),
        "query_max_resp": as_int64(smap_ullong(cfg, "mcast_query_max_response", 1)),
    }


def desired_ip_multicast(dp: Datapath, dp_row: Any) -> dict[str, Any]:
    """A switch's IP_Multicast row (``dp_row``: its Datapath_Binding)."""
    return {"datapath": dp_row, **ip_multicast_config(dp.nb.other_config)}


def ip_multicast_key(row: Any) -> Hashable | None:
    """An IP_Multicast row's NB switch key; None for one whose datapath is gone (weak reference)."""
    return dp_nb_key(row.datapath)


def sync_ip_multicast(txn: Any, sb: Any, nd: Northd, dps: dict[Hashable, Any], stats: SyncStats) -> None:
    desired: dict[Hashable, dict[str, Any]] = {}
    for dp in nd.switches():
        desired[dp.key] = desired_ip_multicast(dp, dps[dp.key])

    def key_of(row: Any) -> Hashable | None:
        # An IP_Multicast row whose datapath is gone (weak reference) is stale: key it uniquely.
        return ip_multicast_key(row) or ("orphan", row.uuid)

    sync_table(txn, "IP_Multicast", sb.rows("IP_Multicast"), key_of, desired, stats)
