"""Prometheus metrics.  One registry per daemon (dependency-injected) so tests can build several."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, Metric

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class EngineNodeTally:
    """Engine node runs and time, tallied in plain dicts on every run (prometheus-client's labelled
    counters take a lock per increment, several per run) and turned into the counters
    ``ovn_northd_py_engine_node_runs_total{node,result}`` and ``ovn_northd_py_engine_node_seconds_total{node}``
    when scraped.  Lives as long as the registry: totals never go back (a new engine graph adds on)."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, str], int] = {}
        self.seconds: dict[str, float] = {}

    def add(self, node: str, result: str, seconds: float) -> None:
        runs = self.runs
        runs[node, result] = runs.get((node, result), 0) + 1
        if seconds:
            self.seconds[node] = self.seconds.get(node, 0.0) + seconds

    def collect(self) -> Iterator[Metric]:
        runs = CounterMetricFamily("ovn_northd_py_engine_node_runs",
                                   "Engine node runs by result (recompute/incremental/unhandled/unchanged)",
                                   labels=["node", "result"])
        for (node, result), n in sorted(self.runs.items()):
            runs.add_metric([node, result], n)
        yield runs
        secs = CounterMetricFamily("ovn_northd_py_engine_node_seconds", "Time spent per engine node", labels=["node"])
        for node, t in sorted(self.seconds.items()):
            secs.add_metric([node], t)
        yield secs


@dataclass(slots=True)
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    db_connected: Gauge = field(init=False)
    lock_held: Gauge = field(init=False)
    lock_contended: Gauge = field(init=False)
    probe_interval: Gauge = field(init=False)
    loop_seconds: Histogram = field(init=False)
    compute_seconds: Histogram = field(init=False)
    commit_seconds: Histogram = field(init=False)
    sb_rows: Gauge = field(init=False)
    lflows: Gauge = field(init=False)
    dp_groups: Gauge = field(init=False)
    runs: Counter = field(init=False)
    flow_plans: Counter = field(init=False)
    nodes: EngineNodeTally = field(init=False)
    commits: Counter = field(init=False)
    bad_rows: Counter = field(init=False)
    nb_cfg: Gauge = field(init=False)
    incremental_mismatches: Counter = field(init=False)
    incremental_checks: Counter = field(init=False)
    txn_failures: Counter = field(init=False)
    repairs: Counter = field(init=False)
    passthrough_writes: Counter = field(init=False)
    aged_rows: Counter = field(init=False)
    release_info: Gauge = field(init=False)

    def __post_init__(self) -> None:
        r = self.registry
        p = "ovn_northd_py_"
        self.db_connected = Gauge(p + "db_connected", "1 when connected to the database", ["db"], registry=r)
        self.lock_held = Gauge(p + "sb_lock_held", "1 while we hold the SB lock ovn_northd", registry=r)
        self.lock_contended = Gauge(p + "sb_lock_contended", "1 while another client holds the lock", registry=r)
        self.probe_interval = Gauge(p + "db_probe_interval_seconds",
                                    "Inactivity probe interval in force on the connection (0: off)", ["db"],
                                    registry=r)
        self.loop_seconds = Histogram(p + "loop_seconds", "Main loop iteration time", buckets=_BUCKETS, registry=r)
        self.compute_seconds = Histogram(
            p + "compute_seconds", "Engine compute time per run", buckets=_BUCKETS, registry=r
        )
        self.commit_seconds = Histogram(
            p + "commit_seconds", "SB transaction time, from send to reply", buckets=_BUCKETS, registry=r
        )
        self.sb_rows = Gauge(p + "sb_rows", "Rows in SB tables as seen by us", ["table"], registry=r)
        self.lflows = Gauge(p + "logical_flows", "Logical flows we want in SB", registry=r)
        self.dp_groups = Gauge(p + "datapath_groups", "Logical_DP_Group rows we want in SB", registry=r)
        self.runs = Counter(p + "engine_runs", "Engine runs by kind", ["kind"], registry=r)
        self.flow_plans = Counter(p + "flow_plans", "Flow writer plans by kind (full: every flow compared)",
                                  ["kind"], registry=r)
        self.nodes = EngineNodeTally()
        r.register(self.nodes)
        self.commits = Counter(p + "sb_commits", "SB transactions by status", ["status"], registry=r)
        self.bad_rows = Counter(p + "nb_bad_rows", "Malformed NB rows skipped (first report)", ["kind"], registry=r)
        self.nb_cfg = Gauge(p + "nb_cfg", "Last nb_cfg propagated to SB", registry=r)
        self.incremental_mismatches = Counter(
            p + "incremental_mismatches", "Shadow recompute found a difference with incremental state",
            registry=r,
        )
        self.incremental_checks = Counter(
            p + "incremental_checks", "Shadow recomputes run by --check-incremental", registry=r
        )

        self.txn_failures = Counter(
            p + "txn_failures", "Failed transactions by database and kind of failure", ["db", "kind"], registry=r
        )
        self.repairs = Counter(
            p + "foreign_repairs",
            "Rows of Logical_Flow, Logical_DP_Group and Load_Balancer put back after someone else changed them",
            registry=r,
        )

        self.passthrough_writes = Counter(
            p + "passthrough_writes",
            "NB changes copied into SB before the engine ran (address sets' addresses: pass-through writes)",
            registry=r,
        )
        self.aged_rows = Counter(
            p + "aged_rows", "MAC_Binding and FDB rows deleted by aging (mac_binding_age_threshold, fdb_age_threshold)",
            ["table"], registry=r,
        )

        self.release_info = Gauge(
            p + "release_info", "1 for the OVN release whose flow profile the daemon serves", ["release"],
            registry=r,
        )

    def serve(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        start_http_server(int(port), addr=host.strip("[]") or "127.0.0.1", registry=self.registry)
