"""TruthGuardCallbackHandler and its async twin: capture under load, options, tracing."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from doubles import echo_chain, moon_detector
from truthguard.callbacks import (
    AsyncTruthGuardCallbackHandler,
    JSONLSink,
    ScoreRecord,
    TruthGuardCallbackHandler,
)
from truthguard.errors import InvalidInputError
from truthguard.testing import FakeDetector, ScriptedChatModel


async def test_100_concurrent_runs_lose_no_record(tmp_path):
    path = tmp_path / "scores.jsonl"
    handler = AsyncTruthGuardCallbackHandler(
        FakeDetector(score=0.8, threshold=0.5, latency=0.002), sinks=[JSONLSink(path)]
    )
    chain = echo_chain()
    questions = [f"question number {i}?" for i in range(100)]
    outs = await asyncio.gather(
        *(chain.ainvoke({"question": q}, {"callbacks": [handler]}) for q in questions)
    )
    assert len(outs) == 100
    assert await handler.aclose(timeout=30)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 100
    assert {r["question"] for r in lines} == set(questions)
    assert len({r["run_id"] for r in lines}) == 100
    assert all(r["status"] == "scored" and r["passing"] for r in lines)
    s = handler.summary()
    assert s["count"] == 100 and s["pass_rate"] == 1.0 and s["failed"] == 0


def test_sync_batch_records_every_run_with_run_ids():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(moon_detector(), sinks=records.append)
    chain = RunnableLambda(lambda inp: "the moon" if "night" in inp["question"] else "the sun")
    run_ids = []
    for q in ["what shines at night?", "what shines by day?"]:
        from uuid import uuid4

        rid = uuid4()
        run_ids.append(str(rid))
        chain.invoke({"question": q}, {"callbacks": [handler], "run_id": rid})
    assert handler.flush(timeout=10)
    by_run = {r.run_id: r for r in records}
    assert set(by_run) == set(run_ids)
    assert by_run[run_ids[0]].label == "hallucinated" and by_run[run_ids[1]].passing is True
    s = handler.summary()
    assert s["labels"] == {"hallucinated": 1, "factual": 1} and s["pass_rate"] == 0.5
    assert s["scores"]["min"] == 0.0 and s["scores"]["max"] == 1.0
    handler.close()


def test_bad_options_name_the_field():
    with pytest.raises(InvalidInputError, match="max_queue"):
        TruthGuardCallbackHandler(FakeDetector(), max_queue=0)
    for bad in (float("nan"), "10", 2.5, True):
        with pytest.raises(InvalidInputError, match="max_queue"):
            TruthGuardCallbackHandler(FakeDetector(), max_queue=bad)
        with pytest.raises(InvalidInputError, match="concurrency"):
            TruthGuardCallbackHandler(FakeDetector(), concurrency=bad)
    with pytest.raises(InvalidInputError, match="when_full"):
        TruthGuardCallbackHandler(FakeDetector(), when_full="drop")  # type: ignore[arg-type]
    for bad in (0, -1.0, float("nan"), "2", True):
        with pytest.raises(InvalidInputError, match="timeout"):
            TruthGuardCallbackHandler(FakeDetector(), timeout=bad)  # type: ignore[arg-type]


def test_sync_handler_under_100_threaded_batch_runs(tmp_path):
    path = tmp_path / "scores.db"
    handler = TruthGuardCallbackHandler(FakeDetector(score=0.2, threshold=0.5), sinks=[path])
    chain = echo_chain()
    questions = [{"question": f"q{i}?"} for i in range(100)]
    chain.batch(questions, {"callbacks": [handler], "max_concurrency": 16})
    assert handler.close(timeout=30)
    import sqlite3 as sql

    with sql.connect(path) as conn:
        n, distinct, passed = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT question), SUM(passing) FROM truthguard_scores"
        ).fetchone()
    assert (n, distinct, passed) == (100, 100, 0)
    assert handler.summary()["pass_rate"] == 0.0


class ChainStarts(BaseCallbackHandler):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
        self.names.append(kw.get("name") or "")


async def test_background_checks_stay_out_of_the_observed_chain_trace():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(score=0.9), sinks=records.append)
    model = ScriptedChatModel(script=lambda p: "an answer").with_config(callbacks=[handler])
    chain = ChatPromptTemplate.from_template("q: {question}") | model
    tracer = ChainStarts()
    chain.invoke({"question": "sync?"}, {"callbacks": [tracer]})
    await chain.ainvoke({"question": "async?"}, {"callbacks": [tracer]})
    assert await asyncio.to_thread(handler.close, 10)
    assert len(records) == 2 and all(r.status == "scored" for r in records)
    assert "FakeDetector" not in tracer.names


def test_the_default_checker_gives_a_pass_rate_over_http():
    from doubles import ListRetriever
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE)."]
    replies = {"Where is Dubai": "Dubai is in France.", "Which country": "Dubai is in the UAE."}
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(RefChecker(), sinks=records.append)
    with OpenAIServer(reply=replies, default="I do not know.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages), server.chat_model(max_retries=0, timeout=5)
        )
        for q in ["Where is Dubai?", "Which country is Dubai in?"]:
            chain.invoke({"question": q}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
    assert sorted(r.passing for r in records) == [False, True]
    assert handler.summary()["pass_rate"] == 0.5
    handler.close()


@pytest.mark.parametrize("handler_cls", [TruthGuardCallbackHandler, AsyncTruthGuardCallbackHandler])
async def test_on_a_guard_run_the_guards_verdict_and_contexts_are_recorded(handler_cls):
    from doubles import ListRetriever
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE)."]
    replies = {"Where is Dubai": "Dubai is in France.", "Which country": "Dubai is in the UAE."}
    records: list[ScoreRecord] = []
    spare = FakeDetector(score=0.0)  # the handler's own detector: never needed here
    handler = handler_cls(spare, sinks=records.append)
    with OpenAIServer(reply=replies, default="I do not know.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(chain=chain, detectors=RefChecker())
        outs = [
            await guard.ainvoke({"question": q}, {"callbacks": [handler]})
            for q in ["Where is Dubai?", "Which country is Dubai in?"]
        ]
        assert await asyncio.to_thread(handler.flush, 30)
        requests = len(server.requests)
    assert [o.status for o in outs] == ["rejected", "passed"]
    assert requests == 2 and spare.check_count == 0  # no second check
    by_q = {r.question: r for r in records}
    bad, good = by_q["Where is Dubai?"], by_q["Which country is Dubai in?"]
    assert bad.contexts == passages and good.contexts == passages
    assert (bad.answer, bad.passing, bad.label) == ("Dubai is in France.", False, "hallucinated")
    assert (good.passing, good.label, good.detector) == (True, "factual", "refchecker")
    assert (
        good.metadata["truthguard_source"] == "guard" and bad.metadata["guard_status"] == "rejected"
    )
    assert handler.summary()["pass_rate"] == 0.5
    handler.close()


@pytest.mark.parametrize("output", ["result", "answer"])
@pytest.mark.parametrize("handler_cls", [TruthGuardCallbackHandler, AsyncTruthGuardCallbackHandler])
async def test_on_a_guard_that_falls_back_the_refused_answer_is_recorded_as_refused(
    handler_cls, output, tmp_path
):
    from doubles import ListRetriever
    from truthguard.guard import Fallback, HallucinationGuard, Regenerate, ReRetrieve
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE).", "Abu Dhabi is its capital."]
    path = tmp_path / "records.jsonl"
    spare = FakeDetector(score=1.0)  # would pass the fallback text if it were asked
    handler = handler_cls(spare, sinks=[JSONLSink(path)])
    with OpenAIServer(reply="Dubai is in France.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages), server.chat_model(max_retries=0, timeout=5)
        )
        policies = [ReRetrieve(k=[2]), Regenerate(), Fallback(answer="I don't know.")]
        guard = HallucinationGuard(
            chain=chain, detectors=RefChecker(), policies=policies, output=output
        )
        out = await guard.ainvoke({"question": "Where is Dubai?"}, {"callbacks": [handler]})
        assert await asyncio.to_thread(handler.flush, 30)
    if output == "result":
        assert (out.status, out.answer) == ("fallback", "I don't know.")
    else:
        assert out == "I don't know."
    (record,) = [ScoreRecord(**json.loads(line)) for line in path.read_text().splitlines()]
    assert (record.answer, record.passing, record.label) == ("Dubai is in France.", False,
                                                             "hallucinated")  # fmt: skip
    assert record.contexts == passages  # the refused attempt's own, each once
    assert record.metadata["guard_status"] == "fallback"
    assert record.metadata["guard_released"] == "I don't know."
    assert record.metadata["guard_attempt"] == 3 and spare.check_count == 0
    summary = handler.summary()
    assert (summary["passed"], summary["pass_rate"]) == (0, 0.0)
    handler.close()


@pytest.mark.parametrize("output", ["result", "answer"])
def test_on_a_guard_that_filters_the_released_sentences_are_checked(output):
    from doubles import ListRetriever
    from truthguard.guard import Filter, HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE)."]
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(score=1.0), sinks=records.append)
    with OpenAIServer(reply="Dubai is a city in the UAE. It is the capital of France.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(
            chain=chain, detectors=RefChecker(), policies=[Filter()], output=output
        )
        guard.invoke({"question": "Where is Dubai?"}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
    (record,) = records
    assert record.answer.startswith("Dubai is a city in the UAE. [")  # the filtered text
    assert "France" not in record.answer and record.passing is True
    handler.close()


def test_on_a_guard_run_recheck_runs_the_handlers_detector_on_the_checked_answer():
    from doubles import ListRetriever
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.testing import OpenAIServer

    passages = ["p1", "p2"]
    records: list[ScoreRecord] = []
    seen: list[list[str]] = []

    def score(inp):
        seen.append(inp.contexts)
        return 0.9

    handler = TruthGuardCallbackHandler(FakeDetector(score=score), sinks=records.append,
                                        recheck=True)  # fmt: skip
    with OpenAIServer(reply="An answer.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages, search_kwargs={"k": 2}),
            server.chat_model(max_retries=0, timeout=5),
        )
        guard = HallucinationGuard(chain=chain, detectors=FakeDetector(score=1.0))
        guard.invoke({"question": "Q?"}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
    assert seen == [passages]
    assert len(records) == 1 and records[0].score == 0.9 and records[0].contexts == passages
    handler.close()


def test_on_a_guard_returning_text_the_verdict_event_is_recorded_without_a_second_check():
    from doubles import ListRetriever
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE)."]
    records: list[ScoreRecord] = []
    spare = FakeDetector(score=0.0)
    handler = TruthGuardCallbackHandler(spare, sinks=records.append)
    with OpenAIServer(reply="Dubai is in the UAE.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(chain=chain, detectors=RefChecker(), output="answer")
        text = guard.invoke({"question": "Which country is Dubai in?"}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
    assert text == "Dubai is in the UAE." and spare.check_count == 0
    (record,) = records
    assert (record.answer, record.contexts, record.passing) == (text, passages, True)
    assert record.detector == "refchecker" and record.metadata["truthguard_source"] == "guard"
    handler.close()


@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_on_a_streaming_guard_run_the_guards_verdict_and_contexts_are_recorded(how):
    from doubles import ListRetriever
    from truthguard.guard import StreamingGuard
    from truthguard.rag import build_rag_chain
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE)."]
    replies = {"Where is": "Dubai is in the UAE. It is a city.", "Which": "Dubai is in France."}
    records: list[ScoreRecord] = []
    spare = FakeDetector(score=0.0)  # the handler's own detector: never needed here
    handler = TruthGuardCallbackHandler(spare, sinks=records.append)
    with OpenAIServer(reply=replies) as server:
        model = server.chat_model(max_retries=0, timeout=5, streaming=True)
        guard = StreamingGuard(chain=build_rag_chain(ListRetriever(passages=passages), model))
        for question in ["Where is Dubai?", "Which country is Dubai in?"]:
            config = {"callbacks": [handler]}
            if how == "invoke":
                guard.invoke({"question": question}, config)
            else:
                list(guard.stream({"question": question}, config))
        assert handler.flush(timeout=30)
        requests = len(server.requests)
    assert requests == 2 and spare.check_count == 0  # no second check
    by_q = {r.question: r for r in records}
    good, bad = by_q["Where is Dubai?"], by_q["Which country is Dubai in?"]
    assert good.contexts == passages and bad.contexts == passages
    assert (good.answer, good.passing, good.label) == ("Dubai is in the UAE. It is a city.", True,
                                                       "factual")  # fmt: skip
    assert (bad.passing, bad.label, bad.metadata["guard_status"]) == (False, "hallucinated",
                                                                      "rejected")  # fmt: skip
    assert good.detector == "refchecker" and good.metadata["truthguard_source"] == "guard"
    handler.close()


@pytest.mark.parametrize("reply", ["", "   ", "..."])
def test_an_empty_chain_reply_is_never_logged_factual(reply):
    records: list = []
    handler = TruthGuardCallbackHandler(FakeDetector(score=0.9), sinks=records.append)
    RunnableLambda(lambda q: reply).invoke("Q?", {"callbacks": [handler]})
    handler.close(timeout=10)
    assert len(records) == 1 and records[0].label != "factual" and records[0].passing is not True


def test_the_chat_history_of_a_chain_and_of_a_chat_model_reaches_the_detector_over_http():
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from doubles import HISTORY, RESTATING, chat_rag_chain
    from truthguard.testing import OpenAIServer

    seen: list[tuple[str, list[str]]] = []

    def score(inp):
        seen.append((inp.question, list(inp.history)))
        return 1.0

    said = [text for _, text in HISTORY]
    question = "Which tram goes through Alfama?"
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(score=score), sinks=records.append)
    off = TruthGuardCallbackHandler(FakeDetector(score=score), sinks=records.append, history_key="")
    with OpenAIServer(reply=RESTATING) as server:
        model = server.chat_model(max_retries=0, timeout=5)
        chain = chat_rag_chain(model)
        chain.invoke({"question": question, "chat_history": HISTORY}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
        # A chat model on its own: the messages before the last human one are the history.
        conversation = [
            SystemMessage("Be brief."),
            HumanMessage(said[0]),
            AIMessage(said[1]),
            HumanMessage(question),
        ]
        model.invoke(conversation, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
        chain.invoke({"question": question, "chat_history": HISTORY}, {"callbacks": [off]})
        assert off.flush(timeout=30)
    assert seen == [(question, said), (question, said), (question, [])]
    assert [r.question for r in records] == [question] * 3
    handler.close()
    off.close()


def test_on_a_guard_run_recheck_gets_the_chat_history_too():
    from doubles import HISTORY, RESTATING, chat_rag_chain
    from truthguard.guard import HallucinationGuard
    from truthguard.testing import OpenAIServer

    seen: list[list[str]] = []
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(score=lambda i: seen.append(list(i.history)) or 0.9),
        sinks=records.append,
        recheck=True,
    )
    with OpenAIServer(reply=RESTATING) as server:
        guard = HallucinationGuard(
            chain=chat_rag_chain(server.chat_model(max_retries=0, timeout=5)),
            detectors=FakeDetector(score=1.0),
        )
        guard.invoke({"question": "Which tram?", "chat_history": HISTORY}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
    assert seen == [[text for _, text in HISTORY]] and records[0].score == 0.9
    handler.close()


def test_the_async_handler_awaits_every_hook_the_sync_one_has():
    import inspect

    detector = FakeDetector(score=1.0)
    sync, twin = TruthGuardCallbackHandler(detector), AsyncTruthGuardCallbackHandler(detector)
    hooks = [n for n in dir(BaseCallbackHandler) if n.startswith("on_")]
    overridden = [n for n in hooks if getattr(type(sync), n) is not getattr(BaseCallbackHandler, n)]
    assert {"on_chain_end", "on_llm_end", "on_retriever_end", "on_tool_error"} <= set(overridden)
    for name in overridden:
        assert inspect.iscoroutinefunction(getattr(twin, name)), name
        assert getattr(twin, name).__name__ == name
    assert sync.run_inline and not TruthGuardCallbackHandler(detector, when_full="block").run_inline
    # awaited in place (no task per event) unless a hook may wait for room in the queue
    blocking = AsyncTruthGuardCallbackHandler(detector, when_full="block")
    assert twin.run_inline and not blocking.run_inline
    sync.close()
    twin.close()
    blocking.close()
