"""AsyncPoller.wake_on with a WakeEvent: the poller wakes when the event is set, without a task
per wait, and leaves no listener behind."""

from __future__ import annotations

import asyncio
import time

from ovn_northd_py.ovsdb.aiopoll import AsyncPoller, WakeEvent


def test_setting_a_wake_event_wakes_a_blocked_poller_and_its_listener_goes() -> None:
    async def main() -> float:
        ev = WakeEvent()
        p = AsyncPoller()
        p.timer_wait(10_000)
        p.wake_on(ev)
        asyncio.get_running_loop().call_later(0.05, ev.set)
        t0 = time.monotonic()
        await p.block()
        assert ev.listeners == []
        return time.monotonic() - t0

    assert asyncio.run(main()) < 5.0


def test_an_event_set_before_blocking_wakes_at_once_and_a_timer_still_ends_a_wait() -> None:
    async def main() -> None:
        ev = WakeEvent()
        ev.set()
        p = AsyncPoller()
        p.wake_on(ev)
        await asyncio.wait_for(p.block(), 5)  # (no timer, no fd: only the event can end it)
        q = AsyncPoller()
        q.timer_wait(20)
        q.wake_on(WakeEvent())
        await asyncio.wait_for(q.block(), 5)

    asyncio.run(main())
