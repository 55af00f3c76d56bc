"""Give freed heap memory back to the system after a quiet spell (NB_Global
``options:northd_trim_timeout``, milliseconds, default 30000), as ovn-northd does: a recompute
allocates a lot that is freed soon after, and glibc keeps it unless asked (``malloc_trim``)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
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


class BulkGc:
    """The cyclic GC for a daemon whose steps run with it paused (each allocating up to millions of
    long-lived objects: IDL rows, the model, the flow table).  Left alone, the GC traverses a bulk
    step's objects in a young collection, again in the next generation's and again in full ones
    (2.2 s of CPU of a 100-node cold sync's 9).  Instead, after a bulk step its objects are moved
    out of the GC's generations at once (``gc.freeze``, no traversal); the frozen heap is collected
    (unfreeze, one full collection, freeze what is left) when it has doubled since the last such
    collection (counted from the first bulk step after the first sync), and when the daemon goes
    quiet (:class:`MemoryTrimmer`).  Garbage cycles of a
    bulk step (e.g. the model a recompute replaced) wait for that collection."""

    BULK = 100_000  # objects a step left allocated (the GC's generation-0 count) that make it a bulk one

    def __init__(self) -> None:
        # Frozen objects, as counted at each freeze (the generation-0 count; ``gc.get_freeze_count``
        # walks the whole frozen list: 0.1 s for a few million objects), exactly after a collection.
        self.frozen = 0
        self.base = 0  # frozen objects after the last full collection (0: none yet)
        self.dirty = False  # a bulk step froze objects since the last collection
        # Set once the first sync is written: until then (the cold sync's bulk steps) nothing is
        # collected; the first bulk step after it sets the base.
        self.armed = False

    def after_step(self) -> None:
        """At the end of a step run with the GC paused."""
        n = gc.get_count()[0]
        if n < self.BULK:
            return
        gc.freeze()
        self.frozen += n
        self.dirty = True
        if not self.base:
            if self.armed:
                self.base = self.frozen
        elif self.frozen > 2 * self.base:
            self.collect()

    def collect(self) -> None:
        """A full collection of the frozen heap too (then frozen again); nothing when no bulk step
        froze anything since the last one (a quiet spell after small steps only, e.g. with a trim
        timeout of 0 after each of them)."""
        if self.dirty:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.frozen = self.base = max(1, gc.get_freeze_count())
            self.dirty = False


class MemoryTrimmer:
    """Call :meth:`active` after work; :meth:`due_in` says how long until a trim (None: none
    pending); :meth:`maybe_trim` trims once per quiet spell.  True if it trimmed."""

    def __init__(self) -> None:
        self.timeout_ms = DEFAULT_TRIM_TIMEOUT_MS
        self.last_active = time.monotonic()
        self.pending = False
        self._trim = _malloc_trim()
        self.gc = BulkGc()

    def active(self) -> None:
        self.last_active = time.monotonic()
        self.pending = self._trim is not None

    def due_in(self) -> float | None:
        if not self.pending:
            return None
        return max(0.0, self.last_active + self.timeout_ms / 1000.0 - time.monotonic())

    def trim_now(self) -> None:
        """Give back at once what the cold sync freed (the IDLs' initial parse, the first recompute's
        and first write's temporaries: tens of MB), without waiting for the quiet spell.  No cycle
        collection (a full one over the frozen heap would cost a second of CPU); a few ms."""
        if self._trim is not None:
            self._trim(0)

    def maybe_trim(self) -> int | None:
        """Trim if due; returns the ms since the last activity when it did."""
        due = self.due_in()
        if due is None or due > 0:
            return None
        self.pending = False
        self.gc.collect()  # (cycles first: what they free is trimmed too)
        self._trim(0)
        return int((time.monotonic() - self.last_active) * 1000)
