"""Failed transactions: classified, logged once per distinct error, retried after a bounded back-off."""

from __future__ import annotations

import itertools
from typing import Any

from ovn_northd_py.metrics import Metrics
from ovn_northd_py.txn_failures import BACKOFF_MAX, BACKOFF_MIN, TxnFailures, classify


class _Log:
    def __init__(self) -> None:
        self.records: list[tuple[str, str, dict[str, Any]]] = []

    def warning(self, event: str, **kw: Any) -> None:
        self.records.append(("warning", event, kw))

    def info(self, event: str, **kw: Any) -> None:
        self.records.append(("info", event, kw))

    def debug(self, event: str, **kw: Any) -> None:
        self.records.append(("debug", event, kw))


REF_ERR = ('{"details":"cannot delete Datapath_Binding row 11111111-2222-3333-4444-555555555555 because of 1 '
           'remaining reference(s)","error":"referential integrity violation"}')


def test_failures_are_classified() -> None:
    assert classify("not locked", None) == "not-locked"
    assert classify("try again", None) == "transient"
    assert classify("flow", "connection lost") == "transient"
    assert classify("error", REF_ERR) == "referential-integrity"
    assert classify("error", '{"error":"constraint violation","details":"identical values (4)"}') == "constraint"
    assert classify("error", '{"error":"syntax error"}') == "error"


def test_a_permanent_error_backs_off_exponentially_up_to_the_cap() -> None:
    f = TxnFailures(_Log(), Metrics())
    delays = [f.failed("sb", "error", REF_ERR) for _ in range(12)]
    assert delays[0] == BACKOFF_MIN
    assert all(b >= a for a, b in itertools.pairwise(delays))
    assert delays[-1] == BACKOFF_MAX
    f.succeeded()
    assert f.failed("sb", "error", REF_ERR) == BACKOFF_MIN


def test_a_transient_failure_retries_at_once_the_first_time_only() -> None:
    f = TxnFailures(_Log(), Metrics())
    assert f.failed("sb", "try again", None) == 0.0
    assert f.failed("sb", "try again", None) > 0.0


def test_the_same_error_on_other_rows_is_logged_once_with_the_rows_it_names() -> None:
    log = _Log()
    f = TxnFailures(log, Metrics())
    for n in range(5):
        f.failed("sb", "error", REF_ERR.replace("555555555555", f"00000000000{n}"))
    warnings = [r for r in log.records if r[0] == "warning"]
    assert len(warnings) == 1
    assert warnings[0][2]["rows"] == ["11111111-2222-3333-4444-000000000000"]
    assert warnings[0][2]["kind"] == "referential-integrity"
    f.failed("nb", "error", '{"error":"syntax error"}')
    assert len([r for r in log.records if r[0] == "warning"]) == 2
