"""Reading input rows and writing resumable results."""

from __future__ import annotations

import csv
import json

import pytest

from truthguard.errors import InvalidInputError
from truthguard.evaluation.config import ColumnMap
from truthguard.evaluation.io import (
    ResultWriter,
    gold_label,
    read_results,
    read_rows,
    write_parquet,
)

ROWS = [
    {
        "q": "Where is Dubai?",
        "a": "In the UAE.",
        "ctx": ["Dubai is in the UAE."],
        "y": 0,
        "entity": None,
    },
    {"q": "Who wrote Hamlet?", "a": "Marlowe.", "ctx": [], "y": 1, "entity": "Hamlet"},
]
COLS = ColumnMap(question="q", answer="a", contexts="ctx", label="y")


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_csv_and_parquet_read_alike(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    a = read_rows(_jsonl(tmp_path / "d.jsonl", ROWS), COLS)
    with (tmp_path / "d.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["q", "a", "ctx", "y", "entity"])
        w.writeheader()
        for r in ROWS:
            w.writerow({**r, "ctx": json.dumps(r["ctx"]), "entity": r["entity"] or ""})
    b = read_rows(tmp_path / "d.csv", COLS)
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "d.parquet")
    c = read_rows(tmp_path / "d.parquet", COLS)
    for rows in (a, b, c):
        assert [r["question"] for r in rows] == ["Where is Dubai?", "Who wrote Hamlet?"]
        assert rows[0]["contexts"] == ["Dubai is in the UAE."] and rows[1]["contexts"] == []
        assert [r["gold"] for r in rows] == ["factual", "hallucinated"]
        assert rows[1]["fields"]["entity"] == "Hamlet"
    assert [r["id"] for r in a] == [r["id"] for r in b] == [r["id"] for r in c]


def test_ids_are_stable_and_unique(tmp_path):
    rows = [{"question": "Q?", "answer": "A"}] * 2 + [{"question": "Q?", "answer": "B"}]
    got = read_rows(_jsonl(tmp_path / "d.jsonl", rows))
    assert len({r["id"] for r in got}) == 3 and got[1]["id"] == got[0]["id"] + "#1"
    assert [r["id"] for r in read_rows(tmp_path / "d.jsonl")] == [r["id"] for r in got]
    explicit = [{"id": "x", "question": "Q?", "answer": "A"}] * 2
    with pytest.raises(InvalidInputError, match="id"):
        read_rows(_jsonl(tmp_path / "e.jsonl", explicit))


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"answer": "A"}, "d.jsonl line 1.question"),
        ({"question": "  ", "answer": "A"}, "d.jsonl line 1.question"),
        ({"question": "Q?"}, "d.jsonl line 1.answer"),
        ({"question": "Q?", "answer": "A", "contexts": {"p": 1}}, "d.jsonl line 1.contexts"),
        ({"question": "Q?", "answer": "A", "label": "maybe"}, "d.jsonl line 1.label"),
    ],
)
def test_bad_rows_name_row_and_field(tmp_path, row, field):
    with pytest.raises(InvalidInputError) as info:
        read_rows(_jsonl(tmp_path / "d.jsonl", [row]))
    assert info.value.field == field


def test_unknown_format_and_missing_file(tmp_path):
    (tmp_path / "d.xlsx").write_text("x")
    with pytest.raises(InvalidInputError, match="format"):
        read_rows(tmp_path / "d.xlsx")
    with pytest.raises(InvalidInputError, match="data"):
        read_rows(tmp_path / "nope.jsonl")


@pytest.mark.parametrize(
    ("value", "gold"),
    [
        (True, "hallucinated"),
        (0, "factual"),
        (1.0, "hallucinated"),
        ("non-factual", "hallucinated"),
        ("Factual", "factual"),
        (None, None),
        ("", None),
    ],
)
def test_gold_labels(value, gold):
    assert gold_label(value) == gold


def test_writer_cuts_a_partial_last_line_and_remembers_done(tmp_path):
    path = tmp_path / "results.jsonl"
    w = ResultWriter(path)
    w.write([{"id": "a", "detector": "d", "index": 0}])
    with path.open("a") as f:
        f.write('{"id": "b", "detector": "d", "ind')  # killed mid-line
    assert [r["id"] for r in read_results(path)] == ["a"]
    again = ResultWriter(path)
    assert again.done == {("a", "d")}
    again.write([{"id": "b", "detector": "d", "index": 1}])
    assert [r["id"] for r in read_results(tmp_path)] == ["a", "b"]


def test_parquet_keeps_nested_fields_as_json(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [
        {
            "id": "b",
            "index": 1,
            "detector": "d",
            "contexts": ["c"],
            "details": {"claims": [{"claim": "x"}]},
            "usage": {"llm_calls": 2},
            "fields": {"entity": "E"},
        },
        {"id": "a", "index": 0, "detector": "d", "contexts": [], "details": {}, "usage": {}},
    ]
    path = write_parquet(rows, tmp_path / "r.parquet")
    table = pq.read_table(path).to_pylist()
    assert [r["id"] for r in table] == ["a", "b"]
    assert json.loads(table[1]["details"]) == {"claims": [{"claim": "x"}]}
    assert table[1]["usage_llm_calls"] == 2 and table[1]["contexts"] == ["c"]


def test_what_true_means_in_the_label_column_is_configurable(tmp_path):
    rows = [
        {"question": "Q1?", "answer": "A", "is_correct": True},
        {"question": "Q2?", "answer": "B", "is_correct": 0},
        {"question": "Q3?", "answer": "C", "is_correct": "hallucinated"},  # words mean themselves
    ]
    path = _jsonl(tmp_path / "d.jsonl", rows)
    columns = ColumnMap(label="is_correct", label_true="factual")
    assert [r["gold"] for r in read_rows(path, columns)] == [
        "factual",
        "hallucinated",
        "hallucinated",
    ]
    default = [r["gold"] for r in read_rows(path, ColumnMap(label="is_correct"))]
    assert default == ["hallucinated", "factual", "hallucinated"]
    with pytest.raises(InvalidInputError, match="true means factual"):
        gold_label("maybe", true_means="factual")
