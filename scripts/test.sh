#!/usr/bin/env bash
# Set up, then run the test suite (unit, functional against real ovsdb-servers, parity against
# the reference ovn-northd).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
