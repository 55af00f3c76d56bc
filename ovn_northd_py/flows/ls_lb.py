"""Load balancers on logical switches (man ovn-northd: Pre-stateful, LB, LB affinity, hairpin tables).

Observed on the reference (23.03), for each load balancer attached to a switch (directly
or through a Load_Balancer_Group; owner ``("lb", lb uuid)``), and each of its VIPs
(``IP``, ``IP:PORT``, ``[IP6]``, ``[IP6]:PORT``; protocol tcp unless ``udp``/``sctp``):

* ``ls_in_pre_stateful`` 120: ``reg0[2] == 1 && ip4.dst == VIP [&& P.dst == PORT]`` loads the
  VIP into ``reg1`` (``xxreg1`` for IPv6) and the port into ``reg2[0..15]``, then ``ct_lb_mark;``;
* ``ls_in_lb`` 120 (with a port) / 110 (without): ``ct.new && ip4.dst == VIP [&& P.dst == PORT]``
  -> ``reg0[1] = 0; ct_lb_mark(backends=B[; hash_fields="..."]);`` (``selection_fields``,
  ``tp_*`` named after the protocol); without backends ``drop;``, or with ``options:reject``
  a reject that resumes at egress ``ls_out_qos_mark``;
* ``options:affinity_timeout`` > 0: ``ls_in_lb_aff_check`` 100 per VIP, and per backend
  ``ls_in_lb`` 150 (restore the VIP registers, ``ct_lb_mark`` to that backend) and
  ``ls_in_lb_aff_learn`` 100 (``commit_lb_aff``);
* identical flows of two load balancers on one switch are one flow; different actions for
  one VIP are both emitted;
* controller events (:func:`raises_event`): a VIP for which the NB lists no backend, of a load
  balancer without ``reject``, with NB_Global ``options:controller_event=true`` or the load
  balancer's ``options:event=true``: ``ls_in_pre_lb`` 130 ``ip4.dst == VIP && P[ && P.dst == PORT]``
  -> ``trigger_event(event = "empty_lb_backends", vip = "VIP", protocol = "P", load_balancer =
  "UUID");`` (its ``drop;`` in ``ls_in_lb`` stays).  It carries the switch's Copp ``event-elb``
  meter, and a reject VIP its ``reject`` meter (:mod:`.copp`; per switch, so one load balancer's
  flow may be split over meters).

VIPs and backends (:func:`parse_vip`): a VIP that does not parse, or with one backend that does not
(bad address or port, the other family), gets no flows at all and is warned about once
(``ctx.warn``, kind ``lb_bad_vip``, naming the Load_Balancer row).  A *template* load balancer
(``options:template=true``, ``options:address-family=ipv4|ipv6``) writes its VIPs and backends as
``HOST[:PORT]`` with ``^VAR`` tokens (resolved per chassis by ovn-controller from
Chassis_Template_Var; no flow reads the variables' values): the flows keep the tokens
(``ip4.dst == ^vip && tcp.dst == ^port``, ``ct_lb_mark(backends=^b1:^bp,^b2)``, IPv6 backends
unbracketed), the affinity flows write the VIP as IPv6 with port-less backends
(:meth:`Vip.affinity`), the SB row brackets an IPv6 VIP with a port (:func:`sb_vip_key`), and the
routers neither answer ARP for template VIPs nor list them in ``_rtr_lb`` address sets (literal
ones with ``neighbor_responder=all``, :mod:`.router_addrs`).  Observed.

A switch with a VIP (owner ``("dp", key)``) also gets the hairpin flows:
``ls_in_pre_hairpin`` 100, ``ls_in_nat_hairpin`` 100/100/90 and ``ls_in_hairpin`` 1.
``skip_snat`` and ``hairpin_snat_ip`` change nothing on switches.  A VIP with a health check
balances to its monitored backends that are not down (:mod:`.lb_health`, ``ctx.health``); its
affinity flows name every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..lflow.stages import (
    LS_IN_CT_EXTRACT,
    LS_IN_HAIRPIN,
    LS_IN_LB,
    LS_IN_LB_AFF_CHECK,
    LS_IN_LB_AFF_LEARN,
    LS_IN_NAT_HAIRPIN,
    LS_IN_PRE_HAIRPIN,
    LS_IN_PRE_LB,
    LS_IN_PRE_STATEFUL,
)
from ..lflow.table import FlowTable
from ..northd.lb_vips import Endpoint, is_template_lb, lb_protocol, parse_vip
from ..northd.model import Datapath, Northd
from ..ovsdb.fastrow import uuid_str
from .acl_index import ls_has_lb_vips, smap_bool, stateless_acl_with_lb
from .acl_rules import reject_reentry_stage
from .context import FlowCtx, hint
from .copp import copp_meter
from .lb_health import Monitored, checked_vips, hash_fields, lb_monitored
from .owners import dp_owner, switch_lb_owner
from .registers import (
    REG_CT_PROTO,
    REG_CT_TP_DST,
    REG_LB_AFF_BACKEND_IP4,
    REG_LB_AFF_MATCH_PORT,
    REG_LB_L2_AFF_BACKEND_IP6,
    REG_ORIG_DIP_IPV4,
    REG_ORIG_DIP_IPV4_V2,
    REG_ORIG_DIP_IPV6,
    REG_ORIG_DIP_IPV6_V2,
    REG_ORIG_TP_DPORT,
    REG_ORIG_TP_DPORT_V2,
    REGBIT_CONNTRACK_COMMIT,
    REGBIT_CONNTRACK_NAT,
    REGBIT_HAIRPIN,
    REGBIT_HAIRPIN_REPLY,
    REGBIT_IP_FRAG,
    REGBIT_KNOWN_LB_SESSION,
)

PRE_STATEFUL_VIP_PRIORITY: Final = 120
LB_PORT_PRIORITY: Final = 120
LB_IP_PRIORITY: Final = 110
LB_AFF_PRIORITY: Final = 150
AFF_PRIORITY: Final = 100
EVENT_PRIORITY: Final = 130


@dataclass(frozen=True, slots=True)
class Vip:
    vip: Endpoint
    backends: tuple[Endpoint, ...]  # those ct_lb_mark balances to
    key: str  # the NB vips key
    # Every backend the NB lists for a checked VIP; None: ``backends``.
    all_backends: tuple[Endpoint, ...] | None = None
    template: bool = False  # of a template load balancer
    # Behaviour ``template_lb_backends_each`` (26.03, observed) on a template load balancer's VIP:
    # its ct_lb_mark lists the NB backends text as written (``^b1,,^b2``, ``[FD00:0::9]:80``), and
    # the affinity flows keep the ports of its explicit backends (:meth:`affinity`).
    as_written: bool = False

    @property
    def listed_backends(self) -> tuple[Endpoint, ...]:
        """The backends whatever their health: affinity flows (switch and router) and the router's
        ``lr_out_undnat`` name them all (observed)."""
        return self.backends if self.all_backends is None else self.all_backends

    def affinity(self, keep_family: bool = False) -> Vip:
        """The VIP as the affinity flows write it.  Observed: a template load balancer's are written
        as IPv6 (``ip6``, ``xxreg``, ``[VIP]:PORT``) whatever its address family (``keep_family``:
        in its own family, 25.03 with ``lb_vip_regs_v2``), with port-less backends (26.03,
        ``as_written``: port-less template backends, explicit ones with their port --
        ``[10.0.0.9]:80`` in an IPv6-written flow)."""
        if not self.template:
            return self
        v = self.vip
        backends = tuple(Endpoint(b.ip, b.v6 if keep_family else True, b.port if self.as_written and not b.raw
                                  else None) for b in self.listed_backends)
        return Vip(Endpoint(v.ip, v.v6 if keep_family else True, v.port), backends, self.key, None, True)


def _usable(ctx: FlowCtx) -> Callable[[Monitored], bool]:
    ports, down = ctx.nd.ports, ctx.health.down

    def usable(m: Monitored) -> bool:
        p = ports.get(m.key[0])
        return p is not None and p.kind == "lsp" and p.enabled and m.key not in down  # a disabled port: none
    return usable


def lb_vips(lb: Any, ctx: FlowCtx | None = None) -> Iterator[Vip]:
    """The load balancer's valid VIPs, in NB key order.

    With ``ctx``, a checked VIP (:mod:`.lb_health`) balances to its monitored backends that are not
    down (``IP:PORT``, port 0 when absent); without, checked VIPs are left out.  A VIP that does not
    parse (:func:`parse_vip`) is skipped, warned about once through ``ctx.warn`` (kind ``lb_bad_vip``)."""
    checked = checked_vips(lb)
    template = is_template_lb(lb)
    usable: dict[str, list[Endpoint]] = {}
    if checked and ctx is not None:
        ok = _usable(ctx)
        for m in lb_monitored(lb):
            if ok(m):
                usable.setdefault(m.vip_key, []).append(m.backend)
    each = template and ctx is not None and ctx.profile.has("template_lb_backends_each")
    for key in sorted(lb.vips):
        parsed = parse_vip(lb, key, each)
        if isinstance(parsed, str):
            if ctx is not None:
                ctx.warn("lb_bad_vip", "Load_Balancer", lb.uuid, parsed, name=str(getattr(lb, "name", "")), vip=key)
            continue
        vip, backends = parsed
        if key not in checked:
            yield Vip(vip, backends, key, None, template, as_written=each)
        elif ctx is not None:
            yield Vip(vip, tuple(usable.get(key, ())), key, backends)


def warn_bad_vips(lb: Any, ctx: FlowCtx) -> None:
    """Warn (once, as :func:`lb_vips` does) about the VIPs of ``lb`` that do not parse, whether or
    not any switch or router uses it (the reference warns about every NB load balancer)."""
    each = ctx.profile.has("template_lb_backends_each")
    for key in sorted(lb.vips):
        parsed = parse_vip(lb, key, each)
        if isinstance(parsed, str):
            ctx.warn("lb_bad_vip", "Load_Balancer", lb.uuid, parsed, name=str(getattr(lb, "name", "")), vip=key)


def switch_lbs(dp: Datapath) -> list[Any]:
    """The load balancers of switch ``dp``: its own, then its groups', then those of the routers
    it is attached to (``install_ls_lb_from_router``)."""
    out: dict[Any, Any] = {lb.uuid: lb for lb in dp.nb.load_balancer}  # (by uuid, not its text: 100s x 100s)
    for grp in dp.nb.load_balancer_group:
        for lb in grp.load_balancer:
            out.setdefault(lb.uuid, lb)
    for lb in dp.lbs_from_routers:
        out.setdefault(lb.uuid, lb)
    return list(out.values())


def _opt_int(lb: Any, name: str) -> int:
    try:
        return int(lb.options.get(name, "0"))
    except ValueError:
        return 0



def _regs(v: Vip, v2: bool = False) -> tuple[str, str]:
    """(ip family, register holding the original destination); ``v2``: the ``lb_vip_regs_v2``
    behaviour (25.03)."""
    if v2:
        return ("ip6", REG_ORIG_DIP_IPV6_V2) if v.vip.v6 else ("ip4", REG_ORIG_DIP_IPV4_V2)
    return ("ip6", REG_ORIG_DIP_IPV6) if v.vip.v6 else ("ip4", REG_ORIG_DIP_IPV4)


def _vip_match(v: Vip, proto: str) -> str:
    fam, _ = _regs(v)
    m = f"{fam}.dst == {v.vip.ip}"
    return m if v.vip.port is None else f"{m} && {proto}.dst == {v.vip.port}"


# IP protocol numbers, as ``ct_proto()`` loads them.
IP_PROTO_NUMBERS: Final = MappingProxyType({"tcp": 6, "udp": 17, "sctp": 132})
# Behaviour "ct_extract_lb_match" (26.03): what ls_in_ct_extract / lr_in_ct_extract load.
CT_EXTRACT_ACTIONS: Final = f"{REG_CT_PROTO} = ct_proto(); {REG_CT_TP_DST} = ct_tp_dst(); next;"


def ct_extract_port_match(proto: str, port: int | str) -> str:
    """Behaviour ``ct_extract_lb_match`` (26.03): a VIP's protocol and port as the load balancers
    match them, on the registers the ``*_ct_extract`` stages loaded from conntrack
    (``reg1[16..23] == 6 && reg1[0..15] == 80`` where 25.03 had ``tcp.dst == 80``)."""
    return f"{REG_CT_PROTO} == {IP_PROTO_NUMBERS.get(proto, 6)} && {REG_CT_TP_DST} == {port}"


def _lb_vip_match(v: Vip, proto: str, ct_extract: bool) -> str:
    """``ls_in_lb``'s VIP match (without ``ct.new && ``)."""
    if not ct_extract or v.vip.port is None:
        return _vip_match(v, proto)
    fam, _ = _regs(v)
    return f"{fam}.dst == {v.vip.ip} && {ct_extract_port_match(proto, v.vip.port)}"


