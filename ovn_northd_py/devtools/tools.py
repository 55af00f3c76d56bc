"""Where the OVS/OVN tools of one OVN release run: the host's own, or a Debian chroot's.

The reference ``ovn-northd`` of every release comes from Debian: ``bookworm`` has OVN 23.03,
``trixie`` 25.03, ``sid`` 26.03.  ``scripts/chroots.sh SUITE`` builds a minimal chroot of that suite
once per machine under :data:`CHROOT_ROOT`; its tools (``ovsdb-server``, ``ovn-northd``,
``ovn-nbctl``, ``ovn-sbctl``, ``ovsdb-client``, ``ovsdb-tool``) run with ``chroot ROOT TOOL`` on
files and unix sockets in a work dir inside the chroot tree: no mounts.  The host reaches the same
sockets through the host path (``ROOT/run-XXXX/nb.sock`` is ``/run-XXXX/nb.sock`` inside).

:func:`tools_for` picks the host's tools when the host's own OVN is the release asked for (unless
``from_chroot`` or ``OVN_NORTHD_PY_FROM_CHROOT=1``), else the release's chroot.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..release import DEFAULT_RELEASE, Release, get_release

CHROOT_ROOT = Path(os.environ.get("OVN_NORTHD_PY_CHROOTS", "/var/cache/ovn-northd-py/chroots"))
VERSION_FILE = "ovn-northd-py.version"  # at a complete chroot's root: its exact ovn-central version
FROM_CHROOT_ENV = "OVN_NORTHD_PY_FROM_CHROOT"
TOOLS = ("ovsdb-server", "ovsdb-client", "ovsdb-tool", "ovn-nbctl", "ovn-sbctl", "ovn-northd")
# A chassis of the release (the dataplane suite): ``scripts/chroots.sh --with-host`` installs them
# and records their packages' versions in HOST_VERSION_FILE ("package version" a line).
HOST_VERSION_FILE = "ovn-northd-py.host-version"
CHASSIS_TOOLS = ("ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ovn-controller")


class ToolsUnavailable(RuntimeError):
    """The tools of a release are not installed (no chroot built, no host package)."""


@functools.cache
def host_ovn_version() -> str | None:
    """The host's ovn-central package version (``23.03.1-1~deb12u2``), None when not installed."""
    try:
        proc = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "ovn-central"], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def release_name_of(package_version: str) -> str:
    """``23.03.1-1~deb12u2`` -> ``23.03`` (an epoch, if any, dropped)."""
    upstream = package_version.partition(":")[2] or package_version
    return ".".join(upstream.split(".")[:2])


