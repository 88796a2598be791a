"""DaemonPool: bounded, daemon threads, and an abandoned call's slot given back at once."""

from __future__ import annotations

import asyncio
import threading

from truthguard._pool import DaemonPool


def test_runs_no_more_calls_at_once_than_its_bound():
    pool = DaemonPool(2, "test-bound")
    release = threading.Event()
    started: list[int] = []
    futures = [pool.submit(lambda i=i: started.append(i) or release.wait(5)) for i in range(4)]
    for _ in range(500):  # until two have started (a third never may)
        if len(started) == 2:
            break
        threading.Event().wait(0.01)
    threading.Event().wait(0.1)
    assert len(started) == 2 and pool.running == 2
    release.set()
    assert [f.result(timeout=5) for f in futures] == [True] * 4


def test_an_abandoned_call_frees_its_slot_and_runs_on_a_daemon_thread():
    pool = DaemonPool(1, "test-abandon")
    hung = threading.Event()
    seen: list[threading.Thread] = []

    def hang() -> None:
        seen.append(threading.current_thread())
        hung.wait(10)

    async def main() -> str:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(loop.run_in_executor(pool, hang))
        await asyncio.sleep(0.1)
        task.cancel()  # the awaiting side gives up: the pool abandons the call
        return await asyncio.wait_for(loop.run_in_executor(pool, lambda: "next"), 2)

    assert asyncio.run(main()) == "next"  # not queued behind the hung call
    assert seen[0].daemon and seen[0].is_alive() and pool.threads == 2
    hung.set()


def test_a_call_cancelled_before_it_starts_never_runs():
    pool = DaemonPool(1, "test-queued")
    release = threading.Event()
    ran: list[str] = []
    first = pool.submit(release.wait, 5)
    queued = pool.submit(ran.append, "queued")
    assert queued.cancel()
    release.set()
    assert first.result(timeout=5) is True
    assert pool.submit(lambda: "after").result(timeout=5) == "after" and ran == []
