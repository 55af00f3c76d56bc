"""What every chassis can do: SB ``Chassis`` ``other_config`` feature flags.

The C daemon (23.03, ``build_chassis_features``) writes some flows in an older form unless every
chassis of the local availability zone (``other_config:is-remote`` not true) announces the feature
(``ovn-controller`` sets these keys to ``true`` in ``Chassis.other_config``):

- ``ct-no-masked-label`` (``ct_no_masked_label``): the conntrack flags (``blocked``, ``natted``,
  ``force_snat``, ``skip_snat``, ``ecmp_reply_port``) live in ``ct_mark`` and load balancing uses
  ``ct_lb_mark``; without it ``ct_label.<flag>`` and ``ct_lb`` (and SB_Global
  ``options:lb_hairpin_use_ct_mark=false``).
- ``ovn-ct-lb-related`` (``ct_lb_related``): related traffic is NATed (``ct_commit_nat``) in the
  switch ACL stages and the router's ``lr_in_dnat``, and the router's load-balancing actions carry
  ``skip_snat`` / ``force_snat``; without it they do not.
- ``mac-binding-timestamp`` (``mac_binding_timestamp``): MAC_Binding aging may run.

Which features a release's northd asks the chassis for is the release's (its profile's
``chassis_features``); a feature it does not ask for is on.  25.03's (observed with a 23.03
ovn-controller, which announces none of them, under Debian 13's ovn-northd 25.03; ct-no-masked-label
and ovn-ct-lb-related are no longer asked, their flows are always the new ones: the profile's
``ct_features_assumed`` behaviour):

- ``ls-dpg-column`` (``ls_dpg_column``): SB Load_Balancer names its switches in
  ``ls_datapath_group``; without it in the older ``datapath_group`` (which an older ovn-controller
  reads for its load-balancer hairpin flows).
- ``ct-commit-nat-v2`` (``ct_commit_nat_v2``): the ``lr_out_post_snat`` 100 flow committing ICMP
  errors of DNATed connections (``ct_commit_nat(snat);``) exists.
- ``ct-commit-to-zone`` and ``ct-next-zone`` (``ct_commit_to_zone``, ``ct_next_zone``): the
  connections of a SNAT rule on a distributed gateway port are tracked in the SNAT zone from both
  sides (``lr_out_post_undnat`` 70 ``ct_next(snat);``, the reverse ``ct_snat;`` and
  ``lr_out_post_snat`` ``ct_commit_to_zone(snat);``); without them only the SNAT flow.
- ``ovn-sample-with-registers`` (``sample_with_reg``): ACL samples of one collector are taken by
  shared flows matching registers; ``ct-label-flush`` (``ct_label_flush``): persist-established
  ACLs commit their id (:mod:`.acl_rules`).
- ``fdb-timestamp`` (``fdb_timestamp``): FDB aging may run.

26.03 asks for 25.03's and (observed with a 23.03 ovn-controller under Debian sid's ovn-northd 26.03):

- ``ct-state-save`` (``ct_state_save``): a gateway port's ``lr_in_chk_pkt_len`` flows save the
  conntrack state (``reg4[0..7] = ct_state_save();``) which ``lr_in_larger_pkts`` 160 tests
  (``reg4[5] && reg4[3] && reg4[7]``); without it they go on with ``next;`` and 160 matches
  ``ct.trk && ct.rpl && ct.dnat`` (as 25.03's).

A feature 25.03 turned off stays off until an existing chassis' ``other_config`` is updated, which
computes them afresh (behaviour ``chassis_features_latched``, observed: the older chassis deleted,
``inc-engine/recompute``, a new chassis announcing the feature change nothing; ``set chassis X
other_config:...`` on any chassis, or a restart, turn it back on; a 25.03 ovn-controller
announces ``ct-label-flush`` and ``ovn-sample-with-registers`` in an update once it has probed
OVS; 23.03 turns features back on at once): the engine's lflow node keeps a :class:`FeatureLatch`.

No chassis at all: every feature is on.  ``ovn-appctl -t ovn-northd debug/chassis-features-list``
prints them (:func:`features_text`; 25.03's lists only ``mac_binding_timestamp``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile


@dataclass(frozen=True, slots=True)
class ChassisFeatures:
    ct_no_masked_label: bool = True
    ct_lb_related: bool = True
    mac_binding_timestamp: bool = True
    # asked by 25.03
    fdb_timestamp: bool = True
    ls_dpg_column: bool = True
    ct_commit_nat_v2: bool = True
    ct_commit_to_zone: bool = True
    sample_with_reg: bool = True
    ct_next_zone: bool = True
    ct_label_flush: bool = True
    # asked by 26.03
    ct_state_save: bool = True
    # (25.03: ``ct-commit-to-zone`` and ``ct-next-zone`` are both needed by the SNAT-zone tracking
    # of replies on a DGP and by ``options:ct-commit-all`` (:mod:`.lr_nat`); ``ct-commit-nat-v2``
    # by the ct_commit_nat(snat) of ICMP errors (lr_delivery.py).)

    def ct(self, flag: str) -> str:
        """The conntrack field holding ``flag``: ``ct_mark.FLAG`` or (old chassis) ``ct_label.FLAG``."""
        return f"{'ct_mark' if self.ct_no_masked_label else 'ct_label'}.{flag}"

    @property
    def ct_lb(self) -> str:
        """The load-balancing action: ``ct_lb_mark`` or (old chassis) ``ct_lb``."""
        return "ct_lb_mark" if self.ct_no_masked_label else "ct_lb"

    @property
    def snat_zone_tracking(self) -> bool:
        """ct_commit_to_zone and ct_next_zone: a DGP's SNAT connections tracked from both sides."""
        return self.ct_commit_to_zone and self.ct_next_zone


