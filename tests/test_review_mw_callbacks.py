"""Review fixes: close() never strands a capture that arrives while it runs."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda

from truthguard.callbacks import ScoreRecord, TruthGuardCallbackHandler
from truthguard.testing import FakeDetector, ScriptedChatModel


def test_capture_arriving_as_close_flushes_still_gets_a_record():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(score=1.0, latency=0.2), sinks=records.append)
    scorer = handler._core.scorer
    original_flush = scorer.flush
    chain = RunnableLambda(lambda q: "an answer")

    def flush_then_a_chain_ends(timeout=None):
        drained = original_flush(timeout)
        # Another thread's chain ends right after close() drained the queue.
        chain.invoke("late question?", {"callbacks": [handler]})
        return drained

    scorer.flush = flush_then_a_chain_ends
    chain.invoke("first question?", {"callbacks": [handler]})
    handler.close(timeout=10)
    assert [r.question for r in records] == ["first question?", "late question?"]
    assert records[0].status == "scored"
    assert records[1].status == "failed" and records[1].error == "handler closed"
    assert scorer.pending == 0


def test_an_unexpected_error_while_scoring_is_recorded_as_failed():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(score=1.0), sinks=records.append)
    scorer = handler._core.scorer

    def broken(*args, **kwargs):
        raise ValueError("cannot build the record")

    scorer._scored_record = broken
    RunnableLambda(lambda q: "an answer").invoke("Q?", {"callbacks": [handler]})
    assert handler.close(timeout=10)
    assert len(records) == 1 and records[0].status == "failed"
    assert "cannot build the record" in records[0].error


def _scorer_threads() -> int:
    return sum(t.name == "truthguard-scorer" and t.is_alive() for t in threading.enumerate())


def test_a_dropped_handler_does_not_leak_its_thread():
    before = _scorer_threads()
    records: list[ScoreRecord] = []
    for i in range(5):  # one handler per request, never closed
        handler = TruthGuardCallbackHandler(FakeDetector(score=1.0), sinks=records.append)
        RunnableLambda(lambda q: "an answer").invoke(f"Q{i}?", {"callbacks": [handler]})
        assert handler.flush(timeout=10)
        del handler
    gc.collect()
    deadline = time.monotonic() + 5
    while _scorer_threads() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _scorer_threads() <= before
    assert len(records) == 5


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


class TwoDocs(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content="a"), Document(page_content="b")]


async def test_retriever_run_on_its_own_is_not_kept_open():
    handler = TruthGuardCallbackHandler(FakeDetector(score=1.0), sinks=[])
    retriever = TwoDocs()
    for i in range(3):
        retriever.invoke(f"q{i}", {"callbacks": [handler]})
        await retriever.ainvoke(f"q{i}", {"callbacks": [handler]})
    assert handler._core.tracker.open_runs == 0
    assert handler.close(timeout=10)


async def test_sync_handler_in_block_mode_does_not_block_the_event_loop():
    gate = threading.Event()
    opened: list[bool] = []

    def score(inp: Any) -> float:
        opened.append(gate.wait(timeout=3))  # only the caller's event loop opens the gate
        return 1.0

    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(score=score), sinks=records.append, when_full="block", max_queue=1
    )
    chain = RunnableLambda(lambda q: "an answer")

    async def open_gate() -> None:
        await asyncio.sleep(0.05)
        gate.set()

    await asyncio.gather(
        chain.ainvoke("Q1?", {"callbacks": [handler]}),
        chain.ainvoke("Q2?", {"callbacks": [handler]}),  # waits for room while Q1 is scored
        open_gate(),
    )
    assert await asyncio.to_thread(handler.close, 10)
    assert len(records) == 2 and opened[0] is True
