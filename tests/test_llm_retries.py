"""The session owns the retries of the calls truthguard makes; the user's model is never changed.

Through the real ``ChatOpenAI`` against :class:`~truthguard.testing.OpenAIServer`: the requests
the server receives are what the retry rules say, and none arrives after a sync check returned
at its deadline.
"""

from __future__ import annotations

import time

import pytest
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate

from truthguard.errors import LLMCallError
from truthguard.guard import HallucinationGuard
from truthguard.llm import LLMSession, LLMSettings
from truthguard.llm.retries import call_plan, own_retries
from truthguard.sync import run_sync
from truthguard.testing import FakeDetector, Fault, OpenAIServer, ScriptedChatModel

ChatOpenAI = pytest.importorskip("langchain_openai").ChatOpenAI

FAST = LLMSettings(backoff_initial=0.01, backoff_max=0.05)


def call(session, model, prompt):
    return run_sync(session.acall(model, prompt, stage="t"))


def openai(**kwargs):
    return ChatOpenAI(model="m", api_key="k", base_url="http://127.0.0.1:9/v1", **kwargs)


def test_the_session_calls_a_twin_without_the_clients_retries():
    model = openai()  # max_retries None: the SDK's 2
    plan = call_plan(model, None)
    assert plan.retries == 2 and plan.runnable is not model
    twin = plan.runnable
    assert twin.root_client.max_retries == 0 and twin.root_async_client.max_retries == 0
    assert twin.max_retries == 0 and twin.model_name == model.model_name
    # The user's model is untouched, and the twin shares its connection pools.
    assert model.max_retries is None and model.root_client.max_retries == 2
    assert model.root_async_client.max_retries == 2
    assert twin.root_client._client is model.root_client._client
    assert twin.root_async_client._client is model.root_async_client._client
    assert call_plan(model, None).runnable is twin  # made once
    model.temperature = 0.25  # a changed field makes a new twin
    assert call_plan(model, None).runnable.temperature == 0.25
    assert call_plan(model, 5).retries == 5


def test_the_twins_requests_end_with_the_sessions_attempt():
    model = openai()  # no request time-out of its own
    assert model.root_client.timeout is None
    twin = call_plan(model, None, 30.0).runnable
    assert twin.root_client.timeout == 30.0 and twin.root_async_client.timeout == 30.0
    assert model.root_client.timeout is None  # still the user's
    assert call_plan(openai(timeout=5), None, 30.0).runnable.root_client.timeout == 5
    # No retries of its own, but no time-out either: a twin all the same.
    bare = openai(max_retries=0)
    plan = call_plan(bare, None, 30.0)
    assert plan.runnable is not bare and plan.runnable.root_client.timeout == 30.0
    assert plan.retries == 2
    short = openai(max_retries=0, timeout=5)
    assert call_plan(short, None, 30.0).runnable is short  # nothing to change


def test_bindings_and_with_retry_are_unwrapped_into_the_sessions_retries():
    model = openai(max_retries=1)
    bound = model.bind(stop=["x"])
    plan = call_plan(bound, None)
    assert plan.retries == 1 and plan.runnable.kwargs == {"stop": ["x"]}
    assert plan.runnable.bound.root_client.max_retries == 0
    assert bound.bound is model and model.root_client.max_retries == 1
    # with_retry(3 attempts) over a client making 2 requests: up to 6 requests, as before.
    wrapped = model.with_retry(stop_after_attempt=3, retry_if_exception_type=(ValueError,))
    assert own_retries(wrapped) == 5
    plan = call_plan(wrapped, None)
    assert plan.retries == 5 and plan.retry_on == (ValueError,)
    assert plan.runnable.root_client.max_retries == 0
    scripted = ScriptedChatModel(script=["a"])
    plan = call_plan(scripted.with_retry(stop_after_attempt=4), None)
    assert plan.runnable is scripted and plan.retries == 3
    # Models without retries of their own: the session's default.
    assert call_plan(scripted, None) == call_plan(scripted, None)
    assert call_plan(scripted, None).retries == 2
    assert call_plan(openai(max_retries=0), None).retries == 2


def test_the_retries_are_the_ones_the_client_would_have_made():
    with OpenAIServer(reply={"q": "fine"}) as server:
        model = server.chat_model(timeout=5)  # ChatOpenAI's default retries
        session = LLMSession(FAST)
        # 429 honours Retry-After; 5xx is retried; 3 requests in all, as the client alone made.
        server.faults = [Fault("429", times=1, retry_after=0.01), Fault("500", times=1)]
        assert call(session, model, "q") == "fine"
        assert [r.status for r in server.requests] == [429, 500, 200]
        assert session.records[-1].attempts == 3
        server.reset()
        server.faults = [Fault("500")]
        with pytest.raises(LLMCallError, match="500"):
            call(session, model, "q")
        assert [r.status for r in server.requests] == [500] * 3
        # A request the server refuses (400: no scripted reply) fails the same way again.
        server.reset()
        server.faults = []
        with pytest.raises(LLMCallError, match="400"):
            call(session, model, "something else")
        assert [r.status for r in server.requests] == [400]
        assert model.root_client.max_retries == 2  # still the user's