@dataclass(frozen=True, slots=True)
class Tools:
    """The tools of ``release``, from ``root`` (a chroot) or the host (``root=None``)."""

    release: Release
    root: Path | None = None

    @property
    def package_version(self) -> str:
        if self.root is None:
            return host_ovn_version() or "not installed"
        return (self.root / VERSION_FILE).read_text().strip()

    @property
    def where(self) -> str:
        return "host" if self.root is None else f"Debian {self.release.suite} chroot {self.root}"

    def describe(self) -> str:
        """``ovn-northd 25.03.0-1 (OVN 25.03, Debian trixie chroot /var/cache/...)``."""
        return f"ovn-northd {self.package_version} (OVN {self.release.name}, {self.where})"

    def sees(self, path: Path | str) -> bool:
        """``path`` (a host path) is reachable by the tools."""
        if self.root is None:
            return True
        return Path(path).resolve().is_relative_to(self.root.resolve())

    def path(self, path: Path | str) -> str:
        """A host path as the tools see it."""
        if self.root is None:
            return str(path)
        resolved = Path(path).resolve()
        try:
            return "/" + str(resolved.relative_to(self.root.resolve()))
        except ValueError:
            raise ToolsUnavailable(f"{path} is outside the chroot {self.root}") from None

    def remote(self, remote: str) -> str:
        """An OVSDB remote (``unix:HOSTPATH``, ``tcp:...``) as the tools see it."""
        for kind in ("unix:", "punix:"):
            if remote.startswith(kind):
                return kind + self.path(remote[len(kind):])
        return remote

    def cmd(self, tool: str, *args: str) -> list[str]:
        """The argv running ``tool args`` (paths in ``args`` already translated with :meth:`path`)."""
        return [tool, *args] if self.root is None else ["chroot", str(self.root), tool, *args]

    def scratch_dir(self, prefix: str = "run-") -> Path:
        """A new empty directory the tools can use (in the chroot tree: no mount needed)."""
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.root))

    def schema(self, db: str) -> Path:
        """The release's own schema file (``nb`` / ``sb``) as the host sees it."""
        name = {"nb": "ovn-nb.ovsschema", "sb": "ovn-sb.ovsschema"}[db]
        base = Path("/usr/share/ovn") if self.root is None else self.root / "usr/share/ovn"
        return base / name

    def available(self) -> bool:
        if self.root is None:
            return host_ovn_version() is not None and all(shutil.which(t) for t in TOOLS)
        return (self.root / VERSION_FILE).is_file()

    def chassis_available(self) -> bool:
        """ovn-controller and OVS are there too (the host's, or ``chroots.sh --with-host``)."""
        if self.root is None:
            return all(shutil.which(t) for t in CHASSIS_TOOLS)
        return (self.root / HOST_VERSION_FILE).is_file()

    def chassis_packages(self) -> str:
        """``ovn-host 25.03.0-1, openvswitch-switch 3.5.0-1+b1`` (what a chassis of these tools runs)."""
        if self.root is None:
            versions = []
            for pkg in ("ovn-host", "openvswitch-switch"):
                proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                                      text=True, check=False)
                versions.append(f"{pkg} {proc.stdout.strip() if proc.returncode == 0 else 'not installed'}")
            return ", ".join(versions)
        return ", ".join((self.root / HOST_VERSION_FILE).read_text().split("\n")).strip(", ")


HOST = Tools(DEFAULT_RELEASE)


def chroot_dir(release: Release) -> Path:
    return CHROOT_ROOT / release.suite


def chroot_tools(release: Release | str) -> Tools:
    """The tools of ``release`` from its chroot; ToolsUnavailable when that chroot is not built."""
    rel = get_release(release) if isinstance(release, str) else release
    tools = Tools(rel, chroot_dir(rel))
    if not tools.available():
        raise ToolsUnavailable(
            f"no complete {rel.suite} chroot for OVN {rel.name} in {tools.root}: "
            f"run `bash scripts/chroots.sh {rel.suite}` (as root)"
        )
    return tools


def chassis_tools_for(release: Release | str = DEFAULT_RELEASE, from_chroot: bool | None = None) -> Tools:
    """:func:`tools_for`, with ovn-controller and OVS too (ToolsUnavailable when its chroot lacks
    them: ``scripts/chroots.sh --with-host SUITE``)."""
    tools = tools_for(release, from_chroot)
    if not tools.chassis_available():
        where = ("the host: install ovn-host openvswitch-switch" if tools.root is None else
                 f"{tools.root}: run `bash scripts/chroots.sh --with-host {tools.release.suite}` (as root)")
        raise ToolsUnavailable(f"no ovn-controller/ovs-vswitchd of OVN {tools.release.name} in {where}")
    return tools


def from_chroot_default() -> bool:
    return os.environ.get(FROM_CHROOT_ENV, "") not in ("", "0")


def tools_for(release: Release | str = DEFAULT_RELEASE, from_chroot: bool | None = None) -> Tools:
    """The tools of ``release``: the host's when they are that release and ``from_chroot`` is off
    (default: ``$OVN_NORTHD_PY_FROM_CHROOT``), else its chroot's."""
    rel = get_release(release) if isinstance(release, str) else release
    if from_chroot is None:
        from_chroot = from_chroot_default()
    host = host_ovn_version()
    if not from_chroot and host is not None and release_name_of(host) == rel.name:
        return Tools(rel)
    return chroot_tools(rel)
