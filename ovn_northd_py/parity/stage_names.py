"""The release a parity test runs against, and the stage names a test written for 23.03 means there.

The parity tests (``tests/parity``) run against OVN ``OVN_PARITY_RELEASE`` (default 23.03).  Many
name the stages whose flows they check; later releases split or merged some of 23.03's stages
(read from the 25.03 reference's output: ``ls_*_acl`` / ``ls_in_acl_after_lb`` became evaluation,
sampling and action stages, ``ls_*_qos_mark`` / ``ls_*_qos_meter`` one ``ls_*_qos``).
:func:`release_stage_names` turns a test's 23.03 names into the stages that do the same work in
the release under test, so the test checks as much there as in 23.03.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..lflow.profile import FlowProfile
from ..release import DEFAULT_RELEASE, Release, get_release

PARITY_RELEASE_ENV = "OVN_PARITY_RELEASE"

# A 23.03 stage a later release lacks -> the stages that took its flows there.
SUCCESSORS: dict[str, tuple[str, ...]] = {
    "ls_in_acl": ("ls_in_acl_eval", "ls_in_acl_sample", "ls_in_acl_action"),
    "ls_out_acl": ("ls_out_acl_eval", "ls_out_acl_sample", "ls_out_acl_action"),
    "ls_in_acl_after_lb": ("ls_in_acl_after_lb_eval", "ls_in_acl_after_lb_sample", "ls_in_acl_after_lb_action"),
    "ls_in_qos_mark": ("ls_in_qos",),
    "ls_in_qos_meter": ("ls_in_qos",),
    "ls_out_qos_mark": ("ls_out_qos",),
    "ls_out_qos_meter": ("ls_out_qos",),
}


def parity_release() -> Release:
    """The OVN release of the parity tests' reference (``OVN_PARITY_RELEASE``, default 23.03; set
    but empty means the default too, as for a shell variable exported empty)."""
    return get_release(os.environ.get(PARITY_RELEASE_ENV) or DEFAULT_RELEASE.name)


def parity_profile() -> FlowProfile:
    """The flow profile of :func:`parity_release` (its draft profile while it has no other)."""
    release = parity_release()
    profile = release.flow_profile or release.draft_profile
    if profile is None:
        raise ValueError(f"ovn-northd-py has no flow profile (not even a draft) for OVN {release.name}")
    return profile


def release_stage_names(names: Iterable[str], profile: FlowProfile | None = None) -> tuple[str, ...]:
    """``names`` (23.03 stage names) as the stages of ``profile`` (default :func:`parity_profile`):
    a stage the release has stays, one it lacks becomes its successors (once each, in order).
    ValueError for a stage the release lacks and that has no known successor."""
    profile = profile or parity_profile()
    out: list[str] = []
    for name in names:
        if profile.stage_named(name) is not None:
            found: tuple[str, ...] = (name,)
        elif name in SUCCESSORS:
            found = SUCCESSORS[name]
        else:
            raise ValueError(f"stage {name} is not in {profile!r} and has no known successor")
        out += [s for s in found if s not in out]
    return tuple(out)
