"""25.03's switch and port options of the destination lookup and the ARP/ND responder
(``force_fdb_lookup``, ``pkt_clone_type``, ``disable_arp_nd_rsp``, ``broadcast-arps-to-all-routers``;
parity in tests/parity/test_lsp_options_2503.py), turned on and off one transaction at a time:
every incremental run equals a full recompute (``--check-incremental=1``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, mismatches

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parity"))
from test_lsp_options_2503 import build_options_nb, flip_options

# 26.03 runs wherever 25.03 does (the same features, its own profile).
pytestmark = pytest.mark.releases("25.03", "26.03")


def test_lsp_l2_options_changes_incremental_equals_recompute(tmp_path, ovn_release) -> None:
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    port = free_port()
    d = OurNorthd(tmp_path, nb.remote, sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        build_options_nb(nb.remote)
        nbctl(nb.remote, "sync", wait="sb")
        flip_options(nb.remote, wait="sb")  # (without waiting, a loaded daemon may take two in one run)
        for cmd in (["set", "logical_switch_port", "vm3", "options:force_fdb_lookup=TRUE"],
                    ["set", "logical_switch_port", "vm1", "options:disable_arp_nd_rsp=true"]):
            nbctl(nb.remote, *cmd, wait="sb")
        nbctl(nb.remote, "sync", wait="sb")
        assert metric(port, "ovn_northd_py_incremental_checks_total") >= 5
        assert mismatches(d) == []
    finally:
        d.stop()
        sb.stop()
        nb.stop()
