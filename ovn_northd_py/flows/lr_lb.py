"""Load balancers on logical routers (``man ovn-northd``: UNSNAT, DEFRAG, LB affinity, DNAT, SNAT).

Observed on the reference (23.03; 25.03: :func:`lb_dgps`, ``use_stateless_nat``).  Every router with load balancers (its own and its groups')
gets these flows: gateway routers (``options:chassis``), routers with one distributed gateway port
D (chassisredirect port C) and plain distributed routers alike; only D adds ``is_chassis_resident(C)``
and unDNAT flows.  Per load balancer (owner ``("lb", uuid, router key)``), protocol P (tcp unless
udp/sctp), per VIP V (``IP``/``IP:PORT``/``[IP6]:PORT``, no health check) with backends B:

* ``lr_in_defrag`` 100 ``ip && ip4.dst == V`` -> ``ct_dnat;`` (every VIP, backends or not);
* ``lr_in_unsnat`` 120, on gateway routers and D, when V is the external IP of one of the router's
  NAT rules: ``ip4 && ip4.dst == V && P[ && P.dst == PORT]`` -> ``next;``;
* ``lr_in_dnat`` 120 (VIP with a port) / 110 (without): ``ct.new && !ct.rel && ip4 && ip4.dst == V
  [&& P && P.dst == PORT]`` -> ``ct_lb_mark(backends=B[; hash_fields="..."]);``, prefixed
  ``flags.skip_snat_for_lb = 1;`` with ``skip_snat`` (``; skip_snat`` inside), else
  ``flags.force_snat_for_lb = 1;`` (``; force_snat``) when the router forces SNAT for load
  balancers (:func:`forces_snat_for_lb`: a gateway router with ``options:lb_force_snat_ip``
  ``router_ip``, any router -- gateway, DGP or plain -- with addresses there; a value with a word
  that is not an address forces nothing).  Without backends: the prefix, then ``reg0 = 0; reject
  {...};`` with ``options:reject`` (never limited to C) or ``drop;`` (behaviour
  ``lb_drop_no_snat_flag``, 25.03: a bare ``drop;``, observed);
* on D, ``lr_out_undnat`` 120 per VIP with backends: ``ip4 && ((ip4.src == B && P.src == BP) || ...)
  && outport == D && is_chassis_resident(C)`` -> ``ct_dnat_in_czone;`` (``flags.skip_snat_for_lb =
  1; next;`` with ``skip_snat``, else ``flags.force_snat_for_lb = 1; next;`` when forcing SNAT);
* ``options:affinity_timeout`` T > 0: ``lr_in_lb_aff_check`` 100 per VIP (backends or not), and per
  backend ``lr_in_dnat`` 150 (restore the VIP into ``reg0``/``xxreg0``, ``ct_lb_mark`` to that
  backend; here the router's ``force_snat`` wins over the load balancer's ``skip_snat``) and
  ``lr_in_lb_aff_learn`` 100 (``commit_lb_aff``);
* ``skip_snat``: ``lr_out_snat`` 120 ``flags.skip_snat_for_lb == 1 && ip`` -> ``next;``;
* controller events (:func:`.ls_lb.raises_event`, as on switches): ``lr_in_dnat`` 130 with the
  switch's match and ``trigger_event`` action, on every router with the load balancer (gateway,
  DGP -- not limited to C -- and plain), metered by the router's Copp ``event-elb``.

Router-wide, gateway routers only (owner ``("dp", key)``, built whether or not the router has load
balancers): ``options:lb_force_snat_ip=router_ip`` adds, per router port with a peer, its first IPv4
and first configured IPv6 address A: ``lr_in_unsnat`` 110 ``inport == P && ip4.dst == A`` ->
``ct_snat;`` and ``lr_out_snat`` 110 ``flags.force_snat_for_lb == 1 && ip4 && outport == P`` ->
``ct_snat(A);`` (26.03: ``lr_in_unsnat`` 110 for every address of the port,
:func:`_unsnat_addresses`).  An explicit ``lb_force_snat_ip`` / ``dnat_force_snat_ip`` address X (first per
family) adds ``lr_in_unsnat`` 110 ``ip4 && ip4.dst == X`` -> ``ct_snat;`` and ``lr_out_snat`` 100
``flags.force_snat_for_lb == 1 && ip4`` (``force_snat_for_dnat``) -> ``ct_snat(X);``.

26.03 (behaviour ``lb_stateless_select``; OVN's ovn-northd.at "Load balancer with Distributed
Gateway Ports (LB + DGP + NAT Stateless)"): a load balancer with ``options:use_stateless_nat=true``
has, on every router it is on, no ``lr_in_defrag`` flow, and per VIP V with backends B0..Bn
``lr_in_ct_extract`` 120 ``ip && ip4.dst == V`` -> ``reg1[0..15] = select(0,...,n);`` (``select(values=(...);
hash_fields="...")`` with ``selection_fields``; ``next;`` for one backend).  Where it is stateless
(several DGPs), ``lr_in_dnat`` 110 / 120 per DGP D and backend Bi: ``is_chassis_resident(C) && ip4
&& ip4.dst == V[ && P && P.dst == PORT][ && reg1[0..15] == i]`` -> ``ip4.dst = Bi;[ P.dst = BPi;] next;``
(no SNAT flag); elsewhere its ``lr_in_dnat`` flows are the stateful ones above.

The ``$_rtr_lb_<key>_ip4/ip6`` address sets (VIPs inside one of the router's networks) and the
ARP/ND replies for them are :func:`.router_addrs.router_lb_vip_sets` and :mod:`.lr_ip_input`.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from ..lflow.profile import DEFAULT_PROFILE
from ..lflow.stages import (
    LR_IN_CT_EXTRACT,
    LR_IN_DEFRAG,
    LR_IN_DNAT,
    LR_IN_GW_REDIRECT,
    LR_IN_IP_INPUT,
    LR_IN_LB_AFF_CHECK,
    LR_IN_LB_AFF_LEARN,
    LR_IN_UNSNAT,
    LR_OUT_SNAT,
    LR_OUT_UNDNAT,
)
from ..lflow.table import FlowSpec7, FlowTable
from ..northd.addresses import AddressError, IPAddress, LrpNetworks, parse_ip
from ..northd.lb_vips import Endpoint, lb_protocol
from ..northd.model import Datapath, Port
from ..ovsdb import fastrow
from ..ovsdb.fastrow import uuid_str
from .chassis_features import ALL_FEATURES
from .context import FlowCtx, hint
from .copp import copp_meter
from .lb_health import hash_fields
from .lr_common import fmt_ip, parse_ip_strict, port_nets, router_info, smap_bool
from .ls_lb import (
    Vip,
    cached_vips,
    ct_extract_port_match,
    event_action,
    event_match,
    lb_backends,
    load_vip_v2,
    raises_event,
)
from .owners import dp_owner, router_lb_owner
from .registers import (
    REG_LB_AFF_BACKEND_IP4,
    REG_LB_AFF_MATCH_PORT,
    REG_LB_L3_AFF_BACKEND_IP6,
    REG_NEXT_HOP_IPV4,
    REG_NEXT_HOP_IPV6,
    REG_ORIG_DIP_IPV4_V2,
    REG_ORIG_DIP_IPV6_V2,
    REG_ORIG_TP_DPORT_ROUTER,
    REG_ORIG_TP_DPORT_V2,
    REGBIT_KNOWN_LB_SESSION,
)

LB_PORT_PRIORITY = 120
LB_IP_PRIORITY = 110
LB_AFF_PRIORITY = 150
EVENT_PRIORITY = 130
AFF_PRIORITY = 100
# lr_out_snat's table id: a rejected packet resumes the egress pipeline there.
REJECT = "reg0 = 0; reject { outport <-> inport; next(pipeline=egress,table=3);};"


class LbGateway(Protocol):
    """What the router LB flows need to know of where a router's NAT happens (:class:`.lr_nat.NatGw`)."""

    @property
    def dgp(self) -> Port | None: ...

    def resident(self) -> str: ...


