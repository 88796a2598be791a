"""Stage 3 of Reverse Validation: does the entity come back in the model's answer?

Two matchers share one interface (:class:`EntityMatcher`):

* :class:`PaperMatcher` applies the published matching rules exactly (they reproduce the
  published PHD numbers);
* :class:`RobustMatcher` normalises case, accents, punctuation, parentheticals and articles,
  accepts acronyms and partial names, reads the EM percentage wherever it appears, and can fall
  back to embedding similarity and to an LLM judge.
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from truthguard.llm import LLMSession
from truthguard.rv._parse import (
    Percentage,
    acronym,
    find_percentages,
    first_percentage,
    is_abstention,
    normalize,
    parse_judge,
    strip_parenthetical,
)
from truthguard.rv._prompts import JUDGE
from truthguard.similarity import SimilarityBackend

__all__ = ["EntityMatcher", "MatchOutcome", "PaperMatcher", "RobustMatcher", "Variant"]

Variant = Literal["qg", "em"]

# Phrases by which an EM answer claims that every requirement is met (published rule).
_FULL_MATCH_CUES = ("100%", "perfect match", "meets all", "matches all")


class MatchOutcome(BaseModel):
    """What stage 3 decided for one passage."""

    model_config = ConfigDict(extra="forbid")

    matched: bool
    """True when the entity came back (and, for EM, met enough requirements)."""
    mentioned: bool
    """True when the answer names the entity, whatever the percentage."""
    method: str
    """Which rule decided (``"substring"``, ``"acronym"``, ``"percentage"``, ``"judge"``, ...)."""
    reason: str
    """One sentence saying why."""
    percentage: float | None = None
    """The EM percentage the decision used, when there was one."""
    percentages: list[float] = Field(default_factory=list)
    """Every percentage found in the answer, in order."""
    hedged: bool = False
    """The answer hedges or declines (``"I'm not sure"``)."""
    similarity: float | None = None
    """Best embedding similarity between the entity and the answer, when computed."""
    judge_output: str | None = None
    """The LLM judge's raw reply, when it was asked."""


class EntityMatcher(ABC):
    """Decides whether a stage-2 answer gives back the original entity."""

    name: str = "matcher"

    @abstractmethod
    async def amatch(
        self, entity: str, answer: str, *, variant: Variant, session: LLMSession
    ) -> MatchOutcome:
        """Match ``entity`` against ``answer`` (the session is there for an LLM judge)."""


class PaperMatcher(EntityMatcher):
    """The published matching rules, restated (see ``BENCHMARKS.md``).

    QG: factual iff the case-folded entity is a substring of the case-folded answer. EM: a claimed
    full match counts when the entity is in the answer; otherwise the entity must be present and
    the first percentage (if any) at least ``threshold`` (80 in the published code; the paper's
    text says 90).

    Example:
        >>> PaperMatcher().match("Ailanthus", "Ailanthus.", variant="qg").matched
        True
    """

    name = "paper"

    def __init__(self, threshold: float = 80.0) -> None:
        self.threshold = threshold

    def match(self, entity: str, answer: str, *, variant: Variant) -> MatchOutcome:
        """Synchronous twin of :meth:`amatch` (the rules need no model)."""
        core = strip_parenthetical(entity)
        folded, answer_folded = core.lower(), answer.lower()
        found = folded in answer_folded
        pct = first_percentage(answer)
        pcts = [pct] if pct is not None else []
        if variant == "qg":
            return MatchOutcome(
                matched=found,
                mentioned=found,
                method="substring",
                reason=f"{core!r} {'is' if found else 'is not'} a substring of the answer",
            )
        full = any(c in answer_folded for c in _FULL_MATCH_CUES) and "except" not in answer_folded
        if full:
            hit = (len(core) >= 5 and found) or core in answer
            return MatchOutcome(
                matched=hit,
                mentioned=hit,
                method="full-match claim",
                reason=(
                    f"the answer claims a full match and {'names' if hit else 'does not name'} "
                    f"{core!r}"
                ),
                percentage=pct,
                percentages=pcts,
            )
        if not found:
            return MatchOutcome(
                matched=False,
                mentioned=False,
                method="substring",
                reason=f"{core!r} is not in the answer",
                percentage=pct,
                percentages=pcts,
            )
        if pct is None:
            return MatchOutcome(
                matched=True,
                mentioned=True,
                method="substring",
                reason=f"the answer names {core!r} and gives no percentage",
            )
        ok = pct >= self.threshold
        return MatchOutcome(
            matched=ok,
            mentioned=True,
            method="percentage",
            reason=(
                f"the answer names {core!r} meeting {pct:g}% of the requirements "
                f"({'at least' if ok else 'below'} {self.threshold:g}%)"
            ),
            percentage=pct,
            percentages=pcts,
        )

    async def amatch(
        self, entity: str, answer: str, *, variant: Variant, session: LLMSession
    ) -> MatchOutcome:
        return self.match(entity, answer, variant=variant)


