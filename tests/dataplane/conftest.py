"""The real dataplane suite: OVS (userspace datapath) + ovn-controller, VMs in network namespaces.

One stack (NB/SB ovsdb-servers, the northd under test, one chassis "hv1") per module; every test
builds its own logical topology with the ``topo`` fixture, which deletes it again afterwards (VM
namespaces, VIFs, every NB object) and checks that SB followed.  A stack whose northd did not
follow (no SB datapath may survive an empty NB) is replaced before the next test, so one wedged
daemon fails its test, not the rest of the module.

The northd is ours (``ovn-northd-py``) unless ``--northd=c`` or ``DATAPLANE_NORTHD=c`` selects the
C reference (``/usr/bin/ovn-northd``): every test must pass with the reference.

``--release 25.03`` or ``26.03`` (or ``DATAPLANE_RELEASE``) runs everything of that OVN release but
our daemon from its Debian chroot (``scripts/chroots.sh --with-host trixie`` / ``sid``): NB/SB
servers, ``ovn-nbctl``, the C northd, OVS and ``ovn-controller``; ours serves it with the release's
profile (a draft profile is switched on for it).  A release we have no profile for runs with
``--northd=c`` only.  ``DATAPLANE_NORTHD_ARGS`` adds options to ours (e.g. ``--check-incremental=1``:
every incremental run compared with a full recompute; ``test_dp_zz_controller_logs`` then checks
that no comparison differed).

Needs root (namespaces, taps): anything missing fails every test here with the reason, loudly.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import warnings
from collections.abc import Iterator

import pytest

from ovn_northd_py.devtools import dataplane as dp
from ovn_northd_py.devtools.tools import ToolsUnavailable, chassis_tools_for
from ovn_northd_py.release import DEFAULT_RELEASE, Release, get_release


def northd_kind(config: pytest.Config) -> str:
    kind = config.getoption("--northd", default=None) or os.environ.get("DATAPLANE_NORTHD", "py")
    if kind not in ("py", "c"):
        raise pytest.UsageError(f"DATAPLANE_NORTHD must be py or c, not {kind!r}")
    return str(kind)


def dataplane_release(config: pytest.Config) -> Release:
    name = config.getoption("--release", default=None) or os.environ.get("DATAPLANE_RELEASE") or DEFAULT_RELEASE.name
    try:
        return get_release(str(name))
    except ValueError as e:
        raise pytest.UsageError(f"--release / DATAPLANE_RELEASE: {e}") from None


def chassis_release(config: pytest.Config) -> Release:
    name = config.getoption("--chassis-release", default=None) or os.environ.get("DATAPLANE_CHASSIS_RELEASE")
    if not name:
        return dataplane_release(config)
    try:
        return get_release(str(name))
    except ValueError as e:
        raise pytest.UsageError(f"--chassis-release / DATAPLANE_CHASSIS_RELEASE: {e}") from None


def pytest_report_header(config: pytest.Config) -> str:
    return (f"dataplane northd: {northd_kind(config)} (--northd=py|c, DATAPLANE_NORTHD), "
            f"release {dataplane_release(config).name} (--release, DATAPLANE_RELEASE), "
            f"chassis {chassis_release(config).name} (--chassis-release, DATAPLANE_CHASSIS_RELEASE)")


@pytest.fixture(scope="session")
def dataplane_session(request: pytest.FixtureRequest) -> Iterator[None]:
    problems = dp.environment_problems()
    release, kind = dataplane_release(request.config), northd_kind(request.config)
    if release.flow_profile is None and release.draft_profile is None and kind != "c":
        problems.append(f"ovn-northd-py has no profile for OVN {release.name}: run it with --northd=c")
    try:
        chassis_tools_for(chassis_release(request.config))
    except ToolsUnavailable as e:
        problems.append(str(e))
    if problems:
        pytest.fail("the dataplane suite cannot run here: " + "; ".join(problems), pytrace=False)
    stale = dp.reap_stale()
    if stale:
        warnings.warn(f"cleaned up after an earlier, killed run: {stale}", stacklevel=1)

    # SIGTERM (a CI timeout) unwinds like Ctrl-C, so that the finalizers below still run.
    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        errors = dp.cleanup_all()
        if not os.environ.get("DATAPLANE_KEEP"):
            for st in dp.ALL_STACKS:
                shutil.rmtree(st.workdir, ignore_errors=True)
                if st.chassis is not None:
                    shutil.rmtree(st.chassis.rundir, ignore_errors=True)
        if errors:
            warnings.warn(f"dataplane cleanup errors: {errors}", stacklevel=1)


class StackHolder:
    """The module's stack, replaced when a test left it unable to follow NB."""

    def __init__(self, kind: str, release: Release = DEFAULT_RELEASE, chassis: Release | None = None) -> None:
        self.kind = kind
        self.release = release
        self.chassis = chassis
        self.stack: dp.Stack | None = None

    def get(self) -> dp.Stack:
        if self.stack is None:
            self.stack = dp.Stack(northd_kind=self.kind, release=self.release, chassis_release=self.chassis,
                                  northd_args=shlex.split(os.environ.get("DATAPLANE_NORTHD_ARGS", ""))).start()
        return self.stack

    def discard(self) -> None:
        if self.stack is not None:
            self.stack.stop()
            self.stack = None


@pytest.fixture(scope="module")
def stacks(request: pytest.FixtureRequest, dataplane_session: None) -> Iterator[StackHolder]:
    holder = StackHolder(northd_kind(request.config), dataplane_release(request.config),
                         chassis_release(request.config))
    try:
        yield holder
    finally:
        holder.discard()


@pytest.fixture
def stack(stacks: StackHolder) -> dp.Stack:
    return stacks.get()


@pytest.fixture
def topo(stacks: StackHolder, request: pytest.FixtureRequest) -> Iterator[dp.Topology]:
    st = stacks.get()
    t = dp.Topology(st)
    try:
        yield t
    finally:
        errors = t.destroy()
        try:
            healthy = st.clear_nb()
        except Exception as e:
            healthy = False
            errors.append(f"clear_nb: {e}")
        if not healthy:
            warnings.warn(
                f"{request.node.name}: SB did not follow an empty NB within 15 s "
                f"(northd log {st.northd_log}); replacing the stack for the next test",
                stacklevel=1,
            )
            stacks.discard()
        if errors:
            warnings.warn(f"{request.node.name}: cleanup errors {errors}", stacklevel=1)
