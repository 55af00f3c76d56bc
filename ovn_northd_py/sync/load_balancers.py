"""Desired SB Load_Balancer rows: NB load balancers attached to logical switches.

A load balancer is attached directly (Logical_Switch.load_balancer) or through
a Load_Balancer_Group.  Its datapaths go into a Logical_DP_Group referenced
from ``datapath_group`` (written by the lean flow writer, ``sync/flow_writer.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.lb_vips import sb_vip_key
from ..northd.model import Northd
from ..ovsdb import fastrow
from ..ovsdb.fastrow import uuid_str
from .lflows import WantLb, _omap


def _dp_lbs(dp: Any) -> list[Any]:
    lbs = list(dp.nb.load_balancer)
    for grp in dp.nb.load_balancer_group:
        lbs.extend(grp.load_balancer)
    return lbs


def switch_lb_datapaths(nd: Northd) -> dict[str, tuple[Any, set[str]]]:
    """NB LB uuid -> (NB LB row, NB keys of the switches it applies to)."""
    out: dict[str, tuple[Any, set[str]]] = {}
    for dp in nd.switches():
        lbs = list(_dp_lbs(dp))
        lbs.extend(dp.lbs_from_routers)  # install_ls_lb_from_router
        for lb in lbs:
            out.setdefault(uuid_str(lb), (lb, set()))[1].add(dp.key)
    return out


def lb_datapaths(nd: Northd) -> dict[str, tuple[Any, set[str], set[str]]]:
    """NB LB uuid -> (NB LB row, NB keys of its switches, of its routers)."""
    out: dict[str, tuple[Any, set[str], set[str]]] = {}
    for dp in nd.by_index:
        lbs = _dp_lbs(dp)
        if not dp.is_router:
            lbs.extend(dp.lbs_from_routers)  # install_ls_lb_from_router
        for lb in lbs:
            entry = out.setdefault(uuid_str(lb), (lb, set(), set()))
            (entry[2] if dp.is_router else entry[1]).add(dp.key)
    return out


def desired_sb_lb(lb: Any, switches: Iterable[str], dp_uuid: Mapping[str, str], routers: Iterable[str] = (),
                  profile: FlowProfile = DEFAULT_PROFILE) -> WantLb | None:
    """The SB row of NB load balancer ``lb`` on the switches (NB keys) ``switches``; None: no row.

    With the ``lb_split_datapath_groups`` behaviour (25.03, observed): a row for a load balancer
    on switches or routers (``routers``), naming them in ls_datapath_group / lr_datapath_group, no
    ``external_ids:lb_id`` (the row's uuid is the NB row's)."""
    sb_dps = frozenset(dp_uuid[d] for d in switches if d in dp_uuid)
    split = profile.has("lb_split_datapath_groups")
    lr_dps = frozenset(dp_uuid[d] for d in routers if d in dp_uuid) if split else frozenset()
    return desired_sb_lb_on(lb, sb_dps, lr_dps, profile)


def desired_sb_lb_on(lb: Any, sb_dps: frozenset[str], lr_dps: frozenset[str],
                     profile: FlowProfile = DEFAULT_PROFILE) -> WantLb | None:
    """:func:`desired_sb_lb` with the datapaths already resolved to SB uuids (``lr_dps``: empty
    without ``lb_split_datapath_groups``), for load balancers that share them."""
    split = profile.has("lb_split_datapath_groups")
    if lb is None or not (sb_dps or lr_dps):
        return None
    flags = (split, not profile.has("no_hairpin_orig_tuple"), profile.has("template_lb_backends_each"))
    # (Kept with the row till it changes: a node joining or leaving a cluster-wide group marks
    # every service's load balancer, whose columns stay as they were.  Shared: never modified.)
    cols: dict[str, Any] = fastrow.derived(lb, f"sb_lb_cols:{flags}", lambda row: _sb_lb_cols(row, *flags))
    if split:
        return WantLb(sb_dps, cols, lr_dps, str(lb.uuid))
    return WantLb(sb_dps, cols)


def _sb_lb_cols(lb: Any, split: bool, hairpin_orig_tuple: bool, each: bool) -> dict[str, Any]:
    """The SB Load_Balancer columns of NB ``lb`` but its datapaths (``each``: 26.03's template
    backends read one by one)."""
    ids = {} if split else {"lb_id": str(lb.uuid)}  # observed: the NB external_ids are not copied
    opts = dict(lb.options)
    if hairpin_orig_tuple:  # (26.03, SB 21.x: no longer written)
        opts["hairpin_orig_tuple"] = "true"
    # observed: copied as is; an NB row without protocol (the flows read it as tcp) gives none
    proto: Any = lb.protocol[0] if lb.protocol else ["set", []]
    return {
        "name": lb.name,
        "vips": _omap({sb_vip_key(lb, k, each): v for k, v in lb.vips.items()}),
        "protocol": proto,
        "options": _omap(opts),
        "external_ids": _omap(ids),
    }


def desired_sb_lbs(nd: Northd, dp_uuid: Mapping[str, str], profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, WantLb]:
    want: dict[str, WantLb] = {}
    if profile.has("lb_split_datapath_groups"):
        for key, (lb, ls, lr) in lb_datapaths(nd).items():
            w = desired_sb_lb(lb, ls, dp_uuid, lr, profile)
            if w is not None:
                want[key] = w
        return want
    for key, (lb, dps) in switch_lb_datapaths(nd).items():
        w = desired_sb_lb(lb, dps, dp_uuid, profile=profile)
        if w is not None:
            want[key] = w
    return want
