"""The release registry: shipped schemas agree with it, and the profile choice from schema versions."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03, OVN_26_03, StageNotInProfile
from ovn_northd_py.lflow.stages import LS_IN_ACL, LS_IN_L2_LKUP
from ovn_northd_py.ovsdb.schema_check import SchemaMismatch
from ovn_northd_py.release import (
    DEFAULT_RELEASE,
    DRAFT_ENV,
    RELEASES,
    Release,
    profiles,
    release_of,
    select_release,
)
from ovn_northd_py.sync.lflow_desired import fkey


@pytest.mark.parametrize("name", list(RELEASES))
def test_shipped_schemas_have_the_registered_versions(name):
    r = RELEASES[name]
    nb, sb = json.loads(r.nb_schema.read_text()), json.loads(r.sb_schema.read_text())
    assert (nb["name"], nb["version"]) == ("OVN_Northbound", r.nb_version)
    assert (sb["name"], sb["version"]) == ("OVN_Southbound", r.sb_version)


def test_23_03_25_03_and_26_03_have_a_profile():
    assert [r.name for r in profiles()] == ["23.03", "25.03", "26.03"]
    assert RELEASES["25.03"].profile is OVN_25_03 and not OVN_25_03.draft
    assert RELEASES["26.03"].profile is OVN_26_03 and not OVN_26_03.draft
    assert DEFAULT_RELEASE.name == "23.03"
    assert {r.name: r.suite for r in RELEASES.values()} == {"23.03": "bookworm", "25.03": "trixie", "26.03": "sid"}


def test_23_03_versions_and_newer_patches_select_23_03():
    assert select_release("7.0.0", "20.27.0").name == "23.03"
    assert select_release("7.0.4", "20.27.3").name == "23.03"


def test_26_03_versions_and_newer_patches_select_26_03():
    assert select_release("7.18.0", "21.8.0").profile is OVN_26_03
    assert select_release("7.18.1", "21.8.2").name == "26.03"


def test_25_03_versions_and_newer_patches_select_25_03():
    assert select_release("7.11.0", "20.41.0").profile is OVN_25_03
    assert select_release("7.11.2", "20.41.1").name == "25.03"


@pytest.mark.parametrize(
    ("nb", "sb", "known"),
    [
        ("8.0.0", "22.0.0", "no OVN release we know"),  # a release after 26.03
        ("7.3.0", "20.33.0", "no OVN release we know"),  # e.g. 24.03: a minor bump is another release
        ("7.0.0", "20.28.0", "no OVN release we know"),
    ],
)
def test_other_versions_are_refused_naming_them_and_our_profiles(nb, sb, known):
    with pytest.raises(SchemaMismatch) as e:
        select_release(nb, sb)
    msg = str(e.value)
    for needle in (nb, sb, known, "OVN 23.03 (NB 7.0.0, SB 20.27.0)", "OVN 25.03 (NB 7.11.0, SB 20.41.0)",
                   "OVN 26.03 (NB 7.18.0, SB 21.8.0)", "refusing"):
        assert needle in msg


def test_override_needs_a_profile_and_servable_schemas():
    assert select_release("7.11.0", "20.41.0", override="23.03").name == "23.03"
    assert select_release("7.11.0", "20.41.0", override="25.03").name == "25.03"
    assert select_release("7.18.0", "21.8.0", override="26.03").profile is OVN_26_03
    with pytest.raises(SchemaMismatch, match=r"needs OVN_Northbound >= 7\.18\.0"):
        select_release("7.11.0", "20.41.0", override="26.03")
    with pytest.raises(SchemaMismatch, match="different major"):
        select_release("7.18.0", "21.8.0", override="23.03")
    with pytest.raises(SchemaMismatch, match=r"needs OVN_Southbound >= 20\.27\.0"):
        select_release("7.0.0", "20.26.0", override="23.03")
    with pytest.raises(SchemaMismatch, match=r"needs OVN_Southbound >= 20\.41\.0"):
        select_release("7.11.0", "20.27.0", override="25.03")
    with pytest.raises(SchemaMismatch, match="unknown OVN release"):
        select_release("7.0.0", "20.27.0", override="22.03")


def test_release_of_finds_known_releases_with_or_without_profile():
    assert release_of("7.11.2", "20.41.0") is RELEASES["25.03"]
    assert release_of("7.18.0", "21.8.1") is RELEASES["26.03"]
    assert release_of("7.1.0", "20.27.0") is None


def _with_future_draft(monkeypatch) -> None:
    """A release after 26.03 (next schema majors) whose profile is a draft (26.03's, renamed)."""
    draft = dataclasses.replace(OVN_26_03, name="99.03", draft=True)
    future = Release("99.03", "none", "8.0.0", "22.0.0", None, RELEASES["26.03"].schema_dir, draft_profile=draft)
    monkeypatch.setitem(RELEASES, "99.03", future)


def test_a_draft_profile_is_not_served_by_default(monkeypatch):
    _with_future_draft(monkeypatch)
    monkeypatch.delenv(DRAFT_ENV, raising=False)
    with pytest.raises(SchemaMismatch, match=r"OVN 99\.03"):
        select_release("8.0.0", "22.0.0")
    with pytest.raises(SchemaMismatch, match=r"no flow profile for OVN 99\.03"):
        select_release("8.0.0", "22.0.0", override="99.03")


def test_the_developer_switch_serves_a_draft_profile(monkeypatch):
    _with_future_draft(monkeypatch)
    monkeypatch.setenv(DRAFT_ENV, "1")
    r = select_release("8.0.0", "22.0.0")
    assert r.name == "99.03" and r.profile.draft
    assert select_release("7.18.0", "21.8.0").profile is OVN_26_03  # (served either way)


def test_a_draft_profile_drops_flows_of_stages_it_lacks():
    key = ("x", 10, "1", "next;", None)
    draft = dataclasses.replace(OVN_25_03, draft=True)
    assert fkey(LS_IN_ACL, key, draft) is None
    assert fkey(LS_IN_L2_LKUP, key, draft) == ("ls_in_l2_lkup", "ingress", 28, 10, "1", "next;", "")
    with pytest.raises(StageNotInProfile):
        fkey(LS_IN_ACL, key, OVN_25_03)  # a served profile refuses them
    assert fkey(LS_IN_ACL, key, OVN_23_03) is not None


def test_sb_tables_and_columns_are_monitored_only_where_the_release_has_them(tmp_path) -> None:
    from ovn_northd_py.daemon import SB_TABLES
    from ovn_northd_py.ovsdb.connection import DbConnection

    def monitored(release: str) -> dict[str, set[str]]:
        conn = DbConnection("sb", f"unix:{tmp_path}/none.sock", RELEASES[release].sb_schema, SB_TABLES)
        return {name: set(t.columns) for name, t in conn.idl.tables.items()}

    old, new = monitored("23.03"), monitored("25.03")
    assert "ACL_ID" not in old and "ACL_ID" in new
    assert "timestamp" not in old["FDB"] and "timestamp" in new["FDB"]
    assert {"dp_key", "port_key"} <= old["FDB"]
