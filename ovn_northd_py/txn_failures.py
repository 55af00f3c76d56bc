"""Failed SB/NB transactions: classified, logged once per distinct error, retried with back-off.

A failed transaction committed nothing (OVSDB transactions are atomic), so the
daemon recomputes and writes again; this decides *when*.  Transient failures
(the connection went away, the lock moved, a "try again") retry soon; anything
else backs off exponentially, from 0.1 s up to 10 s, so a permanent error never
spins the loop.  Each distinct error (uuids folded, so the same failure on
another row counts as the same) is logged once as a warning with the rows it
names, then at debug level; it is counted per class in
``ovn_northd_py_txn_failures{db,kind}``.
"""

from __future__ import annotations

import re
from typing import Any

BACKOFF_MIN = 0.1
BACKOFF_MAX = 10.0
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def classify(status: str, error: Any) -> str:
    """One word for a failure: ``not-locked``, ``transient``, ``referential-integrity``,
    ``constraint`` or ``error``."""
    text = f"{status} {error or ''}".lower()
    if "not locked" in text or "not owner" in text:
        return "not-locked"
    if "try again" in text or "connection" in text or "not connected" in text or "timed out" in text:
        return "transient"
    if "referential integrity" in text or "remaining reference" in text:
        return "referential-integrity"
    if "constraint violation" in text or "identical values" in text:
        return "constraint"
    return "error"


class TxnFailures:
    __slots__ = ("_log", "_metrics", "_seen", "backoff", "consecutive", "last_error", "last_kind")

    def __init__(self, log: Any, metrics: Any) -> None:
        self._log = log
        self._metrics = metrics
        self._seen: set[str] = set()
        self.backoff = BACKOFF_MIN
        self.consecutive = 0
        self.last_kind: str | None = None
        self.last_error: str | None = None

    def failed(self, db: str, status: str, error: Any) -> float:
        """Record a failure; returns the seconds to wait before writing again."""
        kind = classify(status, error)
        self.consecutive += 1
        self.last_kind, self.last_error = kind, str(error) if error else status
        self._metrics.txn_failures.labels(db=db, kind=kind).inc()
        shape = f"{db} {kind} {_UUID.sub('<uuid>', self.last_error)}"
        rows = sorted(set(_UUID.findall(self.last_error)))
        if shape not in self._seen:
            if len(self._seen) > 1000:
                self._seen.clear()
            self._seen.add(shape)
            self._log.warning("transaction failed; nothing of it was written, will retry", db=db, kind=kind,
                              status=status, error=self.last_error, rows=rows)
        else:
            self._log.debug("transaction failed again", db=db, kind=kind, status=status, error=self.last_error,
                            attempt=self.consecutive)
        if kind in ("not-locked", "transient") and self.consecutive <= 1:
            return 0.0
        delay = self.backoff
        self.backoff = min(self.backoff * 2, BACKOFF_MAX)
        return delay

    def succeeded(self) -> None:
        if self.consecutive:
            self._log.info("transaction committed after failures", failures=self.consecutive)
        self.consecutive = 0
        self.backoff = BACKOFF_MIN
        self.last_kind = self.last_error = None
