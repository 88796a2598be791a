"""Claim extractors: turn an answer into the claims a checker labels.

* :class:`LLMExtractor`: an LLM writes claim triplets or sub-sentence claims (paper section 3.1).
* :class:`LocalExtractor`: sentence and clause splitting, no model (a zero-cost mode).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from truthguard._text import has_content
from truthguard.llm import LLMSession, as_runnable
from truthguard.refchecker._parse import parse_subsentence_claims, parse_triplets
from truthguard.refchecker._prompts import (
    PROMPT_VERSION,
    SUBSENTENCE_EXTRACTION_PROMPT,
    TRIPLET_EXTRACTION_PROMPT,
)
from truthguard.refchecker.claimkind import ClaimKind, claim_parts, strip_frame
from truthguard.refchecker.segment import iter_sentences, split_clauses
from truthguard.store import ArtifactStore, cached_call

__all__ = ["Claim", "ClaimExtractor", "Extraction", "LLMExtractor", "LocalExtractor"]

_OFF_LOOP_CHARS = 10_000
"""Answers longer than this are split into claims on a worker thread, not on the event loop."""


class Claim(BaseModel):
    """One checkable claim of an answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """The claim as a sentence (a triplet is written as "subject predicate object")."""
    triplet: tuple[str, str, str] | None = None
    """The (subject, predicate, object) triplet, when the extractor wrote one."""
    kind: ClaimKind = "fact"
    """``fact`` for a statement about the world; otherwise the talk around facts (question,
    greeting, opinion, hedge, framing, refusal; see :mod:`~truthguard.refchecker.claimkind`),
    of which only names, numbers and titles are checked."""
    sentence: str | None = None
    """The answer sentence the claim was cut from, when it is a clause or list item of it (the
    local extractor); None when the claim is a whole sentence or was written by an LLM."""

    def prompt_text(self) -> str:
        """How the claim is shown to a checker LLM."""
        if self.triplet is not None:
            return "(" + ", ".join(f'"{p}"' for p in self.triplet) + ")"
        return self.text


class Extraction(BaseModel):
    """The claims of one answer, and what the extractor said to produce them."""

    model_config = ConfigDict(extra="forbid")

    claims: list[Claim]
    """Deduplicated claims, in answer order; empty means the response abstains."""
    raw: str | None = None
    """The extractor LLM's text (None for the local extractor)."""
    unparsed: list[str] = Field(default_factory=list)
    """Lines of the LLM output the parser could not use."""


