"""Running the reference ovn-northd and ours on copies of one NB (:func:`run_parity`).

The NB is built once (:mod:`.sources`), backed up and served twice, so both daemons see the same
row UUIDs; each daemon gets its own empty SB.  After both settled (``ovn-nbctl --wait=sb sync``)
the SBs are dumped (:mod:`.dump`) and compared (:mod:`.compare`)."""

from __future__ import annotations

import contextlib
import json
import math
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ovn_northd_py.devtools.servers import OvsdbServer, ReferenceNorthd
from ovn_northd_py.devtools.tools import HOST, Tools, ToolsUnavailable, tools_for
from ovn_northd_py.release import DEFAULT_RELEASE, Release, get_release

from .compare import _check_tables, compare_dumps
from .dump import HarnessError, SbDump, dump_sb
from .report import ParityResult, SideRun
from .sources import (
    NbSource,
    _describe_source,
    build_seed_nb,
    process_gone,
    stop_process,
    stop_server,
    unconfigured_random_options,
)

OURS_CMD_DEFAULT = (
    "{python} -m ovn_northd_py --ovnnb-db={nb} --ovnsb-db={sb} --log-file={log} --pidfile={pidfile}"
    " --unixctl={unixctl}"
)


# --------------------------------------------------------------------------- daemons

REFERENCE_BINARY = "/usr/bin/ovn-northd"


def reference_available(release: Release | str = DEFAULT_RELEASE, from_chroot: bool | None = None) -> bool:
    """The reference daemon of ``release`` and the OVS/OVN tools the harness runs are installed
    (the host's tools always serve our side and build the NB)."""
    tools = ("ovsdb-server", "ovsdb-client", "ovsdb-tool", "ovn-nbctl")
    if not all(shutil.which(t) for t in tools):
        return False
    try:
        ref = tools_for(release, from_chroot)
    except ToolsUnavailable:
        return False
    return ref.root is not None or Path(REFERENCE_BINARY).exists()


class Daemon(Protocol):
    label: str

    def start(self, workdir: Path, nb_remote: str, sb_remote: str) -> None: ...

    def alive(self) -> bool: ...

    def stop(self) -> None: ...

    def pids(self) -> list[int]: ...

    def describe_exit(self) -> str: ...


@dataclass(slots=True)
class ReferenceDaemon:
    """Debian's C ovn-northd (detached, stopped by its pidfile's PID), from ``tools``."""

    label: str = "reference"
    binary: str = REFERENCE_BINARY
    tools: Tools = HOST
    _northd: ReferenceNorthd | None = None
    _pids: list[int] = field(default_factory=list)

    def start(self, workdir: Path, nb_remote: str, sb_remote: str) -> None:
        self._northd = ReferenceNorthd(workdir, nb_remote, sb_remote, binary=self.binary, tools=self.tools)
        self._northd.start()
        if self._northd.pid is not None:
            self._pids.append(self._northd.pid)

    def alive(self) -> bool:
        return (
            self._northd is not None and self._northd.pid is not None and not process_gone(self._northd.pid)
        )

    def stop(self) -> None:
        if self._northd is not None and self._northd.pid is not None:
            stop_process(self._northd.pid)
            self._northd.pid = None

    def pids(self) -> list[int]:
        return list(self._pids)

    def describe_exit(self) -> str:
        return f"{self.binary} exited (see ref-northd.log)"


