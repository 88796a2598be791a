"""The scoring both evaluate engines run (evaluation/scoring.py)."""

from __future__ import annotations

import numpy as np

from truthguard.evaluation.config import EvaluateConfig
from truthguard.evaluation.scoring import ascore_rows, detector_fingerprint, result_row
from truthguard.testing import FakeDetector


def _row(i: int, answer: str = "Paris.", **fields: object) -> dict:
    return {
        "id": f"r{i}",
        "index": i,
        "question": "Capital of France?",
        "answer": answer,
        "contexts": ["Paris is the capital of France."],
        "gold": None,
        "fields": dict(fields),
    }


async def test_rows_are_scored_by_every_detector_left_to_do():
    detectors = {
        "good": FakeDetector(score=0.9, threshold=0.5),
        "bad": FakeDetector(score=0.1, threshold=0.5),
    }
    fingerprints = {"good": "fp-good", "bad": "fp-bad"}
    todo = {"r0": {"good", "bad"}, "r1": {"bad"}}
    out = await ascore_rows(detectors, fingerprints, [_row(0), _row(1)], todo)
    assert sorted((r["id"], r["detector"], r["label"]) for r in out) == [
        ("r0", "bad", "hallucinated"),
        ("r0", "good", "factual"),
        ("r1", "bad", "hallucinated"),
    ]
    assert {r["fingerprint"] for r in out if r["detector"] == "good"} == {"fp-good"}


async def test_a_detector_error_is_an_invalid_row_not_a_lost_one():
    broken = FakeDetector(error=ValueError("cannot check this"))
    out = await ascore_rows({"fake": broken}, {"fake": "fp"}, [_row(0)])
    assert len(out) == 1 and out[0]["label"] == "invalid"
    assert out[0]["invalid_reason"] == "ValueError: cannot check this"


def test_result_rows_hold_plain_json_values():
    result = FakeDetector(score=0.9).invoke({"question": "Q?", "answer": "A."})
    row = result_row("fake", "fp", _row(0, extra=np.float32(0.5)), result)
    assert row["fields"] == {"extra": 0.5} and isinstance(row["fields"]["extra"], float)
    assert row["score"] == 0.9 and row["usage"]["llm_calls"] == 0


def test_the_fingerprint_ignores_threshold_and_calibration():
    base = {"detectors": {"d": {"type": "fake", "threshold": 0.5}}}
    changed = {"detectors": {"d": {"type": "fake", "threshold": 0.9, "calibration": {"n": 3}}}}
    a = detector_fingerprint(EvaluateConfig.model_validate(base), "d")
    assert a == detector_fingerprint(EvaluateConfig.model_validate(changed), "d")
