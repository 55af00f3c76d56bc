"""Parsers for the address strings found in the OVN Northbound database.

Covers Ethernet addresses, IPv4/IPv6 addresses with optional prefixes,
``Logical_Switch_Port.addresses`` entries, ``port_security`` entries and
``Logical_Router_Port`` mac/networks.  Errors raise :class:`AddressError`
naming the offending token.

Reference (ovn-northd 23.03) behaviour this module follows, all observed:

* IPv4 with no prefix means /32, IPv6 with no prefix /128.  A prefix may be a
  length (leading zeros allowed: ``/024``) or a contiguous netmask
  (``/255.255.255.0``, ``/ffff:ffff::``); a non-contiguous mask, ``/33`` or
  ``/129`` is an error.  Host bits may be set (``10.9.0.5/16``).
* IPv4 octets are decimal even with leading zeros (``010.7.0.6`` is
  10.7.0.6).  MAC bytes are 1 or 2 hex digits, any case; output is lowercase
  ``xx:xx:xx:xx:xx:xx``.
* IPv6 addresses print like glibc ``inet_ntop`` (``::ffff:10.7.0.12``,
  ``::0.2.0.3``), which differs from ``str(IPv6Address)``; use
  :func:`format_ipv6`.
* Every router port gets the EUI-64 link-local address ``fe80::/64`` derived
  from its MAC, appended after its configured networks, even when it has no
  IPv6 network and even when the same LLA is configured explicitly.
* Keywords (``unknown``, ``router``, ``dynamic``) are case-sensitive.

Scanf artefacts of the reference that are *not* reproduced (we reject the
token instead): IPv4 octets above 255 wrap modulo 256 (``10.5.0.300`` is read
as 10.5.0.44), trailing junk after an address is ignored (``10.9.0.4x``), an
empty prefix (``10.9.0.6/``) or ``/+24`` is accepted, MAC bytes may carry a
``0x`` prefix or more than 2 digits (``100:...`` reads as ``00:...``).
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Final, TypeAlias


class AddressError(ValueError):
    """A malformed address string; the message names the bad token."""

    def __init__(self, message: str, token: str | None = None) -> None:
        super().__init__(message)
        self.token = token


IPAddress: TypeAlias = IPv4Address | IPv6Address

# --------------------------------------------------------------------------
# Ethernet addresses
# --------------------------------------------------------------------------

# A MAC byte as the reference scans it (OVS' ``%hhx``: strtoull base 16, then the low 8 bits): any
# number of hex digits, an optional 0x prefix (observed: ``50:54:00:00:00:010`` is 50:54:00:00:00:10,
# ``0100`` 0x00, ``1ff`` 0xff, ``0x1f`` 0x1f).
_HEX_BYTE = r"(?:0[xX](?=[0-9A-Fa-f]))?[0-9A-Fa-f]+"
_MAC_RE: Final = re.compile(rf"{_HEX_BYTE}(?::{_HEX_BYTE}){{5}}")
_MAC_MAX: Final = (1 << 48) - 1


def parse_mac(s: str) -> int:
    """``"0a:00:00:00:00:01"`` -> 48-bit integer.  One or more hex digits per byte, taken modulo 256
    (:data:`_HEX_BYTE`)."""
    if not isinstance(s, str) or not _MAC_RE.fullmatch(s):
        raise AddressError(f"invalid MAC address {s!r}", s)
    value = 0
    for part in s.split(":"):
        value = (value << 8) | (int(part, 16) & 0xFF)
    return value


@functools.lru_cache(maxsize=1 << 16)
def format_mac(value: int) -> str:
    if not 0 <= value <= _MAC_MAX:
        raise AddressError(f"MAC value out of range: {value!r}")
    raw = value.to_bytes(6, "big")
    return ":".join(f"{b:02x}" for b in raw)


@dataclass(frozen=True, slots=True, order=True)
class EthAddr:
    """A 48-bit Ethernet address."""

    value: int

    def __post_init__(self) -> None:
        if not 0 <= self.value <= _MAC_MAX:
            raise AddressError(f"MAC value out of range: {self.value!r}")

    @classmethod
    def parse(cls, s: str) -> EthAddr:
        return cls(parse_mac(s))

    @classmethod
    def from_bytes(cls, raw: bytes) -> EthAddr:
        if len(raw) != 6:
            raise AddressError(f"MAC needs 6 bytes, got {len(raw)}")
        return cls(int.from_bytes(raw, "big"))

    def __str__(self) -> str:
        return format_mac(self.value)

    def __repr__(self) -> str:
        return f"EthAddr({format_mac(self.value)!r})"

    @property
    def packed(self) -> bytes:
        return self.value.to_bytes(6, "big")

    @property
    def is_zero(self) -> bool:
        return self.value == 0

    @property
    def is_broadcast(self) -> bool:
        return self.value == _MAC_MAX

    @property
    def is_multicast(self) -> bool:
        return bool(self.packed[0] & 0x01)

    @property
    def is_local(self) -> bool:
        """Locally administered (U/L bit set)."""
        return bool(self.packed[0] & 0x02)

    def eui64_interface_id(self) -> int:
        """The 64-bit modified EUI-64 interface identifier (RFC 4291 App. A)."""
        b = self.packed
        eui = bytes([b[0] ^ 0x02, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]])
        return int.from_bytes(eui, "big")

    def ipv6_lla(self) -> IPv6Address:
        """``fe80::/64`` + EUI-64 (e.g. 00:00:00:00:ff:01 -> fe80::200:ff:fe00:ff01)."""
        return eui64_address(self, IPv6Address("fe80::"))


def eui64_address(mac: EthAddr, prefix: IPv6Address) -> IPv6Address:
    """``prefix``'s upper 64 bits followed by the MAC's EUI-64 interface id."""
    upper = int(prefix) & ~((1 << 64) - 1)
    return IPv6Address(upper | mac.eui64_interface_id())


_LEADING_MAC_RE: Final = re.compile(rf"\s*({_HEX_BYTE}(?::{_HEX_BYTE}){{5}})")


def leading_mac(s: str) -> EthAddr | None:
    """The MAC an address string *starts* with, whatever follows it.

    The reference's destination-MAC lookup flows use this looser reading: an
    entry like ``"00:00:00:00:09:03, 10.9.0.3"`` or ``"<mac> 10.9.0.2/33"``
    still gets its MAC in ``ls_in_l2_lkup`` although its IPs are not used.
    """
    m = _LEADING_MAC_RE.match(s)
    return EthAddr.parse(m.group(1)) if m else None


# --------------------------------------------------------------------------
# IP addresses and prefixes
# --------------------------------------------------------------------------

_IPV4_RE: Final = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")
_PLEN_RE: Final = re.compile(r"\d{1,3}")


_IPV4_LENIENT_RE: Final = re.compile(r"(\d+)\.(\d+)\.(\d+)\.(\d+)")


def parse_ipv4(s: str, *, lenient: bool = False) -> IPv4Address:
    """Dotted quad; octets are decimal, leading zeros allowed, each <= 255.

    ``lenient``: an octet above 255 is taken modulo 256 (``300.1.1.1`` is 44.1.1.1), as the
    reference reads switch port ``addresses`` and router port ``networks`` (observed on 23.03:
    ``256.1.1.1`` answers ARP as 0.1.1.1, a router port ``300.1.1.1/24`` owns 44.1.1.1)."""
    m = (_IPV4_LENIENT_RE if lenient else _IPV4_RE).fullmatch(s)
    if not m:
        raise AddressError(f"invalid IPv4 address {s!r}", s)
    octets = [int(g) for g in m.groups()]
    if lenient:
        octets = [o % 256 for o in octets]
    elif any(o > 255 for o in octets):
        raise AddressError(f"invalid IPv4 address {s!r} (octet above 255)", s)
    return IPv4Address(bytes(octets))


def parse_ipv6(s: str) -> IPv6Address:
    """An IPv6 address as glibc ``inet_pton`` accepts it (no zone id)."""
    try:
        raw = socket.inet_pton(socket.AF_INET6, s)
    except (OSError, ValueError):
        raise AddressError(f"invalid IPv6 address {s!r}", s) from None
    return IPv6Address(raw)


def parse_ip(s: str, *, lenient: bool = False) -> IPAddress:
    """IPv4 if ``s`` has no colon, else IPv6; ``lenient``: IPv4 octets modulo 256 (:func:`parse_ipv4`)."""
    return parse_ipv6(s) if ":" in s else parse_ipv4(s, lenient=lenient)


def parse_nat_external_ip(text: str, *, arp: bool = False) -> tuple[IPAddress, str] | None:
    """A NAT rule's ``external_ip``: (the address, the text its flows match on), or None.

    Observed: the reference reads IPv4 octets above 255 modulo 256 here too; its ARP replies are
    for that address (``10.0.0.300`` answers for 10.0.0.44), while its NAT, ``nat-addresses`` and
    ARP-flooding flows write the text as the NB has it.  ``arp``: also an IPv4 address followed
    by junk (``1.2.3.4.5``), which the reference answers ARP for (1.2.3.4) and floods (the text),
    but does not NAT."""
    t = text.strip()
    try:
        addr = parse_ip(t)
    except AddressError:
        try:
            return parse_ip(t, lenient=True), t
        except AddressError:
            m = _IPV4_HEAD_RE.match(t) if arp else None
            return (parse_ipv4(m.group(0), lenient=True), t) if m is not None else None
    return addr, format_ip(addr)


def format_ipv6(addr: IPv6Address) -> str:
    """Text form as the reference prints it (glibc ``inet_ntop``)."""
    return socket.inet_ntop(socket.AF_INET6, addr.packed)


def format_ip(addr: IPAddress) -> str:
    return format_ipv6(addr) if isinstance(addr, IPv6Address) else str(addr)


def _mask_to_plen(mask: int, bits: int, token: str) -> int:
    inverted = ~mask & ((1 << bits) - 1)
    if inverted & (inverted + 1):
        raise AddressError(f"non-contiguous netmask in {token!r}", token)
    return bits - inverted.bit_length()


def _parse_prefix(text: str, bits: int, token: str) -> int:
    if _PLEN_RE.fullmatch(text):
        plen = int(text)
        if plen > bits:
            raise AddressError(f"prefix length {plen} out of range 0..{bits} in {token!r}", token)
        return plen
    try:
        mask = parse_ipv4(text) if bits == 32 else parse_ipv6(text)
    except AddressError:
        raise AddressError(f"invalid prefix {text!r} in {token!r}", token) from None
    return _mask_to_plen(int(mask), bits, token)


def _host_mask(plen: int, bits: int) -> int:
    return (1 << (bits - plen)) - 1


@dataclass(frozen=True, slots=True, order=True)
class Ipv4Net:
    """An IPv4 address with a prefix length; host bits are kept (``10.0.0.1/24``)."""

    addr: IPv4Address
    plen: int = 32

    def __post_init__(self) -> None:
        if not 0 <= self.plen <= 32:
            raise AddressError(f"IPv4 prefix length {self.plen} out of range 0..32")

    @property
    def mask(self) -> IPv4Address:
        return IPv4Address(0xFFFFFFFF ^ _host_mask(self.plen, 32))

    @property
    def network(self) -> IPv4Address:
        return IPv4Address(int(self.addr) & ~_host_mask(self.plen, 32))

    @property
    def broadcast(self) -> IPv4Address:
        """Address with all host bits set (equals ``addr`` for /32)."""
        return IPv4Address(int(self.addr) | _host_mask(self.plen, 32))

    @property
    def addr_s(self) -> str:
        return str(self.addr)

    @property
    def network_s(self) -> str:
        return str(self.network)

    @property
    def bcast_s(self) -> str:
        return str(self.broadcast)

    def __str__(self) -> str:
        return f"{self.addr}/{self.plen}"

    def contains(self, addr: IPv4Address) -> bool:
        m = ~_host_mask(self.plen, 32)
        return (int(addr) & m) == (int(self.addr) & m)

    def bounds(self) -> tuple[int, int]:
        """The network's first and last address, as ints (for many :meth:`contains` in a row)."""
        host = _host_mask(self.plen, 32)
        lo = int(self.addr) & ~host
        return lo, lo | host


