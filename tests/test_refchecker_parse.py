"""RefChecker output parsers: messy extractor and checker outputs."""

from __future__ import annotations

import contextlib
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthguard._text import has_content
from truthguard.errors import InvalidLLMOutput
from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker
from truthguard.refchecker._parse import (
    LABELS,
    explicit_nothing,
    parse_joint,
    parse_joint_labels,
    parse_label,
    parse_subsentence_claims,
    parse_triplets,
)
from truthguard.result import Label
from truthguard.testing import ScriptedChatModel


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


@pytest.mark.parametrize("text", ["NONE", "None.", "[]", "No facts", "N/A"])
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


# -- contentless, abstaining and hostile output ---------------------------------------------------


@pytest.mark.parametrize("text", ["", "  \n", "...", "null", "```\n\n```", "\u2014"])
def test_a_reply_without_content_is_invalid_not_an_abstention(text):
    for parse in (parse_triplets, parse_subsentence_claims):
        with pytest.raises(InvalidLLMOutput, match=r"no content|is empty") as e:
            parse(text)
        assert e.value.raw == text
    assert not explicit_nothing(text)


def test_triplets_with_an_empty_part_are_not_claims():
    text = '("Paris", "", "France")\n("  ", "is", "...")\n("Seine", "flows through", "Paris")'
    parsed = parse_triplets(text)
    assert parsed.claims == [("Seine", "flows through", "Paris")]
    assert len(parsed.unparsed) == 2
    with pytest.raises(InvalidLLMOutput):
        parse_triplets('("", "", "")\n(-, -, -)')
    assert parse_triplets('[["a", "is", "b"], ["", "is", "c"]]').claims == [("a", "is", "b")]


@pytest.mark.parametrize(
    "text",
    [
        "The answer states no facts.\nNONE",
        "The answer does not contain any factual claim.\n\nTriplets:\nNONE",
        "I'm sorry, there is nothing to extract here.\n- NONE",
    ],
)
def test_none_after_prose_means_no_triplets(text):
    parsed = parse_triplets(text)
    assert parsed.claims == []


@pytest.mark.parametrize(
    "text",
    [
        "I don't know.",
        "- I don't know.",
        "- I do not know the answer to that.",
        "The answer does not state any fact.",
        "- The speaker does not know.",
        "There are no claims in the answer.",
        '["I don\'t know."]',
    ],
)
def test_an_abstention_is_not_a_claim(text):
    assert parse_subsentence_claims(text).claims == []


def test_claims_about_nothing_stay_claims():
    text = "- No claims were filed against the company in 2020.\n- I know the way."
    assert parse_subsentence_claims(text).claims == [
        "No claims were filed against the company in 2020.",
        "I know the way.",
    ]


def test_chatter_around_bullets_is_not_a_claim():
    parsed = parse_subsentence_claims("Sure, here you go!\n- The Seine is long.\nHope it helps.")
    assert parsed.claims == ["The Seine is long."]
    assert parsed.unparsed == ["Sure, here you go!", "Hope it helps."]


@pytest.mark.parametrize(
    "text",
    [
        "Entailment. On reflection, Contradiction.",
        "Neutral\n\nFinal answer: Entailment",
        "**Contradiction** or maybe neutral",
    ],
)
def test_a_reply_giving_several_labels_is_invalid(text):
    with pytest.raises(InvalidLLMOutput, match="several labels"):
        parse_label(text)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Entailment. Nothing contradicts it.", "Entailment"),
        ("Entailment (rather than neutral): passage 2 supports it.", "Entailment"),
        ("Neutral: the passages neither entail nor contradict the claim.", "Neutral"),
        ("Entailment. The claim is entailed by passage 1.", "Entailment"),
    ],
)
def test_a_label_with_negated_or_repeated_mentions_is_read(text, label):
    assert parse_label(text) == label


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1. Entailment\n2. Neutral", r"no label for claim\(s\) \[3\]"),
        ("1. Entailment\n1. Neutral\n2. Neutral\n3. Neutral", "labelled twice"),
        ("1. Entailment\n2. Neutral\n3. Neutral\n4. Neutral", "out of range"),
        ("1. Entailment\n2. Neutral\n3. Neutral\nActually claim 2 is Contradiction", "outside"),
        ("1. Entailment\n2. Neutral or Contradiction\n3. Neutral", "gives 2 labels"),
        ('["Neutral", "Entailment"]', "list of 3"),
    ],
)
def test_a_misaligned_joint_reply_says_how(text, why):
    with pytest.raises(InvalidLLMOutput, match=why) as e:
        parse_joint(text, 3)
    assert e.value.raw == text and e.value.stage == "refchecker.check.joint"
    assert parse_joint_labels(text, 3) is None


RUNS = [
    "x",
    " ",
    "Entailment ",
    "not entail ",
    "x Entailment x ",
    "1. Entailment\n",
    '("a", "',
    '("a", "b", "',
    "(",
    "(a, ",
    "'",
    '"',
    "\\",
    "- ",
    "* ",
    "|",
    "NONE ",
    "\n",
    "no ",
]
N = 100_000


@pytest.mark.parametrize("unit", RUNS)
def test_every_parser_is_linear_on_100k_adversarial_input(unit):
    text = (unit * (N // len(unit) + 1))[:N]
    for call in (
        lambda: parse_triplets(text),
        lambda: parse_subsentence_claims(text),
        lambda: parse_label(text),
        lambda: parse_joint(text, 5),
        lambda: parse_triplets("x" * 20 + text),
        lambda: parse_label("Neutral " + text),
    ):
        started = time.perf_counter()
        with contextlib.suppress(InvalidLLMOutput):
            call()
        assert time.perf_counter() - started < 2.0  # the old patterns took minutes here


FRAGMENTS = [
    '("',
    '", "',
    '")',
    "(",
    ")",
    ",",
    "|",
    "-",
    "*",
    "1.",
    "2)",
    "\n",
    " ",
    "NONE",
    "Triplets:",
    "```",
    "[",
    "]",
    '"',
    "Entailment",
    "Neutral",
    "Contradiction",
    "not",
    "no",
    "nor",
    "I don't know.",
    "...",
    "N/A",
    "null",
    "Paris",
]
replies = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=40).map("".join)
FUZZ = settings(max_examples=200, deadline=None, database=None, derandomize=True)


def _try(parse, text):
    try:
        return parse(text)
    except InvalidLLMOutput as e:
        assert e.raw == text
        return None


@FUZZ
@given(replies)
def test_fuzz_parsers_raise_only_invalid_output_and_never_return_nothing(text):
    started = time.perf_counter()
    triplets = _try(parse_triplets, text)
    assert triplets is None or all(all(has_content(p) for p in t) for t in triplets.claims)
    claims = _try(parse_subsentence_claims, text)
    assert claims is None or all(has_content(c) for c in claims.claims)
    if (triplets is not None or claims is not None) and not has_content(text):
        assert explicit_nothing(text)
    assert _try(parse_label, text) in (None, *LABELS)
    joint = _try(lambda t: parse_joint(t, 2), text)
    assert joint is None or (len(joint) == 2 and set(joint) <= set(LABELS))
    assert time.perf_counter() - started < 2.0


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
