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


class PgDerived:
    """:func:`pg_sb_groups` and :func:`pg_address_sets` of one NB Port_Group, kept up to date
    from one call to the next by looking at what changed: which ports joined or left, and which
    members' switch or IPs (memoised with their NB row: compared by identity first) differ.  A pod
    joining the cluster-wide group then costs a pass over the names, not a parse of every
    member's addresses and a sort of every list."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.members: dict[str, tuple[Port, int, tuple[list[str], list[str]]] | None] = {}
        # name -> (port, its NB row's stamp, IPAM addresses, switch tunnel key) when last looked at
        self.seen: dict[str, tuple[Any, Any, Any, int]] = {}
        self.groups: dict[int, set[str]] = {}  # switch tunnel key -> port names
        self.v4: dict[str, int] = {}  # address -> how many members have it
        self.v6: dict[str, int] = {}
        self.out: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None
        self.nd: Northd | None = None  # the model the members were looked up in
        self.by_uuid: dict[Any, str] = {}  # NB port uuid -> name (a rename recomputes the model)
        self.names: frozenset[str] = frozenset()
        # Ports marked changed since the last update; None: unknown (the next update looks at all).
        self.pending: set[str] | None = None

    def _add(self, name: str, c: tuple[Port, int, tuple[list[str], list[str]]] | None, sign: int) -> None:
        if c is None:
            return
        _port, key, (a4, a6) = c
        if sign > 0:
            self.groups.setdefault(key, set()).add(name)
        else:
            names = self.groups.get(key)
            if names is not None:
                names.discard(name)
                if not names:
                    del self.groups[key]
        for addrs, counts in ((a4, self.v4), (a6, self.v6)):
            for a in set(addrs):
                n = counts.get(a, 0) + sign
                if n > 0:
                    counts[a] = n
                else:
                    counts.pop(a, None)

    def _names(self, pg: Any) -> tuple[str, ...] | list[str]:
        """The names of the group's ports, looking up only those of ports new to it."""
        uuids = fastrow.raw_ref_uuids(pg, "ports")
        if uuids is None:
            self.by_uuid = {}
            return pg_port_names(pg)
        by_uuid = self.by_uuid
        for u in by_uuid.keys() - uuids:
            del by_uuid[u]
        rows = fastrow.plain_rows(pg._idl.tables["Logical_Switch_Port"].rows)
        for u in uuids - by_uuid.keys():
            r = rows.get(u)
            if r is not None:
                by_uuid[u] = r.name
        for u in [u for u in by_uuid if u not in rows]:  # (a port that is gone, still named)
            del by_uuid[u]
        return list(by_uuid.values())

    def mark(self, names: Any) -> None:
        """Ports (by name) the model changed since the last :meth:`update` (the northd node's tracked
        ports): the next update looks at them, and at the ports that joined or left, only."""
        if self.pending is not None:
            self.pending.update(names)

    def update(self, pg: Any, nd: Northd) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        if pg.name != self.name or nd is not self.nd:
            self.__init__()  # type: ignore[misc]
            self.name, self.nd = pg.name, nd
        if self.out is not None and self.pending is not None:
            out = self._update_delta(pg, nd)
            if out is not None:
                return out
        names = self._names(pg)
        self.names = frozenset(names)
        if len(self.names) != len(names):  # two ports of one name: the plain way
            self.__init__()  # type: ignore[misc]
            self.names = frozenset(names)
            return pg_sb_groups(pg, nd), pg_address_sets(pg, nd)
        ports = nd.ports
        members = self.members
        changed = self.out is None
        for name in members.keys() - self.names:
            self._add(name, members.pop(name), -1)
            self.seen.pop(name, None)
            changed = True
        for name in names:
            if self._check(name, ports):
                changed = True
        return self._result(changed)

    def _update_delta(self, pg: Any, nd: Northd) -> tuple[dict[str, list[str]], dict[str, list[str]]] | None:
        """The ports that joined or left the group (its ``ports`` references against the last
        update's) and the ones :meth:`mark` named; None: the full pass is needed (a name taken
        twice)."""
        uuids = fastrow.ref_uuids(pg, "ports")  # (kept with the row: the echo runs read it again)
        by_uuid = self.by_uuid
        joined = uuids - by_uuid.keys()
        left = by_uuid.keys() - uuids
        pending = self.pending
        assert pending is not None and self.out is not None
        if not joined and not left and not pending:
            return self.out
        check = set(pending)
        for u in left:
            check.add(by_uuid.pop(u))
        if joined:
            rows = fastrow.plain_rows(pg._idl.tables["Logical_Switch_Port"].rows)
            for u in joined:
                r = rows.get(u)
                if r is not None:
                    by_uuid[u] = r.name
                    check.add(r.name)
        names = frozenset(by_uuid.values())
        if len(names) != len(by_uuid):
            return None  # (by_uuid is made whole again by the full pass)
        self.names = names
        ports, members = nd.ports, self.members
        changed = False
        for name in check:
            if name not in names:
                if name in members:
                    self._add(name, members.pop(name), -1)
                    changed = True
                self.seen.pop(name, None)
            elif self._check(name, ports):
                changed = True
        return self._result(changed)

    def _check(self, name: str, ports: Any) -> bool:
        """Member ``name`` as the model has it now; True if that changed its contribution."""
        seen, members = self.seen, self.members
        port = ports.get(name)
        if port is not None and port.kind == "lsp":
            st = fastrow.stamp(port.nb)
            key = port.dp.tunnel_key
            s = seen.get(name)
            if (st is not None and s is not None and s[0] is port and s[1] is st
                    and s[2] == port.dynamic_addresses and s[3] == key):
                return False  # the same port, row and switch: the same member
            seen[name] = (port, st, port.dynamic_addresses, key)
            c: tuple[Port, int, tuple[list[str], list[str]]] | None = (port, key, port_ips(port))
        else:
            seen.pop(name, None)
            c = None
        if name in members:
            old = members[name]
            if old is c or (old is not None and c is not None and old[0] is c[0] and old[1] == c[1]
                            and (old[2] is c[2] or old[2] == c[2])):
                return False
            if old is None and c is None:
                return False
            self._add(name, old, -1)
        members[name] = c
        self._add(name, c, 1)
        return True

    def _result(self, changed: bool) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        if changed or self.out is None:
            groups = {f"{key}_{self.name}": sorted(ns) for key, ns in self.groups.items()}
            sets = {f"{self.name}_ip4": sorted(self.v4), f"{self.name}_ip6": sorted(self.v6)}
            self.out = (groups, sets)
        self.pending = set()
        return self.out
