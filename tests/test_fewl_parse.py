"""The IW/CO pair parser: layouts, drift, missing halves, chatter, failure."""

from __future__ import annotations

import contextlib
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthguard._text import has_content
from truthguard.errors import InvalidLLMOutput
from truthguard.fewl import parse_iwco_pairs
from truthguard.fewl._parse import parse_reference_answer


def test_the_requested_layout():
    text = "\n".join(f"{i}. Wrong: wrong {i}\n{i}. Corrected: right {i}" for i in range(1, 26))
    parsed = parse_iwco_pairs(text, limit=25, min_pairs=25)
    assert len(parsed.pairs) == 25
    assert parsed.pairs[0] == ("wrong 1", "right 1")
    assert parsed.pairs[-1] == ("wrong 25", "right 25")
    assert parsed.dropped == 0
    assert parsed.wrong[3] == "wrong 4" and parsed.corrected[3] == "right 4"


def test_numbering_drift_and_label_variants():
    text = """Sure! Here are the pairs you asked for:

1. Wrong Answer: Birds are mammals.
1. Non-Wrong Answer: Birds belong to a class of their own.
3) **Incorrect:** The sun orbits the earth.
2) **Correct:** The earth goes around the sun.
- Wrong answer #7 - Water boils at 50 C at sea level.
- Corrected answer #9 – At sea level water boils at 100 C.
"""
    parsed = parse_iwco_pairs(text)
    assert parsed.pairs == [
        ("Birds are mammals.", "Birds belong to a class of their own."),
        ("The sun orbits the earth.", "The earth goes around the sun."),
        ("Water boils at 50 C at sea level.", "At sea level water boils at 100 C."),
    ]


def test_non_wrong_is_not_read_as_wrong():
    parsed = parse_iwco_pairs("Wrong: a\nNon-wrong: b\nWrong: c\nNot wrong: d")
    assert parsed.pairs == [("a", "b"), ("c", "d")]


def test_missing_halves_are_skipped_and_counted():
    text = """1. Wrong: lonely wrong answer
2. Wrong: paired wrong
2. Corrected: paired right
3. Corrected: orphan correction
4. Wrong:
4. Corrected: correction of an empty wrong answer
5. Wrong: last one without correction"""
    parsed = parse_iwco_pairs(text)
    assert parsed.pairs == [("paired wrong", "paired right")]
    assert parsed.dropped == 5


def test_multi_line_halves_and_trailing_chatter():
    text = """1. Wrong: Hamlet was written
by Charles Dickens.
1. Corrected: Dickens did not write Hamlet;
Shakespeare did.

I hope these examples are useful! Let me know if you need more."""
    parsed = parse_iwco_pairs(text)
    assert parsed.pairs == [
        ("Hamlet was written by Charles Dickens.", "Dickens did not write Hamlet; Shakespeare did.")
    ]


def test_one_line_pairs():
    text = "1. Wrong: a | Corrected: b\n2. IW: c | CO: d"
    assert parse_iwco_pairs(text).pairs == [("a", "b"), ("c", "d")]


def test_limit_keeps_the_first_pairs():
    text = "\n".join(f"Wrong: w{i}\nCorrected: c{i}" for i in range(10))
    assert parse_iwco_pairs(text, limit=3).wrong == ["w0", "w1", "w2"]


def test_labels_inside_content_do_not_split_it():
    parsed = parse_iwco_pairs("Wrong: Paris is wrong: it is Lyon.\nCorrected: Paris is right.")
    assert parsed.pairs == [("Paris is wrong: it is Lyon.", "Paris is right.")]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I'm sorry, I can't produce false statements.",
        "1. Wrong: only wrong answers\n2. Wrong: and more of them",
    ],
)
def test_too_few_pairs_raise_with_the_raw_text(text):
    with pytest.raises(InvalidLLMOutput) as e:
        parse_iwco_pairs(text, min_pairs=1, stage="fewl.iwco")
    assert e.value.raw == text
    assert e.value.stage == "fewl.iwco"


def test_min_pairs_is_enforced():
    text = "Wrong: a\nCorrected: b\nWrong: c\nCorrected: d"
    assert len(parse_iwco_pairs(text, min_pairs=2).pairs) == 2
    with pytest.raises(InvalidLLMOutput, match="found 2 complete"):
        parse_iwco_pairs(text, min_pairs=3)


