"""Engine node metrics: tallied in plain dicts, exported under the counters' usual names."""

from __future__ import annotations

from prometheus_client import generate_latest

from ovn_northd_py.metrics import Metrics


def test_node_tally_is_scraped_as_the_engine_node_counters() -> None:
    m = Metrics()
    m.nodes.add("northd", "incremental", 0.25)
    m.nodes.add("northd", "incremental", 0.5)
    m.nodes.add("lflow", "unhandled", 0.0)
    text = generate_latest(m.registry).decode()
    assert 'ovn_northd_py_engine_node_runs_total{node="northd",result="incremental"} 2.0' in text
    assert 'ovn_northd_py_engine_node_runs_total{node="lflow",result="unhandled"} 1.0' in text
    assert 'ovn_northd_py_engine_node_seconds_total{node="northd"} 0.75' in text
    assert "# TYPE ovn_northd_py_engine_node_runs_total counter" in text or \
        "# TYPE ovn_northd_py_engine_node_runs counter" in text
