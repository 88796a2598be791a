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
