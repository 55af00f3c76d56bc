"""The parity harness proves itself: reference vs reference is 100%, and perturbations are caught."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ovn_northd_py.parity.harness import (
    FLOW_TABLE,
    HarnessError,
    MapVal,
    ParityResult,
    Row,
    SbDump,
    SetVal,
    assert_parity,
    compare_dumps,
    nbctl_commands,
    process_gone,
    reference_available,
    run_parity,
    workload,
)

pytestmark = pytest.mark.skipif(not reference_available(), reason="reference ovn-northd not installed")

REF_DETACHED = (
    "/usr/bin/ovn-northd --detach --no-chdir --pidfile={pidfile} --ovnnb-db={nb} --ovnsb-db={sb}"
    " --log-file={log} --unixctl={unixctl}"
)
REF_FOREGROUND = "/usr/bin/ovn-northd --ovnnb-db={nb} --ovnsb-db={sb} --log-file={log} --unixctl={unixctl}"


@pytest.fixture(scope="module")
def selftest(tmp_path_factory: pytest.TempPathFactory) -> ParityResult:
    """Reference vs reference on mixed.py 3 3 3 (run once for the module)."""
    workdir = tmp_path_factory.mktemp("selftest")
    return run_parity(workload("mixed", 3, 3, 3), reference_both=True, workdir=workdir)


def _perturbed(result: ParityResult, change: Callable[[SbDump], object]) -> SbDump:
    ours = copy.deepcopy(result.ours_dump)
    change(ours)
    return ours


def _single_dp_flow(dump: SbDump) -> tuple[str, Row]:
    return next((u, r) for u, r in sorted(dump.rows(FLOW_TABLE).items()) if r["logical_datapath"].items)


def _group_flow(dump: SbDump) -> tuple[str, Row]:
    return next((u, r) for u, r in sorted(dump.rows(FLOW_TABLE).items()) if r["logical_dp_group"].items)


def _live_processes_mentioning(path: Path) -> list[int]:
    """PIDs of live (non-zombie) processes whose command line mentions ``path``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and str(path) in cmdline and not process_gone(int(proc.name)):
            found.append(int(proc.name))
    return found


# --------------------------------------------------------------------------- reference vs reference


def test_reference_vs_reference_is_full_parity(selftest: ParityResult) -> None:
    assert_parity(selftest)
    assert all(t.ok and t.matched == t.ref_count == t.ours_count for t in selftest.tables.values())
    flows = selftest.flows
    assert flows is not None and flows.ok
    assert flows.ref_count > 1000 and flows.matched == flows.ref_count == flows.ours_count
    assert flows.percent == 100.0 and all(s.percent == 100.0 for s in flows.stages)
    assert len({s.stage for s in flows.stages}) > 50
    for table in ("Datapath_Binding", "Port_Binding", "Multicast_Group", "HA_Chassis_Group", "IP_Multicast"):
        assert selftest.tables[table].ref_count > 0, table
    assert "RESULT: PARITY" in selftest.report()


def test_settle_times_recorded(selftest: ParityResult) -> None:
    for side in (selftest.reference, selftest.ours):
        assert side.settled and side.error is None
        assert side.settle_seconds is not None and 0 < side.settle_seconds < 60


def test_every_process_stopped(selftest: ParityResult) -> None:
    pids = selftest.reference.pids + selftest.ours.pids
    assert len(pids) == 6  # nb + sb ovsdb-server and ovn-northd, per side
    assert all(process_gone(pid) for pid in pids)
    assert selftest.workdir is not None and _live_processes_mentioning(selftest.workdir) == []


def test_both_sides_served_the_same_nb_rows(selftest: ParityResult) -> None:
    ref_dps = selftest.ref_dump.datapath_labels()
    assert ref_dps == selftest.ours_dump.datapath_labels()
    assert "join" in ref_dps.values()


# --------------------------------------------------------------------------- perturbed dumps must fail


def test_dropped_flow_is_missing(selftest: ParityResult) -> None:
    uuid, row = _single_dp_flow(selftest.ours_dump)
    ours = _perturbed(selftest, lambda d: d.tables[FLOW_TABLE].pop(uuid))
    cmp = compare_dumps(selftest.ref_dump, ours)
    assert not cmp.ok and cmp.flows is not None
    assert (cmp.flows.missing, cmp.flows.extra) == (1, 0)
    assert cmp.flows.matched == cmp.flows.ref_count - 1
    stage = row["external_ids"].as_dict()["stage-name"]
    (failed,) = [s for s in cmp.flows.stages if not s.ok]
    assert (failed.stage, failed.pipeline, len(failed.missing)) == (stage, row["pipeline"], 1)
    assert failed.missing[0][4] == row["match"] and failed.percent < 100.0
    assert all(t.ok for t in cmp.tables.values())