# -- robust matching ------------------------------------------------------------------------------

_STOPWORDS = {"of", "the", "a", "an", "and", "in", "on", "for", "to", "de", "la", "le", "von"}
_FULL_CLAIM = re.compile(
    r"\b(?:perfect(?:ly)?\s+match|meets\s+all|matches\s+all|satisf(?:ies|y)\s+all|fulfils?\s+all"
    r"|fulfills\s+all|all\s+(?:of\s+)?the\s+(?:requirements|criteria))\b",
    re.I,
)
_NEGATED_CLAIM = re.compile(r"\b(?:not|n't|no|except|fail(?:s|ed)?)\b", re.I)


def _fold(text: str) -> str:
    """Lower-case and strip accents without changing the string's length (offsets stay valid)."""
    out = []
    for c in text:
        base = unicodedata.normalize("NFKD", c)[:1] or c
        out.append(base.lower() if len(base.lower()) == 1 else c)
    return "".join(out)


def _mention_offset(entity_norm: str, answer: str) -> int | None:
    """Character offset of the (normalised) entity in the original answer, if found."""
    words = entity_norm.split()
    if not words:
        return None
    pattern = r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)"
    m = re.search(pattern, _fold(answer))
    return m.start() if m else None


def _content_words(text_norm: str) -> list[str]:
    return [w for w in text_norm.split() if w not in _STOPWORDS]


def _candidates(answer: str) -> list[str]:
    """Spans of an answer that may be the named entity (for embedding similarity)."""
    spans = [answer.strip()]
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer):
        sentence = sentence.strip()
        if not sentence:
            continue
        spans.append(sentence)
        m = re.search(r"\b(?:is|are|was|be)\s+(?:the\s+)?(.+?)(?:[,.;:(]|\s+which\b|$)", sentence)
        if m:
            spans.append(m.group(1))
    return [s for s in dict.fromkeys(spans) if s]


