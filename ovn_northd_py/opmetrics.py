"""Operator-facing HTTP endpoint: /metrics (ours plus the ovn_northd_* names operators already scrape),
/healthz and /readyz.

The ``ovn_northd_*`` families follow ovn-kubernetes' northd exporter: ``ovn_northd_build_info``,
``ovn_northd_status`` (0 standby, 1 active, 2 paused), ``ovn_northd_nb_connection_status`` /
``ovn_northd_sb_connection_status`` (0/1), ``ovn_northd_probe_interval`` (ms), and
stopwatch-like timings ``ovn_northd_stopwatch_*{name}`` and coverage counters
``ovn_northd_coverage_total{event}`` from the control socket's ``stopwatch/show`` / ``coverage/show``.

/healthz: 200 while the main loop iterates (it is woken at least every few seconds), else 503.
/readyz: 200 when the instance serves its role (active and the first SB commit settled, standby
with SB in sync, or paused), else 503.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import ovs.version
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from . import __version__

STATUS_CODE = {"standby": 0, "active": 1, "paused": 2}


class NorthdCollector(Collector):
    def __init__(self, daemon: Any, control: Any = None, probe_interval_ms: int | None = None) -> None:
        self.d = daemon
        self.control = control
        self.probe_interval_ms = probe_interval_ms
        self.last_iteration = time.monotonic()

    def hook(self) -> None:
        """A Daemon loop hook: the main loop is alive."""
        self.last_iteration = time.monotonic()

    def collect(self) -> Iterator[Any]:
        d = self.d
        g = GaugeMetricFamily("ovn_northd_build_info", "A metric with a constant '1' value labeled by version "
                              "and library from which ovn binaries were built",
                              labels=["version", "ovs_lib_version", "implementation"])
        g.add_metric([__version__, ovs.version.VERSION, "ovn-northd-py"], 1)
        yield g
        yield GaugeMetricFamily("ovn_northd_status", "Specifies whether this instance of ovn-northd is "
                                "standby(0) or active(1) or paused(2).", value=STATUS_CODE[d.status()])
        for db in ("nb", "sb"):
            conn = getattr(d, db)
            yield GaugeMetricFamily(f"ovn_northd_{db}_connection_status",
                                    f"Specifies {db}-connection-status of ovn-northd, not connected(0) or connected(1).",
                                    value=1 if conn is not None and conn.connected else 0)
        probe = self.probe_interval_ms
        if d.sb is not None:  # what the SB connection really uses (NB_Global options may change it)
            with contextlib.suppress(AttributeError, TypeError):
                probe = int(d.sb.idl._session.reconnect.get_probe_interval())
        yield GaugeMetricFamily("ovn_northd_probe_interval", "The maximum number of milliseconds of idle time on "
                                "connection to the OVN SB and NB DB before sending an inactivity probe message",
                                value=probe or 0)
        if self.control is not None:
            fams = {k: GaugeMetricFamily(f"ovn_northd_stopwatch_{k}_seconds", f"Stopwatch {k} (stopwatch/show)",
                                         labels=["name"])
                    for k in ("maximum", "minimum", "p95", "short_term_average", "long_term_average")}
            samples = CounterMetricFamily("ovn_northd_stopwatch_samples", "Stopwatch samples (stopwatch/show)",
                                          labels=["name"])
            for sw in self.control.stopwatches.values():
                for k, v in (("maximum", sw.max_ms), ("minimum", sw.min_ms), ("p95", sw.p95),
                             ("short_term_average", sw.short_avg), ("long_term_average", sw.long_avg)):
                    fams[k].add_metric([sw.name], v / 1000.0)
                samples.add_metric([sw.name], sw.count)
            yield from fams.values()
            yield samples
            cov = CounterMetricFamily("ovn_northd_coverage", "Coverage event counters (coverage/show)",
                                      labels=["event"])
            for name, total in self.control.coverage.totals().items():
                cov.add_metric([name], total)
            yield cov

    # ---- health ----
    def healthy(self, stale_after: float = 30.0) -> bool:
        return time.monotonic() - self.last_iteration < stale_after

    def ready(self) -> bool:
        d = self.d
        st = d.status()
        if st == "paused":
            return True
        if st == "active":
            return bool(d.settled.is_set())
        return d.sb is not None and d.sb.synced and d.nb is not None and d.nb.synced


def serve(address: str, registry: Any, collector: NorthdCollector) -> ThreadingHTTPServer:
    """Serve /metrics, /healthz, /readyz at HOST:PORT (HOST empty: 127.0.0.1) in a daemon thread."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                body, code, ctype = generate_latest(registry), 200, CONTENT_TYPE_LATEST
            elif path == "/healthz":
                ok = collector.healthy()
                body, code, ctype = (b"ok\n" if ok else b"main loop stalled\n"), (200 if ok else 503), "text/plain"
            elif path == "/readyz":
                ok = collector.ready()
                st = collector.d.status()
                body, code, ctype = f"{st}\n".encode(), (200 if ok else 503), "text/plain"
            else:
                body, code, ctype = b"not found: try /metrics, /healthz or /readyz\n", 404, "text/plain"
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_a: Any) -> None:
            pass

    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

    srv = Server((host, int(port)), Handler)
    threading.Thread(target=srv.serve_forever, name="metrics-http", daemon=True).start()
    return srv
