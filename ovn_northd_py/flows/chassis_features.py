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

No chassis at all: every feature is on.  ``ovn-appctl -t ovn-northd debug/chassis-features-list``
prints them (:func:`features_text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile


@dataclass(frozen=True, slots=True)
class ChassisFeatures:
    ct_no_masked_label: bool = True
    ct_lb_related: bool = True
    mac_binding_timestamp: bool = True
    # 25.03 (read by 25.03's flows only): ``ovn-sample-with-registers`` -- ACL samples of one
    # collector are taken by shared flows matching registers; ``ct-label-flush`` -- persist-established
    # ACLs commit their id.
    sample_with_reg: bool = True
    ct_label_flush: bool = True
    # 25.03: ``ct-commit-to-zone`` and ``ct-next-zone`` -- both needed by the SNAT-zone tracking of
    # replies on a DGP and by ``options:ct-commit-all`` (:mod:`.lr_nat`).
    ct_commit_to_zone: bool = True
    ct_next_zone: bool = True
    # 25.03: ``ct-commit-nat-v2`` -- ct_commit_nat(snat) of ICMP errors (lr_delivery.py).
    ct_commit_nat_v2: bool = True

    def ct(self, flag: str) -> str:
        """The conntrack field holding ``flag``: ``ct_mark.FLAG`` or (old chassis) ``ct_label.FLAG``."""
        return f"{'ct_mark' if self.ct_no_masked_label else 'ct_label'}.{flag}"

    @property
    def ct_lb(self) -> str:
        """The load-balancing action: ``ct_lb_mark`` or (old chassis) ``ct_lb``."""
        return "ct_lb_mark" if self.ct_no_masked_label else "ct_lb"


ALL_FEATURES = ChassisFeatures()

_KEYS: Mapping[str, str] = MappingProxyType({"ct_no_masked_label": "ct-no-masked-label", "ct_lb_related": "ovn-ct-lb-related",
         "mac_binding_timestamp": "mac-binding-timestamp",
         "sample_with_reg": "ovn-sample-with-registers", "ct_label_flush": "ct-label-flush",
         "ct_commit_to_zone": "ct-commit-to-zone", "ct_next_zone": "ct-next-zone",
         "ct_commit_nat_v2": "ct-commit-nat-v2"})


def _true(smap: Any, key: str) -> bool:
    return str(smap.get(key, "false")).lower() == "true"


def chassis_features(sb: Any, profile: FlowProfile = DEFAULT_PROFILE) -> ChassisFeatures:
    """The features of SB ``sb`` (anything with ``rows(table)``; None: all on): a feature is on when
    every local chassis (not ``other_config:is-remote=true``) has its key set to ``true``.  Behaviour
    ``ct_features_assumed`` (25.03): ``ct-no-masked-label`` and ``ovn-ct-lb-related`` are no longer
    read (always on)."""
    if sb is None:
        return ALL_FEATURES
    if profile.has("ct_features_assumed"):
        return replace(_chassis_features(sb), ct_no_masked_label=True, ct_lb_related=True)
    return _chassis_features(sb)


def _chassis_features(sb: Any) -> ChassisFeatures:
    on = dict.fromkeys(_KEYS, True)
    for ch in sb.rows("Chassis").values():
        oc = ch.other_config
        if _true(oc, "is-remote"):
            continue
        for attr, key in _KEYS.items():
            if not _true(oc, key):
                on[attr] = False
    return ChassisFeatures(**on)


def features_text(f: ChassisFeatures, profile: FlowProfile = DEFAULT_PROFILE) -> str:
    """``debug/chassis-features-list``'s reply, as the C daemon's (25.03's lists only
    mac_binding_timestamp)."""
    if profile.has("ct_features_assumed"):
        return f"mac_binding_timestamp: {str(f.mac_binding_timestamp).lower()}\n"
    return (f"ct_no_masked_label:    {str(f.ct_no_masked_label).lower()}\n"
            f"ct_lb_related:         {str(f.ct_lb_related).lower()}\n"
            f"mac_binding_timestamp: {str(f.mac_binding_timestamp).lower()}\n")
