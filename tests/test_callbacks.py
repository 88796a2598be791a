"""TruthGuardCallbackHandler: capture, background scoring, sinks, flush / close, summary."""

from __future__ import annotations

import asyncio
import gc
import http.server
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
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
    for bad in (0, -1.0, float("nan"), "2", True):
        with pytest.raises(InvalidInputError, match="timeout"):
            TruthGuardCallbackHandler(FakeDetector(), timeout=bad)  # type: ignore[arg-type]


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


# -- deadlines, close(), interpreter exit -------------------------------------------------------


class _Stubborn(FakeDetector):
    """Swallows its own cancellation and runs on, like a retry loop that retries on cancel."""

    seconds: float = 3.0

    async def _acheck(self, inp, session):
        loop = asyncio.get_running_loop()
        end = loop.time() + self.seconds
        while loop.time() < end:
            try:
                await asyncio.sleep(end - loop.time())
            except asyncio.CancelledError:
                continue
        return await super()._acheck(inp, session)


def test_handler_timeout_holds_even_if_the_check_ignores_cancellation():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(_Stubborn(seconds=3.0), sinks=records.append, timeout=0.2)
    RunnableLambda(lambda q: "x").invoke("Q?", {"callbacks": [handler]})
    assert handler.flush(timeout=2.0)  # recorded at the deadline, not when the check gives up
    assert records[0].status == "failed" and records[0].failure == "timeout"
    assert "0.2" in records[0].error
    assert handler.summary()["failures"] == {"timeout": 1}
    handler.close(timeout=5)


class _LoopBlocker(FakeDetector):
    """Blocks the scoring loop itself (a synchronous call inside an async check)."""

    async def _acheck(self, inp, session):
        time.sleep(1.5)
        return await super()._acheck(inp, session)


def test_close_returns_within_its_timeout_and_records_every_pending_capture():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(_LoopBlocker(), sinks=records.append, concurrency=1)
    for i in range(3):
        RunnableLambda(lambda q: "x").invoke(f"Q{i}?", {"callbacks": [handler]})
    started = time.monotonic()
    assert handler.close(timeout=0.2) is False
    assert time.monotonic() - started < 1.4  # the loop stays blocked for 1.5 s
    assert sorted(r.question for r in records) == ["Q0?", "Q1?", "Q2?"]
    assert {(r.status, r.failure) for r in records} == {("failed", "closed")}
    time.sleep(1.5)  # the blocked check ends and is dropped: still one record per capture
    assert len(records) == 3


_EXIT_SCRIPT = """
import asyncio, sys, weakref
from langchain_core.runnables import RunnableLambda
from truthguard.callbacks import TruthGuardCallbackHandler
from truthguard.testing import FakeDetector

class Threaded(FakeDetector):
    async def _acheck(self, inp, session):  # work in a thread, as the MiniLM checks do
        await asyncio.to_thread(lambda: None)
        return await super()._acheck(inp, session)

first = not weakref.finalize._registered_with_atexit
handler = TruthGuardCallbackHandler(Threaded(latency=0.05), sinks=[sys.argv[1]], concurrency=2)
for i in range(40):
    RunnableLambda(lambda q: "x").invoke(f"Q{i}?", {"callbacks": [handler]})
class Anything:
    pass

keep = Anything()
weakref.finalize(keep, print)  # finalize's exit hook now runs before any hook registered earlier
print("first finalize user:", first, "pending:", handler._core.scorer.pending, flush=True)
"""


def test_captures_pending_at_interpreter_exit_are_scored(tmp_path):
    path = tmp_path / "exit.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pending: 0" not in proc.stdout  # the captures really were pending at exit
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 40
    assert all(r["status"] == "scored" for r in rows), {r["error"] for r in rows}


# -- what gets captured and how it is recorded --------------------------------------------------


