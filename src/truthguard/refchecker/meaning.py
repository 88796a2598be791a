"""Whether a claim says more than its evidence, read from what the two sentences mean.

The grounding looks a claim's names, numbers and words up in the sources. That tells a wrong
value apart, but an addition made of the passage's own words ("Its observation deck sits on the
75th floor and offers views of the whole bay") reads as supported, and a paraphrase in other
words ("The girl is Dev") as unsupported.

:class:`MeaningModel` reads what the claim's sentence means against what its closest evidence
sentences mean: the packaged MiniLM's sentence embeddings of the claim and of its closest
evidence sentence (which the check computes anyway to find the evidence), combined as their
element-wise product and absolute difference (the features sentence-pair classifiers have long
used: which meanings the two share, and where they part), and the cosines of the three closest
sentences, read by a logistic model fitted on hand-written claim-evidence pairs
(``benchmarks/data/claims_train``; ``benchmarks/fit_meaning_model.py``). It tells an entailment
from an unsupported addition well (held-out AUROC 0.92 on ``claims_relations``) and a changed
value not at all (two such sentences embed almost alike: the grounding's facts do that).

Its log-odds is recorded on every fact claim (``checker_output["meaning"]``) and, for the least
supported one, on the answer (``details["decision"]["meaning"]``), but it does not decide: as a
feature of the support model it rejected correct multi-sentence answers (DEVELOPERS.md). Where
it doubts an answer the local check passed, the two readings part ways, which is what a
cascade's ``meaning`` signal escalates (:func:`truthguard.cascade.escalation_reasons`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import ConfigDict

from truthguard.refchecker._logistic import SavedModel, fit_folded

__all__ = ["CLOSEST", "MeaningModel", "pair_features"]

CLOSEST = 3
"""How many of the claim's closest evidence sentences' cosines are read."""


def pair_features(claim: np.ndarray, sentences: np.ndarray) -> np.ndarray:
    """The features of one claim vector against its evidence sentences' vectors (one row
    each, normalised): product and absolute difference with the closest sentence, then the
    :data:`CLOSEST` best cosines (0 where there are fewer sentences)."""
    claim = np.asarray(claim, dtype=np.float64)
    sentences = np.asarray(sentences, dtype=np.float64).reshape(-1, len(claim))
    if not len(sentences):
        return np.concatenate([np.zeros(2 * len(claim)), np.zeros(CLOSEST)])
    cos = sentences @ claim
    order = np.argsort(-cos, kind="stable")
    best = sentences[order[0]]
    top = np.zeros(CLOSEST)
    top[: min(CLOSEST, len(cos))] = cos[order[:CLOSEST]]
    return np.concatenate([claim * best, np.abs(claim - best), top])


class MeaningModel(SavedModel):
    """The log-odds that the evidence supports a claim, from :func:`pair_features`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    packaged = "meaning.json"

    weights: list[float]
    """One weight per feature (standardisation folded in)."""
    intercept: float
    embedding: str = "all-MiniLM-L6-v2"
    """The embedding model whose vectors the weights read."""
    fitted_on: str = ""

    @property
    def dimension(self) -> int:
        """The width of the sentence embeddings the model reads."""
        return (len(self.weights) - CLOSEST) // 2

    def log_odds(self, claim: np.ndarray, sentences: np.ndarray) -> float | None:
        """Log-odds that ``sentences`` support ``claim``; None for vectors of another width."""
        if np.shape(claim)[-1] != self.dimension:
            return None
        z = float(pair_features(claim, sentences) @ np.asarray(self.weights)) + self.intercept
        return max(min(z, 30.0), -30.0)

    @classmethod
    def fit(
        cls,
        features: np.ndarray,
        supported: Sequence[bool],
        *,
        l2: float = 3000.0,
        fitted_on: str = "",
    ) -> MeaningModel:
        """Fit on rows of :func:`pair_features`, each class weighted to half the total."""
        weights, intercept = fit_folded(
            features, supported, l2, rows="features", classes="supported and unsupported claims"
        )
        return cls(weights=weights, intercept=intercept, fitted_on=fitted_on)
