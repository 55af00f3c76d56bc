"""Command line, compatible with ovn-northd's (every option of ``ovn-northd --help``), plus our extras.

Process handling is python-ovs': ``ovs.daemon`` (``--detach``, ``--monitor``, a locked
``--pidfile``, ``--overwrite-pidfile``, ``--no-chdir``), ``ovs.vlog`` (``-vSPEC``, ``--log-file``,
syslog), ``ovs.unixctl.server`` (the ``ovn-appctl`` control socket, :mod:`.control`) and
``ovs.stream`` SSL (:mod:`.ovsdb.tls`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from typing import Any

import ovs.daemon
import ovs.util
import ovs.version

from . import __version__
from . import log as logmod
from .daemonize import (
    Notifier,
    UserError,
    abs_path,
    become_user,
    default_log_file,
    default_pidfile,
    parse_user,
    rundir,
    set_process_name,
)
from .ovsdb import tls
from .release import RELEASES, version_text

DEFAULT_NB = "unix:/var/run/ovn/ovnnb_db.sock"
DEFAULT_SB = "unix:/var/run/ovn/ovnsb_db.sock"
PROGRAM = "ovn-northd"  # as the C daemon: pidfile, control socket and vlog names

EPILOG = """\
Signals: SIGTERM, SIGINT and SIGHUP stop cleanly (as ovn-northd); SIGUSR1 forces a full recompute.

Control socket (ovn-appctl -t <rundir>/ovn-northd.<pid>.ctl COMMAND, or ovn-appctl -t ovn-northd
when the pidfile is <rundir>/ovn-northd.pid): status, pause, resume, is-paused,
nb-connection-status, sb-connection-status, nb-cluster-state-reset, sb-cluster-state-reset,
inc-engine/show-stats, inc-engine/clear-stats, inc-engine/recompute, exit, version, vlog/set,
vlog/list, vlog/reopen, memory/show, coverage/show, stopwatch/show, list-commands, and ours:
recompute, plan [N], explain UUID|TEXT.

