"""IPAM: the ``dynamic`` addresses northd assigns to logical switch ports.

A port asking for ``dynamic`` addresses (``man ovn-nb``: ``dynamic``, ``MAC dynamic``,
``dynamic IPV4``, ``dynamic IPV6``, ``dynamic IPV4 IPV6``) gets a MAC from
``NB_Global options:mac_prefix``, an IPv4 address from its switch's
``other_config:subnet`` and an IPv6 address from ``other_config:ipv6_prefix``; the
result is written to ``Logical_Switch_Port.dynamic_addresses`` as ``"MAC [IPV4] [IPV6]"``.

Behaviour observed on the reference (ovn-northd 23.03):

* **Switch configuration.**  ``subnet`` needs an explicit prefix (``10.0.0.0/24`` or a
  netmask), leading blanks are allowed, trailing ones are not, host bits are dropped,
  ``/32`` is refused.  ``ipv6_prefix`` is an address with host bits ignored and an
  optional ``/64`` (any other length is refused).  ``mac_only`` (``true``, any case)
  counts only when neither ``subnet`` nor ``ipv6_prefix`` is present (even an invalid
  one).  A switch with none of the three usable gets no dynamic addresses at all.
* **IPv4 pool.**  Never the network address, the first host (kept for a router) or
  the broadcast address.  ``exclude_ips`` is read token by token (blanks separate,
  ``a..b`` is a range, clamped to the subnet): an address or range wholly outside
  the subnet, or a reversed range, is skipped; anything that is not an IPv4 address
  (``bogus``, ``10.0.0.2,10.0.0.3`` stops after ``10.0.0.2``) ends the list.  Static
  IPv4 addresses of every port of the switch and the networks of the router ports
  connected to it are in use.  A new address is always the lowest free one.
* **MACs** are unique over all switches: the static MACs of every switch port and
  every router port are in use.  A new MAC is ``mac_prefix`` followed by a 24-bit
  suffix: the low 24 bits of the port's IPv4 address plus one (0 when it has none; a
  new port's requested IPv4 when the switch has no subnet), moving up past suffixes
  in use and wrapping from ``ffffff`` to ``000001``.
* **One run.**  Switches are visited in the reference's datapath hash-table order
  (see :func:`hmap_order`), ports in NB uuid order; only the first ``dynamic`` entry
  of ``addresses`` (in set order) counts and router-type ports get nothing.  First
  pass: a port's current ``dynamic_addresses`` is kept verbatim when valid (MAC with
  the prefix or the requested one; first IPv4 a free pool address, the requested one
  if any; an IPv6 address iff the switch has a prefix, the requested one or the MAC's
  EUI-64 unless the port is plain ``dynamic``; no IPv4 without a subnet), claiming its
  addresses in port order; otherwise its valid MAC and IPv4 are kept (and claimed)
  and the rest is planned.  A new port takes its requested IPv4 unchecked; a port
  with addresses looks at a changed request only while its current IPv4 address is a
  good one (else it gets the lowest free address first), and takes it if it is free
  at that point of the first pass.  Second pass, same order: new IPv4 addresses,
  then MACs, then IPv6 addresses are assigned (a plain ``dynamic`` port keeps its
  IPv6 address while its MAC stays).
* **Runs until stable.**  Every run that changes addresses writes them to NB, which
  triggers another run: the second run repairs what the first took unchecked (a
  request outside the pool, or taken), the later port of two holding one address
  moving.  :func:`allocate_dynamic_addresses` returns that fixpoint.

Known divergences: the order of switches sharing a hash bucket is not the
reference's (it depends on its IDL's history; we take NB uuid order there).  A
request for the broadcast address or the one after it is accepted by the reference
on some runs and refused on others, so its result flips from run to run; we refuse
it on every run.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv6Address
from typing import Any, Final, Literal

from .addresses import (
    AddressError,
    DynamicAddressRequest,
    EthAddr,
    eui64_address,
    extract_lport_addresses,
    format_ipv6,
    parse_ipv4,
    parse_ipv4_cidr,
    parse_ipv6_cidr,
    parse_lsp_address,
)
from .model import Datapath, Northd, Port
from .ovs_order import hmap_order as hmap_order_of
from .ovs_order import ovs_hash_string

MAC_SUFFIX_SPACE: Final = 0xFFFFFF  # suffixes 1..0xfffffe; 0 and ffffff are never assigned
IPAM_KEYS: Final = frozenset({"subnet", "ipv6_prefix", "mac_only"})
_AFTER_ANY_IPV4: Final = 1 << 32

Warn = Callable[[str, str], None]  # (kind, message)
# How a port's IPv4 address is chosen in the second pass: none (no subnet), the current one,
# the requested one, or the lowest free one.
Ipv4Plan = Literal["none", "keep", "request", "allocate"]


def switch_has_ipam_keys(other_config: Mapping[str, str]) -> bool:
    """Cheap test: may this switch's ports get dynamic addresses?"""
    return not IPAM_KEYS.isdisjoint(other_config)


