"""Load-balancer VIPs and backends as the NB writes them (``Load_Balancer.vips``), parsed.

Part of the model: the northd build (``nat_addresses`` of router-type switch ports), the flow
builders (:mod:`ovn_northd_py.flows.ls_lb`, :mod:`ovn_northd_py.flows.lr_lb`,
:mod:`ovn_northd_py.flows.lb_health`) and the SB Load_Balancer sync all read VIPs through
:func:`parse_vip`.  A *template* load balancer (``options:template=true``, :func:`is_template_lb`)
writes them with ``^VAR`` tokens.  Observed on the reference (23.03).
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from typing import Any, Final

from ..ovsdb import fastrow
from .addresses import AddressError, IPAddress, parse_ip

PROTOCOLS: Final = ("tcp", "udp", "sctp")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An IP (normalised text) and port; in a template load balancer (:func:`parse_vip`) either may be a
    ``^VAR`` token (the port then a ``str``) and ``raw`` backends print unbracketed (observed)."""

    ip: str
    v6: bool
    port: int | str | None
    raw: bool = False

    def text(self) -> str:
        """``IP[:PORT]`` / ``[IP6]:PORT`` / ``IP6``, as the reference prints it."""
        if self.port is None:
            return self.ip
        return f"[{self.ip}]:{self.port}" if self.v6 and not self.raw else f"{self.ip}:{self.port}"

    def with_port(self) -> Endpoint:
        """The endpoint with port 0 when it has none (checked VIPs' backends)."""
        return self if self.port is not None else Endpoint(self.ip, self.v6, 0)

    def mapping_key(self) -> str:
        """Its ``ip_port_mappings`` key."""
        return f"[{self.ip}]" if self.v6 else self.ip


@functools.lru_cache(maxsize=1 << 16)
def parse_vip_address(vip: str) -> IPAddress | None:
    """The address of a load-balancer VIP key (``IP``, ``IP:PORT``, ``[IP6]``, ``[IP6]:PORT``, ``IP6``)."""
    text = vip.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return parse_ip(text)
    except AddressError:
        return None  # e.g. a template VIP (^VAR)


def parse_endpoint(text: str) -> Endpoint | None:
    """``IP``, ``IP:PORT``, ``IP6``, ``[IP6]`` or ``[IP6]:PORT``; None when invalid."""
    s = text.strip()
    port: int | None = None
    if s.startswith("["):
        host, sep, rest = s[1:].partition("]")
        if not sep:
            return None
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                return None
            port = int(rest[1:])
    elif s.count(":") == 1:
        host, _, p = s.partition(":")
        if not p.isdigit():
            return None
        port = int(p)
    else:
        host = s
    if port is not None and not 0 < port <= 65535:
        return None
    if _plain_ipv4(host):  # (as ipaddress would write it: thousands of backends per cold sync)
        return Endpoint(host, False, port)
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return None
    return Endpoint(str(addr), addr.version == 6, port)


def _plain_ipv4(host: str) -> bool:
    """Dotted-quad IPv4 in its canonical text (no leading zeros): ``ipaddress`` would accept it
    and write it back unchanged."""
    parts = host.split(".")
    if len(parts) != 4:
        return False
    for p in parts:
        if not (p.isascii() and p.isdigit()) or len(p) > 3 or (p[0] == "0" and len(p) > 1) or int(p) > 255:
            return False
    return True


def lb_protocol(lb: Any) -> str:
    proto = fastrow.peek(lb, "protocol", None) or []
    p = proto[0] if proto else "tcp"
    return p if p in PROTOCOLS else "tcp"


def is_template_lb(lb: Any) -> bool:
    """``options:template=true``: VIPs and backends may name Chassis_Template_Var variables (``^VAR``)."""
    options = fastrow.peek(lb, "options", None) or {}
    return str(options.get("template", "")).lower() == "true"


def explicit_backends(text: str, v6: bool) -> tuple[Endpoint, ...] | str:
    """A VIP's backends (``IP[:PORT]``, ``[IP6][:PORT]``), or why the VIP is unusable: observed, one
    bad backend (address, port, the other family) drops the whole VIP -- its flows, its monitors
    and the ARP / ND responder for their source IPs."""
    out: list[Endpoint] = []
    for part in text.split(","):
        if not part.strip():
            continue
        b = parse_endpoint(part)
        if b is None:
            return f"bad backend {part.strip()!r}"
        if b.v6 != v6:
            return f"backend {part.strip()!r} is not of the VIP's address family"
        out.append(b)
    return tuple(out)


def template_v6(lb: Any) -> bool:
    """A template load balancer's family: ``options:address-family=ipv6``, else IPv4."""
    return str(lb.options.get("address-family", "ipv4")).lower() == "ipv6"


