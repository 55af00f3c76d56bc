#!/usr/bin/env bash
# Set up, then run the test suite (unit, functional against real ovsdb-servers, parity against
# the reference ovn-northd).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The reference of other OVN releases runs from Debian chroots, built once per machine and cached
# (/var/cache/ovn-northd-py/chroots): trixie (25.03) and sid (26.03), each with its ovn-host and
# openvswitch-switch for the dataplane suite, and bookworm (23.03) unless the host is Debian 12.
bash scripts/chroots.sh --for-tests
# Static checks first: the package and its tests are kept ruff-clean, the package mypy-clean.
.venv/bin/ruff check ovn_northd_py tests
.venv/bin/mypy ovn_northd_py
rc=0
.venv/bin/python -m pytest -q "$@" || rc=$?
# Only for a whole run (options alone as arguments):
only_options=1
for a in "$@"; do [[ "$a" == -* ]] || only_options=0; done
if [ "$only_options" = 1 ]; then
  # The dataplane suite again with 25.03's own ovn-controller and OVS (trixie chroot) under our
  # daemon's 25.03 profile, and with 26.03's (sid chroot) under its 26.03 profile (about a minute
  # and a half each).
  .venv/bin/python -m pytest -q "$@" tests/dataplane --release 25.03 || rc=$?
  .venv/bin/python -m pytest -q "$@" tests/dataplane --release 26.03 || rc=$?
  # The parity suite once more against OVN 25.03's reference (Debian trixie's ovn-northd) and once
  # against 26.03's (sid's; about 7 minutes each): every test passes there but those
  # tests/parity/known_draft_differences.txt lists for the release, which must still fail (xfail,
  # strict: one that starts passing must leave the list).  The tests that pick their releases
  # themselves (harness self-test, releases) ran above already.  OVN_PARITY_DRAFTS=0 skips them.
  if [ "${OVN_PARITY_DRAFTS:-1}" != 0 ]; then
    for release in 25.03 26.03; do
      OVN_PARITY_RELEASE=$release .venv/bin/python -m pytest -q "$@" tests/parity \
        --ignore=tests/parity/test_harness_selftest.py --ignore=tests/parity/test_releases.py || rc=$?
    done
  fi
fi
exit $rc
