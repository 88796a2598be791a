"""LLM plumbing: concurrency bound, retries, time-outs, token accounting."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from truthguard.errors import LLMCallError, MissingRecordingError
from truthguard.llm import LLMSession, LLMSettings, count_tokens, message_text, model_id
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


async def test_tokens_from_usage_metadata():
    model = ScriptedChatModel(script=lambda p: "one two three")
    session = LLMSession()
    await session.acall(model, "a b c d", stage="t")
    usage = session.usage()
    assert (usage.prompt_tokens, usage.completion_tokens) == (4, 3)
    assert not usage.estimated_tokens


async def test_tokens_counted_with_tiktoken_when_model_reports_none():
    model = ScriptedChatModel(script=lambda p: "Hello there, world!", report_usage=False)
    session = LLMSession()
    await session.acall(model, "What is the capital of France?", stage="t")
    usage = session.usage()
    assert usage.estimated_tokens
    assert usage.prompt_tokens == count_tokens("What is the capital of France?")
    assert usage.completion_tokens == count_tokens("Hello there, world!")


def test_tiktoken_encoding_is_available_offline():
    # cl100k_base: "hello world" is two tokens; the fallback word counter would also say 2,
    # so use a string where they differ.
    assert count_tokens("tokenization") == 2


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


def test_message_text_and_model_id():
    assert message_text(AIMessage(content=[{"type": "text", "text": "a"}, "b"])) == "ab"
    assert message_text(HumanMessage(content="hi")) == "hi"
    assert model_id(ScriptedChatModel(model_name="m1")) == "ScriptedChatModel:m1"


def test_settings_reject_bad_values_naming_the_field():
    with pytest.raises(ValueError, match="max_concurrency"):
        LLMSettings(max_concurrency=0)
    with pytest.raises(ValueError, match="retries"):
        LLMSettings(retries=3)


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


def test_plain_callables_get_distinct_model_ids():
    def first(p):
        return p

    def second(p):
        return p

    assert model_id(first) != model_id(second)
    assert model_id(first).startswith("callable:")


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


def test_one_retry_layer_by_default():
    from langchain_openai import ChatOpenAI

    settings = LLMSettings()
    own = ChatOpenAI(model="m", api_key="k", base_url="http://127.0.0.1:9/v1")  # max_retries=2
    assert settings.retries_for(own) == 0
    assert settings.retries_for(own.bind(stop=["x"])) == 0
    assert settings.retries_for(ChatOpenAI(model="m", api_key="k", max_retries=0)) == 2
    assert settings.retries_for(ScriptedChatModel()) == 2
    assert LLMSettings(max_retries=1).retries_for(own) == 1


async def test_total_timeout_bounds_the_whole_call_and_its_retries():
    model = ScriptedChatModel(script=lambda p: "late", latency=0.4)
    settings = LLMSettings(timeout=0.3, total_timeout=0.5, max_retries=5, backoff_initial=0.0)
    session = LLMSession(settings)
    started = time.perf_counter()
    with pytest.raises(LLMCallError, match="total_timeout"):
        await session.acall(model, "x", stage="t")
    assert time.perf_counter() - started < 0.5 * 1.1 + 0.2
    assert session.records[0].attempts == 2


async def test_a_reply_that_is_not_text_is_invalid_output_not_its_repr():
    from truthguard.errors import InvalidLLMOutput

    class ChatCompletion:  # what an OpenAI client returns before you take the text out
        choices = ()

    session = LLMSession(FAST)
    with pytest.raises(InvalidLLMOutput, match="ChatCompletion, not text") as info:
        await session.acall(lambda p: ChatCompletion(), "x", stage="t")
    assert info.value.stage == "t"
    with pytest.raises(InvalidLLMOutput):
        await session.acall(lambda p: None, "x", stage="t")
    assert len(session.records) == 2 and session.records[0].attempts == 1


def test_partials_and_closures_over_different_models_get_different_ids():
    import functools

    def ask(model_name: str, prompt: str) -> str:
        return prompt

    assert model_id(functools.partial(ask, "gpt-a")) != model_id(functools.partial(ask, "gpt-b"))
    assert model_id(functools.partial(ask, "gpt-a")) == model_id(functools.partial(ask, "gpt-a"))

    def make(model):
        return lambda prompt: model.invoke(prompt).content

    a, b = ScriptedChatModel(model_name="a"), ScriptedChatModel(model_name="b")
    assert model_id(make(a)) != model_id(make(b))
    assert model_id(make(a)) == model_id(make(ScriptedChatModel(model_name="a")))
    assert model_id(RunnableLambda(make(a))) == model_id(make(a))
    assert model_id(RunnableLambda(make(a), name="mine")) == "RunnableLambda:mine"
    # Same name, different code: two lambdas in one scope.
    first, second = (lambda p: p + "1"), (lambda p: p + "2")
    assert model_id(first) != model_id(second)


def test_a_callable_bound_to_an_anonymous_object_warns_and_is_told_apart():
    class Client:
        def ask(self, prompt: str) -> str:
            return prompt

    c1, c2 = Client(), Client()
    with pytest.warns(UserWarning, match="stable identity"):
        assert model_id(c1.ask) != model_id(c2.ask)


async def test_model_replies_are_cleaned_like_inputs():
    # A JSON "\ud800" escape in an API reply decodes to a lone surrogate; MiniLM, sinks and
    # stores cannot encode it, so the session hands detectors the same cleaned text as inputs.
    session = LLMSession()
    text = await session.acall(lambda p: "(Dubai \ud800, is in\x00, the UAE)", "x", stage="s")
    assert text == "(Dubai \ufffd, is in, the UAE)"


def test_refchecker_survives_a_surrogate_in_the_extractor_reply():
    from truthguard.refchecker import LLMExtractor, RefChecker

    model = ScriptedChatModel(script=lambda p: "(Dubai \ud800, is in, the UAE)")
    det = RefChecker(extractor=LLMExtractor(model=model))
    r = det.invoke(
        {"question": "Q?", "answer": "Dubai is in the UAE.", "references": ["Dubai is in the UAE."]}
    )
    assert r.label.value != "invalid", r.invalid_reason


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


# -- streamed replies (on_text) and deferred writes ----------------------------------------------


async def test_on_text_sees_a_streamed_reply_grow_and_the_text_is_unchanged():
    reply = "one two three four five"
    model = ScriptedChatModel(default=reply)
    seen: list[str] = []
    session = LLMSession()
    text = await session.acall(model, "q", stage="t", on_text=seen.append)
    assert text == reply == seen[-1]
    assert len(seen) == 5 and all(reply.startswith(s) for s in seen)
    usage = session.usage()  # the model's own count, reported on the last chunk
    assert not usage.estimated_tokens and usage.completion_tokens == 5


def test_on_text_also_streams_on_the_sync_path():
    from truthguard._sync import run_sync

    model = ScriptedChatModel(default="alpha beta gamma")
    seen: list[str] = []
    session = LLMSession()
    text = run_sync(session.acall(model, "q", stage="t", on_text=seen.append))
    assert text == "alpha beta gamma" and seen == ["alpha", "alpha beta", "alpha beta gamma"]


async def test_models_that_do_not_stream_like_invoke_are_invoked():
    from langchain_core.caches import InMemoryCache

    from truthguard.llm import streams_like_invoke

    seen: list[str] = []
    session = LLMSession()
    lam = RunnableLambda(lambda p: "from a lambda", name="lam")
    cached = ScriptedChatModel(default="cached reply", cache=InMemoryCache())
    assert not any(streams_like_invoke(m) for m in (lam, cached))
    assert streams_like_invoke(ScriptedChatModel(default="x"))
    assert streams_like_invoke(ScriptedChatModel(default="x", cache=False))
    assert not streams_like_invoke(ScriptedChatModel(default="x", disable_streaming=True))
    for model in (lam, cached, cached):
        await session.acall(model, "q", stage="t", on_text=seen.append)
    assert seen == [] and cached.call_count == 1  # the second call was a cache hit


async def test_streamed_call_over_http_counts_the_servers_usage():
    from truthguard.testing import OpenAIServer

    reply = "The Eiffel Tower was completed in 1889 for the World's Fair."
    with OpenAIServer(reply=reply) as server:
        model = server.chat_model(max_retries=0, timeout=10)
        seen: list[str] = []
        session = LLMSession()
        text = await session.acall(model, "Tell me", stage="t", on_text=seen.append)
        usage = session.usage()
    assert text == reply and len(seen) > 1 and seen[-1] == reply
    assert server.requests[-1].stream
    assert not usage.estimated_tokens
    assert usage.prompt_tokens + usage.completion_tokens == server.usage_total.total_tokens


async def test_a_cut_stream_is_retried_and_both_attempts_are_paid_for():
    from truthguard.testing import Fault, OpenAIServer

    reply = "first second third fourth fifth sixth seventh eighth"
    with OpenAIServer(reply=reply, faults=[Fault("stream_cut", times=1)]) as server:
        model = server.chat_model(max_retries=0, timeout=10)
        seen: list[str] = []
        session = LLMSession(FAST)
        text = await session.acall(model, "go", stage="t", on_text=seen.append)
    assert text == reply and session.records[0].attempts == 2
    assert len(server.requests) == 2
    restarts = [b for a, b in itertools.pairwise(seen) if len(b) < len(a)]
    assert len(restarts) == 1 and seen[-1] == reply  # the cut attempt, then the whole retry
    assert session.usage().completion_tokens > count_tokens(reply) // 2


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
