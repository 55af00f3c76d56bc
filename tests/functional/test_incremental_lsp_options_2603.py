"""26.03's switch-port options ``receive_multicast`` and ``exclude-router-ips-from-garp`` under
``--check-incremental=1`` (NB 7.18 / SB 21.8 servers, the 26.03 draft profile): toggled on and off,
each change equal to a full recompute, the multicast ones without recomputing the lflow node (a
router-type port's options on a gateway port's switch recompute: behaviour centralized_dgp_peer)."""

from __future__ import annotations

from pathlib import Path

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, mismatches, node_runs
from ovn_northd_py.parity.faults import assert_converged
from ovn_northd_py.release import RELEASES


def build(remote: str) -> None:
    """A snooping switch with unknown-address ports, a gateway router's public switch."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "u1", "--", "lsp-set-addresses", "u1", "unknown",
          "--", "lsp-add", "sw0", "u2", "--", "lsp-set-addresses", "u2", "unknown",
          "--", "lsp-add", "sw0", "u3", "--", "lsp-set-addresses", "u3", "unknown",
          "--", "set", "logical_switch", "sw0", "other_config:mcast_snoop=true",
          "--", "lr-add", "lr0", "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:01:01", "172.16.0.1/24",
          "--", "lrp-set-gateway-chassis", "lrp0", "hv1",
          "--", "lr-nat-add", "lr0", "dnat_and_snat", "172.16.0.10", "10.0.0.10",
          "--", "ls-add", "pub", "--", "lsp-add", "pub", "pub-lr0", "--", "lsp-set-type", "pub-lr0", "router",
          "--", "lsp-set-addresses", "pub-lr0", "router",
          "--", "lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router")


def test_lsp_option_changes_incremental_equals_recompute(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    rel = RELEASES["26.03"]
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d: OurNorthd | None = None
    try:
        r = nb.remote
        build(r)
        port = free_port()
        d = OurNorthd(tmp_path, r, sb.remote,
                      extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
        nbctl(r, "sync", wait="sb", timeout=30)
        steps = [
            ["lsp-set-options", "u3", "mcast_flood=true", "receive_multicast=false"],
            ["lsp-set-options", "u2", "receive_multicast=false"],
            ["lsp-set-options", "u3", "mcast_flood=true"],
            ["lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router", "exclude-router-ips-from-garp=true"],
            ["lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router"],
            ["lsp-set-options", "pub-lr0", "router-port=lrp0", "nat-addresses=router", "exclude-router-ips-from-garp=true"],
        ]
        for i, step in enumerate(steps):
            before = node_runs(port, "lflow", "recompute")
            nbctl(r, *step)
            nbctl(r, "sync", wait="sb", timeout=30)
            bad = mismatches(d)
            assert not bad, f"step {i}: {bad[0].get('differences')}"
            assert i >= 3 or node_runs(port, "lflow", "recompute") == before, f"step {i} recomputed"
        assert_converged(r, sb.remote, tmp_path / "fresh", release=rel)
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()