Remotes: unix:FILE, tcp:HOST:PORT, ssl:HOST:PORT (needs -p, -c and -C); comma-separated for a
cluster.  <rundir> is $OVN_RUNDIR or /var/run/ovn; log files default to $OVS_LOGDIR (as the C
daemon), else $OVN_LOGDIR, else /var/log/ovn.
"""


class _VersionAction(argparse.Action):
    """-V/--version: the first line ends with the ovn-northd version we are compatible with (as
    `ovn-northd --version`'s), then our release profiles and python-ovs' version."""

    def __call__(self, parser: argparse.ArgumentParser, *_a: Any, **_kw: Any) -> None:
        print(f"ovn-northd-py {__version__}, compatible with ovn-northd 23.03.1\n{version_text()}\n"
              f"Open vSwitch Library {ovs.version.VERSION}")
        parser.exit()


class _DumpGraphAction(argparse.Action):
    """--dump-graph: print the incremental engine's graph (nodes, edges with their handlers,
    features with their tables) and exit."""

    def __call__(self, parser: argparse.ArgumentParser, *_a: Any, **_kw: Any) -> None:
        from .engine.graph import dump

        print(dump(), end="")
        parser.exit()


class _Options(argparse.Action):
    """-o/--options: list the options, one per line (as ovn-northd -o)."""

    def __call__(self, parser: argparse.ArgumentParser, *_a: Any, **_kw: Any) -> None:
        for act in parser._actions:
            for s in act.option_strings:
                if act.nargs == 0:
                    print(s)
                elif act.nargs == "?":
                    print(f"{s}=[ARG]" if s.startswith("--") else f"{s} [ARG]")
                else:
                    print(f"{s}=ARG" if s.startswith("--") else f"{s} ARG")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ovn-northd-py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Translate the OVN Northbound database into the Southbound database (a drop-in replacement "
            "for ovn-northd, with the same options). Takes the SB lock 'ovn_northd', so it is mutually "
            "exclusive with ovn-northd and with other instances: one is active, the others stand by."
        ),
        epilog=EPILOG,
        add_help=False,
    )
    g = p.add_argument_group("Options")
    g.add_argument("-D", "--ovnnb-db", default=os.environ.get("OVN_NB_DB") or DEFAULT_NB, metavar="DATABASE",
                   help=f"connect to ovn-nb database at DATABASE (default: $OVN_NB_DB, else {DEFAULT_NB})")
    g.add_argument("-d", "--ovnsb-db", default=os.environ.get("OVN_SB_DB") or DEFAULT_SB, metavar="DATABASE",
                   help=f"connect to ovn-sb database at DATABASE (default: $OVN_SB_DB, else {DEFAULT_SB})")
    g.add_argument("--dry-run", action="store_true",
                   help="start in paused state (do not commit db changes; `ovn-appctl resume` to start)")
    g.add_argument("--n-threads", type=int, default=None, metavar="N",
                   help="accepted for compatibility and logged; ovn-northd-py computes in one thread")
    g.add_argument("-u", "--unixctl", default=None, metavar="SOCKET",
                   help="override the default control socket name (<rundir>/ovn-northd.<pid>.ctl); "
                        "relative names are relative to <rundir>")
    g.add_argument("-h", "--help", action="help", help="display this help message")
    g.add_argument("-o", "--options", action=_Options, nargs=0, help="list available options")
    g.add_argument("-V", "--version", action=_VersionAction, nargs=0,
                   help="display version information (and the OVN releases this version has flow profiles for)")

    dm = p.add_argument_group("Daemon options")
    dm.add_argument("--detach", action="store_true", help="run in background as daemon")
    dm.add_argument("--monitor", action="store_true",
                    help="create a process to monitor this daemon and restart it if it crashes")
    dm.add_argument("--user", default=None, metavar="USER[:GROUP]",
                    help="after creating the pidfile, drop root privileges and run as USER:GROUP")
    dm.add_argument("--no-chdir", action="store_true", help="do not chdir to '/' (with --detach)")
    dm.add_argument("--no-self-confinement", action="store_true",
                    help="accepted for compatibility; ovn-northd-py confines nothing itself")
    dm.add_argument("--pidfile", nargs="?", const="", default=None, metavar="FILE",
                    help="create a locked pidfile (default: <rundir>/ovn-northd.pid); a second instance "
                         "with the same pidfile refuses to start; removed on exit")
    dm.add_argument("--overwrite-pidfile", action="store_true",
                    help="with --pidfile, start even if already running")

    lg = p.add_argument_group("Logging options")
    lg.add_argument("-v", "--verbose", nargs="?", const="", action="append", default=[], metavar="SPEC",
                    help="-vSPEC/--verbose=SPEC: set logging levels, SPEC = [module][:destination][:level] "
                         "(destinations console, syslog, file; levels off, emer, err, warn, info, dbg; e.g. "
                         "-vconsole:emer -vsyslog:err -vfile:info); -v alone: maximum verbosity")
    lg.add_argument("--log-file", nargs="?", const="", default=None, metavar="FILE",
                    help="also log to FILE (default: <logdir>/ovn-northd.log); the console is then off "
                         "unless a -vconsole: spec says otherwise; `ovn-appctl vlog/reopen` reopens it")
    lg.add_argument("--syslog-method", default=None, metavar="(libc|unix:FILE|udp:IP:PORT)",
                    help="how to send messages to the syslog daemon (default: /dev/log)")
    lg.add_argument("--syslog-target", default=None, metavar="HOST:PORT",
                    help="also send syslog messages to HOST:PORT via UDP")
    lg.add_argument("--log-format", choices=("json", "console"), default=None,
                    help="(ovn-northd-py) format of our log lines: json for services, console for humans "
                         "(default: console on a terminal, json otherwise)")

    pk = p.add_argument_group("PKI configuration (required to use SSL)")
    pk.add_argument("-p", "--private-key", default=None, metavar="FILE", help="file with private key")
    pk.add_argument("-c", "--certificate", default=None, metavar="FILE",
                    help="file with certificate for private key")
    pk.add_argument("-C", "--ca-cert", default=None, metavar="FILE", help="file with peer CA certificate")
    pk.add_argument("--ssl-protocols", default=None, metavar="PROTOS",
                    help="list of SSL protocols to enable (e.g. TLSv1.2,TLSv1.3)")
    pk.add_argument("--ssl-ciphers", default=None, metavar="CIPHERS",
                    help="list of SSL ciphers to enable (OpenSSL syntax)")

    ox = p.add_argument_group("ovn-northd-py options")
    ox.add_argument("--metrics-address", default=os.environ.get("OVN_NORTHD_METRICS_ADDRESS") or None,
                    metavar="[HOST:]PORT",
                    help="serve Prometheus metrics at http://HOST:PORT/metrics, and /healthz and /readyz "
                         "(HOST defaults to 127.0.0.1; default: $OVN_NORTHD_METRICS_ADDRESS, else off)")
    ox.add_argument("--probe-interval", type=int, default=None, metavar="MS",
                    help="inactivity probe interval towards the databases in milliseconds (default: python-ovs')")
    ox.add_argument("--dump-graph", action=_DumpGraphAction, nargs=0,
                    help="print the incremental engine's graph (nodes, input edges with their handlers, "
                         "features and the NB/SB tables they take) and exit")
    ox.add_argument("--check-incremental", type=int, default=0, metavar="N",
                    help="every N incremental runs, run a shadow full recompute and compare; log and repair "
                         "any difference (default: 0, off)")
    ox.add_argument("--no-hot-standby", dest="hot_standby", action="store_false", default=True,
                    help="while another northd holds the SB lock, do nothing until it goes away (default: keep "
                         "the model and logical flows current from NB and SB, read only, so that taking over "
                         "writes only the difference)")
    ox.add_argument("--no-passthrough", dest="passthrough", action="store_false", default=True,
                    help="leave every NB change to the incremental engine (default: while idle, copy a change "
                         "of an address set's addresses into SB as soon as it is read, before the engine runs; "
                         "the engine then finds nothing to write)")
    ox.add_argument("--ovn-release", default=None, choices=list(RELEASES), metavar="RELEASE",
                    help="serve this OVN release's flow profile (default: the release whose NB and SB schema "
                         "versions the databases have; databases of a release without a profile are refused). "
                         f"Known: {', '.join(RELEASES)}")
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    a = build_parser().parse_args(argv)
    if a.metrics_address and ":" not in a.metrics_address:
        a.metrics_address = f"127.0.0.1:{a.metrics_address}"
    if a.pidfile is not None:
        a.pidfile = abs_path(a.pidfile, rundir()) if a.pidfile else default_pidfile()
    if a.log_file is not None:
        a.log_file = os.path.abspath(a.log_file) if a.log_file else default_log_file()
    if a.unixctl is not None:
        a.unixctl = abs_path(a.unixctl, rundir())
    return a


def parse_options(argv: list[str] | None = None) -> Any:
    """The daemon's Options from a command line (kept for tools and tests)."""

    return _options(parse_args(argv))


