"""Where a release's chassis (ovn-controller, OVS) comes from (``devtools/tools.py``): its Debian
chroot once ``scripts/chroots.sh --with-host`` has installed and recorded it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovn_northd_py.devtools import tools
from ovn_northd_py.release import get_release


def _chroot(root: Path, suite: str, host_packages: str | None) -> Path:
    d = root / suite
    d.mkdir(parents=True)
    (d / tools.VERSION_FILE).write_text("25.03.0-1\n")
    if host_packages is not None:
        (d / tools.HOST_VERSION_FILE).write_text(host_packages)
    return d


def test_chassis_of_a_chroot_without_host_packages_names_the_command(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tools, "CHROOT_ROOT", tmp_path)
    _chroot(tmp_path, "trixie", None)
    assert tools.tools_for("25.03", from_chroot=True).available()
    with pytest.raises(tools.ToolsUnavailable, match=r"chroots\.sh --with-host trixie"):
        tools.chassis_tools_for("25.03", from_chroot=True)


def test_chassis_of_a_chroot_with_host_packages_runs_in_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tools, "CHROOT_ROOT", tmp_path)
    d = _chroot(tmp_path, "trixie", "ovn-host 25.03.0-1\nopenvswitch-switch 3.5.0-1+b1\n")
    t = tools.chassis_tools_for(get_release("25.03"), from_chroot=True)
    assert t.chassis_packages() == "ovn-host 25.03.0-1, openvswitch-switch 3.5.0-1+b1"
    assert t.cmd("ovn-controller", "--version") == ["chroot", str(d), "ovn-controller", "--version"]
    assert t.path(d / "dp1hv-x" / "db.sock") == "/dp1hv-x/db.sock"
