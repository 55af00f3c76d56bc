"""Real ovsdb-servers for tests, the demo and the parity harness.

Each server lives in its own directory, listens on a unix socket and is stopped
by the PID it wrote.  Nothing here is a mock: these are Debian's binaries with
the OVN schemas shipped in ``ovn_northd_py/schemas``.  ``tools`` (default: the
host's) runs them from a release's Debian chroot instead (see ``tools.py``); the
work dir must then be inside the chroot (``tools.scratch_dir()``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..release import DEFAULT_RELEASE
from .tools import HOST, Tools

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
NB_SCHEMA = DEFAULT_RELEASE.nb_schema
SB_SCHEMA = DEFAULT_RELEASE.sb_schema


def free_port() -> int:
    """A free TCP port on the loopback address."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise TimeoutError(f"timed out waiting for {what}")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0): reap it if it is our child; otherwise read its state
    # (a detached daemon is re-parented and may be reaped late by PID 1).
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def stop_pid(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process does not go away."""
    if not pid_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    try:
        _wait_for(lambda: not pid_alive(pid), timeout, f"pid {pid} to exit")
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        _wait_for(lambda: not pid_alive(pid), 5.0, f"pid {pid} to die")


def kill_pid(pid: int, timeout: float = 10.0) -> None:
    """SIGKILL and wait until the process is gone."""
    if not pid_alive(pid):
        return
    os.kill(pid, signal.SIGKILL)
    _wait_for(lambda: not pid_alive(pid), timeout, f"pid {pid} to die")


def _listening(port: int | None) -> bool:
    import socket

    if port is None:
        return False
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass(slots=True)
class OvsdbServer:
    """One ovsdb-server with one database, in ``workdir``."""

    workdir: Path
    name: str  # "nb" or "sb"
    schema: Path
    db_file: Path | None = None  # start from this database file (copied) instead of an empty one
    tools: Tools = HOST
    # Also listen on ptcp:TCP_PORT:127.0.0.1 (``tcp_remote``); with ``db_remotes`` the server also
    # serves the Connection rows of the database (e.g. one with a short ``inactivity_probe``).
    tcp_port: int | None = None
    db_remotes: bool = False
    extra_args: list[str] = field(default_factory=list)  # e.g. SSL remotes and their PKI
    pid: int | None = field(default=None, init=False)

    @property
    def sock(self) -> Path:
        return self.workdir / f"{self.name}.sock"

    @property
    def remote(self) -> str:
        return f"unix:{self.sock}"

    @property
    def tcp_remote(self) -> str:
        assert self.tcp_port is not None
        return f"tcp:127.0.0.1:{self.tcp_port}"

    @property
    def db_name(self) -> str:
        return "OVN_Northbound" if "nb" in self.schema.name else "OVN_Southbound"

    @property
    def db_path(self) -> Path:
        return self.workdir / f"{self.name}.db"

    @property
    def pidfile(self) -> Path:
        return self.workdir / f"{self.name}.pid"

    @property
    def ctl(self) -> Path:
        return self.workdir / f"{self.name}.ctl"

    def start(self) -> OvsdbServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        t = self.tools
        if not self.db_path.exists():
            if self.db_file is not None:
                shutil.copyfile(self.db_file, self.db_path)
            else:
                schema = self.schema
                if not t.sees(schema):
                    schema = Path(shutil.copyfile(schema, self.workdir / f"{self.name}.ovsschema"))
                subprocess.run(t.cmd("ovsdb-tool", "create", t.path(self.db_path), t.path(schema)), check=True)
        for stale in (self.sock, self.pidfile):
            stale.unlink(missing_ok=True)
        extra = []
        if self.tcp_port is not None:
            extra.append(f"--remote=ptcp:{self.tcp_port}:127.0.0.1")
        if self.db_remotes:
            table = "NB_Global" if self.db_name == "OVN_Northbound" else "SB_Global"
            extra.append(f"--remote=db:{self.db_name},{table},connections")
        subprocess.run(
            t.cmd(
                "ovsdb-server",
                "--detach",
                "-vconsole:off",
                "--no-chdir",
                f"--pidfile={t.path(self.pidfile)}",
                f"--remote=punix:{t.path(self.sock)}",
                *extra,
                f"--unixctl={t.path(self.ctl)}",
                f"--log-file={t.path(self.workdir / (self.name + '-ovsdb.log'))}",
                *self.extra_args,
                t.path(self.db_path),
            ),
            check=True,
        )
        _wait_for(lambda: self.pidfile.exists() and self.sock.exists(), 10.0, f"{self.name} ovsdb-server")
        self.pid = int(self.pidfile.read_text().strip())
        if self.tcp_port is not None:
            _wait_for(lambda: _listening(self.tcp_port), 10.0, f"{self.name} ovsdb-server on tcp")
        return self

    def kill(self) -> None:
        """kill -9 (the database file stays; ``start()`` serves it again)."""
        if self.pid is not None:
            kill_pid(self.pid)
            self.pid = None

    def stop(self) -> None:
        if self.pid is not None:
            stop_pid(self.pid)
            self.pid = None

    def backup(self, dest: Path) -> Path:
        """A standalone copy of the live database (ovsdb-client backup)."""
        with open(dest, "wb") as out:
            subprocess.run(self.tools.cmd("ovsdb-client", "backup", self.tools.remote(self.remote)),
                           stdout=out, check=True)
        return dest


def nbctl(remote: str, *args: str, wait: str | None = None, timeout: int = 60, tools: Tools = HOST) -> str:
    opts = [f"--db={tools.remote(remote)}", f"--timeout={timeout}"]
    if wait:
        opts.append(f"--wait={wait}")
    cmd = tools.cmd("ovn-nbctl", *opts, *args)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def sbctl(remote: str, *args: str, timeout: int = 60, tools: Tools = HOST) -> str:
    cmd = tools.cmd("ovn-sbctl", f"--db={tools.remote(remote)}", f"--timeout={timeout}", *args)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


@dataclass(slots=True)
class ReferenceNorthd:
    """Debian's C ovn-northd, the oracle (of ``tools.release``; the host's by default)."""

    workdir: Path
    nb_remote: str
    sb_remote: str
    binary: str = "/usr/bin/ovn-northd"
    tools: Tools = HOST
    pid: int | None = field(default=None, init=False)

    def start(self) -> ReferenceNorthd:
        pidfile = self.workdir / "ref-northd.pid"
        pidfile.unlink(missing_ok=True)
        t = self.tools
        subprocess.run(
            t.cmd(
                self.binary,
                "--detach",
                "-vconsole:off",
                "--no-chdir",
                f"--pidfile={t.path(pidfile)}",
                f"--ovnnb-db={t.remote(self.nb_remote)}",
                f"--ovnsb-db={t.remote(self.sb_remote)}",
                f"--log-file={t.path(self.workdir / 'ref-northd.log')}",
                f"--unixctl={t.path(self.workdir / 'ref-northd.ctl')}",
            ),
            check=True,
        )
        _wait_for(pidfile.exists, 10.0, "reference ovn-northd")
        self.pid = int(pidfile.read_text().strip())
        return self

    def stop(self) -> None:
        if self.pid is not None:
            stop_pid(self.pid)
            self.pid = None


@dataclass(slots=True)
class OurNorthd:
    """ovn-northd-py as a subprocess, with the same command line as the C daemon."""

    workdir: Path
    nb_remote: str
    sb_remote: str
    name: str = "ours"
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # added to the environment (e.g. draft profiles)
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @property
    def log_file(self) -> Path:
        return self.workdir / f"{self.name}-northd.log"

    def start(self) -> OurNorthd:
        import sys

        cmd = [
            sys.executable, "-m", "ovn_northd_py",
            f"--ovnnb-db={self.nb_remote}", f"--ovnsb-db={self.sb_remote}",
            f"--log-file={self.log_file}", "--log-format=json",
            f"--pidfile={self.workdir / (self.name + '-northd.pid')}",
            f"--unixctl={self.ctl}",
            *self.extra_args,
        ]
        with open(self.workdir / f"{self.name}.err", "ab") as err:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                         env={**os.environ, **self.env} if self.env else None)
        return self

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def ctl(self) -> Path:
        """The control socket (ovn-appctl -t CTL ...)."""
        return self.workdir / f"{self.name}-northd.ctl"

    def appctl(self, *args: str, timeout: int = 10) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ovn-appctl", "-T", str(timeout), "-t", str(self.ctl), *args],
                              capture_output=True, text=True, timeout=timeout + 5, check=False)

    def stop(self) -> None:
        if self.proc is not None:
            stop_pid(self.proc.pid)
            self.proc.wait()
            self.proc = None

    def log_records(self) -> list[dict]:
        import json

        out = []
        if self.log_file.exists():
            for line in self.log_file.read_text().splitlines():
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out


def appctl(ctl: Path, *args: str, timeout: int = 10) -> str:
    return subprocess.run(["ovs-appctl", f"--timeout={timeout}", "-t", str(ctl), *args],
                          check=True, capture_output=True, text=True).stdout


@dataclass(slots=True)
class ClusterMember:
    """One ovsdb-server of a RAFT cluster: its own database file, pidfile and unixctl in ``workdir``."""

    workdir: Path
    name: str  # e.g. "sb1"
    db_name: str  # OVN_Northbound / OVN_Southbound
    raft_port: int
    client_port: int
    extra_args: list[str] = field(default_factory=list)  # more ovsdb-server options (e.g. -vjsonrpc:file:dbg)
    pid: int | None = field(default=None, init=False)

    @property
    def db_path(self) -> Path:
        return self.workdir / f"{self.name}.db"

    @property
    def pidfile(self) -> Path:
        return self.workdir / f"{self.name}.pid"

    @property
    def ctl(self) -> Path:
        return self.workdir / f"{self.name}.ctl"

    @property
    def log_file(self) -> Path:
        return self.workdir / f"{self.name}-ovsdb.log"

    @property
    def remote(self) -> str:
        return f"tcp:127.0.0.1:{self.client_port}"

    @property
    def raft_address(self) -> str:
        return f"tcp:127.0.0.1:{self.raft_port}"

    def start(self) -> ClusterMember:
        self.pidfile.unlink(missing_ok=True)
        subprocess.run(
            ["ovsdb-server", "--detach", "-vconsole:off", "--no-chdir", f"--pidfile={self.pidfile}",
             f"--remote=ptcp:{self.client_port}:127.0.0.1", f"--unixctl={self.ctl}",
             f"--log-file={self.log_file}", *self.extra_args, str(self.db_path)],
            check=True,
        )
        _wait_for(self.pidfile.exists, 10.0, f"{self.name} ovsdb-server")
        self.pid = int(self.pidfile.read_text().strip())
        _wait_for(lambda: _listening(self.client_port), 10.0, f"{self.name} ovsdb-server on tcp")
        return self

    def stop(self) -> None:
        if self.pid is not None:
            stop_pid(self.pid)
            self.pid = None

    def kill(self) -> None:
        if self.pid is not None:
            kill_pid(self.pid)
            self.pid = None

    def status(self) -> str:
        """``cluster/status`` of this member ('' if it does not answer)."""
        if self.pid is None:
            return ""
        try:
            return appctl(self.ctl, "cluster/status", self.db_name, timeout=5)
        except subprocess.SubprocessError:
            return ""

    def role(self) -> str:
        for line in self.status().splitlines():
            if line.startswith("Role:"):
                return line.split(":", 1)[1].strip()
        return ""


@dataclass(slots=True)
class OvsdbCluster:
    """A RAFT cluster of ``size`` ovsdb-servers for one database, on 127.0.0.1 TCP ports.

    ``remote`` lists every member, comma-separated, as clients of a clustered database are given.
    Members are stopped (or killed) by the PIDs they wrote and restarted on their database files.
    """

    workdir: Path
    name: str  # "nb" or "sb"
    schema: Path
    size: int = 3
    server_args: list[str] = field(default_factory=list)  # more ovsdb-server options for every member
    members: list[ClusterMember] = field(default_factory=list, init=False)

    @property
    def db_name(self) -> str:
        return "OVN_Northbound" if "nb" in self.schema.name else "OVN_Southbound"

    @property
    def remote(self) -> str:
        return ",".join(m.remote for m in self.members)

    def start(self) -> OvsdbCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        ports: set[int] = set()
        while len(ports) < 2 * self.size:
            ports.add(free_port())
        plist = sorted(ports)
        self.members = [ClusterMember(self.workdir, f"{self.name}{i + 1}", self.db_name, plist[2 * i],
                                      plist[2 * i + 1], list(self.server_args)) for i in range(self.size)]
        first = self.members[0]
        subprocess.run(["ovsdb-tool", "create-cluster", str(first.db_path), str(self.schema), first.raft_address],
                       check=True)
        for m in self.members[1:]:
            subprocess.run(["ovsdb-tool", "join-cluster", str(m.db_path), self.db_name, m.raft_address,
                            first.raft_address], check=True)
        try:
            for m in self.members:
                m.start()
            _wait_for(lambda: all("Status: cluster member" in m.status() for m in self.members), 30.0,
                      f"{self.name} cluster members to join")
            self.wait_leader()
        except BaseException:
            self.stop()
            raise
        return self

    def leader(self) -> ClusterMember | None:
        for m in self.members:
            if m.pid is not None and m.role() == "leader":
                return m
        return None

    def wait_leader(self, timeout: float = 30.0) -> ClusterMember:
        found: list[ClusterMember] = []

        def one() -> bool:
            m = self.leader()
            if m is not None:
                found.append(m)
            return m is not None

        _wait_for(one, timeout, f"a {self.name} cluster leader")
        return found[-1]

    def stop(self) -> None:
        for m in self.members:
            m.stop()
