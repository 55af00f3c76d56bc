"""The daemon serves only the OVN releases it has a flow profile for (23.03, 25.03, 26.03), chosen
from the schema versions; it refuses the others (a release after 26.03: fabricated here, a copy of
26.03's schemas with the versions NB 8.0.0 and SB 22.0.0).

Real ovsdb-servers (the host's) serve each release's shipped schemas (ovn_northd_py/schemas/<release>/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import flows_not_of_profile, free_port, metric, wait_until
from ovn_northd_py.lflow.profile import OVN_25_03, OVN_26_03
from ovn_northd_py.release import RELEASES, Release

# A release we have no profile for: the next schema majors (no OVN release has them yet).
FUTURE_NB, FUTURE_SB = "8.0.0", "22.0.0"


def future_release(tmp_path: Path) -> Release:
    """26.03's schemas, copied with the versions of a release we have no profile for."""
    d = tmp_path / "future-schemas"
    d.mkdir(exist_ok=True)
    base = RELEASES["26.03"]
    for src, version in ((base.nb_schema, FUTURE_NB), (base.sb_schema, FUTURE_SB)):
        doc = json.loads(src.read_text())
        doc["version"] = version
        (d / src.name).write_text(json.dumps(doc))
    return Release("99.03", "none", FUTURE_NB, FUTURE_SB, None, d)


@pytest.fixture
def servers_of(tmp_path: Path) -> Iterator:
    started: list[OvsdbServer] = []

    def start(release: Release) -> tuple[OvsdbServer, OvsdbServer]:
        wd = tmp_path / release.name
        nb = OvsdbServer(wd, "nb", release.nb_schema).start()
        started.append(nb)
        sb = OvsdbServer(wd, "sb", release.sb_schema).start()
        started.append(sb)
        return nb, sb

    try:
        yield start
    finally:
        for s in started:
            s.stop()


def run_ours(tmp_path: Path, nb: OvsdbServer, sb: OvsdbServer, *extra: str) -> tuple[int, list[dict]]:
    """Our daemon until it exits (it must, within 20 s): its exit status and its error records."""
    d = OurNorthd(tmp_path, nb.remote, sb.remote, name=f"ours-{nb.workdir.name}", extra_args=list(extra)).start()
    try:
        assert d.proc is not None
        rc = d.proc.wait(timeout=20)
        return rc, [r for r in d.log_records() if r.get("level") == "error"]
    finally:
        d.stop()


def test_databases_of_a_release_without_profile_are_refused_naming_both_versions(tmp_path, servers_of):
    nb, sb = servers_of(future_release(tmp_path))
    rc, errors = run_ours(tmp_path, nb, sb)
    assert rc == 2
    text = json.dumps(errors)
    # The servers' versions, that they are no release we know, and the profiles we do have.
    for needle in (FUTURE_NB, FUTURE_SB, "of no OVN release we know", "OVN 23.03 (NB 7.0.0, SB 20.27.0)",
                   "OVN 25.03 (NB 7.11.0, SB 20.41.0)", "OVN 26.03 (NB 7.18.0, SB 21.8.0)"):
        assert needle in text, (needle, errors)
    assert not _sb_flows(sb), "flows were written before refusing"


def _sb_flows(sb: OvsdbServer) -> list[str]:
    out = subprocess.run(
        ["ovsdb-client", "dump", "--format=json", sb.remote, "OVN_Southbound", "Logical_Flow"],
        check=True, capture_output=True, text=True,
    ).stdout
    doc = json.loads(out)
    return (doc[0] if isinstance(doc, list) else doc)["data"]


def test_ovn_release_cannot_force_the_26_03_profile_onto_older_schemas(tmp_path, servers_of):
    nb, sb = servers_of(RELEASES["25.03"])
    rc, errors = run_ours(tmp_path, nb, sb, "--ovn-release=26.03")
    assert rc == 2
    text = json.dumps(errors)
    assert "7.18.0" in text and "7.11.0" in text, errors


