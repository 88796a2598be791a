"""RefChecker aggregation rules and numeric scores."""

from __future__ import annotations

import pytest

from truthguard.refchecker import (
    ABSTAIN,
    aggregate,
    major_agg,
    response_score,
    soft_agg,
    strict_agg,
)

E, N, C = "Entailment", "Neutral", "Contradiction"


def test_strict():
    assert strict_agg([E, E]) == E
    assert strict_agg([E, N, E]) == N
    assert strict_agg([N, C, E]) == C
    assert strict_agg([]) == ABSTAIN


def test_soft_ratios():
    assert soft_agg([E, E, N]) == pytest.approx({E: 2 / 3, N: 1 / 3, C: 0.0, ABSTAIN: 0.0})
    assert soft_agg([]) == {E: 0.0, N: 0.0, C: 0.0, ABSTAIN: 1.0}
    assert sum(soft_agg([E, N, C, C, E, E, E]).values()) == pytest.approx(1.0)


def test_major_with_upstream_tie_rule():
    assert major_agg([N, E, E]) == E
    assert major_agg([C, E, E, C, N]) == C  # tie between C and E: the first seen wins
    assert major_agg([E, C]) == E
    assert major_agg([]) == ABSTAIN


def test_aggregate_bundles_all_three():
    assert aggregate([E, C]) == {"strict": C, "soft": soft_agg([E, C]), "major": E}


def test_scores():
    labels, supports = [E, N, E, C], [0.9, 0.4, 0.8, 0.1]
    assert response_score(labels, supports) == 0.5
    assert response_score(labels, supports, "mean_support") == pytest.approx(0.55)
    assert response_score(labels, supports, "min_support") == pytest.approx(0.1)
    assert response_score([], [], "min_support") is None
    with pytest.raises(ValueError):
        response_score([E], [], "mean_support")
