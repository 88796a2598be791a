"""Claim checkers: label each claim Entailment / Neutral / Contradiction against the references.

* :class:`LLMChecker`: an LLM reads the claim's top-k reference segments (paper section 3.2), one
  call per claim or, in joint mode, several claims per call.
* :class:`LocalChecker`: no LLM; fact grounding (numbers, dates, names, titles, negation and
  content words must be found in the evidence, see :mod:`truthguard.refchecker.grounding`), or
  the legacy similarity score, or a local ``CrossEncoder`` NLI model.
* :class:`~truthguard.refchecker.nli.NLIChecker` (in :mod:`~truthguard.refchecker.nli`): a
  cross-encoder NLI model (hub id or path) judges the relation, the fact grounding guards numbers,
  dates and names.

Each verdict carries a *support* in [0, 1] used by the ``mean_support`` / ``min_support`` scores:
1 or 0 for an LLM label (Entailment or not); for the grounding checker the soft precision of the
claim's content words when it is Entailment, at most 0.5 when it is Neutral, 0 when it is
Contradiction; the entailment probability for an NLI model (capped the same way by the fact
check).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from truthguard._text import echoes
from truthguard.errors import ConfigurationError, InvalidLLMOutput
from truthguard.llm import LLMSession
from truthguard.refchecker._alignment import fact_in, one_name
from truthguard.refchecker._analysis import analyse
from truthguard.refchecker._facts import Fact, stem
from truthguard.refchecker._parse import parse_joint_labels, parse_label
from truthguard.refchecker._prompts import CHECK_PROMPT, JOINT_CHECK_PROMPT, PROMPT_VERSION
from truthguard.refchecker.claimkind import attribution_names
from truthguard.refchecker.comparisons import OPTIONS, counted_the_other_way, out_of_order
from truthguard.refchecker.counts import agreeing, recounts
from truthguard.refchecker.derived import (
    asked_period,
    counts_of,
    measure_of,
    per_period_value,
    per_what,
    shown_working,
    workable,
)
from truthguard.refchecker.extractors import Claim, runnable_model
from truthguard.refchecker.grounding import (
    EvidencePool,
    Grounding,
    Issue,
    SoftMatcher,
    asks_amount,
    case_days,
    denied_of_joined,
    ground_claim,
    of_other_case,
    own_case,
    own_words,
    premises,
    said_of_joined,
    said_of_option,
    same_value,
    subject_of_another,
)
from truthguard.refchecker.lexical import STOPWORDS, content_recall
from truthguard.refchecker.meaning import MeaningModel
from truthguard.refchecker.opposites import (
    crossed_flips,
    denied_words,
    flips,
    stated_opposite,
    word_lemmas,
)
from truthguard.refchecker.retrieval import Retrieval
from truthguard.refchecker.structure import negated_verbs, off_question, parse_all, unnamed_answer
from truthguard.refchecker.support import (
    FACT_P,
    SupportModel,
    claim_features,
    fact_unsupported,
    says_nothing_stated,
)
from truthguard.similarity import CrossEncoderSimilarity, get_default_similarity
from truthguard.store import ArtifactStore, cached_call

__all__ = ["ClaimChecker", "ClaimVerdict", "LLMChecker", "LocalChecker"]


class ClaimVerdict(BaseModel):
    """A checker's verdict on one claim."""

    model_config = ConfigDict(extra="forbid")

    label: str
    """Entailment, Neutral or Contradiction."""
    support: float
    """How well the references support the claim, in [0, 1]."""
    raw: str
    """The checker's raw output for this claim (LLM text, or the local checker's numbers)."""
    mode: str
    """How it was reached: single, joint, joint-fallback, grounding, embedding or nli."""
    evidence: dict[str, Any] | None = None
    """The evidence sentence the checker compared the claim with: ``reference`` (index),
    ``start``, ``end`` (offsets in that reference) and ``text``; None when it does not say."""
    issues: list[dict[str, Any]] = Field(default_factory=list)
    """Why the claim is not Entailment: per span, ``kind`` (number, month, name, title,
    negation, content), ``relation`` (``ungrounded``; ``conflict``; ``other_value``: a slot the
    evidence fills with another value), ``start`` / ``end`` / ``text`` in the claim and, for a
    conflict or another value, the ``evidence`` span in the reference it is set against."""


class ClaimChecker(BaseModel, ABC):
    """Base class of checkers."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @abstractmethod
    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order."""


def _passages(retrieval: Retrieval, indices: list[int]) -> str:
    return "\n".join(f"[{n}] {retrieval.segments[j].text}" for n, j in enumerate(indices, 1))


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()


