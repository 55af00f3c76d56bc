"""Features for the switch services whose NB tables feed only flows: DHCP_Options and DNS.

* ``dhcp``: a DHCP_Options change rebuilds the flows of the ports whose ``dhcpv4_options``
  or ``dhcpv6_options`` name the row (attaching or detaching a row is a port change, and
  deleting one clears those weak references: the northd node sees both).
* ``dns``: a DNS change rebuilds the datapath flows of the switches whose ``dns_records``
  name the row, and syncs the row's SB ``DNS`` row; a change of a switch's ``dns_records``
  (attaching or detaching rows, ``Feature.nb_columns``) rebuilds that switch's datapath
  flows and re-syncs the whole (small) SB DNS table, the rows it detached being unknown;
  a change of an SB DNS row (our own write echoing back, or someone else's) re-syncs the
  NB DNS row it stands for.

Their :class:`~.features.Feature` records are declared in :mod:`ovn_northd_py.engine.graph`.
"""

from __future__ import annotations

from typing import Any

from ..flows import build_datapath_flows, build_port_flows
from ..flows.owners import OWNER_DP, OWNER_PORT
from ..northd.model import Datapath, Northd
from ..ovsdb.columns import opt
from ..ovsdb.connection import RowChange
from ..sync.dns import TABLE as SB_DNS
from ..sync.dns import sb_dns_key, sync_sb_dns, sync_sb_dns_rows
from ..sync.indexes import DNS_BY_ID as IDX_DNS
from .features import FlowFeatureCtx, SbFeatureCtx


def _uuids(changes: list[RowChange], table: str) -> set[str]:
    return {str(c.uuid) for c in changes if c.table == table}


def dhcp_users(nd: Northd, uuids: set[str]) -> list[str]:
    """Names of the switch ports whose DHCPv4 or DHCPv6 options row is one of ``uuids``."""
    out: list[str] = []
    for p in nd.ports.values():
        if p.kind != "lsp":
            continue
        rows = (opt(p.nb.dhcpv4_options), opt(p.nb.dhcpv6_options))
        if any(r is not None and str(r.uuid) in uuids for r in rows):
            out.append(p.name)
    return out


def on_dhcp_flows(changes: list[RowChange], hctx: FlowFeatureCtx) -> bool:
    nd, table, fctx = hctx.nd, hctx.table, hctx.fctx
    for name in dhcp_users(nd, _uuids(changes, "DHCP_Options")):
        table.remove_owner((OWNER_PORT, name))
        build_port_flows(nd.ports[name], fctx, table)
    return True


def dns_switches(nd: Northd, uuids: set[str]) -> list[Datapath]:
    """The switches whose ``dns_records`` name one of ``uuids``."""
    return [dp for dp in nd.switches() if any(str(r.uuid) in uuids for r in dp.nb.dns_records)]


def on_dns_flows(changes: list[RowChange], hctx: FlowFeatureCtx) -> bool:
    nd, table, fctx = hctx.nd, hctx.table, hctx.fctx
    switches = {dp.key: dp for dp in dns_switches(nd, _uuids(changes, "DNS"))}
    for key in _uuids(changes, "Logical_Switch"):
        dp = nd.datapaths.get(key)
        if dp is not None:
            switches[key] = dp
    for key, dp in switches.items():
        table.remove_owner((OWNER_DP, key))
        build_datapath_flows(dp, fctx, table)
    return True


def on_dns_nb_sb(changes: list[RowChange], hctx: SbFeatureCtx) -> bool:
    if _uuids(changes, "Logical_Switch"):
        sync_sb_dns(hctx.sb_txn, hctx.sb, hctx.nd, hctx.stats, hctx.profile)
    else:
        sync_sb_dns_rows(hctx.sb_txn, hctx.sb, hctx.nd, _uuids(changes, "DNS"), hctx.stats, hctx.profile)
    return True




def on_dns_sb(changes: list[RowChange], hctx: SbFeatureCtx) -> bool:
    """Repair the SB DNS rows that changed: those standing for the same NB rows are synced again, a
    changed row standing for none is deleted.  (23.03: a row whose ``dns_id`` changed may leave
    the NB row it named without an SB row: a full sync.)"""
    by_uuid = hctx.profile.has("dns_nb_uuid")
    rows, index = hctx.sb.rows(SB_DNS), hctx.sb_indexes[IDX_DNS]
    keys: set[str] = set()
    rows_too: set[Any] = set()  # changed rows standing for no NB row
    for c in changes:
        row = rows.get(c.uuid)
        if row is None:  # deleted
            key = str(c.uuid) if by_uuid else index.key_of_uuid(c.uuid)
        elif not by_uuid and c.event == "update" and "external_ids" in c.columns:
            sync_sb_dns(hctx.sb_txn, hctx.sb, hctx.nd, hctx.stats, hctx.profile)
            return True
        else:
            key = sb_dns_key(row, hctx.profile)
        if isinstance(key, str):
            keys.add(key)
        elif row is not None:
            rows_too.add(c.uuid)
    sync_sb_dns_rows(hctx.sb_txn, hctx.sb, hctx.nd, keys, hctx.stats, hctx.profile, rows_too)
    return True


def sync_dns(hctx: SbFeatureCtx) -> None:
    sync_sb_dns(hctx.sb_txn, hctx.sb, hctx.nd, hctx.stats, hctx.profile)
