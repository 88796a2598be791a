"""Calibration: curves, operating points, thresholds written back into the config."""

from __future__ import annotations

import pytest

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.evaluation.calibrate import auroc, calibrate, choose_threshold, sweep
from truthguard.evaluation.config import load_config, save_config

# low scores are hallucinated, except one factual answer at 0.3 and one hallucinated at 0.7
SCORES = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9]
HALLU = [True, True, False, True, False, True, False, False]


def test_auroc_counts_ordered_pairs():
    assert auroc([0.1, 0.9], [True, False]) == 1.0
    assert auroc([0.9, 0.1], [True, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc(SCORES, HALLU) == 0.8125  # 13 of 16 pairs ordered
    assert auroc([0.1], [True]) is None


def test_sweep_flags_scores_below_each_threshold():
    points = sweep(SCORES, HALLU)
    assert len(points) == len(SCORES) + 1
    first, last = points[0], points[-1]
    assert (first["tp"], first["fp"], first["precision"]) == (0, 0, None)
    assert (last["tp"], last["fp"], last["recall"]) == (4, 4, 1.0)
    at_04 = next(p for p in points if p["threshold"] == 0.4)  # flags 0.1, 0.2, 0.3
    assert (at_04["tp"], at_04["fp"], at_04["fn"], at_04["tn"]) == (2, 1, 2, 3)


def test_choose_threshold_for_precision_recall_and_f1():
    points = sweep(SCORES, HALLU)
    p = choose_threshold(points, "precision", 1.0)
    assert p["threshold"] == 0.3 and p["recall"] == 0.5
    r = choose_threshold(points, "recall", 1.0)
    assert r["threshold"] == 0.8 and r["precision"] == pytest.approx(4 / 6)
    f = choose_threshold(points, "f1")
    assert f["f1"] == max(q["f1"] for q in points)
    with pytest.raises(ConfigurationError, match="precision"):
        choose_threshold(sweep([0.1, 0.2], [False, True]), "precision", 0.9)
    with pytest.raises(InvalidInputError, match="value"):
        choose_threshold(points, "recall", 1.5)


def _results(scores, hallu):
    return [
        {
            "detector": "d",
            "score": s,
            "gold": "hallucinated" if h else "factual",
            "passing": None,
            "label": "factual",
        }
        for s, h in zip(scores, hallu, strict=True)
    ] + [{"detector": "d", "score": None, "gold": "factual", "label": "invalid"}]


def test_calibrate_writes_the_threshold_into_the_config(tmp_path):
    cfg_path = tmp_path / "c.toml"
    save_config(load_config({"detectors": {"d": {"type": "fake"}}}), cfg_path)
    out = calibrate(
        _results(SCORES, HALLU),
        target="precision",
        value=1.0,
        config=cfg_path,
        write_config=cfg_path,
    )
    entry = out["detectors"]["d"]
    assert entry["n"] == 8 and entry["skipped"] == 1 and entry["auroc"] == 0.8125
    assert entry["roc"][0] == (0.0, 0.0) and entry["roc"][-1] == (1.0, 1.0)
    cfg = load_config(cfg_path)
    assert cfg.detectors["d"].threshold == 0.3
    assert cfg.detectors["d"].calibration["precision"] == 1.0
    # the detector built from the calibrated config now flags below 0.3
    from truthguard.evaluation.config import build_detectors

    assert build_detectors(cfg)["d"].threshold == 0.3


def test_calibrate_needs_both_classes_and_known_detectors(tmp_path):
    with pytest.raises(InvalidInputError, match="label"):
        calibrate(_results([0.1, 0.2], [True, True]))
    with pytest.raises(InvalidInputError, match="detectors"):
        calibrate(_results(SCORES, HALLU), detectors=["other"])
    with pytest.raises(InvalidInputError, match="config"):
        calibrate(_results(SCORES, HALLU), write_config=tmp_path / "x.yaml")
