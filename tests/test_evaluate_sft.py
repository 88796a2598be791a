"""``export_sft``: the FEWL-best answer of each question, as chat fine-tuning data."""

from __future__ import annotations

import json

import pytest

from truthguard.errors import InvalidInputError
from truthguard.evaluation.sft import export_sft

ROWS = [
    {"question": "What is the capital of France?", "answer": "Lyon is the capital.", "label": 1},
    {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "label": 0,
    },
    {"question": "Who wrote Hamlet?", "answer": "Marlowe wrote it.", "label": 1},
    {"question": "Who wrote Hamlet?", "answer": "Shakespeare wrote Hamlet.", "label": 0},
    {"question": "Only one candidate?", "answer": "Yes.", "label": 0},
]

REFERENCE = {
    "capital of France": "Paris is the capital of France.",
    "Hamlet": "Shakespeare wrote Hamlet.",
}


def _config(**options):
    return {
        "detectors": {
            "fewl": {
                "type": "fewl",
                "reference_models": [
                    {
                        "provider": "scripted",
                        "kwargs": {
                            "model_name": "ref",
                            "script": REFERENCE,
                            "default": "I do not know.",
                        },
                    }
                ],
                "options": {"expertise": "uniform", "penalty": False, **options},
                "threshold": 0.0,
            }
        }
    }


@pytest.fixture()
def data(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


@pytest.mark.model
@pytest.mark.parametrize("baseline", [False, True])
def test_the_best_candidate_of_each_question_is_exported(data, tmp_path, baseline):
    out = tmp_path / "sft.jsonl"
    summary = export_sft(data, _config(), out, baseline=baseline, system="Be factual.")
    assert summary["examples"] == 2 and summary["skipped"] == 1 and summary["questions"] == 3
    assert summary["chosen_factual"] == 1.0
    assert summary["selection"] == ("baseline" if baseline else "fewl")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["messages"] == [
        {"role": "system", "content": "Be factual."},
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris is the capital of France."},
    ]
    assert lines[1]["messages"][-1]["content"] == "Shakespeare wrote Hamlet."


def test_the_config_needs_exactly_one_fewl_detector(data, tmp_path):
    with pytest.raises(InvalidInputError, match="detector"):
        export_sft(data, {"detectors": {"f": {"type": "fake"}}}, tmp_path / "o.jsonl")
    with pytest.raises(InvalidInputError, match="detector"):
        export_sft(data, _config(), tmp_path / "o.jsonl", detector="nope")
