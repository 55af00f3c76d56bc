"""A real OVN dataplane on one machine, for tests: OVS (userspace ``netdev`` datapath) and
``ovn-controller`` in a private rundir, VIFs as OVS internal ports moved into network namespaces.

Everything started here is stopped by PID and every namespace created here is deleted by name;
:class:`Cleanup` collects what to undo so a test session can undo it even after a failure.
Traffic only flows between the namespaces created here (and loopback).

    stack = Stack(northd_kind="py").start()      # NB, SB, northd, chassis "hv1"
    topo = Topology(stack)
    topo.nbctl("ls-add", "sw")
    a = topo.vm("sw", "a", "00:00:00:00:01:01", "10.0.0.11/24")   # port, namespace, VIF
    b = topo.vm("sw", "b", "00:00:00:00:01:02", "10.0.0.12/24")
    topo.wait_up()                                 # claimed, and ovn-nbctl --wait=hv sync
    assert a.ns.ping("10.0.0.12")
    topo.destroy(); stack.clear_nb(); stack.stop()  # or cleanup_all() for everything

``Stack(release=get_release("25.03"))`` runs that release instead of the host's: its NB/SB
ovsdb-servers (its schemas), ``ovn-nbctl``/``ovn-sbctl``, the C ``ovn-northd`` (``northd_kind="c"``)
and the chassis (``ovsdb-server``, ``ovs-vswitchd``, ``ovn-controller``, ``ovs-vsctl``...) all come
from the release's Debian chroot (``scripts/chroots.sh --with-host SUITE``), run with
``chroot ROOT ...`` on rundirs inside the chroot tree (no mount: the chroot has its own
``/dev/net/tun``), in the namespaces created here; our daemon (the host's Python) serves them with
the release's profile.  ``chassis_release`` gives the chassis another release than the servers
(e.g. the host's 23.03 ovn-controller under a 25.03 northd).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ovn_northd_py.devtools.servers import (
    OurNorthd,
    OvsdbServer,
    ReferenceNorthd,
    _wait_for,
    nbctl,
    pid_alive,
    sbctl,
    stop_pid,
)
from ovn_northd_py.devtools.tools import CHROOT_ROOT, HOST, Tools, chassis_tools_for, tools_for
from ovn_northd_py.release import DEFAULT_RELEASE, DRAFT_ENV, Release

VSWITCH_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")  # the same path in a chroot
REQUIRED_BINARIES = (
    "ovsdb-server", "ovsdb-tool", "ovs-vsctl", "ovs-vswitchd", "ovn-controller", "ovs-appctl",
    "ovs-ofctl", "ip", "ss", "ping", "tcpdump", "socat", "nc", "busybox", "dhclient", "ethtool", "sysctl",
    "python3",
)

_counter = itertools.count(1)
# One prefix per process: names never collide with another run on the same machine, and tell
# whose they are (reap_stale).
_PREFIX = f"dp{os.getpid()}"

# ovn-controller log lines that mean a logical flow it received did not parse.
PARSE_ERROR_RE = re.compile(
    r"Syntax error|expecting address set name|expecting port group name|lflow\|WARN.*(parse|error)",
)


def environment_problems() -> list[str]:
    """Why this machine cannot run the dataplane suite (empty list: it can)."""
    import shutil

    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (network namespaces, OVS internal ports)")
    missing = [b for b in REQUIRED_BINARIES if shutil.which(b) is None]
    if missing:
        problems.append(f"missing binaries {missing} (run scripts/setup.sh)")
    if not VSWITCH_SCHEMA.exists():
        problems.append(f"{VSWITCH_SCHEMA} missing (openvswitch-common)")
    if not Path("/dev/net/tun").exists():
        problems.append("/dev/net/tun missing (the netdev datapath's internal ports are taps)")
    if not problems:
        probe = f"{_PREFIX}-probe"
        p = run(["ip", "netns", "add", probe], check=False)
        if p.returncode != 0:
            problems.append(f"cannot create a network namespace: {p.stderr.strip()}")
        else:
            run(["ip", "netns", "del", probe], check=False)
    return problems


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def reap_stale() -> list[str]:
    """Undo what an earlier run of this module left behind when it was killed (SIGKILL, OOM).

    Only things named after a process that no longer runs: daemons whose pidfile lies in a
    ``/tmp/dp<pid>...`` rundir and whose command line names that rundir, then the namespaces
    ``dp<pid>-...`` and the rundirs themselves.
    """
    import shutil

    def dead(prefix: str) -> bool:
        # the owner is gone (or its PID now belongs to something that is not a test run)
        return prefix != _PREFIX and "python" not in _cmdline(int(prefix[2:]))

    done = []
    dirs = [*Path("/tmp").glob("dp*"), *CHROOT_ROOT.glob("*/dp*")]
    for d in dirs:
        m = re.fullmatch(r"(dp\d+)(hv|st)-.*", d.name)
        if not m or not d.is_dir() or not dead(m.group(1)):
            continue
        for pidfile in d.glob("*.pid"):
            try:
                pid = int(pidfile.read_text().strip())
            except (OSError, ValueError):
                continue
            if f"/{d.name}/" in _cmdline(pid):  # a chroot's daemon names the path inside it
                stop_pid(pid)
                done.append(f"stopped {pid} ({pidfile.name})")
        shutil.rmtree(d, ignore_errors=True)
    names = run(["ip", "netns", "list"], check=False).stdout.split()
    for name in names:
        m = re.fullmatch(r"(dp\d+)-.*", name)
        if m and dead(m.group(1)):
            run(["ip", "netns", "del", name], check=False)
            done.append(f"deleted netns {name}")
    return done


def run(cmd: list[str], *, check: bool = True, timeout: float = 30, env: dict[str, str] | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=env, input=input)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip() or p.stdout.strip()}")
    return p


class Cleanup:
    """Undo actions, run last-in first-out; each failure is reported, none stops the others."""

    def __init__(self) -> None:
        self._actions: list[tuple[str, Callable[[], None]]] = []

    def add(self, what: str, action: Callable[[], None]) -> None:
        self._actions.append((what, action))

    def run(self) -> list[str]:
        errors = []
        while self._actions:
            what, action = self._actions.pop()
            try:
                action()
            except Exception as e:  # keep undoing the rest
                errors.append(f"{what}: {e}")
        return errors


# Everything created by this process, undone by ``cleanup_all`` (atexit and the session teardown).
SESSION_CLEANUP = Cleanup()
# Every stack started by this process (their logs outlive them until the session ends).
ALL_STACKS: list[Stack] = []


def cleanup_all() -> list[str]:
    return SESSION_CLEANUP.run()


atexit.register(cleanup_all)


@dataclass
class Namespace:
    """A network namespace created (and deleted) by us."""

    name: str
    procs: list[subprocess.Popen[str]] = field(default_factory=list)
    deleted: bool = False

    @classmethod
    def create(cls, hint: str) -> Namespace:
        name = f"{_PREFIX}-{hint}-{next(_counter)}"
        run(["ip", "netns", "add", name])
        ns = cls(name)
        SESSION_CLEANUP.add(f"netns {name}", ns.delete)
        ns.exec("ip", "link", "set", "lo", "up")
        # No IPv6 duplicate address detection delay; no routing between our interfaces.
        ns.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
        return ns

    def cmd(self, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *args]

    def exec(self, *args: str, check: bool = True, timeout: float = 30,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
        return run(self.cmd(*args), check=check, timeout=timeout, input=input)

    def popen(self, *args: str, stdout: int | None = subprocess.PIPE,
              stderr: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
        """A background process in the namespace, stopped (by PID) when the namespace is deleted."""
        p = subprocess.Popen(self.cmd(*args), stdout=stdout, stderr=stderr, text=True,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[str, str]:
        """Stop a background process by PID; its stdout and stderr."""
        if p.poll() is None:
            p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate(timeout=10)
        return out or "", err or ""

    def ping(self, dst: str, *, tries: int = 3, wait: float = 1, source: str | None = None) -> bool:
        """True once one echo request gets its reply (``tries`` attempts)."""
        args = ["ping", "-c1", "-W", str(wait), "-n"]
        if ":" in dst:
            args.append("-6")
        if source:
            args += ["-I", source]
        for i in range(tries):
            if self.exec(*args, dst, check=False, timeout=wait + 10).returncode == 0:
                return True
            if i + 1 < tries:
                time.sleep(0.3)
        return False

    def tcp_connect(self, host: str, port: int, *, timeout: float = 2, data: str = "",
                    tries: int = 1) -> tuple[int, str, str]:
        """nc to host:port: (exit code, what the server sent, nc's stderr); ``tries`` attempts
        until one gets the server's answer."""
        for i in range(tries):
            p = self.exec("nc", "-v", "-w", str(max(1, int(timeout))), "-N", host, str(port), check=False,
                          timeout=timeout + 15, input=data)
            if p.returncode == 0 and p.stdout.strip():
                break
            if i + 1 < tries:
                time.sleep(0.3)
        return p.returncode, p.stdout, p.stderr

    def tcp_server(self, port: int, reply: str = "", *, ipv6: bool = False) -> subprocess.Popen[str]:
        """socat TCP server: answers every connection with ``reply`` (default: the peer's address)."""
        proto = "TCP6-LISTEN" if ipv6 else "TCP4-LISTEN"
        answer = f"echo {reply}" if reply else "echo $SOCAT_PEERADDR"
        p = self.popen("socat", f"{proto}:{port},reuseaddr,fork", f"SYSTEM:{answer}")
        self.wait_listening(port)
        return p

    def wait_listening(self, port: int, proto: str = "t", timeout: float = 10) -> None:
        _wait_for(lambda: f":{port} " in self.exec("ss", f"-Hln{proto}", check=False).stdout,
                  timeout, f"a listener on port {port} in {self.name}")

    def capture(self, iface: str, bpf: str) -> subprocess.Popen[str]:
        """tcpdump on ``iface``, one line per frame matching ``bpf`` (stop with :meth:`frames`)."""
        p = self.popen("tcpdump", "-i", iface, "-nn", "-l", "-e", "--immediate-mode", "-Q", "in", bpf)
        # tcpdump says "listening on" once the filter is installed.
        assert p.stderr is not None
        seen = []
        for _ in range(5):
            line = p.stderr.readline()
            seen.append(line)
            if "listening on" in line:
                return p
            if not line:
                break
        raise RuntimeError(f"tcpdump in {self.name} did not start: {''.join(seen)}")

    def frames(self, p: subprocess.Popen[str]) -> list[str]:
        time.sleep(0.2)
        out, _ = self.stop(p, signal.SIGINT)
        return [ln for ln in out.splitlines() if ln.strip()]

    def can_connect(self, host: str, port: int, *, timeout: float = 2, tries: int = 3) -> bool:
        """A TCP connection to host:port is accepted and the server's greeting arrives."""
        rc, out, _ = self.tcp_connect(host, port, timeout=timeout, tries=tries)
        return rc == 0 and bool(out.strip())

    def cannot_connect(self, host: str, port: int, *, timeout: float = 1) -> bool:
        """One TCP connection attempt to host:port gets no answer within ``timeout``."""
        rc, out, _ = self.tcp_connect(host, port, timeout=timeout)
        return rc != 0 and not out.strip()

    def addresses(self, iface: str, family: str = "-6") -> list[str]:
        out = self.exec("ip", "-o", family, "addr", "show", "dev", iface).stdout
        return re.findall(r"inet6? (\S+)", out)

    def delete(self) -> None:
        if self.deleted:
            return
        for p in self.procs:
            if p.poll() is None:
                stop_pid(p.pid, timeout=5)
            with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
                p.communicate(timeout=5)
        self.procs.clear()
        run(["ip", "netns", "del", self.name], check=False)
        self.deleted = True


@dataclass
class Vif:
    ns: Namespace
    port: str  # the OVS port name, also the interface name inside the namespace
    iface_id: str  # the logical switch port
    mac: str


def _short_tmpdir(hint: str, tools: Tools = HOST) -> Path:
    # Unix socket paths are limited to 107 bytes: keep rundirs short (in a chroot: at its root).
    return Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{hint}-", dir=tools.root or "/tmp"))


@dataclass
class Chassis:
    """One hypervisor: its own Open_vSwitch ovsdb-server, ovs-vswitchd and ovn-controller."""

    sb_remote: str  # as the host sees it
    system_id: str = "hv1"
    encap_ip: str = "127.0.0.1"
    tools: Tools = HOST  # whose OVS and ovn-controller (a release's chroot: ``chassis_tools_for``)
    rundir: Path = None  # type: ignore[assignment]  # default: a new one the tools can reach
    pids: dict[str, int] = field(default_factory=dict)
    vifs: dict[str, Vif] = field(default_factory=dict)
    died: list[str] = field(default_factory=list)  # daemons found dead before we stopped them
    # ovs-vswitchd and ovn-controller run in a namespace of their own: the netdev datapath's taps
    # (ovs-netdev, br-int, the VIFs before they move) never collide with anything on the host.
    ns: Namespace | None = None

    def __post_init__(self) -> None:
        if self.rundir is None:
            self.rundir = _short_tmpdir("hv", self.tools)

    @property
    def db_sock(self) -> Path:
        return self.rundir / "db.sock"

    def _path(self, path: Path) -> str:
        return self.tools.path(path)

    @property
    def env(self) -> dict[str, str]:
        d = self._path(self.rundir)
        return {**os.environ, "OVS_RUNDIR": d, "OVS_DBDIR": d, "OVS_LOGDIR": d, "OVN_RUNDIR": d,
                "OVN_LOGDIR": d, "OVN_DBDIR": d}

    @property
    def controller_log(self) -> Path:
        return self.rundir / "ovn-controller.log"

    def _daemon(self, name: str, args: list[str]) -> None:
        pidfile = self.rundir / f"{name}.pid"
        # ovn-controller has no --unixctl: its socket is $OVN_RUNDIR/ovn-controller.<pid>.ctl.
        ctl = [] if name == "ovn-controller" else [f"--unixctl={self._path(self.rundir / (name + '.ctl'))}"]
        assert self.ns is not None
        run(self.ns.cmd(*self.tools.cmd(
            name, "--detach", "--no-chdir", "-vconsole:off", f"--pidfile={self._path(pidfile)}",
            f"--log-file={self._path(self.rundir / (name + '.log'))}", *ctl, *args)), env=self.env, timeout=60)
        _wait_for(pidfile.exists, 10.0, f"{name} pidfile")
        pid = int(pidfile.read_text().strip())
        self.pids[name] = pid
        SESSION_CLEANUP.add(f"{name} pid {pid}", lambda: self._stop_daemon(name))

    def _stop_daemon(self, name: str) -> None:
        pid = self.pids.pop(name, None)  # once only: a PID is never signalled after it was reaped
        if pid is not None:
            stop_pid(pid)

    def _sb_ready(self) -> bool:
        p = run(self.tools.cmd("ovn-sbctl", f"--db={self.tools.remote(self.sb_remote)}", "--timeout=5",
                               "--bare", "--columns=options", "list", "SB_Global"), check=False, timeout=15)
        return "northd_internal_version" in p.stdout

    def start(self) -> Chassis:
        # ovn-controller 23.03 dies with SIGSEGV when it meets an SB that no northd has written yet:
        # wait for northd's SB_Global first.
        _wait_for(self._sb_ready, 60.0, f"a northd to write SB_Global at {self.sb_remote}")
        self.ns = Namespace.create(f"hv-{self.system_id}")
        db = self.rundir / "conf.db"
        run(self.tools.cmd("ovsdb-tool", "create", self._path(db), str(VSWITCH_SCHEMA)))
        self._daemon("ovsdb-server", [f"--remote=punix:{self._path(self.db_sock)}", self._path(db)])
        self.vsctl("--no-wait", "init")
        self._daemon("ovs-vswitchd", [f"unix:{self._path(self.db_sock)}"])
        self.vsctl(
            "add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev", "fail-mode=secure",
            "other-config:disable-in-band=true",
        )
        self.vsctl(
            "set", "open_vswitch", ".",
            f"external_ids:system-id={self.system_id}",
            f"external_ids:ovn-remote={self.tools.remote(self.sb_remote)}",
            "external_ids:ovn-encap-type=geneve",
            f"external_ids:ovn-encap-ip={self.encap_ip}",
            "external_ids:ovn-bridge=br-int",
            "external_ids:ovn-bridge-datapath-type=netdev",
            "external_ids:ovn-remote-probe-interval=0",
        )
        self._daemon("ovn-controller", [f"unix:{self._path(self.db_sock)}"])
        return self

    def stop(self) -> None:
        # A daemon that is gone before we stop it crashed (ovn-controller dies on some SB contents).
        self.died += [n for n in self.pids if not self.alive(n)]
        for name in ("ovn-controller", "ovs-vswitchd", "ovsdb-server"):
            self._stop_daemon(name)
        if self.ns is not None:
            self.ns.delete()  # and with it the datapath's persistent taps

    def alive(self, daemon: str) -> bool:
        pid = self.pids.get(daemon)
        return pid is not None and pid_alive(pid)

    def vsctl(self, *args: str, timeout: float = 30) -> str:
        return run(self.tools.cmd("ovs-vsctl", f"--db=unix:{self._path(self.db_sock)}", f"--timeout={int(timeout)}",
                                  *args), env=self.env, timeout=timeout + 5).stdout

    def appctl(self, target: str, *args: str) -> str:
        ctl = self.rundir / f"{target}.ctl"
        if target == "ovn-controller":
            ctl = self.rundir / f"ovn-controller.{self.pids[target]}.ctl"
        return run(self.tools.cmd("ovs-appctl", "-t", self._path(ctl), *args), env=self.env).stdout

    def dump_flows(self) -> str:
        return run(self.tools.cmd("ovs-ofctl", "dump-flows", f"unix:{self._path(self.rundir / 'br-int.mgmt')}"),
                   env=self.env).stdout

    def add_vif(self, ns: Namespace, iface_id: str, mac: str, *, ipv4: str | None = None,
                ipv6: str | None = None, gw4: str | None = None, gw6: str | None = None,
                mtu: int = 1400) -> Vif:
        """An internal port of br-int bound to logical port ``iface_id``, moved into ``ns``."""
        port = f"v{_PREFIX[2:]}x{next(_counter)}"[:15]
        self.vsctl("add-port", "br-int", port, "--", "set", "interface", port, "type=internal",
                   f"external_ids:iface-id={iface_id}")
        vif = Vif(ns, port, iface_id, mac)
        self.vifs[port] = vif
        SESSION_CLEANUP.add(f"vif {port}", lambda: self.del_vif(vif))
        assert self.ns is not None
        hv = self.ns.name
        _wait_for(lambda: run(["ip", "-n", hv, "link", "show", port], check=False).returncode == 0, 10,
                  f"tap {port}")
        run(["ip", "-n", hv, "link", "set", port, "netns", ns.name])
        ns.exec("ip", "link", "set", port, "address", mac, "mtu", str(mtu))
        # The userspace datapath does not complete checksums offloaded by the tap.
        ns.exec("ethtool", "-K", port, "tx", "off", check=False)
        ns.exec("ip", "link", "set", port, "up")
        if ipv4:
            ns.exec("ip", "addr", "add", ipv4, "dev", port)
        if ipv6:
            ns.exec("ip", "-6", "addr", "add", ipv6, "dev", port, "nodad")
        if gw4:
            ns.exec("ip", "route", "add", "default", "via", gw4)
        if gw6:
            ns.exec("ip", "-6", "route", "add", "default", "via", gw6)
        return vif

    def del_vif(self, vif: Vif) -> None:
        if self.vifs.pop(vif.port, None) is None:
            return
        if "ovsdb-server" in self.pids:
            self.vsctl("--if-exists", "del-port", "br-int", vif.port)

    def log_errors(self, pattern: re.Pattern[str] = PARSE_ERROR_RE) -> list[str]:
        if not self.controller_log.exists():
            return []
        return [ln for ln in self.controller_log.read_text(errors="replace").splitlines() if pattern.search(ln)]


def wait_port_up(nbctl: Callable[..., str], ports: Iterable[str], timeout: float = 30) -> None:
    """Until ovn-controller has claimed every logical switch port (NB ``up=true``)."""
    for p in ports:
        nbctl("wait-until", "Logical_Switch_Port", p, "up=true", timeout=int(timeout))


@dataclass
class Stack:
    """NB and SB ovsdb-servers, a northd (ours or the C reference) and one chassis, of ``release``
    (the host's tools for the host's release, else the release's chroot)."""

    northd_kind: str = "py"  # "py": ovn-northd-py; "c": /usr/bin/ovn-northd
    system_id: str = "hv1"
    release: Release = DEFAULT_RELEASE
    chassis_release: Release | None = None  # the chassis' release, when not ``release``
    workdir: Path = None  # type: ignore[assignment]  # default: a new one the tools can reach
    tools: Tools = None  # type: ignore[assignment]  # default: tools_for(release)
    chassis_tools: Tools = None  # type: ignore[assignment]  # default: chassis_tools_for(chassis_release)
    northd_args: list[str] = field(default_factory=list)  # more options of ours (e.g. --check-incremental=1)
    nb: OvsdbServer | None = None
    sb: OvsdbServer | None = None
    northd: OurNorthd | ReferenceNorthd | None = None
    chassis: Chassis | None = None

    def __post_init__(self) -> None:
        if self.tools is None:
            self.tools = tools_for(self.release)
        if self.chassis_tools is None:
            self.chassis_tools = chassis_tools_for(self.chassis_release or self.release)
        if self.workdir is None:
            self.workdir = _short_tmpdir("st", self.tools)

    @property
    def older_chassis(self) -> bool:
        """The chassis is of another release than the servers and the northd (its ovn-controller
        cannot read every flow: parse errors are expected, with the C northd too)."""
        return self.chassis_release is not None and self.chassis_release != self.release

    def describe(self) -> str:
        """What runs: ``OVN 25.03 (Debian trixie chroot ...): ovn-northd-py; chassis ovn-host ...``."""
        northd = "C ovn-northd" if self.northd_kind == "c" else "ovn-northd-py"
        return (f"OVN {self.release.name} ({self.tools.where}): {northd} "
                f"{self.tools.package_version if self.northd_kind == 'c' else ''}".rstrip()
                + f"; chassis {self.chassis_tools.chassis_packages()} ({self.chassis_tools.where})")

    def _our_northd_env(self) -> dict[str, str]:
        """Our daemon's environment: a release whose profile is still a draft needs the switch."""
        rel = self.release
        if rel.flow_profile is not None:
            return {}
        if rel.draft_profile is not None:
            return {DRAFT_ENV: "1"}
        raise RuntimeError(f"ovn-northd-py has no profile for OVN {rel.name}: only the C northd can serve it "
                           "(northd_kind='c', --northd=c)")

    def start(self) -> Stack:
        env = self._our_northd_env() if self.northd_kind != "c" else {}
        ALL_STACKS.append(self)
        t = self.tools
        self.nb = OvsdbServer(self.workdir, "nb", self.release.nb_schema, tools=t).start()
        SESSION_CLEANUP.add("nb ovsdb-server", self.nb.stop)
        self.sb = OvsdbServer(self.workdir, "sb", self.release.sb_schema, tools=t).start()
        SESSION_CLEANUP.add("sb ovsdb-server", self.sb.stop)
        if self.northd_kind == "c":
            self.northd = ReferenceNorthd(self.workdir, self.nb.remote, self.sb.remote, tools=t).start()
        else:
            self.northd = OurNorthd(self.workdir, self.nb.remote, self.sb.remote, extra_args=list(self.northd_args),
                                    env=env).start()
        SESSION_CLEANUP.add("northd", self.northd.stop)
        self.chassis = Chassis(self.sb.remote, system_id=self.system_id, tools=self.chassis_tools).start()
        SESSION_CLEANUP.add("chassis", self.chassis.stop)
        return self

    def stop(self) -> None:
        for part in (self.chassis, self.northd, self.sb, self.nb):
            if part is not None:
                part.stop()

    @property
    def northd_log(self) -> Path:
        if isinstance(self.northd, OurNorthd):
            return self.northd.log_file
        return self.workdir / "ref-northd.log"

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        assert self.nb is not None
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout, tools=self.tools)

    def sbctl(self, *args: str, timeout: int = 30) -> str:
        assert self.sb is not None
        return sbctl(self.sb.remote, *args, timeout=timeout, tools=self.tools)

    def sync_hv(self, timeout: int = 30) -> None:
        """Until every chassis has installed the current NB state (``ovn-nbctl --wait=hv sync``)."""
        self.nbctl("sync", wait="hv", timeout=timeout)

    def clear_nb(self, timeout: float = 15) -> bool:
        """Delete every logical object; True once SB has no datapath left (the daemon follows).

        MAC_Binding rows learned by ovn-controller are flushed first: deleting a router that has
        some is the subject of its own test (test_dp_lifecycle), other tests must not depend on it.
        """
        self.sbctl("--all", "destroy", "MAC_Binding")
        tables = ("Logical_Router", "Logical_Switch", "Port_Group", "Address_Set", "Load_Balancer",
                  "Load_Balancer_Group", "DHCP_Options")
        args: list[str] = []
        for t in tables:
            args += ["--", "--all", "destroy", t]
        self.nbctl(*args)
        try:
            _wait_for(lambda: not self.sbctl("--bare", "--columns=_uuid", "list", "Datapath_Binding").strip(),
                      timeout, "SB datapaths to go")
        except TimeoutError:
            return False
        return True