class LLMChecker(ClaimChecker):
    """Labels claims with an LLM, one call per claim or several claims per call.

    In joint mode a reply that does not align with its claims (a number missing, repeated or
    unreadable) is re-asked claim by claim; no label is ever filled in by default.

    Example:
        >>> from truthguard.testing import ScriptedChatModel
        >>> checker = LLMChecker(model=ScriptedChatModel(default="Entailment"), joint=True)
    """

    model: Any
    """A LangChain chat model (or any Runnable / callable str -> str)."""
    joint: bool = False
    """Check several claims per call (fewer calls, longer prompts)."""
    joint_size: int = Field(default=8, ge=1)
    """Most claims per joint call."""

    _model_like = field_validator("model")(runnable_model)

    async def _ask(
        self,
        question: str,
        claim: Claim,
        indices: list[int],
        retrieval: Retrieval,
        session: LLMSession,
        store: ArtifactStore | None,
        mode: str,
    ) -> ClaimVerdict:
        reference = _passages(retrieval, indices)
        prompt = CHECK_PROMPT.format(
            question=question, reference=reference, claim=claim.prompt_text()
        )
        # cached_call validates before storing and re-asks a stored reply the parser refuses.
        text = await cached_call(
            session,
            self.model,
            prompt,
            store=store,
            question=question,
            kind="refchecker.check",
            prompt_version=PROMPT_VERSION,
            stage="refchecker.check",
            extra=_digest(claim.prompt_text(), reference),
            metadata={"replay_key": f"check:{question}\x1f{claim.prompt_text()}"},
            validate=lambda t: _verdict_label(t, claim),
        )
        label = _verdict_label(text, claim)
        return ClaimVerdict(label=label, support=float(label == "Entailment"), raw=text, mode=mode)

    async def _ask_joint(
        self,
        question: str,
        chunk: list[int],
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        indices = list(dict.fromkeys(j for i in chunk for j in retrieval.top_k[i]))
        reference = _passages(retrieval, indices)
        listed = "\n".join(f"{n}. {claims[i].prompt_text()}" for n, i in enumerate(chunk, 1))
        prompt = JOINT_CHECK_PROMPT.format(
            question=question, reference=reference, claims=listed, n=len(chunk)
        )
        text = await cached_call(
            session,
            self.model,
            prompt,
            store=store,
            question=question,
            kind="refchecker.check.joint",
            prompt_version=PROMPT_VERSION,
            stage="refchecker.check.joint",
            extra=_digest(listed, reference),
            metadata={"replay_key": f"joint:{question}\x1f{listed}"},
        )
        labels = parse_joint_labels(text, len(chunk))
        if any(
            echoes(text, claims[i].text) or echoes(text, claims[i].prompt_text()) for i in chunk
        ):
            labels = None  # it repeats a claim: its labels may be the claim's own words
        if labels is None:  # misaligned: re-ask each claim on its own
            return await session.gather(
                self._ask(
                    question,
                    claims[i],
                    retrieval.top_k[i],
                    retrieval,
                    session,
                    store,
                    "joint-fallback",
                )
                for i in chunk
            )
        return [
            ClaimVerdict(label=lab, support=float(lab == "Entailment"), raw=text, mode="joint")
            for lab in labels
        ]

    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        if not self.joint:
            return await session.gather(
                self._ask(question, c, retrieval.top_k[i], retrieval, session, store, "single")
                for i, c in enumerate(claims)
            )
        chunks = [
            list(range(s, min(s + self.joint_size, len(claims))))
            for s in range(0, len(claims), self.joint_size)
        ]
        parts = await session.gather(
            self._ask_joint(question, chunk, claims, retrieval, session, store) for chunk in chunks
        )
        return [v for part in parts for v in part]


def _local(retrieval: Retrieval, segments: Iterable[int]) -> EvidencePool:
    """Words and facts of the passages the given segments belong to, sentence by sentence: the
    evidence a claim was retrieved against. A value stated only in a passage the claim does
    not resemble is about something else, so it supports nothing (a retriever's larger ``k``
    adds such passages), while one passage (a document the answer summarises) is read whole."""
    refs = sorted({retrieval.segments[j].reference for j in segments})
    return EvidencePool.of_passages(
        [
            [span.text for seg in retrieval.segments if seg.reference == r for span in seg.spans]
            for r in refs
        ],
        refs,
    )


def _pool(retrieval: Retrieval, i: int) -> tuple[list[tuple[int, int, str]], int]:
    """Sentences of claim ``i``'s top-k segments (reference, offset, text) and the hint index."""
    sentences = []
    hint = 0
    _, best_span, _ = retrieval.evidence[i]
    for j in retrieval.top_k[i]:
        seg = retrieval.segments[j]
        for span in seg.spans:
            if span == best_span and j == retrieval.evidence[i][0]:
                hint = len(sentences)
            sentences.append((seg.reference, span.start, span.text))
    return sentences, hint


_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def _named_in_question(issues: list[dict[str, Any]], asked: set[str]) -> list[dict[str, Any]]:
    """The issues less the names the question itself uses: "When did the Panama Canal open?"
    answered from a passage that says "the canal" names the canal the user asked about."""
    return _less_names(issues, lambda w: w.casefold().removesuffix("'s") in asked)


def _joined_in_question(
    claim: str, question: str, fields: dict[str, Any], sentences: list[tuple[int, int, str]]
) -> list[dict[str, Any]]:
    """Words of a short answer without a verb that the sources say only of another of the
    names the question joins (see :func:`~truthguard.refchecker.grounding.said_of_joined`),
    unless already flagged."""
    flagged = _flagged(fields)
    return [
        _issue_fields(i)
        for i in [
            *said_of_joined(claim, question, sentences),
            *said_of_option(claim, question, sentences),
            *denied_of_joined(claim, question, sentences),
        ]
        if (i.start, i.end) not in flagged
    ]


def _unanswered(
    claim: str, question: str, g: Grounding, *, whole: bool = True
) -> list[dict[str, Any]]:
    """An ``unanswered`` issue when the claim restates the question and adds nothing the
    sources state: no word it adds is found there as a word, and no name or number it adds is
    found at all. A claim restates the question when it repeats half the question's content
    words and names or more (of three at least), or when the question's words are most of its
    own (:data:`RESTATED`, of three at least: a long question is restated in part, "Vikram
    Seth is an Indian novelist and a psychiatrist" of a question that also names his books).
    A claim restating only part of the question that adds a number is left alone: a number
    the sources do not state is often one the answer works out from the asker's own.

    What a restatement of a question asking what, who, when, ... adds is its answer:
    "Milhouse was named after a famous historical person", asked who the Simpsons character
    Milhouse was named after, adds only words the sources do not hold, though every word it
    repeats from the question is theirs, so the word match alone would pass it. "Milhouse was
    named after President Richard Nixon" adds names they state. A question answered yes or no,
    or by one of two options ("A or B"), is answered by a restatement that affirms or picks:
    left alone.

    A ``whole`` answer sentence (not a clause cut from a longer one) that restates the question
    does not answer it either when at least half of what it adds is words no source states:
    "Ken Lee co-founded a clothing store", asked what the chain he co-founded sells, adds
    "store", which the sources state, and "clothing", which they do not, where they say the
    stores sell electronics. A name or number no source states is not counted here: it may be
    the asker's own or worked out ("67: 30% of 60 plus 70% of 70", "from 9am on Tuesday"), and
    the readings of values decide it. A clause of a longer sentence is not read so either: its
    other clauses may carry the answer.
    """
    if _CLOSED_QUESTION.match(question) or OPTIONS.search(question):
        return []  # yes-or-no, or one of two: a restatement that affirms or picks answers it
    asked, said = analyse(question), analyse(claim)
    asked_keys = {stem(asked.tokens[i].norm) for i in asked.keys}
    if len(asked_keys) < 3:
        return []
    keys = [(i, stem(said.tokens[i].norm)) for i in sorted(said.keys)]
    repeated = {k for _, k in keys if k in asked_keys}
    added = [i for i, k in keys if k not in asked_keys]
    if not added or not repeated:
        return []
    if len(repeated) < 0.5 * len(asked_keys):
        if len(keys) < 3 or len(repeated) < RESTATED * len(keys):
            return []
        numbers = [f for f in said.facts if f.kind == "number"]
        if any(f.start <= said.tokens[i].start < f.end for i in added for f in numbers):
            return []
    missing = [(i.start, i.end) for i in g.issues if i.relation in ("ungrounded", "other_value")]
    denied = denied_words(g.sentence[3]) if g.sentence else frozenset()
    negated = negated_verbs(claim)
    stated, lost = False, []
    for i in added:
        t = said.tokens[i]
        in_fact = any(f.start <= t.start and t.end <= f.end for f in said.facts)
        unstated = any(a <= t.start and t.end <= b for a, b in missing)
        if not in_fact and word_lemmas(t.norm) & denied:
            return []  # ("can't be refunded" of "non-refundable": the opposites read it)
        if (
            g.sentence
            and word_lemmas(t.norm) & negated
            and any(stated_opposite(w, g.sentence[3]) for w in word_lemmas(t.norm) & negated)
        ):
            return []  # ("doesn't stop" of "continues": a denial of the sources' opposite)
        # a name or number the sources state, or one of their words
        stated = stated or (in_fact and not unstated) or (not in_fact and t.text not in g.soft)
        if unstated and not in_fact:
            lost.append(i)  # (a value no source states may be the asker's, or worked out)
    if stated:
        if not whole or not lost or 2 * len(lost) < len(added):
            return []
        added = lost  # what the sources do not state of what it adds
    first, last = said.tokens[added[0]], said.tokens[added[-1]]
    return [
        {
            "kind": "content",
            "relation": "unanswered",
            "start": first.start,
            "end": last.end,
            "text": claim[first.start : last.end],
        }
    ]


def _states_its_own_fact(claim: str, asked: set[str], issues: list[dict[str, Any]]) -> bool:
    """Whether the claim states a name, number or date the question does not use (its words
    ``asked``) and no issue flags: "in force since 1 September 1872", asked which law applies.
    A name sharing a word with the question is what was asked about ("Claudia Rivas Vega",
    asked about Claudia Rivas), not a name of the answer's own."""
    flagged = [(i.get("start"), i.get("end")) for i in issues]
    said = analyse(claim)
    facts: list[tuple[str, int, int]] = []  # (kind, start, end), a name's words as one
    for k, f in enumerate(said.facts):
        if facts and one_name(said, said.facts[k - 1], f):
            facts[-1] = ("name", facts[-1][1], f.end)
        else:
            facts.append((f.kind, f.start, f.end))
    for kind, start, end in facts:
        words = {w.casefold() for w in _WORDS.findall(claim[start:end])}
        if words <= asked or (kind == "name" and words & asked):
            continue
        if not any(
            isinstance(a, int) and isinstance(b, int) and a < end and start < b for a, b in flagged
        ):
            return True
    return False


def _unnamed(claim: str, question: str) -> list[dict[str, Any]]:
    """An ``off_question`` issue when the claim gives what its question asks about as no
    particular one of its kind ("stars a famous Australian actress", asked which actress; see
    :func:`~truthguard.refchecker.structure.unnamed_answer`), and names nothing the question
    does not: an answer that restates the question names no answer. A question answered by
    one of its options ("A or B") is answered by picking one, and left alone."""
    if OPTIONS.search(question):
        return []
    found = unnamed_answer(question, claim)
    if found is None:
        return []
    asked = analyse(question)
    if any(not fact_in(f, asked.facts, asked.norms, asked.stems) for f in analyse(claim).facts):
        return []  # it names something of its own: the readings of values weigh that
    noun, start, end = found
    return [
        {
            "kind": "content",
            "relation": "off_question",
            "start": start,
            "end": end,
            "text": claim[start:end],
            "asked": f"which {noun}",
            "given": "none in particular",
        }
    ]


def _off_question(claim: str, question: str) -> list[dict[str, Any]]:
    """An ``off_question`` issue when the answer opens with a short answer that gives another
    kind of thing than its question asks for: a date or number for who, a person for when
    (:func:`~truthguard.refchecker.structure.off_question`). Every word of "Paul Walker." may
    stand in the sources, asked when the Fast and Furious actor died; the word match alone
    would pass it."""
    off = off_question(question, claim)
    if off is None:
        return []
    asked, given = off
    text = claim.rstrip(" .")
    return [
        {
            "kind": "content",
            "relation": "off_question",
            "start": 0,
            "end": len(text),
            "text": text,
            "asked": asked,
            "given": given,
        }
    ]


RESTATED = 0.6
"""Share of a claim's content words and names (stems) taken from the question above which it
restates the question, however long the question."""

_CLOSED_QUESTION = re.compile(
    r"\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|may)\b",
    re.IGNORECASE,
)


def _attributed(issues: list[dict[str, Any]], claim: str, evidence: str) -> list[dict[str, Any]]:
    """The issues less the names the claim attributes its statement to ("Salil Shetty: ...",
    "..., writes Silvia Marchetti", "O'Mara says ..."): a summary names its article's author,
    whom the article's text does not name; what the statement says is still held to it. Where
    the evidence sentence attributes the statement itself ("According to Ovid, ..."), another
    speaker in the claim is another source, and stays an issue."""
    speakers = attribution_names(claim)
    if attribution_names(evidence):
        speakers = set()
    return _less_names(issues, lambda w: w.strip(".,'’").removesuffix("'s") in speakers)


def _less_names(issues: list[dict[str, Any]], known: Callable[[str], bool]) -> list[dict[str, Any]]:
    """The issues less the missing names (and titles) every word of which is ``known``."""
    return [
        i
        for i in issues
        if not (
            i["kind"] in ("name", "title")
            and i["relation"] == "ungrounded"
            and _WORDS.findall(i["text"])
            and all(known(w) for w in _WORDS.findall(i["text"]))
        )
    ]


def _set_against(kind: str, relation: str, span: Any, ref: int, offset: int) -> dict[str, Any]:
    """An issue for a claim span set against an evidence span (a role swap, an opposite or a
    recount: each has ``start`` / ``end`` / ``text`` in the claim and ``evidence_start`` /
    ``evidence_end`` / ``evidence_text`` in the sentence at ``offset`` of reference ``ref``)."""
    return {
        "kind": kind,
        "relation": relation,
        "start": span.start,
        "end": span.end,
        "text": span.text,
        "evidence": {
            "reference": ref,
            "start": offset + span.evidence_start,
            "end": offset + span.evidence_end,
            "text": span.evidence_text,
        },
    }


def _flagged(fields: dict[str, Any]) -> set[tuple[int, int]]:
    """The claim spans its issues already set against the evidence (not merely not found)."""
    return {(i["start"], i["end"]) for i in fields["issues"] if i["relation"] != "ungrounded"}


def _stems(a: Any) -> set[str]:
    """Stems of a text's content words and names."""
    names = {f.start for f in a.facts if f.kind == "name"}
    return {stem(t.norm) for k, t in enumerate(a.tokens) if k in a.content or t.start in names}


def _about_claim(
    words: set[str], sentences: list[tuple[int, int, str]]
) -> list[tuple[int, int, str]]:
    """The sentences about the same thing as a claim: those sharing two of its ``words``
    (:func:`_stems`)."""
    return [s for s in sentences if len(words & _stems(analyse(s[2]))) >= 2]


def _flipped_words(
    claim: str, fields: dict[str, Any], sentences: list[tuple[int, int, str]]
) -> list[dict[str, Any]]:
    """Conflicts for the claim's words whose opposite a sentence of its passages about the same
    thing (sharing two of its other words) states, while none of them states the word itself
    ("lost" for "won", "south" for "north"; see :mod:`~truthguard.refchecker.opposites`)."""
    flagged = _flagged(fields)
    words = _stems(analyse(claim))
    about = _about_claim(words, sentences)
    stated = [(text, {stem(t.norm) for t in analyse(text).tokens}) for _, _, text in about]
    said = set().union(*(own for _, own in stated))
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for ref, offset, text in about:
        for f in flips(claim, text):
            word = stem(f.text.casefold())
            if (f.start, f.end) in flagged or (f.start, f.end) in out or word in said:
                continue
            if len((words - {word}) & _stems(analyse(text))) >= 2:
                out[(f.start, f.end)] = _set_against("content", "opposite", f, ref, offset)
        # a sentence stating the word and its opposite: which one the claim's other words go
        # with, unless another sentence about the claim states the word too (a copy of the
        # claim's own sentence beside one contrasting "eastern" and "western" parts)
        for f in crossed_flips(claim, text):
            word = stem(f.text.casefold())
            if (f.start, f.end) in flagged or (f.start, f.end) in out:
                continue
            if any(word in own for other, own in stated if other != text):
                continue
            out[(f.start, f.end)] = _set_against("content", "opposite", f, ref, offset)
    return list(out.values())


def _recounted(
    claim: str,
    fields: dict[str, Any],
    sentences: list[tuple[int, int, str]],
    every: list[tuple[int, int, str]],
    rounded: bool = True,
    case: Sequence[Fact] = (),
) -> list[dict[str, Any]]:
    """Other values for the claim's counts: a sentence of its passages counts the same thing
    with another number, none of them states the claim's, and no sentence of the sources
    (``every``) counts the same thing with it ("two other roles" where it says "three other
    roles"; see :mod:`~truthguard.refchecker.counts`). A count of the same noun one passage
    states is stated, whichever passage the retriever ranked first: "cut up to two guests" of
    "reduce your party by up to 2 guests", beside "bookings of 15 or more guests". A count the
    asker gives of their own case (``case``: "my 38 MB file", "seven nights") is theirs, not
    the sources' count of the same thing."""
    flagged = _flagged(fields)
    flagged |= {
        (f.start, f.end)
        for f in analyse(claim).facts
        if f.kind == "number" and any(same_value(f, c) for c in case)
    }
    flagged |= {(r.start, r.end) for s in sentences for r in agreeing(claim, s[2])}
    flagged |= {(r.start, r.end) for s in every for r in agreeing(claim, s[2], of_noun=True)}
    out: dict[tuple[int, int], dict[str, Any]] = {}
    # only in a sentence about the same thing, sharing another of the claim's words than the
    # noun counted ("cut two guests" of the user's booking is no other count than the policy's
    # "groups of 8 guests or more")
    for ref, offset, text in _about_claim(_stems(analyse(claim)), sentences):
        for r in recounts(claim, text, rounded=rounded):
            if (r.start, r.end) not in flagged and (r.start, r.end) not in out:
                out[(r.start, r.end)] = _set_against("number", "other_value", r, ref, offset)
    return list(out.values())


def _reordered(
    claim: str, question: str, fields: dict[str, Any], sentences: list[tuple[int, int, str]]
) -> list[dict[str, Any]]:
    """A conflict for the claim's order word ("born first", "older than") when the years the
    sources give its two sides order them the other way (see
    :mod:`~truthguard.refchecker.comparisons`); ``sentences`` are every sentence of the
    passages, in order, since each side is introduced where the sources first name it."""
    flagged = _flagged(fields)
    out = []
    texts = [text for _, _, text in sentences]
    found = [*out_of_order(claim, question, texts), *counted_the_other_way(claim, question, texts)]
    for span, n in found:
        if (span.start, span.end) not in flagged:
            ref, offset, _ = sentences[n]
            out.append(_set_against("order", "opposite", span, ref, offset))
    return out


def _grounding_fields(g: Grounding) -> dict[str, Any]:
    evidence = None
    if g.sentence is not None:
        ref, start, end, text = g.sentence
        evidence = {"reference": ref, "start": start, "end": end, "text": text}
    return {"evidence": evidence, "issues": [_issue_fields(i) for i in g.issues]}


def _issue_fields(issue: Issue) -> dict[str, Any]:
    """One grounding issue as a claim's ``issues`` entry."""
    item: dict[str, Any] = {
        "kind": issue.kind,
        "relation": issue.relation,
        "start": issue.start,
        "end": issue.end,
        "text": issue.text,
    }
    if issue.evidence is not None:
        ref, start, end, text = issue.evidence
        item["evidence"] = {"reference": ref, "start": start, "end": end, "text": text}
    return item


MEANING_MIN_WORDS = 5
"""Words a claim's sentence needs for its meaning to be read: a list item ("F♯"), a title or a
short answer says too little alone to weigh against a passage (its facts decide it)."""


class LocalChecker(ClaimChecker):
    """Labels claims without an LLM.

    Grounding mode (default): a claim is Entailment only when what it asserts is in its
    evidence (the sentences of its ``top_k`` segments). Every number, date, name and quoted
    title must be found there after normalisation ("1,200" = "1200", "twelve" = "12",
    "eleventh" = "11th", "Aug. 19" = "19 August", a surname for a
    full name); else the claim is Neutral. A fact set against a different one of the same kind in
    the claim's evidence sentence (another year, another name in the same place), or a negation
    on one side only, makes it Contradiction. Its content words must match the evidence (same
    word or stem, else a soft match of MiniLM token vectors at or above ``word_floor``), and
    their soft precision must reach ``entailment_threshold``. Support: that precision for an
    Entailment, at most 0.5 for a Neutral, 0 for a Contradiction, so ``min_support`` with a
    threshold between 0.5 and ``entailment_threshold`` decides like ``strict``.

    Similarity mode (``grounding=False``): the earlier score, best cosine blended with content
    word recall (``lexical_weight``), Entailment at or above ``entailment_threshold`` (0.6 by
    default there). It never says Contradiction and passes swapped numbers and names.

    NLI mode (``nli`` set): a local sentence-transformers ``CrossEncoder`` NLI model scores each
    (segment, claim) pair; Entailment when some segment entails the claim (probability >=
    ``nli_threshold``), else Contradiction when some segment contradicts it, else Neutral. With
    ``grounding`` on, the fact check still applies: an ungrounded fact caps the label at
    Neutral, a conflicting one makes it Contradiction. See
    :class:`~truthguard.refchecker.nli.NLIChecker` for hub models.

    Example:
        >>> checker = LocalChecker(word_floor=0.55)
    """

    grounding: bool = True
    """Check hard facts, negation and content words against the evidence (see above)."""
    entailment_threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    """Grounding mode: soft precision of the content words at or above which the claim can be
    Entailment (default 0.8). Similarity mode: support for Entailment (default 0.6)."""
    word_floor: float = Field(default=0.55, ge=0.0, le=1.0)
    """Grounding mode: a content word found neither as such nor by stem whose best token cosine
    with the evidence words is below this makes the claim Neutral."""
    nli: Any = None
    """A :class:`~truthguard.similarity.CrossEncoderSimilarity` over an NLI model, or the path of
    a local ``CrossEncoder`` NLI model directory; None for the grounding / similarity modes."""
    nli_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    """Probability at or above which an NLI entailment / contradiction counts."""
    lexical_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    """Similarity mode only: weight of lexical grounding in the support, ``(1 - w) * cosine + w
    * recall``, where recall is the share of the claim's content words found in its top-k
    segments."""
    similarity: Any = None
    """Embedding model for the soft word match (an
    :class:`~truthguard.similarity.EmbeddingSimilarity`); None: the packaged MiniLM."""
    support: SupportModel | None = None
    """Grounding mode: the model that turns a claim's grounding into ``P(unsupported)`` and its
    label (see :mod:`~truthguard.refchecker.support`); None: the packaged one. A claim with a
    conflicting fact is Contradiction; else Neutral when ``P(unsupported)`` reaches the
    model's ``claim_threshold``, Entailment below it."""

    meaning: MeaningModel | bool = True
    """Grounding mode: whether each fact claim's sentence is read against its closest evidence
    sentences by meaning (:mod:`~truthguard.refchecker.meaning`), recorded as the claim's
    ``meaning`` log-odds (it decides nothing; a cascade may escalate on it). True: the packaged
    :class:`~truthguard.refchecker.meaning.MeaningModel`; a model (or the path of a saved one)
    to use another; False: none. It reads the packaged MiniLM's vectors: with another
    :attr:`similarity` model it reads none."""

    _soft: SoftMatcher | None = PrivateAttr(default=None)

    @field_validator("support", mode="before")
    @classmethod
    def _support_file(cls, v: Any) -> Any:
        return SupportModel.load(v) if isinstance(v, str | Path) else v

    @field_validator("meaning", mode="before")
    @classmethod
    def _meaning_file(cls, v: Any) -> Any:
        return MeaningModel.load(v) if isinstance(v, str | Path) else v

    @field_validator("nli", mode="before")
    @classmethod
    def _load_nli(cls, v: Any) -> Any:
        if isinstance(v, str | Path):
            return CrossEncoderSimilarity(v)
        if v is not None and not callable(getattr(v, "probabilities", None)):
            raise ValueError("expected a CrossEncoderSimilarity or a model directory path")
        return v

    def _matcher(self) -> SoftMatcher:
        if self._soft is None:
            self._soft = SoftMatcher(self.similarity or get_default_similarity())
        return self._soft

    def ground(
        self,
        claim: str,
        retrieval: Retrieval,
        i: int,
        *,
        content: bool = True,
        pool: EvidencePool | None = None,
        context: str | None = None,
        context_sentences: list[tuple[int, int, str]] | None = None,
        context_memo: dict[tuple, Grounding] | None = None,
        referents: Sequence[str] = (),
        case: Sequence[Fact] = (),
        period: str | None = None,
        case_words: Collection[str] = frozenset(),
        rounded: bool = True,
    ) -> Grounding:
        """The grounding of claim ``i`` (text ``claim``) in its top-k segments.

        Its names, numbers and words may also be found in ``pool`` (default: the passages of
        its top-k segments; see :func:`~truthguard.refchecker.grounding.ground_claim` for
        which of their sentences count). A clause is also read in its sentence ``context``;
        the clauses of one check share ``context_memo`` so each sentence is read once.
        """
        sentences, hint = _pool(retrieval, i)
        if pool is None:
            pool = _local(retrieval, retrieval.top_k[i])
        return ground_claim(
            claim,
            sentences,
            pool=pool,
            hint=hint,
            soft=self._matcher() if content else None,
            word_floor=self.word_floor,
            precision_threshold=(
                0.8 if self.entailment_threshold is None else self.entailment_threshold
            ),
            check_content=content,
            context=context,
            context_sentences=context_sentences,
            context_memo=context_memo,
            referents=referents,
            one_document=retrieval.one_document,
            case=case,
            period=period,
            case_words=case_words,
            rounded=rounded,
        )

    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        if self.nli is not None:
            return await asyncio.to_thread(_nli_verdicts, self, claims, retrieval, self._nli_scores)
        if self.grounding:
            return await asyncio.to_thread(self._ground_all, claims, retrieval, question)
        threshold = 0.6 if self.entailment_threshold is None else self.entailment_threshold
        out = []
        for i, claim in enumerate(claims):
            cosine = retrieval.support(i)
            numbers = {"cosine": round(cosine, 4)}
            support = cosine
            if self.lexical_weight:
                segments = [retrieval.segments[j].text for j in retrieval.top_k[i]]
                recall = content_recall(claim.text, " ".join(segments))
                numbers["recall"] = round(recall, 4)
                support = (1 - self.lexical_weight) * cosine + self.lexical_weight * recall
            support = min(max(support, 0.0), 1.0)
            label = "Entailment" if support >= threshold else "Neutral"
            out.append(
                ClaimVerdict(
                    label=label, support=support, raw=json.dumps(numbers), mode="embedding"
                )
            )
        return out

    def _ground_all(
        self, claims: list[Claim], retrieval: Retrieval, question: str = ""
    ) -> list[ClaimVerdict]:
        out = []
        asked = {w.casefold() for w in _WORDS.findall(question)}
        # a clause is also read in its sentence, against what was found for all its clauses
        found: dict[str, dict[tuple[int, int, str], None]] = {}
        segments_of: dict[str, set[int]] = {}
        for i, claim in enumerate(claims):
            if claim.sentence is not None:
                found.setdefault(claim.sentence, {}).update(dict.fromkeys(_pool(retrieval, i)[0]))
                segments_of.setdefault(claim.sentence, set()).update(retrieval.top_k[i])
        by_sentence = {text: list(sents) for text, sents in found.items()}
        in_order = [
            (seg.reference, span.start, span.text)
            for seg in retrieval.segments
            for span in seg.spans
        ]
        read: dict[tuple, Grounding] = {}  # sentences read whole, for the clauses cut from them
        # the claims and the sentences they are held against, parsed in one batch
        parse_all(
            [c.text for c in claims]
            + [c.sentence for c in claims if c.sentence is not None]
            + [text for _, _, text in in_order]
        )
        # the numbers each claim states, for a value another claim works out from them, and
        # those the passages state, which a claim's working may start from
        numbers = [[f for f in analyse(c.text).facts if f.kind == "number"] for c in claims]
        every_number = [f for _, _, t in in_order for f in analyse(t).facts if f.kind == "number"]

        def stated_elsewhere(i: int) -> list:
            return [f for k, found in enumerate(numbers) if k != i for f in found]

        meant = self._meanings(claims, retrieval)
        # what a claim's pronoun subject stands for: the names the question asks about
        named = [f.text for f in analyse(question).facts if f.kind in ("name", "title")]
        case = own_case(question)  # the asker's own figures ("My spaniel weighs 20 kg")
        period = asked_period(question)  # "What would a year of electricity cost?"
        case_words = own_words(question)  # "I'm on the Core plan": which item of a list is theirs
        # an answer that is the amount a question asks for ("How many ...?" "About 300,000.")
        # gives it as the sources state it; one working through a case may round on the way
        rounded = not (asks_amount(question) and len(claims) == 1)
        read_claims: list[tuple[Grounding, dict[str, Any], dict[str, Any], str, float]] = []
        for i, claim in enumerate(claims):
            # talk around facts (opinions, questions, ...): only its names and numbers count
            # a claim's evidence is what it and the other clauses of its sentence retrieved
            near_segments = segments_of.get(claim.sentence or "", set()) | set(retrieval.top_k[i])
            g = self.ground(
                claim.text,
                retrieval,
                i,
                content=claim.kind == "fact",
                pool=_local(retrieval, near_segments),
                context=claim.sentence,
                context_sentences=by_sentence.get(claim.sentence or ""),
                context_memo=read,
                referents=named,
                case=case,
                period=period,
                case_words=case_words,
                rounded=rounded,
            )
            raw: dict[str, Any] = {
                "precision": round(g.precision, 4),
                "cosine": round(retrieval.support(i), 4),
                "soft": g.soft,
                "issues": [f"{x.relation}:{x.kind}:{x.text}" for x in g.issues],
                "n_facts": g.n_facts,
                "n_content": g.n_content,
                "copied": g.copied,
            }
            if meant.get(i) is not None:
                raw["meaning"] = round(meant[i], 4)
            fields = _grounding_fields(g)
            label, support = g.label, min(max(g.support, 0.0), 1.0)
            if claim.kind == "fact":
                if not OPTIONS.search(question):
                    # a name the user asked about is the one the sources speak of; one of the
                    # options of "A or B?" is what the answer picks, and must be stated
                    fields["issues"] = _named_in_question(fields["issues"], asked)
                said = g.sentence[3] if g.sentence else ""
                fields["issues"] = _attributed(fields["issues"], claim.text, said)
                near = _pool(retrieval, i)[0]
                fields["issues"] += _flipped_words(claim.text, fields, near)
                fields["issues"] += _recounted(claim.text, fields, near, in_order, rounded, case)
                fields["issues"] += _reordered(claim.text, question, fields, in_order)
                fields["issues"] += _unanswered(
                    claim.text, question, g, whole=claim.sentence is None
                )
                if i == 0 and claim.sentence is None:  # the answer's opening sentence
                    fields["issues"] += _off_question(claim.text, question)
                fields["issues"] += _unnamed(claim.text, question)
                if len(claims) == 1:  # (a longer answer's clauses lean on each other)
                    flagged = _flagged(fields)
                    fields["issues"] += [
                        _issue_fields(x)
                        for x in subject_of_another(claim.text, in_order)
                        if (x.start, x.end) not in flagged
                    ]
                fields["issues"] += _joined_in_question(claim.text, question, fields, near)
                # the user's own values, held against the sources' ("40 hours clears the
                # 35-hour minimum"), are theirs to state
                days = case_days(claim.text, case_words)
                own = premises(
                    fields["issues"],
                    claim.text,
                    question,
                    said,
                    stated_elsewhere(i),
                    # (the claim's other sentences of the passage it retells, less those
                    # said of another case than the asker's; another passage's figures make
                    # chance sums)
                    [
                        t
                        for ref, _, t in near
                        if t != said and ref == g.sentence[0] and not of_other_case(days, case, t)
                    ]
                    if g.sentence
                    else [],
                    every_number,
                )
                if (
                    label == "Contradiction"
                    and len(own) < len(fields["issues"])
                    and not any(x["relation"] in ("conflict", "opposite") for x in own)
                ):
                    label = "Neutral"  # what set it against the evidence was the user's own
                fields["issues"] = own
            read_claims.append((g, raw, fields, label, support))
        # a number of the answer's no source states that the answer works out from the values
        # it shows ("a quarter of 58 plus three quarters of 68 ... 65.5"), with rates the
        # sources give of the asker's case (not "on weekdays" for their Saturday, nor "for dogs
        # under 25 kg" for their 30 kg dog)
        asked_days = case_days("", case_words)
        sources = [s for s in in_order if not of_other_case(asked_days, case, s[2])]
        read_claims = _worked_in_answer(claims, read_claims, case, question, sources)
        for claim, (g, raw, fields, label, support) in zip(claims, read_claims, strict=True):
            if claim.kind == "fact":
                model = self.support or SupportModel.default()
                p = model.probability(claim_features(raw, fields["issues"]))
                why = fact_unsupported(fields["issues"], claim.text)
                if (
                    why is None
                    and len(claims) == 1
                    and not OPTIONS.search(question)
                    and says_nothing_stated(raw, fields["issues"])
                    and not _states_its_own_fact(claim.text, asked, fields["issues"])
                ):
                    # an answer that is one claim, none of whose words the sources state,
                    # says nothing they say of the names it was asked about ("Cardillac is a
                    # ballet."); one that picks an option of "A or B", or states a name, number
                    # or date of its own that they state, says that in any words
                    why = "content"
                if why is not None:
                    # a number no source states, or a value set against the evidence's own
                    p = max(p, FACT_P)
                    raw["unsupported_fact"] = why
                    if why == "conflict":
                        label = "Contradiction"
                raw["p_unsupported"] = round(p, 4)
                raw["aligned"] = g.label
                if label != "Contradiction":
                    label = "Neutral" if p >= model.claim_threshold else "Entailment"
                support = 0.0 if label == "Contradiction" else 1.0 - p
            out.append(
                ClaimVerdict(
                    label=label,
                    support=support,
                    raw=json.dumps(raw, ensure_ascii=False),
                    mode="grounding",
                    **fields,
                )
            )
        return out

    def _meanings(self, claims: list[Claim], retrieval: Retrieval) -> dict[int, float | None]:
        """The meaning model's log-odds for each fact claim against its evidence sentences (the
        sentences of its top-k segments; their vectors are cached by now). A clause is read as
        the sentence it was cut from, as the model was fitted on whole claims: "and Macleod did
        the same with Collip" means little alone."""
        sim = self.similarity or get_default_similarity()
        if self.meaning is False or getattr(sim, "packaged", False) is not True:
            return {}  # off, or another embedding model than the one it was fitted on
        model = MeaningModel.default() if self.meaning is True else self.meaning
        read = {
            i: c.sentence or c.text
            for i, c in enumerate(claims)
            if c.kind == "fact" and len((c.sentence or c.text).split()) >= MEANING_MIN_WORDS
        }
        pools = {i: [t for _, _, t in _pool(retrieval, i)[0]] for i in read}
        texts = list(dict.fromkeys([*read.values(), *(t for v in pools.values() for t in v)]))
        if not texts:
            return {}
        vec = dict(zip(texts, sim.embed(texts), strict=True))
        return {
            i: model.log_odds(vec[t], np.array([vec[x] for x in pools[i]])) for i, t in read.items()
        }

    def _nli_scores(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Entailment and contradiction probabilities of each pair by the ``nli`` model."""
        probs = self.nli.probabilities(pairs)  # one predict call for the whole check
        if probs.ndim != 2 or probs.shape[1] < 3:
            raise ConfigurationError("the NLI model must output entailment/neutral/contradiction")
        ent = self.nli.label_index("entailment")
        con = self.nli.label_index("contradiction")
        return np.stack([probs[:, ent], probs[:, con]], axis=1)


def _nli_verdicts(
    checker: LocalChecker,
    claims: list[Claim],
    retrieval: Retrieval,
    scores_of: Callable[[list[tuple[str, str]]], np.ndarray],
) -> list[ClaimVerdict]:
    """RefChecker's NLI rule per claim, then the fact check (when on) caps or overrides it.

    ``scores_of`` gives the entailment and contradiction probabilities of (segment, claim)
    pairs: each claim with each of its top-k segments, all in one call."""
    scores = scores_of(
        [
            (retrieval.segments[j].text, c.text)
            for i, c in enumerate(claims)
            for j in retrieval.top_k[i]
        ]
    )
    out = []
    row = 0
    for i, claim in enumerate(claims):
        k = len(retrieval.top_k[i])
        block = scores[row : row + k]
        row += k
        p_ent, p_con = float(block[:, 0].max()), float(block[:, 1].max())
        if p_ent >= checker.nli_threshold:
            label = "Entailment"
        elif p_con >= checker.nli_threshold:
            label = "Contradiction"
        else:
            label = "Neutral"
        support = p_ent
        raw: dict[str, Any] = {"entailment": round(p_ent, 4), "contradiction": round(p_con, 4)}
        fields: dict[str, Any] = {}
        if checker.grounding:
            g = checker.ground(claim.text, retrieval, i, content=False)
            fields = _grounding_fields(g)
            raw["facts"] = [f"{x.relation}:{x.kind}:{x.text}" for x in g.issues]
            if g.label == "Contradiction":
                label, support = "Contradiction", 0.0
            elif g.label == "Neutral" and label == "Entailment":
                label, support = "Neutral", min(support, 0.5)
        out.append(
            ClaimVerdict(label=label, support=support, raw=json.dumps(raw), mode="nli", **fields)
        )
    return out


def _verdict_label(text: str, claim: Claim) -> str:
    """The label of a one-claim reply; a reply that repeats the claim is no verdict."""
    label = parse_label(text, stage="refchecker.check")
    if echoes(text, claim.text) or echoes(text, claim.prompt_text()):
        raise InvalidLLMOutput(
            "the reply repeats the claim it was asked to judge, so its label is no verdict",
            raw=text,
            stage="refchecker.check",
        )
    return label


def _sentence_shares(
    fact: Fact, claim: str, sentence: tuple[int, int, int, str] | None
) -> list[float]:
    """The shares a value of the claim may be taken at from its evidence sentence's
    percentages: each as that share, less it or more it ("40% in October" makes £7,360 of
    £18,400; "a 5% discount" £4,674 of £4,920). Where the sentence gives several, only one
    whose next words the claim says right after the value ("£7,360 in October")."""
    if sentence is None:
        return []
    text = sentence[3]
    found = [f for f in analyse(text).facts if f.kind == "number" and f.unit == "%"]
    if len(found) == 1:
        v = float(found[0].value) / 100  # type: ignore[arg-type]
        return [v, 1 - v, 1 + v] if 0 < v < 1 else []
    # a list of shares: each is its item's, taken as it is (the words after a value the claim
    # puts in brackets are those after the brackets: "40% (£7,360) in October")
    close = re.match(r"\s*\)", claim[fact.end :])
    mine = _words_after(claim, fact.end + (close.end() if close else 0))
    return [
        float(f.value) / 100  # type: ignore[arg-type]
        for f in found
        if _words_after(text, f.end) & mine and 0 < float(f.value) < 100  # type: ignore[arg-type]
    ]


def _words_after(text: str, at: int) -> set[str]:
    """The content words after ``text[at]`` up to the next number or stop."""
    tail = re.split(r"[\d,;.:()]", text[at:], maxsplit=1)[0]
    return {w.casefold() for w in re.findall(r"[A-Za-z]+", tail)} - STOPWORDS


def _worked_in_answer(
    claims: Sequence[Claim],
    read: list[tuple[Grounding, dict[str, Any], dict[str, Any], str, float]],
    case: Sequence[Fact],
    question: str,
    sources: Sequence[tuple[int, int, str]] = (),
) -> list[tuple[Grounding, dict[str, Any], dict[str, Any], str, float]]:
    """``read`` (each claim's grounding, raw fields, fields, label and support) less the issues
    of numbers no source states that the answer works out from the values it shows: those the
    sources state where each of its claims states them, and the asker's own figures
    (:func:`~truthguard.refchecker.derived.shown_working`). A claim set against its evidence
    only by such a number is no longer a contradiction; the asker's own figures restated are
    not worked out (:func:`~truthguard.refchecker.grounding.premises` decides them). A rate
    the ``sources`` (their sentences: reference, offset and text) or the answer give per
    something works with the known values that count it, and a claim's value may be a known
    value, or an amount another sentence of its evidence sentence's passage states, taken at a
    share of its evidence sentence (:func:`_sentence_shares`: "40% (£7,360) in October" of "40%
    in October" beside "The annual fee is £18,400")."""
    known: list[Fact] = [f for f in case if workable(f, case, question)]
    rates = {id(f) for f in known if per_period_value(f, question)}
    per = []
    counted: dict[int, tuple[frozenset[str], bool]] = {}

    def read_rate(f: Fact, text: str, own: bool) -> None:
        keys = per_what(f, text)
        if keys:
            per.append((float(f.value), measure_of(f), keys))  # type: ignore[arg-type]
        elif id(f) not in rates:  # (a value given for a period counts nothing)
            counted[id(f)] = (counts_of(f, text), own)

    for f in known:
        read_rate(f, question, False)
    for _, _, text in sources:
        facts = analyse(text).facts
        per.extend(
            (float(f.value), measure_of(f), keys)  # type: ignore[arg-type]
            for f in facts
            if f.kind == "number" and workable(f, facts, text) and (keys := per_what(f, text))
        )
    targets: list[tuple[int, Fact]] = []
    for k, (claim, (_, _, fields, _, _)) in enumerate(zip(claims, read, strict=True)):
        facts = analyse(claim.text).facts
        issues = fields["issues"]
        for f in facts:
            if f.kind != "number" or not workable(f, facts, claim.text):
                continue
            if per_period_value(f, claim.text):
                rates.add(id(f))
            at = [i for i in issues if i["start"] < f.end and f.start < i["end"]]
            if not at:
                known.append(f)
                read_rate(f, claim.text, True)
            elif (
                claim.kind == "fact"
                and all(i["kind"] == "number" and i["relation"] == "ungrounded" for i in at)
                # (the asker's own figure restated stays where the grounding left it: one the
                # claim compares untruly with the sources' value)
                and not any(q.value == f.value and q.unit == f.unit for q in case)
            ):
                targets.append((k, f))
    if not targets:
        return read
    for k, f in targets:  # (a target worked out counts what it names for the next step)
        counted[id(f)] = (counts_of(f, claims[k].text), True)
    shares = {
        id(f): _sentence_shares(f, claims[k].text, read[k][0].sentence)
        for k, f in targets
        if read[k][0].sentence is not None
    }
    # the amounts each passage states, for a share of its sentence taken of one
    stated: dict[int, list[tuple[float, str]]] = {}
    for ref, _, text in sources:
        facts = analyse(text).facts
        stated.setdefault(ref, []).extend(
            (float(f.value), measure_of(f))  # type: ignore[arg-type]
            for f in facts
            if f.kind == "number"
            and workable(f, facts, text)
            and measure_of(f) != "%"
            and not per_what(f, text)
        )
    bases = {
        id(f): stated.get(read[k][0].sentence[0], [])  # type: ignore[index]
        for k, f in targets
        if read[k][0].sentence is not None
    }
    done = shown_working([f for _, f in targets], known, rates, per, counted, shares, bases)
    if not done:
        return read
    out = list(read)
    for k in {k for k, f in targets if id(f) in done}:
        g, raw, fields, label, support = out[k]
        spans = {(f.start, f.end) for j, f in targets if j == k and id(f) in done}
        kept = [i for i in fields["issues"] if (i["start"], i["end"]) not in spans]
        if label == "Contradiction" and not any(
            i["relation"] in ("conflict", "opposite") for i in kept
        ):
            label = "Neutral"
        out[k] = (g, raw, {**fields, "issues": kept}, label, support)
    return out
