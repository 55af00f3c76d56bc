"""Network functions (NB 7.18, OVN 26.03): ``Network_Function``, ``Network_Function_Group`` and
``Network_Function_Health_Check`` rows -> the switch flows of :mod:`..flows.ls_network_function`
and the ACL flows naming a group (:func:`..flows.acl_rules.acl_eval_flows`).

* NB (:func:`on_nb_flows`): our own write-back of ``network_function_active`` (its echo) changes
  nothing; any other change rebuilds, on every switch whose ACLs name a group
  (``SwitchAcls.nf_groups``), the datapath flows and the flows of those ACLs (a group's id, its
  members, their ports and ``fallback`` are read there).  Network functions are few: no finer
  bookkeeping.  Which groups a switch's ACLs name is a switch fact, kept by the ACL feature
  (:mod:`.ls_stateful`).
* northd (:func:`on_northd_flows`): a port of a network function (or a child port of one) added,
  changed or deleted, or any port deleted from a switch whose ACLs name a group (its switch
  decides where the network function is): the same rebuild.
* The write-back itself is the nb_sync node's (:func:`..sync.network_functions.sync_nf_active`).
* SB (:func:`on_sb_flows`): Service_Monitor statuses decide which network functions are healthy
  (``FlowCtx.nf_online``); a change of that set rebuilds the same.  The rows themselves
  (:func:`..sync.service_monitor.nf_monitors`) are synced with the load balancers' (the lb
  feature's ``MonitorSync``; this feature's ``on_nb_sb`` asks it to sync again).
"""

from __future__ import annotations

from ..flows.acl_index import acl_nf_group, switch_acl_rows
from ..flows.lb_health import nf_online_pairs
from ..ovsdb.connection import RowChange
from .engine import HandlerResult, handled
from .features import FlowFeatureCtx
from .ls_stateful import Work, apply, rebuild_switch

NF_TABLES = frozenset({"Network_Function", "Network_Function_Group", "Network_Function_Health_Check"})


def _rebuild(h: FlowFeatureCtx) -> None:
    fctx, nd = h.fctx, h.nd
    w = Work()
    for d, facts in list(fctx.acl.acl_facts.items()):
        dp = nd.datapaths.get(d)
        if not facts.nf_groups or dp is None:
            continue
        rebuild_switch(dp, fctx, h.table)
        for key, acl in switch_acl_rows(dp, fctx).items():
            if acl_nf_group(acl) is not None:
                w.changed_acls.add(key)
                w.refresh.add((key, d))
    for key in w.changed_acls:
        fctx.forget(key)
    apply(w, h)


def on_nb_flows(changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    if all(c.table == "Network_Function_Group" and c.event == "update" and c.columns <= {"network_function_active"}
           for c in changes):
        return True  # (our write-back echoing)
    _rebuild(h)
    return True


def on_sb_flows(_changes: list[RowChange], h: FlowFeatureCtx) -> HandlerResult:
    """Service_Monitor rows changed (ovn-controller's ``status``, our own writes): the network
    functions online may have changed, and with them the groups' active ones."""
    if not h.fctx.profile.has("network_function"):
        return handled(False)  # (no network function before 26.03)
    online = nf_online_pairs(h.sb)
    if online == h.fctx.nf_online:
        return handled(False)
    h.fctx.nf_online = online
    _rebuild(h)
    return handled(True)


def on_northd_flows(_changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    t = h.tracked
    if t is None:
        return False
    if not any(f.nf_groups for f in h.fctx.acl.acl_facts.values()):
        return True
    names: set[str] = set()
    for nf in h.nb.rows("Network_Function").values():
        for col in (nf.inport, nf.outport):
            names.update(str(p.name) for p in (col if isinstance(col, list) else [col]))
    facts = h.fctx.acl.acl_facts
    children = {n for n in t.ports_changed if (p := h.nd.ports.get(n)) is not None and p.parent_port in names}
    gone_here = any((f := facts.get(d)) is not None and f.nf_groups for d in t.ports_deleted.values())
    if t.ports_changed & names or set(t.ports_deleted) & names or children or gone_here:
        _rebuild(h)
    return True