def _load_vip(v: Vip, v2: bool = False) -> str:
    _, reg = _regs(v, v2)
    out = f"{reg} = {v.vip.ip}; "
    return out if v.vip.port is None else f"{out}{REG_ORIG_TP_DPORT} = {v.vip.port}; "


def load_vip_v2(v: Vip) -> str:
    """``reg4 = VIP; reg2[0..15] = PORT; `` (``lb_vip_regs_v2``, 25.03; routers too)."""
    return _load_vip(v, True)


def _rejects(lb: Any) -> bool:
    return str(lb.options.get("reject", "false")).lower() == "true"


def raises_event(lb: Any, v: Vip, ctx: FlowCtx | None) -> bool:
    """Does VIP ``v`` raise ``empty_lb_backends`` controller events (observed)?  When the NB lists no
    (valid) backend for it -- a checked VIP whose backends are all down or unmapped does not -- the
    load balancer does not ``reject``, and NB_Global ``options:controller_event=true`` or the load
    balancer's ``options:event=true`` (either one suffices; ``event=false`` does not veto)."""
    if v.listed_backends or _rejects(lb):
        return False
    return (ctx is not None and ctx.controller_event) or str(lb.options.get("event", "")).lower() == "true"


def event_match(v: Vip, proto: str) -> str:
    """The match of a VIP's ``trigger_event`` flow (``ls_in_pre_lb`` 130 / ``lr_in_dnat`` 130)."""
    fam, _ = _regs(v)
    m = f"{fam}.dst == {v.vip.ip} && {proto}"
    return m if v.vip.port is None else f"{m} && {proto}.dst == {v.vip.port}"


