"""structlog set-up: JSON for services, console for humans."""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog


def configure(fmt: str = "console", level: str = "info", log_file: str | None = None) -> None:
    # The log file stays open for the life of the process.
    stream: TextIO = open(log_file, "a", buffering=1) if log_file else sys.stderr  # noqa: SIM115
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=stream.isatty())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )


def get(name: str) -> Any:
    return structlog.get_logger(name)


class WarnOnce:
    """Structured warnings about bad NB rows, logged once per (kind, row, reason) until the row changes.

    A malformed row is reported the first time it is seen, not on every recompute;
    ``forget(row)`` is called when the row is updated or deleted so a new problem
    on the same row is reported again.
    """

    __slots__ = ("_log", "_seen", "count")

    def __init__(self, logger: Any) -> None:
        self._seen: set[tuple[str, str, str]] = set()
        self._log = logger
        self.count = 0

    def warn(self, kind: str, table: str, row: Any, reason: str, **kw: Any) -> None:
        key = (kind, str(row), reason)
        if key in self._seen:
            return
        self._seen.add(key)
        self.count += 1
        self._log.warning(kind, table=table, row=str(row), reason=reason, **kw)

    def reset(self) -> None:
        self._seen.clear()
