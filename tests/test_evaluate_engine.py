"""``evaluate``: rows in, result rows out, resumable, with a summary."""

from __future__ import annotations

import json

import pytest

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.evaluation import evaluate, read_results
from truthguard.evaluation.engine import format_summary

# FakeDetector scores 0.0 for answers containing "wrong": a ground truth the tests can check.
CONFIG = {
    "detectors": {
        "fake": {
            "type": "fake",
            "options": {"score": 1.0},
            "threshold": 0.5,
        }
    },
    "batch_size": 2,
}


def _rows(n):
    return [
        {
            "question": f"Question {i}?",
            "answer": f"answer {i}" + (" wrong" if i % 2 else ""),
            "label": "hallucinated" if i % 2 else "factual",
        }
        for i in range(n)
    ]


def _data(tmp_path, rows):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_every_row_gets_one_result_with_verdict_and_usage(tmp_path):
    data = _data(tmp_path, _rows(5))
    summary = evaluate(data, CONFIG, tmp_path / "out", progress=False)
    results = read_results(tmp_path / "out")
    assert len(results) == 5 and {r["detector"] for r in results} == {"fake"}
    r = results[0]
    assert r["score"] == 1.0 and r["passing"] is True and r["label"] == "factual"
    assert r["gold"] == "factual" and "usage" in r and r["explanation"]
    e = summary["detectors"]["fake"]
    assert e["n"] == 5 and e["pass_rate"] == 1.0 and e["labelled"] == 5
    assert e["recall"] == 0.0  # it never flags, and two answers are hallucinated
    assert (tmp_path / "out" / "results.parquet").exists()
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["run"]["rows"] == 5
    assert "fake" in format_summary(summary)


def test_rerun_skips_rows_already_scored(tmp_path):
    data = _data(tmp_path, _rows(6))
    first = evaluate(data, CONFIG, tmp_path / "out", limit=4, progress=False)
    assert first["run"]["scored_now"] == 4
    second = evaluate(data, CONFIG, tmp_path / "out", progress=False)
    assert second["run"]["scored_now"] == 2 and second["run"]["skipped"] == 4
    assert len(read_results(tmp_path / "out")) == 6
    third = evaluate(data, CONFIG, tmp_path / "out", progress=False)
    assert third["run"]["scored_now"] == 0
    again = evaluate(data, CONFIG, tmp_path / "out", restart=True, progress=False)
    assert again["run"]["scored_now"] == 6 and len(read_results(tmp_path / "out")) == 6


def test_changed_options_refuse_to_mix_results(tmp_path):
    data = _data(tmp_path, _rows(2))
    evaluate(data, CONFIG, tmp_path / "out", progress=False)
    other = json.loads(json.dumps(CONFIG))
    other["detectors"]["fake"]["options"]["score"] = 0.2
    with pytest.raises(ConfigurationError, match="restart"):
        evaluate(data, other, tmp_path / "out", progress=False)
    # a new threshold alone (what calibrate writes) keeps the earlier scores
    other = json.loads(json.dumps(CONFIG))
    other["detectors"]["fake"]["threshold"] = 0.9
    assert evaluate(data, other, tmp_path / "out", progress=False)["run"]["scored_now"] == 0


def test_a_row_the_detector_refuses_becomes_an_invalid_result(tmp_path):
    rows = [
        {"question": "Tell me about Hamlet.", "answer": "A play.", "entity": "Hamlet"},
        {"question": "Tell me about X.", "answer": "   "},  # RV heuristic finds no entity
    ]
    config = {
        "detectors": {
            "rv": {
                "type": "reverse_validation",
                "model": {
                    "provider": "scripted",
                    "kwargs": {
                        "script": {"Write one question": "Which play has a Danish prince?"},
                        "default": "Hamlet",
                    },
                },
                "options": {"variant": "qg", "entity_extraction": "heuristic"},
            }
        }
    }
    evaluate(_data(tmp_path, rows), config, tmp_path / "out", progress=False)
    by = {r["index"]: r for r in read_results(tmp_path / "out")}
    assert by[0]["label"] == "factual" and by[0]["fields"] == {"entity": "Hamlet"}
    assert by[1]["label"] == "invalid" and by[1]["passing"] is None
    assert "InvalidInputError" in by[1]["invalid_reason"]


