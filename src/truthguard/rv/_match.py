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
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from truthguard._text import MAX_SCAN
from truthguard.errors import InvalidLLMOutput
from truthguard.llm import LLMSession
from truthguard.rv._parse import (
    Percentage,
    Token,
    acronym,
    find_name,
    find_percentages,
    first_percentage,
    is_abstention,
    name_words,
    parse_judge,
    same_word,
    strip_parenthetical,
    tokenize,
)
from truthguard.rv._prompts import JUDGE
from truthguard.similarity import SimilarityBackend

__all__ = ["EntityMatcher", "MatchOutcome", "PaperMatcher", "RobustMatcher", "Variant"]

Variant = Literal["qg", "em"]

# Phrases by which an EM answer claims that every requirement is met (published rule).
_FULL_MATCH_CUES = ("100%", "perfect match", "meets all", "matches all")


def _check_percentage(value: float | None, answer: str, stage: str = "rv.answer") -> None:
    """Refuse a percentage of requirements that cannot be one (negative or above 100)."""
    if value is not None and not 0.0 <= value <= 100.0:
        raise InvalidLLMOutput(
            f"stage 2 states {value:g}% of the requirements met, outside 0-100",
            raw=answer,
            stage=stage,
        )


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
    text says 90). A first percentage that is negative or above 100 raises
    :class:`~truthguard.errors.InvalidLLMOutput` (an ``invalid`` result) instead of being read.

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
        pct = first_percentage(answer) if variant == "em" else None
        _check_percentage(pct, answer)
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

# Words that never distinguish one name from another.
_STOPWORDS = {"of", "the", "a", "an", "and", "in", "on", "for", "to", "de", "del", "la", "le"}
# Words that end a name phrase when walking left from its last word.
_BREAKS = {
    "the",
    "a",
    "an",
    "is",
    "was",
    "are",
    "were",
    "be",
    "been",
    "called",
    "named",
    "known",
    "as",
    "and",
    "or",
    "which",
    "that",
    "who",
    "it",
    "its",
    "this",
    "by",
    "with",
    "such",
    "like",
    "include",
    "includes",
    "including",
    "than",
    "from",
    "at",
    "to",
    "for",
}
# Connectors that continue a name to the right ("Valley of the Kings").
_CONNECTORS = {"of", "de", "del", "la", "le", "von", "van", "da", "di"}
_ROMAN = re.compile(r"^[IVXLC]{1,5}$")
# An acronym given as the entity's disambiguation: "European Strategic Programme ... (ESPRIT)".
_TRAILING_ALIAS = re.compile(r"\(([A-Z][A-Z0-9&]{1,9})\)\s*$")
_FULL_CLAIM = re.compile(
    r"\b(?:perfect(?:ly)?\s+match|meets\s+all|matches\s+all|satisf(?:ies|y)\s+all|fulfils?\s+all"
    r"|fulfills\s+all|all\s+(?:of\s+)?the\s+(?:requirements|criteria))\b",
    re.I,
)
_NEGATED_CLAIM = re.compile(r"\b(?:not|n't|no|except|fail(?:s|ed)?)\b", re.I)


def _name_phrase(tokens: list[Token], i: int) -> list[Token]:
    """The name phrase around the word at ``tokens[i]`` (at most 4 words left, 3 right)."""
    left: list[Token] = []
    j = i - 1
    while j >= 0 and len(left) < 4:
        tok = tokens[j]
        if not tok.is_word:
            # "Chipley, Florida", "Geoffrey V, Count of Anjou": a comma between capitalised words
            if tok.text == "," and j > 0 and tokens[j - 1].is_word and tokens[j - 1].capitalized:
                j -= 1
                continue
            break
        if tok.word in _BREAKS:
            break
        left.insert(0, tok)
        j -= 1
    right: list[Token] = []
    k = i + 1
    if k < len(tokens) and tokens[k].word in _CONNECTORS:
        k += 1
        while k < len(tokens) and tokens[k].word == "the":
            k += 1
        while k < len(tokens) and tokens[k].is_word and tokens[k].capitalized and len(right) < 3:
            right.append(tokens[k])
            k += 1
    return [*left, tokens[i], *right]


def _compatible(answer_word: Token, entity_words: list[str]) -> bool:
    """An answer name word agrees with the entity: same word, a short form, or an initial."""
    a = answer_word.word
    if len(a) == 1 or _ROMAN.match(answer_word.text):
        return True  # initials ("D.") and regnal numbers ("V") do not contradict a name
    return any(
        same_word(a, e) or (min(len(a), len(e)) >= 3 and (a.startswith(e) or e.startswith(a)))
        for e in entity_words
    )


