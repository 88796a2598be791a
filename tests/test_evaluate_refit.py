"""Refitting RefChecker's decision on labelled results (``calibrate --refit-decision``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from truthguard.errors import InvalidInputError
from truthguard.evaluation import evaluate
from truthguard.evaluation.calibrate import calibrate
from truthguard.evaluation.config import build_detectors, load_config, save_config
from truthguard.evaluation.io import read_results
from truthguard.evaluation.refit import base_decision, refit_decision
from truthguard.refchecker import RefChecker
from truthguard.refchecker.decision import GroundingDecision


def _claim(label: str, precision: float, cosine: float, missing: int) -> dict:
    return {
        "claim": "c",
        "label": label,
        "checker_output": json.dumps(
            {"precision": precision, "cosine": cosine, "n_facts": 2, "n_content": 4}
        ),
        "issues": [{"kind": "name", "relation": "missing"}] * missing,
    }


def _row(gold: str, claims: list[dict], decided_by: str = "answer", p: float = 0.5) -> dict:
    return {
        "detector": "rc",
        "gold": gold,
        "score": 1 - p,
        "passing": p < 0.7,
        "label": "factual" if p < 0.7 else "hallucinated",
        "details": {
            "claims": claims,
            "decision": {"decided_by": decided_by, "p_hallucinated": p, "threshold": 0.7},
        },
    }


def _rows() -> list[dict]:
    rows = []
    for k in range(6):  # supported answers: close to the evidence, nothing missing
        rows.append(
            _row(
                "factual",
                [_claim("Entailment", 0.9, 0.8, 0), _claim("Neutral", 0.7 - k / 20, 0.6, k % 2)],
                p=0.75,
            )
        )
    for k in range(6):  # invented names, far from the evidence
        rows.append(
            _row(
                "hallucinated",
                [_claim("Entailment", 0.9, 0.8, 0), _claim("Neutral", 0.3 + k / 20, 0.4, 2)],
                p=0.6,
            )
        )
    rows.append(_row("hallucinated", [_claim("Contradiction", 0.9, 0.9, 1)], "claim", p=0.9))
    rows.append(_row("factual", [_claim("Entailment", 1.0, 0.9, 0)] * 2, "all_entailed", p=0.1))
    no_claims = {"detector": "rc", "gold": "factual", "score": None, "passing": True}
    rows.append({**no_claims, "label": "unverifiable", "details": {"reason": "refusal"}})
    return rows


def test_refit_fits_the_weighed_answers_and_keeps_the_rules(tmp_path):
    base = GroundingDecision.default().model_copy(update={"strict_claims": 2})
    out = tmp_path / "decision.json"
    fitted = refit_decision(_rows(), out, base=base, source="unit rows")
    assert (fitted["n"], fitted["weighed_rows"], fitted["fixed_rows"]) == (15, 12, 3)
    assert fitted["fitted_rows"] == 12  # both kinds weighed: the rule-decided ones are not fitted
    saved = GroundingDecision.load(out)
    assert saved.strict_claims == 2 and saved.retelling_cosine == base.retelling_cosine
    assert base.forms and saved.forms == {}  # one model for the user's rows, every form
    assert saved.coefficients != base.coefficients and "unit rows" in saved.fitted_on
    assert 0 < saved.threshold < 1 and fitted["threshold"] == round(saved.threshold, 4)
    # the run rejected every factual answer the model weighed; the refit separates them
    assert fitted["before"]["correct_passed"] == pytest.approx(100 * 2 / 8, abs=0.1)
    assert fitted["after"] == {
        "correct_passed": 100.0,
        "hallucinated_rejected": 100.0,
        "balanced_accuracy": 100.0,
    }
    # the file is what RefChecker(decision=PATH) takes
    assert RefChecker(decision=str(out)).decision == saved
    assert RefChecker(decision=out).decision == saved


def test_with_one_kind_weighed_the_rule_decided_answers_are_fitted_too(tmp_path):
    entailed = [_claim("Entailment", 1.0, 0.9 - k / 50, 0) for k in range(2)]
    rows = [r for r in _rows() if r["gold"] == "hallucinated"]
    rows += [_row("factual", entailed, "all_entailed", p=0.1) for _ in range(3)]
    fitted = refit_decision(rows, tmp_path / "d.json")
    assert (fitted["weighed_rows"], fitted["fitted_rows"]) == (6, 6 + 1 + 3)
    assert fitted["after"]["hallucinated_rejected"] == 100.0
    assert fitted["after"]["correct_passed"] == 100.0


def test_refit_needs_both_kinds_among_the_weighed_answers(tmp_path):
    one_kind = [r for r in _rows() if r["gold"] == "factual"]
    with pytest.raises(InvalidInputError) as info:
        refit_decision(one_kind, tmp_path / "d.json")
    assert info.value.field == "label"
    assert not (tmp_path / "d.json").exists()


def test_refchecker_names_a_bad_decision_file(tmp_path):
    with pytest.raises(ValueError, match="decision") as info:
        RefChecker(decision=str(tmp_path / "none.json"))
    assert "no decision file" in str(info.value)
    (tmp_path / "bad.json").write_text('{"threshold": 0.5}')
    with pytest.raises(ValueError, match="holds no saved GroundingDecision"):
        RefChecker(decision=str(tmp_path / "bad.json"))


def test_base_decision_reads_the_run_options(tmp_path):
    assert base_decision({}) == GroundingDecision.default()
    path = tmp_path / "d.json"
    GroundingDecision.default().model_copy(update={"threshold": 0.4}).save(path)
    assert base_decision({"decision": str(path)}).threshold == 0.4
    inline = GroundingDecision.default().model_dump() | {"threshold": 0.3}
    assert base_decision({"decision": inline}).threshold == 0.3


def test_calibrate_refits_one_refchecker_and_thresholds_the_others(tmp_path):
    other = [
        {"detector": "d", "score": s, "gold": g, "passing": None, "label": "factual"}
        for s, g in [
            (0.1, "hallucinated"),
            (0.9, "factual"),
            (0.3, "hallucinated"),
            (0.8, "factual"),
        ]
    ]
    config = tmp_path / "c.yaml"
    save_config(
        load_config(
            {"detectors": {"rc": {"type": "refchecker", "threshold": 0.5}, "d": {"type": "fake"}}}
        ),
        config,
    )
    out = tmp_path / "refit.json"
    written = tmp_path / "c.calibrated.yaml"
    result = calibrate(_rows() + other, config=config, write_config=written, refit_decision=out)
    assert set(result["detectors"]) == {"d"} and result["decision"]["detector"] == "rc"
    cfg = load_config(written)
    assert cfg.detectors["rc"].threshold is None
    assert cfg.detectors["rc"].options["decision"] == str(out.resolve())
    assert cfg.detectors["rc"].calibration["refit_decision"] == str(out.resolve())
    assert cfg.detectors["d"].threshold is not None
    assert build_detectors(cfg)["rc"].decision == GroundingDecision.load(out)
    with pytest.raises(InvalidInputError) as info:
        calibrate(other, refit_decision=out)
    assert info.value.field == "refit_decision"
    twice = _rows() + [{**r, "detector": "rc2"} for r in _rows()]
    with pytest.raises(InvalidInputError, match="several RefCheckers"):
        calibrate(twice, refit_decision=out)
    assert set(calibrate(twice, detectors=["rc2"], refit_decision=out)["decision"]) >= {"path"}


ROWS = [  # (context, answer, gold)
    (0, "The harbour board built the Marlow lighthouse in 1881. It is 32 metres tall, and the "
        "old keeper's cottage has become a summer museum.", "factual"),
    (0, "The lighthouse at Marlow dates from 1881. Its lamp went electric in 1925 and the "
        "cottage is a museum now.", "factual"),
    (0, "The Marlow lighthouse was built in 1881. Queen Victoria opened it with a brass band "
        "from Leeds.", "hallucinated"),
    (0, "The harbour board built the lighthouse. It was designed by Thomas Stevenson and "
        "painted red by sailors from Norway.", "hallucinated"),
    (1, "Blue Harbour is a 1994 novel by Ann Lee about a Cornish fishing family. It sold a "
        "million copies and became a TV series in 2001.", "factual"),
    (1, "Ann Lee's novel Blue Harbour follows a family of fishers in Cornwall. Television "
        "adapted it in 2001.", "factual"),
    (1, "Blue Harbour is a novel by Ann Lee. It won the Booker Prize and was filmed in Canada "
        "by Steven Spielberg.", "hallucinated"),
    (1, "Ann Lee wrote Blue Harbour about a fishing family. Her husband Mark Lee illustrated "
        "it in Berlin.", "hallucinated"),
]  # fmt: skip
CONTEXTS = [
    "The Marlow lighthouse was built in 1881 by the harbour board. It stands 32 metres tall and "
    "its lamp was electrified in 1925. The keeper's cottage is now a museum that opens in summer.",
    "Ann Lee wrote the novel Blue Harbour in 1994. The book follows a fishing family in Cornwall "
    "and sold a million copies. It was adapted for television in 2001.",
]


def test_cli_refits_on_a_labelled_evaluate_run(tmp_path, embedder):
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "question": "Tell me about it.",
                    "answer": a,
                    "contexts": [CONTEXTS[c]],
                    "label": g,
                }
            )
            + "\n"
            for c, a, g in ROWS
        )
    )
    config = tmp_path / "config.yaml"
    # the fitted decision (decide: fitted) is what --refit-decision refits
    text = "detectors:\n  rc:\n    type: refchecker\n    options:\n      decide: fitted\n"
    config.write_text(text)
    evaluate(data, config, tmp_path / "run", progress=False)
    out = tmp_path / "decision.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run(
        [
            sys.executable, "-m", "truthguard.cli", "calibrate", str(tmp_path / "run"),
            "-c", str(config), "--refit-decision", str(out),
        ],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "decision refit on 8 labelled answers" in run.stdout and str(out) in run.stdout
    assert load_config(tmp_path / "config.calibrated.yaml").detectors["rc"].options["decision"]
    assert config.read_text() == text
    summary = json.loads((tmp_path / "run" / "calibration.json").read_text())["decision"]
    # what the refit says it decides on these rows is what RefChecker(decision=PATH) decides
    detector = RefChecker(decision=str(out), decide="fitted")
    rows = read_results(tmp_path / "run")
    results = detector.batch(
        [
            {"question": r["question"], "answer": r["answer"], "contexts": r["contexts"]}
            for r in rows
        ]
    )
    right = [r.passing for r, row in zip(results, rows, strict=True) if row["gold"] == "factual"]
    wrong = [r.passing for r, row in zip(results, rows, strict=True) if row["gold"] != "factual"]
    assert summary["after"]["correct_passed"] == 100 * sum(right) / len(right)
    assert summary["after"]["hallucinated_rejected"] == 100 * (len(wrong) - sum(wrong)) / len(wrong)


def test_refit_and_calibrate_import_one_way():
    # The operating points live in evaluation.points; refit picks its threshold there and never
    # imports calibrate, which imports refit.
    import ast
    from pathlib import Path

    import truthguard.evaluation.refit as refit

    tree = ast.parse(Path(refit.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "truthguard.evaluation.points" in imported
    assert "truthguard.evaluation.calibrate" not in imported
