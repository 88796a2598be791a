"""The answer-level decision of the local RefChecker: a probability that an answer hallucinates.

"Any claim not entailed rejects the answer" fails on real answers: a four-sentence summary that
compresses its article, or a chat reply that adds a remark, almost always holds one claim the
grounding cannot fully align, so correct answers were rejected nearly as often as wrong ones.

Instead, the claims' grounding is summarised in a few numbers (:func:`answer_features`: the
share of claims entailed or contradicted, the share of the answer's names and numbers and of
its content words missing from the evidence, how close its claims come to the evidence) and a
logistic model turns them into ``P(hallucinated)``. The answer is hallucinated when that
probability reaches the decision threshold. A short answer, a passage of several sentences and
a reply in a chat (:func:`answer_form`) may be weighed by models of their own: the same missing
name means more in a one-line answer than in a four-sentence summary.

The packaged coefficients (``decision.json``, about 7 KB) were fitted on the development half of
HaluEval (2,000 rows per task spread through each file) by
``benchmarks/fit_grounding_decision.py``: one model on all answers (each task weighted equally and
each class within it), used for short answers and chat replies, and one for passages (three
sentences or more) fitted on the passages. The cuts are those that keep at least 83% of correct
answers passing in each fifth of every task's fitting rows while rejecting as many hallucinated
ones as possible. Refit them on your own labelled answers with :meth:`GroundingDecision.fit` (or
``truthguard calibrate``) and pass the result as ``RefChecker(decision=...)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from truthguard.refchecker._logistic import FeatureModel, SavedModel, fit_named
from truthguard.refchecker.claimkind import attribution_names, hedged_at
from truthguard.refchecker.support import claim_numbers

__all__ = [
    "FEATURES",
    "FORMS",
    "FormModel",
    "GroundingDecision",
    "answer_features",
    "answer_form",
    "answer_sentences",
    "decided_by_claims",
    "invented",
    "leading_answer",
    "retelling_deviation",
]

FEATURES: tuple[str, ...] = (
    "entailed",
    "contradicted",
    "any_contradiction",
    "facts_missing",
    "facts_missing_count",
    "names_missing",
    "numbers_missing",
    "claims_with_missing_facts",
    "content_missing",
    "content_missing_count",
    "log_claims",
    "mean_precision",
    "min_precision",
    "mean_cosine",
    "min_cosine",
    # the same evidence weighs more in an answer of few claims: each times 1 / claims
    "few_facts_missing",
    "few_names_missing",
    "few_numbers_missing",
    "few_content_missing",
    "few_entailed",
    "few_mean_cosine",
    # the worst claim: an invented sentence stands out in an otherwise grounded summary
    "worst_missing",
    "claims_half_missing",
    "any_half_missing",
)
"""The answer-level features, in the order of :attr:`GroundingDecision.coefficients`."""

_ASKED = ("unanswered", "off_question")
"""Relations read of a claim against its question, not against the evidence."""

_LATER_FEATURES = ("worst_missing", "claims_half_missing", "any_half_missing")
"""Features added after decisions were first saved: a saved decision without them gives them no
weight, so it decides as it did."""


def answer_features(claims: Sequence[Mapping[str, Any]]) -> dict[str, float] | None:
    """The features of one answer from its checked claims (as in ``details["claims"]``).

    Each claim needs its ``label`` and ``issues``, and the grounding numbers the local checker
    writes in ``checker_output`` (``precision``, ``cosine``, ``n_facts``, ``n_content``). Returns
    None when there is no claim or a claim lacks those numbers (another checker labelled it).
    """
    if not claims:
        return None
    n = len(claims)
    entailed = contradicted = 0
    facts = facts_missing = content = content_missing = 0
    names_missing = numbers_missing = claims_missing = 0
    worst = half_missing = 0
    precisions: list[float] = []
    cosines: list[float] = []
    for c in claims:
        numbers = claim_numbers(c)
        if "n_facts" not in numbers or "precision" not in numbers:
            return None
        entailed += c.get("label") == "Entailment"
        contradicted += c.get("label") == "Contradiction"
        # what the alignment found, which this model was fitted on (not the support
        # decision's readings of a claim against its question: ``unanswered``, ``off_question``)
        issues = [i for i in c.get("issues") or () if i.get("relation") not in _ASKED]
        facts += int(numbers["n_facts"])
        content += int(numbers.get("n_content", 0))
        fact_issues = [i for i in issues if i.get("kind") not in ("content", "negation")]
        facts_missing += len(fact_issues)
        names_missing += sum(1 for i in fact_issues if i.get("kind") in ("name", "title"))
        numbers_missing += sum(1 for i in fact_issues if i.get("kind") in ("number", "month"))
        claims_missing += bool(fact_issues)
        words_missing = sum(1 for i in issues if i.get("kind") == "content")
        content_missing += words_missing
        # the claim's own missing share, names, numbers and content words together
        claim_missing = len(fact_issues) + words_missing
        claim_checked = int(numbers["n_facts"]) + int(numbers.get("n_content", 0))
        worst = max(worst, claim_missing)
        half_missing += bool(claim_checked) and claim_missing >= claim_checked / 2
        precisions.append(float(numbers["precision"]))
        cosines.append(float(numbers.get("cosine", 0.0)))
    out = {
        "entailed": entailed / n,
        "contradicted": contradicted / n,
        "any_contradiction": float(contradicted > 0),
        "facts_missing": facts_missing / facts if facts else 0.0,
        "facts_missing_count": math.log1p(facts_missing),
        "names_missing": math.log1p(names_missing),
        "numbers_missing": math.log1p(numbers_missing),
        "claims_with_missing_facts": claims_missing / n,
        "content_missing": content_missing / content if content else 0.0,
        "content_missing_count": math.log1p(content_missing),
        "log_claims": math.log(n),
        "mean_precision": float(np.mean(precisions)),
        "min_precision": float(min(precisions)),
        "mean_cosine": float(np.mean(cosines)),
        "min_cosine": float(min(cosines)),
    }
    for name in ("facts_missing", "names_missing", "numbers_missing", "content_missing"):
        out[f"few_{name}"] = out[name] / n
    out["few_entailed"] = out["entailed"] / n
    out["few_mean_cosine"] = out["mean_cosine"] / n
    out["worst_missing"] = math.log1p(worst)
    out["claims_half_missing"] = half_missing / n
    out["any_half_missing"] = float(half_missing > 0)
    return out


def decided_by_claims(
    claims: Sequence[Mapping[str, Any]], *, chat: bool, decision: GroundingDecision
) -> tuple[bool, str, Mapping[str, Any] | None] | None:
    """When the claims alone decide the answer: ``(hallucinated, rule, claim)``, else None.

    Rules, in order: a contradicted or altered retelling (``"claim"``) makes an answer of at
    most :attr:`GroundingDecision.retelling_sentences` sentences hallucinated, and in an answer
    of any length so does a contradicted claim copied almost word for word from its evidence
    (:attr:`GroundingDecision.conflict_copied`);
    so does a claim that gives a slot the evidence fills another value (``"other_value"``:
    "The Prestige stars Orlando Bloom" where the evidence says it is starring Michael Caine);
    every claim entailed (``"all_entailed"``) makes it factual; a short direct answer (no chat
    history, at most :attr:`GroundingDecision.strict_claims` claims) with a claim not entailed
    (``"short_answer"``) makes it hallucinated; so does a short opening sentence not entailed
    (``"lead_answer"``, see :func:`leading_answer`; in a chat only with
    :attr:`GroundingDecision.lead_in_chat` and when a name or number of it is not supported)
    and, outside a chat, a
    claim about names or numbers none of which the evidence holds (``"invented"``, see
    :func:`invented`). Otherwise the model weighs the answer.
    """
    deviation = (
        retelling_deviation(claims, decision.retelling_cosine, copied=decision.retelling_copied)
        if not decision.retelling_sentences
        or answer_sentences(claims) <= decision.retelling_sentences
        else None
    )
    if deviation is None and decision.conflict_copied <= 1.0:
        deviation = next((c for c in claims if _copied_conflict(c, decision.conflict_copied)), None)
    if deviation is not None:
        return True, "claim", deviation
    if decision.other_value:
        answered = next((c for c in claims if _other_value(c)), None)
        if answered is not None:
            return True, "other_value", answered
    if claims and all(c.get("label") == "Entailment" for c in claims):
        return False, "all_entailed", None
    if not chat and 0 < len(claims) <= decision.strict_claims:
        bad = next(c for c in claims if c.get("label") != "Entailment")
        return True, "short_answer", bad
    if decision.lead_words and (not chat or decision.lead_in_chat):
        lead = leading_answer(claims, decision.lead_words)
        if (
            lead is not None
            and lead.get("label") != "Entailment"
            and (not chat or _fact_unsupported(lead))
        ):
            return True, "lead_answer", lead
    if not chat and decision.invented:
        made_up = next((c for c in claims if invented(c)), None)
        if made_up is not None:
            return True, "invented", made_up
    return None


FORMS: tuple[str, ...] = ("answer", "passage", "reply")
"""The forms of answer the decision weighs apart (see :func:`answer_form`)."""


def answer_form(
    claims: Sequence[Mapping[str, Any]], *, chat: bool, passage_sentences: int = 2
) -> str:
    """The form of an answer: ``"reply"`` in a chat (the input has a history), else
    ``"passage"`` when its claims come from at least ``passage_sentences`` sentences (see
    :func:`answer_sentences`), else ``"answer"``.

    The same grounding reads differently in each: a short answer is its claims; a passage
    that compresses its sources leaves details unaligned when right and invents whole sentences
    when wrong; a chat reply carries remarks and what the user already knows.
    """
    if chat:
        return "reply"
    return "passage" if answer_sentences(claims) >= passage_sentences else "answer"


def answer_sentences(claims: Sequence[Mapping[str, Any]]) -> int:
    """How many sentences of the answer the claims come from: clauses cut from one sentence
    (``sentence`` set, as the local extractor does) count once."""
    return len({str(c.get("sentence") or c.get("claim", "")) for c in claims})


def leading_answer(claims: Sequence[Mapping[str, Any]], max_words: int) -> Mapping[str, Any] | None:
    """The answer's opening sentence when it is a short statement of fact followed by more
    claims ("Fourth Dynasty pharaoh Khufu. Originally, the Great Pyramid ..."), else None.

    An answer that puts its direct answer first and explains after it is only as right as that
    first sentence: the explanation is often taken from the sources and would outweigh it.
    """
    if len(claims) < 2:
        return None
    first = claims[0]
    text = str(first.get("claim", "")).strip()
    if first.get("kind", "fact") != "fact" or not text.endswith((".", "!", "?")):
        return None  # a clause cut from a longer sentence, or talk around facts
    return first if len(text.split()) <= max_words else None


def retelling_deviation(
    claims: Sequence[Mapping[str, Any]], cosine: float, *, copied: float = 1.01
) -> Mapping[str, Any] | None:
    """The first claim that contradicts its evidence (a question, greeting or opinion not by its
    negation alone: such a negation asserts nothing), or retells an evidence sentence closely
    (cosine at least ``cosine``) with something changed, or copies at least a share ``copied``
    of its words from it in order with a name or number the evidence lacks; None when there is
    none.

    A paraphrase or a summary words things its own way and may leave a detail unaligned; a
    sentence copied from the evidence with one name, number or word swapped is the classic
    planted error, and one such claim decides the answer whatever the rest says.
    """
    for c in claims:
        if c.get("label") == "Contradiction":
            if c.get("kind", "fact") != "fact" and _only_negated(c):
                continue  # "So why doesn't the plan do more?", "No problem!": nothing denied
            return c
        if c.get("label") == "Neutral":
            numbers = claim_numbers(c)
            if float(numbers.get("cosine", 0.0)) >= cosine:
                return c
            if float(numbers.get("copied", 0.0)) >= copied and _missing_facts(c):
                return c
    return None


def _copied_conflict(claim: Mapping[str, Any], copied: float) -> bool:
    """Whether the claim is a contradicted fact that copies at least a share ``copied`` of its
    evidence sentence's words, in order, with a name, number, date or negation set against the
    sentence's: an evidence sentence retold word for word with one fact changed."""
    if claim.get("label") != "Contradiction" or claim.get("kind", "fact") != "fact":
        return False
    if float(claim_numbers(claim).get("copied", 0.0)) < copied:
        return False
    return any(
        i.get("relation") == "conflict" and i.get("kind") in (*_FACT_KINDS, "negation")
        for i in claim.get("issues") or []
    )


