"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for load balancers with
``options:use_stateless_nat`` on a router with several distributed gateway ports: 26.03 picks the
backend statelessly (``lr_in_ct_extract`` 120 ``reg1[0..15] = select(...)``, ``lr_in_dnat`` 110 per
DGP and backend), OVN's ovn-northd.at "Load balancer with Distributed Gateway Ports (LB + DGP + NAT
Stateless)".  Skipped without the sid chroot."""

from __future__ import annotations

import pytest
from test_lb_dgps_2503 import build_lb_dgps_nb

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.parity.harness import ParityResult, run_parity


def _parity_2603(builder, monkeypatch, tmp_path) -> ParityResult:  # type: ignore[no-untyped-def]
    try:
        chroot_tools("26.03")
    except ToolsUnavailable as e:
        pytest.skip(str(e))
    monkeypatch.delenv("OVN_NORTHD_PY_DRAFT_PROFILES", raising=False)  # (26.03 is served)
    return run_parity(builder, release="26.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)


def build_stateless_lb_nb(remote: str) -> None:
    """build_lb_dgps_nb's routers and load balancers, and stateless ones with one backend, with
    selection_fields and ports, and on a router with lb_force_snat_ip=router_ip."""
    build_lb_dgps_nb(remote)
    nbctl(remote, "lb-add", "lbone", "30.0.0.5", "172.16.0.105",
          "--", "lb-add", "lbsel", "30.0.0.6:80", "172.16.0.101:8080,172.16.0.102:8080",
          "--", "lb-add", "lbforce", "30.0.0.8", "172.16.0.101,172.16.0.102",
          "--", "set", "logical_router", "lr1", "options:lb_force_snat_ip=router_ip")
    nbctl(remote, "set", "load_balancer", "lbsel", "selection_fields=ip_src,tp_src,ip_dst,tp_dst")
    for lb in ("lbone", "lbsel", "lbforce"):
        nbctl(remote, "set", "load_balancer", lb, "options:use_stateless_nat=true",
              "--", "lr-lb-add", "lr1", lb, "--", "ls-lb-add", "s1", lb)
    # lb1 on a gateway router and on a router without gateway port too.
    nbctl(remote, "lr-add", "lr3", "--", "set", "logical_router", "lr3", "options:chassis=ch1",
          "--", "lrp-add", "lr3", "lr3-p", "00:de:ad:ff:00:0a", "175.16.0.1/16", "--", "lr-lb-add", "lr3", "lb1",
          "--", "lr-add", "lr4", "--", "lrp-add", "lr4", "lr4-p", "00:de:ad:ff:00:0b", "176.16.0.1/16",
          "--", "lr-lb-add", "lr4", "lb1", "--", "lr-lb-add", "lr4", "lbsel")


def test_stateless_lb_on_several_dgps_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_stateless_lb_nb, monkeypatch, tmp_path)
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    # (lr_in_ecmp_stateful_egr: the reference numbers lr1's three chassisredirect ports in an order
    # that varies from run to run, known_draft_differences.txt)
    assert all(s.ok for s in r.flows.stages if s.stage != "lr_in_ecmp_stateful_egr"), r.report()
    assert all(t.ok for t in r.tables.values() if t.table != "Logical_Flow"), r.report()
    selects = [f for f in r.ref_dump.rows("Logical_Flow").values() if "select(" in str(f["actions"])
               and "reg1[0..15]" in str(f["actions"])]
    assert selects
