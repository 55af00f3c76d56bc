"""What dynamic routing adds to Port_Binding ``options`` and Datapath_Binding ``external_ids``
(read by ovn-controller), as observed on the references.

Port_Binding (behaviour ``dynamic_routing``, 25.03 on), ports of a router with
``options:dynamic-routing=true``:

* the ports bound to a chassis -- a gateway router's ``l3gateway`` ports, a distributed gateway
  port's chassisredirect port -- get ``dynamic-routing=true``, the router's
  ``dynamic-routing-vrf-name`` and the router port's ``dynamic-routing-maintain-vrf`` (when true)
  and ``dynamic-routing-port-name``;
* 26.03 (behaviour ``dynamic_routing_dp_ids``): every router port and chassisredirect port gets
  ``dynamic-routing-no-learning=true`` and ``dynamic-routing-redistribute-local-only=true`` when the
  port's option is true, or it has none and the router's is.

Datapath_Binding (26.03, behaviour ``dynamic_routing_dp_ids``): a dynamic-routing router's
``dynamic-routing-vrf-id`` (a valid table id, 1 to 4,294,967,295), ``-v4-prefix-nexthop`` and
``-v6-prefix-nexthop`` options; a switch with ``other_config:dynamic-routing-vni`` (as written,
even a VNI that is not valid and makes no EVPN switch,
:func:`~ovn_northd_py.flows.ls_evpn.evpn_vni`): the VNI and its ``-bridge-ifname``,
``-vxlan-ifname``, ``-advertise-ifname``, ``-arp-prefer-local`` and ``-redistribute`` settings that
are set (not ``-fdb-prefer-local``, which only changes its flows).
"""

from __future__ import annotations

from ..lflow.profile import FlowProfile
from ..northd.model import Datapath, Port

SWITCH_IDS = ("dynamic-routing-bridge-ifname", "dynamic-routing-vxlan-ifname", "dynamic-routing-advertise-ifname",
              "dynamic-routing-arp-prefer-local", "dynamic-routing-redistribute")
ROUTER_IDS = ("dynamic-routing-v4-prefix-nexthop", "dynamic-routing-v6-prefix-nexthop")


def _true(value: object) -> bool:
    return str(value).lower() == "true"


def dynamic_routing_pb_options(p: Port, profile: FlowProfile) -> dict[str, str]:
    if p.kind not in ("lrp", "crp") or not profile.has("dynamic_routing"):
        return {}
    ropts, popts = p.dp.nb.options, p.nb.options
    if not _true(ropts.get("dynamic-routing", "")):
        return {}
    out: dict[str, str] = {}
    if p.kind == "crp" or p.sb_type == "l3gateway":
        out["dynamic-routing"] = "true"
        vrf = ropts.get("dynamic-routing-vrf-name")
        if vrf:
            out["dynamic-routing-vrf-name"] = str(vrf)
        if _true(popts.get("dynamic-routing-maintain-vrf", "")):
            out["dynamic-routing-maintain-vrf"] = "true"
        name = popts.get("dynamic-routing-port-name")
        if name:
            out["dynamic-routing-port-name"] = str(name)
    if profile.has("dynamic_routing_dp_ids"):
        for key in ("dynamic-routing-no-learning", "dynamic-routing-redistribute-local-only"):
            value = popts[key] if key in popts else ropts.get(key, "")
            if _true(value):
                out[key] = "true"
    return out


def dynamic_routing_dp_ids(dp: Datapath, profile: FlowProfile) -> dict[str, str]:
    if not profile.has("dynamic_routing_dp_ids"):
        return {}
    out: dict[str, str] = {}
    if dp.is_switch:
        cfg = getattr(dp.nb, "other_config", {})
        if "dynamic-routing-vni" not in cfg:
            return {}
        out["dynamic-routing-vni"] = str(cfg["dynamic-routing-vni"])  # (as written, valid or not)
        out.update({k: str(cfg[k]) for k in SWITCH_IDS if k in cfg})
        return out
    opts = getattr(dp.nb, "options", {})
    if not _true(opts.get("dynamic-routing", "")):
        return {}
    vrf = str(opts.get("dynamic-routing-vrf-id", ""))
    if vrf.isdigit() and 1 <= int(vrf) <= 4_294_967_295:
        out["dynamic-routing-vrf-id"] = str(int(vrf))
    out.update({k: str(opts[k]) for k in ROUTER_IDS if k in opts})
    return out
