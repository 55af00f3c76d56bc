"""Desired SB Load_Balancer rows: NB load balancers attached to logical switches.

A load balancer is attached directly (Logical_Switch.load_balancer) or through
a Load_Balancer_Group.  Its datapaths go into a Logical_DP_Group referenced
from ``datapath_group`` (written by the lean flow writer, ``sync/lflows.py``).
"""

from __future__ import annotations

from typing import Any

from ..northd.model import Northd
from .lflows import WantLb, _omap


def switch_lb_datapaths(nd: Northd) -> dict[str, tuple[Any, set[str]]]:
    """NB LB uuid -> (NB LB row, NB keys of the switches it applies to)."""
    out: dict[str, tuple[Any, set[str]]] = {}
    for dp in nd.switches():
        lbs = list(dp.nb.load_balancer)
        for grp in dp.nb.load_balancer_group:
            lbs.extend(grp.load_balancer)
        for lb in lbs:
            out.setdefault(str(lb.uuid), (lb, set()))[1].add(dp.key)
    return out


def desired_sb_lbs(nd: Northd, dp_uuid: dict[str, str]) -> dict[str, WantLb]:
    want: dict[str, WantLb] = {}
    for key, (lb, dps) in switch_lb_datapaths(nd).items():
        ids = dict(lb.external_ids)
        ids["lb_id"] = key
        opts = dict(lb.options)
        opts["hairpin_orig_tuple"] = "true"
        proto = lb.protocol[0] if lb.protocol else "tcp"
        cols = {
            "name": lb.name,
            "vips": _omap(dict(lb.vips)),
            "protocol": proto,
            "options": _omap(opts),
            "external_ids": _omap(ids),
        }
        sb_dps = frozenset(dp_uuid[d] for d in dps if d in dp_uuid)
        if sb_dps:
            want[key] = WantLb(sb_dps, cols)
    return want