async def test_streamed_chains_are_recorded_like_invoked_ones():
    records: list[ScoreRecord] = []
    handler = AsyncTruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    chain = echo_chain()
    async for _ in chain.astream({"question": "astreamed?"}, {"callbacks": [handler]}):
        pass
    sync_handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    for _ in chain.stream({"question": "streamed?"}, {"callbacks": [sync_handler]}):
        pass
    assert await handler.aclose(timeout=10) and sync_handler.close(timeout=10)
    assert sorted((r.question, r.answer) for r in records) == [
        ("astreamed?", "answer: astreamed?"),
        ("streamed?", "answer: streamed?"),
    ]
    assert handler.summary()["skipped"] == sync_handler.summary()["skipped"] == 0


def test_detector_outage_is_failed_not_a_scored_invalid():
    from truthguard.llm import LLMSettings

    records: list[ScoreRecord] = []
    down = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    detector = FakeDetector(model=down, threshold=0.5, llm_settings=LLMSettings(max_retries=0))
    handler = TruthGuardCallbackHandler(detector, sinks=records.append)
    RunnableLambda(lambda q: "x").invoke("Q?", {"callbacks": [handler]})
    handler.close(timeout=10)
    r = records[0]
    assert (r.status, r.failure, r.label, r.passing) == ("failed", "outage", "invalid", None)
    assert "injected failure" in r.error and r.usage["failed_calls"] == 1
    s = handler.summary()
    assert (s["failed"], s["scored"], s["failures"]) == (1, 0, {"outage": 1})


def test_lone_surrogates_reach_every_sink(tmp_path):
    jsonl, db = tmp_path / "s.jsonl", tmp_path / "s.db"
    memory: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(), sinks=[JSONLSink(jsonl), SQLiteSink(db), memory.append]
    )
    chain = RunnableLambda(lambda inp: "Dubai \ud800 is in the UAE.")
    chain.invoke({"question": "Where is \udfffDubai?"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert handler.summary()["sink_errors"] == 0
    row = json.loads(jsonl.read_text())
    assert row["answer"] == "Dubai \ufffd is in the UAE." and row["status"] == "scored"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT question FROM truthguard_scores").fetchall() == [
            ("Where is \ufffdDubai?",)
        ]
    assert memory[0].question == "Where is \ufffdDubai?"


def test_records_made_after_close_are_kept_by_file_sinks(tmp_path):
    jsonl, db = tmp_path / "s.jsonl", tmp_path / "s.db"
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=[JSONLSink(jsonl), SQLiteSink(db)])
    chain = RunnableLambda(lambda q: "x")
    chain.invoke("before?", {"callbacks": [handler]})
    handler.close(timeout=10)
    chain.invoke("after?", {"callbacks": [handler]})
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [(r["question"], r["status"], r["failure"]) for r in rows] == [
        ("before?", "scored", None),
        ("after?", "failed", "closed"),
    ]
    with sqlite3.connect(db) as conn:
        got = conn.execute("SELECT question, status FROM truthguard_scores ORDER BY question")
        assert got.fetchall() == [("after?", "failed"), ("before?", "scored")]
    assert handler.summary()["sink_errors"] == 0


class _OneReply(http.server.BaseHTTPRequestHandler):
    """A minimal OpenAI-compatible chat completion endpoint."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ok"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_new_chat_openai_works_after_a_handler_is_closed():
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    from truthguard.llm import LLMSettings

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OneReply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        for _ in range(2):  # the client ChatOpenAI caches per base URL outlives the first handler
            records: list[ScoreRecord] = []
            model = ChatOpenAI(base_url=url, api_key="k", model="m", max_retries=0)
            detector = FakeDetector(model=model, llm_settings=LLMSettings(max_retries=0))
            handler = TruthGuardCallbackHandler(detector, sinks=records.append)
            RunnableLambda(lambda q: "x").invoke("Q?", {"callbacks": [handler]})
            assert handler.close(timeout=10)
            assert (records[0].status, records[0].label) == ("scored", "factual"), records[0]
    finally:
        server.shutdown()
        server.server_close()


# -- durability and arbitrary text ---------------------------------------------------------------

_KILL_SCRIPT = """
import sys
from langchain_core.runnables import RunnableLambda
from truthguard.callbacks import JSONLSink, SQLiteSink, TruthGuardCallbackHandler
from truthguard.testing import FakeDetector

