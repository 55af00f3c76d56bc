"""Fixtures for parity tests: run an NB builder through the harness, reference vs our daemon.

    from ovn_northd_py.parity.harness import assert_parity, nbctl_commands

    def test_something(parity_run):
        result = parity_run(nbctl_commands(["ls-add", "sw0"], ["lsp-add", "sw0", "p0"]))
        assert_parity(result)

``parity_run(source, tables=None, reference_both=None, settle_timeout=60, after_settle=None)`` takes any harness
NB source: a callable taking the NB remote (``nbctl_commands``, ``workload("mixed", 3, 3, 3)``,
``script(path, ...)``, your own function) or an NB database file (``Path``).

The reference is OVN ``OVN_PARITY_RELEASE`` (default 23.03): the host's ``ovn-northd`` when the host
runs that release, else (or with ``OVN_NORTHD_PY_FROM_CHROOT=1``) the one of its Debian chroot.
Our daemon is ``OVN_PARITY_OURS_CMD`` (a CommandDaemon template) or the default
``python -m ovn_northd_py ...``; tests are skipped while ``ovn_northd_py.__main__`` does not
exist.  ``OVN_PARITY_REFERENCE_BOTH=1`` runs the reference on both sides instead.
Work dirs live under pytest's ``tmp_path`` and are kept there for inspection.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.lflow.profile import FlowProfile
from ovn_northd_py.parity.harness import AfterSettle, NbSource, ParityResult, reference_available, run_parity
from ovn_northd_py.parity.stage_names import parity_profile as _parity_profile
from ovn_northd_py.parity.stage_names import parity_release


def have_our_daemon() -> bool:
    return importlib.util.find_spec("ovn_northd_py.__main__") is not None


@dataclass(slots=True)
class ParityRunner:
    tmp_path: Path
    runs: int = 0

    def __call__(
        self,
        source: NbSource,
        *,
        tables: Collection[str] | None = None,
        reference_both: bool | None = None,
        settle_timeout: float = 60.0,
        after_settle: AfterSettle | None = None,
    ) -> ParityResult:
        both = (
            os.environ.get("OVN_PARITY_REFERENCE_BOTH") == "1" if reference_both is None else reference_both
        )
        ours_cmd = os.environ.get("OVN_PARITY_OURS_CMD")
        release = parity_release().name
        # Missing tools are a failure, not a skip: parity is part of the bar (scripts/setup.sh installs
        # them; scripts/test.sh builds the chroots the host needs).
        if not reference_available(release):
            pytest.fail(f"reference ovn-northd of OVN {release} / OVS tools not installed "
                        "(run scripts/setup.sh, scripts/chroots.sh)")
        if not both and ours_cmd is None and not have_our_daemon():
            pytest.fail("our daemon (python -m ovn_northd_py) is missing")
        self.runs += 1
        return run_parity(
            source,
            ours_cmd=ours_cmd,
            reference_both=both,
            tables=tables,
            workdir=self.tmp_path / f"parity{self.runs}",
            settle_timeout=settle_timeout,
            after_settle=after_settle,
            release=release,
        )


@pytest.fixture
def parity_run(tmp_path: Path) -> ParityRunner:
    """``parity_run(source, tables=..., reference_both=...) -> ParityResult``."""
    return ParityRunner(tmp_path)


@pytest.fixture
def parity_profile() -> FlowProfile:
    """The flow profile of the release under test (its draft profile while it has no other), for
    tests that ask for a behaviour (``parity_profile.has("...")``).  (Stage names: tests written
    with 23.03's use ``ovn_northd_py.parity.stage_names.release_stage_names``.)"""
    return _parity_profile()


# Tests that still show a difference between a profile and its release's reference (a feature not
# ported yet, a reference that crashes on the NB, or one that varies from run to run): ``known_draft_differences.txt``, one ``RELEASE | FILE::TEST[PARAM] | WHY``
# a line.  Run against that release, each is expected to fail (xfail, strict: a test that passes
# must leave the list, so the list only shrinks as the port goes on; a reason "flaky: ..." marks a
# difference that comes and goes, not strict).
KNOWN_DIFFERENCES_FILE = Path(__file__).with_name("known_draft_differences.txt")


def known_draft_differences(release: str) -> dict[str, str]:
    """Test id (``file.py::name[param]``) -> why it differs, for ``release``."""
    out: dict[str, str] = {}
    for line in KNOWN_DIFFERENCES_FILE.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        rel, test, reason = ([f.strip() for f in line.split("|", 2)] + ["", ""])[:3]
        if rel == release:
            out[test] = reason
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    release = parity_release()
    # (A served release too: 25.03 is served with the differences the file lists, each with its
    # reason; the list may only shrink.)
    known = known_draft_differences(release.name)
    for item in items:
        path = Path(str(item.fspath))
        if path.parent != here:
            continue
        test = f"{path.name}::{item.name}"
        reason = known.get(test)
        if reason is not None:
            # ("flaky: ..." -- a difference that comes and goes from run to run: not strict.)
            strict = not reason.startswith("flaky:")
            item.add_marker(pytest.mark.xfail(reason=f"OVN {release.name} known difference: {reason}", strict=strict))


@pytest.fixture
def parity_2503(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., ParityResult]:
    """``parity_2503(builder, **kw)``: a parity run against OVN 25.03's reference (its trixie
    chroot, required), whatever ``OVN_PARITY_RELEASE`` says (tests of 25.03-only NB features)."""
    try:
        chroot_tools("25.03")
    except ToolsUnavailable as e:
        pytest.fail(f"{e} (scripts/test.sh builds it)")
    monkeypatch.delenv("OVN_NORTHD_PY_DRAFT_PROFILES", raising=False)  # (25.03 is served)

    def run(builder: Callable[[str], None], **kw: Any) -> ParityResult:
        return run_parity(builder, release="25.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60, **kw)

    return run
