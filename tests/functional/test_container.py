"""Operator drop-in, the container: the image that scripts/container.sh builds with buildah (a local
debootstrap'd bookworm base, --isolation=chroot --network=host --pull=never), run with podman and
runc against real NB and SB ovsdb-servers on the host: NB on a unix socket mounted at the image's
default /var/run/ovn (remote from the image's environment), SB over tcp (remote as an argument).

Needs root (podman's rootful storage; the script re-runs itself with sudo).  The image is built
once per session; every test starts its own servers and container and removes them by id."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OvsdbServer, nbctl, sbctl
from ovn_northd_py.devtools.testing import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "localhost/ovn-northd-py:latest"
USER = 10001  # the image's ovn-northd user (Dockerfile)
PODMAN = ["podman"] if os.geteuid() == 0 else ["sudo", "-n", "podman"]
# Without systemd as PID 1 (CI machines, containers) podman cannot create the transient timer of a
# HEALTHCHECK; with this it does not try, and `podman healthcheck run` runs the check on demand.
PODMAN_ENV = {**os.environ, "DISABLE_HC_SYSTEMD": "true"}


def podman(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PODMAN, *args], capture_output=True, text=True, timeout=timeout, check=check,
                          env=PODMAN_ENV)


def _ulimits() -> list[str]:
    """Explicit rlimits within this process's hard limits.  podman's defaults (nofile and nproc up to
    1048576 / its own limit) are above them, and a root without CAP_SYS_RESOURCE (as on these CI
    machines) cannot raise a hard limit: runc would fail with "error setting rlimit ...: operation
    not permitted"."""
    nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 65536)
    return [f"--ulimit=nofile={nofile}:{nofile}", "--ulimit=nproc=4096:4096"]


@pytest.fixture(scope="module")
def image() -> str:
    """The image's id, built (or brought up to date: buildah's layer cache) by scripts/container.sh."""
    t0 = time.monotonic()
    r = subprocess.run(["bash", str(ROOT / "scripts" / "container.sh"), "--tag", IMAGE], capture_output=True,
                       text=True, timeout=1200, check=False)
    assert r.returncode == 0, f"scripts/container.sh failed ({r.returncode}):\n{r.stderr[-4000:]}"
    print(f"image {IMAGE} built in {time.monotonic() - t0:.0f} s")
    # By id: another checkout building meanwhile moves the tag, not this image.
    return r.stdout.split()[-1]


@dataclass
class Running:
    workdir: Path
    nb: OvsdbServer
    sb: OvsdbServer
    cid: str
    metrics_port: int

    def nbctl(self, *args: str, wait: str | None = None) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=60)

    def sbctl(self, *args: str) -> str:
        return sbctl(self.sb.remote, *args, timeout=60)

    def state(self, field: str) -> str:
        return podman("inspect", "--format", "{{" + field + "}}", self.cid).stdout.strip()

    def logs(self) -> list[dict]:
        r = podman("logs", self.cid, check=False)
        out = []
        for line in (r.stdout + r.stderr).splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
        return out


def _run(image: str, name: str, workdir: Path, sb: OvsdbServer, metrics_port: int) -> str:
    cmd = ["run", "-d", "--name", name, "--pull=never", "--network=host", *_ulimits(),
           "-v", f"{workdir}:/var/run/ovn",
           "-e", "OVN_NB_DB=unix:/var/run/ovn/nb.sock",
           "-e", f"OVN_NORTHD_METRICS_ADDRESS=127.0.0.1:{metrics_port}",
           image, f"--ovnsb-db={sb.tcp_remote}"]
    return podman(*cmd).stdout.strip()


@pytest.fixture
def running(image: str, tmp_path: Path) -> Iterator[Running]:
    """NB and SB ovsdb-servers on the host and the container beside them; all removed at the end."""
    workdir = tmp_path / "ovn"
    nb = OvsdbServer(workdir, "nb", NB_SCHEMA).start()
    # Removed by this name even if `podman run` failed after creating it.
    name = f"ovn-northd-py-test-{uuid.uuid4().hex[:12]}"
    try:
        sb = OvsdbServer(workdir, "sb", SB_SCHEMA, tcp_port=free_port()).start()
        try:
            # The daemon runs as uid 10001: the mounted NB socket must be its to connect to.
            os.chmod(workdir, 0o755)
            os.chown(nb.sock, USER, USER)
            port = free_port()
            cid = _run(image, name, workdir, sb, port)
            yield Running(workdir, nb, sb, cid, port)
        finally:
            podman("rm", "--force", "--ignore", "--time", "0", name, check=False)
            sb.stop()
    finally:
        nb.stop()


