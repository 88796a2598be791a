"""Review fixes: RefChecker parsers on messy LLM output (echoed headers, negated labels)."""

from __future__ import annotations

import pytest

from truthguard.errors import InvalidLLMOutput
from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker
from truthguard.refchecker._parse import (
    parse_joint_labels,
    parse_label,
    parse_subsentence_claims,
    parse_triplets,
)
from truthguard.result import Label
from truthguard.testing import ScriptedChatModel

REFS = ["The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."]
Q = "Tell me about the Eiffel Tower."
A = "The Eiffel Tower is in Paris and was finished in 1925."


@pytest.mark.parametrize(
    "text", ["Triplets:\nNONE", "Claims:\n- None.", "```\nNONE\n```", "Output:\n\nNo facts\n"]
)
def test_none_under_an_echoed_header_means_no_claims(text):
    assert parse_triplets(text).claims == []
    assert parse_subsentence_claims(text).claims == []  # never a claim reading "NONE"


def test_echoed_header_with_none_abstains_end_to_end(embedder):
    extractor = ScriptedChatModel(model_name="ex", default="Claims:\nNONE")
    checker = ScriptedChatModel(model_name="ck", default="Entailment")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor, mode="subsentence"),
        checker=LLMChecker(model=checker),
    )
    r = rc.invoke({"question": Q, "answer": "Hmm.", "references": REFS})
    assert r.label == Label.UNVERIFIABLE and r.details["reason"] == "abstain"
    assert checker.call_count == 0


@pytest.mark.parametrize(
    "text",
    [
        "The passages do not entail the claim.",
        "Not entailed.",
        "The claim is neither entailed nor contradicted.",
        "The reference doesn\u2019t entail this claim.",
    ],
)
def test_negated_label_is_never_read_as_that_label(text):
    with pytest.raises(InvalidLLMOutput) as e:
        parse_label(text)
    assert e.value.raw == text


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("There is no contradiction; the passage supports it: Entailment", "Entailment"),
        ('This is not a "Contradiction" but Neutral', "Neutral"),
        ("It is not clear at first, but entailment it is", "Entailment"),
    ],
)
def test_negated_mention_beside_a_label(text, label):
    assert parse_label(text) == label


def test_joint_line_with_a_negated_label_is_misaligned():
    assert parse_joint_labels("1. Not entailed\n2. Entailment", 2) is None
    assert parse_joint_labels('["not entailment", "Entailment"]', 2) is None
    assert parse_joint_labels("1. Entailment (no contradiction)\n2. Neutral", 2) == [
        "Entailment",
        "Neutral",
    ]


def test_negated_reply_gives_invalid_not_entailment_end_to_end(embedder):
    extractor = ScriptedChatModel(
        model_name="ex", default='("Eiffel Tower", "finished in", "1925")'
    )
    checker = ScriptedChatModel(model_name="ck", default="The passages do not entail the claim.")
    rc = RefChecker(extractor=LLMExtractor(model=extractor), checker=LLMChecker(model=checker))
    r = rc.invoke({"question": Q, "answer": A, "references": REFS})
    assert r.label == Label.INVALID and r.score is None
    assert r.raw_output == "The passages do not entail the claim."


def test_stored_reply_the_parser_refuses_is_asked_again(store):
    import json

    extractor = ScriptedChatModel(
        model_name="ex", default='("Eiffel Tower", "finished in", "1925")'
    )
    checker = ScriptedChatModel(model_name="ck", default="Contradiction")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor),
        checker=LLMChecker(model=checker),
        store=store,
    )
    rc.invoke({"question": Q, "answer": A, "references": REFS})
    # A reply stored before negated labels were refused (then read as Entailment).
    stored = store._artifacts.get(where={"kind": "refchecker.check"}, include=["embeddings"])
    store._artifacts.upsert(
        ids=stored["ids"],
        documents=[json.dumps({"value": "Not entailed."})] * len(stored["ids"]),
        embeddings=stored["embeddings"],
    )
    r = rc.invoke({"question": Q, "answer": A, "references": REFS})
    assert not r.is_invalid and r.details["claims"][0]["label"] == "Contradiction"
    assert checker.call_count == 2
    again = rc.invoke({"question": Q, "answer": A, "references": REFS})
    assert again.usage.llm_calls == 0 and checker.call_count == 2
