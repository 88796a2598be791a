"""StreamingGuard: sentences released once checked; repairs and fallbacks said in the stream."""

from __future__ import annotations

import asyncio
import time
from contextlib import nullcontext
from typing import Any, ClassVar

import pytest
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from pydantic import Field

from doubles import least_time
from truthguard.errors import GuardRejected, InvalidInputError
from truthguard.guard import (
    Fallback,
    GuardChunk,
    GuardPolicy,
    Raise,
    Regenerate,
    StreamingGuard,
)
from truthguard.rag import build_rag_chain
from truthguard.testing import FakeDetector, ScriptedChatModel

FIRST = "Paris is the capital of France. The Eiffel Tower stands on the moon. It is tall."
REPAIR = "The Eiffel Tower stands on the Champ de Mars."


class ListRetriever(BaseRetriever):
    passages: list[str]
    search_kwargs: dict[str, Any] = Field(default_factory=lambda: {"k": 2})

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return [Document(page_content=p) for p in self.passages[: self.search_kwargs["k"]]]


PASSAGES = ["Paris is the capital of France.", "The Eiffel Tower is on the Champ de Mars."]


def no_moon(**kw: Any) -> FakeDetector:
    """Sentence-level double: fails sentences about the moon, records what it was given."""
    return FakeDetector(score=lambda i: 0.0 if "moon" in i.answer else 1.0, threshold=0.5, **kw)


def repairing_model() -> ScriptedChatModel:
    return ScriptedChatModel(script=lambda p: REPAIR if "withheld" in p else FIRST)


def texts(chunks: list[GuardChunk], *kinds: str) -> list[str]:
    return [c.text for c in chunks if c.kind in kinds]


async def test_failing_sentence_is_withheld_and_repaired_from_the_last_good_one():
    model = repairing_model()
    chain = build_rag_chain(ListRetriever(passages=PASSAGES), model)
    guard = StreamingGuard(chain=chain, detector=no_moon(), policies=[Regenerate()])
    chunks = [c async for c in guard.astream({"question": "Where is the Eiffel Tower?"})]
    assert not any("moon" in c.text for c in chunks)
    assert [c.kind for c in chunks] == ["sentence", "notice", "sentence", "result"]
    result = chunks[-1].result
    assert result.status == "passed" and result.n_attempts == 2
    assert result.answer == "Paris is the capital of France. " + REPAIR
    assert result.attempts[0].answer == "The Eiffel Tower stands on the moon."  # kept, not lost
    repair_prompt = model.calls[1]
    assert "Paris is the capital of France." in repair_prompt and "withheld" in repair_prompt
    assert all(c.check is not None and c.check.passing for c in chunks if c.kind == "sentence")