def _readyz(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


# --------------------------------------------------------------------------- the image


def test_image_runs_as_the_unprivileged_user(image: str):
    assert podman("image", "inspect", "--format", "{{.User}}", image).stdout.strip() == f"{USER}:{USER}"
    r = podman("run", "--rm", "--pull=never", "--network=host", *_ulimits(), "--entrypoint", "id", image)
    assert r.stdout.split() == [f"uid={USER}(ovn-northd)", f"gid={USER}(ovn-northd)", f"groups={USER}(ovn-northd)"]


def test_image_has_a_healthcheck_that_asks_the_control_socket(image: str):
    hc = json.loads(podman("image", "inspect", "--format", "{{json .HealthCheck}}", image).stdout)
    assert hc["Test"][:2] == ["CMD", "ovn-appctl"] and hc["Test"][-1] == "status"
    entrypoint = json.loads(podman("image", "inspect", "--format", "{{json .Config.Entrypoint}}", image).stdout)
    ctl = hc["Test"][hc["Test"].index("-t") + 1]
    assert f"--unixctl={ctl}" in entrypoint


def test_image_holds_the_venv_only_not_the_source_build_tools_or_ca_bundle(image: str):
    r = podman("run", "--rm", "--pull=never", "--network=host", *_ulimits(), "--entrypoint", "sh", image, "-c",
               "for d in /run/secrets /etc/ssl/certs /src /opt/ovn-northd-py; do ls -A $d 2>/dev/null; done;"
               " command -v pip pip3 gcc; ls /opt/ovn-northd-py/.venv/bin | grep pip;"
               " /opt/ovn-northd-py/.venv/bin/python -c 'import ovs._json'")
    assert r.stdout.split() == [".venv"], r.stdout


# --------------------------------------------------------------------------- the running container


def test_container_settles_against_nb_and_sb_on_the_host(running: Running):
    running.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "sw0-p1",
                  "--", "lsp-set-addresses", "sw0-p1", "00:00:00:00:00:01 10.0.0.1")
    running.nbctl("sync", wait="sb")
    assert running.sbctl("--bare", "--columns=logical_port", "find", "Port_Binding",
                         "logical_port=sw0-p1").strip() == "sw0-p1"
    flows = running.sbctl("lflow-list", "sw0")
    assert 'inport == "sw0-p1"' in flows and 'eth.dst == 00:00:00:00:00:01), action=(outport = "sw0-p1"' in flows
    assert running.state(".State.Status") == "running"
    wait_until(lambda: _readyz(running.metrics_port), 20, "/readyz from the host (metrics address from the env)")


def test_healthcheck_reports_healthy(running: Running):
    running.nbctl("sync", wait="sb")
    r = podman("healthcheck", "run", running.cid, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert running.state(".State.Health.Status") == "healthy"


def test_healthcheck_reports_unhealthy_while_the_daemon_hangs(running: Running):
    running.nbctl("sync", wait="sb")
    pid = int(running.state(".State.Pid"))  # the daemon (PID 1 of the container), seen from the host
    os.kill(pid, signal.SIGSTOP)
    try:
        r = podman("healthcheck", "run", running.cid, check=False)
        assert r.returncode == 1 and r.stdout.strip() == "unhealthy", r.stdout + r.stderr
    finally:
        os.kill(pid, signal.SIGCONT)
    r = podman("healthcheck", "run", running.cid, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert running.state(".State.Health.Status") == "healthy"


def test_podman_stop_stops_the_daemon_cleanly(running: Running):
    running.nbctl("ls-add", "sw0")
    running.nbctl("sync", wait="sb")
    t0 = time.monotonic()
    podman("stop", "--time", "20", running.cid, timeout=60)
    took = time.monotonic() - t0
    assert running.state(".State.Status") == "exited"
    assert running.state(".State.ExitCode") == "0"
    assert took < 10, took  # SIGTERM was enough: no SIGKILL after the 20 s
    assert any(rec.get("event") == "stopped" for rec in running.logs()), running.logs()[-5:]
