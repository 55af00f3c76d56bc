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


class FdWatch:
    """The file descriptors one loop of ours waits on, left registered with the event loop from one
    :meth:`AsyncPoller.block` to the next: registering and unregistering each socket on every turn
    of the loop (four ``epoll_ctl`` and as many handles a turn) was 8% of the daemon's CPU on small
    changes, some of it between a socket's wake-up and the read of what woke it.

    Invariant: the registrations are brought in line with what the poller waits on (:meth:`sync`)
    at the start of every block, before the loop runs anything else, and after a turn run from a
    descriptor's callback (:attr:`direct`).  python-ovs closes and reopens
    its sockets only in our own synchronous code (a step of the loop that owns this watch), so a
    socket it closed is unregistered before the event loop polls again, and a new socket that took
    the same number is registered afresh: a socket is known by the object python-ovs waits on, not
    by its number.  Descriptors given as plain numbers are never kept from one block to the next.
    The owner calls :meth:`clear` before it closes its connections."""

    __slots__ = ("_readers", "_wake", "_writers", "direct")

    def __init__(self) -> None:
        self._readers: dict[int, Any] = {}  # fd -> the socket object waited on
        self._writers: dict[int, Any] = {}
        self._wake: Callable[[], None] | None = None  # the blocked poller's, while it blocks
        # Run by the event loop's callback when a descriptor is ready, before the blocked poller
        # wakes: the owner's next turn, without the resumption of the task that blocks, returning
        # the poller that turn waits on next (None: none, the owner stops).  Once per block; a
        # timer or an event wakes the poller without it.  It must not raise.
        self.direct: Callable[[], AsyncPoller | None] | None = None

    def _ready(self) -> None:
        wake = self._wake
        if wake is None:
            return
        self._wake = None  # (once per block)
        if self.direct is not None:
            # The turn ran outside the task's block: the registrations follow what it waits on
            # now (the invariant above), before the event loop polls again.
            nxt = self.direct()
            loop = asyncio.get_running_loop()
            if nxt is None:
                self.clear(loop)
            else:
                self.sync(loop, nxt.readers, nxt.writers)
        wake()

    def sync(self, loop: asyncio.AbstractEventLoop, readers: dict[int, Any], writers: dict[int, Any]) -> None:
        self._sync(self._readers, readers, loop.add_reader, loop.remove_reader)
        self._sync(self._writers, writers, loop.add_writer, loop.remove_writer)

    def _sync(self, have: dict[int, Any], want: dict[int, Any], add: Any, remove: Any) -> None:
        for fd, obj in list(have.items()):
            if want.get(fd) is not obj or isinstance(obj, int):
                remove(fd)
                del have[fd]
        for fd, obj in want.items():
            if fd not in have:
                add(fd, self._ready)
                have[fd] = obj

    def clear(self, loop: asyncio.AbstractEventLoop) -> None:
        self.sync(loop, {}, {})


class AsyncPoller:
    __slots__ = ("_extra", "readers", "timeout_ms", "writers")

    def __init__(self) -> None:
        self.readers: dict[int, Any] = {}  # fd -> what was waited on (a socket object, or the number)
        self.writers: dict[int, Any] = {}
        self.timeout_ms: float | None = None
        self._extra: list[asyncio.Event] = []

    # --- the ovs.poller.Poller interface used by streams, sessions and the IDL ---
    def fd_wait(self, fd: Any, events: int) -> None:
        n = _fileno(fd)
        if events & ovs.poller.POLLIN:
            self.readers[n] = fd
        if events & ovs.poller.POLLOUT:
            self.writers[n] = fd

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

    async def block(self, watch: FdWatch | None = None) -> None:
        """Wait until a descriptor is ready, the timer expires or an event is set.  ``watch``: keep
        the descriptors registered for the next block of the same loop (:class:`FdWatch`); without
        one they are registered for this block only."""
        loop = asyncio.get_running_loop()
        if watch is not None:
            watch.sync(loop, self.readers, self.writers)
        if self.timeout_ms == 0:
            await asyncio.sleep(0)
            return
        fds = watch if watch is not None else FdWatch()
        if watch is None:
            fds.sync(loop, self.readers, self.writers)
        woke: asyncio.Future[None] = loop.create_future()

        def wake(*_: Any) -> None:
            if not woke.done():
                woke.set_result(None)

        fds._wake = wake
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
            fds._wake = None
            if watch is None:
                fds.clear(loop)
            for ev in listening:
                ev.listeners.remove(wake)
            for w in waiters:
                w.cancel()
