"""Process plumbing the C daemon gets from libopenvswitch: rundir, --user, and systemd's NOTIFY_SOCKET.

Daemonization proper (``--detach``, ``--monitor``, ``--pidfile``, ``--overwrite-pidfile``,
``--no-chdir``) is python-ovs' ``ovs.daemon``; this module adds what it lacks.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import socket
import time
from typing import Any


def rundir() -> str:
    """OVN's run directory, as ovn-northd: $OVN_RUNDIR, else /var/run/ovn."""
    return os.environ.get("OVN_RUNDIR") or "/var/run/ovn"


def logdir() -> str:
    """Where ``--log-file`` without a file name logs: $OVS_LOGDIR as the C daemon (its log file is
    libopenvswitch's vlog, ``ovs_logdir()``; OVN's test suite sets it), else $OVN_LOGDIR, else
    /var/log/ovn."""
    return os.environ.get("OVS_LOGDIR") or os.environ.get("OVN_LOGDIR") or "/var/log/ovn"


def default_pidfile() -> str:
    return f"{rundir()}/ovn-northd.pid"


def default_log_file() -> str:
    return f"{logdir()}/ovn-northd.log"


def abs_path(path: str, base: str) -> str:
    return path if path.startswith("/") else os.path.join(base, path)


def set_process_name(name: str) -> None:
    """/proc/self/comm = name (prctl PR_SET_NAME), as the C daemon's: init scripts check it
    (ovn-lib's pid_comm_check), and so do pidof and ps -C."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


class UserError(RuntimeError):
    pass


def parse_user(spec: str) -> tuple[int, int, str]:
    """--user=USER[:GROUP] -> (uid, gid, user name); UserError if unknown."""
    user, _, group = spec.partition(":")
    try:
        pw = pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())
    except KeyError as e:
        raise UserError(f"--user={spec}: no such user {user!r}") from e
    gid = pw.pw_gid
    if group:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError as e:
            raise UserError(f"--user={spec}: no such group {group!r}") from e
    return pw.pw_uid, gid, pw.pw_name


def become_user(spec: str) -> None:
    """Drop privileges for good (as ovn-northd --user): supplementary groups, gid, then uid."""
    uid, gid, name = parse_user(spec)
    if os.geteuid() == uid and os.getegid() == gid:
        return
    if os.geteuid() != 0:
        raise UserError(f"--user={spec}: only root can switch to another user")
    os.initgroups(name, gid)
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise UserError(f"--user={spec}: failed to switch user")


class Notifier:
    """systemd's notification protocol: datagrams to $NOTIFY_SOCKET (``READY=1``, ``WATCHDOG=1``,
    ``STATUS=...``, ``STOPPING=1``).  Inactive when NOTIFY_SOCKET is unset."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        env = dict(os.environ) if env is None else env
        addr = env.get("NOTIFY_SOCKET") or ""
        self.address: str | None = None
        if addr.startswith("@"):
            self.address = "\0" + addr[1:]
        elif addr.startswith("/"):
            self.address = addr
        self.watchdog_interval: float | None = None
        usec = env.get("WATCHDOG_USEC")
        pid = env.get("WATCHDOG_PID")
        if usec and (not pid or pid == str(os.getpid())):
            try:
                self.watchdog_interval = int(usec) / 1e6
            except ValueError:
                self.watchdog_interval = None
        self.ready = False
        self._last_ping = 0.0
        self._status = ""
        self._sock: socket.socket | None = None

    @property
    def active(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> None:
        if self.address is None:
            return
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        with contextlib.suppress(OSError):  # systemd went away: nothing to tell
            self._sock.sendto("\n".join(fields).encode(), self.address)

    def hook(self, daemon: Any) -> Any:
        """A Daemon loop hook: READY=1 once the first SB commit settled, or once the instance stands by
        (SB synced, lock held by another) or starts paused; STATUS= on changes; WATCHDOG=1 at half
        the watchdog interval."""

        def run() -> None:
            now = time.monotonic()
            st = daemon.status()
            if not self.ready:
                sb = daemon.sb
                standby = sb is not None and sb.synced and not sb.has_lock
                if daemon.settled.is_set() or st == "paused" or (st == "standby" and standby):
                    self.ready = True
                    self._status = st
                    self.send("READY=1", f"STATUS={st}", f"MAINPID={os.getpid()}")
            elif st != self._status:
                self._status = st
                self.send(f"STATUS={st}")
            if self.watchdog_interval and now - self._last_ping >= self.watchdog_interval / 2:
                self._last_ping = now
                self.send("WATCHDOG=1")

        return run

    def stopping(self) -> None:
        self.send("STOPPING=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