@dataclass
class VM:
    """A namespace behind one logical switch port."""

    name: str  # the logical switch port
    ns: Namespace
    iface: str
    mac: str
    ip4: str | None = None  # without prefix length
    ip6: str | None = None

    def ping(self, dst: str | VM, **kw: Any) -> bool:
        if isinstance(dst, VM):
            addr = dst.ip4
            assert addr is not None
            return self.ns.ping(addr, **kw)
        return self.ns.ping(dst, **kw)


class Topology:
    """Logical objects and VMs of one test; :meth:`destroy` removes them all."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.vms: dict[str, VM] = {}
        self._cleanup = Cleanup()

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        return self.stack.nbctl(*args, wait=wait, timeout=timeout)

    def sbctl(self, *args: str, timeout: int = 30) -> str:
        return self.stack.sbctl(*args, timeout=timeout)

    def sync(self, timeout: int = 30) -> None:
        self.stack.sync_hv(timeout)

    def vm(self, switch: str, name: str, mac: str, ip4: str | None = None, ip6: str | None = None, *,
           gw4: str | None = None, gw6: str | None = None, addresses: str | None = None,
           port_security: str | None = None, configure: bool = True) -> VM:
        """A logical switch port on ``switch`` and a namespace bound to it.

        ``ip4``/``ip6`` carry a prefix length ("10.0.0.2/24"); the port's NB addresses are the MAC
        and the bare IPs unless ``addresses`` is given.  ``configure=False`` leaves the namespace's
        interface without IP addresses (DHCP, SLAAC).
        """
        bare4 = ip4.split("/")[0] if ip4 else None
        bare6 = ip6.split("/")[0] if ip6 else None
        if addresses is None:
            addresses = " ".join(a for a in (mac, bare4, bare6) if a)
        self.nbctl("lsp-add", switch, name, "--", "lsp-set-addresses", name, addresses)
        if port_security:
            self.nbctl("lsp-set-port-security", name, port_security)
        ns = Namespace.create(name)
        self._cleanup.add(f"netns {ns.name}", ns.delete)
        assert self.stack.chassis is not None
        vif = self.stack.chassis.add_vif(
            ns, name, mac, ipv4=ip4 if configure else None, ipv6=ip6 if configure else None,
            gw4=gw4 if configure else None, gw6=gw6 if configure else None,
        )
        self._cleanup.add(f"vif {vif.port}", lambda: self.stack.chassis.del_vif(vif) if self.stack.chassis else None)
        v = VM(name, ns, vif.port, mac, bare4, bare6)
        self.vms[name] = v
        return v

    def wait_up(self, *vms: VM, timeout: float = 30) -> None:
        """Until every VM's port is claimed and every chassis has caught up with NB."""
        chassis = self.stack.chassis
        assert chassis is not None
        try:
            wait_port_up(self.nbctl, [v.name for v in (vms or tuple(self.vms.values()))], timeout)
        finally:
            dead = [n for n in ("ovn-controller", "ovs-vswitchd") if not chassis.alive(n)]
            if dead:
                raise RuntimeError(f"{dead} died on {chassis.system_id} (logs in {chassis.rundir})")
        self.sync()

    def destroy(self) -> list[str]:
        return self._cleanup.run()

    def router_port(self, router: str, switch: str, mac: str, *networks: str, name: str | None = None) -> str:
        """Connect ``router`` to ``switch`` (a router port with ``networks`` and its switch peer)."""
        lrp = name or f"{router}-{switch}"
        lsp = f"{switch}-{router}"
        self.nbctl(
            "lrp-add", router, lrp, mac, *networks, "--",
            "lsp-add", switch, lsp, "--",
            "lsp-set-type", lsp, "router", "--",
            "lsp-set-addresses", lsp, "router", "--",
            "lsp-set-options", lsp, f"router-port={lrp}",
        )
        return lrp

    def mac_bindings(self, router: str) -> list[str]:
        """SB MAC_Binding rows (``ip mac``) of ``router``'s datapath."""
        dp_uuid = self.sbctl("--bare", "--columns=_uuid", "find", "Datapath_Binding",
                             f"external_ids:name={router}").strip()
        if not dp_uuid:
            return []
        out = self.sbctl("--bare", "--columns=ip,mac", "find", "MAC_Binding", f"datapath={dp_uuid}")
        lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
        return [" ".join(lines[i:i + 2]) for i in range(0, len(lines), 2)]
