"""NAT rules as the model reads them: the logical IP, and which rules a release rejects.

``logical_ip``: the logical IP/network of a rule as the reference writes it in its flows (the NB
text verbatim) and its prefix length.

Behaviour ``nat_rejects_invalid`` (25.03 and later, ``lflow/profile.py``; observed on 25.03's
reference): a rule is rejected as a whole -- no flow of any stage (not even its ARP / ND replies),
no ARP flooding of its external IP nor MAC in the switches, and it does not make a distributed
gateway port distributed (``always-redirect`` stays) -- when

* its ``external_mac`` is set and is not a MAC address (any rule type; the reference logs
  ``bad mac M for dnat in router R``),
* it is a ``dnat`` / ``dnat_and_snat`` rule whose ``logical_ip`` is not one host address
  (``bad ip L for dnat in router R``),
* it is a ``snat`` rule whose ``logical_ip`` is neither an address nor a network
  (``bad ip network or ip L for snat in router R``),
* its router has several distributed gateway ports, the rule has no ``gateway_port`` and none of
  their networks holds its external IP (``Unable to determine gateway_port for NAT with
  external_ip: X configured on logical router: R with multiple distributed gateway ports``),
* it has both ``allowed_ext_ips`` and ``exempted_ext_ips`` (``NAT rule: U not applied, since both
  allowed and exempt external ips set``),
* its ``gateway_port`` is not a distributed gateway port of its router (e.g. any port of a gateway
  router: ``gateway_port: P of NAT configured on logical router: R is not a valid distributed
  gateway port on that router``).

``nat-addresses`` still reads every NB rule as 23.03 does (a rule without ``logical_port`` and a
bad MAC is announced on the router port's MAC: observed).  23.03 keeps such rules' ARP / ND
replies (and a bad MAC's flood entry).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any

from ..ovsdb.columns import opt
from .addresses import AddressError, parse_lrp_networks, parse_mac, parse_nat_external_ip

NAT_REJECTS_INVALID = "nat_rejects_invalid"

_V4_LOGICAL = re.compile(r"\s*(\d+)\.(\d+)\.(\d+)\.(\d+)(?:/(.*))?")


def _v4_plen(mask: str | None) -> int | None:
    """The prefix length of an IPv4 logical IP's mask (none: 32; ``/N`` or a dotted CIDR mask)."""
    if mask is None:
        return 32
    if mask.isdigit():
        return int(mask) if int(mask) <= 32 else None
    try:
        return IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        return None


def logical_ip(text: str) -> tuple[str, int] | None:
    """The logical IP/network as the reference writes it -- the NB text verbatim (``10.0.0.12/32``,
    `` 10.0.0.012``, ``10.0.0.0/255.255.255.0``: observed) -- and its prefix length; None when it
    does not parse (leading blanks and leading zeros are accepted, trailing blanks are not)."""
    m = _V4_LOGICAL.fullmatch(text)
    if m is not None:
        if any(int(b) > 255 for b in m.groups()[:4]):
            return None
        plen = _v4_plen(m.group(5))
        return (text, plen) if plen is not None else None
    if ":" not in text or text != text.rstrip():
        return None
    try:
        net: IPv4Network | IPv6Network = ip_network(text.strip(), strict=False)
    except ValueError:
        return None
    return (text, net.prefixlen) if net.version == 6 else None


def bad_external_mac(nat: Any) -> bool:
    """Is the rule's ``external_mac`` set but not a MAC (leading blanks and 1-digit bytes are fine)?"""
    mac = opt(nat.external_mac)
    if not mac:
        return False
    try:
        parse_mac(str(mac).lstrip())
    except AddressError:
        return True
    return False


def _bad_gateway_port(nat: Any, router: Any) -> bool:
    """Does the rule's ``gateway_port`` name no distributed gateway port of ``router``?"""
    named = opt(nat.gateway_port)
    if named is None:
        return False
    key = str(named.uuid)
    return not any(p.kind == "lrp" and p.crp is not None and p.nb_key == key for p in router.ports)


def _no_dgp_for(nat: Any, router: Any) -> bool:
    """Several DGPs on ``router`` (a model Datapath), no ``gateway_port``, and the external IP in
    none of their networks?"""
    if opt(nat.gateway_port) is not None:
        return False
    dgps = [p for p in router.ports if p.kind == "lrp" and p.crp is not None]
    if len(dgps) < 2:
        return False
    parsed = parse_nat_external_ip(nat.external_ip)
    if parsed is None:
        return False  # (a malformed external IP: handled as such)
    addr = parsed[0]
    for p in dgps:
        try:
            nets = parse_lrp_networks(p.nb.mac, list(p.nb.networks))
        except AddressError:
            continue
        if any(n.contains(addr) for n in (nets.ipv4 if addr.version == 4 else nets.ipv6)):  # type: ignore[arg-type]
            return False
    return True


def nat_rejection(nat: Any, router: Any = None) -> str | None:
    """Why a release with ``nat_rejects_invalid`` rejects the rule of ``router`` (a model
    Datapath; None: the row's own columns only) -- the module doc -- or None."""
    if opt(nat.allowed_ext_ips) is not None and opt(nat.exempted_ext_ips) is not None:
        return "both allowed_ext_ips and exempted_ext_ips: rule ignored, as the reference does"
    if bad_external_mac(nat):
        return f"bad external_mac {opt(nat.external_mac)!r}: rule ignored, as the reference does"
    logical = logical_ip(str(nat.logical_ip))
    if nat.type in ("dnat", "dnat_and_snat"):
        if logical is None or logical[1] != (128 if ":" in logical[0] else 32):
            return f"bad logical_ip {nat.logical_ip!r} for {nat.type} (not one address): rule ignored"
    elif nat.type == "snat" and logical is None:
        return f"bad logical_ip {nat.logical_ip!r} for snat: rule ignored"
    if router is not None and _bad_gateway_port(nat, router):
        return "gateway_port is not a distributed gateway port of the router: rule ignored"
    if router is not None and _no_dgp_for(nat, router):
        return (f"no gateway_port and external_ip {nat.external_ip!r} in none of the networks of the router's "
                "distributed gateway ports: rule ignored")
    return None


def rejects(profile: Any) -> bool:
    """Does ``profile``'s release reject invalid NAT rules as a whole?"""
    return bool(profile.has(NAT_REJECTS_INVALID))


def valid_nats(router: Any, profile: Any) -> list[Any]:
    """The NAT rules of ``router`` (a model Datapath) without those ``profile``'s release rejects
    (all of them under 23.03)."""
    if not rejects(profile):
        return list(router.nb.nat)
    return [n for n in router.nb.nat if nat_rejection(n, router) is None]
