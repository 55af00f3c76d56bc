"""Each release's reference runs from its Debian chroot through the harness (plumbing, not flow parity).

The 25.03 (trixie) and 26.03 (sid) chroots are required (``scripts/test.sh`` builds them with
``scripts/chroots.sh``); the 23.03 (bookworm) one is used when built, skipped otherwise.  Our daemon
serves 25.03 and 26.03 (its flows equal the reference's on a small NB, no developer switch).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.lflow.profile import OVN_25_03, OVN_26_03
from ovn_northd_py.parity.harness import nbctl_commands, run_parity
from ovn_northd_py.release import DRAFT_ENV

TINY_NB = nbctl_commands(
    ["ls-add", "sw0"],
    ["lsp-add", "sw0", "p1"],
    ["lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1"],
    ["lr-add", "lr0"],
    ["lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "10.0.0.254/24"],
    ["lsp-add", "sw0", "sw0-lr0"],
    ["lsp-set-type", "sw0-lr0", "router"],
    ["lsp-set-addresses", "sw0-lr0", "router"],
    ["lsp-set-options", "sw0-lr0", "router-port=lrp0"],
)


def _tools(release: str, required: bool):
    try:
        return chroot_tools(release)
    except ToolsUnavailable as e:
        if required:
            pytest.fail(f"{e} (scripts/test.sh builds it)")
        pytest.skip(str(e))


def _run_dirs(root: Path) -> set[str]:
    return {p.name for p in root.glob("run-*")}


def test_25_03_reference_from_trixie_chroot_and_ours_serving_it(tmp_path):
    tools = _tools("25.03", required=True)
    assert tools.root is not None
    version = (tools.root / "ovn-northd-py.version").read_text().strip()
    assert version.startswith("25.03.")
    before = _run_dirs(tools.root)
    result = run_parity(TINY_NB, release="25.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)

    assert result.reference.settled, result.reference.error
    assert result.reference_version == f"ovn-northd {version} (OVN 25.03, Debian trixie chroot {tools.root})"
    # The reference wrote 25.03's flows: its stage names, e.g. the ACL evaluation stage 23.03 did not have.
    flows = result.ref_dump.rows("Logical_Flow")
    assert len(flows) > 50
    stages = {str(r["external_ids"].as_dict().get("stage-name")) for r in flows.values()}
    assert "ls_in_acl_eval" in stages and "ls_in_acl" not in stages
    # Ours serves 25.03: the same flows and SB rows.
    assert result.ours.settled, result.ours.error
    report = result.report()
    assert f"Reference: ovn-northd {version} (OVN 25.03" in report
    assert result.ok, report
    # The reference's work dir came back out of the chroot; nothing is left inside it.
    assert (tmp_path / "p" / "ref" / "ref-northd.log").is_file()
    assert not (tmp_path / "p" / "ref").is_symlink()
    assert _run_dirs(tools.root) == before


def test_26_03_reference_from_sid_chroot_and_ours_serving_it(tmp_path, monkeypatch):
    # (Served without the developer switch for draft profiles: off here.)
    monkeypatch.delenv(DRAFT_ENV, raising=False)
    tools = _tools("26.03", required=True)
    assert tools.root is not None
    version = (tools.root / "ovn-northd-py.version").read_text().strip()
    assert version.startswith("26.03.")
    result = run_parity(TINY_NB, release="26.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)
    assert result.reference.settled, result.reference.error
    # The reference wrote 26.03's flows (conntrack extraction, a stage 25.03 did not have).
    stages = {str(r["external_ids"].as_dict().get("stage-name")) for r in result.ref_dump.rows("Logical_Flow").values()}
    assert "ls_in_ct_extract" in stages
    # Ours serves 26.03: the same flows and SB rows.
    assert result.ours.settled, result.ours.error
    report = result.report()
    assert f"Reference: ovn-northd {version} (OVN 26.03" in report
    assert result.ok, report


def test_25_03_stage_table_is_the_references(tmp_path):
    """Every (stage-name, pipeline, table_id) the 25.03 reference writes is what OVN_25_03
    says, and the reference writes a flow in every stage of that table."""
    _tools("25.03", required=True)
    nb = nbctl_commands(*TINY_NB.commands, ["lr-add", "gw0"], ["set", "logical_router", "gw0", "options:chassis=hv1"])
    result = run_parity(nb, release="25.03", from_chroot=True, reference_both=True, workdir=tmp_path / "p",
                        settle_timeout=60)
    assert result.reference.settled, result.reference.error
    seen = set()
    for r in result.ref_dump.rows("Logical_Flow").values():
        name = str(r["external_ids"].as_dict()["stage-name"])
        seen.add((name, str(r["pipeline"]), int(r["table_id"])))
    profile = OVN_25_03
    ours = {(s.name, s.pipeline, profile.table_id(s)) for s in profile.stages}
    assert seen == ours


def test_26_03_stage_table_is_the_references(tmp_path):
    """Every (stage-name, pipeline, table_id) the 26.03 reference writes is what OVN_26_03 says,
    and the reference writes a flow in every stage of that table (skipped without the sid chroot)."""
    _tools("26.03", required=True)
    nb = nbctl_commands(*TINY_NB.commands, ["lr-add", "gw0"], ["set", "logical_router", "gw0", "options:chassis=hv1"])
    result = run_parity(nb, release="26.03", from_chroot=True, reference_both=True, workdir=tmp_path / "p",
                        settle_timeout=60)
    assert result.reference.settled, result.reference.error
    seen = set()
    for r in result.ref_dump.rows("Logical_Flow").values():
        name = str(r["external_ids"].as_dict()["stage-name"])
        seen.add((name, str(r["pipeline"]), int(r["table_id"])))
    ours = {(s.name, s.pipeline, OVN_26_03.table_id(s)) for s in OVN_26_03.stages}
    assert seen == ours


def test_26_03_writes_the_references_flows_and_sb_rows(tmp_path):
    """The 26.03 profile at parity with sid's ovn-northd on a
    small network with a gateway router, a load balancer and a stateful ACL."""
    _tools("26.03", required=True)
    nb = nbctl_commands(
        *TINY_NB.commands,
        ["lr-add", "gw0"], ["set", "logical_router", "gw0", "options:chassis=hv1"],
        ["lb-add", "lb0", "10.0.0.100:80", "10.0.0.1:8080", "tcp"], ["ls-lb-add", "sw0", "lb0"],
        ["lr-lb-add", "gw0", "lb0"],
        ["acl-add", "sw0", "to-lport", "1000", "tcp.dst == 22", "allow-related"],
    )
    result = run_parity(nb, release="26.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)
    assert result.ours.settled, result.ours.error
    assert result.ok, result.report()


def _ovnk_small(remote: str) -> None:
    from ovn_northd_py.devtools.gen_ovnk import build_ovnk_nb

    build_ovnk_nb(remote, nodes=2, pods_per_node=3, services=8, policies=2, seed=1)


def _neutron_small(remote: str) -> None:
    from ovn_northd_py.devtools.gen_neutron import build_neutron_nb

    build_neutron_nb(remote, tenants=2, nets_per_tenant=2, vms_per_net=2, fips=1, seed=1)


@pytest.mark.parametrize("source", [_ovnk_small, _neutron_small], ids=["ovnk", "neutron"])
def test_26_03_flows_are_the_references_on_ovnk_and_neutron_like_networks(tmp_path, source):
    """Every logical flow and SB row of the 26.03 profile equals sid's ovn-northd's on small ovn-k-like
    and Neutron-like networks (load balancers, ACL tiers, gateway routers, distributed gateway ports,
    NAT, localnet ports, gateway MTU; load-balancer flows in datapath groups of their own; skipped
    without the sid chroot)."""
    _tools("26.03", required=True)
    result = run_parity(source, release="26.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)
    assert result.ours.settled, result.ours.error
    assert result.flows is not None
    bad = [f"{s.stage}: missing {len(s.missing)}, extra {len(s.extra)}" for s in result.flows.stages
           if s.missing or s.extra]
    assert not bad, "\n".join(bad) + "\n" + result.report()
    assert sum(s.ref_count for s in result.flows.stages) > 500
    assert result.ok, result.report()


@pytest.mark.parametrize(("release", "required"), [("25.03", True), ("23.03", False), ("26.03", True)])
def test_parity_cli_self_test_against_each_release_chroot(release, required):
    tools = _tools(release, required)
    version = (tools.root / "ovn-northd-py.version").read_text().strip()
    proc = subprocess.run(
        [sys.executable, "-m", "ovn_northd_py.parity", "--release", release, "--from-chroot", "--reference-both",
         "--switches", "2", "--ports", "2", "--gw-routers", "1", "--settle-timeout", "60"],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert f"Reference: ovn-northd {version} (OVN {release}, Debian {tools.release.suite} chroot {tools.root})" in lines
    assert lines[-1] == "RESULT: PARITY"
    total = next(line for line in lines if line.strip().startswith("TOTAL ref"))
    assert int(total.split()[2]) > 100, total  # flows were compared, not two empty SBs


def _ecmp_with_discard(remote: str) -> None:
    from ovn_northd_py.devtools.nb_json import NbOps

    nbctl_commands(["lr-add", "lr0"], ["lrp-add", "lr0", "lr0-a", "0a:00:00:00:00:01", "172.20.0.1/24"],
                   ["lrp-add", "lr0", "lr0-b", "0a:00:00:00:00:02", "172.21.0.1/24"])(remote)
    ops = NbOps()  # (raw rows: ovn-nbctl refuses a discard route in an ECMP group)
    rs = [ops.insert("Logical_Router_Static_Route", {"ip_prefix": p, "nexthop": n}) for p, n in (
        ("10.1.0.0/24", "172.20.0.10"), ("10.1.0.0/24", "172.21.0.10"), ("10.1.0.0/24", "discard"),
        ("10.2.0.0/24", "discard"), ("10.2.0.0/24", "172.21.0.11"))]
    # (No group of two real next hops: the reference numbers such members in an order that varies
    # from run to run; the drops of a group with a discard member are the same whatever the order.)
    ops.add_to("Logical_Router", "lr0", "static_routes", *rs)
    ops.transact(remote)


def test_26_03_ecmp_group_with_a_discard_route_drops_on_every_member(tmp_path):
    """(25.03's reference exits on such an NB.)"""
    _tools("26.03", required=True)
    result = run_parity(_ecmp_with_discard, release="26.03", from_chroot=True, workdir=tmp_path / "p",
                        settle_timeout=60)
    assert result.flows is not None
    ecmp = next(s for s in result.flows.stages if s.stage == "lr_in_ip_routing_ecmp")
    assert ecmp.ref_count == 7, result.report()  # 5 drops, the 2 defaults
    assert result.ok, result.report()