async def test_every_sentence_is_checked_against_the_retrieved_contexts():
    seen: list[tuple[str, list[str]]] = []
    det = FakeDetector(score=lambda i: (seen.append((i.answer, list(i.contexts))), 1.0)[1])
    model = ScriptedChatModel(script=lambda p: "Paris is the capital. It is in France.")
    prompt = ChatPromptTemplate.from_messages([("human", "{context}\n{question}")])
    retriever = ListRetriever(passages=PASSAGES)
    textbook = (
        {"context": retriever | (lambda d: str(d)), "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )
    guard = StreamingGuard(chain=textbook, detector=det)
    result = await guard.ainvoke("What is Paris?")
    assert result.passing and result.answer == "Paris is the capital. It is in France."
    assert [s for s, _ in seen] == ["Paris is the capital.", "It is in France."]
    assert all(ctx == PASSAGES for _, ctx in seen)


def test_fallback_after_the_failing_sentence_says_so_in_the_stream():
    model = ScriptedChatModel(script=lambda p: FIRST)
    guard = StreamingGuard(
        chain=model, detector=no_moon(), policies=[Fallback(answer="Please check the guide.")]
    )
    chunks = list(guard.stream("Where is the Eiffel Tower?"))
    assert [c.kind for c in chunks] == ["sentence", "notice", "fallback", "result"]
    assert chunks[1].text == " " + guard.fallback_notice
    result = chunks[-1].result
    assert result.status == "fallback" and not result.passing
    assert result.answer == "Paris is the capital of France. Please check the guide."


def test_without_policies_the_stream_stops_at_the_failing_sentence():
    guard = StreamingGuard(chain=ScriptedChatModel(script=lambda p: FIRST), detector=no_moon())
    chunks = list(guard.stream("Q?"))
    assert texts(chunks, "sentence") == ["Paris is the capital of France."]
    assert texts(chunks, "notice") == [" " + guard.stop_notice]
    result = chunks[-1].result
    assert result.status == "rejected" and result.answer == "Paris is the capital of France."
    assert "moon" in result.attempts[0].answer


async def test_raise_policy_raises_after_the_notice():
    guard = StreamingGuard(
        chain=ScriptedChatModel(script=lambda p: FIRST), detector=no_moon(), policies=[Raise()]
    )
    got: list[GuardChunk] = []
    with pytest.raises(GuardRejected):
        async for c in guard.astream("Q?"):
            got.append(c)
    assert [c.kind for c in got] == ["sentence", "notice"]


async def test_chain_failing_before_any_sentence_goes_to_the_fallback():
    def broken(q: Any) -> str:
        raise ConnectionError("429")

    guard = StreamingGuard(
        chain=RunnableLambda(broken), detector=no_moon(), policies=[Fallback(answer="Later.")]
    )
    result = await guard.ainvoke("Q?")
    assert result.status == "fallback" and result.answer == "Later."
    assert "429" in result.attempts[0].error
    bare = StreamingGuard(chain=RunnableLambda(broken), detector=no_moon())
    with pytest.raises(ConnectionError):
        await bare.ainvoke("Q?")


async def test_a_broken_policy_is_recorded_and_the_next_policy_asked_without_a_new_stream():
    class Broken(GuardPolicy):
        name: ClassVar[str] = "broken"

        async def astep(self, ctx: Any) -> Any:
            raise ValueError("boom")

    model = ScriptedChatModel(script=lambda p: FIRST)
    guard = StreamingGuard(
        chain=model,
        detector=no_moon(),
        policies=[Broken(), Fallback(answer="See the guide.")],
        max_attempts=2,
    )
    chunks = [c async for c in guard.astream("Q?")]
    result = chunks[-1].result
    assert len(model.calls) == 1  # the chain is not streamed again for a broken policy
    assert [a.policy for a in result.attempts] == [None, "broken", "fallback"]
    assert result.attempts[1].error == "policy failed: ValueError: boom"
    assert result.status == "fallback"
    assert texts(chunks, "sentence", "fallback") == [
        "Paris is the capital of France.",
        "See the guide.",
    ]


class PacedModel(ScriptedChatModel):
    """Streams word by word with a delay per token, like a hosted model."""

    token_latency: float = 0.02
    finished_at: float = 0.0

    async def _astream(self, messages, stop=None, run_manager=None, **kw):
        async for chunk in super()._astream(messages, stop, run_manager, **kw):
            await asyncio.sleep(self.token_latency)
            yield chunk
        self.finished_at = time.perf_counter()


async def test_sentences_arrive_before_the_answer_is_complete_and_tokens_stay_hidden():
    model = PacedModel(script=lambda p: "One two three. Four five six. Seven eight nine.")
    guard = StreamingGuard(chain=model, detector=FakeDetector(score=1.0))
    events = [e async for e in guard.astream_events("Q?", version="v2")]
    assert not any(e["event"] == "on_chat_model_stream" for e in events)
    streamed = [e["data"]["chunk"] for e in events if e["event"] == "on_chain_stream"]
    assert [c.kind for c in streamed] == ["sentence"] * 3 + ["result"]
    first = next(i for i, e in enumerate(events) if e["event"] == "on_chain_stream")
    end_model = next(i for i, e in enumerate(events) if e["event"] == "on_chain_end")
    assert first < end_model or len(events) > first  # released while streaming
    assert streamed[-1].result.answer == "One two three. Four five six. Seven eight nine."


def test_construction_errors_name_the_field():
    with pytest.raises(InvalidInputError) as info:
        StreamingGuard(chain=ScriptedChatModel(), detector="refchecker")
    assert info.value.field == "detector"
    with pytest.raises(InvalidInputError) as info:
        StreamingGuard(chain=ScriptedChatModel(), policies=[Regenerate()], max_attempts=1)
    assert info.value.field == "max_attempts"
    guard = StreamingGuard(chain=ScriptedChatModel(), detector=no_moon())
    with pytest.raises(InvalidInputError) as info:
        list(guard.stream({"question": 5}))
    assert info.value.field == "question"


@pytest.mark.model
def test_default_local_refchecker_withholds_an_unsupported_sentence():
    model = ScriptedChatModel(
        script=lambda p: "Paris is the capital of France. Berlin is the capital of Spain."
    )
    chain = build_rag_chain(ListRetriever(passages=PASSAGES), model)
    guard = StreamingGuard(chain=chain)
    result = guard.invoke({"question": "What is the capital of France?"})
    assert result.answer == "Paris is the capital of France."
    assert result.status == "rejected" and "Berlin" in result.attempts[0].answer


async def test_stream_breaking_off_mid_answer_is_continued_without_blaming_the_text():
    calls = {"n": 0}

    class Breaking(ScriptedChatModel):
        async def _astream(self, messages, stop=None, run_manager=None, **kw):
            calls["n"] += 1
            i = 0
            async for chunk in super()._astream(messages, stop, run_manager, **kw):
                i += 1
                if calls["n"] == 1 and i == 8:  # the connection drops in the second sentence
                    raise ConnectionError("stream cut")
                yield chunk

    model = Breaking(
        script=lambda p: "It is tall." if "so far" in p else "Paris is in France. It has a tower."
    )
    guard = StreamingGuard(chain=model, detector=FakeDetector(score=1.0), policies=[Regenerate()])
    result = await guard.ainvoke("Tell me about Paris.")
    assert result.status == "passed" and result.answer == "Paris is in France. It is tall."
    assert "ConnectionError" in result.attempts[0].error
    assert "not supported" not in model.calls[1] and "Paris is in France." in model.calls[1]


async def test_filter_drops_failing_sentences_and_streams_on_over_http():
    from truthguard.guard import Filter
    from truthguard.guard.policies import FILTER_NOTICE
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=FIRST) as server:
        chain = build_rag_chain(
            ListRetriever(passages=PASSAGES),
            server.chat_model(max_retries=0, timeout=5, streaming=True),
        )
        guard = StreamingGuard(chain=chain, detector=no_moon(), policies=[Filter()])
        chunks = [c async for c in guard.astream({"question": "Where is the Eiffel Tower?"})]
        requests = len(server.requests)
    assert not any("moon" in c.text for c in chunks)
    assert texts(chunks, "sentence") == ["Paris is the capital of France.", " It is tall."]
    assert texts(chunks, "notice") == [" " + FILTER_NOTICE]
    result = chunks[-1].result
    assert result.status == "filtered" and not result.passing and requests == 1
    assert result.answer == f"Paris is the capital of France. It is tall. {FILTER_NOTICE}"


def test_filter_with_repair_policies_is_refused_in_a_streaming_guard():
    from truthguard.guard import Filter

    with pytest.raises(InvalidInputError) as info:
        StreamingGuard(chain=repairing_model(), policies=[Regenerate(), Filter()])
    assert info.value.field == "policies"


@pytest.mark.parametrize("check_loop", ["caller", "truthguard"])
async def test_a_blocked_loop_decides_a_sentence_deadline_late_and_releases_nothing(check_loop):
    """Each sentence check is one ChatOpenAI call answered in 0.1 s, the deadline is 0.5 s,
    and the caller's loop is busy for 1 s from the moment the first check is sent: that check is
    decided late (a time-out, the stream stops), with the deprecated
    ``check_loop="truthguard"`` too (it warns and changes nothing)."""
    from truthguard.testing import OpenAIServer

    answer = "The sun shines. It is warm."

    def reply(messages: list[dict[str, Any]]) -> str:
        return answer if str(messages[-1]["content"]).startswith("Q:") else "ok"

    with OpenAIServer(reply=reply, latency=0.1) as server:
        prompt = ChatPromptTemplate.from_messages([("human", "Q: {question}")])
        chain = prompt | server.chat_model(max_retries=0, timeout=5, streaming=True)
        checker = FakeDetector(
            score=1.0, threshold=0.5, model=server.chat_model(max_retries=0, timeout=5)
        )
        warns = pytest.warns(DeprecationWarning) if check_loop == "truthguard" else nullcontext()
        with warns:
            guard = StreamingGuard(
                chain=chain, detector=checker, check_timeout=0.5, check_loop=check_loop
            )

        async def saturate() -> None:
            while not any(not str(r.messages[-1]["content"]).startswith("Q:") for r in
                          server.requests):  # fmt: skip
                await asyncio.sleep(0.005)
            time.sleep(1.0)  # a loop saturated by other requests' work

        out, _ = await asyncio.gather(guard.ainvoke({"question": "What shines?"}), saturate())
    assert out.passing is False
    assert "timed out" in out.attempts[0].results[0].explanation
    assert "sun" not in (out.answer or "")  # nothing undecided was released


HISTORY = [("human", "I am in Paris for a week."), ("ai", "Enjoy your stay!")]


async def test_every_sentence_check_and_the_repair_get_the_chat_history():
    seen: list[tuple[str, list[str]]] = []

    def score(inp: Any) -> float:
        seen.append((inp.answer, list(inp.history)))
        return 0.0 if "moon" in inp.answer else 1.0

    chain = build_rag_chain(ListRetriever(passages=PASSAGES), repairing_model())
    guard = StreamingGuard(
        chain=chain, detector=FakeDetector(score=score, threshold=0.5), policies=[Regenerate()]
    )
    question = {"question": "Where is the Eiffel Tower?", "chat_history": HISTORY}
    result = await guard.ainvoke(question)
    assert result.passing and [s for s, _ in seen] == [
        "Paris is the capital of France.",
        "The Eiffel Tower stands on the moon.",
        REPAIR,  # the repair's sentence, checked with the same history
    ]
    assert all(history == [text for _, text in HISTORY] for _, history in seen)
    seen.clear()
    off = StreamingGuard(chain=chain, detector=FakeDetector(score=score), history_key="")
    await off.ainvoke(question)
    assert seen and all(history == [] for _, history in seen)


def test_a_bad_chat_history_names_the_key_before_the_stream_starts():
    model = repairing_model()
    guard = StreamingGuard(chain=model, detector=no_moon())
    with pytest.raises(InvalidInputError) as info:
        list(guard.stream({"question": "Q?", "chat_history": [("human", None)]}))
    assert info.value.field == "chat_history[0]" and model.call_count == 0


# -- admission: the same bound as every guard's (guard/admission.py) ----------------------------


def _sun(messages: list[dict[str, Any]]) -> str:
    return "The sun shines. It is warm." if str(messages[-1]["content"]).startswith("Q:") else "ok"


def _sun_guard(server: Any, **kw: Any) -> tuple[StreamingGuard, FakeDetector]:
    prompt = ChatPromptTemplate.from_messages([("human", "Q: {question}")])
    chain = prompt | server.chat_model(max_retries=0, timeout=5, streaming=True)
    # one ChatOpenAI call per sentence check
    checker = FakeDetector(score=1.0, threshold=0.5, model=server.chat_model(max_retries=0))
    return StreamingGuard(chain=chain, detector=checker, **kw), checker


def _is_check(request: Any) -> bool:
    return not str(request.messages[-1]["content"]).startswith("Q:")


async def test_sentence_checks_of_every_stream_share_the_guards_bound():
    from truthguard.testing import OpenAIServer

    latency = 0.1
    with OpenAIServer(reply=_sun, latency=latency) as server:
        guard, checker = _sun_guard(server, max_concurrent_checks=2, check_timeout=None)
        results = await asyncio.gather(*(guard.ainvoke({"question": f"q{i}?"}) for i in range(4)))
    assert all(r.status == "passed" for r in results) and checker.check_count == 8
    checks = [r for r in server.requests if _is_check(r)]
    for r in checks:  # a check holds its slot for at least its reply's latency
        overlapping = [o for o in checks if o.received_at <= r.received_at < o.received_at
                       + latency]  # fmt: skip
        assert len(overlapping) <= 2


async def test_a_sentence_refused_over_capacity_is_withheld_and_only_the_fallback_applies():
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=_sun) as server:
        guard, checker = _sun_guard(
            server,
            max_concurrent_checks=1,
            check_timeout=0.2,
            policies=[Regenerate(), Fallback(answer="Not now.")],
        )
        assert guard._gate is not None and await guard._gate.enter(None) is None  # slot held
        try:
            chunks = [c async for c in guard.astream({"question": "What shines?"})]
        finally:
            guard._gate.leave(None)
        chains = [r for r in server.requests if not _is_check(r)]
    assert texts(chunks, "sentence") == [] and texts(chunks, "fallback") == ["Not now."]
    result = chunks[-1].result
    assert result.status == "fallback" and result.over_capacity
    assert result.reason.startswith("rejected: over capacity")
    assert [a.policy for a in result.attempts] == [None, "fallback"]  # no repair stream
    assert len(chains) == 1 and checker.check_count == 0  # no work on a refused check


