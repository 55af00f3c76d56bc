"""FdWatch: the main loop's sockets stay registered from one AsyncPoller.block to the next; a socket
no longer waited on, or closed and replaced by another of the same number, is brought in line
before the loop polls again (on asyncio's loop and on uvloop, which the daemon runs)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import ovs.poller
import pytest
import uvloop

from ovn_northd_py.ovsdb.aiopoll import AsyncPoller, FdWatch

LOOPS = ["asyncio", "uvloop"]


def _run(kind: str, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    if kind == "uvloop":
        return uvloop.run(main())
    return asyncio.run(main())


def _poller(sock: socket.socket | None, timeout_ms: float) -> AsyncPoller:
    p = AsyncPoller()
    if sock is not None:
        p.fd_wait(sock, ovs.poller.POLLIN)
    p.timer_wait(timeout_ms)
    return p


@contextlib.contextmanager
def _watched_pair(loop: asyncio.AbstractEventLoop) -> Iterator[tuple[socket.socket, socket.socket, FdWatch]]:
    """A socket pair (the first non-blocking) and a watch, cleared and closed afterwards."""
    a, b = socket.socketpair()
    a.setblocking(False)
    watch = FdWatch()
    try:
        yield a, b, watch
    finally:
        watch.clear(loop)
        a.close()
        b.close()


@contextlib.contextmanager
def _cleared(loop: asyncio.AbstractEventLoop, watch: FdWatch, *socks: socket.socket) -> Iterator[None]:
    """The watch cleared, then the sockets closed, afterwards."""
    try:
        yield
    finally:
        watch.clear(loop)
        for sock in socks:
            sock.close()


async def _block_seconds(p: AsyncPoller, watch: FdWatch) -> float:
    t0 = time.monotonic()
    await asyncio.wait_for(p.block(watch), 10)
    return time.monotonic() - t0


async def _woken_through(sock: socket.socket, peer: socket.socket, watch: FdWatch) -> None:
    """A block waiting on ``sock`` wakes when ``peer`` writes to it."""
    asyncio.get_running_loop().call_later(0.02, peer.send, b"y")
    assert await _block_seconds(_poller(sock, 10_000), watch) < 5
    assert sock.recv(10) == b"y"


@pytest.mark.parametrize("kind", LOOPS)
def test_a_socket_kept_registered_wakes_every_block_that_waits_on_it(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with _watched_pair(loop) as (a, b, watch):
            for i in range(3):
                loop.call_later(0.02, b.send, b"x")
                assert await _block_seconds(_poller(a, 10_000), watch) < 5
                assert a.recv(10) == b"x", i

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_a_readable_socket_no_longer_waited_on_does_not_wake_the_next_block(kind: str) -> None:
    async def main() -> None:
        with _watched_pair(asyncio.get_running_loop()) as (a, b, watch):
            await _block_seconds(_poller(a, 0.1), watch)  # registered, then left unread:
            b.send(b"x")
            # the next block waits on its timer alone: the readable socket is unregistered
            assert await _block_seconds(_poller(None, 200), watch) >= 0.15

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_a_closed_socket_replaced_by_one_of_the_same_number_is_registered_afresh(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        a, b = socket.socketpair()
        watch = FdWatch()
        await _block_seconds(_poller(a, 1), watch)
        number = a.fileno()
        a.close()  # (as python-ovs closes a session's socket when it reconnects)
        b.close()
        c, d = socket.socketpair()
        if c.fileno() != number:  # (the lowest free number comes back: the case under test)
            c, d = d, c
        assert c.fileno() == number
        with _cleared(loop, watch, c, d):
            await _woken_through(c, d, watch)

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_clear_leaves_no_registration_behind(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with _watched_pair(loop) as (a, _b, watch):
            await _block_seconds(_poller(a, 1), watch)
            watch.clear(loop)
            # (nothing left to remove: asyncio says False; uvloop says nothing either way)
            assert not loop.remove_reader(a.fileno())

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_direct_runs_from_the_sockets_callback_before_the_blocked_task_resumes(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with _watched_pair(loop) as (a, b, watch):
            seen: list[str] = []

            def direct() -> AsyncPoller:
                seen.append("direct:" + a.recv(10).decode())
                return _poller(a, 10_000)

            watch.direct = direct
            loop.call_later(0.02, b.send, b"x")
            await _block_seconds(_poller(a, 10_000), watch)
            seen.append("resumed")
            assert seen == ["direct:x", "resumed"]

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_direct_runs_once_per_block_and_not_for_a_timer(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with _watched_pair(loop) as (a, b, watch):
            calls: list[int] = []

            def direct() -> AsyncPoller:
                calls.append(1)
                return _poller(a, 10_000)  # (left unread: still readable)

            watch.direct = direct
            await _block_seconds(_poller(a, 1), watch)  # the timer: no direct turn
            assert calls == []
            b.send(b"x")
            await _block_seconds(_poller(a, 10_000), watch)
            assert calls == [1]

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_what_a_direct_turn_waits_on_is_registered_before_the_loop_polls_again(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with _watched_pair(loop) as (a, b, watch):
            c, d = socket.socketpair()
            c.setblocking(False)
            with _cleared(loop, watch, c, d):
                # The direct turn moves the wait from a to c: a no longer wakes anything, c does
                # (in the block that follows, which registers nothing new itself).
                watch.direct = lambda: _poller(c, 10_000)
                b.send(b"x")
                await _block_seconds(_poller(a, 10_000), watch)
                watch.direct = None
                await _woken_through(c, d, watch)
                assert not loop.remove_reader(a.fileno())

    _run(kind, main)


@pytest.mark.parametrize("kind", LOOPS)
def test_a_direct_turn_that_stops_leaves_no_registration_behind(kind: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with _watched_pair(loop) as (a, b, watch):
            watch.direct = lambda: None
            b.send(b"x")
            await _block_seconds(_poller(a, 10_000), watch)
            assert not loop.remove_reader(a.fileno())

    _run(kind, main)