class ClaimExtractor(BaseModel, ABC):
    """Base class of extractors."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @abstractmethod
    async def aextract(
        self, question: str, answer: str, session: LLMSession, *, store: ArtifactStore | None
    ) -> Extraction:
        """Extract the claims of ``answer`` (to ``question``)."""


def runnable_model(v: Any) -> Any:
    """``v``, once it is known to serve as an LLM: a wrong model fails here, not when called."""
    as_runnable(v, field="model")
    return v


class LLMExtractor(ClaimExtractor):
    """Claims written by an LLM, as triplets or as short stand-alone sentences.

    Example:
        >>> from truthguard.testing import ScriptedChatModel
        >>> llm = ScriptedChatModel(default='("Paris", "is capital of", "France")')
        >>> ex = LLMExtractor(model=llm, mode="triplet")
    """

    model: Any
    """A LangChain chat model (or any Runnable / callable str -> str)."""
    mode: Literal["triplet", "subsentence"] = "triplet"
    """``triplet`` for ("subject", "predicate", "object") claims, ``subsentence`` for sentences."""

    _model_like = field_validator("model")(runnable_model)

    async def aextract(
        self, question: str, answer: str, session: LLMSession, *, store: ArtifactStore | None
    ) -> Extraction:
        template = (
            TRIPLET_EXTRACTION_PROMPT if self.mode == "triplet" else SUBSENTENCE_EXTRACTION_PROMPT
        )
        stage = "refchecker.extract"
        text = await cached_call(
            session,
            self.model,
            template.format(question=question, answer=answer),
            store=store,
            question=question,
            kind=f"refchecker.claims.{self.mode}",
            prompt_version=PROMPT_VERSION,
            stage=stage,
            extra=hashlib.sha1(answer.encode("utf-8")).hexdigest(),
            metadata={"replay_key": f"extract:{self.mode}:{question}\x1f{answer}"},
            validate=lambda t: self._parse(t, stage),
        )
        claims, unparsed = self._parse(text, stage)
        return Extraction(claims=claims, raw=text, unparsed=unparsed)

    def _parse(self, text: str, stage: str) -> tuple[list[Claim], Any]:
        if self.mode == "triplet":
            parsed = parse_triplets(text, stage=stage)
            return [Claim(text=" ".join(t), triplet=t) for t in parsed.claims], parsed.unparsed
        parsed_claims = parse_subsentence_claims(text, stage=stage)
        return [Claim(text=c) for c in parsed_claims.claims], parsed_claims.unparsed


class LocalExtractor(ClaimExtractor):
    """Claims by sentence and clause splitting; no model, no cost.

    A very short sentence (a bare answer such as "Persian Gulf") says little on its own, so it is
    joined to the question ("<question>: Persian Gulf"), the way RefChecker's extractor completes
    a short answer from the question.

    Example:
        >>> [c.text for c in LocalExtractor().extract("Q?", "It rains. Cats sleep.")]
        ['It rains.', 'Cats sleep.']
    """

    classify: bool = True
    """Tag each claim with its kind (fact, opinion, question, ...) and cut framing lead-ins
    ("Based on the passages, ..."); off: every piece is a fact, as written."""
    split_clauses: bool = True
    """Also split sentences at clause boundaries (semicolons, ", and", ", which", ...).
    With ``classify`` on, a refusal that gives way to a statement ("I don't know when, but it
    was shot in Rome") is cut there even when this is off."""
    min_clause_words: int = Field(default=4, ge=1)
    """Clauses shorter than this are glued back to a neighbour."""
    question_context_words: int = Field(default=0, ge=0)
    """Sentences with fewer words than this are prefixed with the question (0 disables)."""

    async def aextract(
        self, question: str, answer: str, session: LLMSession, *, store: ArtifactStore | None
    ) -> Extraction:
        if len(answer) <= _OFF_LOOP_CHARS:
            return Extraction(claims=self.extract(question, answer))
        # A long answer is split on a worker thread, which stops when the check is cancelled.
        stop = threading.Event()
        try:
            claims = await asyncio.to_thread(self._extract, question, answer, stop)
        finally:
            stop.set()
        return Extraction(claims=claims)

    def extract(self, question: str, answer: str) -> list[Claim]:
        """The synchronous core (pure function of the texts)."""
        return self._extract(question, answer, None)

    def _extract(self, question: str, answer: str, stop: threading.Event | None) -> list[Claim]:
        texts: list[tuple[str, ClaimKind, str | None]] = []
        for sentence in iter_sentences(answer):
            if stop is not None and stop.is_set():
                return []  # abandoned: nobody reads the claims
            if not any(ch.isalnum() for ch in sentence.text):
                continue
            parts: list[tuple[str, ClaimKind]]
            if self.classify:  # clauses, and the statement after an opening refusal
                parts = claim_parts(
                    sentence.text, min_words=self.min_clause_words, clauses=self.split_clauses
                )
            elif self.split_clauses:
                parts = [
                    (p, "fact")
                    for p in split_clauses(sentence.text, min_words=self.min_clause_words)
                ]
            else:
                parts = [(sentence.text, "fact")]
            for piece, kind in parts:
                if kind == "fact" and self.classify:
                    piece = strip_frame(piece)[0]
                if not has_content(piece):
                    # "- - - -" between two clauses, or what a lead-in leaves ("Yes, {...}"
                    # echoing a template slot), is no claim
                    continue
                if len(piece.split()) < self.question_context_words:
                    piece = f"{question.strip().rstrip('?').strip()}: {piece}"
                whole = sentence.text if piece != sentence.text else None
                texts.append((piece, kind, whole))
        seen: set[str] = set()
        claims = []
        for t, kind, whole in texts:
            if t.casefold() not in seen:
                seen.add(t.casefold())
                claims.append(Claim(text=t, kind=kind, sentence=whole))
        return claims