def uses_dynamic_addresses(nd: Any) -> bool:
    """Does any switch port hold or ask for IPAM addresses?  Without such ports, static addresses
    (and router ports) on a switch with IPAM keys change no assignment (MACs are allocated
    network-wide, so every port counts)."""
    for p in nd.ports.values():  # (plain loops: this runs over every port of the network)
        if p.kind == "lsp":
            if p.dynamic_addresses:
                return True
            for a in p.mac:
                if "dynamic" in a and "dynamic" in a.split():
                    return True
    return False


# --------------------------------------------------------------------------- switch configuration


@dataclass(frozen=True, slots=True)
class Ipv4Subnet:
    """An IPAM subnet and its excluded addresses (inclusive ranges, sorted, merged)."""

    network: int
    plen: int
    excluded: tuple[tuple[int, int], ...] = ()

    @property
    def broadcast(self) -> int:
        return self.network | ((1 << (32 - self.plen)) - 1)

    @property
    def first(self) -> int:
        """The lowest assignable address (network + 2: the first host is kept for a router)."""
        return self.network + 2

    @property
    def last(self) -> int:
        return self.broadcast - 1

    def excluded_range_at(self, ip: int) -> tuple[int, int] | None:
        """The excluded range holding ``ip``, if any."""
        i = bisect_right(self.excluded, (ip, _AFTER_ANY_IPV4)) - 1
        if i >= 0 and self.excluded[i][0] <= ip <= self.excluded[i][1]:
            return self.excluded[i]
        return None

    def assignable(self, ip: int) -> bool:
        return self.first <= ip <= self.last and self.excluded_range_at(ip) is None


@dataclass(frozen=True, slots=True)
class SwitchIpamConfig:
    ipv4: Ipv4Subnet | None = None
    ipv6_prefix: IPv6Address | None = None  # the upper 64 bits; the rest zero
    mac_only: bool = False
    problems: tuple[tuple[str, str], ...] = ()  # (kind, message) worth a warning

    @property
    def enabled(self) -> bool:
        return self.ipv4 is not None or self.ipv6_prefix is not None or self.mac_only


def parse_subnet(text: str) -> tuple[int, int]:
    """``other_config:subnet`` -> (network, plen).  Raises AddressError."""
    s = text.lstrip()
    if "/" not in s:
        raise AddressError(f"bad 'subnet' {text!r}: a prefix length or netmask is required", text)
    net = parse_ipv4_cidr(s)
    if net.plen >= 32:
        raise AddressError(f"bad 'subnet' {text!r}: no room for addresses", text)
    return int(net.network), net.plen


def parse_ipv6_prefix(text: str) -> IPv6Address:
    """``other_config:ipv6_prefix`` -> the /64 prefix.  Raises AddressError."""
    s = text.lstrip()
    net = parse_ipv6_cidr(s)
    if "/" in s and net.plen != 64:
        raise AddressError(f"bad 'ipv6_prefix' {text!r}: must be /64", text)
    return IPv6Address(int(net.addr) & ~((1 << 64) - 1))


_EXCLUDE_TOKEN_RE: Final = re.compile(r"\s*(\.\.|(?:[0-9A-Za-z_:/]|\.(?!\.))+|\S)")


def _exclude_tokens(text: str) -> Iterator[str]:
    pos = 0
    while True:
        m = _EXCLUDE_TOKEN_RE.match(text, pos)
        if m is None:
            return
        yield m.group(1)
        pos = m.end()


def _ipv4_token(token: str | None) -> int | None:
    if token is None:
        return None
    try:
        return int(parse_ipv4(token))
    except AddressError:
        return None


