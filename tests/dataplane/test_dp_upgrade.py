"""Upgrading a deployment to the next OVN release (README "Upgrading to the next OVN release"): an
ovn-controller with ``external_ids:ovn-match-northd-version=true`` processes SB only while the
northd's ``SB_Global options:northd_internal_version`` is its own, so that controllers upgraded first
keep their flows until the northd of their release takes over.  With ours as with the C northd
(``--northd=c``): every test here passes with both.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dp_topologies import two_vms_on_a_switch

from ovn_northd_py.devtools.dataplane import Chassis, Topology
from ovn_northd_py.devtools.testing import wait_until
from ovn_northd_py.release import Release, profiles

MISMATCH = "mismatch with northd version"


def other_release_version(release: Release) -> str:
    """What the northd of another release writes (the one before ``release``, or after 23.03)."""
    others = [r for r in profiles() if r.name != release.name]
    older = [r for r in others if r.name < release.name]
    return (older[-1] if older else others[0]).profile.northd_internal_version


@pytest.fixture
def matching(topo: Topology) -> Iterator[Chassis]:
    """The chassis with ovn-match-northd-version=true (unset afterwards)."""
    chassis = topo.stack.chassis
    assert chassis is not None
    chassis.vsctl("set", "open_vswitch", ".", "external_ids:ovn-match-northd-version=true")
    try:
        yield chassis
    finally:
        chassis.vsctl("remove", "open_vswitch", ".", "external_ids", "ovn-match-northd-version")


def test_controller_matching_the_northd_version_installs_new_ports(topo: Topology, matching: Chassis) -> None:
    a, _b = two_vms_on_a_switch(topo)
    c = topo.vm("sw", "c", "00:00:00:00:01:03", "10.0.0.13/24")
    topo.wait_up(c)
    assert a.ns.ping("10.0.0.13"), "a port created after ovn-match-northd-version=true is reachable"
    assert MISMATCH not in matching.controller_log.read_text(errors="replace")


def test_controller_waits_for_a_northd_of_its_release(topo: Topology, matching: Chassis) -> None:
    """The northd of the previous release still runs (its version in SB_Global: simulated with the
    northd stopped), the controller already upgraded: it logs the mismatch and keeps its flows;
    the northd of its release starts, writes its version, and the controller takes new ports again."""
    st = topo.stack
    assert st.northd is not None
    other = other_release_version(st.release)
    a, _b = two_vms_on_a_switch(topo)
    st.northd.stop()
    try:
        topo.sbctl("set", "SB_Global", ".", f"options:northd_internal_version={other}")
        wait_until(lambda: MISMATCH in matching.controller_log.read_text(errors="replace"), 20,
                   "ovn-controller to log the version mismatch")
        assert a.ns.ping("10.0.0.12"), "the flows installed before stay"
        c = topo.vm("sw", "c", "00:00:00:00:01:03", "10.0.0.13/24")  # (no northd: not in SB yet)
    finally:
        st.northd.start()
    wait_until(lambda: _sb_version(topo) != other, 30, "the northd to write its own version")
    topo.wait_up(c)
    assert a.ns.ping("10.0.0.13"), "the controller processes SB again"


def _sb_version(topo: Topology) -> str:
    return topo.sbctl("get", "SB_Global", ".", "options:northd_internal_version").strip().strip('"')
