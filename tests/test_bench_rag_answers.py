"""``truthguard bench rag-answers``: passes per kind, balanced accuracy, the table and --json."""

from __future__ import annotations

import contextlib
import io
import json
from typing import NamedTuple

import pytest

from truthguard.bench.rag_answers import format_table, load_rows, with_distractors
from truthguard.cli import main
from truthguard.errors import InvalidInputError

TUNNEL = ["The Varne Tunnel is 14.6 kilometres long and opened to rail traffic on 2 June 2004."]
ROWS = [
    ("It opened to trains on 2 June 2004 and runs for 14.6 km.", "correct", "factual"),
    ("The Varne Tunnel, 14.6 km long, opened to rail traffic in June 2004.", "correct", "factual"),
    ("It opened to trains on 2 June 2006 and runs for 14.6 km.", "reworded_wrong", "hallucinated"),
    (
        "It opened to trains on 2 June 2004 and runs for 14.6 km. It cost 900 million pounds.",
        "invented",
        "hallucinated",
    ),
]


@pytest.fixture()
def data(tmp_path):
    path = tmp_path / "rag.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"r{n}",
                    "question": "Tell me about the Varne Tunnel.",
                    "contexts": TUNNEL,
                    "answer": a,
                    "kind": k,
                    "label": lab,
                }
            )
            for n, (a, k, lab) in enumerate(ROWS)
        )
    )
    return path