def parse_exclude_ips(text: str, network: int, plen: int) -> tuple[tuple[tuple[int, int], ...], list[str]]:
    """``other_config:exclude_ips`` -> (merged inclusive ranges inside the subnet, problems)."""
    subnet = Ipv4Subnet(network, plen)
    ranges: list[tuple[int, int]] = []
    problems: list[str] = []
    tokens = _exclude_tokens(text)
    token = next(tokens, None)
    while token is not None:
        start = _ipv4_token(token)
        if start is None:
            problems.append(f"bad exclude_ips {text!r}: {token!r} is not an IPv4 address")
            break
        end = start
        token = next(tokens, None)
        if token == "..":
            end_tok = next(tokens, None)
            end_ip = _ipv4_token(end_tok)
            if end_ip is None:
                problems.append(f"bad exclude_ips {text!r}: {end_tok!r} is not an IPv4 address")
                break
            end = end_ip
            token = next(tokens, None)
        if start > end:
            problems.append(f"bad exclude_ips {text!r}: reversed range")
        elif end < subnet.network or start > subnet.broadcast:
            problems.append(f"bad exclude_ips {text!r}: excluded addresses not in subnet")
        else:
            ranges.append((max(start, subnet.network), min(end, subnet.broadcast)))
    return _merge(ranges), problems


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def parse_switch_config(other_config: Mapping[str, str]) -> SwitchIpamConfig:
    problems: list[tuple[str, str]] = []
    ipv4: Ipv4Subnet | None = None
    subnet_s = other_config.get("subnet")
    if subnet_s is not None:
        try:
            network, plen = parse_subnet(subnet_s)
        except AddressError as e:
            problems.append(("ipam_bad_subnet", str(e)))
        else:
            excluded, bad = parse_exclude_ips(other_config.get("exclude_ips", ""), network, plen)
            problems += [("ipam_bad_exclude_ips", b) for b in bad]
            ipv4 = Ipv4Subnet(network, plen, excluded)
    prefix: IPv6Address | None = None
    prefix_s = other_config.get("ipv6_prefix")
    if prefix_s is not None:
        try:
            prefix = parse_ipv6_prefix(prefix_s)
        except AddressError as e:
            problems.append(("ipam_bad_ipv6_prefix", f"bad 'ipv6_prefix' {prefix_s!r}: {e}"))
    mac_only = (
        subnet_s is None and prefix_s is None and other_config.get("mac_only", "").lower() == "true"
    )
    return SwitchIpamConfig(ipv4, prefix, mac_only, tuple(problems))


# --------------------------------------------------------------------------- address pools


@dataclass(slots=True)
class Ipv4Pool:
    """The IPv4 addresses of one switch: in use, and the lowest free one."""

    subnet: Ipv4Subnet
    used: set[int] = field(default_factory=set)
    _cursor: int = -1  # nothing below is free (addresses are never freed during a run)

    def reserve(self, ip: int) -> None:
        self.used.add(ip)

    def is_free(self, ip: int) -> bool:
        return self.subnet.assignable(ip) and ip not in self.used

    def allocate(self) -> int | None:
        ip = max(self._cursor, self.subnet.first)
        while ip <= self.subnet.last:
            rng = self.subnet.excluded_range_at(ip)
            if rng is not None:
                ip = rng[1] + 1
            elif ip in self.used:
                ip += 1
            else:
                self._cursor = ip
                self.used.add(ip)
                return ip
        self._cursor = ip
        return None


@dataclass(slots=True)
class MacPool:
    """MACs in use over all switches, and new ones from ``mac_prefix``."""

    prefix: int  # the upper 24 bits, in place (prefix << 24)
    used: set[int] = field(default_factory=set)

    @classmethod
    def for_prefix(cls, mac_prefix: str) -> MacPool:
        return cls(EthAddr.parse(mac_prefix + ":00:00:00").value)

    def has_prefix(self, mac: EthAddr) -> bool:
        return mac.value & ~MAC_SUFFIX_SPACE == self.prefix

    def reserve(self, mac: EthAddr) -> None:
        self.used.add(mac.value)

    def allocate(self, ipv4: int) -> EthAddr | None:
        start = (ipv4 & MAC_SUFFIX_SPACE) + 1
        for i in range(MAC_SUFFIX_SPACE):
            suffix = (start + i) % MAC_SUFFIX_SPACE
            if suffix == 0:
                continue
            value = self.prefix | suffix
            if value not in self.used:
                self.used.add(value)
                return EthAddr(value)
        return None


