from __future__ import annotations

import random

import pytest

from truthguard.metrics import auroc, confusion, precision_recall_f1


def pairwise_auroc(scores: list[float], hallucinated: list[bool]) -> float:
    """Every (hallucinated, factual) pair: 1 when the hallucinated one scores lower, 0.5 tied."""
    low = [s for s, h in zip(scores, hallucinated, strict=True) if h]
    high = [s for s, h in zip(scores, hallucinated, strict=True) if not h]
    wins = sum(1.0 if a < b else 0.5 if a == b else 0.0 for a in low for b in high)
    return wins / (len(low) * len(high))


def test_auroc_orders_hallucinated_below_factual():
    assert auroc([0.1, 0.9], [True, False]) == 1.0
    assert auroc([0.9, 0.1], [True, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc([0.2, 0.3, 0.3, 0.8], [True, True, False, False]) == 0.875


def test_auroc_is_none_without_both_classes():
    assert auroc([0.1, 0.2], [True, True]) is None
    assert auroc([0.1], [False]) is None
    assert auroc([], []) is None


def test_auroc_is_not_rounded():
    # 6 of the 9 (hallucinated, factual) pairs are ordered.
    assert auroc([0.1, 0.4, 0.7, 0.3, 0.5, 0.9], [True] * 3 + [False] * 3) == 2 / 3


@pytest.mark.parametrize("seed", range(20))
def test_auroc_equals_the_pairwise_count_with_ties(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    scores = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, rng.random()]) for _ in range(n)]
    labels = [rng.random() < 0.4 for _ in range(n)]
    labels[0], labels[1] = True, False  # both classes present
    assert auroc(scores, labels) == pairwise_auroc(scores, labels)


def test_confusion_counts_against_gold():
    flagged = [True, True, False, False, True]
    gold = [True, False, True, False, True]
    assert confusion(flagged, gold) == (2, 1, 1)
    assert confusion([], []) == (0, 0, 0)
    with pytest.raises(ValueError):
        confusion([True], [True, False])


def test_precision_recall_f1():
    assert precision_recall_f1(3, 1, 3) == (0.75, 0.5, pytest.approx(0.6))
    assert precision_recall_f1(2, 0, 0) == (1.0, 1.0, 1.0)


def test_undefined_figures_are_none():
    assert precision_recall_f1(0, 0, 3) == (None, 0.0, None)  # nothing flagged
    assert precision_recall_f1(0, 2, 0) == (0.0, None, None)  # nothing to find
    assert precision_recall_f1(0, 2, 3) == (0.0, 0.0, None)  # 0 / 0 F1
    assert precision_recall_f1(0, 0, 0) == (None, None, None)
