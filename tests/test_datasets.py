"""Dataset loaders: local folders, $TRUTHGUARD_DATA_DIR, download into the cache."""

from __future__ import annotations

import json
import shutil

import pytest

from truthguard.datasets import (
    HALUEVAL_TASKS,
    REFCHECKER_MODELS,
    dataset_dir,
    load_chale,
    load_halueval,
    load_phd,
    load_refchecker,
    load_rv_records,
    load_wikibio_records,
    strip_html,
)
from truthguard.errors import DatasetNotFoundError, InvalidInputError


def test_phd_passages_and_domains(data_dir):
    phd = load_phd(data_dir)
    assert len(phd) == 146
    assert {p.domain for p in phd} == {"PHD-Low", "PHD-Medium", "PHD-High"}
    assert sum(p.is_hallucinated for p in phd) == 36
    assert all(p.passage and p.entity for p in phd)


def test_rv_records_align_with_passages(data_dir):
    for variant in ("em", "qg"):
        recs = load_rv_records(variant, data_dir)
        assert len(recs) == 146
        assert all(r.stage1 and r.domain for r in recs)
    assert load_wikibio_records("em", data_dir) is None


def test_chale_items(data_dir):
    items = load_chale(data_dir)
    assert len(items) == 1134
    first = items[0]
    assert "<P>" in first.long_answer_html and "<" not in first.long_answer
    assert first.non_halu.startswith(first.short_answer)


def test_refchecker_responses(data_dir):
    zero = load_refchecker("zero_context", data_dir)
    assert len(zero) == 51 * len(REFCHECKER_MODELS)
    assert {r.model for r in zero} == set(REFCHECKER_MODELS)
    labelled = [r for r in zero if r.claims]
    assert labelled and all(0 <= r.rate("Entailment") <= 1 for r in labelled)
    assert len(load_refchecker("noisy_context", data_dir)) == 43 * len(REFCHECKER_MODELS)
    with pytest.raises(InvalidInputError, match="setting"):
        load_refchecker("no_context", data_dir)


def test_root_or_dataset_folder_both_work(data_dir):
    assert dataset_dir("phd", data_dir) == dataset_dir("phd", data_dir / "phd")


def test_env_var_is_used(data_dir, monkeypatch):
    monkeypatch.setenv("TRUTHGUARD_DATA_DIR", str(data_dir))
    assert dataset_dir("chale") == data_dir / "chale"


def test_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="data_dir"):
        load_phd(tmp_path / "nope")
    with pytest.raises(DatasetNotFoundError, match="no phd data"):
        load_phd(tmp_path)
    with pytest.raises(InvalidInputError, match="name"):
        dataset_dir("squad")


def test_download_into_cache(tmp_path, monkeypatch):
    # A fake upstream laid out like the public repository, served over file://.
    upstream = tmp_path / "upstream" / "weijiaheng" / "CHALE" / "main"
    upstream.mkdir(parents=True)
    cols = {
        "Question": ["q"],
        "Short_ans": ["s"],
        "Long_ans": ["<P>long &amp; answer</P>"],
        "halu": ["h"],
        "mid-halu": ["m"],
        "non-halu": ["s. more"],
    }
    (upstream / "hallucinated_ans_final_filtered.json").write_text(json.dumps(cols))
    monkeypatch.delenv("TRUTHGUARD_DATA_DIR", raising=False)
    monkeypatch.setenv("TRUTHGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRUTHGUARD_DATA_URL", (tmp_path / "upstream").as_uri())
    items = load_chale()
    assert items[0].long_answer == "long & answer"
    assert (tmp_path / "home" / "data" / "chale").is_dir()
    shutil.rmtree(tmp_path / "upstream")  # second load reads the cache
    assert load_chale()[0].question == "q"


def test_failed_download_names_the_way_out(tmp_path, monkeypatch):
    monkeypatch.delenv("TRUTHGUARD_DATA_DIR", raising=False)
    monkeypatch.setenv("TRUTHGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRUTHGUARD_DATA_URL", (tmp_path / "nowhere").as_uri())
    with pytest.raises(DatasetNotFoundError, match="TRUTHGUARD_DATA_DIR"):
        load_phd()
    assert not (tmp_path / "home" / "data" / "phd").exists()  # nothing half-written