@dataclass(slots=True)
class CommandDaemon:
    """A daemon started from a command template.

    Placeholders: ``{python}`` ``{nb}`` ``{sb}`` ``{log}`` ``{pidfile}`` ``{unixctl}`` ``{workdir}``.
    A template with ``--detach`` is waited for and then tracked by the PID in ``{pidfile}``.
    """

    template: Sequence[str] | str = OURS_CMD_DEFAULT
    label: str = "ours"
    _proc: subprocess.Popen[bytes] | None = None
    _pid: int | None = None
    _detached: bool = False
    _pids: list[int] = field(default_factory=list)
    _workdir: Path | None = None

    def argv(self, workdir: Path, nb_remote: str, sb_remote: str) -> list[str]:
        words = shlex.split(self.template) if isinstance(self.template, str) else list(self.template)
        subst = {
            "python": sys.executable,
            "nb": nb_remote,
            "sb": sb_remote,
            "log": str(workdir / "ours-northd.log"),
            "pidfile": str(workdir / "ours-northd.pid"),
            "unixctl": str(workdir / "ours-northd.ctl"),
            "workdir": str(workdir),
        }
        return [w.format(**subst) for w in words]

    def start(self, workdir: Path, nb_remote: str, sb_remote: str) -> None:
        argv = self.argv(workdir, nb_remote, sb_remote)
        self._workdir = workdir
        pidfile = workdir / "ours-northd.pid"
        pidfile.unlink(missing_ok=True)
        with open(workdir / "ours-northd.out", "wb") as out:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=workdir,
                start_new_session=True,
            )
        self._pid = self._proc.pid
        self._pids.append(self._pid)
        if "--detach" in argv:
            self._adopt_detached(pidfile)

    def _adopt_detached(self, pidfile: Path) -> None:
        assert self._proc is not None
        if self._proc.wait(timeout=60) != 0 or not pidfile.exists():
            return
        self._detached = True
        self._pid = int(pidfile.read_text().strip())
        self._pids.append(self._pid)

    def alive(self) -> bool:
        if self._detached:
            return self._pid is not None and not process_gone(self._pid)
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        if self._detached and self._pid is not None:
            stop_process(self._pid)
        elif self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)

    def pids(self) -> list[int]:
        return list(self._pids)

    def describe_exit(self) -> str:
        rc = self._proc.returncode if self._proc is not None else None
        return f"{self.label} daemon exited (rc={rc}{self._last_error()}, see ours-northd.out / ours-northd.log)"

    def _last_error(self) -> str:
        """``: <message>`` of the last error our daemon logged (JSON log), if any."""
        if self._workdir is None:
            return ""
        errors = []
        with contextlib.suppress(OSError):
            for line in (self._workdir / "ours-northd.log").read_text().splitlines():
                with contextlib.suppress(ValueError):
                    rec = json.loads(line)
                    if isinstance(rec, dict) and rec.get("level") == "error":
                        errors.append(str(rec.get("error") or rec.get("event")))
        return f": {errors[-1]}" if errors else ""


# --------------------------------------------------------------------------- running one side


