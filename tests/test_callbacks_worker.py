"""Scorer (callbacks/_worker.py): the background queue, deadlines, failures, close() and exit."""

from __future__ import annotations

import asyncio
import gc
import http.server
import json
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda

from truthguard.callbacks import (
    AsyncTruthGuardCallbackHandler,
    ScoreRecord,
    TruthGuardCallbackHandler,
)
from truthguard.testing import FakeDetector, ScriptedChatModel


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


@pytest.mark.parametrize("reply", ["", "maybe?"])
def test_an_empty_or_unparseable_checker_reply_is_unavailable_as_in_the_guard(reply):
    from truthguard.detector import BaseDetector
    from truthguard.errors import InvalidLLMOutput
    from truthguard.guard import HallucinationGuard
    from truthguard.result import DetectionResult

    class YesNo(BaseDetector):
        detector_name = "yesno"
        model: Any = None

        async def _acheck(self, inp: Any, session: Any) -> DetectionResult:
            text = (await session.acall(self.model, inp.answer, stage="yesno")).strip()
            if text not in ("yes", "no"):
                raise InvalidLLMOutput("expected yes or no", raw=text, stage="yesno")
            return DetectionResult(detector="yesno", score=float(text == "yes"))

    records: list[ScoreRecord] = []
    checker = YesNo(model=ScriptedChatModel(script=lambda p: reply))
    handler = TruthGuardCallbackHandler(checker, sinks=records.append)
    RunnableLambda(lambda q: "The sun shines.").invoke("Q?", {"callbacks": [handler]})
    handler.close(timeout=10)
    r = records[0]
    assert (r.status, r.failure, r.label) == ("failed", "outage", "invalid")
    assert r.error.startswith("checker unavailable") and r.raw_output == reply
    guard = HallucinationGuard(chain=RunnableLambda(lambda q: "The sun shines."), detectors=checker)
    out = guard.invoke("Q?")
    assert "unavailable" in out.verdict.reason


# -- a SIGTERM during close(): every capture still gets its record ----------------------------

_CLOSE_SCRIPT = """
import sys, threading
from langchain_core.output_parsers import StrOutputParser
from langchain_openai import ChatOpenAI
from truthguard.callbacks import TruthGuardCallbackHandler
from truthguard.testing import FakeDetector

url, path = sys.argv[1], sys.argv[2]
model = ChatOpenAI(base_url=url, api_key="test", model="gpt-test", max_retries=0, timeout=60)
checker = FakeDetector(score=1.0, model=model)  # its request hangs: nothing gets scored
handler = TruthGuardCallbackHandler(checker, sinks=[path], concurrency=4, timeout=None)
chain = model | StrOutputParser()
for i in range(50):
    chain.invoke(f"Question {i}?", {"callbacks": [handler]})
threading.Timer(0.3, print, ["closing"], {"flush": True}).start()  # once close() is waiting
handler.close()
"""


def test_sigterm_during_close_leaves_one_record_per_capture(tmp_path):
    import os
    import signal

    from truthguard.testing import Fault, OpenAIServer

    pytest.importorskip("langchain_openai")
    path = tmp_path / "records.jsonl"
    with OpenAIServer(
        reply="The sun shines.", faults=[Fault("stall", match="sun shines", stall_seconds=60)]
    ) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CLOSE_SCRIPT, server.base_url, str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert proc.stdout.readline().strip() == "closing", proc.stderr.read()[-3000:]
            os.kill(proc.pid, signal.SIGTERM)
            assert proc.wait(timeout=20) == 128 + signal.SIGTERM
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 50 and len({r["run_id"] for r in records}) == 50
    assert {r["status"] for r in records} == {"failed"}
    assert {r["failure"] for r in records} == {"closed"}


# -- the guards' in-line checks first: background scoring starts in a lull, or is shed ----------


async def test_background_scoring_waits_for_the_guards_in_line_checks():
    from truthguard.guard import HallucinationGuard

    spans: dict[str, list[float]] = {"guard": [], "handler": []}

    def timed(who: str, seconds: float):
        def score(inp: Any) -> float:
            spans[who].append(time.monotonic())
            time.sleep(seconds)  # a check's own work (on its loop's thread)
            spans[who].append(time.monotonic())
            return 1.0

        return score

    records: list[ScoreRecord] = []
    handler = AsyncTruthGuardCallbackHandler(
        FakeDetector(score=timed("handler", 0.05)), sinks=records.append, timeout=10
    )
    guard = HallucinationGuard(
        chain=RunnableLambda(lambda q: "slow answer"),
        detectors=FakeDetector(score=timed("guard", 0.4), latency=0.05),
        check_timeout=5,
    )
    answered = RunnableLambda(lambda q: "an answer")
    check = asyncio.ensure_future(guard.ainvoke("Q?"))
    await asyncio.sleep(0.1)  # the guard's check is running
    await answered.ainvoke("Q2?", {"callbacks": [handler]})  # captured for background scoring
    assert (await check).status == "passed"
    assert await asyncio.to_thread(handler.flush, 10)
    assert [r.status for r in records] == ["scored"]
    assert spans["handler"][0] >= spans["guard"][1]  # started once the in-line check ended
    handler.close()


async def test_background_scoring_with_no_lull_is_shed_with_its_reason():
    from truthguard.guard import HallucinationGuard

    records: list[ScoreRecord] = []
    spare = FakeDetector(score=1.0)
    handler = AsyncTruthGuardCallbackHandler(spare, sinks=records.append, timeout=0.2)
    guard = HallucinationGuard(
        chain=RunnableLambda(lambda q: "an answer"),
        detectors=FakeDetector(score=1.0, latency=1.0),
        check_timeout=5,
    )
    check = asyncio.ensure_future(guard.ainvoke("Q?"))
    await asyncio.sleep(0.1)
    await RunnableLambda(lambda q: "x").ainvoke("Q2?", {"callbacks": [handler]})
    assert await asyncio.to_thread(handler.flush, 10)
    (record,) = records
    assert record.status == "failed" and record.failure == "timeout"
    assert "deferred behind the guards' in-line checks" in record.error
    assert spare.check_count == 0
    await check
    handler.close()