def _options(a: argparse.Namespace) -> Any:
    from .daemon import Options

    fmt = a.log_format or ("console" if sys.stderr.isatty() and not a.log_file else "json")
    return Options(
        nb_remote=a.ovnnb_db,
        sb_remote=a.ovnsb_db,
        log_format=fmt,
        log_level="info",
        log_file=a.log_file,
        pidfile=a.pidfile,
        metrics_address=a.metrics_address,
        probe_interval_ms=a.probe_interval,
        check_incremental=a.check_incremental,
        hot_standby=a.hot_standby,
        passthrough=a.passthrough,
        ovn_release=a.ovn_release,
    )


def _fatal(msg: str, code: int = 1) -> int:
    print(f"ovn-northd-py: {msg}", file=sys.stderr)
    with contextlib.suppress(Exception):
        logmod.get("ovn_northd_py").error("fatal", error=msg)
    return code


async def _amain(a: argparse.Namespace, opts: Any) -> int:
    from .control import Control
    from .daemon import Daemon
    from .metrics import Metrics
    from .opmetrics import NorthdCollector, serve

    log = logmod.get("ovn_northd_py")
    metrics = Metrics()
    d = Daemon(opts, metrics)
    d.install_signals(asyncio.get_running_loop())
    if a.dry_run:
        d.pause()
    if a.n_threads is not None:
        log.info("--n-threads accepted; ovn-northd-py computes in one thread", n_threads=a.n_threads)
    path = a.unixctl or f"{rundir()}/{PROGRAM}.{os.getpid()}.ctl"
    control: Control | None = Control(d, path)
    assert control is not None
    try:
        control.start()
    except OSError as e:
        if a.unixctl:
            raise
        log.warning("no control socket", error=str(e))
        control = None
    notifier = Notifier()
    collector = NorthdCollector(d, control, a.probe_interval)
    metrics.registry.register(collector)
    d.loop_hooks.append(collector.hook)
    d.loop_hooks.append(notifier.hook(d))
    ovs.daemon.daemonize_complete()  # --detach: the parent exits 0 now (the control socket is up)
    http = None
    if opts.metrics_address:
        http = serve(opts.metrics_address, metrics.registry, collector)
        log.info("metrics", url=f"http://{opts.metrics_address}/metrics")
    tick = 5.0
    if notifier.watchdog_interval:
        tick = min(tick, notifier.watchdog_interval / 4)
    # The control task also wakes the main loop every `tick` (loop hooks: watchdog, /healthz);
    # without a control socket, a plain ticker does.
    task = asyncio.ensure_future(control.serve(tick) if control is not None else _ticker(d, tick))
    task.add_done_callback(_log_task_failure)
    try:
        await d.run()
    finally:
        notifier.stopping()
        notifier.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if http is not None:
            http.shutdown()
    return 0