# --------------------------------------------------------------------------- ports


@dataclass(frozen=True, slots=True)
class CurrentAddresses:
    """A port's current ``dynamic_addresses``, parsed (first IPv4 and first IPv6 only).

    Unreadable text still counts as an assignment, one with nothing valid in it.
    """

    text: str
    mac: EthAddr | None
    ipv4: int | None
    ipv6: IPv6Address | None


def parse_current(text: str | None) -> CurrentAddresses | None:
    if not text:
        return None
    parsed = extract_lport_addresses(text).addresses
    if parsed is None:
        return CurrentAddresses(text, None, None, None)
    ipv4 = int(parsed.ipv4[0].addr) if parsed.ipv4 else None
    ipv6 = parsed.ipv6[0].addr if parsed.ipv6 else None
    return CurrentAddresses(text, parsed.mac, ipv4, ipv6)


def format_dynamic(mac: EthAddr, ipv4: int | None, ipv6: IPv6Address | None) -> str:
    parts = [str(mac)]
    if ipv4 is not None:
        parts.append(str(IPv4Address(ipv4)))
    if ipv6 is not None:
        parts.append(format_ipv6(ipv6))
    return " ".join(parts)


@dataclass(frozen=True, slots=True)
class PortIpamInput:
    name: str
    addresses: tuple[str, ...]
    current: str | None = None  # NB dynamic_addresses
    is_router: bool = False  # router-type ports get no dynamic addresses
    router_ipv4: tuple[int, ...] = ()  # a router-type port: its router port's IPv4 addresses


@dataclass(frozen=True, slots=True)
class SwitchIpamInput:
    key: str  # NB uuid text
    other_config: Mapping[str, str]
    ports: tuple[PortIpamInput, ...]  # in NB uuid order


def dynamic_request(addresses: Iterable[str]) -> DynamicAddressRequest | None:
    """The first ``dynamic`` entry of ``addresses`` in OVSDB set order, if any."""
    for entry in sorted(addresses):
        try:
            parsed = parse_lsp_address(entry)
        except AddressError:
            continue
        if isinstance(parsed, DynamicAddressRequest):
            return parsed
    return None


def static_entries(addresses: Iterable[str]) -> Iterator[tuple[EthAddr, tuple[int, ...]]]:
    """(MAC, IPv4 addresses) of each static entry, read as leniently as the reference does."""
    for entry in addresses:
        if entry in ("unknown", "router"):
            continue
        try:
            if isinstance(parse_lsp_address(entry), DynamicAddressRequest):
                continue
        except AddressError:
            pass
        parsed = extract_lport_addresses(entry).addresses
        if parsed is not None:
            yield parsed.mac, tuple(int(n.addr) for n in parsed.ipv4)


def _in_prefix(ip: IPv6Address | None, prefix: IPv6Address | None) -> bool:
    return ip is not None and prefix is not None and (int(ip) >> 64) == (int(prefix) >> 64)


@dataclass(slots=True)
class _Update:
    """A port whose addresses are (re)assigned in the second pass, and what it keeps."""

    name: str
    req: DynamicAddressRequest
    cur: CurrentAddresses | None  # None: nothing assigned yet
    cfg: SwitchIpamConfig
    pool: Ipv4Pool | None
    warn: Warn
    ipv4_plan: Ipv4Plan = "none"
    mac_ok: bool = False  # the current MAC stays


def _is_plain(req: DynamicAddressRequest) -> bool:
    """Plain ``dynamic``: nothing requested."""
    return req.mac is None and req.ipv4 is None and req.ipv6 is None


def _expected_ipv6(req: DynamicAddressRequest, prefix: IPv6Address, mac: EthAddr | None,
                   keep: IPv6Address | None) -> IPv6Address | None:
    """The requested IPv6 address (inside the prefix), else ``keep`` for a plain ``dynamic`` port,
    else the prefix with the MAC's EUI-64."""
    if _in_prefix(req.ipv6, prefix):
        return req.ipv6
    if keep is not None and _is_plain(req):
        return keep
    return eui64_address(mac, prefix) if mac is not None else None


