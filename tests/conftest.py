"""Shared fixtures: real ovsdb-servers with the OVN schemas, in a temp dir, stopped by PID.

The servers serve the schemas of one OVN release (``ovn_release``): 23.03 by default, another with
``--ovn-release=25.03`` (or env ``OVN_TEST_RELEASE``) for the whole run, or for one test every
release its marker names, ``@pytest.mark.releases("23.03", "25.03")`` (the test runs once per
release, ids ``[23.03]``/``[25.03]``).  Our daemons inherit the environment: for a release whose
profile is still a draft the fixture sets ``OVN_NORTHD_PY_DRAFT_PROFILES=1`` while the test runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl, sbctl
from ovn_northd_py.lflow.profile import FlowProfile
from ovn_northd_py.release import DEFAULT_RELEASE, DRAFT_ENV, RELEASES, Release


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--northd", choices=("py", "c"), default=None,
        help="northd for tests/dataplane: py (ovn-northd-py, default) or c (/usr/bin/ovn-northd); "
        "env DATAPLANE_NORTHD also works",
    )
    parser.addoption(
        "--release", default=None,
        help="OVN release of tests/dataplane: 23.03 (default: the host's OVS and ovn-controller), 25.03 or "
        "26.03 (servers, C northd, OVS and ovn-controller from that release's Debian chroot, built by "
        "scripts/chroots.sh --with-host; ours serves it with that release's profile); env DATAPLANE_RELEASE",
    )
    parser.addoption(
        "--chassis-release", default=None,
        help="OVN release of the chassis (ovn-controller, OVS) of tests/dataplane when not --release's, "
        "e.g. 23.03 (the host's) under a 25.03 northd; env DATAPLANE_CHASSIS_RELEASE",
    )
    parser.addoption(
        "--ovn-release", choices=tuple(RELEASES), default=None,
        help="the OVN release whose schemas the functional tests' ovsdb-servers serve (default 23.03, "
        "or env OVN_TEST_RELEASE); tests marked releases(...) run once per release they name",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "releases(*names): run the test once per OVN release named (servers of its schemas)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("releases")
    if marker is not None and "ovn_release" in metafunc.fixturenames:
        metafunc.parametrize("ovn_release", [RELEASES[n] for n in marker.args], ids=list(marker.args),
                             indirect=True)


@pytest.fixture
def ovn_release(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Release:
    """The release of the test's servers (and of the profile our daemon must pick for them)."""
    if hasattr(request, "param"):
        release: Release = request.param
    else:
        name = request.config.getoption("--ovn-release") or os.environ.get("OVN_TEST_RELEASE")
        release = RELEASES[name] if name else DEFAULT_RELEASE
    if release.flow_profile is None and release.draft_profile is not None:
        monkeypatch.setenv(DRAFT_ENV, "1")
    return release


@dataclass
class Env:
    workdir: Path
    nb: OvsdbServer
    sb: OvsdbServer
    release: Release = DEFAULT_RELEASE

    @property
    def profile(self) -> FlowProfile:
        """The flow profile our daemon must pick for these servers (a draft one included)."""
        profile = self.release.flow_profile or self.release.draft_profile
        assert profile is not None, f"OVN {self.release.name} has no flow profile"
        return profile

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout)

    def sbctl(self, *args: str, timeout: int = 30) -> str:
        return sbctl(self.sb.remote, *args, timeout=timeout)

    def sync(self, timeout: int = 30) -> None:
        self.nbctl("sync", wait="sb", timeout=timeout)

    def sb_rows(self, table: str) -> list[dict]:
        """All rows of an SB table, as {column: json value} (ovsdb-client dump)."""
        out = subprocess.run(
            ["ovsdb-client", "dump", "--format=json", self.sb.remote, "OVN_Southbound", table],
            check=True, capture_output=True, text=True,
        ).stdout
        doc = json.loads(out)
        tbl = doc[0] if isinstance(doc, list) else doc
        cols = tbl["headings"]
        return [dict(zip(cols, r, strict=True)) for r in tbl["data"]]

    def sb_get(self, table: str, record: str, column: str) -> str:
        return self.sbctl("--bare", f"--columns={column}", "find", table, record).strip()


@pytest.fixture
def env(tmp_path: Path, ovn_release: Release) -> Iterator[Env]:
    nb = OvsdbServer(tmp_path, "nb", ovn_release.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", ovn_release.sb_schema).start()
    try:
        yield Env(tmp_path, nb, sb, ovn_release)
    finally:
        sb.stop()
        nb.stop()


@pytest.fixture
def ours(env: Env) -> Iterator[OurNorthd]:
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
def started() -> Iterator[list[OurNorthd]]:
    """Daemons a test starts itself (append them); stopped by PID at the end, last first."""
    ds: list[OurNorthd] = []
    try:
        yield ds
    finally:
        for d in reversed(ds):
            d.stop()
