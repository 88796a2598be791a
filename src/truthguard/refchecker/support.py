"""Whether the sources support one claim: a small logistic model over what the grounding found.

The grounding (:func:`~truthguard.refchecker.grounding.ground_claim`) reads a claim against the
sources: which of its names, numbers and dates are stated anywhere in them (a fact may come from
another passage than the rest of the claim), which one the sources give another value, how close
its words come to the evidence sentence's by the packaged MiniLM's token vectors, how close the
whole claim comes to it. Deciding from those readings by hand rules (one word under a floor makes
the claim unsupported) rejects most paraphrases: a retelling says "pitched at" for "aimed at".

Instead, :data:`CLAIM_FEATURES` summarise the reading in a few numbers, and a logistic model
(:class:`SupportModel`) gives ``P(unsupported)``. The packaged coefficients (``support.json``)
were fitted by ``benchmarks/fit_support_model.py`` on the hand-written claim-evidence pairs of
``claims_synth`` (paraphrased entailments, and for each of them a copy with one fact changed, and
unsupported extras in the same style), so the wording of a claim cannot tell its label: only
whether its facts and words are in the evidence can.

An answer is as unsupported as its least supported claim (:func:`answer_probability`): one
invented sentence among grounded ones makes it hallucinated, whatever the others say.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker._logistic import FeatureModel, SavedModel, fit_logistic, fit_named

__all__ = [
    "CLAIM_FEATURES",
    "SupportModel",
    "answer_probability",
    "claim_features",
    "claim_numbers",
    "fact_unsupported",
    "fit_logistic",
    "says_nothing_stated",
]

CLAIM_FEATURES: tuple[str, ...] = (
    "numbers_missing",
    "names_missing",
    "conflict",
    "precision",
    "cosine",
    "content_missing",
    "min_soft",
    "copied",
    "foreign_nouns",
)
"""The claim-level features, in order:

* ``numbers_missing``: ``log1p`` of the claim's numbers and dates that no source states (or
  that the sources give another value for);
* ``names_missing``: the same for its names and titles (a name is often a description the
  sources word otherwise, "British" for "from the UK", a number far more rarely);
* ``conflict``: 1 when a fact or a negation is set against another in the evidence sentence;
* ``precision``: the mean match of the claim's content words (1 for the same word or stem, else
  the best MiniLM token cosine in the evidence sentences);
