"""benchmarks/bench_cold.py: the sides' order per round and the medians it reports (no server, no
daemon)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_DIR = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bc() -> ModuleType:
    sys.path.insert(0, str(_DIR))
    try:
        spec = importlib.util.spec_from_file_location("bench_cold", _DIR / "bench_cold.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("bench_cold", module)  # (its dataclasses look their module up)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(_DIR))


def test_each_side_goes_first_every_other_round(bc: ModuleType) -> None:
    orders = [bc.round_order(["reference", "ours"], r) for r in range(4)]
    assert orders == [["reference", "ours"], ["ours", "reference"], ["reference", "ours"], ["ours", "reference"]]


def test_summary_gives_median_min_max_of_each_measure(bc: ModuleType) -> None:
    s = bc.ColdSamples(wall=[9.0, 7.0, 8.0], cpu=[5.0, 6.0, 4.0], rss=[300.0, 310.0, 305.0])
    got = s.summary()
    assert got["wall_s"] == {"median": 8.0, "min": 7.0, "max": 9.0, "n": 3}
    assert got["cpu_s"]["median"] == 5.0 and got["rss_mb"]["max"] == 310.0


def test_ratio_is_of_the_medians_and_none_without_a_side(bc: ModuleType) -> None:
    ours = bc.ColdSamples(wall=[8.0, 10.0, 9.0]).summary()
    ref = bc.ColdSamples(wall=[12.0, 10.0, 11.0]).summary()
    assert bc._ratio(ours, ref, "wall_s") == pytest.approx(9.0 / 11.0)
    assert bc._ratio(ours, {}, "wall_s") is None
