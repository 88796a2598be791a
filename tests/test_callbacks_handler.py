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
