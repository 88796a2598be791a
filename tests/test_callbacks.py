"""TruthGuardCallbackHandler: capture, background scoring, sinks, flush / close, summary."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

from truthguard.callbacks import (
    AsyncTruthGuardCallbackHandler,
    JSONLSink,
    LoggingSink,
    ScoreRecord,
    SQLiteSink,
    TruthGuardCallbackHandler,
)
from truthguard.errors import InvalidInputError
from truthguard.testing import FakeDetector, ScriptedChatModel


class FixedRetriever(BaseRetriever):
    docs: list[str]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content=d) for d in self.docs]


def moon_detector(**kw: Any) -> FakeDetector:
    return FakeDetector(score=lambda i: 0.0 if "moon" in i.answer else 1.0, threshold=0.5, **kw)


def echo_chain() -> Any:
    model = ScriptedChatModel(script=lambda p: f"answer: {p.split(':', 1)[1].strip()}")
    return ChatPromptTemplate.from_template("question: {question}") | model


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


def test_contexts_come_from_retriever_runs():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    retriever = FixedRetriever(docs=["Paris is in France.", "Lyon is in France."])
    chain = RunnableParallel(
        context=RunnableLambda(lambda x: x["question"]) | retriever,
        question=RunnablePassthrough(),
    ) | RunnableLambda(lambda x: {"answer": f"{len(x['context'])} docs"})
    chain.invoke({"question": "Where is Paris?"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert len(records) == 1
    assert records[0].contexts == ["Paris is in France.", "Lyon is in France."]
    assert records[0].answer == "2 docs"


def test_model_attached_directly_is_captured():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    model = ScriptedChatModel(script=["Shakespeare."], callbacks=[handler])
    model.invoke("Who wrote Hamlet?")
    handler.close(timeout=10)
    assert [(r.question, r.answer) for r in records] == [("Who wrote Hamlet?", "Shakespeare.")]


def test_detector_failure_is_recorded_as_failed():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(error=RuntimeError("backend down")), sinks=records.append
    )
    RunnableLambda(lambda q: "x").invoke("Q?", {"callbacks": [handler]})
    handler.close(timeout=10)
    assert records[0].status == "failed" and "backend down" in records[0].error
    assert handler.summary()["failed"] == 1


def test_queue_full_records_failed_without_blocking():
    records: list[ScoreRecord] = []
    gate = threading.Event()

    def slow_score(inp: Any) -> float:
        gate.wait(5)
        return 1.0

    handler = TruthGuardCallbackHandler(
        FakeDetector(score=slow_score), sinks=records.append, max_queue=2, concurrency=1
    )
    chain = RunnableLambda(lambda q: "x")
    for i in range(5):
        chain.invoke(f"Q{i}?", {"callbacks": [handler]})
    full = [r for r in records if r.error == "queue full"]
    assert len(full) == 3  # the chain did not wait: 3 of 5 found the queue full
    gate.set()
    assert handler.close(timeout=10)
    assert len(records) == 5 and sum(r.status == "scored" for r in records) == 2


def test_close_records_pending_as_failed_after_timeout():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(score=1.0, latency=5.0), sinks=records.append, concurrency=1
    )
    for i in range(3):
        RunnableLambda(lambda q: "x").invoke(f"Q{i}?", {"callbacks": [handler]})
    assert handler.close(timeout=0.05) is False
    assert len(records) == 3
    assert {r.error for r in records} == {"not scored before close"}
    RunnableLambda(lambda q: "x").invoke("late?", {"callbacks": [handler]})
    assert records[-1].error == "handler closed"


def test_jsonl_sqlite_and_logging_sinks(tmp_path, caplog):
    jsonl, db = tmp_path / "s.jsonl", tmp_path / "s.db"
    handler = TruthGuardCallbackHandler(
        moon_detector(), sinks=[JSONLSink(jsonl), SQLiteSink(db), LoggingSink()]
    )
    with caplog.at_level(logging.INFO, logger="truthguard.scores"):
        RunnableLambda(lambda q: "the moon").invoke("Q?", {"callbacks": [handler]})
        handler.close(timeout=10)
    row = json.loads(jsonl.read_text())
    assert row["label"] == "hallucinated"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT run_id, label, passing FROM truthguard_scores").fetchall()
    assert rows == [(row["run_id"], "hallucinated", 0)]
    assert any(row["run_id"] in m for m in caplog.messages)


def test_paths_are_accepted_as_sinks(tmp_path):
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=[tmp_path / "a.jsonl"])
    RunnableLambda(lambda q: "x").invoke("Q?", {"callbacks": [handler]})
    handler.close(timeout=10)
    assert len((tmp_path / "a.jsonl").read_text().splitlines()) == 1
    with pytest.raises(InvalidInputError, match="sinks"):
        TruthGuardCallbackHandler(FakeDetector(), sinks=[tmp_path / "a.txt"])


def test_broken_sink_does_not_stop_other_sinks():
    good: list[ScoreRecord] = []

    def broken(record: ScoreRecord) -> None:
        raise OSError("disk full")

    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=[broken, good.append])
    RunnableLambda(lambda q: "x").invoke("Q?", {"callbacks": [handler]})
    handler.close(timeout=10)
    assert len(good) == 1 and handler.summary()["sink_errors"] == 1


def test_runs_without_question_are_skipped_and_counted():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    RunnableLambda(lambda x: "y").invoke({"prompt": "no question key"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert records == [] and handler.summary()["skipped"] == 1


def test_bad_options_name_the_field():
    with pytest.raises(InvalidInputError, match="max_queue"):
        TruthGuardCallbackHandler(FakeDetector(), max_queue=0)
    with pytest.raises(InvalidInputError, match="when_full"):
        TruthGuardCallbackHandler(FakeDetector(), when_full="drop")  # type: ignore[arg-type]


def test_detector_fields_are_passed_to_the_detector():
    from truthguard.detector import DetectorInput

    class EntityInput(DetectorInput):
        entity: str

    class EntityDetector(FakeDetector):
        input_model = EntityInput

    records: list[ScoreRecord] = []
    detector = EntityDetector(score=lambda inp: float(inp.entity in inp.answer), threshold=0.5)
    handler = TruthGuardCallbackHandler(detector, sinks=records.append, detector_fields=["entity"])
    chain = RunnableLambda(lambda inp: f"{inp['entity']} was a painter.")
    chain.invoke({"question": "Who was Hals?", "entity": "Frans Hals"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert records[0].status == "scored" and records[0].passing is True


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


async def test_block_policy_waits_for_room_instead_of_dropping():
    records: list[ScoreRecord] = []
    handler = AsyncTruthGuardCallbackHandler(
        FakeDetector(score=1.0, latency=0.02),
        sinks=records.append,
        max_queue=1,
        concurrency=1,
        when_full="block",
    )
    chain = RunnableLambda(lambda q: "x")
    await asyncio.gather(*(chain.ainvoke(f"Q{i}?", {"callbacks": [handler]}) for i in range(5)))
    assert await handler.aclose(timeout=10)
    assert len(records) == 5 and all(r.status == "scored" for r in records)