def forces_snat_for_lb(router: Datapath, ctx: FlowCtx) -> bool:
    """Does ``router`` SNAT load-balanced traffic (observed)?  A gateway router with
    ``options:lb_force_snat_ip=router_ip``, or any router (gateway, with a distributed gateway port
    or plain) with a valid address list there (:func:`first_per_family`)."""
    text = str(router.nb.options.get("lb_force_snat_ip", ""))
    if text == "router_ip":
        return router_info(router, ctx).is_gateway
    return bool(first_per_family(text))


def force_snat_router_ip(router: Datapath, ctx: FlowCtx) -> bool:
    """``options:lb_force_snat_ip=router_ip`` on a gateway router (its port IPs are SNAT addresses)."""
    return router_info(router, ctx).is_gateway and router.nb.options.get("lb_force_snat_ip") == "router_ip"


def nat_external_ips(router: Datapath) -> frozenset[IPAddress]:
    out: set[IPAddress] = set()
    for nat in router.nb.nat:
        ip = fastrow.derived(nat, "nat_external_ip", _nat_external_ip)
        if ip is not None:
            out.add(ip)
    return frozenset(out)


def _nat_external_ip(nat: Any) -> IPAddress | None:
    """A NAT rule's external IP, strictly read (kept with the row till it changes: every gateway
    router's NAT rules are read again when a service joins the cluster-wide group)."""
    try:
        return parse_ip(nat.external_ip.strip())
    except AddressError:
        return None