def _mac_ok(req: DynamicAddressRequest, cur: CurrentAddresses | None, macs: MacPool) -> bool:
    if cur is None or cur.mac is None:
        return False
    return cur.mac == req.mac if req.mac is not None else macs.has_prefix(cur.mac)


def _ipv4_ok(req: DynamicAddressRequest, cur: CurrentAddresses | None, pool: Ipv4Pool) -> bool:
    if cur is None or cur.ipv4 is None:
        return False
    if req.ipv4 is not None and cur.ipv4 != int(req.ipv4):
        return False
    return pool.is_free(cur.ipv4)


def _ipv4_kept(ipv4_ok: bool, pool: Ipv4Pool | None, cur: CurrentAddresses) -> bool:
    """Does the current IPv4 part stay as it is (a valid address, or none without a subnet)?"""
    return ipv4_ok if pool is not None else cur.ipv4 is None


def _ipv6_ok(req: DynamicAddressRequest, cur: CurrentAddresses, prefix: IPv6Address | None) -> bool:
    if prefix is None:
        return cur.ipv6 is None
    return cur.ipv6 is not None and cur.ipv6 == _expected_ipv6(req, prefix, cur.mac, cur.ipv6)


def _ipv4_plan(req: DynamicAddressRequest, cur: CurrentAddresses | None, pool: Ipv4Pool | None,
               ipv4_ok: bool) -> Ipv4Plan:
    if pool is None:
        return "none"
    if cur is None:
        # A new port takes its request unchecked: the next run repairs a bad one.
        return "request" if req.ipv4 is not None else "allocate"
    if ipv4_ok:
        return "keep"
    if cur.ipv4 is None or not pool.is_free(cur.ipv4):
        return "allocate"  # (a request is only looked at once the port has a good address)
    # A good address, but not the requested one.
    return "request" if req.ipv4 is not None and pool.is_free(int(req.ipv4)) else "allocate"


# --------------------------------------------------------------------------- the allocation


def hmap_mask(n: int) -> int:
    """The bucket mask of an OVS hash map grown by ``n`` insertions."""
    mask = 0
    for i in range(2, n + 1):
        if i // 2 > mask:
            m = i // 2
            for shift in (1, 2, 4, 8, 16, 32):
                m |= m >> shift
            mask = m | ((m & 1) << 1)
    return mask


def hmap_order(keys: Iterable[str], n: int) -> list[str]:
    """Switch uuids in the reference's datapath iteration order (bucket, then uuid).

    The reference keeps its datapaths (``n`` of them: switches and enabled routers) in
    a hash map keyed by the NB uuid's first 32 bits.  The order inside a bucket is not
    reproduced.
    """
    mask = hmap_mask(n)
    return sorted(keys, key=lambda k: (uuid_hash(k) & mask, k))


def uuid_hash(key: str) -> int:
    """OVS's hash of a uuid: its first 32 bits (0 for a key that is not a uuid)."""
    try:
        return int(key[:8], 16)
    except ValueError:
        return 0


def _static_pool(sw: SwitchIpamInput, cfg: SwitchIpamConfig) -> Ipv4Pool | None:
    """The switch's IPv4 pool with the static addresses of its ports and router ports in use."""
    if cfg.ipv4 is None:
        return None
    pool = Ipv4Pool(cfg.ipv4)
    for p in sw.ports:
        for _, ips in static_entries(p.addresses):
            for ip in ips:
                pool.reserve(ip)
        for ip in p.router_ipv4:
            pool.reserve(ip)
    return pool


def _first_pass(sw: SwitchIpamInput, cfg: SwitchIpamConfig, current: Mapping[str, str | None],
                macs: MacPool, warn: Warn, out: dict[str, str]) -> list[_Update]:
    """Keep what is valid (claims in port order); plan the rest."""
    pool = _static_pool(sw, cfg)
    updates: list[_Update] = []
    for p in sw.ports:
        req = None if p.is_router else dynamic_request(p.addresses)
        if req is None:
            continue
        cur = parse_current(current.get(p.name))
        mac_ok = _mac_ok(req, cur, macs)
        if mac_ok and cur is not None and cur.mac is not None:
            macs.reserve(cur.mac)
        ipv4_ok = pool is not None and _ipv4_ok(req, cur, pool)
        plan = _ipv4_plan(req, cur, pool, ipv4_ok)
        if ipv4_ok and pool is not None and cur is not None and cur.ipv4 is not None:
            pool.reserve(cur.ipv4)
        if cur is not None and mac_ok and _ipv4_kept(ipv4_ok, pool, cur) and _ipv6_ok(req, cur, cfg.ipv6_prefix):
            out[p.name] = cur.text  # all valid: kept verbatim
            continue
        updates.append(_Update(p.name, req, cur, cfg, pool, warn, plan, mac_ok))
    return updates