@dataclass(frozen=True, slots=True, order=True)
class Ipv6Net:
    """An IPv6 address with a prefix length; host bits are kept."""

    addr: IPv6Address
    plen: int = 128

    def __post_init__(self) -> None:
        if not 0 <= self.plen <= 128:
            raise AddressError(f"IPv6 prefix length {self.plen} out of range 0..128")

    @property
    def mask(self) -> IPv6Address:
        return IPv6Address(((1 << 128) - 1) ^ _host_mask(self.plen, 128))

    @property
    def network(self) -> IPv6Address:
        return IPv6Address(int(self.addr) & ~_host_mask(self.plen, 128))

    @property
    def addr_s(self) -> str:
        return format_ipv6(self.addr)

    @property
    def network_s(self) -> str:
        return format_ipv6(self.network)

    @property
    def sn_addr(self) -> IPv6Address:
        """Solicited-node multicast address ``ff02::1:ffXX:XXXX``."""
        return solicited_node(self.addr)

    @property
    def sn_addr_s(self) -> str:
        return format_ipv6(self.sn_addr)

    @property
    def is_lla(self) -> bool:
        return self.addr in _LLA_NET

    def __str__(self) -> str:
        return f"{self.addr_s}/{self.plen}"

    def contains(self, addr: IPv6Address) -> bool:
        m = ~_host_mask(self.plen, 128)
        return (int(addr) & m) == (int(self.addr) & m)

    def bounds(self) -> tuple[int, int]:
        """The network's first and last address, as ints (for many :meth:`contains` in a row)."""
        host = _host_mask(self.plen, 128)
        lo = int(self.addr) & ~host
        return lo, lo | host


