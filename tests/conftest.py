"""Shared fixtures: real ovsdb-servers with the OVN schemas, in a temp dir, stopped by PID."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OurNorthd, OvsdbServer, nbctl, sbctl


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--northd", choices=("py", "c"), default=None,
        help="northd for tests/dataplane: py (ovn-northd-py, default) or c (/usr/bin/ovn-northd); "
        "env DATAPLANE_NORTHD also works",
    )
    parser.addoption(
        "--release", default=None,
        help="OVN release of tests/dataplane: 23.03 (default: the host's OVS and ovn-controller), 25.03 or "
        "26.03 (servers, C northd, OVS and ovn-controller from that release's Debian chroot, built by "
        "scripts/chroots.sh --with-host; ours serves it with that release's profile); env DATAPLANE_RELEASE",
    )
    parser.addoption(
        "--chassis-release", default=None,
        help="OVN release of the chassis (ovn-controller, OVS) of tests/dataplane when not --release's, "
        "e.g. 23.03 (the host's) under a 25.03 northd; env DATAPLANE_CHASSIS_RELEASE",
    )


@dataclass
class Env:
    workdir: Path
    nb: OvsdbServer
    sb: OvsdbServer

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout)

    def sbctl(self, *args: str, timeout: int = 30) -> str:
        return sbctl(self.sb.remote, *args, timeout=timeout)

    def sync(self, timeout: int = 30) -> None:
        self.nbctl("sync", wait="sb", timeout=timeout)

    def sb_rows(self, table: str) -> list[dict]:
        """All rows of an SB table, as {column: json value} (ovsdb-client dump)."""
        out = subprocess.run(
            ["ovsdb-client", "dump", "--format=json", self.sb.remote, "OVN_Southbound", table],
            check=True, capture_output=True, text=True,
        ).stdout
        doc = json.loads(out)
        tbl = doc[0] if isinstance(doc, list) else doc
        cols = tbl["headings"]
        return [dict(zip(cols, r)) for r in tbl["data"]]

    def sb_get(self, table: str, record: str, column: str) -> str:
        return self.sbctl("--bare", f"--columns={column}", "find", table, record).strip()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    nb = OvsdbServer(tmp_path, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(tmp_path, "sb", SB_SCHEMA).start()
    try:
        yield Env(tmp_path, nb, sb)
    finally:
        sb.stop()
        nb.stop()


@pytest.fixture
def ours(env: Env) -> Iterator[OurNorthd]:
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
def started() -> Iterator[list[OurNorthd]]:
    """Daemons a test starts itself (append them); stopped by PID at the end, last first."""
    ds: list[OurNorthd] = []
    try:
        yield ds
    finally:
        for d in reversed(ds):
            d.stop()