class RobustMatcher(BaseModel, EntityMatcher):
    """Entity matching that forgives surface differences.

    The answer names the entity when, after normalisation (case, accents, punctuation,
    parentheticals, leading articles), it contains the entity's words in order, its acronym
    (``NHL``), all of its content words, or, for multi-word names, the final name word (a surname,
    ``"Emanuel"`` for ``"Maximilian II Emanuel"``). Failing that, an optional embedding similarity
    and an optional LLM judge are asked. For EM, the percentage nearest the mention counts, in
    any form (``85%``, ``85 percent``, ``9 out of 10 requirements``); a stated full match counts as
    100; no percentage at all keeps the entity's verdict.

    Example:
        >>> RobustMatcher().match_text("Rhea (bird)", "The rhea.", variant="qg").matched
        True
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: ClassVar[str] = "robust"
    threshold: float = Field(default=80.0, ge=0, le=100)
    """EM: smallest percentage of requirements that counts as a match."""
    partial_names: bool = True
    """Accept the final word of a multi-word name (surnames) and the acronym."""
    similarity: SimilarityBackend | None = None
    """Optional embedding backend consulted when no lexical rule fires."""
    similarity_threshold: float = Field(default=0.8, ge=-1, le=1)
    """Similarity at or above which the entity counts as named."""
    judge: Any = None
    """Optional chat model asked whether the answer names the entity (last resort)."""

    def _lexical(self, entity: str, answer: str) -> tuple[str, int | None] | None:
        """``(method, offset)`` of a lexical mention, or None."""
        core = strip_parenthetical(entity)
        ent, ans = normalize(core), normalize(answer)
        if not ent:
            return None
        if re.search(rf"(?<!\w){re.escape(ent)}(?!\w)", ans):
            return "normalized", _mention_offset(ent, answer)
        if not self.partial_names:
            return None
        acr = acronym(core)
        if acr and len(acr) >= 2:
            m = re.search(rf"(?<!\w){re.escape(acr)}(?!\w)", answer)
            if m:
                return "acronym", m.start()
        words = _content_words(ent)
        answer_words = set(ans.split())
        if len(words) >= 2 and all(w in answer_words for w in words):
            return "all name words", _mention_offset(words[0], answer)
        if len(words) >= 2 and len(words[-1]) >= 4 and words[-1] in answer_words:
            return "final name word", _mention_offset(words[-1], answer)
        return None

    def _percentage(
        self, answer: str, offset: int | None
    ) -> tuple[float | None, list[Percentage], str]:
        pcts = find_percentages(answer)
        if pcts:
            if offset is None:
                return pcts[0].value, pcts, "first percentage"
            best = min(pcts, key=lambda p: (abs(p.start - offset), p.start < offset))
            return best.value, pcts, "percentage nearest the entity"
        for m in _FULL_CLAIM.finditer(answer):
            before = answer[max(0, m.start() - 25) : m.start()]
            if not _NEGATED_CLAIM.search(before):
                return 100.0, pcts, "stated full match"
        return None, pcts, "no percentage"

    def match_text(
        self, entity: str, answer: str, *, variant: Variant, similarity: float | None = None
    ) -> MatchOutcome:
        """The lexical rules alone (no similarity backend, no judge): pure and synchronous."""
        return self._decide(entity, answer, variant, self._lexical(entity, answer), similarity)

    def _decide(
        self,
        entity: str,
        answer: str,
        variant: Variant,
        lexical: tuple[str, int | None] | None,
        similarity: float | None,
        judge: tuple[bool, str] | None = None,
    ) -> MatchOutcome:
        core = strip_parenthetical(entity)
        hedged = is_abstention(answer)
        method, offset = lexical if lexical else (None, None)
        if method is None and similarity is not None and similarity >= self.similarity_threshold:
            method = "similarity"
        if method is None and judge is not None and judge[0]:
            method = "judge"
        judge_raw = judge[1] if judge else None
        common: dict[str, Any] = {
            "hedged": hedged,
            "similarity": similarity,
            "judge_output": judge_raw,
        }
        if method is None:
            why = "declines to name an entity" if hedged else f"does not name {core!r}"
            pct, pcts, _ = self._percentage(answer, None) if variant == "em" else (None, [], "")
            return MatchOutcome(
                matched=False,
                mentioned=False,
                method="no mention",
                reason=f"the answer {why}",
                percentage=pct,
                percentages=[p.value for p in pcts],
                **common,
            )
        if variant == "qg":
            return MatchOutcome(
                matched=True,
                mentioned=True,
                method=method,
                reason=f"the answer names {core!r} ({method})",
                **common,
            )
        pct, pcts, how = self._percentage(answer, offset)
        values = [p.value for p in pcts]
        if pct is None:
            return MatchOutcome(
                matched=True,
                mentioned=True,
                method=method,
                reason=f"the answer names {core!r} ({method}) and states no percentage",
                percentages=values,
                **common,
            )
        ok = pct >= self.threshold
        return MatchOutcome(
            matched=ok,
            mentioned=True,
            method=f"{method} + {how}",
            reason=(
                f"the answer names {core!r} ({method}) meeting {pct:g}% of the requirements "
                f"({'at least' if ok else 'below'} {self.threshold:g}%)"
            ),
            percentage=pct,
            percentages=values,
            **common,
        )

    async def amatch(
        self, entity: str, answer: str, *, variant: Variant, session: LLMSession
    ) -> MatchOutcome:
        lexical = self._lexical(entity, answer)
        similarity = None
        judge: tuple[bool, str] | None = None
        if lexical is None and self.similarity is not None:
            spans = _candidates(answer)
            core = strip_parenthetical(entity)
            scores = await self.similarity.amatrix([core], spans)
            similarity = float(scores.max()) if scores.size else None
        if (
            lexical is None
            and (similarity is None or similarity < self.similarity_threshold)
            and self.judge is not None
        ):
            prompt = JUDGE.format(entity=strip_parenthetical(entity), answer=answer.strip())
            raw = await session.acall(
                self.judge,
                prompt,
                stage="rv.judge",
                metadata={"entity": entity, "rv_variant": variant, "replay_key": "judge"},
            )
            judge = (parse_judge(raw), raw)
        return self._decide(entity, answer, variant, lexical, similarity, judge)
