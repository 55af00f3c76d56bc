"""A northd of a newer release serving the host's older ovn-controller (23.03, OVS 3.1): what the
chassis features (SB Chassis other_config, ``flows/chassis_features.py``) change for it.

Runs with ``--release 25.03`` (or newer) only, on a stack of its own whose chassis is the host's.
25.03's flows are not all readable by a 23.03 ovn-controller, with the C northd as with ours
(``flags.tunnel_rx``, ``ct_mark.allow_established``...: it logs parse errors and most routed and
load-balanced traffic fails; ``test_dp_zz_controller_logs`` does not count such a stack).  What
the features decide is checked here: the load balancer's switches are named where a 23.03
ovn-controller reads them (SB Load_Balancer ``datapath_group``, not ``ls_datapath_group``), so it
installs its hairpin flows; and no flow uses an action it lacks the feature for
(``ct_commit_to_zone``, ``ct_next(snat)``, ``ct_commit_nat(snat)``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import chassis_release, dataplane_release, northd_kind

from ovn_northd_py.devtools import dataplane as dp
from ovn_northd_py.release import DEFAULT_RELEASE


@pytest.fixture(scope="module")
def old_chassis_topo(request: pytest.FixtureRequest, dataplane_session: None) -> Iterator[dp.Topology]:
    release = dataplane_release(request.config)
    if release == DEFAULT_RELEASE or chassis_release(request.config) != release:
        pytest.skip(f"needs --release newer than the host's chassis ({DEFAULT_RELEASE.name})")
    st = dp.Stack(northd_kind=northd_kind(request.config), release=release, chassis_release=DEFAULT_RELEASE)
    st.start()
    topo = dp.Topology(st)
    try:
        yield topo
    finally:
        topo.destroy()
        st.stop()


def test_older_chassis_gets_load_balancer_hairpin_flows(old_chassis_topo: dp.Topology) -> None:
    topo = old_chassis_topo
    topo.nbctl("ls-add", "lbsw")
    topo.vm("lbsw", "lba", "00:00:00:00:05:01", "10.5.0.11/24")
    topo.nbctl("lb-add", "lbh", "10.5.0.100:80", "10.5.0.11:8080", "tcp", "--", "ls-lb-add", "lbsw", "lbh")
    topo.wait_up()
    assert topo.sbctl("--bare", "--columns=ls_datapath_group", "find", "Load_Balancer", "name=lbh").strip() == ""
    assert topo.stack.chassis is not None
    hairpin = [ln for ln in topo.stack.chassis.dump_flows().splitlines()
               if "table=68" in ln and "nw_src=10.5.0.11,nw_dst=10.5.0.11" in ln and "tp_dst=8080" in ln]
    assert hairpin, "ovn-controller 23.03 installed no hairpin flow for the backend (SB Load_Balancer datapath_group)"


def test_older_chassis_gets_no_action_it_lacks_the_feature_for(old_chassis_topo: dp.Topology) -> None:
    """A SNAT rule on a distributed gateway port with gateway_mtu (the router is local through a
    bound port on its inside switch)."""
    topo = old_chassis_topo
    topo.nbctl("ls-add", "in", "--", "ls-add", "out", "--", "lr-add", "dr")
    topo.router_port("dr", "in", "00:00:00:00:fd:01", "10.6.0.1/24")
    lrp = topo.router_port("dr", "out", "00:00:00:00:fd:02", "172.16.6.1/24")
    topo.nbctl("lrp-set-gateway-chassis", lrp, "hv1", "20", "--",
               "set", "Logical_Router_Port", lrp, "options:gateway_mtu=1300", "--",
               "lr-nat-add", "dr", "snat", "172.16.6.50", "10.6.0.0/24")
    topo.vm("in", "ina", "00:00:00:00:06:01", "10.6.0.11/24", gw4="10.6.0.1")
    topo.wait_up()
    flows = topo.sbctl("--bare", "--columns=actions", "list", "Logical_Flow")
    assert "ct_snat(172.16.6.50)" in flows, "the SNAT flow itself is there"
    gated = ("ct_commit_to_zone", "ct_next(snat)", "ct_commit_nat(snat)")
    assert not [g for g in gated if g in flows], flows
    assert topo.stack.chassis is not None
    assert not [ln for ln in topo.stack.chassis.log_errors() if any(g in ln for g in gated)]
