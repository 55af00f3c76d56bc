"""SB Port_Group, and the address sets northd derives from each NB Port_Group.

Observed on the reference (23.03):

* one SB Port_Group per (NB Port_Group, switch holding some of its ports), named
  ``<switch tunnel key>_<group name>``, listing the group's port names on that
  switch; a group without ports has no SB row (groups without ACLs have rows too);
* two SB Address_Sets per NB Port_Group, ``<name>_ip4`` and ``<name>_ip6`` (empty
  for a group without ports), with the IPs of its ports' ``addresses``: each
  ``MAC IP...`` entry read leniently (IPs before the first bad token; a prefix
  length is dropped; IPv6 printed as ``inet_ntop`` does), ``dynamic`` for the
  addresses IPAM assigned; ``router`` and ``unknown`` own none;
* ports are found by name (a group row holds Logical_Switch_Port references).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..flows.acl_index import pg_port_names
from ..northd.addresses import extract_lport_addresses, is_dynamic_address
from ..northd.model import Northd, Port
from ..ovsdb import fastrow
from .rows import SyncStats, sync_table


def port_ips(port: Port) -> tuple[list[str], list[str]]:
    """(IPv4, IPv6) addresses of switch port ``port``'s ``addresses``, as the port-group sets list them
    (kept with the NB row while the port's IPAM addresses are the same: a cluster-wide group reads
    every pod's).  Shared: callers must not modify the lists."""
    dyn = port.dynamic_addresses
    memo: dict[Any, tuple[list[str], list[str]]] = fastrow.derived(port.nb, "pg_port_ips", lambda _r: {})
    out = memo.get(dyn)
    if out is None:
        if len(memo) > 4:
            memo.clear()
        out = memo[dyn] = _port_ips(port)
    return out


def _port_ips(port: Port) -> tuple[list[str], list[str]]:
    v4: list[str] = []
    v6: list[str] = []
    dynamic_seen = False
    for entry in port.nb.addresses:
        if entry in ("unknown", "router"):
            continue
        if is_dynamic_address(entry):
            if dynamic_seen or not port.dynamic_addresses:
                dynamic_seen = True
                continue
            dynamic_seen = True
            entry = port.dynamic_addresses
        parsed = extract_lport_addresses(entry).addresses
        if parsed is not None:
            v4 += (n.addr_s for n in parsed.ipv4)
            v6 += (n.addr_s for n in parsed.ipv6)
    return v4, v6


def pg_ports(pg: Any, nd: Northd) -> list[Port]:
    """The switch ports of NB Port_Group ``pg`` (by name, as the reference finds them)."""
    out: list[Port] = []
    ports = nd.ports
    for name in pg_port_names(pg):
        port = ports.get(name)
        if port is not None and port.kind == "lsp":
            out.append(port)
    return out


def pg_address_sets(pg: Any, nd: Northd) -> dict[str, list[str]]:
    """``<pg>_ip4`` / ``<pg>_ip6`` -> addresses."""
    v4: set[str] = set()
    v6: set[str] = set()
    for port in pg_ports(pg, nd):
        a4, a6 = port_ips(port)
        v4.update(a4)
        v6.update(a6)
    return {f"{pg.name}_ip4": sorted(v4), f"{pg.name}_ip6": sorted(v6)}


def pg_sb_groups(pg: Any, nd: Northd) -> dict[str, list[str]]:
    """SB Port_Group name -> port names, for NB Port_Group ``pg``."""
    out: dict[str, list[str]] = {}
    for port in pg_ports(pg, nd):
        out.setdefault(f"{port.dp.tunnel_key}_{pg.name}", []).append(port.name)
    return {name: sorted(ports) for name, ports in out.items()}


def desired_port_groups(nb: Any, nd: Northd) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pg in nb.rows("Port_Group").values():
        out.update(pg_sb_groups(pg, nd))
    return out


def port_group_row(name: str, ports: list[str]) -> dict[str, Any]:
    return {"name": name, "ports": ports}


def sync_port_groups(txn: Any, sb: Any, groups: dict[str, list[str]], stats: SyncStats) -> None:
    desired: dict[Hashable, dict[str, Any]] = {n: port_group_row(n, p) for n, p in groups.items()}
    sync_table(txn, "Port_Group", sb.rows("Port_Group"), lambda r: r.name, desired, stats)
