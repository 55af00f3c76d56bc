"""What flow builders share: the :class:`FlowCtx` and stage hints.

Every flow is added with an owner naming the NB entity that produced it (a datapath, a port, a
load balancer, an ACL, a QoS row, a static route, a policy, a NAT rule): the nine kinds, their
tuples and constructors are in :mod:`.owners`.

The stage-hint (``Logical_Flow.external_ids:stage-hint``) is the first 8 hex
digits of the NB row that produced the flow; the reference leaves it out of
datapath-wide flows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.model import Northd
from .acl_index import AclIndex, build_acl_index
from .chassis_features import ALL_FEATURES, ChassisFeatures, FeatureLatch, chassis_features
from .dynamic_routing import LearnedRoute, read_learned_routes
from .lb_health import LbHealth, build_lb_health, nf_online_pairs, svc_monitor_src_ips
from .lb_index import LbIndex, build_lb_index

if TYPE_CHECKING:
    from .lr_lb import RouterLbBatch

T = TypeVar("T")

class WarnFn(Protocol):
    """``warn(kind, table, row_uuid, reason, **kw)``, e.g. :meth:`WarnOnce.warn`."""

    def __call__(self, kind: str, table: str, row: Any, reason: str, **kw: Any) -> None: ...


def _no_warn(kind: str, table: str, row: Any, reason: str, **kw: Any) -> None:
    return None


def hint(nb_key: str) -> str:
    """The stage-hint for a flow produced by the NB row whose uuid (text) is ``nb_key``."""
    return nb_key[:8]


@dataclass(slots=True)
class FlowCtx:
    """Inputs every builder may read besides the entity it builds flows for.

    ``mac_prefix`` / ``svc_monitor_mac`` are the values northd put in NB_Global
    (random when the NB does not configure them).  ``acl`` indexes the ACLs that
    reach switches through Port_Groups (:mod:`.acl_index`).  ``ignore_lsp_down`` is
    NB_Global ``options:ignore_lsp_down`` (only ``false`` turns it off);
    ``svc_monitor_ips`` maps a port to the load-balancer health-check source IPs its
    switch answers ARP/ND for, with the load balancer's uuid (:mod:`.lb_health`); ``health``
    which health-checked backends are down (SB Service_Monitor) and which load balancers read them.

    ``profile`` is the flow profile of the OVN release being served (its stage table,
    registers and behaviours, :mod:`ovn_northd_py.lflow.profile`): a builder that writes a
    table id into an action asks ``profile.table_id(stage)``, one whose flows differ between
    releases asks ``profile.has(behaviour)``.

    ``memo`` caches values derived from one NB entity during a build (e.g. the
    addresses a router owns, read by every switch port attached to it); call
    :meth:`forget` with the entity's key when it changes.
    """

    nd: Northd
    profile: FlowProfile = DEFAULT_PROFILE
    mac_prefix: str = ""
    svc_monitor_mac: str = ""
    default_acl_drop: bool = False
    acl: AclIndex = field(default_factory=AclIndex)
    lbs: LbIndex = field(default_factory=LbIndex)
    ignore_lsp_down: bool = True
    svc_monitor_ips: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    health: LbHealth = field(default_factory=LbHealth)
    # NB_Global ``options:controller_event=true``: every load-balancer VIP without backends (not
    # ``reject``) raises ``empty_lb_backends`` events (:mod:`.ls_lb`, :mod:`.lr_lb`).  Read by the
    # per-load-balancer memo (``ls_lb.switch_lb_specs``): an NB_Global change recomputes.
    controller_event: bool = False
    # 26.03: (inport, outport) of the network functions whose SB Service_Monitor row is online
    # (:func:`.lb_health.nf_online_pairs`; the network_function feature keeps it current).
    nf_online: frozenset[tuple[str, str]] = frozenset()
    # 26.03 (behaviour ``acl_ct_translation``): NB_Global options:acl_ct_translation=true: the ACL
    # flows of stateful switches are tagged ``acl_ct_translation=true`` (ovn-controller matches
    # their L4 fields on conntrack state) and multicast is not kept out of their pre-ACL stages.
    # (An NB_Global option change recomputes.)
    acl_ct_translation: bool = False
    # NB_Global options:use_common_zone=true (man ovn-nb; 25.03 on): NAT on a distributed gateway
    # port in the common zone, as in 23.03 (:meth:`separate_nat_zones`).  (An NB_Global option
    # change recomputes.)
    use_common_zone: bool = False
    # Debug drop sampling (NB_Global options:debug_drop_collector_set / debug_drop_domain_id, NB
    # Sampling_App "drop"): what replaces every ``drop;`` (:func:`debug_drop_action`); None: none.
    # (An NB_Global option change recomputes, a Sampling_App change that alters it too.)
    debug_drop: str | None = None
    # Router key -> its SB Learned_Route rows (:mod:`.dynamic_routing`; the dynamic-routing feature
    # keeps it current).
    learned_routes: dict[str, tuple[LearnedRoute, ...]] = field(default_factory=dict)
    # Router ports named by an NB BFD row (:mod:`.lr_bfd`; the BFD feature keeps it current).
    bfd_ports: frozenset[str] = frozenset()
    # What every local chassis supports (SB Chassis other_config, :mod:`.chassis_features`): old
    # chassis get ct_label / ct_lb flows.  A Chassis change recomputes (northd node).
    features: ChassisFeatures = ALL_FEATURES
    warn: WarnFn = _no_warn
    # Set only while the load-balancer feature rebuilds a router whose NAT context did not change
    # (``engine.flow_rebuild.rebuild_router_scope``): the load balancers whose per-router flows
    # (``("lb", uuid, router)``) stay in the table as they are, so they are not built again.
    keep_router_lbs: frozenset[str] = frozenset()
    # Set only during a full build (:func:`.build_lflows`): the load balancers' per-router flows
    # are collected there and added load balancer by load balancer at the end of the datapaths.
    router_lb_batch: RouterLbBatch | None = None
    memo: dict[tuple[str, Hashable], Any] = field(default_factory=dict)
    kinds: set[str] = field(default_factory=set)  # the memo's kinds, so forget() is O(kinds)

    def separate_nat_zones(self) -> bool:
        """NAT of a distributed gateway port in separate SNAT and DNAT zones: behaviour
        ``dgp_nat_no_czone`` (25.03) unless NB_Global ``options:use_common_zone=true``, which
        brings back the common zone's flows (``ct_snat_in_czone``, ...; observed)."""
        return self.profile.has("dgp_nat_no_czone") and not self.use_common_zone

    def cached(self, kind: str, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``(kind, key)`` until :meth:`forget` (key)."""
        k = (kind, key)
        try:
            value: T = self.memo[k]
        except KeyError:
            value = self.memo[k] = compute()
            self.kinds.add(kind)
        return value

    def remember(self, kind: str, key: str, value: Any) -> None:
        """Memoise ``value`` under ``(kind, key)`` (worked out otherwise than by its ``compute``)."""
        self.memo[(kind, key)] = value
        self.kinds.add(kind)

    def forget(self, key: str, keep: frozenset[str] = frozenset()) -> None:
        """Drop every memoised value derived from the entity ``key`` (but those of kinds ``keep``)."""
        for kind in self.kinds:
            if kind not in keep:
                self.memo.pop((kind, key), None)


def _truthy(value: Any) -> bool:
    return str(value).lower() == "true"


def _parse_u32(text: str) -> int:
    """An unsigned 32-bit decimal number as the reference reads these options (observed: leading
    blanks and ``+`` taken, anything after the digits, a sign or a larger value is not); 0 when
    it does not parse."""
    t = text.lstrip(" \t\n\v\f\r")
    if t.startswith("+"):
        t = t[1:]
    if not t.isascii() or not t.isdigit():
        return 0
    value = int(t)
    return value if value < 1 << 32 else 0


def debug_drop_action(options: Mapping[str, str], apps: Mapping[str, int]) -> str | None:
    """``man ovn-nb`` NB_Global ``options:debug_drop_collector_set`` (a 32-bit number: every ``drop;``
    becomes a ``sample`` to that collector set) and ``debug_drop_domain_id`` (8 bits, the
    observation domain; from 25.03, NB Sampling_App ``drop`` in ``apps`` overrides it), observed:
    the collector set unparsable or 0 turns it off, a domain id that does not parse is 0 and one
    over 254 turns it off (not with a Sampling_App); the collector set is written as a signed
    32-bit number.  None: no debug drop sampling."""
    collector = _parse_u32(options.get("debug_drop_collector_set", ""))
    if not collector:
        return None
    domain = apps.get("drop")
    if domain is None:
        domain = _parse_u32(options.get("debug_drop_domain_id", ""))
        if domain > 254:
            return None
    signed = collector - (1 << 32) if collector >= 1 << 31 else collector
    return f"sample(probability=65535,collector_set={signed},obs_domain={domain},obs_point=$cookie); /* drop */"


def bfd_ports_of(nb: Any) -> frozenset[str]:
    """The ports named by NB BFD rows (``lr_in_ip_input`` / ``lr_in_ip_routing`` BFD flows, :mod:`.lr_bfd`)."""
    return frozenset(str(r.logical_port) for r in nb.rows("BFD").values())


def flow_ctx_from_nb(
    nd: Northd,
    nb: Any,
    *,
    mac_prefix: str = "",
    svc_monitor_mac: str = "",
    warn: WarnFn = _no_warn,
    sb: Any = None,
    pb_index: Any = None,
    profile: FlowProfile = DEFAULT_PROFILE,
    feature_latch: FeatureLatch | None = None,
) -> FlowCtx:
    """A :class:`FlowCtx` with the NB-wide inputs read from ``nb`` (anything with ``rows(table)``)
    and the Service_Monitor statuses read from ``sb`` (None: none is down; ``pb_index``: an SB
    ``Port_Binding`` RowIndex by name, to read ``up``; ``profile``: the served release's flow profile)."""
    default_acl_drop = False
    ignore_lsp_down = True
    controller_event = False
    ct_translation = False
    common_zone = False
    options: Mapping[str, str] = {}
    for row in nb.rows("NB_Global").values():
        ct_translation = profile.has("acl_ct_translation") and _truthy(row.options.get("acl_ct_translation", "false"))
        controller_event = _truthy(row.options.get("controller_event", "false"))
        default_acl_drop = _truthy(row.options.get("default_acl_drop", "false"))
        ignore_lsp_down = row.options.get("ignore_lsp_down", "true").lower() != "false"
        common_zone = _truthy(row.options.get("use_common_zone", "false"))
        options = row.options
        break
    acl = build_acl_index(nd, nb, sb)
    return FlowCtx(
        nd,
        profile=profile,
        mac_prefix=mac_prefix,
        svc_monitor_mac=svc_monitor_mac,
        default_acl_drop=default_acl_drop,
        acl=acl,
        lbs=build_lb_index(nd),
        ignore_lsp_down=ignore_lsp_down,
        controller_event=controller_event,
        svc_monitor_ips=svc_monitor_src_ips(nb),
        health=build_lb_health(nb, sb, pb_index),
        bfd_ports=bfd_ports_of(nb),
        learned_routes=read_learned_routes(sb, nd) if profile.has("dynamic_routing") else {},
        features=chassis_features(sb, profile, feature_latch),
        warn=warn,
        nf_online=nf_online_pairs(sb) if sb is not None and profile.has("network_function") else frozenset(),
        acl_ct_translation=ct_translation,
        use_common_zone=common_zone,
        debug_drop=debug_drop_action(options, acl.sampling_apps),
    )