def test_strip_html():
    assert strip_html("<P> a <b>bold</b>  &lt;tag&gt; </P>") == "a bold <tag>"


def test_rv_record_label_is_not_taken_for_the_human_label(data_dir):
    human = {p.entity: p.label for p in load_phd(data_dir)}
    recs = load_rv_records("em", data_dir)
    assert not hasattr(recs[0], "label")
    assert sum(r.recorded_label != human[r.entity] for r in recs) > 0
    assert {r.is_same for r in recs} == {None, "Yes.", "No."}


HALUEVAL_ROWS = {
    "qa": {
        "knowledge": "The lighthouse was built in 1881.",
        "question": "When was the lighthouse built?",
        "right_answer": "1881",
        "hallucinated_answer": "It was built in 1902.",
    },
    "dialogue": {
        "knowledge": "Ann Lee wrote Blue Harbour.",
        "dialogue_history": "[Human]: Who wrote it? [Assistant]: Ann Lee. [Human]: Nice! ",
        "right_response": "She wrote it in her thirties.",
        "hallucinated_response": "Tom Ray co-wrote it.",
    },
    "summarization": {
        "document": "The council closed the bridge for repairs on Monday.",
        "right_summary": "Bridge closed for repairs.",
        "hallucinated_summary": "Bridge closed after a crash.",
    },
}


def test_halueval_rows_per_task(tmp_path):
    folder = tmp_path / "halueval"
    folder.mkdir()
    for task, row in HALUEVAL_ROWS.items():
        (folder / f"{task}.jsonl").write_text(json.dumps(row) + "\n\n" + json.dumps(row) + "\n")
    qa = load_halueval("qa", tmp_path)
    assert [i.index for i in qa] == [0, 2] and qa[0].question.startswith("When")
    assert qa[0].right == "1881" and qa[0].reference.endswith("1881.")
    dialogue = load_halueval("dialogue", tmp_path, limit=1)
    assert len(dialogue) == 1 and dialogue[0].history.startswith("[Human]")
    assert dialogue[0].question is None
    summary = load_halueval("summarization", folder)[0]
    assert summary.hallucinated == "Bridge closed after a crash." and summary.history is None
    assert set(HALUEVAL_TASKS) == set(HALUEVAL_ROWS)


def test_halueval_names_a_bad_row_and_a_bad_task(tmp_path):
    folder = tmp_path / "halueval"
    folder.mkdir()
    (folder / "qa.jsonl").write_text(json.dumps({"knowledge": "k"}) + "\n")
    with pytest.raises(DatasetNotFoundError, match="line 1"):
        load_halueval("qa", tmp_path)
    with pytest.raises(InvalidInputError, match="task"):
        load_halueval("general", tmp_path)  # type: ignore[arg-type]
    with pytest.raises(DatasetNotFoundError, match="dialogue"):
        load_halueval("dialogue", tmp_path)


def test_halueval_downloads_upstream_files(tmp_path, monkeypatch):
    upstream = tmp_path / "upstream" / "RUCAIBox" / "HaluEval" / "main" / "data"
    upstream.mkdir(parents=True)
    for task, row in HALUEVAL_ROWS.items():
        (upstream / f"{task}_data.json").write_text(json.dumps(row) + "\n")
    monkeypatch.delenv("TRUTHGUARD_DATA_DIR", raising=False)
    monkeypatch.setenv("TRUTHGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRUTHGUARD_DATA_URL", (tmp_path / "upstream").as_uri())
    assert load_halueval("dialogue")[0].right.startswith("She wrote")
    assert (tmp_path / "home" / "data" / "halueval" / "qa.jsonl").is_file()


def test_halueval_development_half(data_dir):
    for task in HALUEVAL_TASKS:
        rows = load_halueval(task, data_dir, limit=50)
        assert len(rows) == 50 and all(r.right and r.hallucinated and r.reference for r in rows)
