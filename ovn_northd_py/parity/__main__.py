"""``python -m ovn_northd_py.parity``: reference ovn-northd vs ours on one NB, SB compared.

Examples::

    python -m ovn_northd_py.parity --switches 10 --ports 10 --gw-routers 10
    python -m ovn_northd_py.parity --reference-both --switches 3          # harness self-test
    python -m ovn_northd_py.parity --release 25.03 --switches 3           # 25.03's reference (chroot)
    python -m ovn_northd_py.parity --release 23.03 --from-chroot          # 23.03 from the bookworm chroot
    python -m ovn_northd_py.parity --nb-file /path/to/ovnnb_db.db --tables Logical_Flow Port_Binding
    python -m ovn_northd_py.parity --ours-cmd '{python} -m ovn_northd_py --ovnnb-db={nb} ...' \\
        --script ./my_nb.py NB_REMOTE 5          # --script must come last

The reference of ``--release`` (default 23.03) runs from the host when the host's OVN is that
release, else from its Debian chroot (``bash scripts/chroots.sh SUITE`` builds it once);
``--from-chroot`` or ``OVN_NORTHD_PY_FROM_CHROOT=1`` always uses the chroot.  The report's
``Reference:`` line names the exact package version that ran.

Exit status: 0 parity on every compared table, 1 differences, 2 the harness could not run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ovn_northd_py.parity.harness import (
    OURS_CMD_DEFAULT,
    HarnessError,
    NbSource,
    run_parity,
    script,
    workload,
)
from ovn_northd_py.release import DEFAULT_RELEASE, RELEASES


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ovn_northd_py.parity",
        description="Run reference ovn-northd and ours on copies of one NB and compare the SBs they write.",
    )
    src = p.add_argument_group("NB source (default: --workload mixed)")
    src.add_argument("--workload", default="mixed", help="script of the shared workloads dir (default mixed)")
    src.add_argument("--switches", type=int, default=10, help="workload argument 1 (default 10)")
    src.add_argument("--ports", type=int, default=10, help="workload argument 2 (default 10)")
    src.add_argument("--gw-routers", type=int, default=None, help="workload argument 3 (default: --switches)")
    src.add_argument("--nb-file", type=Path, help="start from this NB database file")
    src.add_argument(
        "--script",
        nargs=argparse.REMAINDER,
        metavar="PATH ARGS",
        help="python script building the NB; NB_REMOTE in ARGS is replaced, else the remote goes first. Last!",
    )
    p.add_argument(
        "--ours-cmd", default=None, help=f"command template for our daemon (default: {OURS_CMD_DEFAULT!r})"
    )
    p.add_argument(
        "--release", choices=list(RELEASES), default=DEFAULT_RELEASE.name,
        help=f"OVN release of the reference and of the NB/SB schemas (default {DEFAULT_RELEASE.name})",
    )
    p.add_argument(
        "--from-chroot", action="store_true", default=None,
        help="run the reference from the release's Debian chroot even when the host's OVN is that release",
    )
    p.add_argument(
        "--reference-both", action="store_true", help="run the reference on both sides (self-test)"
    )
    p.add_argument(
        "--tables", nargs="+", metavar="TABLE", help="compare only these SB tables (incl. Logical_Flow)"
    )
    p.add_argument("--keep", action="store_true", help="keep the work dir when the run fails")
    p.add_argument("--workdir", type=Path, help="use (and keep) this work dir")
    p.add_argument(
        "--examples", type=int, default=10, help="differences shown per table / stage (default 10)"
    )
    p.add_argument(
        "--settle-timeout", type=float, default=120.0, help="seconds per side to settle (default 120)"
    )
    return p


def _source(args: argparse.Namespace) -> NbSource:
    if args.nb_file is not None:
        return Path(args.nb_file)
    if args.script:
        return script(args.script[0], *args.script[1:])
    gw = args.gw_routers if args.gw_routers is not None else args.switches
    return workload(args.workload, args.switches, args.ports, gw)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.nb_file is not None and args.script:
        _parser().error("--nb-file and --script are exclusive")
    try:
        result = run_parity(
            _source(args),
            ours_cmd=args.ours_cmd,
            reference_both=args.reference_both,
            tables=args.tables,
            workdir=args.workdir,
            keep=args.keep,
            settle_timeout=args.settle_timeout,
            release=args.release,
            from_chroot=args.from_chroot,
        )
    except (HarnessError, ValueError, OSError, subprocess.SubprocessError) as exc:
        print(f"parity harness failed: {exc}", file=sys.stderr)
        for note in getattr(exc, "__notes__", []):
            print(note, file=sys.stderr)
        return 2
    try:
        print(result.report(args.examples), flush=True)
    except BrokenPipeError:  # e.g. piped into head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