def event_action(lb: Any, v: Vip, proto: str) -> str:
    return (f'trigger_event(event = "empty_lb_backends", vip = "{v.vip.text()}", protocol = "{proto}", '
            f'load_balancer = "{lb.uuid}");')


def lb_backends(lb: Any, v: Vip, profile: FlowProfile, ct_lb: str) -> tuple[str, str]:
    """The conntrack action and ``backends=`` text of VIP ``v``'s flows.  Behaviour
    ``lb_distributed`` (26.03, observed): a load balancer with ``options:distributed=true`` uses
    ``ct_lb_mark_local`` and names each backend's logical port (``ip_port_mappings``):
    ``"PORT":IP:PORT``, a backend without a mapping left out."""
    if not (profile.has("lb_distributed") and smap_bool(lb.options, "distributed", False)):
        if v.as_written:
            return ct_lb, str(lb.vips[v.key])
        return ct_lb, ",".join(b.text() for b in v.backends)
    mappings = lb.ip_port_mappings
    out = []
    for b in v.backends:
        m = mappings.get(b.mapping_key())
        if m:
            out.append(f'"{str(m).split(":")[0]}":{b.text()}')
    return f"{ct_lb}_local", ",".join(out)


def _vip_action(lb: Any, v: Vip, proto: str, profile: FlowProfile, ct_lb: str = "ct_lb_mark") -> str:
    if not v.backends:
        if _rejects(lb):
            qos_mark = profile.table_id(reject_reentry_stage(profile))  # ls_out_qos(_mark)
            return f"reg0 = 0; reject {{ outport <-> inport; next(pipeline=egress,table={qos_mark});}};"
        return "drop;"
    ct_lb, backends = lb_backends(lb, v, profile, ct_lb)
    if profile.has("lb_vip_regs_v2"):
        return f"{_load_vip(v, True)}{ct_lb}(backends={backends}{hash_fields(lb)});"
    return f"{REGBIT_CONNTRACK_COMMIT} = 0; {ct_lb}(backends={backends}{hash_fields(lb)});"


