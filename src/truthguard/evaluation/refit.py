"""Refit RefChecker's answer-level decision on your own labelled results.

``truthguard calibrate RESULTS -c CONFIG --refit-decision OUT.json`` reads the results of a
``truthguard evaluate`` run with gold labels, refits the logistic model of
:class:`~truthguard.refchecker.decision.GroundingDecision` on the answers it weighed, chooses its
threshold for the calibration target, and saves the decision to ``OUT.json``, which
``RefChecker(decision="OUT.json", decide="fitted")`` (or ``decision: OUT.json`` with ``decide:
fitted`` in a config's options) loads.

Which rows teach what:

* an answer the model weighed (``details["decision"]["decided_by"] == "answer"``) is a fitting
  row: its features are recomputed from its claims (:func:`~truthguard.refchecker.decision.
  answer_features`); when those are all of one kind (every factual answer had all its claims
  entailed, say), the answers the rules decided are fitted on too;
* an answer its claims decided (a contradicted claim, every claim entailed, a short direct
  answer) keeps that outcome: the rules and their options are kept from the decision the run
  used, only the coefficients and the threshold change;
* an answer without a decision (no claims, a refusal, another checker) keeps its outcome.

The threshold is chosen over every labelled answer, the fixed ones included, so the figures
reported are those the refit decision gives on these rows (in-sample: check it on rows it did
not see before trusting it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from truthguard import metrics
from truthguard.errors import InvalidInputError
from truthguard.evaluation.points import choose_threshold

__all__ = ["base_decision", "refit_decision"]


def base_decision(options: dict[str, Any] | None = None) -> Any:
    """The decision a run used: its config options' ``decision`` (a mapping or a file), else
    the packaged one."""
    from truthguard.refchecker.decision import GroundingDecision

    given = (options or {}).get("decision")
    if given is None:
        return GroundingDecision.default()
    if isinstance(given, dict):
        return GroundingDecision.model_validate(given)
    return GroundingDecision.load(given)


def _outcomes(
    rows: Sequence[dict[str, Any]],
) -> tuple[
    list[dict[str, float]], list[bool], list[tuple[bool, bool]], list[tuple[dict[str, float], bool]]
]:
    """(features, gold) of the answers the model weighed, (gold, flagged) of the answers decided
    already, and (features, gold) of those among them that have features."""
    from truthguard.refchecker.decision import FEATURES, answer_features

    features: list[dict[str, float]] = []
    gold: list[bool] = []
    fixed: list[tuple[bool, bool]] = []
    ruled: list[tuple[dict[str, float], bool]] = []
    for r in rows:
        hallucinated = r["gold"] == "hallucinated"
        details = r.get("details") or {}
        decision = details.get("decision")
        if not decision:
            passed = r["passing"] if r.get("passing") is not None else r["label"] == "factual"
            fixed.append((hallucinated, not passed))
            continue
        if decision.get("decided_by") != "answer":
            flagged = float(decision["p_hallucinated"]) >= float(decision["threshold"])
            fixed.append((hallucinated, flagged))
            feats = answer_features(details.get("claims") or [])
            if feats is not None:
                ruled.append((feats, hallucinated))
            continue
        feats = answer_features(details.get("claims") or [])
        if feats is None:
            recorded = decision.get("features") or {}
            if not all(name in recorded for name in FEATURES):
                # written by another version: nothing to fit on, its outcome stays
                fixed.append(
                    (
                        hallucinated,
                        float(decision["p_hallucinated"]) >= float(decision["threshold"]),
                    )
                )
                continue
            feats = {name: float(recorded[name]) for name in FEATURES}
        features.append(feats)
        gold.append(hallucinated)
    return features, gold, fixed, ruled


def _figures(pairs: Sequence[tuple[bool, bool]]) -> dict[str, float | None]:
    """Correct passed, hallucinated rejected (percent) and their mean, from (gold, flagged)."""
    right = [flagged for hallucinated, flagged in pairs if not hallucinated]
    wrong = [flagged for hallucinated, flagged in pairs if hallucinated]
    passed = 100 * sum(not f for f in right) / len(right) if right else None
    rejected = 100 * sum(wrong) / len(wrong) if wrong else None
    balanced = None if passed is None or rejected is None else (passed + rejected) / 2
    return {
        "correct_passed": None if passed is None else round(passed, 1),
        "hallucinated_rejected": None if rejected is None else round(rejected, 1),
        "balanced_accuracy": None if balanced is None else round(balanced, 1),
    }


def refit_decision(
    rows: Sequence[dict[str, Any]],
    out: str | Path,
    *,
    base: Any = None,
    target: str = "f1",
    value: float | None = None,
    l2: float = 1.0,
    source: str = "",
) -> dict[str, Any]:
    """Refit a ``GroundingDecision`` on one RefChecker's labelled result rows and save it.

    Args:
        rows: Result rows of one local RefChecker (``truthguard evaluate``), gold labels set.
        out: Where to write the decision (JSON).
        base: The decision the run used (default: the packaged one); its rules are kept.
        target: ``precision``, ``recall`` (each with ``value``) or ``f1``: what the threshold
            reaches on hallucinated answers, as ``truthguard calibrate`` chooses thresholds.
        value: The precision or recall to reach.
        l2: Penalty on the standardised coefficients.
        source: Where the rows come from (recorded in ``fitted_on``).

    Returns:
        What was fitted: rows used, the threshold, figures before and after on these rows.

    Raises:
        InvalidInputError: Too few labelled answers of each kind weighed by the model.
    """
    from truthguard.refchecker.decision import GroundingDecision

    labelled = [r for r in rows if r.get("gold") is not None]
    if any(
        ((r.get("details") or {}).get("decision") or {}).get("form") == "support" for r in labelled
    ):
        raise InvalidInputError(
            "decide",
            "the run's RefChecker decided by its support model (the default, decide: support); "
            "--refit-decision refits the fitted decision: run evaluate with the detector's "
            "options holding decide: fitted",
        )
    features, gold, fixed, ruled = _outcomes(labelled)
    fit_x, fit_y = features, gold
    if len(set(gold)) < 2:
        # one kind only among the weighed answers: learn from the rule-decided ones as well
        fit_x = features + [f for f, _ in ruled]
        fit_y = gold + [g for _, g in ruled]
    if not features or len(set(fit_y)) < 2:
        raise InvalidInputError(
            "label",
            f"{len(features)} labelled answer(s) were weighed by the decision's model, "
            f"{len(fit_y) - len(features)} more have claims to learn from; refitting needs "
            "both hallucinated and factual ones among them",
        )
    base = base if base is not None else GroundingDecision.default()
    fitted = GroundingDecision.fit(fit_x, fit_y, l2=l2)
    probs = [fitted.probability(f) for f in features]
    candidates = sorted({min(max(p, 1e-6), 1 - 1e-6) for p in probs} | {0.5})
    points = []
    for t in candidates:
        flagged = [(g, p >= t) for g, p in zip(gold, probs, strict=True)] + fixed
        tp = sum(g and f for g, f in flagged)
        fp = sum(f and not g for g, f in flagged)
        fn = sum(g and not f for g, f in flagged)
        precision, recall, f1 = metrics.precision_recall_f1(tp, fp, fn)
        # in score space (1 - P): calibrate's tie rules then mean what they say there
        points.append(
            {"threshold": 1 - t, "precision": precision, "recall": recall, "f1": f1 or 0.0}
        )
    chosen = choose_threshold(points, target, value)  # type: ignore[arg-type]
    threshold = 1 - chosen["threshold"]
    note = source or "labelled results"
    decision = base.model_copy(
        update={
            "coefficients": fitted.coefficients,
            "means": fitted.means,
            "scales": fitted.scales,
            "intercept": fitted.intercept,
            "threshold": threshold,
            "chat_offset": 0.0,  # one threshold for the user's own rows, chat or not
            "forms": {},  # and one model for every form of answer
            "fitted_on": (
                f"truthguard calibrate --refit-decision: {len(labelled)} labelled answers of "
                f"{note} ({len(features)} weighed by the model, fitted on {len(fit_x)}); "
                f"l2={l2}; threshold for "
                f"{target}" + ("" if value is None else f" >= {value}")
            ),
        }
    )
    decision = GroundingDecision.model_validate(decision.model_dump())
    decision.save(out)
    after = [(g, p >= threshold) for g, p in zip(gold, probs, strict=True)] + fixed
    before: list[tuple[bool, bool]] = []
    for r in labelled:
        passed = r["passing"] if r.get("passing") is not None else r["label"] == "factual"
        before.append((r["gold"] == "hallucinated", not passed))
    return {
        "path": str(out),
        "n": len(labelled),
        "weighed_rows": len(features),
        "fitted_rows": len(fit_x),
        "fixed_rows": len(fixed),
        "threshold": round(threshold, 4),
        "precision": None if chosen["precision"] is None else round(chosen["precision"], 4),
        "recall": None if chosen["recall"] is None else round(chosen["recall"], 4),
        "f1": round(chosen["f1"], 4),
        "before": _figures(before),
        "after": _figures(after),
    }
