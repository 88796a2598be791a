"""RefChecker output parsers: messy extractor and checker outputs."""

from __future__ import annotations

import pytest

from truthguard.errors import InvalidLLMOutput
from truthguard.refchecker._parse import (
    parse_joint_labels,
    parse_label,
    parse_subsentence_claims,
    parse_triplets,
)


def test_quoted_tuples_with_headers_bullets_and_duplicates():
    text = """### KG:
Here are the triplets:
- ("Optimus", "is", "robotic humanoid")
* ('Optimus', 'developed by', 'Tesla, Inc.')
("Optimus", "is", "robotic humanoid")
("Event", "held on", "August 19, 2021") ("Event", "organised by", "Tesla")
"""
    parsed = parse_triplets(text)
    assert parsed.claims == [
        ("Optimus", "is", "robotic humanoid"),
        ("Optimus", "developed by", "Tesla, Inc."),
        ("Event", "held on", "August 19, 2021"),
        ("Event", "organised by", "Tesla"),
    ]
    assert parsed.unparsed == ["Here are the triplets:"]


def test_duplicates_are_case_insensitive():
    parsed = parse_triplets('("A", "is", "B")\n("a", "IS", "b")')
    assert parsed.claims == [("A", "is", "B")]


def test_json_list_of_lists_and_objects_in_a_fence():
    text = (
        '```json\n[["Paris", "capital of", "France"], {"subject": "Seine", "predicate": '
        '"flows through", "object": "Paris"}, ["bad"]]\n```'
    )
    parsed = parse_triplets(text)
    assert parsed.claims == [("Paris", "capital of", "France"), ("Seine", "flows through", "Paris")]
    assert parsed.unparsed == ['["bad"]']


def test_unquoted_and_piped_bullets():
    parsed = parse_triplets("1. (Water, is a, liquid)\n2. Ice | is | frozen water\nnoise here")
    assert parsed.claims == [("Water", "is a", "liquid"), ("Ice", "is", "frozen water")]
    assert parsed.unparsed == ["noise here"]


@pytest.mark.parametrize("text", ["", "  ", "NONE", "None.", "[]", "No facts"])
def test_explicit_nothing_means_no_claims(text):
    assert parse_triplets(text).claims == []
    assert parse_subsentence_claims(text).claims == []


def test_garbage_triplets_raise_with_raw_text():
    with pytest.raises(InvalidLLMOutput) as e:
        parse_triplets("I cannot help with that request.")
    assert e.value.raw == "I cannot help with that request."
    assert e.value.stage == "refchecker.extract"


def test_subsentence_claims_bullets_numbers_and_json():
    text = "Claims:\n- The Seine is 777 km long.\n2) The Seine flows through Paris.\n- ---\n"
    parsed = parse_subsentence_claims(text)
    assert parsed.claims == ["The Seine is 777 km long.", "The Seine flows through Paris."]
    assert parsed.unparsed == ["- ---"]
    assert parse_subsentence_claims('["A is B.", "a is b", "C is D."]').claims == [
        "A is B.",
        "C is D.",
    ]
    with pytest.raises(InvalidLLMOutput):
        parse_subsentence_claims('{"claims": 3}')


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Entailment", "Entailment"),
        ("  neutral.", "Neutral"),
        ("Contradiction - the passage says 1913", "Contradiction"),
        ("The answer is: contradicted", "Contradiction"),
        ("**Entailment** (not neutral)", "Entailment"),
    ],
)
def test_parse_label(text, label):
    assert parse_label(text) == label


@pytest.mark.parametrize("text", ["yes", "It is either entailment or neutral"])
def test_parse_label_rejects_missing_or_ambiguous(text):
    with pytest.raises(InvalidLLMOutput):
        parse_label(text)


def test_joint_labels_aligned_and_misaligned():
    assert parse_joint_labels("1. Entailment\n2. contradiction\n3: Neutral", 3) == [
        "Entailment",
        "Contradiction",
        "Neutral",
    ]
    assert parse_joint_labels('["Neutral", "Entailment"]', 2) == ["Neutral", "Entailment"]
    assert parse_joint_labels("1. Entailment\n2. Neutral", 3) is None  # one missing
    assert parse_joint_labels("1. Entailment\n1. Neutral\n2. Neutral", 2) is None  # repeated
    assert parse_joint_labels("1. Entailment\n2. maybe", 2) is None  # no label
    assert parse_joint_labels("1. Entailment\n2. Neutral\n3. Neutral", 2) is None  # out of range
    assert parse_joint_labels('["Neutral"]', 2) is None