# (stage, priority, match, actions, Copp protocol of its controller meter or None): the meter
# itself is each switch's (:func:`.copp.copp_meter`).
FlowSpec = tuple[Any, int, str, str, str | None]


def _affinity_specs(v: Vip, proto: str, timeout: int, v2: bool = False, ct_extract: bool = False) -> list[FlowSpec]:
    """``v2``: the ``lb_vip_regs_v2`` behaviour (25.03, observed): the check matches the packet's
    destination, the backend found is in reg4 / reg2[0..15] and the VIP is loaded there again.
    ``ct_extract`` (``ct_extract_lb_match``, 26.03): the check matches the port on the registers
    ls_in_ct_extract loaded."""
    out: list[FlowSpec] = []
    fam, reg = _regs(v, v2)
    vip_regs = f"ct.new && {fam} && {reg} == {v.vip.ip}"
    if v.vip.port is not None:
        vip_regs += f" && {REG_ORIG_TP_DPORT} == {v.vip.port}"
    check = vip_regs
    if v2:
        check = f"ct.new && {fam} && {fam}.dst == {v.vip.ip}"
        if v.vip.port is not None:
            check += (f" && {ct_extract_port_match(proto, v.vip.port)}" if ct_extract
                      else f" && {proto} && {proto}.dst == {v.vip.port}")
    out.append((LS_IN_LB_AFF_CHECK, AFF_PRIORITY, check, f"{REGBIT_KNOWN_LB_SESSION} = chk_lb_aff(); next;",
                None))
    backend_reg = REG_LB_L2_AFF_BACKEND_IP6 if v.vip.v6 else REG_LB_AFF_BACKEND_IP4
    port_reg = REG_LB_AFF_MATCH_PORT
    head, commit = f"{fam}", f"{REGBIT_CONNTRACK_COMMIT} = 0; "
    if v2:
        backend_reg, port_reg, head, commit = reg, REG_ORIG_TP_DPORT, f"{fam}.dst == {v.vip.ip}", ""
    for b in v.listed_backends:
        m = f"{REGBIT_KNOWN_LB_SESSION} == 1 && ct.new && {head} && {backend_reg} == {b.ip}"
        if b.port is not None:
            m += f" && {port_reg} == {b.port}"
        out.append((LS_IN_LB, LB_AFF_PRIORITY, m,
                    f"{commit}{_load_vip(v, v2)}ct_lb_mark(backends={b.text()});", None))
        learn = f"{REGBIT_KNOWN_LB_SESSION} == 0 && {vip_regs} && {fam}.dst == {b.ip}"
        args = f'vip = "{v.vip.text()}", backend = "{b.text()}", '
        if b.port is not None:
            learn += f" && {proto}.dst == {b.port}"
        if v.vip.port is not None:
            args += f"proto = {proto}, "
        out.append((LS_IN_LB_AFF_LEARN, AFF_PRIORITY, learn, f"commit_lb_aff({args}timeout = {timeout}); /* drop */",
                    None))
    return out


