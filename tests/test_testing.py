"""The test doubles behave like real chat models."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from truthguard.errors import MissingRecordingError
from truthguard.testing import ReplayChatModel, ScriptedChatModel


def test_scripted_mapping_list_and_callable():
    m = ScriptedChatModel(script={"France": "Paris", "Peru": "Lima"}, default="?")
    assert m.invoke("capital of Peru").content == "Lima"
    assert m.invoke("capital of Chad").content == "?"
    listed = ScriptedChatModel(script=["one", "two"])
    assert [listed.invoke("x").content for _ in range(2)] == ["one", "two"]
    with pytest.raises(ValueError, match="no answer"):
        listed.invoke("x")
    assert ScriptedChatModel(script=str.upper).invoke("abc").content == "ABC"


def test_scripted_sees_all_messages_and_logs_calls():
    m = ScriptedChatModel(script=lambda p: p)
    out = m.invoke([SystemMessage(content="sys"), HumanMessage(content="user")])
    assert out.content == "sys\nuser"
    assert m.calls == ["sys\nuser"] and m.call_count == 1
    m.reset()
    assert m.call_count == 0


def test_failures_on_demand():
    m = ScriptedChatModel(
        script=lambda p: "ok", fail_when=lambda p: "boom" in p, error=TimeoutError
    )
    assert m.invoke("fine").content == "ok"
    with pytest.raises(TimeoutError):
        m.invoke("boom")


async def test_streams_like_a_real_model():
    m = ScriptedChatModel(script=lambda p: "three little words")
    # langchain-core may close a stream with an empty chunk; count the words only.
    chunks = [c.content for c in m.stream("x") if c.content]
    assert "".join(chunks) == "three little words" and len(chunks) == 3
    achunks = [c.content async for c in m.astream("x") if c.content]
    assert achunks == chunks


def test_usage_metadata_reported_or_not():
    assert (
        ScriptedChatModel(script=lambda p: "a b").invoke("x y z").usage_metadata["output_tokens"]
        == 2
    )
    assert (
        not ScriptedChatModel(script=lambda p: "a", report_usage=False).invoke("x").usage_metadata
    )


def test_replay_by_prompt_and_missing_key():
    m = ReplayChatModel(recordings={"hello": "world"}, model_name="rec")
    assert m.invoke("hello").content == "world"
    with pytest.raises(MissingRecordingError, match="rec: no recorded output for key 'bye'"):
        m.invoke("bye")


def test_replay_keyed_on_run_metadata():
    m = ReplayChatModel(recordings={"k1": "v1"})
    assert m.invoke("any prompt", config={"metadata": {"replay_key": "k1"}}).content == "v1"


# -- OpenAIServer: a real OpenAI-compatible HTTP server ------------------------------------------

openai_extra = pytest.importorskip("langchain_openai")


def test_server_routes_by_prompt_and_reports_real_usage():
    from truthguard.llm import count_tokens
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply={"France": "Paris.", "Peru": "Lima."}, default="?") as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        model = server.chat_model(max_retries=0, timeout=5)
        out = model.invoke("capital of Peru")
        assert out.content == "Lima."
        assert out.usage_metadata["output_tokens"] == count_tokens("Lima.")
        other = model.invoke("capital of Chad")
        assert other.content == "?"
        first = server.requests[0]
        assert first.prompt == "capital of Peru" and first.status == 200 and not first.stream
        assert server.usage_total.prompt_tokens == (
            out.usage_metadata["input_tokens"] + other.usage_metadata["input_tokens"]
        )
        assert server.usage_total.completion_tokens == count_tokens("Lima.") + count_tokens("?")


def test_server_streams_sse_with_usage_and_accepts_callables_and_models():
    from truthguard.testing import OpenAIServer

    scripted = ScriptedChatModel(script={"moon": "It is made of rock."})
    with OpenAIServer(reply=scripted) as server:
        model = server.chat_model(max_retries=0, timeout=5, streaming=True)
        chunks = [c for c in model.stream("the moon?")]
        assert "".join(c.content for c in chunks) == "It is made of rock."
        assert len([c for c in chunks if c.content]) == 5
        full = model.invoke("the moon?")
        assert full.response_metadata["finish_reason"] == "stop"
        assert full.usage_metadata["output_tokens"] == server.requests[-1].usage.completion_tokens
        assert all(r.stream and r.include_usage for r in server.requests)
    with OpenAIServer(reply=lambda messages: messages[-1]["content"].upper()) as server:
        assert server.chat_model(max_retries=0).invoke("abc").content == "ABC"


def test_server_without_a_reply_answers_400_which_is_not_retried():
    import openai

    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply={"known": "yes"}) as server:
        with pytest.raises(openai.BadRequestError, match="no scripted reply"):
            server.chat_model(max_retries=2).invoke("something else")
        assert [r.status for r in server.requests] == [400]


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("429", "RateLimitError"),
        ("500", "InternalServerError"),
        ("bad_json", "JSONDecodeError"),
        ("empty_choices", "IndexError"),
        ("stream_cut", "APIConnectionError"),
    ],
)
def test_server_faults_fail_the_client(kind, error):
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(reply="fine", faults=[Fault(kind, match="boom", times=1)]) as server:
        model = server.chat_model(max_retries=0, timeout=5)
        with pytest.raises(Exception) as info:
            model.invoke("boom")
        assert error in [t.__name__ for t in type(info.value).__mro__]
        assert model.invoke("boom").content == "fine"  # times=1: the second request is served
        assert model.invoke("calm").content == "fine"
        assert [r.fault for r in server.requests] == [kind, None, None]


def test_server_429_sends_retry_after_and_the_client_retries():
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(reply="ok", faults=[Fault("429", times=2, retry_after=0.01)]) as server:
        assert server.chat_model(max_retries=2).invoke("x").content == "ok"
        assert [r.status for r in server.requests] == [429, 429, 200]


def test_server_stall_null_content_and_cut_stream():
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(reply="one two three four") as server:
        server.faults = [Fault("stall", times=1, stall_seconds=5)]
        with pytest.raises(Exception, match="timed out"):
            server.chat_model(max_retries=0, timeout=0.3).invoke("x")
        server.faults = [Fault("null_content")]
        assert server.chat_model(max_retries=0).invoke("x").content == ""
        server.faults = [Fault("stream_cut")]
        cut = server.chat_model(max_retries=0, streaming=True).invoke("x")
        assert cut.content == "one two" and "finish_reason" not in cut.response_metadata
        assert server.requests[-1].usage is None


async def test_server_as_async_context_manager():
    from truthguard.testing import Fault, OpenAIServer

    with pytest.raises(ValueError, match="kind"):
        Fault("teapot")  # type: ignore[arg-type]
    async with OpenAIServer(reply="async ok") as server:
        model = server.chat_model(max_retries=0, timeout=5)
        assert (await model.ainvoke("x")).content == "async ok"


def test_openai_server_wait_quiet_waits_for_late_requests():
    import threading
    import time

    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply="ok") as server:
        model = server.chat_model(max_retries=0, timeout=5)
        late = threading.Timer(0.15, lambda: model.invoke("late"))
        late.start()
        assert server.wait_quiet(quiet=0.4)
        late.join()
        assert len(server.requests) == 1  # the late call landed before wait_quiet returned
        started = time.monotonic()
        assert server.wait_quiet(quiet=0.1) and time.monotonic() - started < 5


async def test_a_paced_model_streams_its_reply_over_its_latency():
    import time as _time

    model = ScriptedChatModel(default="a b c d e", latency=0.2, first_token_latency=0.05)
    started = _time.monotonic()
    arrivals, chunks = [], []
    async for chunk in model.astream("q"):
        arrivals.append(_time.monotonic() - started)
        chunks.append(chunk)
    words = [c for c in chunks if c.content]
    assert "".join(c.content for c in words) == "a b c d e"
    assert arrivals[0] >= 0.05 and arrivals[len(words) - 1] >= 0.2  # first word, then the last
    assert arrivals[len(words) - 1] - arrivals[0] >= 0.1  # spread out, not in one burst
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert len(usage) == 1 and usage[0]["output_tokens"] == 5  # reported once, as APIs do
    whole = ScriptedChatModel(default="a b c", latency=0.1)
    started = _time.monotonic()
    stamps = [_time.monotonic() - started async for _ in whole.astream("q")]
    assert stamps[0] >= 0.1  # without first_token_latency the reply comes whole, after latency


def test_assert_grounded_passes_a_supported_answer_from_a_model_over_http():
    from truthguard.rag import build_rag_chain
    from truthguard.testing import OpenAIServer, assert_grounded

    fact = "Mars has two moons, Phobos and Deimos."
    from doubles import ListRetriever

    with OpenAIServer(reply=fact) as server:
        chain = build_rag_chain(
            ListRetriever(passages=[fact]), server.chat_model(max_retries=0, timeout=5)
        )
        out = chain.invoke({"question": "Which moons does Mars have?"})
    result = assert_grounded(out["answer"], out["context"], question=out["question"])
    assert result.passing is True and result.detector == "refchecker"


def test_assert_grounded_fails_naming_the_unsupported_statement():
    from truthguard.testing import assert_grounded

    with pytest.raises(AssertionError) as info:
        assert_grounded(
            "Mars has two moons. Mars has a ring of solid gold.",
            ["Mars has two moons, Phobos and Deimos."],
        )
    assert "refchecker says hallucinated" in str(info.value) and "gold" in str(info.value)


def test_assert_grounded_never_passes_an_unverified_answer():
    from truthguard.errors import LLMCallError
    from truthguard.testing import FakeDetector, assert_grounded

    with pytest.raises(AssertionError, match="invalid"):
        assert_grounded("x", ["y"], detector=FakeDetector(error=LLMCallError("s", "down")))
    with pytest.raises(AssertionError, match=r"below 0\.95"):
        assert_grounded("x", ["y"], detector=FakeDetector(score=0.9), min_score=0.95)
