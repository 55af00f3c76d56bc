"""Issue 10, point 2: deleting a router that has learned neighbours must not stop SB from
following NB.

ovn-controller writes MAC_Binding rows that reference the router's Datapath_Binding.  After
``lr-del`` the northd must delete them with the datapath (as the C daemon does); otherwise every SB
transaction fails and no later change (a new port, a new address set, a new ACL) reaches the
dataplane.  This module gets a stack of its own: a daemon wedged here fails this test only.
"""

from __future__ import annotations

import subprocess

import pytest
from dp_topologies import learn_neighbours, routed_vms

from ovn_northd_py.devtools.dataplane import Topology
from ovn_northd_py.devtools.testing import wait_until


def test_router_with_learned_neighbours_deleted_then_new_ports_and_address_sets_work(topo: Topology) -> None:
    a, b = routed_vms(topo)
    rows = learn_neighbours(topo, a, b)
    assert rows, "ovn-controller wrote MAC_Binding rows for the router"
    router_dp = topo.sbctl("--bare", "--columns=_uuid", "find", "Datapath_Binding", "external_ids:name=r").strip()
    assert router_dp

    # Every symptom is collected, so that one run tells all that is wrong.
    problems: list[str] = []
    topo.nbctl("lr-del", "r")
    topo.nbctl("sync", wait="sb")
    try:
        wait_until(
            lambda: not topo.sbctl("--bare", "--columns=_uuid", "find", "Datapath_Binding",
                                   "external_ids:name=r").strip(),
            5, "the router's Datapath_Binding to go from SB",
        )
    except AssertionError as e:
        problems.append(str(e))
    leftover = topo.sbctl("--bare", "--columns=ip", "find", "MAC_Binding", f"datapath={router_dp}").split()
    if leftover:
        problems.append(f"MAC_Binding rows of the deleted router remain: {leftover}")

    # A new port on s1 gets a Port_Binding, is claimed and forwards.
    c = topo.vm("s1", "c", "00:00:00:00:01:03", "10.1.0.12/24")
    try:
        topo.wait_up(c, timeout=10)
    except subprocess.CalledProcessError:
        pb = topo.sbctl("--bare", "--columns=logical_port", "list", "Port_Binding").split()
        problems.append(f"the new port c was never claimed (SB Port_Bindings: {pb})")
    else:
        if not a.ns.ping("10.1.0.12"):
            problems.append("the new port c does not forward")

    # A new address set and an ACL using it reach SB and the dataplane.
    topo.nbctl(
        "create", "Address_Set", "name=as_after", 'addresses="10.1.0.11"', "--",
        "acl-add", "s1", "to-lport", "1000", 'outport == "c" && ip4.src == $as_after && icmp4', "drop",
    )
    try:
        topo.sync(timeout=10)
    except subprocess.CalledProcessError:
        problems.append("ovn-nbctl --wait=hv timed out after the new ACL")
    sets = topo.sbctl("--bare", "--columns=name", "list", "Address_Set").split()
    if "as_after" not in sets:
        problems.append(f"the new address set never reached SB (SB sets: {sets})")
    if a.ns.ping("10.1.0.12", tries=1):
        problems.append("the new ACL with the new address set does not drop a -> c")
    if problems:
        pytest.fail("after lr-del of a router with learned neighbours:\n" + "\n".join(problems), pytrace=False)