class Done(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def _run(*args: str) -> Done:
    """``truthguard bench rag-answers ARGS`` through the command line's ``main``, in this
    process (the pipeline the checks parse with is loaded once, not once per run)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["bench", "rag-answers", *args])
        except SystemExit as e:  # as the interpreter ends on it: a message is printed, exit 1
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            if not isinstance(e.code, int | None):
                print(e.code, file=err)
    return Done(code, out.getvalue(), err.getvalue())


def test_the_bench_reports_passes_per_kind_and_the_balanced_accuracy(data):
    done = _run("--data", str(data), "--json", "--show-failures")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["rows"] == 4 and out["llm_calls"] == 0
    assert out["kinds"]["correct"] == {"label": "factual", "n": 2, "passed": 2}
    assert out["kinds"]["reworded_wrong"]["passed"] == 0
    assert out["kinds"]["invented"]["passed"] == 0
    assert out["correct_passed"] == 1.0 and out["errors_caught"] == 1.0
    assert out["balanced_accuracy"] == 1.0 and out["failures"] == []
    assert out["claims"] >= 4 and out["ms_per_claim"] > 0 and out["cpu_ms_per_claim"] > 0
    table = format_table(out)
    assert "correct passed 100.0%, errors caught 100.0%, balanced accuracy 100.0%" in table
    assert "ms/claim warm" in table


def test_the_data_folder_is_found_and_a_bad_row_names_its_line_and_field(tmp_path, data):
    folder = tmp_path / "shared" / "rag_answers"
    folder.mkdir(parents=True)
    (folder / "dev.jsonl").write_text(data.read_text())
    done = _run("--data", str(tmp_path / "shared"), "--json", "--limit", "1")
    assert done.returncode == 0, done.stderr and json.loads(done.stdout)["rows"] == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q", "answer": "a", "contexts": []}) + "\n")
    with pytest.raises(InvalidInputError, match="line 1: missing field 'label'"):
        load_rows(bad)
    bad.write_text(json.dumps({"question": "q", "answer": "a", "contexts": [], "label": "ok"}))
    with pytest.raises(InvalidInputError, match="label must be 'factual' or 'hallucinated'"):
        load_rows(bad)
    done = _run("--data", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "no rag_answers dev.jsonl" in done.stderr


def test_several_sets_are_reported_one_line_each_and_pooled(tmp_path, data):
    lines = data.read_text().splitlines()
    first, second = tmp_path / "read.jsonl", tmp_path / "kept.jsonl"
    first.write_text("\n".join(lines[:2]))  # two correct answers
    second.write_text("\n".join(lines[2:]))  # two wrong answers
    done = _run("--sets", str(first), str(second), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    read, kept = out["sets"]
    assert read["data"] == str(first) and read["rows"] == 2 and read["correct_passed"] == 1.0
    assert read["errors_caught"] is None and kept["correct_passed"] is None
    assert kept["errors_caught"] == 1.0
    assert out["pooled"]["rows"] == 4 and out["pooled"]["balanced_accuracy"] == 1.0
    table = format_table(out)
    assert f"| {first} | 2/2 | - | - |" in table
    assert "| pooled | 2/2 | 0/1 | 0/1 | 100.0% | 100.0% | 100.0% |" in table


OTHER = [
    "The Harlow Viaduct is 2.1 kilometres long and carries the line over the Nene.",
    "It was completed in 1879 after six years of work.",
]


def _rows_of_two_references() -> list[dict]:
    rows = [
        {"id": f"t{n}", "question": "q", "contexts": TUNNEL, "answer": a, "kind": k, "label": lab}
        for n, (a, k, lab) in enumerate(ROWS)
    ]
    rows.append(
        {
            "id": "v0",
            "question": "How long is the Harlow Viaduct?",
            "contexts": OTHER,
            "answer": "It is 2.1 km long.",
            "kind": "correct",
            "label": "factual",
        }
    )
    return rows


def test_distractors_are_other_references_passages_drawn_by_seed_and_shuffled_in():
    rows = _rows_of_two_references()
    one = with_distractors(rows, 1, seed=3)
    assert with_distractors(rows, 1, seed=3) == one  # seeded
    assert rows[0]["contexts"] == TUNNEL  # the input is left as it is
    for row, noisy in zip(rows, one, strict=True):
        drawn = noisy["contexts"]
        assert set(row["contexts"]) <= set(drawn) and len(drawn) == len(row["contexts"]) + 1
        others = OTHER if row["contexts"] == TUNNEL else TUNNEL
        assert len(set(drawn) & set(others)) == 1 and noisy["answer"] == row["answer"]
    assert set(one[-1]["contexts"]) == {*OTHER, *TUNNEL}  # the viaduct row drew the tunnel's
    orders = {
        tuple(r["contexts"])
        for s in range(8)
        for r in with_distractors(rows[:1] + rows[-1:], 1, seed=s)[:1]
    }
    assert len(orders) > 1  # shuffled, not appended
    with pytest.raises(InvalidInputError, match=r"'v0' has only 1 passages"):
        with_distractors(rows, 2)
    with pytest.raises(InvalidInputError, match="must be >= 0"):
        with_distractors(rows, -1)


def test_the_bench_reports_each_set_as_written_and_with_distractors(tmp_path):
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _rows_of_two_references()))
    done = _run("--data", str(path), "--distractors", "1", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["distractors"] == 1 and out["seed"] == 0
    assert out["as_written"]["rows"] == out["with_distractors"]["rows"] == 5
    assert out["as_written"]["kinds"]["correct"]["passed"] == 3
    table = format_table(out)
    assert table.startswith("as written:\nrag-answers: 5 answers")
    assert "with 1 passages of other references added to each answer (seed 0):" in table


def test_a_named_checker_folder_labels_the_claims(data, tmp_path):
    from doubles import tiny_minicheck

    folder = tiny_minicheck(tmp_path / "mc", "roberta", [*TUNNEL, *(a for a, _, _ in ROWS)])
    done = _run("--data", str(data), "--json", "--checker", folder)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["checker"] == folder and out["rows"] == 4 and out["llm_calls"] == 0
    wrong = _run("--data", str(data), "--checker", "minicheck-tiny")
    assert wrong.returncode != 0 and "--checker: unknown checker 'minicheck-tiny'" in wrong.stderr
