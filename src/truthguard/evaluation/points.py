"""Operating points: every threshold of a score over labelled answers, and the one to pick.

Hallucinated is the positive class and an answer is flagged when its score is *below* the
threshold (``passing = score >= threshold``, as everywhere in truthguard). Threshold choice
(:mod:`~truthguard.evaluation.calibrate`) and the decision refit
(:mod:`~truthguard.evaluation.refit`) both pick their point here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from truthguard import metrics
from truthguard.errors import ConfigurationError, InvalidInputError

__all__ = ["OperatingPoint", "Target", "auroc", "choose_threshold", "sweep"]

Target = Literal["precision", "recall", "f1"]
OperatingPoint = dict[str, Any]


def auroc(scores: Sequence[float], hallucinated: Sequence[bool]) -> float | None:
    """Chance that a hallucinated answer scores below a factual one (ties half), to 4 places."""
    value = metrics.auroc(scores, hallucinated)
    return None if value is None else round(value, 4)


def sweep(scores: Sequence[float], hallucinated: Sequence[bool]) -> list[OperatingPoint]:
    """Every operating point: threshold, tp / fp / fn / tn, precision, recall, fpr, f1.

    Thresholds are the distinct scores plus one just above the largest (flag everything), in
    increasing order, so the first point flags nothing below the smallest score.
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(hallucinated, dtype=bool)
    if len(s) != len(y):
        raise InvalidInputError("hallucinated", "needs one label per score")
    if len(s) == 0 or not np.all(np.isfinite(s)):
        raise InvalidInputError("scores", "needs at least one score, all finite")
    values = np.unique(s)
    thresholds = [*values.tolist(), float(np.nextafter(values[-1], math.inf))]
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    points = []
    for t in thresholds:
        flagged = s < t
        tp = int((flagged & y).sum())
        fp = int((flagged & ~y).sum())
        fn = n_pos - tp
        tn = n_neg - fp
        precision, recall, f1 = metrics.precision_recall_f1(tp, fp, fn)
        points.append(
            {
                "threshold": float(t),
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "tn": tn,
                "precision": precision,
                "recall": recall,
                "fpr": fp / n_neg if n_neg else None,
                "f1": 0.0 if f1 is None else f1,
            }
        )
    return points


def choose_threshold(
    points: list[OperatingPoint], target: Target, value: float | None = None
) -> OperatingPoint:
    """The operating point meeting ``target >= value`` with the best other figure.

    ``precision``: highest recall among points with precision >= value; ``recall``: highest
    precision among points with recall >= value; ``f1``: highest F1 (``value`` unused).

    Raises:
        ConfigurationError: No point reaches the target (the message gives the best one).
    """
    if target not in ("precision", "recall", "f1"):
        raise InvalidInputError("target", f"expected precision, recall or f1, got {target!r}")
    if target == "f1":
        return max(points, key=lambda p: (p["f1"], -p["threshold"]))
    if value is None or not 0 < value <= 1:
        raise InvalidInputError("value", f"a {target} target must be in (0, 1]")
    other = "recall" if target == "precision" else "precision"
    ok = [p for p in points if p[target] is not None and p[target] >= value]
    if not ok:
        best = max((p[target] or 0.0) for p in points)
        raise ConfigurationError(
            f"no threshold reaches {target} >= {value:.3f} on this sample (best {best:.3f})"
        )
    # Ties: the smaller threshold for precision (fewer flags), the larger for recall.
    sign = -1 if target == "precision" else 1
    return max(ok, key=lambda p: (p[other] or 0.0, sign * p["threshold"]))