def test_dropped_group_flow_is_missing_once_per_datapath(selftest: ParityResult) -> None:
    uuid, row = _group_flow(selftest.ours_dump)
    group = selftest.ours_dump.rows("Logical_DP_Group")[row["logical_dp_group"].items[0].uuid]
    ours = _perturbed(selftest, lambda d: d.tables[FLOW_TABLE].pop(uuid))
    cmp = compare_dumps(selftest.ref_dump, ours)
    assert cmp.flows is not None
    assert cmp.flows.missing == len(group["datapaths"].items) > 1


def test_changed_actions_are_missing_and_extra(selftest: ParityResult) -> None:
    # A flow whose actions are not already "drop;" (else the change changes nothing).
    uuid = next(
        u
        for u, r in sorted(selftest.ours_dump.rows(FLOW_TABLE).items())
        if r["logical_datapath"].items and r["actions"] != "drop;"
    )
    ours = _perturbed(selftest, lambda d: d.tables[FLOW_TABLE][uuid].update(actions="drop;"))
    cmp = compare_dumps(selftest.ref_dump, ours)
    assert cmp.flows is not None and (cmp.flows.missing, cmp.flows.extra) == (1, 1)
    report = ParityResult(
        "perturbed", selftest.reference, selftest.ours, cmp, selftest.ref_dump, ours
    ).report()
    assert "missing: " in report and "actions=(drop;)" in report and "RESULT: DIFFERENT" in report


def test_group_flow_split_per_datapath_is_still_equal(selftest: ParityResult) -> None:
    """Flows are compared expanded: how datapaths are grouped does not matter."""
    uuid, row = _group_flow(selftest.ours_dump)

    def split(d: SbDump) -> None:
        group = d.rows("Logical_DP_Group")[row["logical_dp_group"].items[0].uuid]
        flow = d.tables[FLOW_TABLE].pop(uuid)
        for i, dp in enumerate(group["datapaths"].items):
            d.tables[FLOW_TABLE][f"split-{i}"] = {
                **flow,
                "logical_datapath": SetVal((dp,)),
                "logical_dp_group": SetVal(()),
            }

    cmp = compare_dumps(selftest.ref_dump, _perturbed(selftest, split))
    assert cmp.flows is not None and cmp.flows.ok and cmp.ok


def test_port_binding_option_change_is_reported(selftest: ParityResult) -> None:
    uuid, row = next((u, r) for u, r in selftest.ours_dump.rows("Port_Binding").items() if r["options"].items)

    def change(d: SbDump) -> None:
        d.tables["Port_Binding"][uuid]["options"] = MapVal((*row["options"].items, ("zzz", "1")))

    cmp = compare_dumps(selftest.ref_dump, _perturbed(selftest, change), tables=["Port_Binding"])
    pb = cmp.tables["Port_Binding"]
    assert not pb.ok and cmp.flows is None and list(cmp.tables) == ["Port_Binding"]
    (diff,) = pb.differing
    assert diff.key == row["logical_port"] and diff.columns == {"options": "+zzz=1"}


def test_dropped_datapath_is_missing(selftest: ParityResult) -> None:
    uuid = next(iter(selftest.ours_dump.rows("Datapath_Binding")))
    cmp = compare_dumps(
        selftest.ref_dump,
        _perturbed(selftest, lambda d: d.tables["Datapath_Binding"].pop(uuid)),
        tables=["Datapath_Binding"],
    )
    assert len(cmp.tables["Datapath_Binding"].missing) == 1 and not cmp.ok


def test_tunnel_keys_are_ignored_but_mc_group_keys_are_not(selftest: ParityResult) -> None:
    def renumber(d: SbDump) -> None:
        for table in ("Datapath_Binding", "Port_Binding"):
            for r in d.tables[table].values():
                r["tunnel_key"] += 1000

    assert compare_dumps(selftest.ref_dump, _perturbed(selftest, renumber)).ok
    uuid = next(iter(selftest.ours_dump.rows("Multicast_Group")))
    bumped = _perturbed(selftest, lambda d: d.tables["Multicast_Group"][uuid].update(tunnel_key=40000))
    assert not compare_dumps(selftest.ref_dump, bumped).tables["Multicast_Group"].ok