def cached_vips(lb: Any, ctx: FlowCtx | None) -> tuple[Vip, ...]:
    """:func:`lb_vips`, parsed once per build for every switch and router using ``lb`` (memoised
    under the load balancer's uuid: whoever changes what it reads calls ``ctx.forget(uuid)``)."""
    if ctx is None:
        return tuple(lb_vips(lb))
    return ctx.cached("lb_vips", uuid_str(lb), lambda: tuple(lb_vips(lb, ctx)))


def switch_lb_specs(lb: Any, ctx: FlowCtx | None) -> list[FlowSpec]:
    """The flows load balancer ``lb`` gives every switch it is on (the same on each but for their
    meters).  Reads the row, ``ctx.health`` and ``ctx.controller_event``."""

    profile = ctx.profile if ctx is not None else DEFAULT_PROFILE
    v2 = profile.has("lb_vip_regs_v2")
    ct_extract = profile.has("ct_extract_lb_match")
    ct_lb = ctx.features.ct_lb if ctx is not None else "ct_lb_mark"  # ct_lb for old chassis

    def compute() -> list[FlowSpec]:
        out: list[FlowSpec] = []
        proto = lb_protocol(lb)
        timeout = _opt_int(lb, "affinity_timeout")
        for v in cached_vips(lb, ctx):
            match = _vip_match(v, proto)
            out.append((LS_IN_PRE_STATEFUL, PRE_STATEFUL_VIP_PRIORITY, f"{REGBIT_CONNTRACK_NAT} == 1 && {match}",
                        f"{_load_vip(v, v2)}{ct_lb};", None))
            prio = LB_IP_PRIORITY if v.vip.port is None else LB_PORT_PRIORITY
            rejects = not v.backends and _rejects(lb)
            out.append((LS_IN_LB, prio, f"ct.new && {_lb_vip_match(v, proto, ct_extract)}",
                        _vip_action(lb, v, proto, profile, ct_lb),
                        "reject" if rejects else None))
            if raises_event(lb, v, ctx):
                out.append((LS_IN_PRE_LB, EVENT_PRIORITY, event_match(v, proto), event_action(lb, v, proto),
                            "event-elb"))
            if timeout > 0:
                out += _affinity_specs(v.affinity(v2), proto, timeout, v2, ct_extract)
        return out

    if ctx is None:
        return compute()
    return ctx.cached("ls_lb_flows", uuid_str(lb), compute)


