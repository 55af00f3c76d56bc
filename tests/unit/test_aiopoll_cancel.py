"""AsyncPoller.block: a task cancelled while its poller wakes up ends (Python 3.11's
asyncio.wait_for swallowed such a cancellation: the daemon's control task then ran on after
``exit`` and the process never ended, seen under load in OVN's testsuite)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r'''
import asyncio
from ovn_northd_py.ovsdb.aiopoll import AsyncPoller

async def consumer(ev):
    while True:
        p = AsyncPoller()
        p.timer_wait(10_000)
        p.wake_on(ev)
        await p.block()

async def main():
    for k in range(12):
        ev = asyncio.Event()
        t = asyncio.ensure_future(consumer(ev))
        for _ in range(3):
            await asyncio.sleep(0)
        ev.set()
        for _ in range(k):
            await asyncio.sleep(0)
        t.cancel()
        done, _ = await asyncio.wait([t], timeout=2)
        assert done and t.cancelled(), k
    print("ok")

asyncio.run(main())
'''


def test_a_task_cancelled_as_its_poller_wakes_ends() -> None:
    # (in a child process with a timeout: with the bug, the event loop never finishes)
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