_LLA_NET: Final = ipaddress.IPv6Network("fe80::/10")
_SN_BASE: Final = int(IPv6Address("ff02::1:ff00:0"))


def solicited_node(addr: IPv6Address) -> IPv6Address:
    return IPv6Address(_SN_BASE | (int(addr) & 0xFFFFFF))


IpNet: TypeAlias = Ipv4Net | Ipv6Net


def parse_ipv4_cidr(s: str, *, lenient: bool = False) -> Ipv4Net:
    """``a.b.c.d`` (/32), ``a.b.c.d/N`` or ``a.b.c.d/m.m.m.m`` (contiguous mask); ``lenient``:
    octets modulo 256 (:func:`parse_ipv4`)."""
    addr_s, slash, prefix_s = s.partition("/")
    addr = parse_ipv4(addr_s, lenient=lenient)
    if not slash:
        return Ipv4Net(addr, 32)
    return Ipv4Net(addr, _parse_prefix(prefix_s, 32, s))


def parse_ipv6_cidr(s: str) -> Ipv6Net:
    """``addr`` (/128), ``addr/N`` or ``addr/mask`` (contiguous mask)."""
    addr_s, slash, prefix_s = s.partition("/")
    addr = parse_ipv6(addr_s)
    if not slash:
        return Ipv6Net(addr, 128)
    return Ipv6Net(addr, _parse_prefix(prefix_s, 128, s))


