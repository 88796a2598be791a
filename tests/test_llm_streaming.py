"""Streamed replies (on_text): which models stream, what they deliver and what it costs."""

from __future__ import annotations

import itertools

from langchain_core.runnables import RunnableLambda

from truthguard.llm import LLMSession, LLMSettings, count_tokens
from truthguard.testing import ScriptedChatModel

FAST = LLMSettings(backoff_initial=0.0, backoff_max=0.0)


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