def ack(record):  # called after the file sinks returned: the record is acknowledged
    print(record.run_id, flush=True)

sinks = [JSONLSink(sys.argv[1]), SQLiteSink(sys.argv[2]), ack]
handler = TruthGuardCallbackHandler(FakeDetector(latency=0.001), sinks=sinks, when_full="block")
chain = RunnableLambda(lambda q: "an answer")
i = 0
while True:
    chain.invoke(f"question {i}?", {"callbacks": [handler]})
    i += 1
"""


def test_acknowledged_records_survive_sigkill(tmp_path):
    jsonl, db = tmp_path / "k.jsonl", tmp_path / "k.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(jsonl), str(db)],
        stdout=subprocess.PIPE,
        text=True,
    )
    acked = []
    try:
        for line in proc.stdout:
            acked.append(line.strip())
            if len(acked) >= 100:
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    assert len(acked) >= 100
    lines = jsonl.read_text().splitlines()
    on_disk = set()
    for line in lines:
        try:
            on_disk.add(json.loads(line)["run_id"])
        except json.JSONDecodeError:
            assert line is lines[-1]  # only a line being written when killed may be torn
    assert set(acked) <= on_disk
    with sqlite3.connect(db) as conn:
        in_db = {r for (r,) in conn.execute("SELECT run_id FROM truthguard_scores")}
    assert set(acked) <= in_db


# Lone surrogates and control characters on purpose, mixed with any other character
# (st.characters() alone never yields a surrogate).
_ANY_CHAR = st.one_of(
    st.integers(0xD800, 0xDFFF).map(chr), st.characters(categories=["Cc"]), st.characters()
)
_TEXT = st.one_of(
    st.text(_ANY_CHAR, max_size=40),
    st.builds(lambda s: s * (1_000_000 // len(s) + 1), st.text(_ANY_CHAR, min_size=1, max_size=2)),
)


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(question=_TEXT, answer=_TEXT)
def test_any_text_gets_exactly_one_record_in_every_sink(tmp_path_factory, question, answer):
    folder = tmp_path_factory.mktemp("sinks")
    memory: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(threshold=0.5),
        sinks=[JSONLSink(folder / "s.jsonl"), SQLiteSink(folder / "s.db"), memory.append],
    )
    RunnableLambda(lambda inp: answer).invoke({"question": question}, {"callbacks": [handler]})
    assert handler.close(timeout=30)
    s = handler.summary()
    assert s["sink_errors"] == 0
    assert len(memory) + s["skipped"] == 1
    lines = (folder / "s.jsonl").read_text().splitlines()
    with sqlite3.connect(folder / "s.db") as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM truthguard_scores").fetchone()
    assert len(lines) == rows == len(memory)
    for r in memory:  # an error never counts as a pass
        assert r.status == "scored" or r.passing is None


def test_block_mode_never_waits_on_the_scoring_loop_itself():
    from uuid import uuid4

    from truthguard._sync import run_sync
    from truthguard.callbacks._tracker import Capture

    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(
        FakeDetector(latency=0.5), sinks=records.append, max_queue=1, when_full="block"
    )
    scorer = handler._core.scorer

    def capture(q: str) -> Capture:
        return Capture(uuid4(), None, q, "a", [], [], {})

    async def submit_on_the_loop() -> None:  # a hook called by code running on that loop
        scorer.submit(capture("on the loop?"))

    scorer.submit(capture("first?"))  # fills the queue for 0.5 s
    worker = threading.Thread(target=run_sync, args=(submit_on_the_loop(),))
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive()  # waiting for room there would wait for the loop itself
    assert handler.close(timeout=10)
    assert sorted((r.question, r.failure) for r in records) == [
        ("first?", None),
        ("on the loop?", "queue_full"),
    ]


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
