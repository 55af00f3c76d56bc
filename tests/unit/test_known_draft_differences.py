"""tests/parity/known_draft_differences.txt names parity tests that exist, for releases with a
profile (served or draft), each with a reason (a stale line would silently stop marking anything)."""

from __future__ import annotations

import re
from pathlib import Path

from ovn_northd_py.release import RELEASES

PARITY = Path(__file__).resolve().parents[1] / "parity"


def test_every_known_difference_names_an_existing_test_of_a_release_with_a_profile() -> None:
    lines = [ln for ln in (PARITY / "known_draft_differences.txt").read_text().splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines
    seen: set[tuple[str, str]] = set()
    for line in lines:
        release, test, reason = (f.strip() for f in line.split("|", 2))
        assert release in RELEASES and (RELEASES[release].flow_profile or RELEASES[release].draft_profile), line
        assert reason, line
        path, _, name = test.partition("::")
        func = name.split("[", 1)[0]
        source = (PARITY / path).read_text()
        assert re.search(rf"^def {re.escape(func)}\(", source, re.M), line
        assert (release, test) not in seen, line
        seen.add((release, test))
