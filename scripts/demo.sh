#!/usr/bin/env bash
# Set up, then run the daemon on its embedded default: local NB/SB ovsdb-servers in a temp dir,
# a small sample network, our daemon translating it; prints what it wrote and where metrics are.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m ovn_northd_py.devtools.demo "$@"
