"""Remarks about the sources, told from facts about the world by meaning.

A RAG answer often says what its passages do not: "The passage doesn't say when it closed",
"Beyond her stage name, it tells us nothing about her", "so I can't confirm whether that was
McGovern too", "strictly speaking it calls Procope a café". Such a remark states nothing about
the world, so holding its words against the passages rejects a correct answer; only the names
and numbers in it are still checked (a remark can misquote the passage). The wording of remarks
is open-ended, so no list of patterns covers it.

:class:`RemarkModel` reads a claim's sentence embedding (the packaged MiniLM's, which the check
computes anyway to find each claim's evidence) with a logistic model fitted on hand-written
remarks and facts (``benchmarks/data/remarks``; ``benchmarks/fit_remark_model.py``): remarks in
five families (the sources' silence, their limits, what the answerer cannot tell, caveats on the
sources' wording, and clause fragments of all of these) and facts of which more than half use a
remark's words about the world ("The treaty never named a successor", "The passage of the bill
took two years", "She declined to say where she was born"). A fact claim whose probability of
being a remark reaches the model's threshold is read as a hedge (:func:`read_remarks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from pydantic import ConfigDict, Field

from truthguard.refchecker._analysis import analyse
from truthguard.refchecker._logistic import SavedModel, fit_folded
from truthguard.refchecker.derived import WEEKDAYS
from truthguard.refchecker.extractors import Claim

__all__ = ["RemarkModel", "names_a_reader", "read_remarks"]

# What a remark is about: the sources, with a determiner as an answer points at them ("the
# passage", "this text", "your documents"; "Article 672 of the Civil Code" is no source), or
# the answerer and the user reading them. A sentence naming neither states something about the
# world, however its words sound ("Cersei says it to Eddard while Robert is away").
_READER = re.compile(
    r"\b(?:(?:the|this|that|these|those|your|my|our)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:passages?|texts?|sources?|context|articles?|documents?|excerpts?|references?|"
    r"material|snippets?|paragraphs?|extracts?)"
    r"|i|i'm|i'd|i've|i'll|me|my|we|us|our|you|your)\b",
    re.IGNORECASE,
)


def names_a_reader(sentence: str) -> bool:
    """Whether ``sentence`` names the sources, the answerer or the user: what a remark is about."""
    return bool(_READER.search(sentence.replace("’", "'")))


_USER = re.compile(r"^(?:you|your)$", re.IGNORECASE)


def _states_a_value_to_the_user(claim: str) -> bool:
    """Whether ``claim`` states a number, a date or a weekday and names no source and no
    answerer, only the user ("You can close it after 72 hours, so from 9am on Thursday",
    "you'd pay £1,077 a month"): what the sources say, applied to the user's case, is a fact
    however it sounds."""
    named = [m.group(0) for m in _READER.finditer(claim.replace("’", "'"))]
    if not named or not all(_USER.match(n) for n in named):
        return False
    return any(
        f.kind in ("number", "month") or (f.kind == "name" and f.value in WEEKDAYS)
        for f in analyse(claim).facts
    )


class RemarkModel(SavedModel):
    """``P(remark)`` of a claim from its sentence embedding, and the cut that makes it one."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    packaged = "remarks.json"

    weights: list[float]
    """One weight per embedding dimension (standardisation folded in)."""
    intercept: float
    threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    """A fact claim at or above this ``P(remark)`` is read as a hedge."""
    embedding: str = "all-MiniLM-L6-v2"
    """The embedding model whose vectors the weights read."""
    fitted_on: str = ""

    @property
    def dimension(self) -> int:
        return len(self.weights)

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """``P(remark)`` of each row of ``vectors`` (normalised sentence embeddings)."""
        z = np.asarray(vectors, dtype=np.float64) @ np.asarray(self.weights) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))

    @classmethod
    def fit(
        cls,
        vectors: np.ndarray,
        is_remark: Sequence[bool],
        *,
        l2: float = 1.0,
        threshold: float = 0.5,
        fitted_on: str = "",
    ) -> RemarkModel:
        """Fit on labelled sentence embeddings, each class weighted to half the total."""
        weights, intercept = fit_folded(
            vectors, is_remark, l2, rows="vectors", classes="remarks and facts"
        )
        return cls(weights=weights, intercept=intercept, threshold=threshold, fitted_on=fitted_on)


def read_remarks(
    claims: Sequence[Claim], vectors: np.ndarray, model: RemarkModel
) -> tuple[list[Claim], list[float | None]]:
    """The claims with each fact that reads as a remark made a hedge, and each fact's
    ``P(remark)`` (None for the claims the rules already named: questions, hedges, ...).

    ``vectors`` holds one sentence embedding per claim, by the model's embedding; vectors of
    another width (a user's own embedding model) leave every claim as it is."""
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[1] != model.dimension or len(vectors) != len(claims):
        return list(claims), [None] * len(claims)
    facts = [i for i, c in enumerate(claims) if c.kind == "fact"]
    p = model.probabilities(vectors[facts]) if facts else np.zeros(0)
    out, probs = list(claims), [None] * len(claims)
    for i, pi in zip(facts, p.tolist(), strict=True):
        probs[i] = round(pi, 4)
        if (
            pi >= model.threshold
            and names_a_reader(claims[i].sentence or claims[i].text)
            and not _states_a_value_to_the_user(claims[i].text)
        ):
            out[i] = claims[i].model_copy(update={"kind": "hedge"})
    return out, probs
