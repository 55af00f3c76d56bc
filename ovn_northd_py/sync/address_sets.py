"""SB Address_Set: NB address sets plus the ones northd defines itself."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .rows import SyncStats, sync_table


def desired_address_sets(nb: Any, svc_monitor_mac: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"svc_monitor_mac": [svc_monitor_mac]}
    for a in nb.rows("Address_Set").values():
        out[a.name] = list(a.addresses)
    return out


def sync_address_sets(txn: Any, sb: Any, sets: dict[str, list[str]], stats: SyncStats) -> None:
    desired: dict[Hashable, dict[str, Any]] = {n: {"name": n, "addresses": a} for n, a in sets.items()}
    sync_table(txn, "Address_Set", sb.rows("Address_Set"), lambda r: r.name, desired, stats)
