"""Response-level aggregation of claim labels, as RefChecker defines it, plus numeric scores.

* ``strict``: Contradiction if any claim is Contradiction, else Neutral if any is Neutral, else
  Entailment.
* ``soft``: the share of each label among the claims.
* ``major``: the most frequent label; on a tie, the tied label that occurs first among the claims
  (upstream takes ``Counter(labels).most_common(1)``, whose ties keep first-seen order).

A response with no claim ``Abstain``s under every rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "ABSTAIN",
    "ScoreMode",
    "aggregate",
    "major_agg",
    "response_score",
    "soft_agg",
    "strict_agg",
]

ABSTAIN = "Abstain"
"""The aggregate of a response from which no claim was extracted."""

ScoreMode = Literal["entailment_ratio", "mean_support", "min_support"]


def strict_agg(labels: Sequence[str]) -> str:
    """Zero tolerance: one Contradiction (or else one Neutral) decides."""
    if not labels:
        return ABSTAIN
    if "Contradiction" in labels:
        return "Contradiction"
    if "Neutral" in labels:
        return "Neutral"
    return "Entailment"


def soft_agg(labels: Sequence[str]) -> dict[str, float]:
    """Share of each label; ``{"Abstain": 1.0}`` and zeros when there is no claim."""
    out = {"Entailment": 0.0, "Neutral": 0.0, "Contradiction": 0.0, ABSTAIN: 0.0}
    if not labels:
        out[ABSTAIN] = 1.0
        return out
    for label, count in Counter(labels).items():
        out[label] = count / len(labels)
    return out


def major_agg(labels: Sequence[str]) -> str:
    """Majority label; ties go to the tied label seen first."""
    if not labels:
        return ABSTAIN
    return Counter(labels).most_common(1)[0][0]


def aggregate(labels: Sequence[str]) -> dict[str, object]:
    """All three aggregates of one response."""
    return {"strict": strict_agg(labels), "soft": soft_agg(labels), "major": major_agg(labels)}


def response_score(
    labels: Sequence[str], supports: Sequence[float], mode: ScoreMode = "entailment_ratio"
) -> float | None:
    """The numeric score of a response (higher = better supported); None when it abstains.

    Args:
        labels: The claims' labels.
        supports: The claims' support values in [0, 1] (see the checkers).
        mode: ``entailment_ratio`` (share of Entailment claims, upstream's soft Entailment),
            ``mean_support`` (mean support) or ``min_support`` (support of the least-supported
            claim: one unsupported claim pulls the whole response down, like ``strict``).
    """
    if len(labels) != len(supports):
        raise ValueError("labels and supports must align")
    if not labels:
        return None
    if mode == "entailment_ratio":
        return soft_agg(labels)["Entailment"]
    if mode == "mean_support":
        return float(sum(supports) / len(supports))
    if mode == "min_support":
        return float(min(supports))
    raise ValueError(f"unknown score mode {mode!r}")