def _settle(daemon: Daemon, nb_remote: str, timeout: float, tools: Tools = HOST) -> None:
    """``ovn-nbctl --wait=sb sync`` (of ``tools``), failing fast if the daemon dies meanwhile."""
    cmd = tools.cmd(
        "ovn-nbctl", f"--db={tools.remote(nb_remote)}", f"--timeout={math.ceil(timeout)}", "--wait=sb", "sync"
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout + 5
    try:
        while proc.poll() is None:
            if not daemon.alive():
                raise HarnessError(daemon.describe_exit())
            if time.monotonic() > deadline:
                raise HarnessError(f"not settled within {timeout:.0f}s")
            time.sleep(0.005)
        if proc.returncode:
            raise HarnessError(f"ovn-nbctl sync failed: {proc.stderr.read() if proc.stderr else ''}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


# After both sides settled: ``hook(nb_remote, sb_remote)`` run on each side, e.g. ovn-sbctl commands
# standing in for ovn-controller (Service_Monitor status...); the side then settles again.
AfterSettle = Callable[[str, str], None]


@contextlib.contextmanager
def tools_workdir(tools: Tools, workdir: Path) -> Iterator[Path]:
    """``workdir``, usable by ``tools``.  For a chroot's tools: while the side runs, ``workdir`` is a
    symlink to a scratch dir inside the chroot tree (the tools see the real path, the host either);
    afterwards that dir (logs, databases) is moved to ``workdir``, so nothing stays in the chroot."""
    if tools.root is None:
        yield workdir
        return
    scratch = tools.scratch_dir("run-")
    workdir.parent.mkdir(parents=True, exist_ok=True)
    workdir.symlink_to(scratch, target_is_directory=True)
    try:
        yield workdir
    finally:
        workdir.unlink()
        for sock in [*scratch.glob("*.sock"), *scratch.glob("*.ctl")]:
            sock.unlink(missing_ok=True)
        shutil.move(scratch, workdir)


def run_side(
    label: str, daemon: Daemon, seed: Path, workdir: Path, settle_timeout: float,
    after_settle: AfterSettle | None = None, *, tools: Tools = HOST, release: Release = DEFAULT_RELEASE,
) -> tuple[SideRun, SbDump | None]:
    """Serve ``seed`` + an empty SB (``release``'s schemas, ``tools``' ovsdb-server), run ``daemon``
    until settled, dump the SB, stop everything.

    ``after_settle``: run once settled (on this side's NB and SB), then settle again: the
    daemon reacts to SB writes without an NB change, so wait a little and sync twice."""
    with tools_workdir(tools, workdir):
        return _run_side(label, daemon, seed, workdir, settle_timeout, after_settle, tools, release)


def _run_side(
    label: str, daemon: Daemon, seed: Path, workdir: Path, settle_timeout: float,
    after_settle: AfterSettle | None, tools: Tools, release: Release,
) -> tuple[SideRun, SbDump | None]:
    side = SideRun(label, workdir)
    nb = OvsdbServer(workdir, "nb", release.nb_schema, db_file=seed, tools=tools)
    sb = OvsdbServer(workdir, "sb", release.sb_schema, tools=tools)
    dump: SbDump | None = None
    try:
        for server in (nb, sb):
            server.start()
            side.pids.append(server.pid or -1)
        started = time.monotonic()
        try:
            daemon.start(workdir, nb.remote, sb.remote)
            _settle(daemon, nb.remote, settle_timeout, tools)
            side.settled, side.settle_seconds = True, time.monotonic() - started
            if after_settle is not None:
                side.settled = False
                after_settle(nb.remote, sb.remote)
                for _ in range(2):
                    time.sleep(0.3)
                    _settle(daemon, nb.remote, settle_timeout, tools)
                side.settled = True
        except (HarnessError, OSError, subprocess.SubprocessError) as exc:
            side.error = str(exc)
        dump = dump_sb(sb.remote, release.sb_schema)
    finally:
        try:
            daemon.stop()
        finally:
            side.pids += daemon.pids()
            stop_server(sb)
            stop_server(nb)
    return side, dump


# --------------------------------------------------------------------------- the whole run


def _make_ours(
    ours: Daemon | None, ours_cmd: Sequence[str] | str | None, reference_both: bool, ref_tools: Tools = HOST
) -> Daemon:
    if ours is not None:
        return ours
    if reference_both:
        return ReferenceDaemon(label="ours(reference)", tools=ref_tools)
    return CommandDaemon(ours_cmd or OURS_CMD_DEFAULT)


def run_parity(
    source: NbSource,
    *,
    ours: Daemon | None = None,
    ours_cmd: Sequence[str] | str | None = None,
    reference_both: bool = False,
    tables: Collection[str] | None = None,
    workdir: Path | None = None,
    keep: bool = False,
    settle_timeout: float = 120.0,
    after_settle: AfterSettle | None = None,
    release: Release | str = DEFAULT_RELEASE,
    from_chroot: bool | None = None,
) -> ParityResult:
    """Run reference (pair A) and ours (pair B) on copies of one NB and compare their SBs.

    ``source``: a callable taking the NB remote (see :func:`workload`, :func:`script`) or an NB
    database file.  ``ours`` overrides ``ours_cmd`` (a :class:`CommandDaemon` template);
    ``reference_both`` runs the reference on both sides (self-test).  A given ``workdir`` is
    never deleted; a temporary one is deleted unless ``keep`` and the run failed.
    ``after_settle(nb_remote, sb_remote)`` runs on both sides once settled (see :func:`run_side`).
    ``release``: the reference's OVN release, its tools from the host or (``from_chroot``, or when the
    host's OVN is another release) its chroot; see :func:`ovn_northd_py.devtools.tools.tools_for`.
    """
    rel = get_release(release) if isinstance(release, str) else release
    try:
        ref_tools = tools_for(rel, from_chroot)
    except ToolsUnavailable as e:
        raise HarnessError(str(e)) from None
    _check_tables(tables, rel.sb_schema)
    own_dir = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="parity-")) if workdir is None else workdir
    wd.mkdir(parents=True, exist_ok=True)
    ok = False
    try:
        result = _run(source, _make_ours(ours, ours_cmd, reference_both, ref_tools), tables, wd, settle_timeout,
                      after_settle, ref_tools)
        ok = result.ok
        if not own_dir or (keep and not ok):
            result.workdir = wd
        return result
    except Exception as exc:
        if keep or not own_dir:
            exc.add_note(f"parity work dir kept: {wd}")
        raise
    finally:
        if own_dir and not (keep and not ok):
            shutil.rmtree(wd, ignore_errors=True)


def _run(
    source: NbSource, ours: Daemon, tables: Collection[str] | None, wd: Path, settle_timeout: float,
    after_settle: AfterSettle | None = None, ref_tools: Tools = HOST,
) -> ParityResult:
    rel = ref_tools.release
    seed = build_seed_nb(source, wd, rel.nb_schema)
    ref_side, ref_dump = run_side("reference", ReferenceDaemon(tools=ref_tools), seed, wd / "ref", settle_timeout,
                                  after_settle, tools=ref_tools, release=rel)
    if not ref_side.settled or ref_dump is None:
        raise HarnessError(f"reference {ref_tools.describe()} did not settle: {ref_side.error}")
    ours_tools = ours.tools if isinstance(ours, ReferenceDaemon) else HOST
    ours_side, ours_dump = run_side(ours.label, ours, seed, wd / "ours", settle_timeout, after_settle,
                                    tools=ours_tools, release=rel)
    if ours_dump is None:
        ours_dump = SbDump({}, ref_dump.schema)
    comparison = compare_dumps(ref_dump, ours_dump, tables, random_options=unconfigured_random_options(seed))
    return ParityResult(_describe_source(source), ref_side, ours_side, comparison, ref_dump, ours_dump,
                        release=rel.name, reference_version=ref_tools.describe())
