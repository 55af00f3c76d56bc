#!/usr/bin/env bash
# Set up, then run the test suite (unit, functional against real ovsdb-servers, parity against
# the reference ovn-northd).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The reference of other OVN releases runs from Debian chroots, built once per machine and cached
# (/var/cache/ovn-northd-py/chroots): trixie (25.03, with its ovn-host and openvswitch-switch for the
# dataplane suite), and bookworm (23.03) unless the host is Debian 12.
bash scripts/chroots.sh --for-tests
# Static checks first: the package is kept ruff- and mypy-clean.
.venv/bin/ruff check ovn_northd_py
.venv/bin/mypy ovn_northd_py
.venv/bin/python -m pytest -q "$@"
# The whole suite (no arguments): the dataplane suite again with 25.03's own ovn-controller and OVS
# (trixie chroot) under our daemon's 25.03 profile (about a minute).
if [ $# -eq 0 ]; then
  exec .venv/bin/python -m pytest -q tests/dataplane --release 25.03
fi
