"""The logical-flow node: every flow builder writes into one FlowTable (the lflow manager)."""

from __future__ import annotations

from typing import Any

from ...flows import build_lflows
from ...flows.context import flow_ctx_from_nb
from ...lflow.table import FlowTable
from ..engine import Node
from .inputs import DbInput
from .northd import NorthdNode


class LflowNode(Node):
    name = "lflow"

    def __init__(self, northd: NorthdNode, nb_in: DbInput) -> None:
        super().__init__()
        self.northd = northd
        self.table = FlowTable()
        self.add_input(northd)
        self.add_input(nb_in)

    def recompute(self, ctx: Any) -> None:
        nd = self.northd.data
        gopts = self.northd.gopts
        table = FlowTable(len(nd.by_index))
        fctx = flow_ctx_from_nb(nd, ctx.nb, mac_prefix=gopts.mac_prefix if gopts else "",
                                svc_monitor_mac=gopts.svc_monitor_mac if gopts else "", warn=ctx.warn.warn)
        build_lflows(nd, fctx, table)
        self.table = table
