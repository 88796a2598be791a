from __future__ import annotations

import pytest
from pydantic import ValidationError

from truthguard import DetectionResult, Label, Usage


def test_usage_adds_up():
    a = Usage(llm_calls=2, prompt_tokens=10, completion_tokens=5, llm_seconds=1.0)
    b = Usage(llm_calls=1, cached_calls=3, prompt_tokens=1, estimated_tokens=True)
    total = a + b
    assert (total.llm_calls, total.cached_calls, total.prompt_tokens) == (3, 3, 11)
    assert total.total_tokens == 16
    assert total.estimated_tokens
    assert Usage.total([a, b, a]).llm_calls == 5


def test_to_langchain_dict():
    r = DetectionResult(detector="x", score=0.25, label=Label.HALLUCINATED, explanation="why")
    assert r.to_langchain() == {"score": 0.25, "value": "hallucinated", "reasoning": "why"}


def test_to_llama_index_maps_every_field():
    r = DetectionResult(
        detector="x",
        score=0.9,
        passing=True,
        label=Label.FACTUAL,
        explanation="fine",
        question="q",
        answer="a",
        contexts=["c"],
    )
    ev = r.to_llama_index()
    assert (ev.query, ev.response, ev.contexts) == ("q", "a", ["c"])
    assert (ev.passing, ev.score, ev.feedback) == (True, 0.9, "fine")
    assert ev.invalid_result is False


def test_a_runaway_reply_is_kept_only_up_to_the_limit():
    from truthguard.result import RAW_OUTPUT_LIMIT

    big = "na" * 1_000_000  # a 2 MB reply
    r = DetectionResult.invalid("x", "could not parse", raw_output=big)
    assert r.raw_output == big[:RAW_OUTPUT_LIMIT] and r.raw_output_chars == len(big)
    small = DetectionResult.invalid("x", "could not parse", raw_output="garbage!")
    assert small.raw_output_chars is None


def test_invalid_result_keeps_raw_text():
    r = DetectionResult.invalid("x", "could not parse", raw_output="garbage!")
    assert r.label == Label.INVALID and r.is_invalid
    assert r.raw_output == "garbage!"
    assert r.score is None
    ev = r.to_llama_index()
    assert ev.invalid_result and ev.invalid_reason == "could not parse"


def test_unknown_field_rejected():
    with pytest.raises(ValidationError):
        DetectionResult(detector="x", label="factual", scor=1.0)
    with pytest.raises(ValidationError):
        DetectionResult(detector="x", label="maybe")


def test_to_langsmith_feedback():
    r = DetectionResult(detector="refchecker", score=0.5, label=Label.FACTUAL, explanation="ok")
    assert r.to_langsmith("grounded") == {
        "key": "grounded",
        "score": 0.5,
        "value": "factual",
        "comment": "ok",
    }
    assert r.to_langsmith()["key"] == "refchecker"
    bad = DetectionResult.invalid("fewl", "model error 500")
    out = bad.to_langsmith("fewl")
    assert out["score"] is None and "model error 500" in out["comment"]


def test_to_langsmith_refuses_a_blank_key():
    from truthguard.errors import InvalidInputError

    r = DetectionResult(detector="x", score=1.0, label=Label.FACTUAL)
    with pytest.raises(InvalidInputError) as info:
        r.to_langsmith("  ")
    assert info.value.field == "key"