def _fact_unsupported(claim: Mapping[str, Any]) -> bool:
    """Whether the claim states a name, title, number or date its evidence lacks or sets
    against another."""
    return any(i.get("kind") in _FACT_KINDS for i in claim.get("issues") or [])


def _only_negated(claim: Mapping[str, Any]) -> bool:
    """Whether the claim's only conflicts are negations."""
    kinds = {i.get("kind") for i in claim.get("issues") or [] if i.get("relation") == "conflict"}
    return kinds == {"negation"}


def _missing_facts(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The claim's names and numbers not found in the evidence, leaving out who a statement is
    attributed to ("Salil Shetty: ...") and hedged figures ("more than 10 times")."""
    text = str(claim.get("claim", ""))
    speakers = attribution_names(text)
    out = []
    for i in claim.get("issues") or []:
        if i.get("kind") not in _FACT_KINDS or i.get("relation") not in _NOT_FOUND:
            continue
        word = str(i.get("text", "")).strip(".,'’")
        if i.get("kind") == "name" and (word in speakers or word.removesuffix("'s") in speakers):
            continue
        at = i.get("claim_start")
        if i.get("kind") == "number" and isinstance(at, int) and hedged_at(text, at):
            continue
        out.append(i)
    return out


_FACT_KINDS = ("name", "title", "number", "month")
_NOT_FOUND = ("ungrounded", "other_value")


def _other_value(claim: Mapping[str, Any]) -> bool:
    """Whether the claim names a value for a slot the evidence fills with another one."""
    return any(i.get("relation") == "other_value" for i in claim.get("issues") or [])


def invented(claim: Mapping[str, Any]) -> bool:
    """Whether a claim states names or numbers of which the evidence holds none (or, without
    names or numbers, words of which it holds none, or of three or more words at most one).

    Who a statement is attributed to ("Salil Shetty: ...", "..., writes Silvia Marchetti") and
    hedged numbers ("more than 10 times") are left out: an op-ed's author or a rounded figure
    is often missing from a correct summary's source, an invented person or date is not.
    """
    numbers = claim_numbers(claim)
    n_facts = int(numbers.get("n_facts", 0) or 0)
    issues = claim.get("issues") or []
    if n_facts == 0:
        # no names or numbers: invented when none of its words is found ("The skin."), or of
        # three or more all but one, its subject ("Mars has a ring of solid gold.")
        n_content = int(numbers.get("n_content", 0) or 0)
        missing_words = sum(1 for i in issues if i.get("kind") == "content")
        if n_content >= 3:
            return missing_words >= n_content - 1
        return n_content > 0 and missing_words >= n_content
    missing = [
        i for i in issues if i.get("kind") in _FACT_KINDS and i.get("relation") in _NOT_FOUND
    ]
    if len(missing) < n_facts:
        return False  # something of it is grounded
    return bool(_missing_facts(claim))


class FormModel(FeatureModel):
    """A logistic model from answer features (:data:`FEATURES`) to log-odds of hallucination
    (standardised features, one weight each)."""

    feature_names = FEATURES

    @field_validator("coefficients", "means", "scales", mode="before")
    @classmethod
    def _later_features(cls, v: Any, info: Any) -> Any:
        if isinstance(v, Mapping):
            fill = 1.0 if info.field_name == "scales" else 0.0
            v = {**dict.fromkeys((f for f in _LATER_FEATURES if f not in v), fill), **v}
        return v


class GroundingDecision(FormModel, SavedModel):
    """A logistic model from answer features to ``P(hallucinated)``, with its threshold; each
    form of answer (see :func:`answer_form`) may have a model of its own in :attr:`forms`.

    Example:
        >>> d = GroundingDecision.default()
        >>> 0.0 < d.probability({name: 0.0 for name in FEATURES}) < 1.0
        True
    """

    packaged = "decision.json"
    indent = 1

    threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    """``P(hallucinated)`` at or above which the answer is hallucinated."""
    strict_claims: int = Field(default=1, ge=0)
    """An answer to a question (no chat history) that makes at most this many checkable claims
    is decided by its claims: hallucinated unless every one is entailed. A short direct answer
    is its claim; a chat reply or a long answer is weighed by the model (0 turns this off)."""
    retelling_cosine: float = Field(default=0.85, gt=0.0, le=1.01)
    """A claim this close to its evidence sentence (cosine) that is not entailed makes the
    answer hallucinated on its own, as a contradicted claim does (see
    :func:`retelling_deviation`); above 1 turns the rule off for all but contradictions."""
    retelling_copied: float = Field(default=1.01, gt=0.0, le=1.01)
    """A claim that copies at least this share of its words, in order, from its evidence
    sentence and states a name or number the evidence lacks makes the answer hallucinated, as a
    close cosine does (above 1 turns it off)."""
    retelling_sentences: int = Field(default=0, ge=0)
    """A contradicted or altered retelling decides only answers of at most this many sentences
    (see :func:`answer_sentences`; 0: any answer). In a longer answer it is one feature among the
    others: on correct news summaries of several sentences a "contradiction" is as often a name
    the summary puts for the article's description of the same person ("Franck Ribery" for "the
    Frenchman") as a wrong fact, while a planted error in a short answer is caught by it almost
    every time. The packaged decision sets 3: one wrong fact in a sentence between two correct
    ones is caught (at 1, 2% of them were); at 4 no longer correct summaries passed well enough."""
    conflict_copied: float = Field(default=1.01, gt=0.0, le=1.01)
    """In an answer of any length, a contradicted claim that copies at least this share of its
    evidence sentence's words, in order, with a name, number, date or negation set against the
    sentence's (see :func:`retelling_deviation` for shorter answers) makes the answer
    hallucinated (above 1 turns it off). The packaged decision sets 0.85: in answers of four or
    five sentences with one fact changed in a copied sentence, it caught 77% where the model
    caught 2%, and it fired on 6 of 2,000 correct HaluEval summaries."""
    invented: bool = False
    """Outside a chat, an answer with a claim whose names and numbers are all missing from the
    evidence is hallucinated (see :func:`invented`)."""
    other_value: bool = False
    """An answer with a claim that names another value for a slot its evidence fills ("The
    Prestige stars Orlando Bloom" against "The Prestige is starring Michael Caine", "released in
    2013" against "released 2012") is hallucinated, in a chat too. A claim that adds a value
    ("he also wrote ...") or names one of the evidence's values fills no slot alone."""
    lead_words: int = Field(default=0, ge=0)
    """An answer that opens with a sentence of at most this many words (its direct answer: "The
    vascular middle layer of the eye.") that is not entailed is hallucinated, however well the
    explanation after it is supported (0 turns it off); in a chat only with
    :attr:`lead_in_chat`."""
    lead_in_chat: bool = False
    """The :attr:`lead_words` rule holds in a chat too, for an opening sentence with a name,
    title, number or date the evidence lacks or contradicts ("Sneferu built it.", "It opened in
    1989."): a reply that puts a wrong direct answer first is as wrong as an answer that does.
    In a conversation a short opening is often a remark ("That's cool.", "It's not listed as
    one.") or a loose label ("Get Real is a drama."), so one whose names and numbers are all
    supported is left to the model. Without it, hallucinated answers to CHALE's questions asked
    in a chat (the question as the history) passed 62% of the time; with it 20% (``truthguard bench
    grounding --chat open``)."""
    chat_offset: float = 0.0
    """Added to the log-odds of a chat reply (an answer with a chat history) when :attr:`forms`
    has no model for replies. A reply in a chat
    carries remarks and things the user knows that no passage holds, so at the same risk its
    grounding reads worse than an answer's; the offset is fitted so that correct replies pass
    at least as often as correct answers."""
    passage_sentences: int = Field(default=2, ge=2)
    """Outside a chat, an answer of at least this many sentences is a passage (see
    :func:`answer_form`)."""
    forms: dict[str, FormModel] = Field(default_factory=dict)
    """Models of their own for forms of answer (keys from :data:`FORMS`); a form without one is
    weighed by the shared model above. Each form's model is fitted on answers of that form and
    its cut folded into its intercept, so the one :attr:`threshold` serves every form. The
    packaged decision has one for passages: pooled with short answers, the features that tell a
    wrong summary from a right one were outweighed (on HaluEval rows the fit never saw, among the
    summaries of three sentences or more the rules leave to the model, the pooled model ranked
    hallucinated above correct with an AUROC of 0.73-0.78, their own model 0.87-0.92). Chat
    replies have none: a model fitted on HaluEval's replies alone learned how they were written
    (there the hallucinated replies are the longer ones that follow the knowledge closely) and
    rejected a reply retelling its passages while passing one that invents a sentence."""
    fitted_on: str = ""
    """Where the coefficients come from (free text)."""

    @field_validator("forms")
    @classmethod
    def _known_forms(cls, v: dict[str, FormModel]) -> dict[str, FormModel]:
        unknown = sorted(set(v) - set(FORMS))
        if unknown:
            raise ValueError(f"unknown forms {unknown}; forms are {list(FORMS)}")
        return v

    @classmethod
    def load(cls, path: str | Path) -> GroundingDecision:
        """A decision saved with :meth:`save` (a file that is no JSON is a validation error)."""
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def probability(
        self, features: Mapping[str, float], *, chat: bool = False, form: str | None = None
    ) -> float:
        """``P(hallucinated)`` of one answer of form ``form`` (see :func:`answer_form`; without
        it, ``"reply"`` when ``chat`` else ``"answer"``), by the form's own model when
        :attr:`forms` has one, else by the shared model (a reply's log-odds moved by
        :attr:`chat_offset`)."""
        form = form or ("reply" if chat else "answer")
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, not {form!r}")
        own = self.forms.get(form)
        if own is not None:
            z = own.logit(features)
        else:
            z = self.logit(features) + (self.chat_offset if form == "reply" else 0.0)
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0

    @classmethod
    def fit(
        cls,
        features: Sequence[Mapping[str, float]],
        hallucinated: Sequence[bool],
        *,
        weights: Sequence[float] | None = None,
        l2: float = 1.0,
        threshold: float = 0.5,
        fitted_on: str = "",
    ) -> GroundingDecision:
        """Fit the logistic model by Newton's method with an L2 penalty.

        Args:
            features: One feature mapping per answer (see :func:`answer_features`).
            hallucinated: The gold labels (True = hallucinated).
            weights: Per-answer weights (default: each class weighted to half the total).
            l2: Penalty on the (standardised) coefficients, not on the intercept.
            threshold: The decision threshold to store.
            fitted_on: A note saying where the rows come from.
        """
        fitted = fit_named(
            features,
            hallucinated,
            FEATURES,
            weights=weights,
            l2=l2,
            what=("hallucinated", "hallucinated", "correct answers"),
        )
        return cls(**fitted, threshold=threshold, fitted_on=fitted_on)
