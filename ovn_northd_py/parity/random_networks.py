"""Parity over random networks: how many are fully equal, and what differs in the others.

    python -m ovn_northd_py.parity.random_networks --seeds 1-50 [--size 4] [--release 23.03]
        [--json FILE] [--keep-failed DIR] [--examples N]

Each seed is a network of :mod:`ovn_northd_py.devtools.gen_random` (every NB feature, with
occasional malformed values); the reference of ``--release`` and our daemon run on copies of it
(:func:`ovn_northd_py.parity.harness.run_parity`).  A network counts as equal only when every SB
table and every logical flow is.  The summary lists, for the others, which SB tables and flow
stages differed and in how many networks, so that the most common gap shows first.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..devtools import gen_random
from ..release import DEFAULT_RELEASE, RELEASES
from .harness import HarnessError, ParityResult, run_parity, script


@dataclass(slots=True)
class Outcome:
    seed: int
    equal: bool
    tables: list[str] = field(default_factory=list)  # SB tables that differ
    stages: list[str] = field(default_factory=list)  # flow stages that differ
    flows_ref: int = 0
    flows_matched: int = 0
    error: str = ""


def outcome(seed: int, r: ParityResult) -> Outcome:
    flows = r.flows
    return Outcome(
        seed, r.ok,
        tables=sorted(name for name, t in r.tables.items() if not t.ok),
        stages=sorted(f"{s.stage}" for s in (flows.stages if flows else []) if not s.ok),
        flows_ref=flows.ref_count if flows else 0,
        flows_matched=flows.matched if flows else 0,
    )


def parse_seeds(text: str) -> list[int]:
    """``1-50``, ``3,7,9`` or a mix (``1-5,9``)."""
    out: list[int] = []
    for part in text.split(","):
        a, dash, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if dash else [int(a)]
    return out


def run_seed(seed: int, size: int, release: str, keep_dir: Path | None, examples: int) -> tuple[Outcome, str]:
    source = script(gen_random.__file__, "NB_REMOTE", str(seed), str(size))
    try:
        workdir = keep_dir / f"seed-{seed}" if keep_dir is not None else None
        r = run_parity(source, release=release, workdir=workdir)
    except HarnessError as e:
        return Outcome(seed, False, error=str(e)[:500]), ""
    return outcome(seed, r), ("" if r.ok else r.report(examples))


def summary(outcomes: list[Outcome], release: str) -> str:
    equal = sum(o.equal for o in outcomes)
    ref = sum(o.flows_ref for o in outcomes)
    matched = sum(o.flows_matched for o in outcomes)
    pct = 100.0 * matched / ref if ref else 100.0
    lines = [(f"OVN {release}: {equal}/{len(outcomes)} random networks fully equal; "
              f"flows matched {matched}/{ref} ({pct:.2f}%)")]
    tables = Counter(t for o in outcomes for t in o.tables)
    stages = Counter(s for o in outcomes for s in o.stages)
    for name, n in tables.most_common():
        lines.append(f"  table {name:<28} differs in {n} network(s)")
    for name, n in stages.most_common():
        lines.append(f"  stage {name:<28} differs in {n} network(s)")
    for o in outcomes:
        if o.error:
            lines.append(f"  seed {o.seed}: harness error: {o.error}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1-20", help="seeds: 1-50, 3,7,9 or a mix (default 1-20)")
    ap.add_argument("--size", type=int, default=4, help="switches per network (default 4)")
    ap.add_argument("--release", choices=sorted(RELEASES), default=DEFAULT_RELEASE.name,
                    help=f"OVN release of the reference (default {DEFAULT_RELEASE.name})")
    ap.add_argument("--json", type=Path, help="write the per-seed outcomes here")
    ap.add_argument("--keep-failed", type=Path, metavar="DIR", help="keep the work dirs of every seed here")
    ap.add_argument("--examples", type=int, default=5, help="differences shown per table / stage (default 5)")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    args = ap.parse_args(argv)
    outcomes: list[Outcome] = []
    for seed in parse_seeds(args.seeds):
        o, report = run_seed(seed, args.size, args.release, args.keep_failed, args.examples)
        outcomes.append(o)
        state = "equal" if o.equal else f"DIFFERENT ({', '.join(o.tables + o.stages) or o.error[:80]})"
        print(f"seed {seed}: {state}", flush=True)
        if report and not args.quiet:
            print(report, flush=True)
    print(summary(outcomes, args.release))
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(o) for o in outcomes], indent=1))
    return 0 if all(o.equal for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
