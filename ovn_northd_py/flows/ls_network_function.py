"""Network functions (NB 7.18, OVN 26.03, behaviour ``network_function``): the switch flows that
redirect the traffic of ACLs naming a ``Network_Function_Group`` through one of its
``Network_Function`` port pairs (``man ovn-northd``: "Pre Network Function", "Network Function",
the egress "Pre-ACL" and "Stateful" tables; the ACL side is :func:`.acl_rules.acl_eval_flows`).

Observed on the reference (sid's ovn-northd 26.03.1):

* the groups of a switch are those its ACLs name (its own and its port groups', any action), by
  direction (:attr:`.acl_index.SwitchAcls.nf_groups`): a ``from-lport`` group is redirected in the
  ingress pipeline (request) and its replies in the egress one, a ``to-lport`` group the other way
  round;
* a group's active network function (NB ``network_function_active``, which northd writes back) stays
  while healthy, else is the first healthy one of its ``network_function`` set in uuid order (:func:`active_nf`; without a
  ``health_check`` a network function is healthy); a group without one redirects nothing;
* a network function is *on* a switch when both its ports are ports of that switch, or else both
  have a child port (``parent_name``) there, which then stand for them (``man ovn-northd``); one
  that is not gets no flow there (the reference logs "Ports not found for network_function N");
* per group and direction: ``ls_*_pre_network_function`` 99 (request, group id -> active network
  function id) when the active network function is on the switch, and 10 (``reg8[21] = 0;``,
  fail-open) for a group with ``fallback=fail-open``;
* per active network function on the switch and direction used: ``ls_*_network_function`` 99 for
  the request (``reg0[22..29] == ID``) and the reply (``ct_label.nf_id == ID``) of the other
  direction, out to its ``inport`` (ingress: ``output;``) or ``outport`` (egress: ``reg8[23] = 1;``
  and back to ingress ``ls_in_l2_lkup``);
* per port of those network functions: ``ls_in_network_function`` 100 (``inport == P``, the tunnel
  interface restored from ``ct_label.tun_if_id``), ``ls_out_network_function`` 100
  (``outport == P``), ``ls_out_stateful`` 120 (the commit of ``ls_out_stateful`` 100 with
  ``ct_label.tun_if_id = reg5[16..31]``, without the network-function fields); per ``inport`` of
  one, ``ls_out_pre_acl`` 110 skipping the egress stages up to the network function stage.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..lflow.stages import (
    LS_IN_L2_LKUP,
    LS_IN_NETWORK_FUNCTION,
    LS_IN_PRE_NETWORK_FUNCTION,
    LS_OUT_CHECK_PORT_SEC,
    LS_OUT_NETWORK_FUNCTION,
    LS_OUT_PRE_ACL,
    LS_OUT_PRE_NETWORK_FUNCTION,
    LS_OUT_STATEFUL,
)
from ..lflow.table import FlowTable
from ..northd.model import Datapath
from ..ovsdb.columns import opt
from .acl_index import acl_nf_group, switch_acl_rows, switch_acls
from .context import FlowCtx
from .owners import dp_owner
from .registers import (
    REG_ACL_ID,
    REG_NF_ID,
    REG_OBS_COLLECTOR_ID_EST,
    REG_OBS_POINT_ID_EST,
    REG_OBS_STAGE,
    REGBIT_ACL_LABEL,
    REGBIT_ACL_PERSIST_ID,
    REGBIT_NF_ENABLED,
    REGBIT_NF_ORIG_DIR,
)

NEXT = "next;"
REG_TUN_IF_ID = "reg5[16..31]"  # the tunnel interface a redirected packet came in on


def active_nf(group: Any, online: Collection[tuple[str, str]] = ()) -> Any:
    """The active Network_Function of ``group``: the one NB names active
    (``network_function_active``, northd's own write-back) while it is still in the group and healthy
    (without a ``health_check``, or with its Service_Monitor ``online``: ``online`` holds the
    (inport, outport) of those; OVN 26.03's ovn-northd.at "Network function health check": a second
    one coming online does not take over), else the first healthy one of its set in uuid order, or
    None (an empty group, or none healthy: observed, a group of network functions with health
    checks and no status has none)."""
    def healthy(nf: Any) -> bool:
        return opt(getattr(nf, "health_check", None)) is None or nf_ports(nf) in online

    current = opt(getattr(group, "network_function_active", None))
    if current is not None and any(nf.uuid == current.uuid for nf in group.network_function) and healthy(current):
        return current
    for nf in sorted(group.network_function, key=lambda nf: str(nf.uuid)):
        if healthy(nf):
            return nf
    return None


def nf_ports(nf: Any) -> tuple[str, str] | None:
    """The names of ``nf``'s inport and outport (None if either is missing)."""
    i, o = opt(nf.inport), opt(nf.outport)
    if i is None or o is None:
        return None
    return str(i.name), str(o.name)


def build_ls_network_function_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The network-function flows of switch ``dp`` (module docstring); the switch-wide fallbacks
    every switch has: pre-NF clears the group id of a request no active network function took (1),
    NF lets multicast through (100) and drops the rest of what is still marked (1)."""
    owner = dp_owner(dp)
    i = dp.index
    for pre, stage in ((LS_IN_PRE_NETWORK_FUNCTION, LS_IN_NETWORK_FUNCTION),
                       (LS_OUT_PRE_NETWORK_FUNCTION, LS_OUT_NETWORK_FUNCTION)):
        table.add(i, pre, 1, f"{REGBIT_NF_ENABLED} == 1 && {REGBIT_NF_ORIG_DIR} == 1", f"{REG_NF_ID} = 0; next;",
                  owner=owner)
        table.add(i, pre, 0, "1", NEXT, owner=owner)
        table.add(i, stage, 100, f"{REGBIT_NF_ENABLED} == 1 && eth.mcast", NEXT, owner=owner)
        table.add(i, stage, 1, f"{REGBIT_NF_ENABLED} == 1", "drop;", owner=owner)
        table.add(i, stage, 0, "1", NEXT, owner=owner)
    groups = switch_acls(dp, ctx).nf_groups
    if not groups:
        return
    rows = {str(g.uuid): g for a in switch_acl_rows(dp, ctx).values() if (g := acl_nf_group(a)) is not None}
    here = {p.name for p in dp.ports}
    children: dict[str, str] = {}  # parent port name -> its first child port on this switch
    for q in sorted(dp.ports, key=lambda q: q.name):
        if q.kind == "lsp" and q.parent_port:
            children.setdefault(q.parent_port, q.name)
    request: dict[bool, set[tuple[int, str, str]]] = {True: set(), False: set()}  # ingress? -> NFs
    reply: dict[bool, set[tuple[int, str, str]]] = {True: set(), False: set()}
    for direction, key in groups:
        g = rows.get(key)
        if g is None:
            continue
        ingress = direction == "from-lport"
        pre = LS_IN_PRE_NETWORK_FUNCTION if ingress else LS_OUT_PRE_NETWORK_FUNCTION
        gmatch = f"{REGBIT_NF_ENABLED} == 1 && {REGBIT_NF_ORIG_DIR} == 1 && {REG_NF_ID} == {int(g.id)}"
        if opt(g.fallback) == "fail-open":
            table.add(i, pre, 10, gmatch, f"{REGBIT_NF_ENABLED} = 0; {REG_NF_ID} = 0; next;", owner=owner)
        nf = active_nf(g, ctx.nf_online)
        ports = nf_ports(nf) if nf is not None else None
        if ports is not None and not set(ports) <= here:  # their child ports here, if any
            ports = (children.get(ports[0], ""), children.get(ports[1], ""))
        if ports is None or not set(ports) <= here:
            if nf is not None:
                ctx.warn("nf_ports_not_found", "Network_Function", nf.uuid,
                         f"ports of network function {nf.name} not found on switch {dp.name}")
            continue
        table.add(i, pre, 99, gmatch, f"{REG_NF_ID} = {int(nf.id)}; next;", owner=owner)
        request[ingress].add((int(nf.id), *ports))
        reply[not ingress].add((int(nf.id), *ports))
    l2 = ctx.profile.table_id(LS_IN_L2_LKUP)
    nf_port_names: set[str] = set()
    for ingress in (True, False):
        stage = LS_IN_NETWORK_FUNCTION if ingress else LS_OUT_NETWORK_FUNCTION
        for nfs, match in ((request[ingress], f"{REGBIT_NF_ORIG_DIR} == 1 && {REG_NF_ID} == {{id}}"),
                           (reply[ingress], f"{REGBIT_NF_ORIG_DIR} == 0 && ct_label.nf_id == {{id}}")):
            for nf_id, inport, outport in nfs:
                actions = (f'outport = "{inport}"; output;' if ingress else
                           f'outport = "{outport}"; reg8[23] = 1; next(pipeline=ingress, table={l2});')
                table.add(i, stage, 99, f"{REGBIT_NF_ENABLED} == 1 && " + match.format(id=nf_id), actions,
                          owner=owner)
                nf_port_names.update((inport, outport))
    inports = {p for nfs in (*request.values(), *reply.values()) for _id, p, _o in nfs}
    skip = ctx.profile.table_id(LS_OUT_CHECK_PORT_SEC)
    for name in sorted(inports):
        table.add(i, LS_OUT_PRE_ACL, 110, f'inport == "{name}"', f"next(pipeline=egress, table={skip});", owner=owner)
    blocked = ctx.features.ct("blocked")
    base = f"{blocked} = 0; ct_mark.allow_established = {REGBIT_ACL_PERSIST_ID}; ct_label.acl_id = {REG_ACL_ID}; "
    obs = (f"ct_mark.obs_stage = {REG_OBS_STAGE}; ct_mark.obs_collector_id = {REG_OBS_COLLECTOR_ID_EST}; "
           f"ct_label.obs_point_id = {REG_OBS_POINT_ID_EST}; ")
    tun = f"ct_label.tun_if_id = {REG_TUN_IF_ID}; "
    for name in sorted(nf_port_names):
        table.add(i, LS_IN_NETWORK_FUNCTION, 100, f'inport == "{name}"',
                  f"{REG_TUN_IF_ID} = ct_label.tun_if_id; next;", owner=owner)
        table.add(i, LS_OUT_NETWORK_FUNCTION, 100, f'outport == "{name}"', NEXT, owner=owner)
        for bit, extra in ((0, ""), (1, obs)):
            table.add(i, LS_OUT_STATEFUL, 120, f'outport == "{name}" && {REGBIT_ACL_LABEL} == {bit}',
                      f"ct_commit {{ {base}{extra}{tun}}}; next;", owner=owner)