def stateless_lb_specs(lb: Any, ctx: FlowCtx) -> list[FlowSpec]:
    """Behaviour ``stateless_acl_with_lb`` (26.03, observed): on a switch with
    ``other_config:enable-stateless-acl-with-lb=true`` every packet to a VIP goes to conntrack
    (``ls_in_pre_stateful`` 105, ``P && IP.dst == VIP``, VIPs with a port only) and one to a VIP
    (and port) is load-balanced without the conntrack hint (150)."""
    v2 = ctx.profile.has("lb_vip_regs_v2")
    ct_lb = ctx.features.ct_lb
    proto = lb_protocol(lb)
    out: list[FlowSpec] = []
    for v in cached_vips(lb, ctx):
        fam, _ = _regs(v)
        if v.vip.port is not None:  # (observed: none for a VIP without a port)
            out.append((LS_IN_PRE_STATEFUL, 105, f"{proto} && {fam}.dst == {v.vip.ip}", f"{ct_lb};", None))
        out.append((LS_IN_PRE_STATEFUL, 150, _vip_match(v, proto), f"{_load_vip(v, v2)}{ct_lb};", None))
    return out


def build_lb_flows_on_switches(dps: list[Datapath], lb: Any, ctx: FlowCtx | None, table: FlowTable) -> None:
    """The flows of load balancer ``lb`` on switches ``dps`` (owner ``("lb", lb uuid)``), each flow
    added once over all of them."""
    if not dps:
        return
    u = uuid_str(lb)
    owner, h = switch_lb_owner(u), hint(u)
    indices = [dp.index for dp in dps]
    slb = [dp.index for dp in dps if ctx is not None and stateless_acl_with_lb(dp, ctx)]
    if slb and ctx is not None:
        for stage, prio, match, actions, _copp in stateless_lb_specs(lb, ctx):
            table.add_many(slb, stage, prio, match, actions, hint=h, owner=owner)
    for stage, prio, match, actions, copp in switch_lb_specs(lb, ctx):
        # (the learn flows' ``/* drop */`` is the reference's comment: never a debug drop sample)
        sd = stage != LS_IN_LB_AFF_LEARN
        if copp is not None and ctx is not None:
            by_meter: dict[str | None, list[int]] = {}
            for dp in dps:
                by_meter.setdefault(copp_meter(dp, ctx, copp), []).append(dp.index)
            for meter, idx in by_meter.items():
                table.add_many(idx, stage, prio, match, actions, hint=h, owner=owner, controller_meter=meter,
                               sample_drop=sd)
        elif len(indices) == 1:
            table.add(indices[0], stage, prio, match, actions, hint=h, owner=owner, sample_drop=sd)
        else:
            table.add_many(indices, stage, prio, match, actions, hint=h, owner=owner, sample_drop=sd)


def build_switch_lb_flows(dp: Datapath, lb: Any, ctx: FlowCtx, table: FlowTable) -> None:
    """The flows of load balancer ``lb`` on switch ``dp`` (owner ``("lb", lb uuid)``)."""
    build_lb_flows_on_switches([dp], lb, ctx, table)


