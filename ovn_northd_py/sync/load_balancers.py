"""Desired SB Load_Balancer rows: NB load balancers attached to logical switches.

A load balancer is attached directly (Logical_Switch.load_balancer) or through
a Load_Balancer_Group.  Its datapaths go into a Logical_DP_Group referenced
from ``datapath_group`` (written by the lean flow writer, ``sync/flow_writer.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..northd.lb_vips import sb_vip_key
from ..northd.model import Northd
from .lflows import WantLb, _omap


def switch_lb_datapaths(nd: Northd) -> dict[str, tuple[Any, set[str]]]:
    """NB LB uuid -> (NB LB row, NB keys of the switches it applies to)."""
    out: dict[str, tuple[Any, set[str]]] = {}
    for dp in nd.switches():
        lbs = list(dp.nb.load_balancer)
        for grp in dp.nb.load_balancer_group:
            lbs.extend(grp.load_balancer)
        lbs.extend(dp.lbs_from_routers)  # install_ls_lb_from_router
        for lb in lbs:
            out.setdefault(str(lb.uuid), (lb, set()))[1].add(dp.key)
    return out


def desired_sb_lb(lb: Any, switches: Iterable[str], dp_uuid: dict[str, str]) -> WantLb | None:
    """The SB row of NB load balancer ``lb`` on the switches (NB keys) ``switches``; None: no row."""
    sb_dps = frozenset(dp_uuid[d] for d in switches if d in dp_uuid)
    if lb is None or not sb_dps:
        return None
    ids = {"lb_id": str(lb.uuid)}  # observed: the NB external_ids are not copied
    opts = dict(lb.options)
    opts["hairpin_orig_tuple"] = "true"
    # observed: copied as is; an NB row without protocol (the flows read it as tcp) gives none
    proto: Any = lb.protocol[0] if lb.protocol else ["set", []]
    cols = {
        "name": lb.name,
        "vips": _omap({sb_vip_key(lb, k): v for k, v in lb.vips.items()}),
        "protocol": proto,
        "options": _omap(opts),
        "external_ids": _omap(ids),
    }
    return WantLb(sb_dps, cols)


def desired_sb_lbs(nd: Northd, dp_uuid: dict[str, str]) -> dict[str, WantLb]:
    want: dict[str, WantLb] = {}
    for key, (lb, dps) in switch_lb_datapaths(nd).items():
        w = desired_sb_lb(lb, dps, dp_uuid)
        if w is not None:
            want[key] = w
    return want
