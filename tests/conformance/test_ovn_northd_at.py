"""OVN's own northd test suite (tests/ovn-northd.at of OVN 23.03.1, every test once: 97 tests)
with ovn-northd-py in place of ovn-northd, through scripts/conformance.sh (which also runs the C
daemon built from the same tag as the baseline).  About 6 minutes once the build is cached
(/var/cache/ovn-northd-py/conformance), 3 more the first time on a machine.

Ours must pass every test the C daemon passes, except those listed in KNOWN_FAILURES with the
reason; a test listed there that passes makes this test fail too (remove it from the list).
``OVN_CONFORMANCE=0`` skips it; without the tarballs (/work/shared/upstream or $UPSTREAM) it is
skipped with that reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = Path(os.environ.get("UPSTREAM", "/work/shared/upstream"))
RELEASE = "23.03"

# Test title (without the " -- ovn-northd -- parallelization=no" suffix) -> why ours fails it.
C_INTERNAL = {
    "Address set incremental processing":
        "asserts the C engine's node name (inc-engine/show-stats sync_to_sb_addr_set recompute) and the "
        "C daemon's jsonrpc debug log text (a 'mutate' Address_Set operation in 'transact' lines); ours "
        "updates address sets incrementally too, with its own node names and log format",
}
NOT_YET: dict[str, str] = {}
KNOWN_FAILURES = {**C_INTERNAL, **NOT_YET}
SUFFIXES = (" -- ovn-northd -- parallelization=no", " -- ovn-northd -- parallelization=yes",
            " -- parallelization=no", " -- parallelization=yes")


def _title(entry: str) -> str:
    title = entry.split(" ", 1)[1]
    for suffix in SUFFIXES:
        if title.endswith(suffix):
            return title.removesuffix(suffix)
    return title


@pytest.mark.skipif(os.environ.get("OVN_CONFORMANCE") == "0", reason="OVN_CONFORMANCE=0")
def test_ovn_northd_at(tmp_path: Path) -> None:
    if not list(UPSTREAM.glob(f"ovn-{RELEASE}.*.tar.xz")):
        pytest.skip(f"no OVN {RELEASE} tarball in {UPSTREAM}")
    out = tmp_path / "conformance"
    r = subprocess.run(["bash", str(REPO / "scripts/conformance.sh"), RELEASE], cwd=REPO, capture_output=True,
                       text=True, timeout=3600, env=dict(os.environ, CONFORMANCE_OUT=str(out)), check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    c = json.loads((out / "c.json").read_text())
    ours = json.loads((out / "ours.json").read_text())
    c_passed = {_title(t) for t in c["passed"]}
    ours_failed = {_title(t) for t in ours["failed"]}
    assert len(c["passed"]) + len(c["failed"]) == 97, "not the 97 tests of ovn-northd.at"
    unexpected = sorted((ours_failed & c_passed) - KNOWN_FAILURES.keys())
    assert not unexpected, f"ours fails what the C daemon passes (diffs in {out}/ours-testsuite.log):\n" + \
        "\n".join(unexpected) + "\n" + r.stdout
    fixed = sorted(KNOWN_FAILURES.keys() - ours_failed)
    assert not fixed, "now passing, remove from KNOWN_FAILURES: " + ", ".join(fixed)
