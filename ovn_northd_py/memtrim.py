"""Give freed heap memory back to the system after a quiet spell (NB_Global
``options:northd_trim_timeout``, milliseconds, default 30000), as ovn-northd does: a recompute
allocates a lot that is freed soon after, and glibc keeps it unless asked (``malloc_trim``)."""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import time
from typing import Any

DEFAULT_TRIM_TIMEOUT_MS = 30000
_UINT = re.compile(r"^[ \t\n\v\f\r]*\+?([0-9]+)$")


def trim_timeout_ms(options: Any) -> int:
    """``options:northd_trim_timeout`` as an unsigned number of ms; unset or unparsable: the default."""
    text = options.get("northd_trim_timeout") if options else None
    m = _UINT.match(text) if isinstance(text, str) else None
    if m is None or int(m.group(1)) >= 1 << 32:
        return DEFAULT_TRIM_TIMEOUT_MS
    return int(m.group(1))


def _malloc_trim() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


class MemoryTrimmer:
    """Call :meth:`active` after work; :meth:`due_in` says how long until a trim (None: none
    pending); :meth:`maybe_trim` trims once per quiet spell.  True if it trimmed."""

    def __init__(self) -> None:
        self.timeout_ms = DEFAULT_TRIM_TIMEOUT_MS
        self.last_active = time.monotonic()
        self.pending = False
        self._trim = _malloc_trim()

    def active(self) -> None:
        self.last_active = time.monotonic()
        self.pending = self._trim is not None

    def due_in(self) -> float | None:
        if not self.pending:
            return None
        return max(0.0, self.last_active + self.timeout_ms / 1000.0 - time.monotonic())

    def maybe_trim(self) -> int | None:
        """Trim if due; returns the ms since the last activity when it did."""
        due = self.due_in()
        if due is None or due > 0:
            return None
        self.pending = False
        self._trim(0)
        return int((time.monotonic() - self.last_active) * 1000)