def _second_pass(u: _Update, macs: MacPool) -> str | None:
    """Assign what ``u`` does not keep: IPv4 first, then the MAC (seeded by it), then IPv6."""
    cur, req, pool = u.cur, u.req, u.pool
    ipv4: int | None = None
    if pool is not None:
        if u.ipv4_plan == "request" and req.ipv4 is not None:
            ipv4 = int(req.ipv4)
            pool.reserve(ipv4)  # (perhaps another port's: the next run moves the later one)
        elif u.ipv4_plan == "keep" and cur is not None:
            ipv4 = cur.ipv4
        else:
            ipv4 = pool.allocate()
            if ipv4 is None:
                u.warn("ipam_subnet_exhausted", "subnet address space has been exhausted")
    mac: EthAddr | None
    if req.mac is not None:
        mac = req.mac
        macs.reserve(mac)
    elif u.mac_ok and cur is not None and cur.mac is not None:
        mac = cur.mac
    else:
        seed = ipv4
        if seed is None and cur is None and req.ipv4 is not None:
            seed = int(req.ipv4)
        mac = macs.allocate(seed or 0)
    if mac is None:
        return None
    ipv6: IPv6Address | None = None
    if u.cfg.ipv6_prefix is not None:
        keep = cur.ipv6 if cur is not None and cur.mac == mac else None
        ipv6 = _expected_ipv6(req, u.cfg.ipv6_prefix, mac, keep)
    return format_dynamic(mac, ipv4, ipv6)


MAX_RUNS: Final = 8  # the fixpoint is reached in two or three runs


def allocate_dynamic_addresses(
    switches: Sequence[SwitchIpamInput],
    mac_prefix: str,
    *,
    n_datapaths: int | None = None,
    reserved_macs: Iterable[EthAddr] = (),
    warn: Callable[[str, str, str], None] | None = None,
) -> dict[str, str]:
    """Port name -> ``dynamic_addresses`` for every port that gets some.

    ``switches``: every logical switch (static MACs of all of them are in use);
    ``reserved_macs``: other MACs in use (router ports); ``n_datapaths``: how many
    datapaths the reference would hold (for the switch order; default: the switches);
    ``warn(switch key, kind, message)`` receives configuration problems.

    The reference's result is the fixpoint of its runs: each run that changes a
    port's addresses writes them to NB, which triggers another run, which repairs
    what the first took unchecked.  We run until nothing changes.
    """
    current = {p.name: p.current for s in switches for p in s.ports}
    out: dict[str, str] = {}
    for _ in range(MAX_RUNS):
        out = assign_once(switches, mac_prefix, current, n_datapaths=n_datapaths,
                          reserved_macs=reserved_macs, warn=warn)
        if all(out.get(name) == (cur or None) for name, cur in current.items()):
            break
        current = {name: out.get(name) for name in current}
    return out


def assign_once(
    switches: Sequence[SwitchIpamInput],
    mac_prefix: str,
    current: Mapping[str, str | None],
    *,
    n_datapaths: int | None = None,
    reserved_macs: Iterable[EthAddr] = (),
    warn: Callable[[str, str, str], None] | None = None,
) -> dict[str, str]:
    """One run of the reference's IPAM, from the ``current`` dynamic_addresses of each port.

    First pass (switch by switch, ports in uuid order): keep what is valid, plan the
    rest; second pass (same order): assign.  MACs are unique over all switches.
    """
    out: dict[str, str] = {}
    configs = {s.key: parse_switch_config(s.other_config) for s in switches}
    if not any(c.enabled for c in configs.values()):
        return out
    by_key = {s.key: s for s in switches}
    macs = MacPool.for_prefix(mac_prefix)
    for mac in reserved_macs:
        macs.reserve(mac)
    for s in switches:
        for p in s.ports:
            for mac, _ in static_entries(p.addresses):
                macs.reserve(mac)
    n = n_datapaths if n_datapaths is not None else len(switches)
    updates: list[_Update] = []
    for key in hmap_order(by_key, n):
        cfg = configs[key]
        sw_warn = _switch_warn(key, warn)
        for kind, message in cfg.problems:
            sw_warn(kind, message)
        if cfg.enabled:
            updates += _first_pass(by_key[key], cfg, current, macs, sw_warn, out)
    for u in updates:
        got = _second_pass(u, macs)
        if got is not None:
            out[u.name] = got
    return out