async def _ticker(d: Any, tick: float) -> None:
    while True:
        await asyncio.sleep(tick)
        d.wake_event.set()


def _log_task_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        exc = task.exception()
        logmod.get("ovn_northd_py").error("control socket failed", error=repr(exc), exc_info=exc)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    opts = _options(a)
    ovs.util.PROGRAM_NAME = PROGRAM
    set_process_name(PROGRAM)
    try:
        logmod.configure(opts.log_format, opts.log_level, opts.log_file, specs=[s or "any:any:dbg" for s in a.verbose],
                         syslog_method=a.syslog_method, syslog_target=a.syslog_target)
    except logmod.LogSetupError as e:
        return _fatal(str(e))
    try:
        tls.configure(tls.TlsOptions(a.private_key, a.certificate, a.ca_cert, a.ssl_protocols, a.ssl_ciphers),
                      a.ovnnb_db, a.ovnsb_db)
        if a.user:
            parse_user(a.user)
    except (tls.TlsSetupError, UserError) as e:
        return _fatal(str(e))
    if a.detach:
        ovs.daemon.set_detach()
    if a.monitor:
        ovs.daemon.set_monitor()
    if a.no_chdir:
        ovs.daemon.set_no_chdir()
    if a.pidfile:
        ovs.daemon.set_pidfile(a.pidfile)
    if a.overwrite_pidfile:
        ovs.daemon.ignore_existing_pidfile()
    ovs.daemon.daemonize_start()  # forks for --detach/--monitor; creates and locks the pidfile
    if a.user:
        try:
            become_user(a.user)
        except (UserError, OSError) as e:
            return _fatal(str(e))
    try:
        try:
            import uvloop

            return uvloop.run(_amain(a, opts))
        except ImportError:
            return asyncio.run(_amain(a, opts))
    except Exception as e:  # a clear message, not a traceback, for configuration errors
        from .ovsdb.schema_check import SchemaMismatch

        if isinstance(e, SchemaMismatch):
            logmod.get("ovn_northd_py").error("schema mismatch", error=str(e))
            return 2
        if isinstance(e, OSError) and "control socket" in str(e):
            return _fatal(str(e))
        raise