def test_halves_without_content_count_as_missing():
    text = (
        "1. Wrong: <false answer>\n1. Corrected: <corrected statement>\n"
        "2. Wrong: ...\n2. Corrected: Paris is in France.\n"
        "3. Wrong: Lyon is the capital.\n3. Corrected: \u2014\n"
        "4. Wrong: Nice is the capital.\n4. Corrected: Paris is the capital."
    )
    parsed = parse_iwco_pairs(text)
    assert parsed.pairs == [("Nice is the capital.", "Paris is the capital.")]
    assert parsed.dropped == 6
    with pytest.raises(InvalidLLMOutput, match="found 0 complete"):
        parse_iwco_pairs("Wrong: <false answer>\nCorrected: <corrected statement>")


@pytest.mark.parametrize("raw", ["", "  ", "...", "N/A", "null", "<answer>"])
def test_reference_answer_without_content_is_invalid(raw):
    with pytest.raises(InvalidLLMOutput, match="reference answer of m#0") as e:
        parse_reference_answer(raw, source="m#0")
    assert e.value.raw == raw and e.value.stage == "fewl.reference"


def test_reference_answer_is_stripped_and_none_is_an_answer():
    assert parse_reference_answer("  Shakespeare.\n") == "Shakespeare."
    assert parse_reference_answer("None.") == "None."  # "How many moons has Venus?"


RUNS = [
    " ",
    "\t",
    "*",
    "* ",
    "-",
    "wrong: ",
    "Wrong answer 1: x\n",
    "| wrong",
    "|",
    "**",
    "1",
    "1. ",
    "(1) ",
    "wrong" + " " * 50,
    "Corrected",
    "x\n\n",
    "\u2022 ",
]
N = 100_000


@pytest.mark.parametrize("unit", RUNS)
@pytest.mark.parametrize("prefix", ["", "1. Wrong: a\n", "Wrong"])
def test_pair_parser_is_linear_on_100k_adversarial_input(unit, prefix):
    text = prefix + (unit * (N // len(unit) + 1))[:N]
    started = time.perf_counter()
    with contextlib.suppress(InvalidLLMOutput):
        parse_iwco_pairs(text)
    assert time.perf_counter() - started < 2.0  # the old pattern was cubic on blank runs


FRAGMENTS = [
    "Wrong:",
    "Corrected:",
    "Non-wrong answer:",
    "IW:",
    "CO:",
    "1.",
    "2)",
    "**",
    "__",
    "|",
    "\n",
    "\n\n",
    " ",
    "-",
    "\u2014",
    "...",
    "<false answer>",
    "Paris",
    "#3",
]
replies = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=10), max_size=40).map("".join)
FUZZ = settings(max_examples=200, deadline=None, database=None, derandomize=True)


@FUZZ
@given(replies, st.integers(min_value=1, max_value=3))
def test_fuzz_pairs_raise_only_invalid_output_and_never_hold_nothing(text, min_pairs):
    started = time.perf_counter()
    try:
        parsed = parse_iwco_pairs(text, min_pairs=min_pairs)
    except InvalidLLMOutput as e:
        assert e.raw == text
    else:
        assert len(parsed.pairs) >= min_pairs
        assert all(has_content(w) and has_content(c) for w, c in parsed.pairs)
    try:
        assert has_content(parse_reference_answer(text))
    except InvalidLLMOutput:
        assert not has_content(text)
    assert time.perf_counter() - started < 2.0


_STREAMED = (
    "Here are the pairs.\n"
    "1. Wrong: The tower opened in 1901.\n"
    "1. Corrected: The tower opened in 1889.\n"
    "**2. Wrong answer:** It is made of\n  reinforced concrete.\n"
    "2. Corrected: It is made of wrought iron.\n"
    "3. Wrong: ... | 3. Corrected: It stands in Paris.\n"
    "4. Wrong: It is 500 metres tall.\n"
    "4. Corrected: It is 330 metres tall.\n\nHope this helps!"
)


def test_settled_halves_of_every_prefix_are_read_as_the_whole_reply_reads_them():
    from truthguard.fewl._parse import settled_halves

    halves = {h for pair in parse_iwco_pairs(_STREAMED).pairs for h in pair}
    previous: list[str] = []
    for cut in range(len(_STREAMED) + 1):
        settled = settled_halves(_STREAMED[:cut])
        assert settled[: len(previous)] == previous  # a settled half never changes
        # Every settled half is exactly a half of the final parse, or one the parse drops
        # (the content-free "..." of pair 3 is never settled: it has no content).
        assert set(settled) <= halves | {"It stands in Paris."}
        previous = settled
    assert "It is 330 metres tall." not in previous  # the last half is never settled
    assert "It is made of reinforced concrete." in previous  # a multi-line half, whole