def _switch_warn(key: str, warn: Callable[[str, str, str], None] | None) -> Warn:
    def w(kind: str, message: str) -> None:
        if warn is not None:
            warn(key, kind, message)

    return w


# --------------------------------------------------------------------------- the northd model


def assign_dynamic_addresses(nd: Northd, mac_prefix: str, warn: Callable[..., None],
                             port_hash_order: bool = False) -> None:
    """Set ``Port.dynamic_addresses`` on every switch port of the model ``nd``.

    ``warn`` is a :class:`~ovn_northd_py.log.WarnOnce` ``warn``.  ``port_hash_order``: behaviour
    ``ipam_port_hash_order`` (26.03), the ports of a switch visited in :func:`port_hash_order`.
    """
    switches = nd.switches()
    if not any(switch_has_ipam_keys(dp.nb.other_config) for dp in switches):
        for dp in switches:
            for p in dp.ports:
                p.dynamic_addresses = None
        return
    inputs = [_switch_input(dp, port_hash_order) for dp in switches]
    lrp_macs = [_lrp_mac(p.nb.mac) for p in nd.ports.values() if p.kind == "lrp"]
    names = {dp.key: dp.nb for dp in switches}

    def w(key: str, kind: str, message: str) -> None:
        row = names[key]
        warn(kind, "Logical_Switch", row.uuid, message, name=row.name)

    got = allocate_dynamic_addresses(
        inputs, mac_prefix, n_datapaths=len(nd.by_index),
        reserved_macs=[m for m in lrp_macs if m is not None], warn=w,
    )
    for dp in switches:
        for p in dp.ports:
            if p.kind == "lsp":
                p.dynamic_addresses = got.get(p.name)


def _switch_input(dp: Datapath, hash_order: bool = False) -> SwitchIpamInput:
    lsps = sorted((p for p in dp.ports if p.kind == "lsp"), key=lambda p: p.nb_key)
    if hash_order:
        lsps = port_hash_order(lsps)
    return SwitchIpamInput(dp.key, dict(dp.nb.other_config), tuple(_port_input(p) for p in lsps))


def port_hash_order(lsps: Sequence[Port]) -> list[Port]:
    """Behaviour ``ipam_port_hash_order`` (observed on the 26.03 reference): a switch's ports are
    visited in the iteration order of an OVS hash map of them keyed by name (OVS ``hash_string``),
    filled in NB uuid order (:func:`.ovs_order.hmap_order`)."""
    by_name = {p.name: p for p in lsps}
    ordered = sorted(lsps, key=lambda p: p.nb_key)
    return [by_name[n] for n in hmap_order_of((ovs_hash_string(p.name), p.name) for p in ordered)]


def _port_input(p: Port) -> PortIpamInput:
    cur = p.nb.dynamic_addresses
    current = cur[0] if isinstance(cur, list) and cur else cur if isinstance(cur, str) else None
    router_ipv4: tuple[int, ...] = ()
    if p.is_router_lsp and p.peer is not None:
        router_ipv4 = tuple(_network_ipv4s(p.peer.nb.networks))
    return PortIpamInput(p.name, tuple(p.nb.addresses), current or None, p.is_router_lsp, router_ipv4)


def _network_ipv4s(networks: Iterable[str]) -> Iterator[int]:
    for n in networks:
        try:
            yield int(parse_ipv4_cidr(n).addr)
        except AddressError:
            continue


def _lrp_mac(mac: str) -> EthAddr | None:
    try:
        return EthAddr.parse(mac.strip())
    except AddressError:
        return None
