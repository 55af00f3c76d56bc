"""Bridge python-ovs' poll-style API to asyncio.

python-ovs objects (Idl, jsonrpc sessions) announce what they wait for by calling
``fd_wait``/``timer_wait`` on a poller.  ``AsyncPoller`` records those calls and
``AsyncPoller.block()`` turns them into an asyncio wait, so the IDL runs on the
event loop (uvloop) without a thread and without busy polling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import ovs.poller
import ovs.timeval


class WakeEvent(asyncio.Event):
    """An ``asyncio.Event`` that also calls back the pollers blocked on it (``AsyncPoller.wake_on``):
    waiting on a plain event costs a task per loop iteration."""

    def __init__(self) -> None:
        super().__init__()
        self.listeners: list[Callable[[], None]] = []

    def set(self) -> None:
        super().set()
        for cb in list(self.listeners):
            cb()


def _fileno(fd: Any) -> int:
    return fd if isinstance(fd, int) else fd.fileno()


class AsyncPoller:
    __slots__ = ("_extra", "readers", "timeout_ms", "writers")

    def __init__(self) -> None:
        self.readers: set[int] = set()
        self.writers: set[int] = set()
        self.timeout_ms: float | None = None
        self._extra: list[asyncio.Event] = []

    # --- the ovs.poller.Poller interface used by streams, sessions and the IDL ---
    def fd_wait(self, fd: Any, events: int) -> None:
        n = _fileno(fd)
        if events & ovs.poller.POLLIN:
            self.readers.add(n)
        if events & ovs.poller.POLLOUT:
            self.writers.add(n)

    def timer_wait(self, msec: float) -> None:
        if msec < 0:
            return
        if self.timeout_ms is None or msec < self.timeout_ms:
            self.timeout_ms = msec

    def timer_wait_until(self, msec: float) -> None:
        self.timer_wait(max(0.0, msec - ovs.timeval.msec()))

    def immediate_wake(self) -> None:
        self.timeout_ms = 0

    # --- asyncio side ---
    def wake_on(self, ev: asyncio.Event) -> None:
        """Also wake when this event is set (e.g. a stop request or a timer of ours)."""
        self._extra.append(ev)

    async def block(self) -> None:
        if self.timeout_ms == 0:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        woke: asyncio.Future[None] = loop.create_future()

        def wake(*_: Any) -> None:
            if not woke.done():
                woke.set_result(None)

        for fd in self.readers:
            loop.add_reader(fd, wake)
        for fd in self.writers:
            loop.add_writer(fd, wake)
        waiters: list[asyncio.Task[Any]] = []
        listening: list[WakeEvent] = []
        for ev in self._extra:
            if ev.is_set():
                wake()
            if isinstance(ev, WakeEvent):
                ev.listeners.append(wake)
                listening.append(ev)
            else:
                waiters.append(asyncio.ensure_future(ev.wait()))
        for w in waiters:
            w.add_done_callback(wake)
        timer = loop.call_later(self.timeout_ms / 1000.0, wake) if self.timeout_ms is not None else None
        try:
            # (Awaiting the future itself: a cancellation that comes as it completes is still
            # delivered -- Python 3.11's wait_for swallowed it, and the control task ran on at exit.
            # Woken already, it still yields once: a waker that stays set must not starve the loop.)
            if woke.done():
                await asyncio.sleep(0)
            else:
                await woke
        finally:
            if timer is not None:
                timer.cancel()
            for fd in self.readers:
                loop.remove_reader(fd)
            for fd in self.writers:
                loop.remove_writer(fd)
            for ev in listening:
                ev.listeners.remove(wake)
            for w in waiters:
                w.cancel()
