"""EVPN switches (behaviour ``evpn``, 26.03): ``other_config:dynamic-routing-vni`` on a switch.

``ovn-nb(5)`` ("EVPN Options"): a switch with a valid VNI (0 to 16,777,215) is extended to an EVPN
L2 domain; ovn-controller keeps a local EVPN FDB and ARP/ND cache.  Observed on sid's 26.03
reference (its flows on such a switch, whatever the other EVPN options):

* ``ls_in_pre_lb`` 110 ``from_evpn_vtep`` -> ``next;`` and ``ls_out_pre_lb`` 110 ``to_evpn_vtep``
  -> the switch's conntrack skip (``flags.pkt_sampled = 0; ct_clear; next;``, ``next;`` with
  stateful ACLs); with stateful ACLs ``ls_{in,out}_pre_acl`` 110 too, ``next;`` (26.03.1's
  ovn-northd.at "LS EVPN conntrack skip with stateful ACLs and LBs");
* ``ls_in_l2_lkup`` 0: ``outport = get_fdb(eth.dst); remote_outport = get_remote_fdb(eth.dst);
  next;`` (the remote FDB looked up too);
* ``ls_in_l2_unknown``: 50 ``outport == "none" && remote_outport == "none"`` (unknown in both: the
  switch's unknown handling, drop without unknown ports); with
  ``other_config:dynamic-routing-fdb-prefer-local=true`` the local entry wins (25 ``outport ==
  "none"`` -> ``outport = remote_outport; output;``, 0 ``output;``), else the remote one (25
  ``remote_outport == "none"`` -> ``output;``, 0 ``outport = remote_outport; output;``).

The default ``ls_in_l2_lkup`` / ``ls_in_l2_unknown`` flows of :mod:`.defaults` and :mod:`.ls_l2`
leave such a switch to this builder.  Owner: the switch.
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_L2_LKUP, LS_IN_L2_UNKNOWN, Stage
from ..lflow.table import FlowTable
from ..northd.model import Datapath
from .context import FlowCtx
from .owners import dp_owner

VNI_MAX = 16_777_215


def evpn_vni(dp: Datapath, ctx: FlowCtx) -> int | None:
    """The switch's valid ``other_config:dynamic-routing-vni`` (behaviour ``evpn``), else None."""
    if not dp.is_switch or not ctx.profile.has("evpn"):
        return None
    text = str(getattr(dp.nb, "other_config", {}).get("dynamic-routing-vni", ""))
    try:
        vni = int(text, 10)
    except ValueError:
        return None
    return vni if 0 <= vni <= VNI_MAX else None


def build_evpn_skip_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable, stages: tuple[Stage, Stage],
                          out_actions: str) -> None:
    """Traffic from / to the VTEP skips conntrack: ``from_evpn_vtep`` (ingress stage, ``next;``) and
    ``to_evpn_vtep`` (egress stage, ``out_actions``: the switch's own conntrack skip actions) at 110,
    in ``ls_*_pre_lb`` always and ``ls_*_pre_acl`` with stateful ACLs (:mod:`.ls_acl`)."""
    if evpn_vni(dp, ctx) is None:
        return
    owner, i = dp_owner(dp), dp.index
    table.add(i, stages[0], 110, "from_evpn_vtep", "next;", owner=owner)
    table.add(i, stages[1], 110, "to_evpn_vtep", out_actions, owner=owner)


def build_ls_evpn_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable, unknown: str) -> None:
    """The EVPN flows of switch ``dp`` (``unknown``: what its ``ls_in_l2_unknown`` 50 flow does)."""
    owner, i = dp_owner(dp), dp.index
    table.add(i, LS_IN_L2_LKUP, 0, "1", "outport = get_fdb(eth.dst); remote_outport = get_remote_fdb(eth.dst); next;",
              owner=owner)
    table.add(i, LS_IN_L2_UNKNOWN, 50, 'outport == "none" && remote_outport == "none"', unknown, owner=owner)
    if str(dp.nb.other_config.get("dynamic-routing-fdb-prefer-local", "")).lower() == "true":
        table.add(i, LS_IN_L2_UNKNOWN, 25, 'outport == "none"', "outport = remote_outport; output;", owner=owner)
        table.add(i, LS_IN_L2_UNKNOWN, 0, "1", "output;", owner=owner)
    else:
        table.add(i, LS_IN_L2_UNKNOWN, 25, 'remote_outport == "none"', "output;", owner=owner)
        table.add(i, LS_IN_L2_UNKNOWN, 0, "1", "outport = remote_outport; output;", owner=owner)
