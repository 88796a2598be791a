"""LLMSession: concurrency bound, retries, time-outs, gather, deferred writes."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from truthguard.errors import LLMCallError, MissingRecordingError
from truthguard.llm import LLMSession, LLMSettings
from truthguard.testing import ReplayChatModel, ScriptedChatModel

FAST = LLMSettings(backoff_initial=0.0, backoff_max=0.0)


async def test_eight_independent_calls_run_concurrently():
    model = ScriptedChatModel(script=lambda p: p.upper(), latency=0.5)
    session = LLMSession(LLMSettings(max_concurrency=8))
    started = time.perf_counter()
    out = await session.gather(session.acall(model, f"q{i}", stage="t") for i in range(8))
    elapsed = time.perf_counter() - started
    assert out == [f"Q{i}" for i in range(8)]
    assert elapsed < 1.5  # sequential would take 4 s
    usage = session.usage()
    assert usage.llm_calls == 8 and usage.llm_seconds >= 8 * 0.5


async def test_concurrency_bound_is_respected():
    in_flight = 0
    peak = 0

    async def slow(prompt: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05)
        in_flight -= 1
        return prompt

    session = LLMSession(LLMSettings(max_concurrency=3))
    await session.gather(session.acall(RunnableLambda(slow), str(i), stage="t") for i in range(9))
    assert peak == 3


async def test_retries_then_succeeds():
    model = ScriptedChatModel(script=lambda p: "fine", fail_first=2)
    session = LLMSession(FAST.model_copy(update={"max_retries": 2}))
    assert await session.acall(model, "x", stage="t") == "fine"
    assert model.call_count == 3
    assert session.records[0].attempts == 3


async def test_gives_up_with_llm_call_error_carrying_the_stage():
    model = ScriptedChatModel(script=lambda p: "never", fail_first=10)
    session = LLMSession(FAST.model_copy(update={"max_retries": 1}))
    with pytest.raises(LLMCallError) as info:
        await session.acall(model, "x", stage="fewl.reference")
    assert info.value.stage == "fewl.reference"
    assert info.value.attempts == 2
    assert session.usage().failed_calls == 1


async def test_per_call_timeout():
    model = ScriptedChatModel(script=lambda p: "late", latency=1.0)
    session = LLMSession(FAST.model_copy(update={"timeout": 0.05, "max_retries": 0}))
    with pytest.raises(LLMCallError, match="timed out"):
        await session.acall(model, "x", stage="t")


async def test_missing_recording_is_not_retried_and_propagates():
    model = ReplayChatModel(recordings={})
    session = LLMSession(FAST)
    with pytest.raises(MissingRecordingError):
        await session.acall(model, "x", stage="t")
    assert model.call_count == 1


async def test_plain_callable_and_runnable_str_to_str():
    session = LLMSession()
    assert await session.acall(lambda p: p[::-1], "abc", stage="t") == "cba"
    assert (
        await session.acall(RunnableLambda(lambda p: AIMessage(content="m")), "x", stage="t") == "m"
    )


async def test_stage_and_metadata_reach_the_model():
    seen = {}

    def key(prompt, metadata):
        seen.update(metadata)
        return "k"

    model = ReplayChatModel(recordings={"k": "v"}, key_fn=key)
    session = LLMSession(config={"metadata": {"user": "u1"}})
    assert await session.acall(model, "x", stage="rv.stage1", metadata={"entity": "E"}) == "v"
    assert seen["truthguard_stage"] == "rv.stage1"
    assert seen["entity"] == "E" and seen["user"] == "u1"


async def test_gather_cancels_the_other_calls_when_one_fails():
    finished = []

    async def slow(prompt: str) -> str:
        await asyncio.sleep(1.0)
        finished.append(prompt)
        return prompt

    failing = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    session = LLMSession(FAST.model_copy(update={"max_retries": 0}))
    started = time.perf_counter()
    with pytest.raises(LLMCallError):
        await session.gather(
            [
                session.acall(RunnableLambda(slow), "slow", stage="t"),
                session.acall(failing, "f", stage="t"),
            ]
        )
    assert time.perf_counter() - started < 0.9
    await asyncio.sleep(1.1)
    assert finished == []  # the slow call was cancelled, not left running


async def test_gather_keeps_input_order():
    async def echo(prompt: str) -> str:
        await asyncio.sleep(0.01 * (5 - int(prompt)))
        return prompt

    session = LLMSession()
    assert await session.gather(
        session.acall(RunnableLambda(echo), str(i), stage="t") for i in range(5)
    ) == ["0", "1", "2", "3", "4"]
    assert await session.gather([]) == []


async def test_cancellation_is_never_retried_and_returns_at_once():
    calls = []

    async def slow(prompt: str) -> str:
        calls.append(prompt)
        await asyncio.sleep(3)
        return "done"

    session = LLMSession(LLMSettings(max_retries=3, backoff_initial=0.0))
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(session.acall(RunnableLambda(slow), "x", stage="s"), 0.3)
    assert time.perf_counter() - started < 1.0
    assert calls == ["x"]
    assert session.records[0].error == "cancelled"


async def test_gather_cancel_does_not_restart_the_other_calls():
    starts = []

    async def slow(prompt: str) -> str:
        starts.append(prompt)
        await asyncio.sleep(0.5)
        return prompt

    failing = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    session = LLMSession(LLMSettings(max_retries=2, backoff_initial=0.0))
    with pytest.raises(LLMCallError):
        await session.gather(
            [
                session.acall(RunnableLambda(slow), "a", stage="t"),
                session.acall(RunnableLambda(slow), "b", stage="t"),
                session.acall(failing, "f", stage="t"),
            ]
        )
    await asyncio.sleep(0.1)
    assert sorted(starts) == ["a", "b"]  # each started once, never again after the cancel


async def test_gather_retrieves_every_failure(caplog):
    import gc

    failing = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    session = LLMSession(FAST.model_copy(update={"max_retries": 0}))
    with caplog.at_level("ERROR", logger="asyncio"):
        try:
            await session.gather(session.acall(failing, f"p{i}", stage=f"s{i}") for i in range(3))
        except LLMCallError as e:
            stage = e.stage
        assert stage == "s0"  # the first in input order
        gc.collect()  # the failed tasks are gone now: unretrieved errors would be logged
    await asyncio.sleep(0)
    assert "never retrieved" not in caplog.text


async def test_llm_seconds_leave_out_waiting_for_a_slot():
    model = ScriptedChatModel(script=lambda p: "ok", latency=0.2)
    session = LLMSession(LLMSettings(max_concurrency=1))
    await session.gather(session.acall(model, str(i), stage="t") for i in range(3))
    usage = session.usage()
    assert usage.llm_seconds < 0.2 * 3 + 0.15  # 1.2 s if the queueing were counted
    assert max(r.wait_seconds for r in session.records) >= 0.35


async def test_total_timeout_bounds_the_whole_call_and_its_retries():
    model = ScriptedChatModel(script=lambda p: "late", latency=0.4)
    settings = LLMSettings(timeout=0.3, total_timeout=0.5, max_retries=5, backoff_initial=0.0)
    session = LLMSession(settings)
    started = time.perf_counter()
    with pytest.raises(LLMCallError, match="total_timeout"):
        await session.acall(model, "x", stage="t")
    assert time.perf_counter() - started < 0.5 * 1.1 + 0.2
    assert session.records[0].attempts == 2


async def test_a_failure_stops_calls_queued_in_a_nested_gather():
    # FEWL gathers its neighbour calls inside the check's own gather: when a call of the outer
    # gather fails, calls still waiting for a slot in the inner one must never start.
    started: list[str] = []

    async def call(prompt: str) -> str:
        started.append(prompt)
        await asyncio.sleep(0.05)
        if prompt == "bad":
            raise ValueError("boom")
        return prompt

    session = LLMSession(LLMSettings(max_concurrency=1, max_retries=0))
    fn = RunnableLambda(call)

    async def inner() -> list[str]:
        await asyncio.sleep(0)  # let the failing call take the only slot first
        return await session.gather(session.acall(fn, f"n{i}", stage="n") for i in range(3))

    with pytest.raises(LLMCallError):
        await session.gather([session.acall(fn, "bad", stage="s"), inner()])
    assert started == ["bad"]


async def test_deferred_work_is_awaited_by_drain_and_a_failure_is_only_logged(caplog):
    session = LLMSession(defer_writes=True)
    done: list[str] = []

    async def ok() -> None:
        await asyncio.sleep(0.01)
        done.append("ok")

    async def broken() -> None:
        raise RuntimeError("disk full")

    session.defer(ok())
    session.defer(broken())
    with caplog.at_level("WARNING", logger="truthguard.llm"):
        await session.drain()
    assert done == ["ok"]
    assert "disk full" in caplog.text


async def test_abandon_cancels_deferred_work():
    session = LLMSession(defer_writes=True)
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(60)

    session.defer(forever())
    await started.wait()
    task = session._deferred[0]
    session.abandon()
    await asyncio.sleep(0)
    assert task.cancelled()
    await session.drain()  # nothing left to wait for


def test_sync_path_calls_are_all_in_flight_up_to_the_session_bound():
    import threading

    from truthguard._sync import MIN_CALL_THREADS, run_sync

    n = MIN_CALL_THREADS + 15  # a cold FEWL check makes 79 calls at once
    barrier = threading.Barrier(n, timeout=10)

    class Gathered(ScriptedChatModel):
        def _generate(self, *a, **kw):
            barrier.wait()  # returns only once all n calls are running side by side
            return super()._generate(*a, **kw)

    model = Gathered(default="ok")
    session = LLMSession(LLMSettings(max_concurrency=n))

    async def all_calls():
        return await session.gather([session.acall(model, f"q{i}", stage="t") for i in range(n)])

    assert run_sync(all_calls()) == ["ok"] * n