def _partial_name(entity_words: list[str], tokens: list[Token]) -> int | None:
    """Offset of a shorter or longer form of a multi-word name, or None.

    The anchor is the name's last word. The name phrase around it in the answer may drop some of
    the entity's words or shorten them (``"Max Emanuel"`` for ``"Maximilian II Emanuel"``), or
    add words while keeping all of them (``"Racing Club de Ferrol"``); a phrase with other
    words names something else (``"Atlantic Coast Conference"`` is not ``"Big South
    Conference"``). The last word alone counts only when capitalised in the answer (a proper
    noun, ``"Lysenko."``), never as a bare common noun.
    """
    content = [w for w in entity_words if w not in _STOPWORDS]
    if len(content) < 2 or len(content[-1]) < 3:
        return None
    anchor, others = content[-1], content[:-1]
    for i, tok in enumerate(tokens):
        if not tok.is_word or not same_word(tok.word, anchor):
            continue
        phrase = _name_phrase(tokens, i)
        extra = [t for t in phrase if t is not tok and t.word not in _STOPWORDS]
        if not extra:
            if tok.capitalized:
                return phrase[0].start
            continue
        shorter = all(_compatible(t, others) for t in extra)
        longer = all(any(same_word(t.word, e) for t in extra) for e in others)
        if shorter or longer:
            return phrase[0].start
    return None


def _candidates(answer: str) -> list[str]:
    """Spans of an answer that may be the named entity (for embedding similarity)."""
    spans = [answer.strip()]
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer[:MAX_SCAN]):
        sentence = sentence.strip()
        if not sentence:
            continue
        spans.append(sentence)
        # the lazy group retries at every character: bound the sentence it runs over
        m = re.search(
            r"\b(?:is|are|was|be)\s+(?:the\s+)?(.+?)(?:[,.;:(]|\s+which\b|$)", sentence[:500]
        )
        if m:
            spans.append(m.group(1))
    return [s for s in dict.fromkeys(spans) if s]


class RobustMatcher(BaseModel, EntityMatcher):
    """Entity matching that forgives surface differences.

    The answer names the entity when, with case, accents, hyphens, punctuation, possessives,
    plurals, the entity's disambiguating parenthetical and leading article ignored, it contains
    the entity's words in order; or its acronym (``NHL``); or a shorter or longer form of a
    multi-word name that agrees with it (``"Max Emanuel"`` for ``"Maximilian II Emanuel"``,
    ``"Lysenko"`` for ``"Trofim Lysenko"``; see :func:`_partial_name`). Failing that, an optional
    embedding similarity and an optional LLM judge are asked. For EM, the percentage nearest the
    mention counts, in any form (``85%``, ``85 percent``, ``9 out of 10 requirements``); a stated
    full match counts as 100; no percentage at all keeps the entity's verdict. A negative
    percentage, or one above 100 that the answer ties to the requirements (``120% of the
    criteria``, ``11 out of 10 points``), raises :class:`~truthguard.errors.InvalidLLMOutput`
    rather than being read; other values above 100 (``grew 300%``) are not shares and are skipped.

    Example:
        >>> RobustMatcher().match_text("Rhea (bird)", "The rhea.", variant="qg").matched
        True
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: ClassVar[str] = "robust"
    threshold: float = Field(default=80.0, ge=0, le=100)
    """EM: smallest percentage of requirements that counts as a match."""
    partial_names: bool = True
    """Accept acronyms and shorter / longer forms of multi-word names."""
    similarity: SimilarityBackend | None = None
    """Optional embedding backend consulted when no lexical rule fires."""
    similarity_threshold: float = Field(default=0.8, ge=-1, le=1)
    """Similarity at or above which the entity counts as named."""
    judge: Any = None
    """Optional chat model asked whether the answer names the entity (last resort)."""

    def _lexical(self, entity: str, answer: str) -> tuple[str, int | None] | None:
        """``(method, offset)`` of a lexical mention, or None."""
        words = name_words(entity)
        tokens = tokenize(answer)
        offset = find_name(words, tokens)
        if offset is not None:
            return "normalized", offset
        if not self.partial_names:
            return None
        aliases = [acronym(entity)]
        alias = _TRAILING_ALIAS.search(entity)
        if alias:
            aliases.append(alias.group(1))
        for acr in aliases:
            if acr and len(acr) >= 2:
                hit = next((t for t in tokens if t.text == acr), None)
                if hit is not None:
                    return "acronym", hit.start
        offset = _partial_name(words, tokens)
        if offset is not None:
            return "partial name", offset
        return None

    def _percentage(
        self, answer: str, offset: int | None
    ) -> tuple[float | None, list[Percentage], str]:
        stated = find_percentages(answer)
        for p in stated:
            if p.of_requirements or p.value < 0:
                _check_percentage(p.value, answer)
        # other values outside 0-100 are figures of another kind ("grew 300%"), not shares
        pcts = [p for p in stated if p.in_range]
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
                metadata={
                    "entity": entity,
                    "rv_variant": variant,
                    "replay_key": f"{variant}:judge",
                },
            )
            judge = (parse_judge(raw), raw)
        return self._decide(entity, answer, variant, lexical, similarity, judge)
