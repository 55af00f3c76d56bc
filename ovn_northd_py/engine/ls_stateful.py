"""Derived switch facts shared by the ACL and load-balancer features (as upstream's ``en-ls-stateful``).

A switch's facts (:func:`~ovn_northd_py.flows.acl_index.switch_acls`: has ACLs, has stateful ACLs,
has load-balancer VIPs) are read by its datapath flows (stateful pre-ACL / pre-LB, hairpin), its
ports' DHCP-reply flows and, through statefulness, by every ACL on it.  They depend on the ACL
feature's tables (ACLs, port groups) and on the load-balancer feature's (VIPs attached): either
feature hands the switches whose facts *may* have changed (``touched``) and the (ACL, switch)
pairs it wants refreshed to :func:`apply`, which computes the facts once, compares them with what
the flows were built from (``AclIndex.acl_facts`` / ``dp_facts``, in the lflow node's flow
context) and rebuilds what reads them.  The result tracks the switches whose facts were computed
for the first time (``created``), did change (``updated``) or are gone (``deleted``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from ..flows import build_datapath_flows, build_port_flows
from ..flows.acl_index import ACL_FACTS, AclIndex, ls_has_lb_vips, switch_acls
from ..flows.acl_rules import build_acl_flows, remove_acl_flows
from ..flows.context import FlowCtx
from ..flows.owners import dp_owner, port_owner
from ..lflow.table import FlowTable
from ..northd.model import Datapath
from ..ovsdb.columns import opt
from .features import FlowFeatureCtx


@dataclass(slots=True)
class Work:
    refresh: set[tuple[str, str]] = field(default_factory=set)  # (acl uuid, switch key)
    touched: set[str] = field(default_factory=set)  # switches whose ACL facts may have changed
    changed_acls: set[str] = field(default_factory=set)  # ACLs whose memoised flows are stale
    # Switches of ``touched`` whose facts other than ``has_lb_vip`` are known to be what their
    # flows were built from (a load-balancer change): their ACL rows are not read again.
    lb_only: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Tracked:
    """What :func:`apply` found: switches whose facts were first computed, changed, or are gone."""

    created: set[str] = field(default_factory=set)
    updated: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)


def applies(acl_key: str, dp_key: str, idx: AclIndex) -> bool:
    """Does ACL ``acl_key`` apply to switch ``dp_key`` (its own list, or one of its port groups)?"""
    if acl_key in idx.ls_acls.get(dp_key, ()):
        return True
    return any(acl_key in idx.pg_acls.get(pg, ()) for pg in idx.dp_pgs.get(dp_key, ()))


def rebuild_switch(dp: Datapath, fctx: FlowCtx, table: FlowTable) -> None:
    """The datapath flows of ``dp`` and its ports' DHCP-reply flows (both read the switch facts)."""
    table.remove_owner(dp_owner(dp))
    build_datapath_flows(dp, fctx, table)
    for p in dp.ports:
        if p.kind == "lsp" and (opt(p.nb.dhcpv4_options) is not None or opt(p.nb.dhcpv6_options) is not None):
            table.remove_owner(port_owner(p))
            build_port_flows(p, fctx, table)


def _row(rows: Any, key: str) -> Any:
    return rows.get(uuid.UUID(key))


def apply(w: Work, h: FlowFeatureCtx) -> Tracked:
    """Switch facts of ``w.touched`` recomputed (datapath flows rebuilt where they changed, every
    ACL on a switch whose statefulness flipped refreshed), then the (ACL, switch) pairs of
    ``w.refresh`` rebuilt."""
    fctx, nd = h.fctx, h.nd
    idx = fctx.acl
    out = Tracked()
    for d in w.touched:
        dp = nd.datapaths.get(d)
        if dp is None:
            out.deleted.add(d)
            continue
        fctx.forget(d)
        built = idx.acl_facts.get(d)
        if d in w.lb_only and built is not None:
            facts = replace(built, has_lb_vip=ls_has_lb_vips(dp))
            fctx.remember(ACL_FACTS, d, facts)
        else:
            facts = switch_acls(dp, fctx)
        if built is None or (built.stateful, built.has_stateful_acl, built.tiers) != (
            facts.stateful, facts.has_stateful_acl, facts.tiers
        ):  # (ACL sampling reads has_stateful_acl; tiers change the matches of the ACLs)
            w.refresh.update((a, d) for a in idx.dp_built.get(d, ()))
            w.refresh.update((str(a.uuid), d) for a in dp.nb.acls)
            w.refresh.update((str(a.uuid), d) for a in idx.pg_acl_rows(d))
        idx.acl_facts[d] = facts
        if built is None:
            out.created.add(d)
        if idx.dp_facts.get(d) != facts or built != facts:
            if built is not None:
                out.updated.add(d)
            rebuild_switch(dp, fctx, h.table)
    acl_rows = h.nb.rows("ACL")
    for a, d in w.refresh:
        remove_acl_flows(a, d, fctx, h.table)
        sw = nd.datapaths.get(d)
        acl = _row(acl_rows, a)
        if sw is not None and acl is not None and applies(a, d, idx):
            build_acl_flows(acl, sw, fctx, h.table)
    return out


def refresh_switches(keys: set[str], h: FlowFeatureCtx, lb_only: bool = False) -> Tracked:
    """Switches whose facts may have changed for another reason than their ACLs (e.g. a load
    balancer with VIPs attached or detached): rebuild what reads the facts, only where they did
    change.  ``lb_only``: only ``has_lb_vip`` may have (the ACL feature keeps the others)."""
    return apply(Work(touched=set(keys), lb_only=set(keys) if lb_only else set()), h)
