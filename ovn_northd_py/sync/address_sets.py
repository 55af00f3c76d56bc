"""SB Address_Set: NB address sets plus the ones northd defines itself.

Northd's own sets: ``svc_monitor_mac``, per NB Port_Group ``<pg>_ip4`` /
``<pg>_ip6`` (:mod:`.port_groups`) and per router with load-balancer VIPs inside its networks
``_rtr_lb_<key>_ip4`` / ``_ip6`` (:func:`~ovn_northd_py.flows.router_addrs.router_lb_vip_sets`).
NB sets are copied as they are, except that a port group's own ``_ip4``/``_ip6`` sets keep the
port group's addresses: an NB set of the same name is warned about (``address_set_name_clash``)
and skipped.  (The reference tries to insert a second SB row of that name and fails every SB
transaction on the index constraint; SB keeps the port group's set.)  An NB set named like
another derived set (``svc_monitor_mac``, ``_rtr_lb_*``) wins.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import Any

from ..flows.router_addrs import router_lb_vip_sets
from ..northd.model import Northd
from .port_groups import pg_address_sets
from .rows import SyncStats, sync_table


def desired_address_sets(nb: Any, svc_monitor_mac: str, nd: Northd | None = None,
                         warn: Any = None, svc_monitor_macs: list[str] | None = None) -> dict[str, list[str]]:
    """Every SB Address_Set by name (the port groups' sets only with the northd model ``nd``);
    ``svc_monitor_macs``: the ``svc_monitor_mac`` set's addresses when more than ``svc_monitor_mac``
    (26.03: its ``svc_monitor_mac_dst`` too)."""
    out: dict[str, list[str]] = {"svc_monitor_mac": list(svc_monitor_macs or [svc_monitor_mac])}
    if nd is not None:
        memo: dict[Any, Any] = {}  # (a load-balancer group's VIPs once for all its routers)
        for router in nd.routers():
            out.update(router_lb_vip_sets(router, memo))
    nb_sets: dict[str, Any] = {}
    for a in nb.rows("Address_Set").values():
        out[a.name] = list(a.addresses)
        nb_sets[a.name] = a
    if nd is not None:
        for pg in nb.rows("Port_Group").values():
            for name, addresses in pg_address_sets(pg, nd).items():
                out[name] = addresses
                if name in nb_sets and warn is not None:
                    warn_name_clash(warn, nb_sets[name], pg.name)
    return out


def warn_name_clash(warn: Any, nb_set: Any, pg_name: str) -> None:
    """An NB Address_Set named like port group ``pg_name``'s own set: skipped, warned once."""
    warn("address_set_name_clash", "Address_Set", nb_set.uuid,
         f"name {nb_set.name!r} is port group {pg_name!r}'s own address set; the port group's addresses are kept",
         name=str(nb_set.name), port_group=str(pg_name))


def address_set_row(name: str, addresses: Collection[str]) -> dict[str, Any]:
    return {"name": name, "addresses": addresses}


def sync_address_sets(txn: Any, sb: Any, sets: dict[str, list[str]], stats: SyncStats) -> None:
    desired: dict[Hashable, dict[str, Any]] = {n: address_set_row(n, a) for n, a in sets.items()}
    sync_table(txn, "Address_Set", sb.rows("Address_Set"), lambda r: r.name, desired, stats)