def _fam(e: Endpoint) -> str:
    return "ip6" if e.v6 else "ip4"


def _vip_match(v: Vip, proto: str, ct_extract: bool = False) -> str:
    """``ct_extract`` (behaviour ``ct_extract_lb_match``, 26.03): the port matched on the registers
    lr_in_ct_extract loaded (:func:`.ls_lb.ct_extract_port_match`)."""
    fam = _fam(v.vip)
    m = f"ct.new && !ct.rel && {fam} && {fam}.dst == {v.vip.ip}"
    if v.vip.port is None:
        return m
    return f"{m} && {ct_extract_port_match(proto, v.vip.port)}" if ct_extract else f"{m} && {proto} && {proto}.dst == {v.vip.port}"



def build_router_lb_flows(
    router: Datapath,
    gw: LbGateway,
    lb: Any,
    table: FlowTable,
    *,
    force_snat: bool = False,
    nat_ips: frozenset[IPAddress] = frozenset(),
    gateway: bool = True,
    ctx: FlowCtx | None = None,
) -> None:
    """The flows of load balancer ``lb`` on ``router`` (see the module doc).

    ``force_snat``: :func:`forces_snat_for_lb`; ``nat_ips``: :func:`nat_external_ips`; ``gateway``:
    False for a plain distributed router (no gateway router, no distributed gateway port).

    A load balancer in a group shared by many gateway routers gives each the same flows but for
    what the router adds (its SNAT flag, the NAT IPs among the VIPs, where NAT happens, its Copp
    meters): the flows are built once per such shape and load balancer (memoised under the load
    balancer's uuid, like :func:`.ls_lb.cached_vips`: whoever changes what it reads calls
    ``ctx.forget(uuid)``) and added to each router with that shape."""
    if ctx is None:
        _add_specs(router, lb, table, _router_lb_specs(router, gw, lb, force_snat, nat_ips, gateway, ctx))
        return
    build_router_lbs_flows(router, gw, [lb], table, force_snat=force_snat, nat_ips=nat_ips, gateway=gateway, ctx=ctx)