ALL_FEATURES = ChassisFeatures()

# The SB Chassis other_config key announcing each feature (a chassis with every feature, e.g. a
# benchmark's, sets them all to true).
OTHER_CONFIG_KEYS: Mapping[str, str] = MappingProxyType({
    "ct_no_masked_label": "ct-no-masked-label", "ct_lb_related": "ovn-ct-lb-related",
    "mac_binding_timestamp": "mac-binding-timestamp", "fdb_timestamp": "fdb-timestamp",
    "ls_dpg_column": "ls-dpg-column", "ct_commit_nat_v2": "ct-commit-nat-v2",
    "ct_commit_to_zone": "ct-commit-to-zone", "sample_with_reg": "ovn-sample-with-registers",
    "ct_next_zone": "ct-next-zone", "ct_label_flush": "ct-label-flush", "ct_state_save": "ct-state-save",
})


def _true(smap: Any, key: str) -> bool:
    return str(smap.get(key, "false")).lower() == "true"


@dataclass(slots=True)
class FeatureLatch:
    """The features found off since the last fresh evaluation (a release with
    ``chassis_features_latched``): the daemon's start, or an update of a chassis' other_config."""

    off: set[str] = field(default_factory=set)

    def reevaluate(self) -> None:
        self.off.clear()


def chassis_features(sb: Any, profile: FlowProfile = DEFAULT_PROFILE, latch: FeatureLatch | None = None) -> ChassisFeatures:
    """The features of SB ``sb`` (anything with ``rows(table)``; None: all on) that the release of
    ``profile`` asks for: one is on when every local chassis (not ``other_config:is-remote=true``)
    has its key set to ``true``; those the release does not ask for are on.  With ``latch`` and a
    release whose features latch, one found off once stays off (``latch`` records it)."""
    if sb is None:
        return ALL_FEATURES
    asked = {a: OTHER_CONFIG_KEYS[a] for a in profile.chassis_features}
    on = dict.fromkeys(OTHER_CONFIG_KEYS, True)
    for ch in sb.rows("Chassis").values():
        oc = ch.other_config
        if _true(oc, "is-remote"):
            continue
        for attr, key in asked.items():
            if not _true(oc, key):
                on[attr] = False
    if latch is not None and profile.has("chassis_features_latched"):
        latch.off.update(a for a, v in on.items() if not v)
        on.update(dict.fromkeys(latch.off, False))
    return ChassisFeatures(**on)


def features_text(f: ChassisFeatures, profile: FlowProfile = DEFAULT_PROFILE) -> str:
    """``debug/chassis-features-list``'s reply, as the C daemon of the profile's release
    (``name:`` padded to 23 columns, then true/false; behaviour ``chassis_features_list_unpadded``,
    26.03: ``name: true``, every feature it asks for listed)."""
    width = 0 if profile.has("chassis_features_list_unpadded") else 23
    return "".join(f"{name + ':':<{width}}{' ' if not width else ''}{str(getattr(f, name)).lower()}\n"
                   for name in profile.chassis_features_listed)