def parse_ip_cidr(s: str, *, lenient: bool = False) -> IpNet:
    """IPv4 or IPv6 address with optional prefix (IPv6 iff the address part has a colon)."""
    addr_s = s.partition("/")[0]
    return parse_ipv6_cidr(s) if ":" in addr_s else parse_ipv4_cidr(s, lenient=lenient)


def parse_ip_token(token: str, *, lenient: bool = False) -> IpNet:
    """Like :func:`parse_ip_cidr` but the error reads as a bad address token."""
    try:
        return parse_ip_cidr(token, lenient=lenient)
    except AddressError as e:
        raise AddressError(f"invalid address token {token!r}: {e}", token) from None


# --------------------------------------------------------------------------
# Logical_Switch_Port.addresses / port_security
# --------------------------------------------------------------------------


class LspAddressKind(enum.StrEnum):
    """What a Logical_Switch_Port.addresses entry is.

    Every value :func:`parse_lsp_address` returns has a ``kind`` attribute, so
    callers may test ``parsed.kind == "unknown"`` whatever the type.
    """

    STATIC = "static"  # "MAC [IP ...]"
    DYNAMIC = "dynamic"
    UNKNOWN = "unknown"
    ROUTER = "router"

    @property
    def kind(self) -> LspAddressKind:
        return self


