"""SB rows others write (ovn-controller: MAC_Binding, FDB, IGMP_Group) that name what we delete.

We monitor only a few of their columns (for stale FDB rows, sync/fdb.py, and aging,
sync/aging.py), and IGMP_Group not at all.  When a run deletes a Datapath_Binding or a Port_Binding, the
rows that belong to it are deleted in the same SB transaction with where-clauses (raw OVSDB
operations, collected in ``Ctx.sb_extra_ops``), so that

* a row with a *strong* reference to the deleted row cannot make the transaction fail forever
  with ``referential integrity violation`` (MAC_Binding.datapath -> Datapath_Binding), and
* the learned state of a deleted switch, router or port does not outlive it.

What the reference (ovn-northd 23.03) was observed to delete (tests/functional/test_foreign_rows.py):

* a router or switch deleted: its MAC_Binding rows (``datapath``), its FDB rows (``dp_key``) and
  its IGMP_Group rows (``datapath``, a weak reference, so the server would leave them datapath-less);
* a router or switch port deleted: the MAC_Binding rows whose ``logical_port`` is that port and
  the FDB rows with its ``dp_key``/``port_key``;
* (25.03 on) a router or router port deleted: the Learned_Route rows (ovn-controller's) that name
  it (``datapath`` / ``logical_port``, strong references; observed in 25.03's ``ovn-northd.at``).

Besides, a failed transaction whose error is a referential-integrity violation on a row we
delete is answered (``referrer_cleanup_ops``) with a delete, in the retry, of every row of a table
we do not own that references that row strongly; the list of such (table, column) pairs is
derived from the SB schema (``STRONG_REFERRERS``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType
from typing import Any

SB_SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "ovn-sb.ovsschema"

# SB tables ovn-northd writes (IDL and raw flow path).  Rows of every other table are someone
# else's (ovn-controller, the CMS, ovn-ic): we delete them only when they name what we delete.
OWNED_TABLES = frozenset({
    "SB_Global", "Datapath_Binding", "Port_Binding", "Multicast_Group", "HA_Chassis_Group", "HA_Chassis",
    "IP_Multicast", "Address_Set", "RBAC_Role", "RBAC_Permission", "DHCP_Options", "DHCPv6_Options", "DNS",
    "Port_Group", "Meter", "Meter_Band", "Static_MAC_Binding", "Chassis_Template_Var", "Mirror",
    "Service_Monitor", "BFD", "Logical_Flow", "Logical_DP_Group", "Load_Balancer", "ACL_ID", "ECMP_Nexthop",
    "Advertised_Route", "Advertised_MAC_Binding",
})


def strong_referrers(schema: dict[str, Any], owned: Iterable[str] = OWNED_TABLES) -> dict[str, list[tuple[str, str, bool]]]:
    """target table -> [(referring table, column, is_set)] for every column of a table not in
    ``owned`` whose keys are strong references to the target (``is_set``: more than one value)."""
    own = set(owned)
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for table, tdef in schema["tables"].items():
        if table in own:
            continue
        for col, cdef in tdef["columns"].items():
            ty = cdef["type"]
            if not isinstance(ty, dict):
                continue
            key = ty.get("key")
            if not isinstance(key, dict) or "refTable" not in key or key.get("refType", "strong") != "strong":
                continue
            if "value" in ty:
                continue  # (no SB map column has strong reference keys)
            mx = ty.get("max", 1)
            out.setdefault(key["refTable"], []).append((table, col, mx == "unlimited" or int(mx) > 1))
    return out


STRONG_REFERRERS = MappingProxyType(strong_referrers(json.loads(SB_SCHEMA.read_text())))


def referrer_cleanup_ops(table: str, row_uuid: str) -> list[dict[str, Any]]:
    """Delete every row of a table we do not own that strongly references ``table`` row ``row_uuid``."""
    ops: list[dict[str, Any]] = []
    for ref_table, col, is_set in STRONG_REFERRERS.get(table, ()):
        fn = "includes" if is_set else "=="
        ops.append({"op": "delete", "table": ref_table, "where": [[col, fn, ["uuid", row_uuid]]]})
    return ops


_RI_ERROR = re.compile(r"cannot delete (\w+) row ([0-9a-fA-F-]{36}) because of \d+ remaining reference")


def referential_integrity_rows(error: Any) -> list[tuple[str, str]]:
    """The (table, uuid) rows a referential-integrity error says could not be deleted."""
    return [(m.group(1), m.group(2)) for m in _RI_ERROR.finditer(str(error))]


def _datum(row: Any, col: str) -> Any:
    """A column of a row as it was before this transaction (also for a row deleted in it)."""
    d = row._data.get(col) if row._data is not None else None
    return d.as_scalar() if d is not None else None


def deleted_rows(txn: Any, table: str) -> list[Any]:
    """Rows of ``table`` that transaction ``txn`` deletes (python-ovs: ``_changes`` is None)."""
    return [r for r in txn._txn_rows.values()
            if r._changes is None and r._data is not None and r._table.name == table]


def cleanup_ops(txn: Any, sb: Any, nd: Any) -> list[dict[str, Any]]:
    """The deletes of others' rows that go with the Datapath_Binding and Port_Binding rows the
    SB IDL transaction ``txn`` deletes.  ``nd``: the northd data of this run (what survives)."""
    if txn is None or not txn._txn_rows:
        return []
    ops: list[dict[str, Any]] = []
    gone_dps = deleted_rows(txn, "Datapath_Binding")
    gone_pbs = deleted_rows(txn, "Port_Binding")
    if not gone_dps and not gone_pbs:
        return ops
    # Keys of the Datapath_Binding rows that existed before this transaction and stay (a new row may
    # reuse a key freed in this same run: what ovn-controller wrote with that key belongs to the old one).
    dp_rows = sb.rows("Datapath_Binding")
    kept_dp_keys = {_datum(r, "tunnel_key") for r in dp_rows.values() if r._data is not None}
    learned = "Learned_Route" in getattr(getattr(sb, "idl", None), "tables", ())
    for row in gone_dps:
        u = str(row.uuid)
        ops += referrer_cleanup_ops("Datapath_Binding", u)  # MAC_Binding.datapath
        if learned:
            ops.append({"op": "delete", "table": "Learned_Route", "where": [["datapath", "==", ["uuid", u]]]})
        ops.append({"op": "delete", "table": "IGMP_Group", "where": [["datapath", "==", ["uuid", u]]]})
        key = _datum(row, "tunnel_key")
        if isinstance(key, int) and key not in kept_dp_keys:
            ops.append({"op": "delete", "table": "FDB", "where": [["dp_key", "==", key]]})
    for row in gone_pbs:
        if learned:
            ops.append({"op": "delete", "table": "Learned_Route",
                        "where": [["logical_port", "==", ["uuid", str(row.uuid)]]]})
        name = _datum(row, "logical_port")
        port_key = _datum(row, "tunnel_key")
        dp_uuid = _datum(row, "datapath")
        p = nd.ports.get(name) if nd is not None and isinstance(name, str) else None
        if isinstance(name, str) and p is None:
            # (A port that stays under the same name, e.g. a duplicate row removed, keeps its bindings.)
            ops.append({"op": "delete", "table": "MAC_Binding", "where": [["logical_port", "==", name]]})
        dp_row = dp_rows.get(dp_uuid) if dp_uuid is not None else None
        if dp_row is None:
            dp_row = next((r for r in gone_dps if r.uuid == dp_uuid), None)
        dp_key = _datum(dp_row, "tunnel_key") if dp_row is not None else None
        if not isinstance(dp_key, int) or not isinstance(port_key, int):
            continue
        if p is not None and p.tunnel_key == port_key and p.dp.tunnel_key == dp_key:
            continue
        ops.append({"op": "delete", "table": "FDB",
                    "where": [["dp_key", "==", dp_key], ["port_key", "==", port_key]]})
    # The reference also drops, when a port goes, the bindings left for ports that no longer exist.
    # Without monitoring those tables, sweep the datapaths that lost a port: their MAC_Binding rows
    # whose logical_port is none of the datapath's ports, their FDB rows whose port_key is none of
    # the datapath's port keys; and, when a datapath goes, FDB rows whose dp_key is no switch's.
    touched: dict[str, Any] = {}
    for row in gone_pbs:
        dp_row = dp_rows.get(_datum(row, "datapath"))
        if dp_row is None or dp_row._data is None or nd is None:
            continue
        ids = dict(dp_row.external_ids)
        dp = nd.datapaths.get(ids.get("logical-switch") or ids.get("logical-router") or "")
        if dp is not None and dp.tunnel_key == _datum(dp_row, "tunnel_key"):
            touched[str(dp_row.uuid)] = dp
    for u, dp in touched.items():
        names: set[str] = set()
        keys: set[int] = set()
        for p in dp.ports:
            names.add(p.name)
            keys.add(p.tunnel_key)
            if p.crp is not None:
                names.add(p.crp.name)
                keys.add(p.crp.tunnel_key)
        ops.append({"op": "delete", "table": "MAC_Binding",
                    "where": [["datapath", "==", ["uuid", u]], *(["logical_port", "!=", n] for n in sorted(names))]})
        if dp.is_switch:
            ops.append({"op": "delete", "table": "FDB",
                        "where": [["dp_key", "==", dp.tunnel_key], *(["port_key", "!=", k] for k in sorted(keys))]})
    if gone_dps and nd is not None:
        live = sorted({d.tunnel_key for d in nd.switches()} | {k for k in kept_dp_keys if isinstance(k, int)})
        ops.append({"op": "delete", "table": "FDB", "where": [["dp_key", "!=", k] for k in live]})
    return ops
