"""Parity with the reference ovn-northd for SB ``HA_Chassis_Group.ref_chassis``: the chassis where
the switch ports behind a gateway router port are bound.  25.03 (behaviour
``ref_chassis_additional``, observed): a port's ``additional_chassis`` count too; 23.03: only its
``chassis``.
"""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl, sbctl
from ovn_northd_py.parity.dump import SetVal


def build_gateway_nb(remote: str) -> None:
    """A router with a gateway port on two chassis (an HA group of two) and a switch behind it."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "sw0-p1", "--", "lr-add", "lr0",
          "--", "lrp-add", "lr0", "lr0-pub", "00:00:00:00:00:01", "172.16.0.1/24",
          "--", "lrp-set-gateway-chassis", "lr0-pub", "gw1", "10", "--", "lrp-set-gateway-chassis", "lr0-pub", "gw2", "20",
          "--", "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:00:02", "10.0.0.1/24", "--", "lsp-add", "sw0", "sw0-lr0",
          "--", "lsp-set-type", "sw0-lr0", "router", "--", "lsp-set-addresses", "sw0-lr0", "router",
          "--", "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0")


def bound_with_an_additional_chassis(_nb: str, sb: str) -> None:
    for i, name in enumerate(("gw1", "gw2", "comp1", "cadd1")):
        sbctl(sb, "chassis-add", name, "geneve", f"127.0.0.{i + 1}")
    sbctl(sb, "lsp-bind", "sw0-p1", "comp1")
    cadd = sbctl(sb, "--bare", "--columns=_uuid", "find", "Chassis", "name=cadd1").strip()
    sbctl(sb, "set", "Port_Binding", "sw0-p1", f"additional_chassis={cadd}")


def test_ref_chassis_of_a_port_bound_with_an_additional_chassis(parity_run, parity_profile) -> None:
    r = parity_run(build_gateway_nb, after_settle=bound_with_an_additional_chassis,
                   tables=("HA_Chassis_Group", "Port_Binding"))
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.tables["HA_Chassis_Group"].ok, r.report()
    assert r.ref_dump is not None
    groups = list(r.ref_dump.rows("HA_Chassis_Group").values())
    assert len(groups) == 1
    ref_chassis = groups[0]["ref_chassis"]
    n = len(ref_chassis.items) if isinstance(ref_chassis, SetVal) else 1
    assert n == (2 if parity_profile.has("ref_chassis_additional") else 1), r.report()
