"""The OVN releases we know, and which one the connected databases belong to.

A release is named like OVN's (``23.03``) and identified on the wire by the versions of its NB and
SB schemas.  Each has a Debian suite whose ``ovn-central`` is that release (its reference
``ovn-northd`` runs from a chroot of that suite: ``scripts/chroots.sh``) and a copy of its two
schemas in ``ovn_northd_py/schemas``.  Only releases with a ``flow_profile``
(:class:`~ovn_northd_py.lflow.profile.FlowProfile`: stage table, registers, behaviours) can be
served: the flows a release's ovn-controller expects differ from release to release, so the
daemon refuses databases of any other release rather than write flows of the wrong one.  The
daemon hands the chosen release's profile to the flow builders (``FlowCtx.profile``) and to the
flow writer, which is where table ids come from.

The profile is chosen from the versions the servers report (:func:`select_release`): the major
and minor versions of both schemas must be those of a release with a flow profile (a newer
patch version is fine).  ``--ovn-release NAME`` names the profile instead; the servers must then
still be able to serve a client of that release's schemas (same major, not older).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from .lflow.profile import OVN_23_03, OVN_25_03, OVN_26_03, FlowProfile
from .ovsdb.schema_check import SchemaMismatch, SchemaVersion, check_compatible

SCHEMA_ROOT = Path(__file__).resolve().parent / "schemas"


@dataclass(frozen=True, slots=True)
class Release:
    name: str  # "23.03"
    suite: str  # the Debian suite whose ovn-central is this release
    nb_version: str  # OVN_Northbound schema version
    sb_version: str  # OVN_Southbound schema version
    flow_profile: FlowProfile | None  # the release's flows (None: the daemon cannot serve it)
    schema_dir: Path
    # A profile under construction (``FlowProfile.draft``): never served, unless a developer
    # measuring it sets OVN_NORTHD_PY_DRAFT_PROFILES=1 (:func:`select_release`), e.g. to run the
    # parity harness (26.03 had one while it was ported; none has one today).
    draft_profile: FlowProfile | None = None

    @property
    def profile(self) -> FlowProfile:
        """The flow profile (a release without one is never selected: :func:`select_release`)."""
        if self.flow_profile is None:
            raise ValueError(f"ovn-northd-py has no flow profile for OVN {self.name}")
        return self.flow_profile

    @property
    def nb_schema(self) -> Path:
        return self.schema_dir / "ovn-nb.ovsschema"

    @property
    def sb_schema(self) -> Path:
        return self.schema_dir / "ovn-sb.ovsschema"

    def matches(self, nb: str, sb: str) -> bool:
        """The servers' schema versions are this release's (same major.minor, patch not older)."""
        for ours, theirs in ((self.nb_version, nb), (self.sb_version, sb)):
            a, b = SchemaVersion.parse(ours), SchemaVersion.parse(theirs)
            if (a.major, a.minor) != (b.major, b.minor) or b.patch < a.patch:
                return False
        return True

    def describe(self) -> str:
        return f"OVN {self.name} (NB {self.nb_version}, SB {self.sb_version})"


# 23.03's schemas stay at the top of schemas/ (where other modules and tools expect them).
RELEASES: dict[str, Release] = {
    r.name: r
    for r in (
        Release("23.03", "bookworm", "7.0.0", "20.27.0", OVN_23_03, SCHEMA_ROOT),
        Release("25.03", "trixie", "7.11.0", "20.41.0", OVN_25_03, SCHEMA_ROOT / "25.03"),
        Release("26.03", "sid", "7.18.0", "21.8.0", OVN_26_03, SCHEMA_ROOT / "26.03"),
    )
}
DEFAULT_RELEASE = RELEASES["23.03"]


def get_release(name: str) -> Release:
    try:
        return RELEASES[name]
    except KeyError:
        raise ValueError(f"unknown OVN release {name!r} (known: {', '.join(RELEASES)})") from None


def profiles() -> list[Release]:
    """The releases the daemon can serve."""
    return [r for r in RELEASES.values() if r.flow_profile is not None]


def release_of(nb: str, sb: str) -> Release | None:
    """The known release (profile or not) whose schemas the servers have, if any."""
    return next((r for r in RELEASES.values() if r.matches(nb, sb)), None)


DRAFT_ENV = "OVN_NORTHD_PY_DRAFT_PROFILES"


def _with_drafts() -> dict[str, Release]:
    """The releases, with draft profiles in place when the developer switch is on."""
    if os.environ.get(DRAFT_ENV) != "1":
        return RELEASES
    return {n: (dataclasses.replace(r, flow_profile=r.draft_profile) if r.flow_profile is None
                and r.draft_profile is not None else r) for n, r in RELEASES.items()}


def select_release(nb: str, sb: str, override: str | None = None) -> Release:
    """The release profile to serve NB schema version ``nb`` and SB ``sb`` with.

    Raises :class:`SchemaMismatch` (the daemon exits with status 2) with a message naming the
    servers' versions and ours when no profile fits, or when ``override`` names a release without
    a profile or one whose schemas the servers cannot serve.
    """
    releases = _with_drafts()
    if override is not None:
        try:
            chosen = releases[get_release(override).name]
        except ValueError as e:
            raise SchemaMismatch(f"--ovn-release: {e}") from None
        if chosen.flow_profile is None:
            raise SchemaMismatch(
                f"--ovn-release {chosen.name}: ovn-northd-py has no flow profile for OVN {chosen.name} "
                f"(profiles: {_profile_list()})"
            )
        check_compatible("OVN_Northbound", chosen.nb_version, nb)
        check_compatible("OVN_Southbound", chosen.sb_version, sb)
        return chosen
    for r in releases.values():
        if r.flow_profile is not None and r.matches(nb, sb):
            return r
    known = release_of(nb, sb)
    what = f"those of OVN {known.name}" if known is not None else "of no OVN release we know"
    raise SchemaMismatch(
        f"the databases have NB schema {nb} and SB schema {sb} ({what}), but ovn-northd-py has flow "
        f"profiles only for {_profile_list()}: refusing to write flows for another release"
    )


def _profile_list() -> str:
    return ", ".join(r.describe() for r in profiles())


def version_text() -> str:
    """What ``--version`` adds under the program's version."""
    lines = [f"OVN release profiles: {_profile_list()}"]
    others = [r.describe() for r in RELEASES.values() if r.flow_profile is None]
    if others:
        lines.append(f"known, no profile yet (refused): {', '.join(others)}")
    lines.append("the profile is chosen from the connected NB/SB schema versions (--ovn-release overrides)")
    return "\n".join(lines)
