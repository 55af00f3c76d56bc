"""Logical flow builders.

Each builder is a small function ``build_<feature>_flows(entity, ctx, table)`` adding
the flows one NB entity (a datapath or a port) produces to a
:class:`~ovn_northd_py.lflow.table.FlowTable`, owned by that entity (see
:mod:`.context`).  :func:`build_lflows` runs them all; :func:`build_datapath_flows`
and :func:`build_port_flows` rebuild one entity after ``table.remove_owner``.

Cross-entity inputs (to re-run when they change, for incremental processing):

* a switch's datapath flows read its ports (``ls_in_l2_unknown``: is any port in
  ``_MC_unknown``), and a router-type port's flows read the other ports of its
  switch (localnet present? non-router port present?);
* a router-type switch port's flows read its router port and the router's NAT
  rules, load balancers and gateway ports (:mod:`.router_addrs`, memoised in
  ``ctx`` under the router's key: ``ctx.forget(router.key)``);
* ACL-stage fallbacks read the switch's ACLs, load balancers and the Port_Groups
  with ACLs (``ctx.pg_acl_switches``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..lflow.table import FlowTable
from ..northd.build import opt
from ..northd.model import Datapath, Northd, Port
from .context import FlowCtx, WarnFn, dp_owner, flow_ctx_from_nb, hint, port_owner
from .defaults import build_lr_default_flows, build_lrp_default_flows, build_ls_default_flows
from .ls_fdb import build_lsp_fdb_flows
from .ls_l2 import build_ls_l2_flows, build_lsp_l2_flows
from .ls_port_security import build_ls_port_sec_flows, build_lsp_port_sec_flows

DpBuilder = Callable[[Datapath, FlowCtx, FlowTable], None]
PortBuilder = Callable[[Port, FlowCtx, FlowTable], None]

SWITCH_BUILDERS: tuple[DpBuilder, ...] = (
    build_ls_default_flows,
    build_ls_port_sec_flows,
    build_ls_l2_flows,
)
ROUTER_BUILDERS: tuple[DpBuilder, ...] = (build_lr_default_flows,)
SWITCH_PORT_BUILDERS: tuple[PortBuilder, ...] = (
    build_lsp_port_sec_flows,
    build_lsp_fdb_flows,
    build_lsp_l2_flows,
)
ROUTER_PORT_BUILDERS: tuple[PortBuilder, ...] = (build_lrp_default_flows,)


def datapath_enabled(dp: Datapath) -> bool:
    """False for a router with ``enabled=false``: the reference gives it no datapath, hence no flows.

    (The model still holds such routers; this guard can go once it drops them.)
    """
    return not (dp.is_router and opt(dp.nb.enabled) is False)


def build_datapath_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The datapath-wide flows of ``dp`` (owner ``("dp", dp.key)``)."""
    if not datapath_enabled(dp):
        return
    for build in SWITCH_BUILDERS if dp.is_switch else ROUTER_BUILDERS:
        build(dp, ctx, table)


def build_port_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of one port (owner ``("port", port.name)``)."""
    if not datapath_enabled(port.dp):
        return
    for build in SWITCH_PORT_BUILDERS if port.dp.is_switch else ROUTER_PORT_BUILDERS:
        build(port, ctx, table)


def build_lflows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    """Every flow of the northd model ``nd``."""
    table.ensure_capacity(len(nd.by_index))
    for dp in nd.by_index:
        build_datapath_flows(dp, ctx, table)
        for port in dp.ports:
            build_port_flows(port, ctx, table)


__all__ = [
    "FlowCtx",
    "WarnFn",
    "build_datapath_flows",
    "build_lflows",
    "build_port_flows",
    "datapath_enabled",
    "dp_owner",
    "flow_ctx_from_nb",
    "hint",
    "port_owner",
]
