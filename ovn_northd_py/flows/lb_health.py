"""Load-balancer health checks: service monitors, the backends they leave, the ARP/ND responder.

Observed on the reference (23.03).  A Load_Balancer (attached anywhere or not) of protocol tcp
or udp (sctp: no health checks at all, its VIPs are plain VIPs) with a ``health_check`` row
whose ``vip`` is one of its VIP keys (the same text) makes that VIP *checked*.  For each
backend ``B`` of a checked VIP (``IP[:PORT]`` / ``[IP6][:PORT]``, port 0 when absent):

* ``ip_port_mappings[IP]`` (``[IP6]`` for IPv6) = ``PORT_NAME:SRC_IP`` (``PORT_NAME:[SRC_IP6]``),
  with a valid ``SRC_IP``, maps it;
* a mapped backend whose ``PORT_NAME`` is a logical switch port has one SB ``Service_Monitor``
  row ``(logical_port, ip, port, protocol)`` (:func:`desired_monitors`): ``src_ip``,
  ``src_mac`` = NB_Global ``svc_monitor_mac``, ``options`` = the health check's options verbatim,
  ``external_ids`` never written, ``status`` left to ovn-controller -- except that northd turns
  ``online`` into ``offline`` while the port's Port_Binding is not ``up`` (:func:`status_down`
  counts such a row as down already); a VIP with a malformed backend has none
  (:func:`explicit_backends`);
* the checked VIP's ``ct_lb_mark`` backends are the monitored backends whose status is empty
  or ``online`` (``offline`` / ``error`` drop them), written ``IP:PORT`` / ``[IP6]:PORT`` even
  for port 0; unmapped backends, bad mappings and unknown ports are dropped; no backend left
  is the same as an empty VIP (``drop;`` or the reject).  Affinity flows keep every backend.
* every mapping of a checked VIP's backend (known port or not) makes the switch of
  ``PORT_NAME`` answer ARP / NS for ``SRC_IP`` (:func:`svc_monitor_src_ips`, :mod:`.ls_arp_rsp`).

When several load balancers monitor the same backend, the last one in uuid order sets the row's
``src_ip`` and ``options`` (the reference's choice follows its hash order; the same when they agree).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from ..northd.lb_vips import Endpoint, explicit_backends, is_template_lb, lb_protocol, parse_endpoint
from ..ovsdb import fastrow

HEALTH_PROTOCOLS: Final = frozenset({"tcp", "udp"})
DOWN: Final = frozenset({"offline", "error"})

# (logical_port, ip, port, protocol): the Service_Monitor table's index.
MonitorKey = tuple[str, str, int, str]


def hash_fields(lb: Any) -> str:
    """The ``; hash_fields="..."`` argument of a VIP's ``ct_lb_mark`` (``selection_fields``, sorted).

    Observed: ``tp_src``/``tp_dst`` become ``<protocol>_src``/``_dst`` only when the load balancer
    names its protocol; without one (tcp by default) the reference writes ``tp_src`` as it is."""
    proto = fastrow.peek(lb, "protocol", None) or []
    named = proto[0] if proto else None
    fields = sorted(fastrow.peek(lb, "selection_fields"))
    if named:
        fields = [f.replace("tp_", f"{named}_") for f in fields]
    return f'; hash_fields="{",".join(fields)}"' if fields else ""


def parse_mapping(value: str) -> tuple[str, str] | None:
    """``PORT:SRC_IP`` / ``PORT:[SRC_IP6]`` (or ``PORT:SRC_IP6``) -> (port name, normalised source IP);
    None when invalid (leading zeros included)."""
    port, sep, src = value.partition(":")
    if not sep or not port or not src:
        return None
    if src.startswith("["):
        inner, close, rest = src[1:].partition("]")
        if not close or rest:
            return None
        src = inner
    try:
        return port, str(ipaddress.ip_address(src))  # normalised, as the reference writes it
    except ValueError:
        return None


def checked_vips(lb: Any) -> dict[str, Any]:
    """VIP key -> its Load_Balancer_Health_Check row, for a load balancer whose health checks count
    (template load balancers' do not: their VIPs are not addresses)."""
    if not lb.health_check or lb_protocol(lb) not in HEALTH_PROTOCOLS or is_template_lb(lb):
        return {}
    return {hc.vip: hc for hc in lb.health_check if hc.vip in lb.vips}


@dataclass(frozen=True, slots=True)
class Monitored:
    """One mapped backend of a checked VIP."""

    vip_key: str
    backend: Endpoint  # with its port (0 when absent)
    key: MonitorKey
    src_ip: str
    hc: Any  # the Load_Balancer_Health_Check row


def lb_monitored(lb: Any) -> Iterator[Monitored]:
    """The mapped backends of ``lb``'s checked VIPs (whether their port exists or not)."""
    vips = checked_vips(lb)
    if not vips:
        return
    proto = lb_protocol(lb)
    mappings = lb.ip_port_mappings
    for vip_key, hc in sorted(vips.items()):
        vip = parse_endpoint(vip_key)
        backends = explicit_backends(lb.vips[vip_key], vip.v6) if vip is not None else ""
        if isinstance(backends, str):
            continue
        for b in backends:
            m = parse_mapping(mappings.get(b.mapping_key(), ""))
            if m is None:
                continue
            bp = b.with_port()
            yield Monitored(vip_key, bp, (m[0], bp.ip, int(bp.port or 0), proto), m[1], hc)


def desired_monitors(
    lbs: Iterable[Any], is_switch_port: Callable[[str], bool], svc_monitor_mac: str, typed: bool = False
) -> dict[MonitorKey, dict[str, Any]]:
    """Service_Monitor key -> the columns northd writes, for the load balancers ``lbs``; ``typed``
    (behaviour ``service_monitor_type``, 26.03, SB 21.x): rows say what they monitor
    (``type=load-balancer``)."""
    out: dict[MonitorKey, dict[str, Any]] = {}
    for lb in sorted(lbs, key=lambda r: str(r.uuid)):
        for m in lb_monitored(lb):
            port, ip, pnum, proto = m.key
            if not is_switch_port(port):
                continue
            out[m.key] = {"logical_port": port, "ip": ip, "port": pnum, "protocol": proto,
                          "src_ip": m.src_ip, "src_mac": svc_monitor_mac, "options": dict(m.hc.options)}
            if typed:
                out[m.key]["type"] = ["load-balancer"]
    return out


def status_down(status: str | None, port_up: bool) -> bool:
    """Does a Service_Monitor row with this status leave its backend out?  (``online`` on a port
    that is not up is about to become ``offline``.)"""
    return status in DOWN or (status == "online" and not port_up)


@dataclass(slots=True)
class LbHealth:
    """What switch / router load-balancer flows read about health checks (kept in the FlowCtx).

    ``down``: the monitors whose backend is left out (:func:`status_down`, from every SB row);
    ``lb_keys`` / ``key_lbs`` / ``port_lbs``: which load balancers read which monitors and which
    mapped port names (a port appearing or going away changes their backends)."""

    down: set[MonitorKey] = field(default_factory=set)
    lb_keys: dict[str, frozenset[MonitorKey]] = field(default_factory=dict)
    key_lbs: dict[MonitorKey, set[str]] = field(default_factory=dict)
    port_lbs: dict[str, set[str]] = field(default_factory=dict)

    def set_lb(self, lb_uuid: str, lb: Any | None) -> bool:
        """Record the monitors of load balancer ``lb_uuid`` (``lb`` None: deleted); True if it reads any."""
        for k in self.lb_keys.pop(lb_uuid, frozenset()):
            _unlink(self.key_lbs, k, lb_uuid)
            _unlink(self.port_lbs, k[0], lb_uuid)
        keys = frozenset(m.key for m in lb_monitored(lb)) if lb is not None else frozenset()
        if keys:
            self.lb_keys[lb_uuid] = keys
            for k in keys:
                self.key_lbs.setdefault(k, set()).add(lb_uuid)
                self.port_lbs.setdefault(k[0], set()).add(lb_uuid)
        return bool(keys)

    def lbs_of_keys(self, keys: Iterable[MonitorKey]) -> set[str]:
        out: set[str] = set()
        for k in keys:
            out |= self.key_lbs.get(k, set())
        return out

    def lbs_of_ports(self, names: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for n in names:
            out |= self.port_lbs.get(n, set())
        return out

    def ports(self) -> set[str]:
        return set(self.port_lbs)


def _unlink(index: dict[Any, set[str]], name: Any, lb_uuid: str) -> None:
    users = index.get(name)
    if users is not None:
        users.discard(lb_uuid)
        if not users:
            del index[name]


def monitor_key(row: Any) -> MonitorKey:
    """The key of an SB Service_Monitor row."""
    proto = row.protocol[0] if row.protocol else ""
    return (row.logical_port, row.ip, row.port, proto)


def sb_down_monitors(sb: Any, pb_up: Callable[[str], bool]) -> set[MonitorKey]:
    """The SB Service_Monitor rows that leave their backend out (``pb_up``: is the port up?)."""
    out: set[MonitorKey] = set()
    for row in sb.rows("Service_Monitor").values():
        if getattr(row, "_data", True) is None:  # inserted by the transaction being built
            continue
        status = row.status[0] if row.status else None
        if status in DOWN or (status == "online" and not pb_up(row.logical_port)):
            out.add(monitor_key(row))
    return out


def nf_online_pairs(sb: Any) -> frozenset[tuple[str, str]]:
    """(inport, outport) of every SB Service_Monitor row of type ``network-function`` that is online."""
    out = set()
    for row in sb.rows("Service_Monitor").values():
        if getattr(row, "_data", True) is None:  # inserted by the transaction being built
            continue
        if list(getattr(row, "type", ())) == ["network-function"] and list(row.status) == ["online"]:
            out.add((str(row.logical_input_port), str(row.logical_port)))
    return frozenset(out)


def pb_up_reader(sb: Any, index: Any = None) -> Callable[[str], bool]:
    """``name -> Port_Binding.up is true`` (through the ``pb_by_name`` RowIndex when given)."""
    if index is not None:
        def up(name: str) -> bool:
            row = index.get(sb, name)
            return row is not None and row.up == [True]
        return up
    by_name = {r.logical_port: r.up == [True] for r in sb.rows("Port_Binding").values()}
    return lambda name: by_name.get(name, False)


def build_lb_health(nb: Any, sb: Any | None, pb_index: Any = None) -> LbHealth:
    h = LbHealth()
    for lb in nb.rows("Load_Balancer").values():
        if lb.health_check:
            h.set_lb(str(lb.uuid), lb)
    if sb is not None:
        h.down = sb_down_monitors(sb, pb_up_reader(sb, pb_index))
    return h


def svc_monitor_src_ips(nb: Any) -> dict[str, tuple[tuple[str, str], ...]]:
    """Logical port name -> (source IP, load balancer uuid) of the health checks its switch
    answers ARP/ND for (load balancers in uuid order; the first one names an IP)."""
    out: dict[str, dict[str, str]] = {}
    for lb in sorted(nb.rows("Load_Balancer").values(), key=lambda r: str(r.uuid)):
        if not lb.health_check or not lb.ip_port_mappings:
            continue
        for m in lb_monitored(lb):
            out.setdefault(m.key[0], {}).setdefault(m.src_ip, str(lb.uuid))
    return {port: tuple(ips.items()) for port, ips in out.items()}