* ``cosine``: the claim's embedding cosine with its closest evidence;
* ``content_missing``: the share of content words whose best match is under the word floor;
* ``min_soft``: the weakest soft match of a content word (1 when all are found as words);
* ``copied``: the share of the claim's words copied, in order, from its evidence sentence;
* ``foreign_nouns``: ``log1p`` of the claim's nouns whose best token match is under
  :data:`FOREIGN` (a thing the evidence does not name: "carved jade" where it says "baked
  clay"; a retelling mostly rewords verbs and adverbs, and keeps the things it talks about).
"""

FOREIGN = 0.4
"""Best token cosine under which a noun of the claim names nothing in the evidence."""

_NUMBER_KINDS = ("number", "month")
_NAME_KINDS = ("name", "title")
_NOT_FOUND = ("ungrounded", "other_value")


def claim_numbers(claim: Mapping[str, Any]) -> dict[str, Any]:
    """What the checker wrote of a checked claim (as in ``details["claims"]``): its
    ``checker_output`` read as a JSON object; empty when it is none (an LLM's label)."""
    raw = claim.get("checker_output")
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = {}
        if isinstance(parsed, dict):
            return parsed
    return {}


def claim_features(numbers: Mapping[str, Any], issues: Sequence[Mapping[str, Any]]) -> dict:
    """The features of one claim from the grounding's numbers (``precision``, ``cosine``,
    ``soft``, ``n_content``, ``copied``) and its issues (``kind``, ``relation``)."""
    numbers_missing = sum(
        1 for i in issues if i.get("kind") in _NUMBER_KINDS and i.get("relation") in _NOT_FOUND
    )
    names_missing = sum(
        1 for i in issues if i.get("kind") in _NAME_KINDS and i.get("relation") in _NOT_FOUND
    )
    conflict = any(i.get("relation") == "conflict" for i in issues)
    words_missing = sum(
        1 for i in issues if i.get("kind") == "content" and i.get("relation") == "ungrounded"
    )
    soft = [float(x) for x in (numbers.get("soft") or {}).values()]
    foreign = math.log1p(
        sum(1 for w, x in (numbers.get("soft") or {}).items() if x < FOREIGN and _noun(w))
    )
    n_content = int(numbers.get("n_content", 0))
    return {
        "numbers_missing": math.log1p(numbers_missing),
        "names_missing": math.log1p(names_missing),
        "conflict": float(conflict),
        "precision": float(numbers.get("precision", 1.0)),
        "cosine": float(numbers.get("cosine", 0.0)),
        "content_missing": words_missing / n_content if n_content else 0.0,
        "min_soft": min(1.0, *soft) if soft else 1.0,
        "copied": float(numbers.get("copied", 0.0)),
        "foreign_nouns": foreign,
    }


@functools.lru_cache(maxsize=8192)
def _noun(word: str) -> bool:
    """Whether ``word`` can be a noun (or is unknown to the lexicon, as rare nouns are)."""
    found = lemmas(word.casefold())
    return not found or "NOUN" in found


def fact_unsupported(issues: Sequence[Mapping[str, Any]], claim: str | None = None) -> str | None:
    """Why the claim's facts alone leave it unsupported, or None.

    ``"conflict"``: a fact, a negation, a role, or a word put for one in a near copy is set
    against another in its evidence (relations ``conflict``, ``other_value``: the evidence fills
    the slot with another value, ``swapped``: another name does the action, ``of_another``: the
    sources say it only of another of the names the claim joins, ``opposite``: the evidence
    says the opposite). ``"number"``: it states a number or date no source states.
    ``"unanswered"``: it restates the question and adds nothing the sources state (relation
    ``unanswered``: what a restatement adds is its answer; ``off_question``: a short answer
    gives another kind of thing than the question asks for, a person for when).
    ``"name"``: it names what no source names, the question included (not a people's adjective
    or a short acronym, see :data:`_LOOSE_NAME`: the sources often word those otherwise, and
    they are left to the model)."""
    for i in issues:
        if i.get("relation") in ("other_value", "swapped", "of_another", "opposite", "conflict"):
            return "conflict"
    for i in issues:
        if i.get("kind") in _NUMBER_KINDS and i.get("relation") == "ungrounded":
            return "number"
    if any(i.get("relation") in ("unanswered", "off_question") for i in issues):
        return "unanswered"
    names = [
        i for i in issues if i.get("kind") in _NAME_KINDS and i.get("relation") == "ungrounded"
    ]
    for i in names:
        text = str(i.get("text", ""))
        if not _LOOSE_NAME.match(text) or _in_longer_name(i, names) or _read_as_name(claim, i):
            return "name"
    return None


def says_nothing_stated(numbers: Mapping[str, Any], issues: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a claim holds words besides its names and numbers (``n_content`` of the
    grounding's ``numbers``) and no source states any of them (``ungrounded`` content issues):
    "Cardillac is a ballet." where they call it an opera says nothing of Cardillac that they
    say, though its one name is theirs."""
    n_content = int(numbers.get("n_content", 0) or 0)
    missing = sum(
        1 for i in issues if i.get("kind") == "content" and i.get("relation") == "ungrounded"
    )
    return n_content > 0 and missing >= n_content


def _read_as_name(claim: str | None, issue: Mapping[str, Any]) -> bool:
    """Whether a word the loose pattern admits by its ending ("Oman", "Milan", "Rafiki",
    "Eric": "-an", "-i" and "-ic" like "German", "Thai" and "Hispanic") is a name in
    ``claim``: a singular proper noun that modifies no noun, where a people's adjective
    modifies one ("a German company", "Thai food"). A word in "-ian", "-ish" or "-ese" is
    taken for a people's or a language ("Brazilian", "Danish", "Chinese") wherever it stands."""
    text, start = str(issue.get("text", "")), issue.get("start")
    if claim is None or not isinstance(start, int) or not _NAME_ENDING.search(text):
        return False
    from truthguard.refchecker.structure import parse

    tok = next((t for t in parse(claim) if t.idx == start), None)
    return (
        tok is not None
        and tok.tag_ == "NNP"
        and tok.dep_ not in ("amod", "compound")
        and not (tok.dep_ == "nmod" and tok.head.pos_ in ("NOUN", "PROPN"))
    )


def _in_longer_name(issue: Mapping[str, Any], names: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the name word ``issue`` stands beside another missing name word: "Pacific
    Ocean" is a place, though each word alone reads like a people's adjective."""
    start, end = issue.get("start"), issue.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return False
    return any(
        n is not issue and (n.get("start") == end + 1 or n.get("end") == start - 1) for n in names
    )


# Names the sources often word otherwise: a people's or a country's adjective ("British" for
# "from the UK", "American" for "US") and short acronyms ("TV" for "television"). Left to the
# model, with the rest of the claim's wording.
_LOOSE_NAME = re.compile(r"^(?:[A-Z][a-z]+(?:an|ian|ish|ese|ic|i)(?:'s)?|[A-Z]{2,3}s?)$")
_NAME_ENDING = re.compile(r"(?:(?<!i)an|i|ic)(?:'s)?$")
"""The loose pattern's endings that personal and place names share ("Ryan", "Oman", "Rafiki",
"Eric"): such a word is read by :func:`_read_as_name`."""


FACT_P = 0.99
"""``P(unsupported)`` of a claim whose facts alone leave it unsupported."""


class SupportModel(FeatureModel, SavedModel):
    """``P(unsupported)`` of a claim from :data:`CLAIM_FEATURES`, and the cuts that decide a
    claim and an answer by it."""

    feature_names = CLAIM_FEATURES
    packaged = "support.json"
    indent = 1

    claim_threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    """A claim at or above this ``P(unsupported)`` is labelled Neutral (Contradiction when it
    has a conflict), below it Entailment."""
    answer_threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    """An answer whose least supported claim reaches this is hallucinated."""
    fitted_on: str = ""

    def probability(self, features: Mapping[str, float]) -> float:
        """``P(unsupported)`` of one claim."""
        z = self.logit(features)
        return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))

    @classmethod
    def fit(
        cls,
        features: Sequence[Mapping[str, float]],
        unsupported: Sequence[bool],
        *,
        l2: float = 1.0,
        fitted_on: str = "",
        **cuts: float,
    ) -> SupportModel:
        """Fit on labelled claims, each class weighted to half the total."""
        fitted = fit_named(
            features,
            unsupported,
            CLAIM_FEATURES,
            l2=l2,
            what=("unsupported", "supported", "unsupported claims"),
        )
        return cls(**fitted, fitted_on=fitted_on, **cuts)


def answer_probability(claims: Sequence[Mapping[str, Any]]) -> tuple[float, int] | None:
    """``P(hallucinated)`` of an answer, its least supported fact claim's ``P(unsupported)``,
    and that claim's index; None when no fact claim was read by the support model (a chat
    reply's remarks only, or another checker).

    An answer made only of remarks about the sources ("The passage gives only the year, not
    the exact date") is decided by the names and numbers its remarks hold: one set against the
    evidence's own makes it unsupported (:data:`FACT_P`), one no source states leaves it at
    even odds (often the answerer's own count of what the passage lists); beside a fact
    claim, a remark decides nothing."""
    best: tuple[float, int] | None = None
    remarks: tuple[float, int] | None = None
    for k, c in enumerate(claims):
        kind = c.get("kind", "fact")
        if kind == "hedge" and c.get("mode") == "grounding":
            # a remark's own negation is about the sources ("doesn't say"), not set against them
            issues = [i for i in c.get("issues") or () if i.get("kind") != "negation"]
            p = FACT_P if fact_unsupported(issues) == "conflict" else 0.5 if issues else 0.0
            if remarks is None or p > remarks[0]:
                remarks = (p, k)
            continue
        if kind != "fact":
            continue
        p = claim_numbers(c).get("p_unsupported")
        if p is None:
            continue
        if best is None or p > best[0]:
            best = (float(p), k)
    return remarks if best is None else best