def build_router_lbs_flows(router: Datapath, gw: LbGateway, lbs: list[Any], table: FlowTable, *,
                           force_snat: bool, nat_ips: frozenset[IPAddress], gateway: bool, ctx: FlowCtx) -> None:
    """:func:`build_router_lb_flows` for each of ``lbs`` on one router (what the router adds to the
    flows' shape worked out once)."""
    dgps = lb_dgps(router, gw, ctx)
    base = (force_snat, gateway, gw.resident(),
            tuple((d.name, d.crp.name if d.crp is not None else None) for d in dgps),
            copp_meter(router, ctx, "event-elb"), copp_meter(router, ctx, "reject"))
    nat_check = gateway and bool(nat_ips)
    plain_shape: Hashable = (base, frozenset())
    index, key = router.index, router.key
    batch = ctx.router_lb_batch
    for lb in lbs:
        u = uuid_str(lb)
        by_shape: dict[Hashable, _RouterLbFlows] = ctx.cached("router_lb_flows", u, dict)
        if nat_check:
            nat_vips = ctx.cached("router_lb_vip_ips", u, partial(_vip_ips, lb, ctx)) & nat_ips
            shape: Hashable = (base, nat_vips) if nat_vips else plain_shape
        else:
            shape = plain_shape
        flows = by_shape.get(shape)
        if flows is None:
            flows = by_shape[shape] = _RouterLbFlows(
                _specs7(_router_lb_specs(router, gw, lb, force_snat, nat_ips, gateway, ctx)), hint(u))
        if batch is not None:
            batch.add(flows, index, router_lb_owner(u, key))
        else:
            flows.add(table, index, router_lb_owner(u, key))


