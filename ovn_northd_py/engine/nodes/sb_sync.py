"""Writes the SB tables northd owns (except logical flows) into the SB transaction."""

from __future__ import annotations

from typing import Any

from ...sync.address_sets import desired_address_sets, sync_address_sets
from ...sync.datapaths import prune_datapaths, sync_datapaths, sync_ip_multicast
from ...sync.dhcp_codes import sync_dhcp_option_codes
from ...sync.globals import nb_global_row, sync_sb_global
from ...sync.mcast import sync_multicast_groups
from ...sync.ports import sync_ha_groups, sync_port_bindings
from ...sync.rbac import sync_rbac
from ..engine import Node
from .inputs import DbInput
from .northd import NorthdNode


class SbSyncNode(Node):
    name = "sb_sync"

    def __init__(self, northd: NorthdNode, sb_in: DbInput, nb_in: DbInput) -> None:
        super().__init__()
        self.northd = northd
        self.add_input(northd)
        self.add_input(sb_in)
        self.add_input(nb_in)

    def recompute(self, ctx: Any) -> None:
        txn, sb, nb, stats = ctx.sb_txn, ctx.sb, ctx.nb, ctx.stats
        nd = self.northd.data
        gopts = self.northd.gopts
        assert gopts is not None
        sync_sb_global(txn, sb, nb_global_row(nb), gopts)
        dps = sync_datapaths(txn, sb, nd, stats)
        groups = sync_ha_groups(txn, sb, nd, stats)
        pbs = sync_port_bindings(txn, sb, nd, dps, groups, stats)
        sync_multicast_groups(txn, sb, nd, dps, pbs, stats)
        sync_ip_multicast(txn, sb, nd, dps, stats)
        sync_address_sets(txn, sb, desired_address_sets(nb, gopts.svc_monitor_mac), stats)
        sync_rbac(txn, sb, stats)
        sync_dhcp_option_codes(txn, sb, stats)
        ctx.prune_pending = prune_datapaths(txn, sb, nd, stats, ctx.flow_refs)
