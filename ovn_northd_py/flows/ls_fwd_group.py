"""Forwarding groups: their VIP's ARP responder (``ls_in_arp_rsp``) and their virtual MAC's
destination lookup (``ls_in_l2_lkup``).

Observed on the reference (23.03), per Forwarding_Group of a switch (hinted by the group):
``arp.tpa == VIP && arp.op == 1`` answered with ``vmac`` (50), and ``eth.dst == VMAC`` sent to
``fwd_group(childports="P1","P2",...)`` -- ``liveness="true",`` first when ``liveness`` is
set (50).  With several groups on one switch the reference prefixes each ARP flow after the
first with the previous group's L2 match and actions (a buffer it does not clear; with three
groups it did not even settle); we write the clean flows.
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_ARP_RSP, LS_IN_L2_LKUP
from ..lflow.table import FlowTable
from ..northd.model import Datapath
from .context import FlowCtx, hint
from .ls_arp_rsp import arp_reply_action
from .owners import dp_owner


def build_ls_fwd_group_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    owner = dp_owner(dp)
    for fg in dp.nb.forwarding_groups:
        h = hint(str(fg.uuid))
        match = f"arp.tpa == {fg.vip} && arp.op == 1"
        table.add(dp.index, LS_IN_ARP_RSP, 50, match, arp_reply_action(fg.vmac, fg.vip), hint=h, owner=owner)
        children = ",".join(f'"{p}"' for p in fg.child_port)
        liveness = 'liveness="true",' if fg.liveness else ""
        action = f"fwd_group({liveness}childports={children});"
        table.add(dp.index, LS_IN_L2_LKUP, 50, f"eth.dst == {fg.vmac}", action, hint=h, owner=owner)
