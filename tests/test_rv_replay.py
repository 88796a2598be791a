"""Replay of recorded stage outputs through the real detector."""

from __future__ import annotations

import asyncio

import pytest

from truthguard.datasets import RVRecord, load_rv_records
from truthguard.errors import InvalidInputError, MissingRecordingError
from truthguard.llm import count_tokens
from truthguard.result import Label
from truthguard.rv import ReverseValidation, replay_model

PASSAGE = "Hoy is the second largest island of Orkney, known for the Old Man of Hoy."


def record(variant: str, entity: str, stage1: str, stage2: str) -> RVRecord:
    return RVRecord(
        variant=variant,
        entity=entity,
        passage=PASSAGE,
        stage1=stage1,
        stage2=stage2,
        recorded_label="factual",
    )


QG = [record("qg", "Hoy", "Which Orkney island is the second largest?", "Hoy.")]
EM = [record("em", "Hoy", "1. Second largest island of Orkney\n2. Has a sea stack", "Rousay, 70%.")]


def test_replay_serves_recordings_by_entity_and_stage_whatever_the_prompt():
    model = replay_model("qg", records=QG)
    r = ReverseValidation(model=model, variant="qg").invoke({"answer": PASSAGE, "entity": "Hoy"})
    assert r.label is Label.FACTUAL
    assert r.details["query"] == "Which Orkney island is the second largest?"
    assert r.details["answer_stage2"] == "Hoy."
    assert model.call_count == 2


def test_replay_tokens_are_counted_with_tiktoken_on_our_prompts_and_the_recordings():
    model = replay_model("em", records=EM)
    r = ReverseValidation(model=model, variant="em").invoke({"answer": PASSAGE, "entity": "Hoy"})
    assert r.label is Label.HALLUCINATED and r.details["percentage"] == 70.0
    assert r.usage.estimated_tokens
    expected = (
        sum(count_tokens(p) for p in model.calls)
        + count_tokens(EM[0].stage1)
        + count_tokens(EM[0].stage2)
    )
    assert r.usage.total_tokens == expected


def test_missing_recording_propagates_with_a_clear_message():
    rv = ReverseValidation(model=replay_model("qg", records=QG), variant="qg")
    with pytest.raises(MissingRecordingError, match=r"'Rousay'.*not among the recorded passages"):
        rv.invoke({"answer": "Rousay is an island.", "entity": "Rousay"})
    with pytest.raises(MissingRecordingError):
        asyncio.run(
            rv.abatch([{"answer": PASSAGE, "entity": "Hoy"}, {"answer": "X is.", "entity": "X"}])
        )


def test_replay_has_no_entity_extraction():
    rv = ReverseValidation(model=replay_model("qg", records=QG), variant="qg")
    with pytest.raises(MissingRecordingError, match="pass 'entity'"):
        rv.invoke({"answer": PASSAGE})


def test_replay_of_the_other_variant_says_so():
    rv = ReverseValidation(model=replay_model("em", records=EM), variant="qg")
    with pytest.raises(MissingRecordingError, match="no 'qg' recording"):
        rv.invoke({"answer": PASSAGE, "entity": "Hoy"})


def test_rebuild_after_a_leak_is_served_the_same_recording():
    leaky = [record("qg", "Hoy", "Is Hoy the second largest island of Orkney?", "Hoy.")]
    model = replay_model("qg", records=leaky)
    r = ReverseValidation(model=model, variant="qg").invoke({"answer": PASSAGE, "entity": "Hoy"})
    assert r.details["leak"] == {
        "detected": True,
        "rebuilt": True,
        "first_query": "Is Hoy the second largest island of Orkney?",
        "still_leaking": True,
    }
    assert model.call_count == 3 and "Warning" in r.explanation


def test_replay_rejects_records_of_the_wrong_variant():
    with pytest.raises(InvalidInputError) as e:
        replay_model("qg", records=EM)
    assert e.value.field == "records"
    with pytest.raises(InvalidInputError):
        replay_model("nli", records=[])  # type: ignore[arg-type]


def test_replay_of_the_phd_recordings(data_dir):
    records = {r.entity: r for r in load_rv_records("qg", data_dir)}
    rec = records["Ailanthus"]
    model = replay_model("qg", data_dir)
    r = ReverseValidation(model=model, variant="qg").invoke(
        {"answer": rec.passage, "entity": rec.entity}
    )
    assert r.details["query"] == rec.stage1.strip() and r.details["answer_stage2"] == rec.stage2
    assert r.label is Label.FACTUAL
