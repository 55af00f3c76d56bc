#!/usr/bin/env bash
# Set up, then run the test suite (unit, functional against real ovsdb-servers, parity against
# the reference ovn-northd).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Static checks first: the package is kept ruff- and mypy-clean.
.venv/bin/ruff check ovn_northd_py
.venv/bin/mypy ovn_northd_py
exec .venv/bin/python -m pytest -q "$@"