def _template_endpoint(text: str, v6: bool, raw: bool) -> Endpoint | None:
    """``HOST[:PORT]`` of a template load balancer (observed: HOST is taken as written -- a ``^VAR``
    or any other word -- and PORT is a ``^VAR`` or a port number; no brackets, one colon at most)."""
    s = text.strip()
    parts = s.split(":")
    if len(parts) > 2 or not all(parts) or any(c in s for c in "[] \t"):
        return None
    port: int | str | None = None
    if len(parts) == 2:
        p = parts[1]
        if p.startswith("^") and len(p) > 1:
            port = p
        elif p.isdigit() and 0 < int(p) <= 65535:
            port = int(p)
        else:
            return None
    return Endpoint(parts[0], v6, port, raw)


def _template_backends(text: str, v6: bool) -> tuple[Endpoint, ...] | str:
    """A template load balancer's backends: all in template form, else all explicit (observed)."""
    out: list[Endpoint] = []
    for part in text.split(","):
        if not part.strip():
            continue
        b = _template_endpoint(part, v6, True)
        if b is None:
            return explicit_backends(text, v6)
        out.append(b)
    return tuple(out)


def _template_backends_each(text: str, vip: Endpoint) -> tuple[Endpoint, ...] | str:
    """Behaviour ``template_lb_backends_each`` (26.03, observed): a template load balancer's backends
    one by one.  One starting with ``^`` is a template, taken as written (``^HOST[:PORT]``, whatever
    PORT is -- ``^b:99999``, ``^b:``, ``^b1 `` --, but one colon at most); any other is an explicit
    ``IP:PORT`` / ``[IP6]:PORT`` (``IP`` / ``IP6`` when the VIP has no port) of the load balancer's
    family, as :func:`parse_endpoint` reads it but not stripped.  Empty ones (``^a,,^b``) are
    skipped; anything else drops the VIP.  (Unlike 23.03 / 25.03's all-template-or-all-explicit
    reading, explicit and template backends mix.)"""
    out: list[Endpoint] = []
    for part in text.split(","):
        if not part:
            continue
        if part.startswith("^"):
            if part.count(":") > 1:
                return f"bad template backend {part!r}"
            host, sep, port = part.partition(":")
            out.append(Endpoint(host, vip.v6, port if sep else None, True))
            continue
        b = parse_endpoint(part) if part == part.strip() else None
        if b is None:
            return f"bad backend {part!r}"
        if b.v6 != vip.v6:
            return f"backend {part!r} is not of the VIP's address family"
        if (b.port is None) != (vip.port is None):
            return f"backend {part!r} has a port where the VIP has none, or none where it has one"
        out.append(b)
    return tuple(out)


def parse_vip(lb: Any, key: str, each: bool = False) -> tuple[Endpoint, tuple[Endpoint, ...]] | str:
    """VIP ``key`` of ``lb`` and its backends, or the reason it is skipped.

    Template load balancers (``options:template=true``, :func:`is_template_lb`) accept ``^VAR``
    tokens in the VIP (``^VIP[:^PORT|:port]``, in the ``address-family``) and backends; elsewhere a
    token is a bad address.  ``each``: behaviour ``template_lb_backends_each`` (26.03), a template
    load balancer's backends read one by one (:func:`_template_backends_each`)."""
    text = str(lb.vips[key])
    if is_template_lb(lb):
        v6 = template_v6(lb)
        vip = _template_endpoint(key, v6, False)
        if vip is None:
            return f"bad template VIP {key!r} (expected ^VIP_VAR[:^PORT_VAR|:port])"
        backends = _template_backends_each(text, vip) if each else _template_backends(text, v6)
    else:
        vip = parse_endpoint(key)
        if vip is None:
            return f"bad VIP {key!r} (expected IP[:PORT] or [IP6][:PORT])"
        backends = explicit_backends(text, vip.v6)
    if isinstance(backends, str):
        return f"VIP {key!r}: {backends}"
    return vip, backends


def sb_vip_key(lb: Any, key: str, each: bool = False) -> str:
    """The key of VIP ``key`` in the SB Load_Balancer row (observed: a template load balancer's
    usable VIPs are rewritten, an IPv6 one with a port as ``[VIP]:PORT``; the rest as written).
    ``each``: behaviour ``template_lb_backends_each`` (26.03, observed): usable as
    :func:`_template_backends_each` reads the backends, and an IPv6 VIP without a port bracketed
    too (``[VIP]``)."""
    if not is_template_lb(lb):
        return key
    parsed = parse_vip(lb, key, each)
    if isinstance(parsed, str):
        return key
    vip = parsed[0]
    if each and vip.v6 and vip.port is None:
        return f"[{vip.ip}]"
    return vip.text()