def test_bad_arguments_name_the_field(tmp_path):
    data = _data(tmp_path, _rows(1))
    with pytest.raises(InvalidInputError, match="engine"):
        evaluate(data, CONFIG, tmp_path / "out", engine="spark")
    with pytest.raises(InvalidInputError, match="limit"):
        evaluate(data, CONFIG, tmp_path / "out", limit=0)


def test_rv_replay_on_phd_rows_matches_the_benchmark(tmp_path, data_dir):
    from truthguard.evaluation import convert_dataset

    convert_dataset("phd", tmp_path / "phd.jsonl", data_dir=data_dir)
    config = {
        "detectors": {
            "rv": {
                "type": "reverse_validation",
                "model": {
                    "provider": "rv-replay",
                    "kwargs": {"variant": "em", "data_dir": str(data_dir)},
                },
                # the recordings as the paper ran them: no rebuilt query, leaks counted
                "options": {"variant": "em", "rebuild_leaks": False, "trust_leaking_queries": True},
            }
        },
        "concurrency": 8,
    }
    summary = evaluate(tmp_path / "phd.jsonl", config, tmp_path / "out", progress=False)
    e = summary["detectors"]["rv"]
    # the published matching rules on the development split: F1 60.0 / P 50.0 / R 75.0
    assert (e["f1"], e["precision"], e["recall"]) == (0.6, 0.5, 0.75)
    assert e["invalid"] == 0 and e["llm_calls"] == 2 * e["n"]


_SLOW_RUN = """
import json, sys
from truthguard.evaluation import evaluate

config = json.loads(sys.argv[3])
evaluate(sys.argv[1], config, sys.argv[2], progress=False)
"""


def test_a_second_run_on_the_same_out_is_refused_or_waits_its_turn(tmp_path):
    import os
    import subprocess
    import sys
    import time

    data = _data(tmp_path, _rows(6))
    out = tmp_path / "out"
    slow = {**CONFIG, "detectors": {"fake": {"type": "fake", "options": {"latency": 0.4}}}}
    first = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUN, str(data), str(out), json.dumps(slow)],
        stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        lock = out / ".lock"
        for _ in range(300):  # until the first run holds the lock (its pid is written in it)
            if lock.exists() and lock.read_text() == str(first.pid):
                break
            time.sleep(0.05)
        with pytest.raises(InvalidInputError, match="in use by another evaluate run") as info:
            evaluate(data, slow, out, progress=False)
        assert info.value.field == "out" and f"process {first.pid}" in str(info.value)
        summary = evaluate(data, slow, out, progress=False, wait=True)  # after the first
        assert first.wait(timeout=30) == 0, first.stderr.read()[-3000:]
    finally:
        first.kill()
        first.wait()
    assert summary["run"]["scored_now"] == 0  # the first run scored every row
    assert summary["detectors"]["fake"]["n"] == 6
    assert len((out / "results.jsonl").read_text().splitlines()) == 6


def test_a_summary_counts_each_row_once_however_often_it_was_written(tmp_path):
    data = _data(tmp_path, _rows(4))
    out = tmp_path / "out"
    evaluate(data, CONFIG, out, progress=False)
    results = out / "results.jsonl"
    results.write_text(results.read_text() * 2)  # two runs appended the same rows
    assert len(read_results(out)) == 4
    summary = evaluate(data, CONFIG, out, progress=False)
    assert summary["detectors"]["fake"]["n"] == 4 and summary["run"]["scored_now"] == 0