def test_random_macs_compared_by_presence_and_consistency(selftest: ParityResult) -> None:
    (sb_uuid,) = selftest.ours_dump.rows("SB_Global")
    old_mac = selftest.ours_dump.rows("SB_Global")[sb_uuid]["options"].as_dict()["svc_monitor_mac"]

    def set_options(d: SbDump, **changes: str | None) -> None:
        opts = d.tables["SB_Global"][sb_uuid]["options"].as_dict()
        for k, v in changes.items():
            if v is None:
                opts.pop(k)
            else:
                opts[k] = v
        d.tables["SB_Global"][sb_uuid]["options"] = MapVal(tuple(sorted(opts.items())))

    def set_svc_mac_set(d: SbDump, mac: str) -> None:
        for r in d.tables["Address_Set"].values():
            if r["name"] == "svc_monitor_mac":
                r["addresses"] = SetVal((mac,))

    def consistent(d: SbDump) -> None:
        set_options(d, mac_prefix="aa:bb:cc", svc_monitor_mac="02:00:00:00:00:42")
        set_svc_mac_set(d, "02:00:00:00:00:42")

    assert compare_dumps(selftest.ref_dump, _perturbed(selftest, consistent)).ok
    inconsistent = _perturbed(selftest, lambda d: set_options(d, svc_monitor_mac="02:00:00:00:00:42"))
    assert old_mac != "02:00:00:00:00:42"
    assert not compare_dumps(selftest.ref_dump, inconsistent).tables["Address_Set"].ok
    dropped = _perturbed(selftest, lambda d: set_options(d, mac_prefix=None))
    assert not compare_dumps(selftest.ref_dump, dropped).tables["SB_Global"].ok
    # Configured in the NB: compared exactly.
    assert not compare_dumps(selftest.ref_dump, _perturbed(selftest, consistent), random_options=()).ok


def test_unknown_table_is_rejected(selftest: ParityResult) -> None:
    with pytest.raises(ValueError, match="Nope"):
        compare_dumps(selftest.ref_dump, selftest.ours_dump, tables=["Nope"])


# --------------------------------------------------------------------------- other sources and daemons


def test_nb_file_source_and_detached_command_daemon(selftest: ParityResult, tmp_path: Path) -> None:
    assert selftest.workdir is not None
    seed = selftest.workdir / "nb-seed.db"
    result = run_parity(
        seed, ours_cmd=REF_DETACHED, workdir=tmp_path / "w", tables=[FLOW_TABLE, "Port_Binding"]
    )
    assert_parity(result)
    assert result.flows is not None and selftest.flows is not None
    assert result.flows.ref_count == selftest.flows.ref_count
    assert len(result.ours.pids) == 4 and all(process_gone(p) for p in result.ours.pids)


def test_callable_source_via_conftest_runner(parity_run: Callable[..., ParityResult]) -> None:
    builder = nbctl_commands(
        ["ls-add", "sw0"],
        ["lsp-add", "sw0", "p0"],
        ["lsp-set-addresses", "p0", "00:00:00:00:00:01 10.0.0.2"],
        ["lb-add", "lb0", "10.0.0.100:80", "10.0.0.2:8080", "tcp"],
        ["ls-lb-add", "sw0", "lb0"],
    )
    result = parity_run(builder, reference_both=True)
    assert_parity(result)
    assert result.tables["Load_Balancer"].ref_count == 1


def test_foreground_command_daemon(tmp_path: Path) -> None:
    result = run_parity(nbctl_commands(["ls-add", "sw0"]), ours_cmd=REF_FOREGROUND, workdir=tmp_path)
    assert_parity(result)
    assert all(process_gone(p) for p in result.ours.pids)


def test_failing_daemon_is_reported_and_cleaned_up(tmp_path: Path) -> None:
    cmd = "{python} -c 'import sys; sys.exit(3)'"
    result = run_parity(nbctl_commands(["ls-add", "sw0"]), ours_cmd=cmd, workdir=tmp_path, settle_timeout=20)
    assert not result.ok and not result.ours.settled
    assert result.ours.error is not None and "rc=3" in result.ours.error
    assert result.flows is not None and result.flows.ours_count == 0 and result.flows.missing > 0
    assert "NOT SETTLED" in result.report()
    assert all(process_gone(p) for p in result.reference.pids + result.ours.pids)


def test_failing_builder_raises_and_stops_the_build_server(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="ovn-nbctl failed"):
        run_parity(nbctl_commands(["no-such-command"]), reference_both=True, workdir=tmp_path)
    assert _live_processes_mentioning(tmp_path) == []


def test_cli(tmp_path: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "ovn_northd_py.parity",
        "--switches",
        "2",
        "--ports",
        "2",
        "--gw-routers",
        "1",
    ]
    ok = subprocess.run([*base, "--reference-both"], capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "RESULT: PARITY" in ok.stdout and "ls_in_l2_lkup" in ok.stdout
    bad = subprocess.run(
        [*base, "--ours-cmd", "false", "--keep", "--tables", "Logical_Flow"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1 and "RESULT: DIFFERENT" in bad.stdout
    kept = Path(bad.stdout.split("work dir: ")[1].split()[0])
    assert (kept / "ours" / "sb.db").exists()
    subprocess.run(["rm", "-rf", str(kept)], check=True)
