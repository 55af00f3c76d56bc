"""The result of a parity run and its report (per table, per stage, first differences)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ovn_northd_py.release import DEFAULT_RELEASE

from .compare import Comparison, FlowDiff, StageDiff, TableDiff, render_flow
from .dump import SbDump


@dataclass(slots=True)
class SideRun:
    label: str
    workdir: Path
    settled: bool = False
    settle_seconds: float | None = None  # cold settle: daemon start -> ovn-nbctl --wait=sb sync returned
    error: str | None = None
    pids: list[int] = field(default_factory=list)  # every process started for this side


@dataclass(slots=True)
class ParityResult:
    source: str
    reference: SideRun
    ours: SideRun
    comparison: Comparison
    ref_dump: SbDump
    ours_dump: SbDump
    workdir: Path | None = None  # set when the work dir was kept
    release: str = DEFAULT_RELEASE.name
    reference_version: str = ""  # e.g. "ovn-northd 25.03.0-1 (OVN 25.03, Debian trixie chroot ...)"

    @property
    def ok(self) -> bool:
        return self.reference.settled and self.ours.settled and self.comparison.ok

    @property
    def tables(self) -> dict[str, TableDiff]:
        return self.comparison.tables

    @property
    def flows(self) -> FlowDiff | None:
        return self.comparison.flows

    def report(self, examples: int = 10) -> str:
        return format_report(self, examples)


def _side_line(side: SideRun) -> str:
    if side.settled and side.settle_seconds is not None:
        return f"  {side.label:<16} cold settle {side.settle_seconds:.3f}s"
    return f"  {side.label:<16} NOT SETTLED: {side.error}"


def _table_line(t: TableDiff) -> str:
    status = "OK  " if t.ok else "FAIL"
    line = f"  {status} {t.table:<22} ref {t.ref_count:>7}  ours {t.ours_count:>7}  matched {t.matched:>7}"
    if t.missing or t.extra or t.differing:
        line += f"  missing {len(t.missing)}  extra {len(t.extra)}  differ {len(t.differing)}"
    return line + ("  (row count only)" if t.count_only else "")


def _stage_line(s: StageDiff) -> str:
    status = "OK  " if s.ok else "FAIL"
    return (
        f"  {status} {s.pipeline:<7} {s.table_id:>2} {s.stage:<28} ref {s.ref_count:>7}  ours {s.ours_count:>7}"
        f"  matched {s.matched:>7}  missing {len(s.missing):>6}  extra {len(s.extra):>6}  {s.percent:6.2f}%"
    )


def _table_details(t: TableDiff, examples: int) -> list[str]:
    lines = [f"  {t.table}:"]
    lines += [f"    missing: {k}" for k in t.missing[:examples]]
    lines += [f"    extra:   {k}" for k in t.extra[:examples]]
    for d in t.differing[:examples]:
        lines += [f"    differ:  {d.key}: {c}: {desc}" for c, desc in d.columns.items()]
    hidden = sum(max(0, len(x) - examples) for x in (t.missing, t.extra, t.differing))
    return lines + ([f"    ... and {hidden} more"] if hidden else [])


def _flow_details(flows: FlowDiff, labels: dict[str, str], examples: int) -> list[str]:
    lines: list[str] = []
    for s in flows.stages:
        if s.ok:
            continue
        lines.append(f"  {s.pipeline} {s.stage}:")
        lines += [f"    missing: {render_flow(f, labels)}" for f in s.missing[:examples]]
        lines += [f"    extra:   {render_flow(f, labels)}" for f in s.extra[:examples]]
        hidden = max(0, len(s.missing) - examples) + max(0, len(s.extra) - examples)
        lines += [f"    ... and {hidden} more"] if hidden else []
    return lines


def format_report(result: ParityResult, examples: int = 10) -> str:
    cmp = result.comparison
    lines = [
        f"Parity: reference vs {result.ours.label} on {result.source}",
        f"Reference: {result.reference_version or 'ovn-northd (host)'}",
        *map(_side_line, (result.reference, result.ours)),
    ]
    shown = [t for t in cmp.tables.values() if t.ref_count or t.ours_count]
    empty = [t.table for t in cmp.tables.values() if not (t.ref_count or t.ours_count)]
    lines += ["Tables:", *map(_table_line, shown)]
    if empty:
        lines.append("  (empty on both sides: " + ", ".join(empty) + ")")
    if cmp.flows is not None:
        f = cmp.flows
        lines += ["Logical flows per stage (expanded over datapaths):", *map(_stage_line, f.stages)]
        lines.append(
            f"  TOTAL ref {f.ref_count}  ours {f.ours_count}  matched {f.matched}  missing {f.missing}"
            f"  extra {f.extra}  {f.percent:.2f}%"
        )
    details = [
        d
        for t in cmp.tables.values()
        if not t.ok or t.missing or t.extra
        for d in _table_details(t, examples)
    ]
    if cmp.flows is not None:
        details += _flow_details(cmp.flows, cmp.labels, examples)
    if details:
        lines += [f"Differences (first {examples} of each):", *details]
    if result.workdir is not None:
        lines.append(f"work dir: {result.workdir}")
    verdict = "PARITY" if cmp.ok else "DIFFERENT"
    unsettled = [s.label for s in (result.reference, result.ours) if not s.settled]
    lines.append("RESULT: " + verdict + (f" (NOT SETTLED: {', '.join(unsettled)})" if unsettled else ""))
    return "\n".join(lines)


def assert_parity(result: ParityResult, examples: int = 20) -> None:
    """For tests: raise AssertionError carrying the report unless every compared table is equal."""
    if not result.ok:
        raise AssertionError("\n" + result.report(examples))
