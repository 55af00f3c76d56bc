"""The NB both sides of a parity run start from: builders (workload scripts, ovn-nbctl
commands, any callable taking the NB remote) or an NB database file, turned into one standalone
seed file (:func:`build_seed_nb`); and stopping the processes the harness starts."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ovn_northd_py.devtools.servers import NB_SCHEMA, OvsdbServer, pid_alive
from ovn_northd_py.devtools.testing import WORKLOAD_DIR

from .compare import RANDOM_OPTIONS
from .dump import HarnessError

# --------------------------------------------------------------------------- NB sources

NbBuilder = Callable[[str], None]


@dataclass(slots=True)
class ScriptBuilder:
    """Runs ``command + args``; the NB remote replaces ``NB_REMOTE``/``{nb}`` in ``args``, else goes first."""

    command: list[str]
    args: list[str]
    timeout: float = 600.0

    def argv(self, nb_remote: str) -> list[str]:
        args = [nb_remote if a == "NB_REMOTE" else a.replace("{nb}", nb_remote) for a in self.args]
        if args == self.args:
            args.insert(0, nb_remote)
        return [*self.command, *args]

    def __call__(self, nb_remote: str) -> None:
        argv = self.argv(nb_remote)
        proc = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=self.timeout)
        if proc.returncode:
            raise HarnessError(f"NB builder {shlex.join(argv)} failed: {proc.stderr[-2000:]}")

    def __str__(self) -> str:
        return shlex.join([Path(self.command[-1]).name, *self.args])


def script(path: str | Path, *args: str) -> ScriptBuilder:
    """A Python script taking the NB remote as first argument (unless an argument is NB_REMOTE)."""
    return ScriptBuilder([sys.executable, str(path)], list(args))


def workload(name: str, *args: int | str) -> ScriptBuilder:
    """A script of the shared workloads directory, e.g. ``workload("mixed", 10, 10, 10)``."""
    return script(WORKLOAD_DIR / f"{name}.py", *(str(a) for a in args))


@dataclass(slots=True)
class NbctlBuilder:
    """ovn-nbctl commands run as one transaction (``--`` between them)."""

    commands: list[list[str]]

    def __call__(self, nb_remote: str) -> None:
        argv = ["ovn-nbctl", f"--db={nb_remote}", "--timeout=60"]
        for i, command in enumerate(self.commands):
            argv += (["--"] if i else []) + command
        proc = subprocess.run(argv, check=False, capture_output=True, text=True)
        if proc.returncode:
            raise HarnessError(f"ovn-nbctl failed: {proc.stderr[-2000:]}")

    def __str__(self) -> str:
        return f"nbctl script ({len(self.commands)} commands)"


def nbctl_commands(*commands: Sequence[str]) -> NbctlBuilder:
    """An NB builder: ``nbctl_commands(["ls-add", "sw0"], ["lsp-add", "sw0", "p0"])``."""
    return NbctlBuilder([list(c) for c in commands])


NbSource = NbBuilder | Path


def _describe_source(source: NbSource) -> str:
    if isinstance(source, Path):
        return f"nb file {source}"
    return str(source) if isinstance(source, ScriptBuilder) else getattr(source, "__name__", repr(source))


def _ovsdb_tool(*args: str) -> str:
    return subprocess.run(["ovsdb-tool", *args], capture_output=True, text=True, check=True).stdout.strip()


def _seed_from_file(path: Path, seed: Path, nb_schema: Path = NB_SCHEMA) -> None:
    if _is_clustered(path):
        _ovsdb_tool("cluster-to-standalone", str(seed), str(path))
    else:
        shutil.copyfile(path, seed)
    if _ovsdb_tool("needs-conversion", str(seed), str(nb_schema)) == "yes":
        _ovsdb_tool("convert", str(seed), str(nb_schema))


def _is_clustered(path: Path) -> bool:
    proc = subprocess.run(["ovsdb-tool", "db-is-clustered", str(path)], check=False, capture_output=True)
    return proc.returncode == 0


def nb_global_options(db_file: Path) -> dict[str, str]:
    """NB_Global options of a standalone NB database file (read with ``ovsdb-tool query``)."""
    txn = json.dumps(
        ["OVN_Northbound", {"op": "select", "table": "NB_Global", "where": [], "columns": ["options"]}]
    )
    rows = json.loads(_ovsdb_tool("query", str(db_file), txn))[0]["rows"]
    return {str(k): str(v) for row in rows for k, v in row["options"][1]}


def unconfigured_random_options(seed: Path) -> tuple[str, ...]:
    """The RANDOM_OPTIONS the NB leaves to northd (the others must match exactly)."""
    configured = nb_global_options(seed)
    return tuple(name for name in RANDOM_OPTIONS if name not in configured)


def build_seed_nb(source: NbSource, workdir: Path, nb_schema: Path = NB_SCHEMA) -> Path:
    """A standalone NB database file (schema ``nb_schema``) both sides start from."""
    workdir.mkdir(parents=True, exist_ok=True)
    seed = workdir / "nb-seed.db"
    if isinstance(source, Path):
        _seed_from_file(source, seed, nb_schema)
        return seed
    server = OvsdbServer(workdir / "build", "nb", nb_schema)
    try:
        server.start()
        source(server.remote)
        server.backup(seed)
    finally:
        stop_server(server)
    return seed


# --------------------------------------------------------------------------- processes


def process_gone(pid: int) -> bool:
    """Exited, or a zombie: a detached daemon's zombie waits for init, which may reap it late."""
    if not pid_alive(pid):
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not process_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def stop_process(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL; like ``servers.stop_pid`` but without waiting for init to reap."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        if process_gone(pid):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if _wait_gone(pid, wait):
            return
    raise HarnessError(f"pid {pid} survived SIGKILL")


def stop_server(server: OvsdbServer) -> None:
    if server.pid is not None:
        stop_process(server.pid)
        server.pid = None
