"""train-checker: a tiny fine-tuning run (offline, one step) that NLIChecker then loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doubles import tiny_nli
from truthguard.cli import main
from truthguard.errors import InvalidInputError
from truthguard.refchecker import NLIChecker, RefChecker
from truthguard.refchecker.nli import NLIModel
from truthguard.refchecker.train import SUMMARY_FILE, train_checker
from truthguard.refchecker.training_data import TrainingPair

pytest.importorskip("torch")

REF = "Bi Sheng made movable type from baked clay in the eleventh century."
PAIRS = [
    TrainingPair(claim="Bi Sheng made movable type.", evidence=REF, label="entailment"),
    TrainingPair(
        claim="Bi Sheng made type in the ninth century.", evidence=REF, label="contradiction"
    ),
    TrainingPair(claim="The clay was baked.", evidence=REF, label="entailment"),
    TrainingPair(claim="Type from the century.", evidence="In the century.", label="neutral"),
]


@pytest.fixture()
def base(tmp_path):
    folder = tmp_path / "base"
    folder.mkdir()
    return tiny_nli(folder, "neutral")


def _weights(folder: Path) -> bytes:
    return (folder / "model.safetensors").read_bytes()


def test_same_seed_same_weights_and_nli_reads_the_labels(tmp_path, base):
    a = train_checker(PAIRS, tmp_path / "a", base=base, batch_size=2, max_steps=1, seed=3)
    b = train_checker(PAIRS, tmp_path / "b", base=base, batch_size=2, max_steps=1, seed=3)
    train_checker(PAIRS, tmp_path / "c", base=base, batch_size=2, max_steps=1, seed=4)
    assert a["steps"] == 1 and a["pairs"] == 4 and a["losses"] == b["losses"]
    assert a["labels"] == {"contradiction": 1, "entailment": 2, "neutral": 1}
    assert _weights(tmp_path / "a") == _weights(tmp_path / "b") != _weights(tmp_path / "c")
    assert _weights(tmp_path / "a") != _weights(Path(base))  # the step changed the model
    assert json.loads((tmp_path / "a" / SUMMARY_FILE).read_text())["seed"] == 3
    model = NLIModel(tmp_path / "a")
    ent, con, n = model.columns()
    assert (ent, con, n) == (1, 0, 3)
    assert model.scores([(REF, "Bi Sheng made movable type.")]).shape == (1, 2)


def test_max_rows_takes_a_seeded_sample_and_epochs_repeat(tmp_path, base):
    s = train_checker(PAIRS, tmp_path / "m", base=base, batch_size=2, max_rows=2, epochs=2)
    assert s["pairs"] == 2 and s["steps"] == 2
    # an earlier run's folder may be written again
    again = train_checker(PAIRS, tmp_path / "m", base=base, batch_size=4, max_steps=1)
    assert again["steps"] == 1


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"epochs": 0}, "epochs"),
        ({"batch_size": 0}, "batch_size"),
        ({"max_length": 0}, "max_length"),
        ({"max_rows": 0}, "max_rows"),
        ({"max_steps": 0}, "max_steps"),
        ({"learning_rate": float("nan")}, "learning_rate"),
    ],
)
def test_bad_options_name_their_field(tmp_path, base, options, field):
    with pytest.raises(InvalidInputError) as info:
        train_checker(PAIRS, tmp_path / "x", base=base, **options)
    assert info.value.field == field


def test_a_foreign_folder_is_never_written_over(tmp_path, base):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    with pytest.raises(InvalidInputError, match="not empty") as info:
        train_checker(PAIRS, mine, base=base)
    assert info.value.field == "out"
    with pytest.raises(InvalidInputError) as info:
        train_checker(PAIRS, tmp_path / "y", base=tmp_path / "nothing")
    assert info.value.field == "base"
    with pytest.raises(InvalidInputError) as info:
        train_checker([], tmp_path / "z", base=base)
    assert info.value.field == "pairs"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "truthguard.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_packaged_minilm_becomes_a_checker_refchecker_uses(tmp_path, embedder):
    out = tmp_path / "checker"
    summary = train_checker(PAIRS, out, batch_size=4, max_length=16, max_steps=1, seed=1)
    assert summary["steps"] == 1 and Path(summary["base"]).name == "model"
    result = RefChecker(checker=NLIChecker(model=str(out))).invoke(
        {
            "question": "Who made movable type?",
            "answer": "Bi Sheng made it in 1041.",
            "contexts": [REF],
        }
    )
    # whatever one step taught the model, the year the evidence lacks is caught
    assert result.details["claims"][0]["mode"] == "nli" and not result.passing


def test_cli_trains_from_a_jsonl_file(tmp_path, base):
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p.model_dump()) + "\n" for p in PAIRS))
    out = tmp_path / "checker"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run(
        [
            sys.executable, "-m", "truthguard.cli", "train-checker", str(data), "-o", str(out),
            "--base", base, "--max-steps", "1", "--batch-size", "4", "--max-length", "24",
            "--seed", "1", "--json", "--no-progress",
        ],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["steps"] == 1 and summary["base"] == base and summary["out"] == str(out)
    assert "LOAD REPORT" not in run.stderr
    assert NLIModel(out).columns() == (1, 0, 3)


def test_cli_refuses_without_data(tmp_path, capsys):
    assert main(["train-checker", "-o", str(tmp_path / "o")]) == 2
    assert "data: give a JSONL of pairs" in capsys.readouterr().err
    assert main(["train-checker", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o")]) == 2
    assert "no file at" in capsys.readouterr().err
    assert main(["train-checker", "--from-halueval", "--pairs-only", "-o", "x"]) == 2
    assert "needs --write-pairs" in capsys.readouterr().err
