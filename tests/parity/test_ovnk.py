"""Parity with the reference ovn-northd on an ovn-kubernetes-like network (:mod:`ovn_northd_py.devtools.gen_ovnk`).

20 nodes, 10 pods each, 50 services (cluster IPs in load balancer groups, NodePorts on the gateway
routers' node IPs, ``reject``/``skip_snat``/``affinity_timeout``/``hairpin_snat_ip`` variants), 10
network policies (port groups, address sets, ACLs with logging and ``apply-after-lb``), gateway
routers with ``lb_force_snat_ip=router_ip``.  One parity run is shared by the module's tests.
"""

from __future__ import annotations

import functools
import importlib.util
import os

import pytest

from ovn_northd_py.devtools.gen_ovnk import build_ovnk_nb
from ovn_northd_py.parity.harness import (
    ParityResult,
    StageDiff,
    assert_parity,
    reference_available,
    run_parity,
)
from ovn_northd_py.parity.stage_names import parity_release, release_stage_names

NODES = 20
MIN_PERCENT = 99.9
SB_TABLES = ("Port_Group", "Address_Set", "Meter", "Meter_Band", "Load_Balancer")


@pytest.fixture(scope="module")
def ovnk(tmp_path_factory: pytest.TempPathFactory) -> ParityResult:
    """Reference vs ours on the ovn-k-like NB (run once for the module)."""
    release = parity_release().name  # (OVN_PARITY_RELEASE, as every parity test)
    if not reference_available(release):
        pytest.fail("reference ovn-northd / OVS tools not installed (run scripts/setup.sh)")
    ours_cmd = os.environ.get("OVN_PARITY_OURS_CMD")
    if ours_cmd is None and importlib.util.find_spec("ovn_northd_py.__main__") is None:
        pytest.fail("our daemon (python -m ovn_northd_py) is missing")
    source = functools.partial(build_ovnk_nb, nodes=NODES, pods_per_node=10, services=50, policies=10, seed=0)
    source.__name__ = f"gen_ovnk({NODES} nodes)"  # type: ignore[attr-defined]
    return run_parity(source, ours_cmd=ours_cmd, workdir=tmp_path_factory.mktemp("ovnk"), settle_timeout=120,
                      release=release)


def _stages(r: ParityResult, prefix: str) -> list[StageDiff]:
    assert r.flows is not None
    return [s for s in r.flows.stages if s.stage.startswith(prefix)]


def _bad_stages(stages: list[StageDiff], skip: tuple[str, ...] = ()) -> list[str]:
    return [
        f"{s.stage}: {s.percent:.2f}% (missing {len(s.missing)}, extra {len(s.extra)})"
        for s in stages
        if s.stage not in skip and (s.percent < MIN_PERCENT or s.extra)
    ]


def test_both_sides_settle(ovnk: ParityResult) -> None:
    assert ovnk.reference.settled and ovnk.ours.settled, ovnk.report()


def test_workload_exercises_the_ovnk_features(ovnk: ParityResult) -> None:
    """The reference's own output shows the NB has what ovn-k creates (not a parity check)."""
    by_stage = {s.stage: s for s in ovnk.flows.stages} if ovnk.flows else {}
    assert ovnk.tables["Datapath_Binding"].ref_count == 3 * NODES + 2  # node, ext_ switches + GRs, join, cluster router
    assert by_stage["ls_in_lb"].ref_count > 1000
    assert by_stage["lr_in_dnat"].ref_count > 1000
    assert by_stage["lr_in_lb_aff_learn"].ref_count > 0 and by_stage["ls_in_lb_aff_learn"].ref_count > 0
    assert by_stage["lr_in_policy"].ref_count > 2 * NODES and by_stage["lr_in_ip_routing"].ref_count > 2 * NODES
    # (the stages where the ACLs' own flows are: 25.03 evaluates them in ls_*_acl*_eval)
    out_acl, after_lb = release_stage_names(("ls_out_acl",))[0], release_stage_names(("ls_in_acl_after_lb",))[0]
    assert by_stage[out_acl].ref_count > 500 and by_stage[after_lb].ref_count > 100
    assert ovnk.tables["Port_Group"].ref_count > NODES and ovnk.tables["Meter"].ref_count > 0


def test_switch_stages_at_parity(ovnk: ParityResult) -> None:
    stages = _stages(ovnk, "ls_")
    assert len(stages) > 30
    bad = _bad_stages(stages)
    assert not bad, "\n".join(bad) + "\n" + ovnk.report()


def test_switch_lb_affinity_check_for_vip_without_backends(ovnk: ParityResult) -> None:
    """The reference checks affinity for a VIP without backends too (ls_in_lb_aff_check)."""
    bad = _bad_stages([s for s in _stages(ovnk, "ls_") if s.stage == "ls_in_lb_aff_check"])
    assert not bad, "\n".join(bad)


def test_router_stages_at_parity(ovnk: ParityResult) -> None:
    stages = _stages(ovnk, "lr_")
    assert len(stages) > 25
    bad = _bad_stages(stages)
    assert not bad, "\n".join(bad) + "\n" + ovnk.report()


def test_no_flow_is_wrong(ovnk: ParityResult) -> None:
    assert ovnk.flows is not None and ovnk.flows.extra == 0, ovnk.report()


@pytest.mark.parametrize("table", SB_TABLES)
def test_sb_table_equal(ovnk: ParityResult, table: str) -> None:
    t = ovnk.tables[table]
    assert t.ok and t.ref_count > 0, ovnk.report()


def test_datapaths_and_ports_equal(ovnk: ParityResult) -> None:
    bad = [t for t in ("Datapath_Binding", "Port_Binding", "Multicast_Group") if not ovnk.tables[t].ok]
    assert not bad, ovnk.report()


def test_full_parity(ovnk: ParityResult) -> None:
    assert_parity(ovnk)