def test_ovn_release_cannot_force_a_profile_onto_another_schema_major(tmp_path, servers_of):
    nb, sb = servers_of(RELEASES["26.03"])  # SB 21.x
    rc, errors = run_ours(tmp_path, nb, sb, "--ovn-release=23.03")
    assert rc == 2
    text = json.dumps(errors)
    assert "20.27.0" in text and "21.8.0" in text, errors


def _serves(tmp_path: Path, nb: OvsdbServer, sb: OvsdbServer, *extra: str, release: str = "23.03"
            ) -> tuple[list[dict], float | None]:
    """Start ours on nb/sb, create a switch with a port, wait for SB; its log records and the
    metric ``ovn_northd_py_release_info{release=RELEASE}``."""
    port = free_port()
    d = OurNorthd(tmp_path, nb.remote, sb.remote, name=f"ours-{nb.workdir.name}",
                  extra_args=[f"--metrics-address=127.0.0.1:{port}", *extra]).start()
    try:
        nbctl(nb.remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb", timeout=30)
        assert d.proc is not None and d.proc.poll() is None
        assert _sb_flows(sb), "no logical flows written"
        wait_until(lambda: any(r.get("event") == "ovn release profile" for r in d.log_records()), 5,
                   "the profile to be logged")
        return d.log_records(), metric(port, "ovn_northd_py_release_info", f'{{release="{release}"}}')
    finally:
        d.stop()


def test_databases_of_23_03_get_the_23_03_profile_logged_and_in_metrics(tmp_path, servers_of):
    nb, sb = servers_of(RELEASES["23.03"])
    records, info = _serves(tmp_path, nb, sb)
    chosen = [r for r in records if r.get("event") == "ovn release profile"]
    assert [(r["release"], r["nb_schema"], r["sb_schema"], r["chosen_by"]) for r in chosen] == [
        ("23.03", "7.0.0", "20.27.0", "schemas")
    ]
    assert info == 1.0
    assert not [r for r in records if r.get("level") == "error"]


def test_ovn_release_forces_the_23_03_profile_onto_25_03_databases(tmp_path, servers_of):
    # The override is the operator's decision; the servers need only serve a 23.03 client.
    nb, sb = servers_of(RELEASES["25.03"])
    records, info = _serves(tmp_path, nb, sb, "--ovn-release=23.03")
    chosen = [r for r in records if r.get("event") == "ovn release profile"]
    assert [(r["release"], r["nb_schema"], r["sb_schema"], r["chosen_by"]) for r in chosen] == [
        ("23.03", "7.11.0", "20.41.0", "--ovn-release")
    ]
    assert info == 1.0


def test_databases_of_25_03_get_the_25_03_profile_and_its_flows(tmp_path, servers_of):
    nb, sb = servers_of(RELEASES["25.03"])
    records, info = _serves(tmp_path, nb, sb, release="25.03")
    chosen = [r for r in records if r.get("event") == "ovn release profile"]
    assert [(r["release"], r["nb_schema"], r["sb_schema"], r["chosen_by"]) for r in chosen] == [
        ("25.03", "7.11.0", "20.41.0", "schemas")
    ]
    assert info == 1.0
    assert not [r for r in records if r.get("level") == "error"]
    # 25.03's flows: its stages (ACL evaluation, one QoS stage, egress FDB) at its table ids, none of 23.03's.
    flows = _sb_flow_rows(sb)
    names = {dict(f["external_ids"][1])["stage-name"] for f in flows}
    assert {"ls_in_acl_eval", "ls_in_qos", "ls_out_lookup_fdb"} <= names and "ls_in_acl" not in names
    assert not flows_not_of_profile(flows, OVN_25_03)


def test_databases_of_26_03_get_the_26_03_profile_and_its_flows(tmp_path, servers_of):
    nb, sb = servers_of(RELEASES["26.03"])
    records, info = _serves(tmp_path, nb, sb, release="26.03")
    chosen = [r for r in records if r.get("event") == "ovn release profile"]
    assert [(r["release"], r["nb_schema"], r["sb_schema"], r["chosen_by"]) for r in chosen] == [
        ("26.03", "7.18.0", "21.8.0", "schemas")
    ]
    assert info == 1.0
    assert not [r for r in records if r.get("level") == "error"]
    # 26.03's flows: its stages (ct_extract, network functions) at its table ids, none of 23.03's.
    flows = _sb_flow_rows(sb)
    names = {dict(f["external_ids"][1])["stage-name"] for f in flows}
    assert {"ls_in_acl_eval", "ls_in_ct_extract", "ls_in_network_function"} <= names and "ls_in_acl" not in names
    assert not flows_not_of_profile(flows, OVN_26_03)


def _sb_flow_rows(sb: OvsdbServer) -> list[dict]:
    """SB's Logical_Flow rows as {column: OVSDB JSON datum}."""
    out = subprocess.run(
        ["ovsdb-client", "dump", "--format=json", sb.remote, "OVN_Southbound", "Logical_Flow"],
        check=True, capture_output=True, text=True,
    ).stdout
    doc = json.loads(out)
    tbl = doc[0] if isinstance(doc, list) else doc
    return [dict(zip(tbl["headings"], r, strict=True)) for r in tbl["data"]]


def test_version_lists_the_profiles():
    out = subprocess.run([sys.executable, "-m", "ovn_northd_py", "--version"], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert out[0].startswith("ovn-northd-py ")
    assert out[1] == ("OVN release profiles: OVN 23.03 (NB 7.0.0, SB 20.27.0), OVN 25.03 (NB 7.11.0, SB 20.41.0), "
                      "OVN 26.03 (NB 7.18.0, SB 21.8.0)")
    # Every known release is served: no "known, no profile yet" line.
    assert out[2].startswith("the profile is chosen from the connected NB/SB schema versions")


def _sb_global_version(sb: OvsdbServer) -> str:
    out = subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--timeout=10", "get", "SB_Global", ".",
                          "options:northd_internal_version"], capture_output=True, text=True, check=False).stdout
    return out.strip().strip('"')