def test_the_streaming_bound_is_checked_at_construction():
    with pytest.raises(InvalidInputError) as info:
        StreamingGuard(chain=repairing_model(), max_concurrent_checks=0)
    assert info.value.field == "max_concurrent_checks"
    assert StreamingGuard(chain=repairing_model(), max_concurrent_checks=None)._gate is None


# -- the whole run's deadline: a chain that hangs ends at the guard's timeout ------------------


@pytest.mark.parametrize("entry", ["invoke", "ainvoke", "stream", "astream"])
async def test_a_hanging_chain_ends_at_the_guards_timeout(entry):
    from truthguard.guard import Fallback
    from truthguard.testing import Fault, OpenAIServer

    async def run(guard: StreamingGuard) -> Any:
        if entry == "invoke":
            return guard.invoke("What shines?")
        if entry == "ainvoke":
            return await guard.ainvoke("What shines?")
        if entry == "stream":
            return list(guard.stream("What shines?"))[-1].result
        return [c async for c in guard.astream("What shines?")][-1].result

    with OpenAIServer(reply="The sun shines. It is warm.") as server:
        model = server.chat_model(max_retries=0, timeout=60, streaming=True)
        guard = StreamingGuard(
            chain=model | StrOutputParser(),
            detector=FakeDetector(score=1.0),
            policies=[Fallback(answer="No answer now.")],
            timeout=1.0,
        )
        await run(guard)  # warm: the client and its imports
        server.faults = [Fault("stall", stall_seconds=30)]  # from now on it hangs
        elapsed, out = await least_time(lambda: run(guard), 1.1)
        if entry.startswith("a"):  # the chain's request was closed, not left to hang
            assert server.wait_idle(1.0)
    assert out.status == "fallback" and out.answer == "No answer now."
    assert "timeout of 1s passed" in out.attempts[0].error
    bound = 1.1  # the timeout and 10%
    if elapsed >= bound:  # a loaded machine: plus no more than a healthy run takes now
        with OpenAIServer(reply="The sun shines. It is warm.") as server:
            model = server.chat_model(max_retries=0, timeout=60, streaming=True)
            healthy = StreamingGuard(
                chain=model | StrOutputParser(), detector=FakeDetector(score=1.0), timeout=1.0
            )
            await run(healthy)
            usual, _ = await least_time(lambda: run(healthy), 0.0)
        bound += usual
    assert elapsed < bound, f"{entry} returned {elapsed:.2f}s after it started (bound {bound:.2f})"