def test_a_server_asking_for_a_long_wait_is_not_retried():
    with OpenAIServer(reply="fine", faults=[Fault("429", retry_after=600)]) as server:
        session = LLMSession(FAST)
        with pytest.raises(LLMCallError, match="429"):
            call(session, server.chat_model(timeout=5), "q")
        assert [r.status for r in server.requests] == [429]


def test_an_abandoned_sync_request_ends_at_the_sessions_time_out():
    # ChatOpenAI's default has no request time-out: the worker thread of a sync call that the
    # session gave up on would wait for the stalled server for as long as it stalls.
    with OpenAIServer(reply="fine", faults=[Fault("stall", stall_seconds=8)]) as server:
        session = LLMSession(LLMSettings(timeout=0.5, max_retries=0))
        started = time.perf_counter()
        with pytest.raises(LLMCallError, match="timed out"):
            call(session, server.chat_model(max_retries=0), "q")
        assert server.wait_idle(timeout=3)  # the client hung up, well before the stall ended
        assert time.perf_counter() - started < 4
        assert [r.status for r in server.requests] == [499]


@pytest.mark.parametrize("kind", ["500", "stall"])
def test_a_sync_guard_leaves_no_call_retrying_after_its_deadline(kind):
    # The checker is a ChatOpenAI with its default retries: before, its sync call went on
    # retrying on a worker thread after the guard had returned (2 more requests).
    with OpenAIServer(
        reply="The sun shines.", faults=[Fault(kind, match="sun shines", stall_seconds=1)]
    ) as server:
        chain = (
            ChatPromptTemplate.from_messages([("human", "{question}")])
            | server.chat_model(max_retries=0, timeout=5)
            | StrOutputParser()
        )
        checker = FakeDetector(score=1.0, model=server.chat_model(timeout=0.5))
        guard = HallucinationGuard(chain=chain, detectors=checker, check_timeout=0.3)
        out = guard.invoke({"question": "What shines?"})
        returned = len(server.requests)
        assert out.status == "rejected" and "timed out" in out.verdict.errors["fake"]
        time.sleep(3)  # the client's own retries came within 0.5-2.5 s
        assert server.wait_quiet()
        checks = [r for r in server.requests if r.fault is not None]
        assert len(server.requests) == returned and len(checks) == 1


def test_a_sync_checks_deadline_leaves_a_langchain_llm_cache_working():
    # the deadline reaches the SDK as its client's time-out, not as a call argument: the LLM
    # cache keys on the arguments, and a time left that differs every call would miss it
    from langchain_core.caches import InMemoryCache
    from langchain_core.globals import get_llm_cache, set_llm_cache

    previous = get_llm_cache()
    set_llm_cache(InMemoryCache())
    try:
        with OpenAIServer(reply="The sun shines.") as server:
            chain = (
                ChatPromptTemplate.from_messages([("human", "{question}")])
                | server.chat_model(max_retries=0, timeout=5)
                | StrOutputParser()
            )
            checker = FakeDetector(score=1.0, model=server.chat_model(timeout=5))
            guard = HallucinationGuard(chain=chain, detectors=checker, check_timeout=3)
            for _ in range(3):
                out = guard.invoke({"question": "What shines?"})
                assert out.status == "passed"
            # the chain's call and the checker's, once each; the rest from the cache
            assert len(server.requests) == 2
    finally:
        set_llm_cache(previous)


def test_an_abandoned_sync_check_still_ends_at_its_deadline():
    # the same deadline, as the client's time-out, hangs the request up
    with OpenAIServer(
        reply="The sun shines.", faults=[Fault("stall", match="sun shines", stall_seconds=8)]
    ) as server:
        chain = (
            ChatPromptTemplate.from_messages([("human", "{question}")])
            | server.chat_model(max_retries=0, timeout=5)
            | StrOutputParser()
        )
        checker = FakeDetector(score=1.0, model=server.chat_model(max_retries=0, timeout=60))
        guard = HallucinationGuard(chain=chain, detectors=checker, check_timeout=0.5)
        started = time.perf_counter()
        out = guard.invoke({"question": "What shines?"})
        assert "timed out" in out.verdict.errors["fake"]
        assert server.wait_idle(timeout=3)  # hung up, well before the 8 s stall or 60 s client
        assert time.perf_counter() - started < 4
        assert [r.status for r in server.requests if r.fault is not None] == [499]