AddressKind = LspAddressKind


@dataclass(frozen=True, slots=True)
class LportAddresses:
    """A MAC with the IPs it owns: one addresses/port_security entry."""

    original: str
    mac: EthAddr
    ipv4: tuple[Ipv4Net, ...] = ()
    ipv6: tuple[Ipv6Net, ...] = ()

    @property
    def kind(self) -> LspAddressKind:
        return LspAddressKind.STATIC

    @property
    def ea_s(self) -> str:
        return str(self.mac)

    @property
    def has_ips(self) -> bool:
        return bool(self.ipv4 or self.ipv6)


@dataclass(frozen=True, slots=True)
class DynamicAddressRequest:
    """A ``dynamic`` entry: northd's IPAM fills in what is not given."""

    original: str
    mac: EthAddr | None = None
    ipv4: IPv4Address | None = None
    ipv6: IPv6Address | None = None

    @property
    def kind(self) -> LspAddressKind:
        return LspAddressKind.DYNAMIC


LspAddress: TypeAlias = LportAddresses | DynamicAddressRequest | LspAddressKind

_WS_RE: Final = re.compile(r"\s+")
_IPV6_CHARS_RE: Final = re.compile(r"[0-9A-Fa-f:.]+")


def _tokens(s: str) -> list[str]:
    return [t for t in _WS_RE.split(s) if t]


def _split_ips(tokens: Iterable[str]) -> tuple[tuple[Ipv4Net, ...], tuple[Ipv6Net, ...]]:
    v4: list[Ipv4Net] = []
    v6: list[Ipv6Net] = []
    for tok in tokens:
        net = parse_ip_token(tok)
        if isinstance(net, Ipv4Net):
            v4.append(net)
        else:
            v6.append(net)
    return tuple(v4), tuple(v6)


def parse_lport_addresses(s: str) -> LportAddresses:
    """``"MAC [IP[/PLEN] ...]"`` with IPv4 and IPv6 in any mix; whitespace separated."""
    tokens = _tokens(s)
    if not tokens:
        raise AddressError(f"empty address {s!r}", s)
    try:
        mac = EthAddr.parse(tokens[0])
    except AddressError:
        raise AddressError(f"invalid syntax {s!r}: {tokens[0]!r} is not a MAC address", tokens[0]) from None
    v4, v6 = _split_ips(tokens[1:])
    return LportAddresses(s, mac, v4, v6)


