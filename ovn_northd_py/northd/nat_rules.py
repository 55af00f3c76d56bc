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
  (``bad ip network or ip L for snat in router R``).

``nat-addresses`` still reads every NB rule as 23.03 does (a rule without ``logical_port`` and a
bad MAC is announced on the router port's MAC: observed).  23.03 keeps such rules' ARP / ND
replies (and a bad MAC's flood entry).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any

from ..ovsdb.columns import opt
from .addresses import AddressError, parse_mac

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


def nat_rejection(nat: Any) -> str | None:
    """Why a release with ``nat_rejects_invalid`` rejects the rule (the module doc), or None."""
    if bad_external_mac(nat):
        return f"bad external_mac {opt(nat.external_mac)!r}: rule ignored, as the reference does"
    logical = logical_ip(str(nat.logical_ip))
    if nat.type in ("dnat", "dnat_and_snat"):
        if logical is None or logical[1] != (128 if ":" in logical[0] else 32):
            return f"bad logical_ip {nat.logical_ip!r} for {nat.type} (not one address): rule ignored"
    elif nat.type == "snat" and logical is None:
        return f"bad logical_ip {nat.logical_ip!r} for snat: rule ignored"
    return None


def rejects(profile: Any) -> bool:
    """Does ``profile``'s release reject invalid NAT rules as a whole?"""
    return bool(profile.has(NAT_REJECTS_INVALID))


def valid_nats(nats: Iterable[Any], profile: Any) -> list[Any]:
    """``nats`` without the rules ``profile``'s release rejects (all of them under 23.03)."""
    if not rejects(profile):
        return list(nats)
    return [n for n in nats if nat_rejection(n) is None]