@pytest.mark.parametrize("online", [False, True], ids=["restarted", "online"])
def test_databases_upgraded_to_26_03_switch_the_running_daemon_to_26_03(tmp_path, servers_of, online):
    """An upgrade of the central nodes converts the databases to the next release's schemas (ovn-ctl:
    ``ovsdb-tool convert`` before the server starts again, or ``ovsdb-client convert`` on a live
    one): the running daemon notices when it reconnects and serves the new release's profile."""
    old, new = RELEASES["25.03"], RELEASES["26.03"]
    nb, sb = servers_of(old)
    port = free_port()
    d = OurNorthd(tmp_path, nb.remote, sb.remote, name="ours-upgrade",
                  extra_args=[f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        nbctl(nb.remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb", timeout=30)
        assert _sb_global_version(sb) == OVN_25_03.northd_internal_version
        for server, schema in ((nb, new.nb_schema), (sb, new.sb_schema)):
            if online:
                subprocess.run(["ovsdb-client", "convert", server.remote, str(schema)], check=True, timeout=30)
            else:
                server.stop()
                subprocess.run(["ovsdb-tool", "convert", str(server.db_path), str(schema)], check=True)
                server.start()
        wait_until(lambda: _sb_global_version(sb) == OVN_26_03.northd_internal_version, 30,
                   "26.03's northd_internal_version in SB_Global")
        nbctl(nb.remote, "lsp-add", "sw0", "p2", wait="sb", timeout=30)
        assert d.proc is not None and d.proc.poll() is None
        switched = [r for r in d.log_records() if r.get("event", "").startswith("the databases are another")]
        assert [(r["old"], r["new"], r["sb_schema"]) for r in switched] == [("25.03", "26.03", "21.8.0")]
        flows = _sb_flow_rows(sb)
        assert {"ls_in_ct_extract", "ls_in_network_function"} <= {dict(f["external_ids"][1])["stage-name"]
                                                                  for f in flows}
        assert not flows_not_of_profile(flows, OVN_26_03)
        assert metric(port, "ovn_northd_py_release_info", '{release="26.03"}') == 1.0
    finally:
        d.stop()