def _parse_dynamic(s: str) -> DynamicAddressRequest | None:
    """The ``dynamic`` forms, or None if ``s`` is not one.

    Observed grammar (tokens separated by runs of whitespace, no leading or
    trailing whitespace, keyword case-sensitive): ``dynamic``, ``MAC dynamic``,
    ``dynamic IPV4``, ``dynamic IPV6``, ``dynamic IPV4 IPV6``.  The reference
    also accepts ``dynamic IPV4 X`` where X is any run of ``[0-9A-Fa-f:.]``
    that is not a valid IPv6 address (e.g. a second IPv4); X is then ignored.
    """
    if s != s.strip():
        return None
    tokens = _tokens(s)
    if tokens == ["dynamic"]:
        return DynamicAddressRequest(s)
    if len(tokens) == 2 and tokens[1] == "dynamic" and _MAC_RE.fullmatch(tokens[0]):
        return DynamicAddressRequest(s, mac=EthAddr.parse(tokens[0]))
    if not tokens or tokens[0] != "dynamic" or len(tokens) > 3:
        return None
    rest = tokens[1:]
    try:
        if len(rest) == 1:
            ip = parse_ip(rest[0])
            if isinstance(ip, IPv4Address):
                return DynamicAddressRequest(s, ipv4=ip)
            return DynamicAddressRequest(s, ipv6=ip)
        ipv4 = parse_ipv4(rest[0])
    except AddressError:
        return None
    if not _IPV6_CHARS_RE.fullmatch(rest[1]):
        return None
    try:
        ipv6: IPv6Address | None = parse_ipv6(rest[1])
    except AddressError:
        ipv6 = None
    return DynamicAddressRequest(s, ipv4=ipv4, ipv6=ipv6)


def is_dynamic_address(s: str) -> bool:
    return _parse_dynamic(s) is not None


def parse_lsp_address(s: str) -> LspAddress:
    """One element of Logical_Switch_Port.addresses.

    Returns :attr:`LspAddressKind.UNKNOWN` / :attr:`LspAddressKind.ROUTER` for
    the (case-sensitive) keywords, a :class:`DynamicAddressRequest` for the ``dynamic`` forms and a
    :class:`LportAddresses` for ``"MAC [IP ...]"``.  Raises AddressError.
    """
    if s == "unknown":
        return LspAddressKind.UNKNOWN
    if s == "router":
        return LspAddressKind.ROUTER
    dyn = _parse_dynamic(s)
    if dyn is not None:
        return dyn
    return parse_lport_addresses(s)


@dataclass(frozen=True, slots=True)
class LenientLportAddresses:
    """Result of :func:`extract_lport_addresses`."""

    addresses: LportAddresses | None  # None: no MAC at the start, entry ignored
    error: AddressError | None  # the first problem, if any


def extract_lport_addresses(s: str) -> LenientLportAddresses:
    """Parse ``"MAC [IP ...]"`` the way the reference tolerates bad input.

    Observed: a bad MAC drops the whole entry; otherwise IPs are read left to
    right and the first bad token stops the parse, keeping the IPs before it
    (``"<mac> 10.8.0.2 foo 10.8.0.22"`` owns 10.8.0.2 only).  A MAC glued to
    junk (``"<mac>, 10.9.0.3"``) keeps the MAC and no IPs.  IPv4 octets above 255
    are read modulo 256 (``256.1.1.1`` is 0.1.1.1) and still reported as the error.
    """
    try:
        return LenientLportAddresses(parse_lport_addresses(s), None)
    except AddressError as err:
        first_error = err
    tokens = _tokens(s)
    if not tokens or not _MAC_RE.fullmatch(tokens[0]):
        mac = leading_mac(s)
        partial = LportAddresses(s, mac) if mac is not None else None
        return LenientLportAddresses(partial, first_error)
    v4: list[Ipv4Net] = []
    v6: list[Ipv6Net] = []
    for tok in tokens[1:]:
        try:
            net = parse_ip_token(tok, lenient=True)
        except AddressError:
            # Observed: the reference reads an IPv4 address off the front of a token and stops at
            # what follows it (``1.2.3.4.5`` owns 1.2.3.4, and nothing after it is read).
            m = _IPV4_HEAD_RE.match(tok)
            if m is not None:
                v4.append(Ipv4Net(parse_ipv4(m.group(0), lenient=True), 32))
            break
        if isinstance(net, Ipv4Net):
            v4.append(net)
        else:
            v6.append(net)
    return LenientLportAddresses(
        LportAddresses(s, EthAddr.parse(tokens[0]), tuple(v4), tuple(v6)), first_error
    )


