"""Operator drop-in, Debian's init script: /usr/share/ovn/scripts/ovn-ctl start_northd / status_northd /
stop_northd run ours (an `ovn-northd` symlink to our console script first in PATH, as the README's
switch-over does with /usr/local/bin/ovn-northd) with a temp rundir, logdir and dbdir."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import pid_alive, stop_pid
from ovn_northd_py.devtools.testing import wait_until

OVN_CTL = "/usr/share/ovn/scripts/ovn-ctl"
ENTRY = Path(sys.executable).parent / "ovn-northd-py"  # what `pip install` puts next to the interpreter


@pytest.mark.skipif(not Path(OVN_CTL).exists(), reason="Debian's ovn-central is not installed")
def test_ovn_ctl_starts_reports_and_stops_ours(env, tmp_path: Path):
    assert ENTRY.exists(), f"{ENTRY}: install the package (scripts/setup.sh) first"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "ovn-northd").symlink_to(ENTRY)
    run = tmp_path / "run"
    e = dict(os.environ, OVN_RUNDIR=str(run), OVN_LOGDIR=str(tmp_path / "log"), OVN_DBDIR=str(tmp_path / "db"),
             OVS_RUNDIR=str(run), PATH=f"{bindir}:{os.environ['PATH']}")

    def ovn_ctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([OVN_CTL, *args, "--ovn-manage-ovsdb=no"], env=e, capture_output=True, text=True,
                              timeout=60, check=False)

    r = ovn_ctl("start_northd", f"--ovn-northd-nb-db={env.nb.remote}", f"--ovn-northd-sb-db={env.sb.remote}")
    assert r.returncode == 0, r  # and it returned: --detach really detaches
    pid = int((run / "ovn-northd.pid").read_text())
    try:
        # ovn-ctl ran ours, with its usual options (-vconsole:emer ... --monitor --detach).
        cmdline = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
        assert any("ovn-northd" in c for c in cmdline[:2]) and "-vconsole:emer" in cmdline and "--detach" in cmdline
        assert Path(f"/proc/{pid}/exe").resolve().name.startswith("python")  # ours, not /usr/bin/ovn-northd
        assert Path(f"/proc/{pid}/comm").read_text().strip() == "ovn-northd"  # what ovn-lib's pid_comm_check wants
        env.nbctl("ls-add", "sw0", wait="sb", timeout=30)
        st = subprocess.run(["ovn-appctl", "-t", "ovn-northd", "status"], env=e, capture_output=True, text=True,
                            timeout=15, check=False)
        assert st.stdout == "Status: active\n"
        r = ovn_ctl("status_northd")
        assert r.returncode == 0 and f"ovn-northd is running with pid {pid}" in r.stdout
        r = ovn_ctl("start_northd")
        assert r.returncode == 0 and "already running" in r.stdout
        assert int((run / "ovn-northd.pid").read_text()) == pid
        assert (tmp_path / "log" / "ovn-northd.log").read_text().count("first sync committed") == 1
        r = ovn_ctl("stop_northd")
        assert r.returncode == 0, r
        wait_until(lambda: not pid_alive(pid), 15, "ours to exit")
        assert not (run / "ovn-northd.pid").exists()
        assert not list(run.glob("*.ctl"))
        r = ovn_ctl("status_northd")
        assert r.returncode == 1 and "not running" in r.stdout
    finally:
        if pid_alive(pid):
            stop_pid(pid)
