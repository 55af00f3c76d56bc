"""Writes back into NB: NB_Global options and cfg counters, Logical_Switch_Port.up."""

from __future__ import annotations

from typing import Any

from ...sync.globals import hv_cfg, sb_global_row, sync_nb_global
from ..engine import Node
from .inputs import DbInput
from .northd import NorthdNode


class NbSyncNode(Node):
    name = "nb_sync"

    def __init__(self, northd: NorthdNode, sb_in: DbInput, nb_in: DbInput) -> None:
        super().__init__()
        self.northd = northd
        self.add_input(northd)
        self.add_input(sb_in)
        self.add_input(nb_in)

    def recompute(self, ctx: Any) -> None:
        txn, nb, sb = ctx.nb_txn, ctx.nb, ctx.sb
        gopts = self.northd.gopts
        assert gopts is not None
        sbg = sb_global_row(sb)
        # sb_cfg is what SB has *committed* (read back from the SB IDL), so
        # `ovn-nbctl --wait=sb` returns only once our SB write is durable.
        sb_cfg = sbg.nb_cfg if sbg is not None else None
        hv = hv_cfg(sb, sb_cfg) if sb_cfg is not None else None
        sync_nb_global(txn, nb, gopts, sb_cfg, hv)
        self._sync_lsp_up(nb, sb)
        self._sync_lsp_tags()

    def _sync_lsp_tags(self) -> None:
        """Tags northd chose for container ports (tag_request) go back to NB Logical_Switch_Port.tag."""
        for p in self.northd.data.ports.values():
            if p.kind == "lsp" and p.tag is not None and p.nb.tag != [p.tag]:
                p.nb.tag = [p.tag]

    @staticmethod
    def _sync_lsp_up(nb: Any, sb: Any) -> None:
        # Rows inserted by the SB transaction being built are in the IDL already; skip them.
        pbs = {pb.logical_port: pb for pb in sb.rows("Port_Binding").values() if pb._data is not None}
        for lsp in nb.rows("Logical_Switch_Port").values():
            pb = pbs.get(lsp.name)
            if pb is None:
                continue
            want = lsp.type == "router" or pb.up == [True]
            if lsp.up != [want]:
                lsp.up = [want]
