"""Command line, compatible with ovn-northd's common options."""

from __future__ import annotations

import argparse
import asyncio
import sys

from . import __version__
from . import log as logmod
from .daemon import Daemon, Options, remove_pidfile, write_pidfile
from .metrics import Metrics
from .release import RELEASES, version_text

DEFAULT_NB = "unix:/var/run/ovn/ovnnb_db.sock"
DEFAULT_SB = "unix:/var/run/ovn/ovnsb_db.sock"


class _VersionAction(argparse.Action):
    """``--version`` over several lines (argparse's own action reflows them)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"ovn-northd-py {__version__}\n{version_text()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ovn-northd-py",
        description=(
            "Translate the OVN Northbound database into the Southbound database (a drop-in replacement "
            "for ovn-northd). Takes the SB lock 'ovn_northd', so it is mutually exclusive with ovn-northd "
            "and with other instances. Signals: SIGTERM/SIGINT stop cleanly; SIGHUP or SIGUSR1 force a full "
            "recompute."
        ),
    )
    p.add_argument("--ovnnb-db", default=DEFAULT_NB, metavar="REMOTE",
                   help=f"NB database remote(s), comma-separated for a cluster (default: {DEFAULT_NB})")
    p.add_argument("--ovnsb-db", default=DEFAULT_SB, metavar="REMOTE",
                   help=f"SB database remote(s), comma-separated for a cluster (default: {DEFAULT_SB})")
    p.add_argument("--pidfile", nargs="?", const="/var/run/ovn/ovn-northd-py.pid", default=None, metavar="FILE",
                   help="write the process id to FILE (default when given without a value: "
                        "/var/run/ovn/ovn-northd-py.pid); removed on clean exit")
    p.add_argument("--log-file", nargs="?", const="/var/log/ovn/ovn-northd-py.log", default=None, metavar="FILE",
                   help="append logs to FILE instead of stderr (default when given without a value: "
                        "/var/log/ovn/ovn-northd-py.log)")
    p.add_argument("--log-format", choices=("json", "console"), default=None,
                   help="log format: json for services, console for humans (default: console on a terminal, "
                        "json otherwise)")
    p.add_argument("--metrics-address", default=None, metavar="HOST:PORT",
                   help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off)")
    p.add_argument("--probe-interval", type=int, default=None, metavar="MS",
                   help="inactivity probe interval towards the databases in milliseconds (default: python-ovs')")
    p.add_argument("--check-incremental", type=int, default=0, metavar="N",
                   help="every N incremental runs, run a shadow full recompute and compare; log and repair "
                        "any difference (default: 0, off)")
    p.add_argument("--no-hot-standby", dest="hot_standby", action="store_false", default=True,
                   help="while another northd holds the SB lock, do nothing until it goes away (default: keep "
                        "the model and logical flows current from NB and SB, read only, so that taking over "
                        "writes only the difference)")
    p.add_argument("--ovn-release", default=None, choices=list(RELEASES), metavar="RELEASE",
                   help="serve this OVN release's flow profile (default: the release whose NB and SB schema "
                        "versions the databases have; databases of a release without a profile are refused). "
                        f"Known: {', '.join(RELEASES)}")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more logging (-v: debug)")
    p.add_argument("--detach", action="store_true",
                   help="accepted for compatibility with ovn-northd; ignored (use systemd or a container)")
    p.add_argument("--no-chdir", action="store_true", help="accepted for compatibility; ignored")
    p.add_argument("--version", action=_VersionAction, nargs=0,
                   help="print the version and the OVN releases this version has flow profiles for, and exit")
    return p


def parse_options(argv: list[str] | None = None) -> Options:
    a = build_parser().parse_args(argv)
    fmt = a.log_format or ("console" if sys.stderr.isatty() and not a.log_file else "json")
    return Options(
        nb_remote=a.ovnnb_db,
        sb_remote=a.ovnsb_db,
        log_format=fmt,
        log_level="debug" if a.verbose else "info",
        log_file=a.log_file,
        pidfile=a.pidfile,
        metrics_address=a.metrics_address,
        probe_interval_ms=a.probe_interval,
        check_incremental=a.check_incremental,
        hot_standby=a.hot_standby,
        ovn_release=a.ovn_release,
    )


async def _amain(opts: Options) -> int:
    metrics = Metrics()
    d = Daemon(opts, metrics)
    d.install_signals(asyncio.get_running_loop())
    if opts.metrics_address:
        metrics.serve(opts.metrics_address)
        d.log.info("metrics", url=f"http://{opts.metrics_address}/metrics")
    await d.run()
    return 0


def main(argv: list[str] | None = None) -> int:
    opts = parse_options(argv)
    logmod.configure(opts.log_format, opts.log_level, opts.log_file)
    if opts.pidfile:
        write_pidfile(opts.pidfile)
    try:
        try:
            import uvloop

            return uvloop.run(_amain(opts))
        except ImportError:
            return asyncio.run(_amain(opts))
    except Exception as e:  # a clear message, not a traceback, for configuration errors
        from .ovsdb.schema_check import SchemaMismatch

        if isinstance(e, SchemaMismatch):
            logmod.get("ovn_northd_py").error("schema mismatch", error=str(e))
            return 2
        raise
    finally:
        if opts.pidfile:
            remove_pidfile(opts.pidfile)
