"""The whole run's deadline: each step gets what is left, and none starts once it has passed."""

from __future__ import annotations

import asyncio
import time

import pytest

from truthguard.guard.check import Deadline, RunTimedOut, before, call_before, within


async def test_a_step_past_the_deadline_is_cancelled_with_a_timeout_error():
    cancelled = asyncio.Event()

    async def hang() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    deadline = Deadline.start(0.1)
    with pytest.raises(RunTimedOut, match=r"timeout of 0\.1s passed"):
        await before(deadline, hang())
    assert cancelled.is_set()


async def test_no_step_starts_after_the_deadline_but_a_policy_has_its_grace():
    deadline = Deadline(at=time.monotonic() - 1, timeout=1.0)
    started: list[str] = []

    async def step(name: str) -> str:
        started.append(name)
        return name

    with pytest.raises(RunTimedOut):
        await before(deadline, step("chain"))
    assert await before(deadline, step("fallback"), grace=0.05) == "fallback"
    assert started == ["fallback"]


async def test_a_steps_own_timeout_is_not_the_runs():
    async def own() -> None:
        raise TimeoutError("the model's own")

    with pytest.raises(TimeoutError, match="the model's own") as info:
        await before(Deadline.start(5.0), own())
    assert not isinstance(info.value, RunTimedOut)


def test_a_check_gets_the_earlier_of_its_timeout_and_what_is_left():
    assert within(None, 3.0) == 3.0
    assert within(Deadline.start(10.0), 3.0) == 3.0
    assert within(Deadline.start(1.0), 3.0) <= 1.0
    assert within(Deadline(at=time.monotonic() - 1, timeout=1.0), None) == 0.0


def test_a_sync_call_is_abandoned_at_the_deadline():
    import threading

    release = threading.Event()
    started = time.perf_counter()
    with pytest.raises(RunTimedOut):
        call_before(Deadline.start(0.2), lambda: release.wait(10))
    assert time.perf_counter() - started < 0.5
    release.set()
    assert call_before(Deadline.start(1.0), lambda: "done") == "done"
    assert call_before(None, lambda: "no deadline") == "no deadline"
