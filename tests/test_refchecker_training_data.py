"""Training pairs for train-checker: the JSONL format, its errors, and pairs from HaluEval."""

from __future__ import annotations

import json

import pytest

from truthguard.errors import InvalidInputError
from truthguard.refchecker.training_data import (
    LABELS,
    TrainingPair,
    halueval_pairs,
    read_pairs,
    write_pairs,
)


def _jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_read_pairs_accepts_the_three_labels_in_any_case(tmp_path):
    rows = [
        {"claim": "It rains.", "evidence": "Rain all day.", "label": "Entailment"},
        "",
        {"claim": "It snows.", "evidence": "Rain all day.", "label": " CONTRADICTION "},
        {"claim": "Cats purr.", "evidence": "Rain all day.", "label": "neutral"},
    ]
    pairs = read_pairs(_jsonl(tmp_path / "p.jsonl", rows))
    assert [p.label for p in pairs] == ["entailment", "contradiction", "neutral"]
    assert set(LABELS) == {"entailment", "neutral", "contradiction"}
    assert write_pairs(pairs, tmp_path / "copy.jsonl") == 3
    assert read_pairs(tmp_path / "copy.jsonl") == pairs


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ("{not json", "p.jsonl line 2", "not JSON"),
        ('["a", "b"]', "p.jsonl line 2", "expected an object"),
        ({"evidence": "E.", "label": "neutral"}, "p.jsonl line 2: claim", "Field required"),
        ({"claim": "C.", "evidence": "E.", "label": "true"}, "p.jsonl line 2: label", "entailment"),
        ({"claim": " ", "evidence": "E.", "label": "neutral"}, "p.jsonl line 2: claim", "empty"),
        (
            {"claim": "C.", "evidence": "E.", "label": "neutral", "gold": 1},
            "p.jsonl line 2: gold",
            "not an accepted field",
        ),
    ],
)
def test_a_bad_line_names_its_line_and_field(tmp_path, row, field, message):
    good = {"claim": "C.", "evidence": "E.", "label": "neutral"}
    with pytest.raises(InvalidInputError, match=message) as info:
        read_pairs(_jsonl(tmp_path / "p.jsonl", [good, row]))
    assert info.value.field == field


def test_a_missing_or_empty_file_is_refused(tmp_path):
    with pytest.raises(InvalidInputError, match="no file"):
        read_pairs(tmp_path / "none.jsonl")
    with pytest.raises(InvalidInputError, match="no pairs"):
        read_pairs(_jsonl(tmp_path / "empty.jsonl", [""]))


ROWS = [
    {
        "knowledge": "The Marlow lighthouse was built in 1881 by the harbour board.",
        "question": "When was the Marlow lighthouse built?",
        "right_answer": "It was built in 1881.",
        "hallucinated_answer": "The Marlow lighthouse was built in 1902 by the navy.",
    },
    {
        "knowledge": "Ann Lee wrote the novel Blue Harbour. It sold a million copies.",
        "question": "Who wrote Blue Harbour?",
        "right_answer": "Ann Lee wrote Blue Harbour.",
        "hallucinated_answer": "Blue Harbour was written by Tom Reed. It sold a million copies.",
    },
    {
        "knowledge": "Kell bridge closed on Monday. Engineers found cracks in its supports.",
        "question": "Why did the Kell bridge close?",
        "right_answer": "Engineers found cracks in its supports.",
        "hallucinated_answer": "A lorry hit the Kell bridge. Engineers found cracks in it.",
    },
]


@pytest.fixture()
def folder(tmp_path):
    root = tmp_path / "halueval"
    root.mkdir()
    _jsonl(root / "qa.jsonl", ROWS)
    return tmp_path


def test_halueval_pairs_skip_the_benchmark_rows(folder):
    pairs = halueval_pairs(folder, tasks=["qa"], skip=1)
    assert all("lighthouse" not in p.evidence and "1881" not in p.claim for p in pairs)
    by = {label: [p for p in pairs if p.label == label] for label in LABELS}
    assert [p.claim for p in by["entailment"]] == [
        "Ann Lee wrote Blue Harbour.",
        "Engineers found cracks in its supports.",
    ]
    # one contradiction per hallucinated output: its claim the reference supports least
    assert [(p.claim, p.evidence) for p in by["contradiction"]] == [
        ("Blue Harbour was written by Tom Reed.", ROWS[1]["knowledge"]),
        ("A lorry hit the Kell bridge.", ROWS[2]["knowledge"]),
    ]
    # neutral: a correct claim against another row's passage
    assert [(p.claim, p.evidence) for p in by["neutral"]] == [
        ("Ann Lee wrote Blue Harbour.", ROWS[2]["knowledge"]),
        ("Engineers found cracks in its supports.", ROWS[1]["knowledge"]),
    ]
    # one row: no other row to take a neutral passage from
    assert halueval_pairs(folder, tasks=["qa"], skip=1, rows=1) == [
        TrainingPair(
            claim="Ann Lee wrote Blue Harbour.", evidence=ROWS[1]["knowledge"], label="entailment"
        ),
        by["contradiction"][0],
    ]


def test_halueval_pairs_check_their_options(folder):
    with pytest.raises(InvalidInputError, match="skip"):
        halueval_pairs(folder, skip=-1)
    with pytest.raises(InvalidInputError, match="rows"):
        halueval_pairs(folder, rows=0)
    with pytest.raises(InvalidInputError, match="unknown task"):
        halueval_pairs(folder, tasks=["math"])
