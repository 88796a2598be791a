"""The calibrated answer-level decision: features from claims, the logistic model, its file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError

from truthguard.refchecker.decision import FEATURES, GroundingDecision, answer_features


def _claim(label, issues=(), precision=1.0, cosine=0.8, n_facts=1, n_content=4):
    raw = {"precision": precision, "cosine": cosine, "n_facts": n_facts, "n_content": n_content}
    return {"label": label, "issues": [dict(i) for i in issues], "checker_output": json.dumps(raw)}


def test_features_summarise_the_claims():
    claims = [
        _claim("Entailment"),
        _claim(
            "Contradiction",
            [{"kind": "number", "relation": "conflict"}, {"kind": "content", "relation": "u"}],
            precision=0.5,
            cosine=0.4,
            n_facts=2,
        ),
    ]
    f = answer_features(claims)
    assert f is not None and set(f) == set(FEATURES)
    assert f["entailed"] == 0.5 and f["contradicted"] == 0.5 and f["any_contradiction"] == 1.0
    assert f["facts_missing"] == pytest.approx(1 / 3)
    assert f["numbers_missing"] == pytest.approx(math.log1p(1)) and f["names_missing"] == 0.0
    assert f["content_missing"] == pytest.approx(1 / 8)
    assert f["min_precision"] == 0.5 and f["mean_cosine"] == pytest.approx(0.6)


def test_no_features_without_claims_or_without_grounding_numbers():
    assert answer_features([]) is None
    llm_labelled = [{"label": "Entailment", "issues": [], "checker_output": "Entailment"}]
    assert answer_features(llm_labelled) is None


def test_fit_separates_the_classes_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    rows, gold = [], []
    for _ in range(200):
        bad = bool(rng.integers(0, 2))
        f = {name: float(rng.normal(0.0, 0.1)) for name in FEATURES}
        f["facts_missing"] += 1.0 if bad else 0.0
        rows.append(f)
        gold.append(bad)
    d = GroundingDecision.fit(rows, gold, threshold=0.4, fitted_on="synthetic")
    assert d.coefficients["facts_missing"] > 1.0
    probs = [d.probability(f) for f in rows]
    assert all((p >= 0.5) == g for p, g in zip(probs, gold, strict=True))
    d.save(tmp_path / "d.json")
    again = GroundingDecision.load(tmp_path / "d.json")
    assert again == d and again.threshold == 0.4


def test_fit_refuses_a_single_class():
    with pytest.raises(ValueError, match="both"):
        GroundingDecision.fit([dict.fromkeys(FEATURES, 0.0)] * 3, [True, True, True])


def test_the_packaged_decision_is_complete_and_small():
    d = GroundingDecision.default()
    assert set(d.coefficients) == set(FEATURES) and 0.0 < d.threshold < 1.0
    assert "HaluEval" in d.fitted_on
    assert len(d.model_dump_json()) < 8_192


def test_a_decision_names_what_is_missing_or_not_finite():
    zeros = dict.fromkeys(FEATURES, 0.0)
    with pytest.raises(ValidationError, match="missing features"):
        GroundingDecision(coefficients={}, means=zeros, scales=zeros, intercept=0.0)
    with pytest.raises(ValidationError, match="finite"):
        GroundingDecision(
            coefficients={**zeros, "entailed": float("nan")}, means=zeros, scales=zeros, intercept=0
        )
    with pytest.raises(ValidationError):
        GroundingDecision(coefficients=zeros, means=zeros, scales=zeros, intercept=0, threshold=1.5)
