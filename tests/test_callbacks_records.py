"""Score records and sinks (callbacks/records.py): JSONL, SQLite, logging, durability, any text."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.runnables import RunnableLambda

from doubles import moon_detector
from truthguard.callbacks import (
    JSONLSink,
    LoggingSink,
    ScoreRecord,
    SQLiteSink,
    TruthGuardCallbackHandler,
)
from truthguard.errors import InvalidInputError
from truthguard.testing import FakeDetector


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


_BIG_WRITER = """
import sys
from truthguard.callbacks import JSONLSink, ScoreRecord
sink = JSONLSink(sys.argv[1])
print("open", flush=True)
big = "x" * 1_500_000
for i in range(int(sys.argv[2])):
    sink.write(ScoreRecord(
        run_id=f"{sys.argv[3]}-{i}", status="scored", question="q", answer=big,
        detector="fake", captured_at=0.0,
    ))
print("done", flush=True)
"""


def test_a_record_torn_by_a_kill_is_cut_when_the_sink_reopens(tmp_path):
    import time

    path = tmp_path / "big.jsonl"
    for k in range(3):  # killed while writing 1.5 MB records, three times
        proc = subprocess.Popen(
            [sys.executable, "-c", _BIG_WRITER, str(path), "1000", f"kill{k}"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout.readline().strip() == "open"
        time.sleep(0.3 + 0.1 * k)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    # A file left torn for certain, as a kill inside write() leaves it.
    with path.open("ab") as f:
        f.write(b'{"run_id": "torn", "status": "sco')
    done = subprocess.run(
        [sys.executable, "-c", _BIG_WRITER, str(path), "2", "last"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    ids = [json.loads(line)["run_id"] for line in path.read_text().splitlines()]  # all parse
    assert ids[-2:] == ["last-0", "last-1"] and "torn" not in ids
    assert any(i.startswith("kill") for i in ids)


_TERM_SCRIPT = """
import sys
from langchain_core.runnables import RunnableLambda
from truthguard.callbacks import TruthGuardCallbackHandler
from truthguard.testing import FakeDetector

handler = TruthGuardCallbackHandler(FakeDetector(latency=0.3), sinks=[sys.argv[1]], concurrency=1)
chain = RunnableLambda(lambda q: "an answer")
for i in range(5):
    chain.invoke(f"question {i}?", {"callbacks": [handler]})
print("queued", flush=True)
import time
time.sleep(60)
"""


def test_sigterm_scores_the_queued_captures_before_the_process_ends(tmp_path):
    path = tmp_path / "term.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", _TERM_SCRIPT, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "queued"  # five captures, ~1.5 s of scoring
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["status"] for r in records] == ["scored"] * 5


# -- every attempt of a guarded run, through a real LCEL chain ---------------------------------


def test_a_guarded_run_records_every_attempt_with_claims_spans_and_evidence(
    chroma_server, tmp_path
):
    from guarded_chain import PASSAGES, RIGHT, WRONG, guarded_chain, mars_reply, run_logged
    from truthguard.guard import Fallback, Regenerate
    from truthguard.testing import OpenAIServer

    log = tmp_path / "scores.jsonl"
    with OpenAIServer(reply=mars_reply) as server:
        guard = guarded_chain(
            server, chroma_server, policies=[Regenerate(), Fallback(answer="I don't know.")]
        )
        result = run_logged(guard, log)
    assert result.status == "passed" and result.answer == RIGHT
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["metadata"]["truthguard_source"] == "guard" and record["answer"] == RIGHT
    first, second = record["attempts"]
    # the model's own, hallucinated answer is kept, with what the guard did after it
    assert (first["number"], first["policy"], first["followed_by"]) == (1, None, "regenerate")
    assert first["answer"] == WRONG and first["passing"] is False
    assert (second["number"], second["policy"], second["followed_by"]) == (2, "regenerate", None)
    assert second["answer"] == RIGHT and second["passing"] is True and second["claims"] == []
    # the failing claim: its span in the answer and the evidence sentence it was held against
    (claim,) = first["claims"]
    assert WRONG[claim["start"] : claim["end"]] == claim["claim"]
    assert claim["evidence"] == "Asaph Hall discovered both in 1877."
    assert claim["evidence"] in PASSAGES[0] and claim["source"] == "reference"
    (issue,) = claim["issues"]
    assert WRONG[issue["start"] : issue["end"]] == "1610" and issue["relation"] == "conflict"
    said = claim["evidence"][issue["evidence_start"] : issue["evidence_end"]]
    assert said == issue["evidence"] == "1877"  # what the evidence says in its place
    assert "1610" in first["reason"] and first["reason"].startswith("rejected")
    assert record["reason"] and second["reason"]
    # the line loads back as a record, claims and all
    assert ScoreRecord.model_validate(record).attempts[0].claims[0].issues


def test_an_empty_chain_answer_falls_back_with_a_reason_that_says_so(chroma_server, tmp_path):
    from guarded_chain import guarded_chain, run_logged
    from truthguard.guard import Fallback
    from truthguard.testing import OpenAIServer

    log = tmp_path / "scores.jsonl"
    with OpenAIServer(reply="") as server:
        guard = guarded_chain(server, chroma_server, policies=[Fallback(answer="I don't know.")])
        result = run_logged(guard, log)
    assert result.status == "fallback" and result.answer == "I don't know."
    assert result.verdict is not None and not result.verdict.passing
    assert "empty answer" in result.verdict.reason and result.reason == result.verdict.reason
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["status"] == "failed" and "empty answer" in record["reason"]
    first, released = record["attempts"]
    assert first["passing"] is None and first["followed_by"] == "fallback"
    assert "empty answer" in first["reason"]
    assert released["policy"] == "fallback" and released["answer"] == "I don't know."
    assert released["followed_by"] is None


def test_a_record_never_has_an_empty_reason():
    base = {"run_id": "r", "question": "q", "answer": "a", "detector": "d", "captured_at": 0.0}
    assert ScoreRecord(status="failed", error="queue full", **base).reason == "queue full"
    assert ScoreRecord(status="scored", label="factual", **base).reason == "scored: factual"
    assert ScoreRecord(status="scored", explanation="fine", **base).reason == "fine"