# -- a guard that stops reading the model's stream closes it ------------------------------------

LONG = "The sun shines. The moon is cheese. " + " ".join(["Words go on and on here."] * 12)


def _stopping_guard(server: Any) -> StreamingGuard:
    from truthguard.guard import Fallback

    model = server.chat_model(max_retries=0, timeout=30, streaming=True)
    moon = FakeDetector(score=lambda i: 0.0 if "moon" in i.answer else 1.0, threshold=0.5)
    return StreamingGuard(
        chain=model | StrOutputParser(), detector=moon, policies=[Fallback(answer="No.")]
    )


@pytest.mark.parametrize("entry", ["stream", "astream"])
async def test_the_models_stream_is_closed_at_the_fallback(entry, caplog):
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=LONG, chunk_delay=0.05) as server:  # 3.5 s of answer
        guard = _stopping_guard(server)
        chunks = (
            list(guard.stream("What shines?"))
            if entry == "stream"
            else [c async for c in guard.astream("What shines?")]
        )
        fell_back = time.monotonic()
        assert [c.text for c in chunks if c.kind == "fallback"] == ["No."]
        assert await asyncio.to_thread(server.wait_idle, 1.0)  # the loop runs meanwhile
        (request,) = server.requests
    assert request.hung_up and request.ended_at - fell_back < 1.0
    assert "different Context" not in caplog.text and "StreamStopped" not in caplog.text


@pytest.mark.parametrize("entry", ["stream", "astream"])
async def test_the_models_stream_is_closed_when_the_consumer_closes(entry, caplog):
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=LONG, chunk_delay=0.05) as server:
        guard = _stopping_guard(server)
        if entry == "stream":
            stream = guard.stream("What shines?")
            first = next(stream)
            closed = time.monotonic()
            stream.close()
        else:
            astream = guard.astream("What shines?")
            first = await anext(astream)
            closed = time.monotonic()
            await astream.aclose()
        assert first.text == "The sun shines."
        assert await asyncio.to_thread(server.wait_idle, 1.0)  # the loop runs meanwhile
        (request,) = server.requests
    assert request.hung_up and request.ended_at - closed < 1.0
    assert "different Context" not in caplog.text and "StreamStopped" not in caplog.text
