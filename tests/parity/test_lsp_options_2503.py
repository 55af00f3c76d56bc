"""Parity with the 25.03 reference for the switch and port options 25.03 added to the destination
lookup and the ARP/ND responder (behaviour ``lsp_l2_options``): ``force_fdb_lookup`` (a VIF with
``unknown`` gets no MAC lookup flow; a localnet port ignores it), ``pkt_clone_type=mc_unknown``
(a copy to ``_MC_unknown``; another value changes nothing), ``disable_arp_nd_rsp`` and the switch's
``other_config:broadcast-arps-to-all-routers=false``.  The whole SB must be equal; then the options
are flipped and SB must follow with the daemon checking every incremental run.
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.parity.harness import assert_parity, run_parity


def build_options_nb(remote: str) -> None:
    def n(*a: str) -> None:
        nbctl(remote, *a)

    n("lr-add", "R1", "--", "set", "logical_router", "R1", "options:chassis=hv1",
      "--", "lrp-add", "R1", "R1-S1", "02:ac:10:01:00:01", "172.16.1.1/24",
      "--", "ls-add", "S1", "--", "lsp-add", "S1", "S1-R1", "--", "lsp-set-type", "S1-R1", "router",
      "--", "lsp-set-addresses", "S1-R1", "02:ac:10:01:00:01 172.16.1.1",
      "--", "lsp-set-options", "S1-R1", "router-port=R1-S1", "nat-addresses=router")
    n("set", "Logical_Switch", "S1", "other_config:broadcast-arps-to-all-routers=FALSE")
    n("lsp-add", "S1", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:10 192.168.0.10 fd00::10",
      "--", "set", "logical_switch_port", "vm1", "options:disable_arp_nd_rsp=true")
    n("lsp-add", "S1", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 192.168.0.2",
      "--", "set", "logical_switch_port", "vm2", "options:pkt_clone_type=mc_unknown")
    n("lsp-add", "S1", "vm3", "--", "lsp-set-addresses", "vm3", "50:54:00:00:00:03 192.168.0.3", "unknown",
      "--", "set", "logical_switch_port", "vm3", "options:force_fdb_lookup=true")
    n("lsp-add", "S1", "ln", "--", "lsp-set-type", "ln", "localnet", "--", "lsp-set-addresses", "ln", "unknown",
      "--", "lsp-set-options", "ln", "network_name=phys", "force_fdb_lookup=true")
    n("ls-add", "S2", "--", "lsp-add", "S2", "w1", "--", "lsp-set-addresses", "w1", "50:54:00:00:01:01 10.0.0.1",
      "--", "set", "logical_switch_port", "w1", "options:pkt_clone_type=foo",
      "--", "lsp-add", "S2", "w2", "--", "lsp-set-addresses", "w2", "50:54:00:00:01:02 10.0.0.2",
      "--", "set", "logical_switch_port", "w2", "options:disable_arp_nd_rsp=false")


def flip_options(remote: str, wait: str | None = None) -> None:
    """Every option back (or on), in separate transactions: the incremental paths (``wait="sb"``:
    each one written before the next, so each is an incremental run of its own)."""
    for cmd in (["set", "Logical_Switch", "S1", "other_config:broadcast-arps-to-all-routers=true"],
                ["remove", "logical_switch_port", "vm1", "options", "disable_arp_nd_rsp"],
                ["set", "logical_switch_port", "vm2", "options:pkt_clone_type=none"],
                ["remove", "logical_switch_port", "vm3", "options", "force_fdb_lookup"],
                ["set", "logical_switch_port", "w1", "options:pkt_clone_type=mc_unknown"],
                ["set", "logical_switch_port", "w2", "options:disable_arp_nd_rsp=true"],
                ["set", "Logical_Switch", "S2", "other_config:broadcast-arps-to-all-routers=false"]):
        nbctl(remote, *cmd, wait=wait)


@pytest.fixture
def run_2503(monkeypatch, tmp_path):
    try:
        chroot_tools("25.03")
    except ToolsUnavailable as e:
        pytest.fail(f"{e} (scripts/test.sh builds it)")
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    return lambda source, name: run_parity(source, release="25.03", from_chroot=True, workdir=tmp_path / name,
                                           settle_timeout=60)


def test_lsp_l2_options_of_25_03(run_2503):
    assert_parity(run_2503(build_options_nb, "cold"))


def test_lsp_l2_options_flipped_of_25_03(run_2503):
    def build_and_flip(remote: str) -> None:
        build_options_nb(remote)
        flip_options(remote)

    assert_parity(run_2503(build_and_flip, "flipped"))
