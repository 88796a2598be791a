"""Whether a claim says more than its evidence, read from what the two sentences mean.

The grounding looks a claim's names, numbers and words up in the sources. That tells a wrong
value apart, but an addition made of the passage's own words ("Its observation deck sits on the
75th floor and offers views of the whole bay") reads as supported, and a paraphrase in other
words ("The girl is Dev") as unsupported.

:class:`MeaningModel` reads what the claim's sentence means against what its closest evidence
sentences mean: the packaged MiniLM's sentence embeddings of the claim and of what it is held
against (which the check computes anyway to find the evidence), combined as their element-wise
product and absolute difference (the features sentence-pair classifiers have long used: which
meanings the two share, and where they part), their cosine, and the cosines of the three
closest sentences, read by a logistic model fitted on hand-written claim-evidence pairs
(``benchmarks/data/claims_train``; ``benchmarks/fit_meaning_model.py``). A claim is held
against its closest sentence and against each two of the three closest read together, and the
reading that supports it best counts: a correct sentence often joins two of the sources'.
It tells an entailment from an unsupported addition well (held-out AUROC 0.94 on
``claims_relations``; 0.92 when held against one sentence only) and a changed value not at all
(two such sentences embed almost alike: the grounding's facts do that).

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
"""How many of the claim's closest evidence sentences' cosines are read, and among how many of
them two are read together as one."""


def _candidates(sentences: np.ndarray, order: np.ndarray) -> np.ndarray:
    """What a claim may be read against (one normalised row each), from the indices of its
    closest sentences, closest first: its closest evidence sentence, then each two of the
    :data:`CLOSEST` closest read together (the normalised sum of their vectors, which is near
    what the two sentences embed to as one text). A claim that joins two sentences ("It opened
    in 2004 and runs for 14.6 km") says more than either alone, and an unsupported addition
    says more than any of them."""
    if not len(order):
        return np.zeros((0, sentences.shape[1]))
    rows = [sentences[order[0]]]
    for a in range(len(order)):
        for b in range(a + 1, len(order)):
            joined = sentences[order[a]] + sentences[order[b]]
            norm = float(np.linalg.norm(joined))
            if norm > 0:
                rows.append(joined / norm)
    return np.array(rows)


def pair_features(claim: np.ndarray, sentences: np.ndarray) -> np.ndarray:
    """The features of one claim vector against each of its :func:`_candidates` (one row
    each): product and absolute difference with the candidate, its cosine with the claim, then
    the :data:`CLOSEST` best cosines of single sentences (0 where there are fewer). No
    evidence: one row of zeros."""
    claim = np.asarray(claim, dtype=np.float64)
    sentences = np.asarray(sentences, dtype=np.float64).reshape(-1, len(claim))
    if not len(sentences):
        return np.zeros((1, 2 * len(claim) + 1 + CLOSEST))
    cos = sentences @ claim
    order = np.argsort(-cos, kind="stable")[:CLOSEST]
    read = _candidates(sentences, order)
    top = np.zeros(CLOSEST)
    top[: len(order)] = cos[order]
    return np.array(
        [np.concatenate([claim * c, np.abs(claim - c), [float(c @ claim)], top]) for c in read]
    )


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
        return (len(self.weights) - CLOSEST - 1) // 2

    def log_odds(self, claim: np.ndarray, sentences: np.ndarray) -> float | None:
        """Log-odds that ``sentences`` support ``claim``, read against the candidate that
        supports it best (:func:`_candidates`); None for vectors of another width."""
        if np.shape(claim)[-1] != self.dimension:
            return None
        return max(min(self.best(pair_features(claim, sentences)), 30.0), -30.0)

    def read(self, features: np.ndarray) -> np.ndarray:
        """The log-odds of each row of :func:`pair_features`."""
        return np.asarray(features) @ np.asarray(self.weights) + self.intercept

    def best(self, features: np.ndarray) -> float:
        """The log-odds of the candidate that supports the claim best."""
        return float(np.max(self.read(features)))

    @classmethod
    def fit(
        cls,
        features: np.ndarray,
        supported: Sequence[bool],
        *,
        l2: float = 3000.0,
        fitted_on: str = "",
    ) -> MeaningModel:
        """Fit on rows of features, one row per claim, each class weighted to half the total."""
        weights, intercept = fit_folded(
            features, supported, l2, rows="features", classes="supported and unsupported claims"
        )
        return cls(weights=weights, intercept=intercept, fitted_on=fitted_on)

    @classmethod
    def fit_read(
        cls,
        features: Sequence[np.ndarray],
        supported: Sequence[bool],
        *,
        l2: float = 3000.0,
        fitted_on: str = "",
    ) -> MeaningModel:
        """Fit on each claim's :func:`pair_features` (several candidates a claim): first on the
        closest sentence alone, then once more on the candidate that first model reads as
        supporting the claim best, which is how :meth:`log_odds` reads a claim."""
        first = cls.fit(np.array([f[0] for f in features]), supported, l2=l2)
        chosen = np.array([f[int(np.argmax(first.read(f)))] for f in features])
        return cls.fit(chosen, supported, l2=l2, fitted_on=fitted_on)