class RouterLbBatch:
    """A full build's load-balancer flows on routers: each router's are collected as its flows
    are built (by shape, :func:`build_router_lbs_flows`), then :meth:`flush` adds each load
    balancer's flows on all the routers of one shape at once (:meth:`FlowTable.add_specs_many`;
    the same references and owners as router by router)."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        # id of a _RouterLbFlows -> (it, router indices, their owners); insertion order.
        self._pending: dict[int, tuple[_RouterLbFlows, list[int], list[Hashable]]] = {}

    def add(self, flows: _RouterLbFlows, dp_index: int, owner: Hashable) -> None:
        entry = self._pending.get(id(flows))
        if entry is None:
            entry = self._pending[id(flows)] = (flows, [], [])
        entry[1].append(dp_index)
        entry[2].append(owner)

    def flush(self, table: FlowTable) -> None:
        for flows, indices, owners in self._pending.values():
            table.add_specs_many(indices, flows.specs, flows.hint, owners)
        self._pending.clear()


# (stage, priority, match, actions, controller meter, added datapath by datapath: FlowTable.add's per_datapath)
_Spec = tuple[Any, int, str, str, str | None, bool]


def _specs7(specs: list[_Spec]) -> list[FlowSpec7]:
    """As :meth:`FlowTable.add_specs` takes them (the learn flows' ``/* drop */`` is a comment:
    never sampled)."""
    return [(*spec, spec[0] != LR_IN_LB_AFF_LEARN) for spec in specs]


@dataclass(slots=True)
class _RouterLbFlows:
    """A load balancer's flows on the routers of one shape, with the flow ids the last router
    added got (the next router's adds skip building and looking up the flows' keys)."""

    specs: list[FlowSpec7]
    hint: str
    epoch: object = None
    fids: list[int] | None = None

    def add(self, table: FlowTable, dp_index: int, owner: Hashable) -> None:
        known = self.fids if self.epoch is table.epoch else None
        self.fids = table.add_specs(dp_index, self.specs, self.hint, owner, known)
        self.epoch = table.epoch


def lb_dgps(router: Datapath, gw: LbGateway, ctx: FlowCtx | None) -> list[Port]:
    """The distributed gateway ports a router's load-balancer flows are built for: none on a
    gateway or plain router, ``gw.dgp`` alone, or with the ``lb_each_dgp`` behaviour (25.03) every
    DGP of the router (port order)."""
    if gw.dgp is None:
        return []
    if ctx is not None and ctx.profile.has("lb_each_dgp"):
        dgps = router_info(router, ctx).dgps
        if len(dgps) > 1:
            return list(dgps)
    return [gw.dgp]


def _resident(dgp: Port) -> str:
    return f' && is_chassis_resident("{dgp.crp.name}")' if dgp.crp is not None else ""


def _vip_ips(lb: Any, ctx: FlowCtx) -> frozenset[IPAddress | None]:
    return frozenset(parse_ip_strict(v.vip.ip) for v in cached_vips(lb, ctx))


def _add_specs(router: Datapath, lb: Any, table: FlowTable, specs: list[_Spec]) -> None:
    u = str(lb.uuid)
    table.add_specs(router.index, _specs7(specs), hint(u), router_lb_owner(u, router.key))


def _router_lb_specs(router: Datapath, gw: LbGateway, lb: Any, force_snat: bool, nat_ips: frozenset[IPAddress],
                     gateway: bool, ctx: FlowCtx | None) -> list[_Spec]:
    """The flows of ``lb`` on ``router`` (:func:`build_router_lb_flows`), as specs."""
    out: list[_Spec] = []

    def add(stage: Any, prio: int, match: str, actions: str, meter: str | None = None, per_dp: bool = False) -> None:
        out.append((stage, prio, match, actions, meter, per_dp))

    proto = lb_protocol(lb)
    options = fastrow.peek(lb, "options")  # (read only: no copy per router)
    skip = smap_bool(options, "skip_snat", False)
    if skip:
        prefix, suffix = "flags.skip_snat_for_lb = 1; ", "; skip_snat"
        # (26.03 groups it with the router's own flows, not its load balancers': per_dp)
        add(LR_OUT_SNAT, 120, "flags.skip_snat_for_lb == 1 && ip", "next;", per_dp=True)
    elif force_snat:
        prefix, suffix = "flags.force_snat_for_lb = 1; ", "; force_snat"
    else:
        prefix = suffix = ""
    reject = smap_bool(options, "reject", False)
    features = ctx.features if ctx is not None else ALL_FEATURES
    # Old chassis (:mod:`.chassis_features`): ct_lb, and no SNAT flag in the action (the affinity
    # flows keep theirs and ct_lb_mark, as the reference).
    lb_suffix = suffix if features.ct_lb_related else ""
    try:
        timeout = int(options.get("affinity_timeout", "0"))
    except ValueError:
        timeout = 0
    dgps = lb_dgps(router, gw, ctx)
    # (stateless NAT only when the load balancer's flows are on several DGPs)
    stateless = len(dgps) > 1 and smap_bool(options, "use_stateless_nat", False)
    # Where the VIP flows that depend on the chassis are: each DGP, or the gateway / plain router.
    places = [(d, _resident(d)) for d in dgps] if dgps else [(None, gw.resident())]
    v2 = ctx is not None and ctx.profile.has("lb_vip_regs_v2")
    ct_extract = ctx is not None and ctx.profile.has("ct_extract_lb_match")
    template_input = ctx is not None and ctx.profile.has("template_vip_ip_input")
    select = ctx is not None and ctx.profile.has("lb_stateless_select") and smap_bool(
        options, "use_stateless_nat", False)
    for v in cached_vips(lb, ctx):
        vip, fam = v.vip, _fam(v.vip)
        if select:
            n = len(v.backends)
            values = ",".join(str(k) for k in range(n))
            fields = hash_fields(lb)
            pick = (f"reg1[0..15] = select(values=({values}){fields});" if fields
                    else f"reg1[0..15] = select({values});") if n > 1 else "next;"
            add(LR_IN_CT_EXTRACT, 120, f"ip && {fam}.dst == {vip.ip}", pick)
        else:
            add(LR_IN_DEFRAG, 100, f"ip && {fam}.dst == {vip.ip}", "ct_dnat;")
        if template_input and v.template and vip.ip.startswith("^"):
            # Behaviour template_vip_ip_input (26.03, observed; ovn-northd(8) lr_in_ip_input): a
            # template VIP (``^VAR``: not a literal address of a template load balancer) goes on
            # (100), lest it be one of the router's own addresses and dropped.
            add(LR_IN_IP_INPUT, 100, f"{fam}.dst == {vip.ip}", "next;")
        if raises_event(lb, v, ctx):
            add(LR_IN_DNAT, EVENT_PRIORITY, event_match(v, proto), event_action(lb, v, proto),
                copp_meter(router, ctx, "event-elb") if ctx else None)
        if gateway and nat_ips and parse_ip_strict(vip.ip) in nat_ips and not (
                ctx is not None and ctx.profile.has("no_lb_unsnat_bypass")):
            port_m = "" if vip.port is None else f" && {proto}.dst == {vip.port}"
            add(LR_IN_UNSNAT, 120, f"{fam} && {fam}.dst == {vip.ip} && {proto}{port_m}", "next;")
        match = _vip_match(v, proto, ct_extract)
        prio = LB_IP_PRIORITY if vip.port is None else LB_PORT_PRIORITY
        for dgp, res in places:
            if v.backends and select and stateless:
                _add_stateless_select_dnat(add, v, proto, prio, res)
            elif v.backends:
                ct_lb, backends = lb_backends(lb, v, ctx.profile if ctx is not None else DEFAULT_PROFILE,
                                              features.ct_lb)
                # 25.03 (lb_vip_regs_v2): an affinity VIP's flow loads the VIP for lr_in_lb_aff_learn.
                load = load_vip_v2(v.affinity(keep_family=True)) if timeout > 0 and v2 else ""
                # use_stateless_nat: the destination rewritten to the first backend first.
                first = f"{fam}.dst = {v.backends[0].ip}; " if stateless else ""
                add(LR_IN_DNAT, prio, match + res,
                    f"{first}{prefix}{load}{ct_lb}(backends={backends}{hash_fields(lb)}{lb_suffix});")
            elif reject:
                add(LR_IN_DNAT, prio, match, prefix + REJECT, copp_meter(router, ctx, "reject") if ctx else None)
            else:
                bare = ctx is not None and ctx.profile.has("lb_drop_no_snat_flag")
                add(LR_IN_DNAT, prio, match + res, "drop;" if bare else prefix + "drop;")
            if dgp is not None and v.listed_backends:
                _add_dgp_undnat(add, v, dgp, res, proto, skip, force_snat, stateless, ctx)
        if timeout > 0:
            # Observed: the per-backend affinity flows let the router's force_snat win over skip_snat.
            # 25.03 (lb_affinity_skip_snat): a skip_snat load balancer's stay skip_snat.
            keep = skip and ctx is not None and ctx.profile.has("lb_affinity_skip_snat")
            aff = ("flags.force_snat_for_lb = 1; ", "; force_snat") if force_snat and not keep else (prefix, suffix)
            _add_affinity(v, proto, timeout, *aff, add, v2, ct_extract)
    return out


def _add_stateless_select_dnat(add: Any, v: Vip, proto: str, prio: int, res: str) -> None:
    """26.03's stateless DNAT of a VIP on one DGP (``res``: its ``&& is_chassis_resident(C)``): one
    flow per backend, chosen by the index lr_in_ct_extract selected into reg1[0..15]."""
    fam = _fam(v.vip)
    head = f"{res.removeprefix(' && ')} && {fam} && {fam}.dst == {v.vip.ip}"
    if v.vip.port is not None:
        head += f" && {proto} && {proto}.dst == {v.vip.port}"
    for k, b in enumerate(v.backends):
        match = head if len(v.backends) == 1 else f"{head} && reg1[0..15] == {k}"
        port = "" if b.port is None else f"{proto}.dst = {b.port}; "
        add(LR_IN_DNAT, prio, match, f"{fam}.dst = {b.ip}; {port}next;")


def _add_dgp_undnat(add: Any, v: Vip, dgp: Port, res: str, proto: str, skip: bool, force_snat: bool,
                    stateless: bool, ctx: FlowCtx | None) -> None:
    """A VIP's replies through DGP ``dgp``: lr_out_undnat 120 (and 25.03's lr_in_gw_redirect 200).
    ``use_stateless_nat`` (several DGPs): the unDNAT match ends ``&& P`` and does ``next;``, and
    lr_out_snat 160 with the same match rewrites the source to the VIP (and its port)."""
    fam = _fam(v.vip)
    alts = " || ".join(
        f"({fam}.src == {b.ip})" if b.port is None else f"({fam}.src == {b.ip} && {proto}.src == {b.port})"
        for b in v.listed_backends
    )
    no_czone = ctx is not None and ctx.separate_nat_zones()
    undnat = "ct_dnat;" if no_czone else "ct_dnat_in_czone;"
    if skip:
        undnat = "flags.skip_snat_for_lb = 1; next;"
    elif force_snat:
        undnat = "flags.force_snat_for_lb = 1; next;"
    # 25.03 (dgp_nat_no_czone): replies leaving or entering through the DGP.
    # (use_common_zone changes the action only, observed)
    both = ctx is not None and ctx.profile.has("dgp_nat_no_czone")
    where = f'(inport == "{dgp.name}" || outport == "{dgp.name}")' if both else f'outport == "{dgp.name}"'
    match = f"{fam} && ({alts}) && {where}{res}"
    if stateless:
        match += f" && {proto}"
        add(LR_OUT_UNDNAT, 120, match, "next;")
        port = "" if v.vip.port is None else f"{proto}.src = {v.vip.port}; "
        add(LR_OUT_SNAT, 160, match, f"{fam}.src = {v.vip.ip}; {port}next;")
    else:
        add(LR_OUT_UNDNAT, 120, match, undnat)
    if ctx is not None and ctx.profile.has("lb_backend_gw_redirect") and dgp.crp is not None:
        add(LR_IN_GW_REDIRECT, 200, f'{fam} && ({alts}) && outport == "{dgp.name}"',
            f'outport = "{dgp.crp.name}"; next;')


def _add_affinity(orig: Vip, proto: str, timeout: int, prefix: str, suffix: str, add: Any,
                  v2: bool = False, ct_extract: bool = False) -> None:
    """Affinity flows; a template VIP's (:meth:`.ls_lb.Vip.affinity`) keep its own family only in
    the ``lr_in_lb_aff_check`` match (observed).  ``v2``: the ``lb_vip_regs_v2`` behaviour (25.03):
    the VIP is in reg4 / reg2[0..15] (loaded by the VIP's lr_in_dnat flow, not by the check), the
    backend chk_lb_aff() found too, and the per-backend flow matches the VIP's destination."""
    v = orig.affinity()  # (25.03 too: a template VIP's router affinity flows are IPv6's)
    vip, fam = v.vip, _fam(v.vip)
    vip_reg = REG_NEXT_HOP_IPV6 if vip.v6 else REG_NEXT_HOP_IPV4
    port_reg = REG_ORIG_TP_DPORT_ROUTER
    check = f"{vip_reg} = {fam}.dst; "
    if vip.port is not None:
        check += f"{REG_ORIG_TP_DPORT_ROUTER} = {proto}.dst; "
    backend_reg = REG_LB_L3_AFF_BACKEND_IP6 if vip.v6 else REG_LB_AFF_BACKEND_IP4
    backend_port_reg, head, load = REG_LB_AFF_MATCH_PORT, fam, f"{vip_reg} = {vip.ip}; "
    if v2:
        vip_reg = REG_ORIG_DIP_IPV6_V2 if vip.v6 else REG_ORIG_DIP_IPV4_V2
        port_reg = REG_ORIG_TP_DPORT_V2
        check, backend_reg, backend_port_reg = "", vip_reg, port_reg
        head, load = f"{fam}.dst == {vip.ip}", ""
    add(LR_IN_LB_AFF_CHECK, AFF_PRIORITY, _vip_match(orig, proto, ct_extract),
        check + f"{REGBIT_KNOWN_LB_SESSION} = chk_lb_aff(); next;")
    learn_vip = f"{REGBIT_KNOWN_LB_SESSION} == 0 && ct.new && {fam} && {vip_reg} == {vip.ip}"
    if vip.port is not None:
        learn_vip += f" && {port_reg} == {vip.port}"
    for b in v.listed_backends:
        m = f"{REGBIT_KNOWN_LB_SESSION} == 1 && ct.new && {head} && {backend_reg} == {b.ip}"
        if b.port is not None:
            m += f" && {backend_port_reg} == {b.port}"
        add(LR_IN_DNAT, LB_AFF_PRIORITY, m, f"{load}{prefix}ct_lb_mark(backends={b.text()}{suffix});")
        learn = f"{learn_vip} && {fam}.dst == {b.ip}"
        if b.port is not None:
            learn += f" && {proto}.dst == {b.port}"
        args = f'vip = "{vip.text()}", backend = "{b.text()}", '
        if vip.port is not None:
            args += f"proto = {proto}, "
        add(LR_IN_LB_AFF_LEARN, AFF_PRIORITY, learn, f"commit_lb_aff({args}timeout = {timeout}); /* drop */")


def first_per_family(text: str) -> list[IPAddress]:
    """The first address of each family of a ``*_force_snat_ip`` option; none at all when any
    blank-separated word of it is not an IP address (observed: ``bad 172.31.0.9`` forces nothing)."""
    out: dict[int, IPAddress] = {}
    for word in text.split():
        ip = parse_ip_strict(word)
        if ip is None:
            return []
        out.setdefault(ip.version, ip)
    return [out[v] for v in sorted(out)]


def _unsnat_addresses(nets: LrpNetworks, firsts: list[tuple[str, str]], ctx: FlowCtx) -> list[tuple[str, str]]:
    """The addresses of a port whose replies ``lr_in_unsnat`` 110 un-SNATs under
    ``lb_force_snat_ip=router_ip``: the first IPv4 and first IPv6 one, or, behaviour
    ``force_snat_router_ip_unsnat_all`` (26.03, observed), every address of the port (each IPv4
    network's, each IPv6 one's but the link-local, however many: not only the 16 networks
    ``lr_out_snat`` 110 SNATs to)."""
    if not ctx.profile.has("force_snat_router_ip_unsnat_all"):
        return firsts
    return [("ip4", a.addr_s) for a in nets.ipv4] + [("ip6", a.addr_s) for a in nets.ipv6[:-1]]


def build_lr_force_snat_flows(router: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The router-wide ``lb_force_snat_ip`` / ``dnat_force_snat_ip`` flows of a gateway router."""
    if not router_info(router, ctx).is_gateway:
        return
    i, owner = router.index, dp_owner(router)
    opts = router.nb.options
    if opts.get("lb_force_snat_ip") == "router_ip":
        for p in router.ports:
            nets = port_nets(p, ctx) if p.kind == "lrp" and p.peer is not None else None
            if nets is None:
                continue
            firsts = ([("ip4", nets.ipv4[0].addr_s)] if nets.ipv4 else []) + (
                [("ip6", nets.ipv6[0].addr_s)] if len(nets.ipv6) > 1 else []  # the last one is link-local
            )
            # 26.03 (lr_network_id): the first address at 105, then one flow per network the next
            # hop is in (110, flags.network_id == N, from lr_in_network_id).
            per_net = ctx.profile.has("lr_network_id")
            for fam, addr in _unsnat_addresses(nets, firsts, ctx):
                table.add(i, LR_IN_UNSNAT, 110, f'inport == "{p.name}" && {fam}.dst == {addr}', "ct_snat;",
                          owner=owner)
            for fam, addr in firsts:
                table.add(i, LR_OUT_SNAT, 105 if per_net else 110,
                          f'flags.force_snat_for_lb == 1 && {fam} && outport == "{p.name}"',
                          f"ct_snat({addr});", owner=owner)
            if per_net:
                for fam, family in (("ip4", [a.addr_s for a in nets.ipv4]), ("ip6", [a.addr_s for a in nets.ipv6[:-1]])):
                    for n, addr in enumerate(family[:16]):
                        table.add(i, LR_OUT_SNAT, 110, f"flags.force_snat_for_lb == 1 && flags.network_id == {n} && "
                                  f'{fam} && outport == "{p.name}"', f"ct_snat({addr});", owner=owner)
    for option, flag in (("dnat_force_snat_ip", "force_snat_for_dnat"), ("lb_force_snat_ip", "force_snat_for_lb")):
        text = str(opts.get(option, ""))
        if text == "router_ip":
            continue
        for ip in first_per_family(text):
            fam, addr = ("ip6" if ip.version == 6 else "ip4"), fmt_ip(ip)
            table.add(i, LR_IN_UNSNAT, 110, f"{fam} && {fam}.dst == {addr}", "ct_snat;", owner=owner)
            table.add(i, LR_OUT_SNAT, 100, f"flags.{flag} == 1 && {fam}", f"ct_snat({addr});", owner=owner)
