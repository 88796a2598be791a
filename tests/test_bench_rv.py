"""``truthguard bench rv``: exact reproduction through the detector, keys, WikiBio, CLI."""

from __future__ import annotations

import argparse
import json
import shutil

import pytest

from truthguard.bench import rv as bench

KEYS = {
    "variant",
    "matcher",
    "n",
    "f1",
    "precision",
    "recall",
    "domains",
    "leaking_matches",
    "wikibio_accuracy",
    "tokens_per_passage",
    "seconds_per_passage",
}


def args(data, variant="em", matcher="paper") -> argparse.Namespace:
    return argparse.Namespace(
        data=str(data), variant=variant, matcher=matcher, concurrency=8, no_progress=True
    )


def test_scores_with_non_factual_as_positive():
    s = bench.scores([True, True, False, False], [True, False, True, False])
    assert s == {"f1": 50.0, "precision": 50.0, "recall": 50.0}
    assert bench.scores([False, False], [True, False]) == {
        "f1": None,
        "precision": None,
        "recall": 0.0,
    }


# Recorded stage-1 queries that still name the entity ("Old Man of Hoy", "Lower Canada
# Rebellion", "Greater Rhea and Lesser Rhea"...), all with a match.
LEAKING = {"em": 15, "qg": 8}


@pytest.mark.parametrize(
    ("variant", "expected"),
    [("em", (60.0, 50.0, 75.0)), ("qg", (52.9, 40.9, 75.0))],
)
def test_paper_matcher_reproduces_the_published_rules(data_dir, variant, expected):
    out = bench.run(args(data_dir, variant))
    assert set(out) == KEYS and out["n"] == 146
    assert (round(out["f1"], 1), round(out["precision"], 1), round(out["recall"], 1)) == expected
    assert set(out["domains"]) == {"PHD-Low", "PHD-Medium", "PHD-High"}
    assert all(set(d) == {"f1", "precision", "recall"} for d in out["domains"].values())
    assert out["wikibio_accuracy"] is None  # no wiki_bio_*_record.json in the folder
    assert out["tokens_per_passage"] > 100
    # Matches under a query that still names the entity count, as in the paper's runs.
    assert len(out["leaking_matches"]) == LEAKING[variant] and "Hoy" in out["leaking_matches"]
    table = bench.format_table(out)
    assert f"{expected[0]:5.1f}" in table and "published" in table


def test_robust_matcher_runs_on_the_same_passages(data_dir):
    out = bench.run(args(data_dir, "qg", "robust"))
    assert out["matcher"] == "robust" and out["n"] == 146 and out["f1"] is not None


def test_wikibio_accuracy_when_records_exist(data_dir, tmp_path):
    shutil.copytree(data_dir / "phd", tmp_path / "phd")
    (tmp_path / "phd").chmod(0o755)
    rv_dir = tmp_path / "phd" / "Reverse_Validation"
    rv_dir.chmod(0o755)
    passage = "Jan Novak was a Czech painter born in 1901 in Brno."
    records = [
        {"entity": "Jan Novak", "claim": passage, "question": "Who?", "answer": "Jan Novak."},
        {"entity": "Eva Dvorak", "claim": passage, "question": "Who?", "answer": "Unknown."},
    ]
    for r in records:
        r["label"] = "non-factual"
    (rv_dir / "wiki_bio_qg_record.json").write_text(json.dumps(records))
    out = bench.run(args(tmp_path, "qg"))
    assert out["wikibio_accuracy"] == 50.0


def test_cli_prints_one_json_object(data_dir, capsys):
    from truthguard.cli import main

    assert (
        main(["bench", "rv", "--variant", "qg", "--json", "--no-progress", "--data", str(data_dir)])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert set(out) == KEYS and out["variant"] == "qg" and out["matcher"] == "paper"


def test_entities_with_stray_whitespace_still_meet_their_recordings(data_dir, tmp_path):
    # Upstream WikiBio / PHD records carry entities such as "Ailanthus ": same entity.
    src = data_dir / "phd"
    dst = tmp_path / "phd" / "Reverse_Validation"
    dst.mkdir(parents=True)
    records = json.loads((src / "Reverse_Validation" / "our_dataset_em_record.json").read_text())
    records = records[:12]
    for i, r in enumerate(records):
        r["entity"] = r["entity"] + " " if i % 2 else "  " + r["entity"]
    (dst / "our_dataset_em_record.json").write_text(json.dumps(records))
    (dst / "wiki_bio_em_record.json").write_text(json.dumps(records[:4]))
    phd = json.loads((src / "PHD_benchmark.json").read_text())
    for items in phd.values():
        for item in items:
            item["entity"] = item["entity"] + "\t"
    (tmp_path / "phd" / "PHD_benchmark.json").write_text(json.dumps(phd))
    out = bench.run(args(tmp_path))
    assert out["n"] == 12  # every record met its passage
    assert out["wikibio_accuracy"] is not None
    assert out["tokens_per_passage"] > 0
