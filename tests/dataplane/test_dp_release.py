"""The stack runs the OVN release asked for (``--release``, ``DATAPLANE_RELEASE``): the chassis'
ovn-controller and OVS are that release's, and what the northd wrote is what that
ovn-controller expects."""

from __future__ import annotations

import re

import pytest

from ovn_northd_py.devtools.dataplane import Stack
from ovn_northd_py.devtools.tools import release_name_of


def test_chassis_runs_the_release_ovn_controller(stack: Stack) -> None:
    assert stack.chassis is not None
    out = stack.chassis.appctl("ovn-controller", "version")
    m = re.search(r"ovn-controller \(Open Virtual Network\) (\S+)|ovn-controller (\S+)", out)
    assert m, out
    assert release_name_of(m.group(1) or m.group(2)) == (stack.chassis_release or stack.release).name, out


def test_northd_internal_version_is_the_chassis_own(stack: Stack) -> None:
    """ovn-controller logs its internal version (release, SB schema, flow version) at start; the
    northd's SB_Global options:northd_internal_version must be the same, else an ovn-controller
    with ovn-match-northd-version=true would refuse the flows."""
    assert stack.chassis is not None
    if stack.older_chassis:
        pytest.skip("the chassis is of an older release than the northd (--chassis-release)")
    stack.sync_hv()
    log = stack.chassis.controller_log.read_text(errors="replace")
    m = re.search(r"OVN internal version is : \[(\S+)\]", log)
    assert m, "ovn-controller logged no internal version"
    ours = stack.sbctl("get", "SB_Global", ".", "options:northd_internal_version").strip().strip('"')
    assert ours == m.group(1)
