"""benchmarks/bench_latency.py --interleave: the sides' order per round, and the order of the steps
(the steps themselves faked: no server, no daemon)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_latency.py"


@pytest.fixture(scope="module")
def bl() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_latency", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_latency", module)
    spec.loader.exec_module(module)
    return module


def test_round_order_alternates(bl: ModuleType) -> None:
    assert [bl.round_order("AB", r) for r in range(4)] == [["A", "B"], ["B", "A"], ["A", "B"], ["B", "A"]]
    assert bl.round_order(["A"], 1) == ["A"]


def _sides(bl: ModuleType, tmp_path: Path) -> list[object]:
    return [bl.Side(label, tmp_path / label, tmp_path / "seed.db", bl.start_ours) for label in ("ref", "ours")]


def _record(bl: ModuleType, monkeypatch: pytest.MonkeyPatch, fail: tuple[str, str] | None = None) -> list[str]:
    """Fake steps that log ``step label [round]``; ``fail``: (step, label) raises HarnessError."""
    log: list[str] = []

    def fake(step: str) -> Callable[..., None]:
        def run(run: Any, *args: Any) -> None:
            rnd = [str(a) for a in args if isinstance(a, int)]
            log.append(" ".join([step, run.side.label, *rnd]))
            if fail == (step, run.side.label):
                raise bl.HarnessError("boom")

        return run

    for step in ("start_side", "prepare_kind", "run_round", "finish_kind", "finish_side"):
        monkeypatch.setattr(bl, step, fake(step))
    monkeypatch.setattr(bl, "stop_side", lambda run: log.append(f"stop {run.side.label}"))
    return log


def _cfg(bl: ModuleType) -> object:
    return bl.RunConfig([bl.CHANGE_KINDS["lsp-add"]], rounds=2, warmup=1, settle=0, sync_timeout=1, change_timeout=1)


def test_interleaved_steps(bl: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    log = _record(bl, monkeypatch)
    results = bl.run_sides_interleaved(_sides(bl, tmp_path), _cfg(bl))
    assert log == [
        "start_side ref", "start_side ours",
        "prepare_kind ref", "prepare_kind ours",
        "run_round ref 0", "run_round ours 0",
        "run_round ours 1", "run_round ref 1",
        "run_round ref 2", "run_round ours 2",
        "finish_kind ref", "finish_kind ours",
        "finish_side ref", "finish_side ours",
        "stop ours", "stop ref",
    ]  # fmt: skip
    assert list(results) == ["ref", "ours"]
    assert all(res.error is None and len(res.loadavg) == 1 for res in results.values())


def test_interleaved_failed_side_stops_alone(bl: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    log = _record(bl, monkeypatch, fail=("run_round", "ours"))
    stopped: list[str] = []

    def stop(run: Any) -> None:
        if run.up:
            run.up = False
            stopped.append(run.side.label)
            log.append(f"stop {run.side.label}")

    monkeypatch.setattr(bl, "stop_side", stop)
    results = bl.run_sides_interleaved(_sides(bl, tmp_path), _cfg(bl))
    assert results["ours"].error == "boom" and results["ref"].error is None
    assert log.index("stop ours") == log.index("run_round ours 0") + 1
    assert [e for e in log if e.endswith("ours") or " ours " in e] == ["start_side ours", "prepare_kind ours",
                                                                      "run_round ours 0", "stop ours"]
    assert log[-2:] == ["finish_side ref", "stop ref"]
    assert stopped == ["ours", "ref"]