def build_all_switch_lb_flows(nd: Northd, ctx: FlowCtx, table: FlowTable) -> None:
    """Every switch load balancer's flows (a full build)."""
    rows: dict[Any, Any] = {}
    users: dict[Any, list[Datapath]] = {}
    for dp in nd.by_index:
        if dp.is_switch:
            for lb in switch_lbs(dp):
                key = lb.uuid
                rows.setdefault(key, lb)
                users.setdefault(key, []).append(dp)
    for key, dps in users.items():
        build_lb_flows_on_switches(dps, rows[key], ctx, table)


def build_ls_lb_frag_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """Every switch, 25.03: with the ``lb_vip_regs_v2`` behaviour, fragments to load-balance are
    marked (``reg0[19]``) on their way to conntrack (ls_in_pre_stateful 115); with
    ``pmtud_tunnel_rx``, ICMP frag-needed / packet-too-big errors from a tunnel skip the
    load balancers (ls_in_pre_lb 110)."""
    if ctx.profile.has("lb_vip_regs_v2"):
        table.add(dp.index, LS_IN_PRE_STATEFUL, 115, f"{REGBIT_CONNTRACK_NAT} == 1 && ip.is_frag",
                  f"{REGBIT_IP_FRAG} = 1; ct_lb_mark;", owner=dp_owner(dp))
    if ctx.profile.has("pmtud_tunnel_rx"):
        # Observed without a blank after ``||``.
        match = ("((ip4 && icmp4.type == 3 && icmp4.code == 4) ||(ip6 && icmp6.type == 2 && icmp6.code == 0))"
                 " && flags.tunnel_rx == 1")
        table.add(dp.index, LS_IN_PRE_LB, 110, match, "next;", owner=dp_owner(dp))


def build_ls_hairpin_flows(dp: Datapath, ctx: FlowCtx, table: FlowTable) -> None:
    """The switch-wide hairpin flows of a switch with a load-balancer VIP (owner ``("dp", key)``)."""
    if not ls_has_lb_vips(dp):
        return
    i, owner = dp.index, dp_owner(dp)
    ct_extract = ctx.profile.has("ct_extract_lb_match")
    if ctx.profile.has("lb_vip_regs_v2"):
        # 25.03: a fragment's original destination is read back from conntrack (110), the VIP
        # flows cannot match its ports (26.03, ct_extract_lb_match: established connections only).
        trk = "ct.trk && ct.est && !ct.rpl" if ct_extract else "ct.trk && !ct.rpl"
        table.add(i, LS_IN_LB, 110, f"{trk} && {REGBIT_IP_FRAG} == 1 && ip4",
                  f"{REG_ORIG_DIP_IPV4_V2} = ct_nw_dst(); {REG_ORIG_TP_DPORT_V2} = ct_tp_dst(); next;", owner=owner)
        table.add(i, LS_IN_LB, 110, f"{trk} && {REGBIT_IP_FRAG} == 1 && ip6",
                  f"{REG_ORIG_DIP_IPV6_V2} = ct_ip6_dst(); {REG_ORIG_TP_DPORT_V2} = ct_tp_dst(); next;", owner=owner)
    if ct_extract:  # 26.03: new connections' protocol and port, for the VIP flows to match
        table.add(i, LS_IN_CT_EXTRACT, 100, "ct.new && ip", CT_EXTRACT_ACTIONS, owner=owner)
    table.add(i, LS_IN_PRE_HAIRPIN, 100, "ip && ct.trk",
              f"{REGBIT_HAIRPIN} = chk_lb_hairpin(); {REGBIT_HAIRPIN_REPLY} = chk_lb_hairpin_reply(); next;",
              owner=owner)
    table.add(i, LS_IN_NAT_HAIRPIN, 100, f"ip && ct.new && ct.trk && {REGBIT_HAIRPIN} == 1",
              "ct_snat_to_vip; next;", owner=owner)
    table.add(i, LS_IN_NAT_HAIRPIN, 100, f"ip && ct.est && ct.trk && {REGBIT_HAIRPIN} == 1", "ct_snat;",
              owner=owner)
    table.add(i, LS_IN_NAT_HAIRPIN, 90, f"ip && {REGBIT_HAIRPIN_REPLY} == 1", "ct_snat;", owner=owner)
    table.add(i, LS_IN_HAIRPIN, 1, f"({REGBIT_HAIRPIN} == 1 || {REGBIT_HAIRPIN_REPLY} == 1)",
              "eth.dst <-> eth.src; outport = inport; flags.loopback = 1; output;", owner=owner)
