"""Detection metrics: AUROC and precision / recall / F1 (pure functions, unrounded).

Hallucinated is the positive class throughout, and a low score means hallucinated (as every
truthguard detector scores). Callers round for display.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["auroc", "confusion", "precision_recall_f1"]


def auroc(scores: Sequence[float], hallucinated: Sequence[bool]) -> float | None:
    """Chance that a hallucinated answer scores below a factual one (ties count half).

    None when either class is missing.

    Example:
        >>> auroc([0.1, 0.5, 0.9], [True, False, False])
        1.0
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(hallucinated, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    # Mann-Whitney U with mid-ranks, on negated scores (low score = positive).
    order = np.argsort(-s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = -s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def confusion(flagged: Sequence[bool], hallucinated: Sequence[bool]) -> tuple[int, int, int]:
    """``(tp, fp, fn)`` of the predictions ``flagged`` against the gold ``hallucinated``."""
    pairs = list(zip(flagged, hallucinated, strict=True))
    tp = sum(1 for f, g in pairs if f and g)
    fp = sum(1 for f, g in pairs if f and not g)
    fn = sum(1 for f, g in pairs if g and not f)
    return tp, fp, fn


def precision_recall_f1(
    tp: int, fp: int, fn: int
) -> tuple[float | None, float | None, float | None]:
    """Precision, recall and F1 from counts; each None where it is undefined (0 / 0).

    Example:
        >>> precision_recall_f1(tp=3, fp=1, fn=3)
        (0.75, 0.5, 0.6)
    """
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None or not precision + recall:
        return precision, recall, None
    return precision, recall, 2 * precision * recall / (precision + recall)
