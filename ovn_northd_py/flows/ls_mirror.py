"""Logical-port mirrors (NB Mirror ``type=lport``, ``Mirror_Rule``; OVN 26.03, behaviour
``lport_mirror``): the switch port a mirror is attached to clones its traffic to the mirror's port
``mp-<switch>-<sink>`` (:func:`~ovn_northd_py.northd.build.make_mirror_ports`), which
ovn-controller delivers to the sink (``man ovn-northd``: ingress / egress "Mirror").

Observed on sid's reference (26.03.1), with neither a stage hint nor an ``in_out_port`` tag:

* per source port and lport mirror whose sink exists: ``ls_in_mirror`` (filter ``from-lport`` or
  ``both``; ``inport == "P"``) and ``ls_out_mirror`` (``to-lport`` or ``both``; ``outport == "P"``)
  100, ``mirror("mp-S-K"); next;``; per Mirror_Rule, the same match ``&& (M)`` at 100 + the
  rule's priority: ``mirror(...); next;`` for ``mirror``, ``next;`` for ``skip``;
* per mirror port: ``ls_out_pre_acl`` 65535, ``outport == "mp-S-K"``, straight to
  ``ls_out_apply_port_sec`` (no conntrack, no ACL for the clones).
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_MIRROR, LS_OUT_APPLY_PORT_SEC, LS_OUT_MIRROR, LS_OUT_PRE_ACL
from ..lflow.table import FlowTable
from ..northd.build import LPORT_MIRROR, lport_mirrors, mirror_port_name
from ..northd.model import Port
from .context import FlowCtx
from .owners import port_owner

MIRROR_PRIORITY = 100


def build_mirror_port_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The flow of a mirror port (kind ``mirror``): its clones skip the egress pipeline."""
    skip = ctx.profile.table_id(LS_OUT_APPLY_PORT_SEC)
    table.add(port.dp.index, LS_OUT_PRE_ACL, 65535, f'outport == "{port.name}"', f"next(pipeline=egress, table={skip});",
              owner=port_owner(port))


def build_lsp_mirror_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The mirror flows of a switch port with lport mirrors (module docstring)."""
    if port.kind != "lsp" or not ctx.profile.has(LPORT_MIRROR):
        return
    owner = port_owner(port)
    i = port.dp.index
    for m in lport_mirrors(port.nb):
        mp = mirror_port_name(port.dp, str(m.sink))
        if mp not in ctx.nd.ports:
            continue  # (its sink is no switch port)
        action = f'mirror("{mp}"); next;'
        rules = sorted(m.mirror_rules, key=lambda r: (int(r.priority), str(r.match)))
        for stage, base, filters in ((LS_IN_MIRROR, f'inport == "{port.name}"', ("from-lport", "both")),
                                     (LS_OUT_MIRROR, f'outport == "{port.name}"', ("to-lport", "both"))):
            if m.filter not in filters:
                continue
            table.add(i, stage, MIRROR_PRIORITY, base, action, owner=owner)
            for r in rules:
                table.add(i, stage, MIRROR_PRIORITY + int(r.priority), f"{base} && ({r.match})",
                          action if r.action == "mirror" else "next;", owner=owner)