_PS_SEP_RE: Final = re.compile(r"[\s,]+")
# An IPv4 address at the front of a token, followed by neither a digit nor a prefix.
_IPV4_HEAD_RE: Final = re.compile(r"\d+\.\d+\.\d+\.\d+(?=[^\d/])")


def parse_port_security(s: str) -> LportAddresses:
    """One element of Logical_Switch_Port.port_security.

    A MAC followed by IPv4/IPv6 addresses with optional CIDR masks, separated by
    whitespace and/or commas (``man ovn-nb``).  In 23.03 ovn-northd copies
    the column verbatim to Port_Binding.port_security; ovn-controller enforces it.
    """
    tokens = [t for t in _PS_SEP_RE.split(s) if t]
    if not tokens:
        raise AddressError(f"empty port_security entry {s!r}", s)
    try:
        mac = EthAddr.parse(tokens[0])
    except AddressError:
        raise AddressError(
            f"invalid port_security {s!r}: {tokens[0]!r} is not a MAC address", tokens[0]
        ) from None
    v4, v6 = _split_ips(tokens[1:])
    return LportAddresses(s, mac, v4, v6)


# --------------------------------------------------------------------------
# Logical_Router_Port mac + networks
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LrpNetworks:
    """A router port's MAC and networks.

    ``ipv6`` holds the configured IPv6 networks in the order given followed by
    the EUI-64 link-local ``fe80::.../64`` (always present, never de-duplicated).
    ``errors`` lists the network strings that were skipped, ``lenient`` the ones read
    leniently (IPv4 octets modulo 256, as the reference does) and kept.
    """

    mac: EthAddr
    ipv4: tuple[Ipv4Net, ...]
    ipv6: tuple[Ipv6Net, ...]
    errors: tuple[AddressError, ...] = ()
    lenient: tuple[AddressError, ...] = ()

    @property
    def ea_s(self) -> str:
        return str(self.mac)

    @property
    def lla(self) -> Ipv6Net:
        return self.ipv6[-1]


def parse_lrp_networks(mac: str, networks: Iterable[str], *, strict: bool = False) -> LrpNetworks:
    """Parse Logical_Router_Port ``mac`` and ``networks``.

    A bad MAC raises AddressError (the reference logs "bad 'mac'" and drops the
    port).  A bad network is skipped and recorded in ``errors`` (the reference
    logs "invalid syntax '...' in networks" and keeps the port); with ``strict``
    it raises instead.  Pass ``networks`` in OVSDB set order (sorted strings) to
    get the reference's order.  (Parsed once per distinct port: the result is immutable and
    shared, and a hundred-port router's networks are read by many builders.)
    """
    return _parse_lrp_networks(mac, tuple(networks), strict)


@functools.lru_cache(maxsize=1 << 14)
def _parse_lrp_networks(mac: str, networks: tuple[str, ...], strict: bool) -> LrpNetworks:
    # Observed: leading whitespace is tolerated, trailing whitespace is not.
    if not _MAC_RE.fullmatch(mac.lstrip()):
        raise AddressError(f"bad 'mac' {mac!r}", mac)
    ea = EthAddr.parse(mac.lstrip())
    v4: list[Ipv4Net] = []
    v6: list[Ipv6Net] = []
    errors: list[AddressError] = []
    lenient: list[AddressError] = []
    for network in networks:
        try:
            net = parse_ip_cidr(network)
        except AddressError as e:
            err = AddressError(f"invalid syntax {network!r} in networks: {e}", network)
            if strict:
                raise err from None
            try:
                net = parse_ip_cidr(network, lenient=True)
            except AddressError:
                errors.append(err)
                continue
            lenient.append(AddressError(f"{err}; read as {net.addr}/{net.plen}, as the reference does",
                                        network))
        if isinstance(net, Ipv4Net):
            v4.append(net)
        else:
            v6.append(net)
    v6.append(Ipv6Net(ea.ipv6_lla(), 64))
    return LrpNetworks(ea, tuple(v4), tuple(v6), tuple(errors), tuple(lenient))
