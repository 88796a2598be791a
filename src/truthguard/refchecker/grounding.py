"""Fact grounding of one claim in its evidence: hard facts, negation and content-word alignment.

A claim is grounded when what it asserts is found in its evidence, not when it merely resembles
it:

1. Its **hard facts** (numbers, dates, names, quoted titles; see :mod:`._facts`) must each occur,
   after normalisation, where the evidence states them about the same thing: in the passage of
   its evidence sentence, or in a sentence of another retrieved passage that shares a content
   word or a name with the claim (a value of a passage about something else supports nothing).
   A surname or initials stand for a full name found there; an acronym for the capitalised
   words it abbreviates.
2. The claim is aligned word by word (``difflib``) with its **evidence sentence**, the passage
   sentence sharing most of its content words. A fact of the claim that is set against a different
   fact of the same kind in that sentence (a replaced stretch, or the claim matching the sentence
   closely while the sentence's own year / name is absent from the claim) is a **conflict**; so is
   a negation present on one side of the aligned words and not on the other.
3. Its **content words** must align with the evidence: same word or same stem, else a soft match
   of contextual MiniLM token vectors (BERTScore-style: the best cosine of the word against the
   evidence words). The soft precision is the mean match over the claim's content words. In a
   near-copy of the evidence sentence, one content word put in place of one of the sentence's
   ("protects him with a condition" for "... with a barrier") that matches nothing closely is a
   **conflict**: the claim says something else in the sentence's own slot.

Label: Contradiction on a conflict; Neutral when a hard fact is not in the evidence, when a
content word matches nothing closely (below ``word_floor``) or the precision is below
``precision_threshold``; Entailment otherwise.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np

from truthguard.memory import memoised
from truthguard.refchecker._alignment import (
    COPIED,
    Issue,
    Names,
    bounded_alike,
    conflict,
    copied_share,
    country_in,
    durations,
    fact_in,
    hedge_at,
    hedge_met,
    local_negation_issue,
    misplaced,
    negation_issue,
    one_name,
    ordinal,
    other_value,
    retold_other_side,
    same_country,
    same_sort,
    swapped,
    times,
    tokens_of,
    year,
)
from truthguard.refchecker._analysis import (
    LIGHT_VERBS,
    NON_CONTENT,
    Analysed,
    analyse,
    name_spans,
)
from truthguard.refchecker._facts import Fact, fold, stem
from truthguard.refchecker._lemmas import lemmas
from truthguard.refchecker._names import unknown_term
from truthguard.refchecker._numbers import BETWEEN, DURATION_DAYS, bound_span, lead_time, unit_of
from truthguard.refchecker.counts import totals
from truthguard.refchecker.derived import (
    REST_OF,
    WEEKDAYS,
    clock_span,
    counts_of,
    date_after,
    day_condition,
    day_of_date,
    day_spans,
    derived,
    from_case,
    measure_of,
    month_after,
    named_days,
    per_count,
    per_period,
    per_what,
    period_span,
    restates,
    spans_period,
    summed_total,
    timed,
    weekday_after,
    worked,
)
from truthguard.refchecker.lexical import STOPWORDS
from truthguard.refchecker.opposites import stated_opposite
from truthguard.refchecker.softmatch import SoftMatcher
from truthguard.refchecker.structure import (
    Arg,
    comparisons,
    content_lemmas,
    counted,
    denied_agents,
    denies_otherwise,
    direction_at,
    doer_name,
    doers,
    elided,
    ellipses,
    elliptic,
    frames,
    granted_on,
    instead,
    lifted_by,
    listed_totals,
    makers,
    moves,
    negated_numbers,
    negated_subject,
    negated_verb_at,
    negated_verbs,
    negated_word,
    negation_at,
    only_doers,
    options,
    parse,
    placed,
    relation_words,
    roles,
    said_plainly_of,
    shared_subjects,
    states_plainly,
    subject_name,
    titles,
    value_contexts,
    verbless,
)

__all__ = [
    "Analysed",
    "EvidencePool",
    "Grounding",
    "Issue",
    "SoftMatcher",
    "analyse",
    "asks_amount",
    "denied_of_joined",
    "ground_claim",
    "own_case",
    "own_words",
    "premises",
    "said_of_joined",
    "said_of_option",
    "subject_of_another",
]


@dataclass
class Grounding:
    """The grounding verdict of one claim."""

    label: str
    support: float
    precision: float
    issues: list[Issue]
    sentence: tuple[int, int, int, str] | None
    """(reference index, start, end, text) of the evidence sentence in its reference."""
    soft: dict[str, float] = field(default_factory=dict)
    """Content words matched only softly, with their best cosine."""
    n_facts: int = 0
    """Hard facts of the claim (numbers, dates, names, titles)."""
    n_content: int = 0
    """Content words of the claim that were checked (0 when content is not checked)."""
    copied: float = 0.0
    """Share of the claim's words copied, in order, from its evidence sentence."""


@dataclass(frozen=True)
class _Group:
    """The words and facts of one passage (a segment: a few consecutive sentences)."""

    texts: frozenset[str]
    norms: frozenset[str]
    stems: frozenset[str]
    facts: tuple[Fact, ...]

    @cached_property
    def names(self) -> Names:
        """The names among ``facts``, indexed once for every claim that looks one up."""
        return Names.of(self.facts)


def _group(text: str) -> _Group:
    """The group of one sentence."""
    a = analyse(text)
    return _Group(frozenset([text]), a.norms, a.stems, tuple(a.facts))


@dataclass(frozen=True)
class EvidencePool:
    """The words and hard facts of all the evidence a claim may draw on, sentence by sentence
    within each passage."""

    passages: tuple[tuple[_Group, ...], ...]
    references: tuple[int, ...] | None = None
    """The reference index of each passage, where known."""

    @classmethod
    def of_passages(
        cls, passages: Sequence[Sequence[str]], references: Sequence[int] | None = None
    ) -> EvidencePool:
        """The pool of passages, each given as its sentences in order (memoised: one reference
        is checked against many answers, and a pool never changes); ``references``: the
        reference index of each."""
        refs = None if references is None else tuple(references)
        return _pool_of(tuple(tuple(p) for p in passages), refs)

    @cached_property
    def everything(self) -> _Group:
        """All sentences as one."""
        return _merge([g for p in self.passages for g in p])


def _other_side(
    fact: Fact, claim: Analysed, sent: Analysed
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The claim's and the sentence's spans of a bound when every statement the sentence makes
    of ``fact``'s value puts it on the other side than the claim does ("more than 300 km" /
    "under 300 km", "up to 2 m" / "at least 2 m"); None when one agrees, when either states the
    value as such, or when the sentence also speaks of the claim's side in a word of its own
    ("up to 5 days by the teacher; longer extensions by the head of year"). A negated clause
    turns the side ("do not fold within 10 minutes" is "wait at least 10 minutes")."""
    read = _sides(fact, claim, sent)
    if read is None:
        return None
    mine, theirs = read
    if not theirs or not all(x is not None and x[0] != mine[0] for x in theirs):
        return None
    # (a word of the sentence's own bound, "more" of "no more than 100", is no other side)
    bounds = [(x[1], x[2]) for x in theirs if x is not None]
    words = {t.norm for t in sent.tokens if not any(lo <= t.start < hi for lo, hi in bounds)}
    if _SIDE_WORDS[mine[0]] & words or _retells_back_reference(claim, sent, mine[0], bounds[0]):
        return None
    if _compares_another(fact, claim, mine):
        return None
    if lead_time(claim.text, fact.start, fact.end) and all(
        lead_time(sent.text, f.start, f.end) for f in _same_values(fact, claim, sent)
    ):
        # one deadline in the same words, which only one side marks as a deadline ("up to 48
        # hours before the start" of "at any time up to 48 hours before it opens")
        return None
    first = theirs[0]
    assert first is not None
    return (mine[1], mine[2]), (first[1], first[2])


def _retells_back_reference(
    claim: Analysed, sent: Analysed, side: str, bound: tuple[int, int]
) -> bool:
    """Whether the claim retells a statement of ``sent`` (:func:`_outer_split`) that refers back
    to the sentence's bound at ``bound`` to speak of the claim's ``side`` of it
    (:data:`_BACK_TO_BOUND`): "a bike still out after 24 hours counts as lost" of "A ride may
    last at most 24 hours; bikes not returned by then are treated as lost". The claim shares
    two content words with that statement that the bound's own statement lacks (more than the
    thing both speak of), and no fewer than with the bound's (numbers aside)."""
    found = _BACK_TO_BOUND[side].search(sent.text)
    if found is None:
        return False

    parts = _outer_split(sent.text)
    doc = parse(sent.text)

    def statement(at: int) -> set[str]:
        lo, part = next((o, p) for o, p in reversed(parts) if o <= at)
        return content_lemmas(t for t in doc if lo <= t.idx < lo + len(part) and not t.like_num)

    back, own = statement(found.start()), statement(bound[0])
    if back == own:
        return False  # the bound and the words referring back to it are one statement
    mine = content_lemmas(t for t in parse(claim.text) if not t.like_num)
    return len(mine & (back - own)) >= 2 and len(mine & back) >= len(mine & own)


def _compares_another(fact: Fact, claim: Analysed, side: _Side) -> bool:
    """Whether the claim's comparative before ``fact`` compares another of its values with it
    ("99.5% uptime, lower than the 99.95% for two zones"): a value of the same unit before the
    comparative, truly on its side; then the comparative bounds nothing of ``fact``'s own."""
    if "than" not in claim.text[side[1] : fact.start].casefold().split():
        return False
    return any(
        g is not fact
        and g.kind == "number"
        and g.unit == fact.unit
        and g.end <= side[1]
        and isinstance(g.value, (int, float))
        and isinstance(fact.value, (int, float))
        and (g.value < fact.value if side[0] == "below" else g.value > fact.value)
        for g in claim.facts
    )


def _other_way(
    fact: Fact, claim: Analysed, sent: Analysed
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The claim's and the sentence's spans of a change when every statement the sentence
    makes of ``fact``'s value says it moved the other way ("revenue fell 8 percent" / "up 8
    percent", "cut by 20%" / "rose 20%"); None when one agrees or says no way."""
    if fact.kind != "number" or fact.unit not in ("%", "pp", "point", None):
        return None
    way = direction_at(claim.text, fact.start, fact.end)
    if way is None:
        return None
    same = _same_values(fact, claim, sent)
    ways = [direction_at(sent.text, f.start, f.end) for f in same]
    if not same or not all(w is not None and w[0] != way[0] for w in ways):
        return None
    theirs, f = ways[0], same[0]
    assert theirs is not None
    return (
        (min(way[1], fact.start), max(way[2], fact.end)),
        (min(theirs[1], f.start), max(theirs[2], f.end)),
    )


def _offset_the_other_way(
    fact: Fact, claim: Analysed, sent: Analysed
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The claim's and the sentence's spans of a time offset when every statement the sentence
    makes of ``fact``'s span of time puts it on the other side of the same event ("two days
    after the flood peaked" / "two days before the flood peaked", "3 hours ahead of
    departure" / "3 hours after departure"); None when one agrees or names another event."""
    if fact.kind != "number" or fact.unit not in _TIME_UNITS:
        return None
    mine = _offset(claim.text, fact)
    if mine is None:
        return None
    ways = [(f, _offset(sent.text, f)) for f in _same_values(fact, claim, sent)]
    if not ways or not all(w is not None and w[0] != mine[0] and w[3] == mine[3] for _, w in ways):
        return None
    f, theirs = ways[0]
    assert theirs is not None
    return (fact.start, mine[2]), (f.start, theirs[2])


def _per_another_period(
    fact: Fact, claim: Analysed, sent: Analysed, near: Sequence[Analysed]
) -> Fact | None:
    """The sentence's statement of ``fact``'s value when the claim gives it per one stretch of
    time and every statement of it in the sentence per another ("£2 per day" / "£2 per
    hour"), and no sentence about the claim gives it per the claim's; else None."""
    mine = per_what(fact, claim.text)
    if not mine or not mine[0][0] & _PERIODS:
        return None
    same = _same_values(fact, claim, sent)
    if not same:
        return None
    for f in same:
        theirs = per_what(f, sent.text)
        if not theirs or not theirs[0][0] & _PERIODS or theirs[0][0] & mine[0][0]:
            return None
    for e in near:
        for f in _same_values(fact, claim, e):
            theirs = per_what(f, e.text)
            if theirs and theirs[0][0] & mine[0][0]:
                return None
    return same[0]


def _offset(text: str, fact: Fact) -> tuple[str, int, int, str] | None:
    """The side of an event a span of time is put on ("before" / "after"), the offsets of the
    words saying it, and the stem of the event's first content word after them."""
    m = _OFFSET.match(text, fact.end)
    if m is None:
        return None
    side = "before" if m.group(1) else "after"
    event = next((w for w in _WORD.findall(text, m.end()) if w.casefold() not in _THE), None)
    if event is None:
        return None
    return side, m.start(1) if m.group(1) else m.start(2), m.end(), stem(event.casefold())


_TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year"})
_PERIODS = _TIME_UNITS | {"night"}
"""What a rate may be given per as a stretch of time ("£80 a night")."""
_OFFSET = re.compile(
    r"[\s-]*[^\W\d_]+['’]?\s+(?:(before|ahead\s+of|prior\s+to|earlier\s+than)"
    r"|(after|later\s+than))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_THE = frozenset({"the", "a", "an", "its", "their", "your", "his", "her", "our", "this", "that"})


def _same_values(fact: Fact, claim: Analysed, sent: Analysed) -> list[Fact]:
    """The sentence's statements of ``fact``'s value of the same thing: the same unit, or for a
    bare number the same counted noun ("up to 3 further years" is no "GPA of 3.0")."""
    same = [f for f in sent.facts if f.kind == "number" and fact_in(fact, [f], _NONE, _NONE)]
    if fact.unit is not None:
        return [f for f in same if f.unit == fact.unit]
    mine = _noun_of(claim.text, fact)
    return [f for f in same if f.unit is None and mine and _noun_of(sent.text, f) == mine]


def _noun_of(text: str, fact: Fact) -> str | None:
    return next((c.noun for c in counted(text) if fact.start <= c.start < fact.end), None)


def _told_elsewhere(fact: Fact, claim: Analysed, sent: Analysed, near: Sequence[Analysed]) -> bool:
    """Whether the claim's statement holding ``fact`` retells another of the ``near``
    sentences (:func:`_retells`), which puts the value on the claim's side."""
    return any(
        _retells(fact, claim, sent, e) and _on_the_side(fact, claim, e)
        for e in near
        if e is not sent
    )


def _retells(fact: Fact, claim: Analysed, sent: Analysed, other: Analysed) -> bool:
    """Whether the claim's statement holding ``fact`` (its stretch between commas, semicolons
    and colons) shares more words with ``other`` than with ``sent``: in a claim joined from two
    sentences ("take 1 or 2 tablets every 6 to 8 hours, up to a maximum of 6 tablets in 24
    hours"), each statement is held against the sentence it retells."""
    cuts = [m.end() for m in _STATEMENT_CUT.finditer(claim.text, 0, fact.start)]
    lo = cuts[-1] if cuts else 0
    m = _STATEMENT_CUT.search(claim.text, fact.end)
    words = analyse(claim.text[lo : m.start() if m else len(claim.text)]).stems
    return len(words & other.stems) > len(words & sent.stems)


_STATEMENT_CUT = re.compile(r"[,;:()]")


def _on_the_side(fact: Fact, claim: Analysed, sent: Analysed) -> bool:
    """Whether ``sent`` states ``fact``'s value on the side the claim puts it."""
    read = _sides(fact, claim, sent)
    return read is not None and any(x is not None and x[0] == read[0][0] for x in read[1])


_Side = tuple[str, int, int]


def _sides(fact: Fact, claim: Analysed, sent: Analysed) -> tuple[_Side, list[_Side | None]] | None:
    """The side of a bound the claim puts ``fact``'s value on, and the side of each statement
    of that value in ``sent``; None when the claim states no bound of it. When both deny one
    verb ("after 60 days theft isn't covered" / "theft while the home is empty for more than 60
    days is not covered"), each bound is a condition of that denial, and the sides compare as
    written; so do a denial and a plain statement of the denied verb's opposite ("breaks of up
    to 4 weeks don't stop the allowance" / "the allowance continues through breaks of up to 4
    weeks")."""
    if fact.kind != "number":
        return None
    theirs, denied = negated_verbs(sent.text), negated_verbs(claim.text)
    # (a verb denied on one side whose opposite the other side states is one denial: "doesn't
    # stop the allowance" / "the allowance continues")
    turn = not (
        denied & theirs
        or any(stated_opposite(v, sent.text) for v in denied)
        or any(stated_opposite(v, claim.text) for v in theirs)
    )
    mine = _side(claim, fact, turn)
    if mine is None:
        return None
    return mine, [_side(sent, f, turn) for f in _same_values(fact, claim, sent)]


def _side(text: Analysed, fact: Fact, turn: bool = True) -> _Side | None:
    found = bound_span(text.text, fact.start, fact.end)
    if found is None:
        return None
    side, lo, hi = found
    if not turn or _NEGATION_FIRST.match(text.text, lo):
        return side, lo, hi  # "not under 18": the bound has read its own negation
    cue = negation_at(text.text, fact.start, lexical=True)
    if cue is None:
        return side, lo, hi
    # the side the negation turns, shown from the negation ("No refunds are given after 14")
    return _TURNED[side], min(lo, cue), hi


_TURNED = {"above": "below", "below": "above"}
_NEGATION_FIRST = re.compile(r"(?:no|not|never|n['’]t)\b", re.IGNORECASE)


def _negated_alike(claim_text: str, issue: Issue, near: Sequence[Analysed]) -> bool:
    """Whether ``issue`` flags a negation of the claim whose verb its evidence sentence
    negates too ("don't fold it within 10 minutes" / "Do not fold the treadmill
    within 10 minutes"): the two say the same, whatever the words around the verb."""
    if issue.kind != "negation" or issue.relation != "conflict":
        return False
    verb = negated_verb_at(claim_text, issue.start, issue.end)
    return verb is not None and any(verb in negated_verbs(e.text) for e in near)


_SIDE_WORDS = {
    "above": frozenset(("longer", "more", "larger", "later", "higher", "heavier", "older")),
    "below": frozenset(("shorter", "less", "fewer", "smaller", "earlier", "lower", "lighter")),
}
"""Comparatives that speak of one side of a bound without a value of their own."""

_BACK_TO_BOUND = {
    "above": re.compile(
        r"\b(?:not\b[^;,.:]*?\bby\s+then|(?:after|beyond|past)\s+(?:that|then|this)"
        r"|thereafter|from\s+then\s+on)\b",
        re.IGNORECASE,
    ),
    "below": re.compile(r"\b(?:until|till|before)\s+(?:then|that|this)\b", re.IGNORECASE),
}
"""Words that refer back to a sentence's bound to speak of one side of it: "bikes not
returned by then are treated as lost" of "at most 24 hours" speaks of after it."""


_NONE: frozenset[str] = frozenset()


def _units(claim: Analysed) -> set[str]:
    """Stems of the words right after the claim's numbers ("30 percent", "140 trucks"): what
    a value measures or counts goes with the value, and ties no sentence to the claim alone."""
    ends = {f.end for f in claim.facts if f.kind == "number"}
    toks = claim.tokens
    return {
        stem(toks[k].norm)
        for k in range(1, len(toks))
        if toks[k - 1].end in ends or (toks[k - 1].end + 1 in ends and toks[k - 1].norm == "%")
    }


def _about(
    claim: Analysed, claim_stems: set[str], stems: frozenset[str], facts: Sequence[Fact]
) -> bool:
    """Whether a sentence (its ``stems`` and ``facts``) is about what ``claim`` is about: it
    shares a content word or a name with the claim, or two of its other values. One shared
    value alone ("30 percent" of a discount, for a claim about diesel use) is no tie. A name
    is shared where the sentence states its words, read as a name or not: a sentence opening
    with it ("Enhanced costs £21 a month") does not mark it as one."""
    if claim_stems & stems:
        return True
    values = 0
    for f in claim.facts:
        if f.kind in ("name", "title") and _name_words(f) <= stems:
            return True
        if fact_in(f, facts, frozenset(), frozenset()):
            if f.kind in ("name", "title"):
                return True
            values += 1
    return values >= 2


def _name_words(f: Fact) -> frozenset[str]:
    """The stems of the words of the name ``f``, less a possessive ending ("Enhanced's":
    enhanc); never empty, so a name of no letters is stated by no sentence's words."""
    words = frozenset(stem(fold(w)) for w in _LETTERS.findall(_POSSESSIVE.sub("", str(f.text))))
    return words or frozenset([""])


_POSSESSIVE = re.compile(r"['’]s\b")
_LETTERS = re.compile(r"[^\W\d_]+")


def _used_elsewhere(
    word: str, near_at: Sequence[tuple[int, Analysed]], sentences: Sequence[tuple[int, int, str]]
) -> tuple[int, int, int, str] | None:
    """Where a sentence of the passages uses ``word`` (a sentence about something else, as the
    claim's own sentences do not): ``(reference, start, end, text)``."""
    wanted = stem(word)
    for k, e in near_at:
        for tok in e.tokens:
            if stem(tok.norm) == wanted:
                ref, offset, _ = sentences[k]
                return ref, offset + tok.start, offset + tok.end, tok.text
    return None


def _shares_two(claim: Analysed, claim_stems: set[str], e: Analysed | _Group) -> bool:
    """Whether a sentence states two of the claim's content words and values."""
    shared = len(claim_stems & e.stems)
    for f in claim.facts:
        if shared >= 2:
            break
        shared += fact_in(f, e.facts, _NONE, _NONE)
    return shared >= 2


def _counts_alike(claim: Analysed, fact: Fact, sent: Analysed, theirs: Fact | None) -> bool:
    """Whether the word right after ``theirs`` in ``sent`` and the one right after the claim's
    ``fact`` are one word (the thing both count: "2,000 injured" and "2,226 injuries")."""
    if theirs is None:
        return False
    mine = _word_after(claim, fact.end)
    return mine is not None and mine == _word_after(sent, theirs.end)


def _word_after(a: Analysed, end: int) -> str | None:
    """The stem of the word right after offset ``end`` of ``a``, if a word follows."""
    after = next((t for t in a.tokens if t.start >= end), None)
    return stem(after.norm) if after is not None and after.norm.isalpha() else None


SLOT_MORE = 2
"""How many more of the words a claim says of a value a rival of another value must have said
of it than any statement of the claim's own value, for the claim to have put its value in the
rival's slot (one word is a paraphrase's reach, as for :data:`PLACE_MORE`)."""


def _one_sort(a: Fact, in_a: Analysed, b: Fact, in_b: Analysed) -> bool:
    """Whether ``b`` could fill the slot the number ``a`` fills: a stretch of time in any unit
    ("within 30 seconds", "within 2 minutes"), else a value of the same sort (see
    ``_same_sort``)."""
    if b.kind != "number" or year(a) != year(b) or ordinal(b) or day_of_date(b, in_b.facts):
        return False
    if durations(a.unit, b.unit):
        return True
    if a.unit is None and not year(a):
        # a bare number fills a slot by what it counts ("2 visitors"), read from the parse: a
        # day of a date ("May 17") or a case number counts nothing
        mine = _noun_of(in_a.text, a)
        return b.unit is None and mine is not None and _noun_of(in_b.text, b) == mine
    return same_sort(a, in_a, b, in_b) and not _rated_apart(a, in_a, b, in_b)


def _rated_apart(a: Fact, in_a: Analysed, b: Fact, in_b: Analysed) -> bool:
    """Whether two values are rates given per different things ("24.5p per kWh" and "51p a
    day"): each fills a slot of its own, though both are in pence. A value given per nothing
    ("2,900 kWh at 24.5p") may be either."""
    mine, theirs = per_what(a, in_a.text), per_what(b, in_b.text)
    return bool(mine and theirs) and not mine[0][0] & theirs[0][0]


def _flip_read(
    claim_text: str,
    sent_text: str,
    issue: Issue,
    tok: Any,
    copy: bool,
    context: str | None = None,
) -> bool:
    """Whether a negation the alignment sets against the evidence sentence is a flip: what it
    denies (read from the parse) is stated plainly on the other side, or, worded otherwise
    there, the claim copies the sentence closely (``copy``) and the other side denies nothing
    in a way of its own. "a batch that isn't full" is no flip of "a partially filled batch",
    nor "primary shards can't be changed, except by reindexing" of "can only be changed by
    reindexing", nor "no new file reads" of "stops reading new lines"; "is not happy" is one
    of "is happy", and "is not recognised for" of "is known for". A negation that something
    lifts ("cannot be withdrawn until the holding period ends", "cannot be cancelled without a
    manager's approval") is no flip of the same verb said to wait for or need it ("can be
    withdrawn once the period ends", "you must pay the deposit before the key is issued",
    "can be cancelled only with a manager's approval"). A claim cut from an answer sentence
    (``context``), or a sentence, that leaves its denied verb out denies the verb it is joined
    to there ("... can be changed at any time, but primary shards can't, except by
    reindexing"). Where the parse shows nothing denied, the alignment's reading stands."""
    if tok is not None:  # the sentence's negation, which the claim drops
        word, other = negated_word(sent_text, tok.start, tok.end), claim_text
        denier, at = sent_text, (tok.start, tok.end)
        left_out = elliptic(sent_text, tok.start, tok.end) if word is None else None
        if left_out is not None:
            # it denies a predicate stated elsewhere ("If it is not, we charge ..." after
            # "return the car full"): a flip only where the claim leaves it out after the same
            # auxiliary ("fears that he will" of "fears that he never will")
            return left_out in ellipses(claim_text)
    else:
        word, other = negated_word(claim_text, issue.start, issue.end), sent_text
        denier, at = claim_text, (issue.start, issue.end)
        if word is None:
            word = _elided_in(claim_text, context or claim_text, issue.start, issue.end)
        elif (conjunct := _denied_of_conjunct(claim_text, context or claim_text, *at)) is not None:
            return _done_to(sent_text, *conjunct)
    if word is None:
        return True
    if stated_opposite(word, other):
        return False  # "is not enabled" says what "is disabled" says
    subject = negated_subject(denier, *at)
    for after, keys in lifted_by(denier, *at):
        if any(keys & then for then in granted_on(other, word, after, subject)):
            return False  # the other side says when or on what the thing may happen
    # a denied bound is the other bound ("may not work more than 48 hours" is "up to 48",
    # "No refunds are given after 14 days" is "only within 14 days"): the other side's value on
    # the other side of that bound is left to the bound's reading
    denied = {
        denier[a:b]: f[0]
        for a, b in negated_numbers(denier, *at)
        if (f := bound_span(denier, a, b))
    }
    if any(denied.get(value, side) != side for value, side in _bounds(other)):
        return False
    even = _EVEN.search(denier)
    if even is not None:
        # "can't be changed, even by contacting support" denies it on the very means or
        # condition the other side allows it on ("can only be changed by contacting support")
        tail = {t.lemma_.casefold() for t in parse(denier[even.end() :])}
        if any(keys and keys <= tail for keys in granted_on(other, word, True, subject)):
            return True
    plain = states_plainly(other, word, subject)
    if plain is None:
        return copy and not denies_otherwise(other)
    return plain


_EVEN = re.compile(r"\beven\s+(?=by|if|with|when|after|once|for)\b", re.IGNORECASE)
""""even" before the means or condition a negation holds on still ("can't be changed, *even*
by contacting support")."""


def _denied_elided(
    claim: Analysed,
    context: str | None,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """An elliptic negation of the claim whose verb, read in the answer sentence it was cut
    from (``context``), a sentence about the claim states plainly of the same subject: "...,
    but seats can't, except by contacting support" where "The number of seats can be raised
    from the admin page at any time"; the claim denies what the sources say. A statement
    limited or said only on a condition ("can only be raised by ...") is not plain."""
    if not _ELLIPTIC_NEGATION.search(claim.text):
        return []  # (a cheap look before the parse)
    for m in _ELLIPTIC_NEGATION.finditer(claim.text):
        verb = _elided_in(claim.text, context or claim.text, m.start(1), m.end(1))
        subject = negated_subject(claim.text, m.start(1), m.end(1)) if verb else set()
        if not subject:
            continue
        for k, e in near:
            found = said_plainly_of(e.text, verb, subject)  # type: ignore[arg-type]
            if found is not None:
                r, o, text = sentences[k]
                ev = (r, o + found[0], o + found[1], text[found[0] : found[1]])
                return [Issue("negation", "conflict", m.start(1), m.end(1), m.group(1), ev)]
    return []


_ELLIPTIC_NEGATION = re.compile(
    r"\b((?:ca|is|are|was|were|do|does|did|has|have|had|wo|would|should|could|must)n['’]t"
    r"|cannot|(?:can|is|are|do|does|will|may|must) not)\s*(?=[,;.:)]|$|\s+(?:except|unless|but)\b)",
    re.IGNORECASE,
)
"""A negation whose predicate is left out: an auxiliary with "not" before a mark or an "except"
("but members can't, except ...", "the illness isn't.")."""


def _denied_of_conjunct(
    claim_text: str, context: str, start: int, end: int
) -> tuple[frozenset[str], frozenset[str]] | None:
    """The verbs a "but not" before a noun may deny of that noun, read in the answer sentence
    ``context`` the claim was cut from, with the noun's content lemmas: "gets you the
    replacement cost refunded, but not the £3 processing fee" denies that the fee is refunded
    (or got), not that there is a fee. None for another negation, and for a noun joined to a
    subject ("Every plan includes it, but not the Free plan" excepts a doer)."""
    at = context.find(claim_text)
    if at < 0:
        return None
    tok = next((t for t in parse(context) if t.idx == at + start), None)
    if tok is None or tok.dep_ != "neg" or tok.head.dep_ != "conj":
        return None
    noun, head = tok.head, tok.head.head
    if (
        noun.pos_ not in ("NOUN", "PROPN")
        or head.dep_ in ("nsubj", "csubj")
        or not any(c.dep_ == "cc" and c.lower_ == "but" for c in (*head.children, *noun.children))
    ):
        return None
    verb = head
    while verb.pos_ != "VERB" and verb.head.i != verb.i:
        verb = verb.head
    if verb.pos_ != "VERB":
        return None
    verbs = {verb.lemma_.casefold()}
    for c in verb.children:
        if c.dep_ in ("dobj", "attr", "oprd", "xcomp", "ccomp") and "VERB" in lemmas(c.lower_):
            # a participle after the object, which the tagger may take for a noun ("gets you
            # the cost refunded")
            verbs.add(lemmas(c.lower_)["VERB"][0])
    words = frozenset(content_lemmas(noun.subtree))
    return (frozenset(verbs), words) if words else None


def _done_to(text: str, verbs: frozenset[str], words: frozenset[str]) -> bool:
    """Whether ``text`` says, with nothing negating it, that one of ``verbs`` is done to a
    thing named by one of ``words`` (its object, or its subject in the passive), or by it:
    "we refund the processing fee" of ``refund`` and the fee; "we refund the replacement
    cost" is not."""
    for t in parse(text):
        if t.pos_ != "VERB" or not verbs & {t.lemma_.casefold(), *lemmas(t.lower_).get("VERB", ())}:
            continue
        if any(c.dep_ == "neg" for c in t.children):
            continue
        # (or the thing is its doer there: "All plans include it" of "but not the Free plan",
        # which may except a plan from the doers)
        done_to = [c for c in t.children if c.dep_ in ("dobj", "nsubjpass", "nsubj")]
        done_to += [x for c in done_to for x in c.conjuncts]
        if any(words & content_lemmas(c.subtree) for c in done_to):
            return True
    return False


def _elided_in(claim_text: str, context: str, start: int, end: int) -> str | None:
    """The lemma of the verb an elliptic negation at ``claim_text[start:end]`` denies, read in
    the answer sentence ``context`` the claim was cut from ("Seats can be added at any time,
    but the storage limit can't": ``add``); None when the claim is not found there or its
    negation is not elliptic."""
    at = context.find(claim_text)
    if at < 0:
        return None
    found = elided(context, at + start, at + end)
    return found[0] if found is not None else None


def _bounds(text: str) -> list[tuple[str, str]]:
    """Each number of ``text`` with the side of the bound it is said with ("up to 48": below)."""
    out = []
    for m in re.finditer(r"\d[\d,.]*", text):
        found = bound_span(text, m.start(), m.end())
        if found is not None:
            out.append((m.group(), found[0]))
    return out


def _held_against(
    kind: str,
    relation: str,
    claim: Analysed,
    span: tuple[int, int],
    sentences: Sequence[tuple[int, int, str]],
    k: int,
    theirs: tuple[int, int],
) -> Issue:
    """An issue on the claim's ``span`` held against the span ``theirs`` of sentence ``k``."""
    (start, end), (lo, hi) = span, theirs
    r, o, text = sentences[k]
    return Issue(
        kind, relation, start, end, claim.text[start:end], (r, o + lo, o + hi, text[lo:hi])
    )


def _moved_the_other_way(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A verb of the claim that moves something one way ("lowers the cooling set point") where
    the sources move the same thing (the same noun and modifiers) only the other way ("raises
    the cooling set point"): an opposite, whatever values go with it."""
    issues = []
    for mine in moves(claim.text):
        alike, other = False, None
        for k, e in near:
            for theirs in moves(e.text):
                if theirs.what != mine.what:
                    continue
                if theirs.side == mine.side:
                    alike = True
                elif other is None:
                    other = (k, theirs)
        if other is not None and not alike:
            k, theirs = other
            span = (mine.start, mine.end)
            at = (theirs.start, theirs.end)
            issues.append(_held_against("content", "opposite", claim, span, sentences, k, at))
    return issues


def _parts(
    x: frozenset[str], y: frozenset[str], a: frozenset[str], b: frozenset[str]
) -> str | None:
    """How a claim's two parties ``x`` and ``y`` stand to a sentence's two, ``a`` and ``b``,
    each told apart by the words it has and the other lacks ("primary node" / "standby node"):
    ``"alike"`` (x is a and y is b), ``"traded"`` (x is b and y is a, and neither is also its
    own), else None."""
    only_a, only_b = a - b, b - a
    if x & only_a and y & only_b:
        return "alike"
    if x & only_b and y & only_a and not x & only_a and not y & only_b:
        return "traded"
    return None


def _compared_the_other_way(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A comparison of the claim whose two sides the sources compare the same way only the
    other way round: "The Basic plan costs more than the Pro plan" where "The Pro plan costs
    more than the Basic plan". The sides are told apart by :func:`_parts`. A claim naming one
    side only ("Tavish is the older lake") is read against a comparison of the sources whose
    second side it names and whose first it does not ("Orrin is older than Tavish")."""
    mine = comparisons(claim.text, alone=True)
    if not mine:
        return []
    issues = []
    for c in mine:
        alike, other = False, None
        for k, e in near:
            for theirs in comparisons(e.text):
                if theirs.how != c.how:
                    continue
                if c.second:
                    read = _parts(c.first, c.second, theirs.first, theirs.second)
                else:
                    a, b = theirs.first - theirs.second, theirs.second - theirs.first
                    read = "alike" if c.first & a else "traded" if c.first & b else None
                alike = alike or read == "alike"
                if read == "traded" and other is None:
                    other = (k, theirs)
        if other is not None and not alike:
            k, theirs = other
            at = (theirs.start, theirs.end)
            issues.append(
                _held_against("content", "opposite", claim, (c.start, c.end), sentences, k, at)
            )
    return issues


_LARGER = r"higher|greater|larger|bigger|longer|later|last|latest|highest|greatest|largest|most"
_SMALLER = r"lower|lesser|smaller|shorter|earlier|sooner|first|earliest|lowest|least|smallest"
_OF = r"higher|greater|larger|bigger|longer|later|lower|lesser|smaller|shorter|earlier"
_CHOICE = re.compile(
    r"\bwhichever\s+(?:(?:is|comes|falls|happens|occurs|applies|gives|ends)\s+)?(?:the\s+)?"
    rf"(?P<word>(?:{_LARGER}|{_SMALLER}|more|less|fewer)(?!\s+[a-z]))\b"
    rf"|\bthe\s+(?P<of>{_OF})\s+of\b",
    re.IGNORECASE,
)
"""A choice between values by their size or time: "*whichever is lower*", "*whichever comes
first*", "*the greater of* £50 and 10%"; not by a quality ("whichever is most convenient"),
nor a rank ("the first of the month")."""


def _choices(text: str) -> list[tuple[bool, int, int, int, int]]:
    """Each choice of ``text`` (:data:`_CHOICE`): whether it takes the larger or later value,
    the offsets of the word that says so, and those of the whole phrase."""
    out = []
    for m in _CHOICE.finditer(text):
        group = "word" if m.group("word") else "of"
        word = m.group(group).casefold()
        larger = bool(re.fullmatch(_LARGER, word)) or word == "more"
        out.append((larger, m.start(group), m.end(group), m.start(), m.end()))
    return out


def _made_choices(
    claim: Analysed, claim_stems: set[str], near: Sequence[tuple[int, Analysed]]
) -> list[tuple[int, tuple[bool, int, int, int, int]]]:
    """The choices (:func:`_choices`) of the sentences stating two of the claim's words or
    values, each with its sentence index."""
    return [(k, c) for k, e in near if _shares_two(claim, claim_stems, e) for c in _choices(e.text)]


def _choice_words(
    claim: Analysed, claim_stems: set[str], near: Sequence[tuple[int, Analysed]]
) -> list[tuple[int, int]]:
    """The spans of the claim's choices that the sources make the same way: their words say
    the choice, whatever words the sources say it with ("whichever happens sooner" for
    "whichever comes first")."""
    mine = _choices(claim.text)
    if not mine:
        return []
    theirs = {c[0] for _, c in _made_choices(claim, claim_stems, near)}
    return [(start, end) for larger, _, _, start, end in mine if larger in theirs]


def _chosen_the_other_way(
    claim: Analysed,
    claim_stems: set[str],
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A choice of the claim between values that the sources make the other way: "capped at
    $24 or 25% of the order, whichever is higher" where they say "whichever is lower"; "when
    the keys are handed back, whichever comes first" where they say "whichever is later". Read
    against the sentences stating two of the claim's words or values that make a choice, and
    only where none makes it the claim's way."""
    mine = _choices(claim.text)
    if not mine:
        return []
    theirs = _made_choices(claim, claim_stems, near)
    issues = []
    for larger, start, end, _, _ in mine:
        if not theirs or any(c[0] == larger for _, c in theirs):
            continue
        k, (_, lo, hi, _, _) = theirs[0]
        issues.append(
            _held_against("content", "opposite", claim, (start, end), sentences, k, (lo, hi))
        )
    return issues


_ALSO = frozenset(("too", "also", "as", "well", "even", "only", "just"))
"""Words that add nothing to what days a claim gives its statement ("at weekends *too*")."""


def _days_otherwise(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """Days of the week the claim gives a statement that the sources give other days: "Visitor
    permits are valid at weekends" where "Visitor permits are valid Monday to Friday only". Held
    against a sentence stating every other content word of the claim, and only where no
    sentence about the claim (stating two of its words or values) names one of its days. A
    claim with a negation may say what the other days leave out ("not at weekends") and is left
    alone."""
    mine = named_days(claim.text)
    if not mine or claim.negations:
        return []
    spans = [(lo, hi) for lo, hi, _ in day_spans(claim.text)]
    words = {
        stem(claim.tokens[i].norm)
        for i in claim.content
        if claim.tokens[i].norm not in _ALSO
        and not any(lo <= claim.tokens[i].start < hi for lo, hi in spans)
    }
    if len(words) < 2:
        return []
    other = None
    for k, e in near:
        theirs = named_days(e.text)
        if theirs & mine and _shares_two(claim, words, e):
            return []  # a sentence about the claim says something of one of its days
        if theirs and other is None and words <= e.stems:
            other = (k, day_spans(e.text)[0][:2])
    if other is None:
        return []
    k, at = other
    return [_held_against("content", "other_value", claim, spans[0], sentences, k, at)]


_SYMMETRIC = frozenset(
    (
        *("meet", "marry", "match", "equal", "resemble", "border", "merge", "join", "connect"),
        *("link", "pair", "sync", "collide", "neighbour", "neighbor", "face", "adjoin", "touch"),
    )
)
"""Verbs whose two parties may trade places without changing the fact ("A borders B")."""


def _roles_swapped(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """An action of the claim whose two parties the sources give the same action with their
    parts traded, and never as the claim has them: "The landlord must notify the tenant" where
    "The tenant must notify the landlord", "The server sends a heartbeat to the client" where
    the client sends it to the server. Each party is told apart by :func:`_parts`; a verb whose
    parties may trade places ("borders", "meets") is left alone."""
    mine = [r for r in roles(claim.text) if r.verb not in _SYMMETRIC]
    if not mine:
        return []
    issues = []
    for c in mine:
        alike, other = False, None
        for k, e in near:
            if not _has_verb(e, c.verb):
                continue  # (a cheap look before the parse)
            for theirs in roles(e.text):
                if theirs.verb != c.verb or theirs.negated != c.negated:
                    continue
                both = sorted(set(c.parties) & set(theirs.parties))
                for one, two in itertools.combinations(both, 2):
                    x, y = c.parties[one].words, c.parties[two].words
                    read = _parts(x, y, theirs.parties[one].words, theirs.parties[two].words)
                    alike = alike or read == "alike"
                    if read == "traded":
                        other = other or (k, theirs, one, two)
        if other is not None and not alike:
            k, theirs, one, two = other
            a, b = theirs.parties[one], theirs.parties[two]
            x, y = c.parties[one], c.parties[two]
            span, at = (
                (min(x.start, y.start), max(x.end, y.end)),
                (min(a.start, b.start), max(a.end, b.end)),
            )
            issues.append(_held_against("content", "opposite", claim, span, sentences, k, at))
    return issues


_INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than)\b", re.IGNORECASE)


def _passed_over(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A claim that gives a verb what the sources say it is done with "instead of" or "rather
    than": "Refunds are issued in cash" where "Refunds are issued as store credit instead of
    cash". The claim must use the verb, name the passed-over thing by a word the chosen one
    lacks, and name nothing only the chosen one has ("as store credit rather than cash"); no
    other sentence may give the verb that thing ("serves the code defaults" at startup, where
    during an outage it serves the last known values instead of the code defaults)."""
    if not any(_INSTEAD.search(e.text) for _, e in near):
        return []  # (a cheap look before the parse)
    mine = {t.lemma_.casefold(): t for t in parse(claim.text) if t.pos_ in ("NOUN", "PROPN")}
    verbs = {t.lemma_.casefold() for t in parse(claim.text) if t.pos_ == "VERB"}
    issues = []
    for k, e in near:
        if not _INSTEAD.search(e.text):
            continue
        for choice in instead(e.text):
            only_passed = choice.passed_over - choice.chosen
            only_chosen = choice.chosen - choice.passed_over
            hit = next((mine[w] for w in sorted(only_passed) if w in mine), None)
            if choice.verb not in verbs or hit is None or only_chosen & set(mine):
                continue
            said = hit.lemma_.casefold()
            if any(j != k and _has_verb(x, choice.verb) and said in _lemmas_of(x) for j, x in near):
                continue  # another statement gives the verb that thing
            span, at = (hit.idx, hit.idx + len(hit.text)), (choice.start, choice.end)
            issues.append(_held_against("content", "opposite", claim, span, sentences, k, at))
            return issues
    return issues


def _lemmas_of(text: Analysed) -> set[str]:
    """The lemmas of the nouns of ``text``."""
    return {t.lemma_.casefold() for t in parse(text.text) if t.pos_ in ("NOUN", "PROPN")}


_BY = re.compile(r"\bby\s+[A-Z]")
"""A "by" phrase naming someone: where a sentence may give a noun's maker."""


def _done_by_another(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A name the claim gives an action to (its doer, or whom it is done to) where the sources
    state the same action on the same thing (the same verb, sharing a noun of what it is done
    to or with) only of another name, one the claim never mentions: "Cia Berg was inducted into
    the Rock and Roll Hall of Fame" where "he", David Lee Roth, was. A pronoun of the sources
    is read as the named subject of the sentence before it in the same passage. Whom an action
    is done to is weighed only against a person the sources call "he", "she" or "they": a
    thing is often named otherwise ("the track" for a song's title). A noun's maker in a "by"
    phrase (:func:`~truthguard.refchecker.structure.makers`) is the doer of whatever action made
    it: "The music for About Schmidt was composed by Jack Nicholson" where the film has "music
    by Rolfe Kent" and stars Jack Nicholson."""
    if not any(f.kind == "name" for f in claim.facts):
        return []
    issues = []
    aliases = _defined_terms(sentences)
    for mine in [*frames(claim.text), *makers(claim.text)]:
        for role, other in (("agent", "patient"), ("patient", "agent")):
            who = getattr(mine, role)
            if who is None or not who.name:
                continue
            against = getattr(mine, other)
            alike, rival = False, None
            for k, e in near:
                made = makers(e.text) if _BY.search(e.text) else []
                if not made and mine.verb and not _has_verb(e, mine.verb):
                    continue  # (a cheap look before the parse)
                for theirs in [*frames(e.text), *made]:
                    if theirs.verb != mine.verb and theirs.verb:
                        # a noun's maker is the doer of whatever made it; the claim's own "by"
                        # phrase says too little to hold against an action ("an investigation
                        # by Ted Wells", which the league launched and hired him to run)
                        continue
                    them = getattr(theirs, other)
                    rest = bool(mine.rest & theirs.rest)
                    done_to = bool(
                        against and them and not against.name and against.words & them.words
                    )
                    if not (rest and done_to if mine.light else rest or done_to):
                        # another action of the verb ("wrote the song" / "the novel"); a light
                        # verb says what only with both ("gets a lead on HFS from Molly")
                        continue
                    doer, at = getattr(theirs, role), k
                    if role == "patient" and not (doer and doer.words & _PERSONAL):
                        # a thing is often named otherwise (a song by its title or as "the
                        # track by ..."); a person spoken of as "he" or "she" is not
                        continue
                    if doer is not None and doer.pronoun:
                        doer, at = _named_before(sentences, k)
                    if doer is None or not doer.name:
                        continue
                    if _share_a_word(doer.words, who.words) or _one_party(
                        doer.words, who.words, aliases
                    ):
                        alike = True
                    elif rival is None and not doer.words & claim.norms:
                        rival = (at, doer)  # (a name the claim gives a part of its own)
            if rival is not None and not alike:
                k, doer = rival
                r, o, text = sentences[k]
                ev = (r, o + doer.start, o + doer.end, text[doer.start : doer.end])
                word = claim.text[who.start : who.end]
                issues.append(Issue("name", "swapped", who.start, who.end, word, ev))
    return issues


_NOT_BY = re.compile(
    r"\b(?:not|never)\s+by\b|(?:\bnot|n[’']t|\bcannot|\bnever)\s*(?:[.,;:!?)]|$)"
    r"|\b(?:except|excluding)\b",
    re.IGNORECASE,
)
"""A denied "by" party ("but not by call-centre staff"; "not only by" denies no one), or a
negation whose predicate is left out ("but members cannot."), or a subject's exception
("All plans except Free")."""


def _denied_doer(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """The claim's doer of an action that a sentence about it denies of that doer in a negated
    "by" phrase or an elliptic negation (:func:`~truthguard.refchecker.structure.denied_agents`):
    "call-centre staff can approve further refunds" where "additional refunds can be approved
    by a branch manager but not by call-centre staff", "Members can invite users" where
    "Admins can invite users, but members cannot". The action must be the same: the same
    verb, and what it is done to sharing a word where both name it."""
    if not any(_NOT_BY.search(e.text) for _, e in near):
        return []  # (a cheap look before the parse)
    mine = [f for f in frames(claim.text) if f.agent is not None]
    if not mine:
        return []
    negated = negated_verbs(claim.text)
    # (a doer's words with those of its kind: "The Free plan" is the plan and Free)
    kinds = {r.verb: r.parties["agent"].words for r in roles(claim.text) if "agent" in r.parties}
    issues = []
    for f in mine:
        if f.verb in negated:
            continue  # the claim denies it too
        for k, e in near:
            if not _NOT_BY.search(e.text) or not _has_verb(e, f.verb):
                continue
            denied = [a for verb, a in denied_agents(e.text) if verb == f.verb]
            doer = f.agent.words | kinds.get(f.verb, frozenset())
            hit = next((a for a in denied if a.words & doer), None)
            if hit is None:
                continue
            done_to = [t.patient for t in frames(e.text) if t.verb == f.verb and t.patient]
            if f.patient and done_to and not any(f.patient.words & p.words for p in done_to):
                continue  # another action of the verb
            r, o, text = sentences[k]
            ev = (r, o + hit.start, o + hit.end, text[hit.start : hit.end])
            word = claim.text[f.agent.start : f.agent.end]
            issues.append(Issue("negation", "conflict", f.agent.start, f.agent.end, word, ev))
            break
    return issues


def _has_verb(text: Analysed, verb: str) -> bool:
    """Whether a word of ``text`` may be a form of ``verb`` ("written" of "write")."""
    return stem(verb) in text.stems or any(
        verb in lemmas(t.norm).get("VERB", ()) for t in text.tokens
    )


def _placed_otherwise(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A name the claim places an action at ("a series set in Los Angeles") where the sources
    place the same action (the same verb and preposition) only at another name, one the claim
    never mentions ("Set in Chicago, the series is filmed in Los Angeles"): the name is stated,
    but in another slot."""
    names = [f for f in claim.facts if f.kind == "name"]
    if not names:
        return []
    issues = []
    for mine in placed(claim.text):
        if not any(f.start <= mine.name.start < f.end for f in names):
            continue
        alike, rival = False, None
        for k, e in near:
            if not _has_verb(e, mine.verb):
                continue  # (a cheap look before the parse)
            for theirs in placed(e.text):
                if theirs.verb != mine.verb or theirs.prep != mine.prep:
                    continue
                theirs_text = e.text[theirs.name.start : theirs.name.end]
                if theirs.name.words & mine.name.words or _abbreviates(
                    claim.text[mine.name.start : mine.name.end], analyse(theirs_text)
                ):
                    alike = True  # (or its initials: "the U.S." of "the United States")
                elif rival is None and not theirs.name.words & claim.norms:
                    rival = (k, theirs.name)
        if rival is not None and not alike:
            k, other = rival
            r, o, text = sentences[k]
            ev = (r, o + other.start, o + other.end, text[other.start : other.end])
            word = claim.text[mine.name.start : mine.name.end]
            issues.append(Issue("name", "other_value", mine.name.start, mine.name.end, word, ev))
    return issues


_SUPERLATIVE = r"(?P<sup>(?:most|least)\s+[^\W\d_]+|[^\W\d_]+est)\b"

_TOP = re.compile(r"\bthe\s+" + _SUPERLATIVE + r"(?:\s+(?P<noun>[^\W\d_]+))?", re.IGNORECASE)
"""A superlative given no rank, which puts its thing first ("the highest peak")."""

_RANKED = re.compile(
    r"\b(?P<rank>second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))"
    r"[\s-]+" + _SUPERLATIVE + r"(?:\s+(?P<noun>[^\W\d_]+))?",
    re.IGNORECASE,
)
"""A superlative given a rank ("the second highest peak", "its third-largest city")."""


def _rank_dropped(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A superlative the claim gives its named subject without a rank ("Hunter Mountain is the
    highest peak") where a sentence naming that subject gives it only with one ("the second
    highest peak"): the claim puts first what the sources rank lower. "One of the highest" ranks
    nothing; a superlative of another noun ("the second largest island") is another."""
    issues: list[Issue] = []
    for m in _TOP.finditer(claim.text):
        # (the subject: the names before it)
        names = {
            w
            for f in claim.facts
            if f.kind == "name" and f.end <= m.start()
            for w in fold(f.text).split()
        }
        sup = " ".join(m.group("sup").casefold().split())
        if not names:
            continue
        if not _is_superlative(sup) or re.search(r"\bof\s*$", claim.text[: m.start()]):
            continue
        noun = _noun_after(m)
        for k, e in near:
            if not names & e.norms or re.search(r"\bthe\s+" + re.escape(sup) + r"\b", e.text, re.I):
                continue  # (another subject, or one the sources also put first)
            ranked = [
                r
                for r in _RANKED.finditer(e.text)
                if " ".join(r.group("sup").casefold().split()) == sup
                and _same_noun(noun, _noun_after(r))
            ]
            if ranked:
                r, o, _ = sentences[k]
                said = ranked[0]
                ev = (
                    r,
                    o + said.start(),
                    o + said.end("sup"),
                    e.text[said.start() : said.end("sup")],
                )
                issues.append(
                    Issue("number", "conflict", m.start("sup"), m.end("sup"), m.group("sup"), ev)
                )
                break
    return issues


def _same_noun(a: str | None, b: str | None) -> bool:
    """Whether two superlatives' nouns may be one: the same, or one of them left out."""
    return a is None or b is None or stem(a) == stem(b)


def _is_superlative(phrase: str) -> bool:
    """Whether ``phrase`` ("highest", "most populous") is a superlative, not a noun ending in
    "-est" ("the west", "the forest")."""
    if phrase.startswith(("most ", "least ")):
        return True
    found = lemmas(phrase)
    return any(w != phrase for pos in ("ADJ", "ADV") for w in found.get(pos, ()))


def _noun_after(m: re.Match[str]) -> str | None:
    """The noun right after a superlative, if the word there is one ("peak" of "the highest
    peak"; none of "the highest in the system")."""
    word = m.group("noun")
    return word.casefold() if word and "NOUN" in lemmas(word.casefold()) else None


_JOINS = re.compile(r"\s(?:and|&)\s")


def _said_of_another(
    claim: Analysed,
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
) -> list[Issue]:
    """A word the claim says of names joined as one subject ("The New Pornographers and Kings
    of Leon are both American rock bands") that the sources say only of another of those names
    (see :func:`_of_another`)."""
    if len(near) < 2 or not _JOINS.search(claim.text):
        return []
    issues: list[Issue] = []
    for shared in shared_subjects(claim.text):
        issues += _of_another(claim, shared.names, shared.said, sentences, near)
    return issues


def said_of_joined(
    claim_text: str, question: str, sentences: Sequence[tuple[int, int, str]]
) -> list[Issue]:
    """A short answer without a verb ("Photographer and writer.") to a question about names it
    joins ("What profession do Kōbō Abe and Agatha Christie share?") says each of its words of
    every one of those names: one the sources say only of another of them is not said of this
    one (see :func:`_of_another`). So does a claim whose subject is both names ("Yes, both
    Kunzea and Trollius are genera of grasses", :func:`_both_subject`). Only a question that
    asks what they share ("both", "share", "in common", "the same") says so."""
    if len(sentences) < 2 or not _SHARED.search(question):
        return []
    names = _joined_names(question)
    claim = analyse(claim_text)
    if len(names) < 2:
        return []
    if verbless(claim_text):
        if any(n.words & claim.norms for n in names):
            return []  # (an answer naming one of them picks it: "Mary Pierce")
    elif not _both_subject(claim_text, names):
        return []
    words = {w for n in names for w in n.words}
    said = [
        (t.start, t.end)
        for i, t in enumerate(claim.tokens)
        if i in claim.keys and fold(t.text) not in words
    ]
    near = [(k, analyse(text)) for k, (_, _, text) in enumerate(sentences)]
    return _of_another(claim, names, said, sentences, near, question)


def _both_subject(claim_text: str, names: Sequence[Arg]) -> bool:
    """Whether a claim says something of both names as its subject ("Yes, both Kunzea and
    Trollius are genera of grasses"): the two names joined by "and" open it, after a "yes" or
    "both"."""
    joined = _joined_names(claim_text)
    if len(joined) != 2 or {frozenset(n.words) for n in joined} != {
        frozenset(n.words) for n in names
    }:
        return False
    return _OPENS_WITH.fullmatch(claim_text[: joined[0].start]) is not None


_OPENS_WITH = re.compile(r"\s*(?:yes\s*,?\s*)?(?:both\s+)?(?:the\s+)?", re.IGNORECASE)


_YES_NO = re.compile(r"^\s*(?:are|were|is|was|do|does|did|have|has|had)\b", re.IGNORECASE)


def denied_of_joined(
    claim_text: str, question: str, sentences: Sequence[tuple[int, int, str]]
) -> list[Issue]:
    """An answer to a yes-or-no question about what two joined names share ("Are Ida Marsh
    and Tom Reyes both composers?") that denies it of one of them ("No, only Ida Marsh is a
    composer."; "Tom Reyes is not."), where a sentence naming that one states the question's
    words of it ("Tom Reyes (born 1950) is an American composer"): the denial is set against
    that sentence. The question's words are its content words besides the names (half of
    them at least, and one)."""
    if not _YES_NO.search(question) or not _SHARED.search(question):
        return []
    names = _joined_names(question)
    if len(names) != 2:
        return []
    claim = analyse(claim_text)
    denied = None
    for j, name in enumerate(names):
        other = names[1 - j]
        at = _name_at(claim, name)
        if at is None:
            continue
        lo = max(0, at[0] - 12)
        only = _ONLY.search(claim_text[lo : at[0]])
        if only is not None and _name_at(claim, other) is None:
            denied = (other, lo + only.start(), lo + only.start() + 4)
            break
        after = _NOT_AFTER.match(claim_text[at[1] :])
        if after is not None:
            cue = 1 if after.group(1) else 2
            denied = (name, at[1] + after.start(cue), at[1] + after.end(cue))
            break
    if denied is None:
        return []
    name, lo, hi = denied
    words = {fold(w) for n in names for w in n.words}
    q = analyse(question)
    asked = {
        stem(t.norm) for i, t in enumerate(q.tokens) if i in q.content and fold(t.norm) not in words
    } - _SHARED_STEMS
    if not asked:
        return []
    for ref, offset, text in sentences:
        e = analyse(text)
        if not _names(name, e):
            continue
        if 2 * len(asked & e.stems) >= len(asked):
            ev = (ref, offset, offset + len(text), text)
            return [Issue("content", "conflict", lo, hi, claim_text[lo:hi], ev)]
    return []


_ONLY = re.compile(r"\bonly\s+(?:the\s+)?$", re.IGNORECASE)
_NOT_AFTER = re.compile(
    r"^\s+(?:is|was|are|were|does|did|has|had)(?:\s+(not)\b|(n['’]t)\b)", re.IGNORECASE
)
_SHARED_STEMS = frozenset(map(stem, ("both", "share", "common", "same")))


def _name_at(claim: Analysed, name: Arg) -> tuple[int, int] | None:
    """Where the claim names ``name``: from its first word to its last."""
    found = [t for t in claim.tokens if fold(t.text) in name.words]
    if not found or {fold(t.text) for t in found} != set(name.words):
        return None
    return found[0].start, found[-1].end


def said_of_option(
    claim_text: str, question: str, sentences: Sequence[tuple[int, int, str]]
) -> list[Issue]:
    """The words of the question an answer says of the one of its two options it picks
    ("Which of them documents the LGBT community, Pride Divide or The Big Melt?" answered "The
    Big Melt documents the issues of the LGBT community") that the sources say only of the
    other option (see :func:`_of_another`). A question that ranks the two ("more", "older",
    "first") is left to the readings of order and number."""
    if len(sentences) < 2 or " or " not in question or _ranks(question):
        return []
    offered = [o for o in options(question) if o in question]
    if len(offered) != 2:
        return []
    names = []
    for o in offered:
        at = question.index(o)
        words = frozenset(fold(t.norm) for t in analyse(o).tokens if t.norm.isalnum())
        names.append(Arg(words - _DETERMINERS, at, at + len(o), True, False))
    claim = analyse(claim_text)
    picked = [
        j
        for j, n in enumerate(names)
        if n.words and all(any(_one_word(w, m) for m in claim.norms) for w in n.words)
    ]
    if len(picked) != 1 or not _subject_is(claim_text, names[picked[0]], picked=True):
        return []  # ("Guyana is part of South America" says nothing of South America)
    mine = names[picked[0]].words
    asked = analyse(question).stems
    said = [
        (t.start, t.end)
        for i, t in enumerate(claim.tokens)
        if i in claim.keys
        and not any(_one_word(w, fold(t.norm)) for w in mine)
        and stem(t.norm) in asked
    ]
    if not said:
        return []
    near = [(k, analyse(text)) for k, (_, _, text) in enumerate(sentences)]
    return _of_another(claim, names, said, sentences, near, question, of=picked[0])


_RANKS = re.compile(
    r"\b(?:more|most|less|least|fewer|first|last|earlier|later|\w+er\s+than|\w+est)\b",
    re.IGNORECASE,
)
"""Words of a question that ranks its options rather than asking which one something is."""


def _ranks(question: str) -> bool:
    """Whether ``question`` ranks its options (:data:`_RANKS`); a word ending in "-est" ranks
    only as a superlative ("largest", "best"), not as a word of its own ("Forest", "west",
    "interest")."""
    return any(
        not m.group(0).casefold().endswith("est") or _superlative(m.group(0).casefold())
        for m in _RANKS.finditer(question)
    )


def _superlative(word: str) -> bool:
    """Whether ``word`` is an adjective's or adverb's superlative: its lemma is another word."""
    found = lemmas(word)
    return any(word not in found.get(pos, (word,)) for pos in ("ADJ", "ADV") if pos in found)


_DETERMINERS = frozenset(("the", "a", "an"))

_SHARED = re.compile(r"\b(?:both|share[sd]?|in common|the same)\b", re.IGNORECASE)
"""Words of a question that asks what two names share."""

_AND = re.compile(r"\s+and\s+(?:both\s+)?")


def _joined_names(text: str) -> list[Arg]:
    """The first names ``text`` joins with "and" ("What profession do Kōbō Abe and Agatha
    Christie share?": Kōbō Abe, Agatha Christie), read from its name facts (see
    :func:`~truthguard.refchecker._analysis.name_spans`)."""
    a = analyse(text)
    spans = name_spans(a)
    for (lo, hi), (lo2, hi2) in itertools.pairwise(spans):
        if _AND.fullmatch(text[a.tokens[hi].end : a.tokens[lo2].start]):
            return [
                Arg(
                    frozenset(fold(a.tokens[k].text) for k in range(i, j + 1)),
                    a.tokens[i].start,
                    a.tokens[j].end,
                    True,
                    False,
                )
                for i, j in ((lo, hi), (lo2, hi2))
            ]
    return []


def _of_another(
    claim: Analysed,
    names: Sequence[Arg],
    said: Sequence[tuple[int, int]],
    sentences: Sequence[tuple[int, int, str]],
    near: Sequence[tuple[int, Analysed]],
    named_in: str | None = None,
    of: int | None = None,
) -> list[Issue]:
    """The words of ``claim`` at the offsets ``said``, said of each of ``names``, that the
    sources say only of another of them: every sentence stating the word names another of them
    and not this one, while a sentence names this one ("Kings of Leon is an American rock band"
    beside "The New Pornographers is a Canadian indie rock band"). A sentence that names none
    of them may speak of any ("It was formed in 1999"), so one such sentence stating the word
    leaves it alone, unless it opens with a pronoun or with "the" and a noun of the sentence
    before it in the same passage, which names one of them ("It examines ...", "The genus is
    named for ..."): it speaks of that one. ``named_in``: the text the names are from (default:
    the claim); ``of``: the one name the words are said of (default: each of them)."""
    issues: list[Issue] = []
    named = [[_names(n, e) for n in names] for _, e in near]
    for j in range(1, len(named)):
        (k, e), (before, b) = near[j], near[j - 1]
        if any(named[j]) or sum(named[j - 1]) != 1 or before != k - 1:
            continue
        if sentences[k][0] != sentences[before][0]:
            continue  # (another passage)
        m = _ANAPHOR.match(e.text)
        noun = m.group("noun") if m else None
        if m is None or (noun is not None and ("NOUN" not in lemmas(noun) or noun not in b.norms)):
            continue
        if _subject_is(b.text, names[named[j - 1].index(True)]):
            named[j] = named[j - 1]  # (a pronoun stands for the subject before it)
    words = [i for i in claim.keys if any(lo <= claim.tokens[i].start < hi for lo, hi in said)]
    done: set[int] = set()
    for at in range(len(names)) if of is None else (of,):
        if not any(row[at] for row in named):
            continue  # the sources never name it: what is said of it is read elsewhere
        for i in words:
            if i in done:
                continue
            t = claim.tokens[i]
            w = t.norm.strip(".'")
            holders = [
                (k, row)
                for (k, e), row in zip(near, named, strict=True)
                if w in e.norms or stem(w) in e.stems or _form_of(w, e.norms)
            ]
            if not holders or any(row[at] or not any(row) for _, row in holders):
                continue
            k, row = holders[0]
            other = names[row.index(True)]
            r, o, text = sentences[k]
            found = re.search(
                r"\b" + r"\W+".join(re.escape(x) for x in _in_order(other, named_in or claim.text)),
                text,
                re.IGNORECASE,
            )
            lo, hi = found.span() if found else (0, len(text))
            ev = (r, o + lo, o + hi, text[lo:hi])
            issues.append(Issue("content", "of_another", t.start, t.end, t.text, ev))
            done.add(i)
    return issues


def _names(name: Arg, sentence: Analysed) -> bool:
    """Whether ``sentence`` names ``name``: each of its words is there, or begins a word there
    of which it is a short form ("Alex Chilton" of "William Alexander Chilton"), one word at
    least written out."""
    words = {fold(w) for w in name.words}
    found = words & sentence.norms
    return bool(found) and all(
        len(w) >= _SHORT_NAME and any(n.startswith(w) for n in sentence.norms)
        for w in words - found
    )


def _one_word(a: str, b: str) -> bool:
    """Whether two words of names are one, the longer misspelt ("Buddelja" of "Buddleja")."""
    return a == b or (min(len(a), len(b)) >= _SHORT_NAME and _variant(a, b))


_SHORT_NAME = 4
"""Words of names shorter than this are one only when the same ("and" is no "a")."""


def _subject_is(text: str, name: Arg, *, picked: bool = False) -> bool:
    """Whether the subject of ``text``'s main verb is ``name``: its phrase shares a word with
    the name, or a word of it misspelt ("Salt and Iron follows ...", whose "Salt" the parse may
    take for a noun). With ``picked`` (the option a claim picks), also what a linking main verb
    says its subject is ("The reserve set up in 1969 is Monfragüe": the reserve is Monfragüe)
    or the main verb's object ("Bauer Media publishes Godey's Lady's Book": what it says is
    said of the book too), each by its own noun phrase ("part of South America" names a part,
    not South America)."""
    words = {fold(w) for w in name.words}

    def named(phrase: Any) -> bool:
        return any(_one_word(fold(t.text), w) for t in phrase for w in words)

    for tok in parse(text):
        if tok.head.dep_ != "ROOT" or tok.head is tok:
            continue
        if tok.dep_ in ("nsubj", "nsubjpass") and named(tok.subtree):
            return True
        linked = tok.dep_ in ("attr", "acomp") and tok.head.lemma_ == "be"
        if picked and (linked or tok.dep_ == "dobj") and named(_noun_phrase(tok)):
            return True
    return False


_NP_PARTS = frozenset(["compound", "poss", "amod", "det", "flat", "nmod", "case", "nummod"])


def _noun_phrase(tok: Any) -> list[Any]:
    """A noun and the words that make its name ("Godey's Lady's Book"), not its prepositions'
    objects."""
    out, todo = [], [tok]
    while todo:
        t = todo.pop()
        out.append(t)
        todo.extend(c for c in t.children if c.dep_ in _NP_PARTS)
    return out


_ANAPHOR = re.compile(
    r"\s*(?:(?:it|he|she|they|its|his|her|their)\b|the\s+(?P<noun>[a-z]+)\b(?!\s+of\b))",
    re.IGNORECASE,
)
"""A sentence that opens by referring back: a pronoun ("It", "His horror fiction"), or "the"
and a noun ("The genus")."""


def _in_order(name: Arg, text: str) -> list[str]:
    """The words of ``name`` as ``text`` writes them, in order."""
    return text[name.start : name.end].split()


_PERSONAL = frozenset(("he", "she", "him", "her"))

_DEFINED = re.compile(
    r"""\b[Tt]he\s+(?P<term>[A-Z][a-z]+),\s+(?P<name>(?:[A-Z][\w&'’.-]*\s+){0,4}[A-Z][\w&'’.-]*),
      | (?P<name2>(?:[A-Z][\w&'’.-]*\s+){0,4}[A-Z][\w&'’.-]*)\s+\((?:the\s+|hereinafter\s+
          (?:referred\s+to\s+as\s+)?)?["“'‘](?P<term2>[A-Z][\w\s]{0,30}?)["”'’]\)""",
    re.VERBOSE,
)
"""A party's defined term in a contract or policy: "The Client, Northquay Foods Ltd, may ...",
"Corvell Software Ltd ("Licensor") grants ..."."""


def _defined_terms(
    sentences: Sequence[tuple[int, int, str]],
) -> list[tuple[frozenset[str], frozenset[str]]]:
    """Each defined term of the sources with the name it stands for, as lower-cased words."""
    out = []
    for _, _, text in sentences:
        for m in _DEFINED.finditer(text):
            term, name = m.group("term") or m.group("term2"), m.group("name") or m.group("name2")
            words = frozenset(w.casefold() for w in re.findall(r"[\w&'’-]+", name))
            out.append((frozenset(w.casefold() for w in term.split()), words))
    return out


def _one_party(
    a: frozenset[str], b: frozenset[str], aliases: Sequence[tuple[frozenset[str], frozenset[str]]]
) -> bool:
    """Whether ``a`` and ``b`` name one party by a defined term of the sources (one the term,
    the other words of the name it stands for)."""
    return any((term <= a and b & name) or (term <= b and a & name) for term, name in aliases)


def _named_before(sentences: Sequence[tuple[int, int, str]], k: int) -> tuple[Arg | None, int]:
    """The named subject of the sentence before ``sentences[k]`` in its passage, if it is
    among ``sentences``, and that sentence's index."""
    ref, start, _ = sentences[k]
    before = [j for j, s in enumerate(sentences) if s[0] == ref and s[1] < start]
    if not before:
        return None, k
    j = max(before, key=lambda j: sentences[j][1])
    return subject_name(sentences[j][2]), j


def _bound_words(text: Analysed, facts: Sequence[Fact] | None = None) -> list[tuple[int, int]]:
    """The spans of the words that bound the numbers of ``text`` (or of its ``facts``): "no
    later than" of "no later than 14 days", read with the value (see :func:`_side`), not as
    words."""
    out = []
    for f in text.facts if facts is None else facts:
        if f.kind == "number":
            found = bound_span(text.text, f.start, f.end)
            if found is not None:
                _, lo, hi = found
                out.append((lo, f.start) if lo < f.start else (f.end, hi))
    return out


_FORMER_BEFORE = re.compile(
    r"(?:\b(?:previously|formerly|instead\s+of|rather\s+than|replacing|up\s+from|down\s+from)"
    r"(?:\s+[^\W\d]+(?:['’]s)?){0,2})\s*$",
    re.IGNORECASE,
)
_FORMER_AFTER = re.compile(
    r"^\s*(?:\w+\s*){0,2}[(,]?\s*(?:previously|formerly|instead\s+of|rather\s+than|"
    r"replacing|up\s+from|down\s+from)\b",
    re.IGNORECASE,
)
_FROM_TO = re.compile(r"\bfrom\s+$", re.IGNORECASE)
_TO = re.compile(r"^\s*(?:[^\W\d]+\s+){0,2}to\s+", re.IGNORECASE)


def _change_roles(text: Analysed) -> dict[int, str]:
    """The numbers of ``text`` a change of value puts on one side of it, by their start:
    ``"former"`` ("07:15 (previously 06:30)", "instead of the summer's 7", "from 10 minutes to
    5") or ``"new"`` (the other side of such a change)."""
    numbers = [f for f in text.facts if f.kind in ("number", "month")]
    roles: dict[int, str] = {}
    for k, f in enumerate(numbers):
        before = text.text[max(0, f.start - 40) : f.start]
        after = text.text[f.end : f.end + 40]
        if _FORMER_BEFORE.search(before):
            roles[f.start] = "former"
            if k > 0 and numbers[k - 1].start not in roles:
                roles[numbers[k - 1].start] = "new"
        elif _FROM_TO.search(before) and _TO.match(after):
            roles[f.start] = "former"  # "from 30 seconds to a minute"
            nxt = numbers[k + 1] if k + 1 < len(numbers) else None
            if nxt is not None and _TO.match(text.text[f.end : nxt.start] + " "):
                roles[nxt.start] = "new"
        elif _FORMER_AFTER.match(after) and k + 1 < len(numbers):
            roles.setdefault(f.start, "new")
    return roles


_BASELINE_BEFORE = re.compile(
    r"\b(?:compared\s+(?:with|to)|against|versus|vs\.?|up\s+from|down\s+from|previous(?:ly)?|prior|earlier|"
    r"before|used\s+to|had\s+been|was|were|last|old)\b[^.;:]{0,30}$",
    re.IGNORECASE,
)
_BASELINE_AFTER = re.compile(
    r"^[^.;:]{0,25}\b(?:a\s+year\s+(?:earlier|ago|before)|last\s+(?:year|quarter|month)|"
    r"the\s+(?:year|quarter|month)\s+before|(?:in\s+)?the\s+(?:prior|previous)\s+\w+|"
    r"before|earlier|previously|formerly)\b",
    re.IGNORECASE,
)


_FROM_VALUE = re.compile(r"\bfrom\s+(?:[A-Z]{3}\s*|[$€£¥]\s*)?$")
"""A value a change starts from, right after "from" ("rose to 4.2 billion from 3.9 billion")."""


def _said_before(text: str, fact: Fact) -> bool:
    """Whether the claim frames ``fact`` as a value of before or one compared with ("up from
    NOK 3.9 billion a year earlier", "compared with 100", "was 06:30"): then it tells the
    change, and a source's value before the change is its own."""
    return bool(
        _BASELINE_BEFORE.search(text[max(0, fact.start - 40) : fact.start])
        or _FROM_VALUE.search(text[max(0, fact.start - 12) : fact.start])
        or _BASELINE_AFTER.match(text[fact.end : fact.end + 40])
    )


def _changed(
    fact: Fact, claim: Analysed, sents: Sequence[tuple[int, Analysed]]
) -> tuple[int, Fact] | None:
    """The value the sources changed ``fact`` to, when they state the claim's value only as the
    one before a change the claim does not tell ("leaves at 06:30" where the first departure is
    "at 07:15 (previously 06:30)"; "lengthened from 5 to 10 minutes" where it is shortened from
    10 to 5): ``(sentence index, the new value)``."""
    if fact.kind != "number":
        return None
    roles_here = _change_roles(claim)
    if roles_here.get(fact.start) == "former" or _said_before(claim.text, fact):
        return None
    found = None
    for k, e in sents:
        roles = _change_roles(e)
        numbers = [f for f in e.facts if f.kind in ("number", "month")]
        for g in numbers:
            if not fact_in(fact, [g], _NONE, _NONE) or ("." in fact.text) != ("." in g.text):
                continue  # (a version "3.0" is no count of 3)
            if roles.get(g.start) != "former":
                return None  # stated as it stands somewhere
            partner = next(
                (h for h in numbers if roles.get(h.start) == "new" and _same_kind_of(h, g)), None
            )
            if partner is None:
                continue
            told = [f for f in claim.facts if fact_in(partner, [f], _NONE, _NONE)]
            # the claim leaves out the value it changed to, or tells the change the other way
            if not told or all(roles_here.get(f.start) == "former" for f in told):
                found = (k, partner)
    return found


def _denied_of_another(claim: Analysed, sent: Analysed, cue: Any) -> bool:
    """Whether the sentence's negation ``cue`` denies its verb of others than the claim gives
    that verb to alone ("only Plus subscribers can create one" of "free users ... can't create
    one"): the claim's "only" stands before the verb, and no subject the parse gives the verb
    there shares a word with one it gives the verb in the sentence."""
    verb = negated_verb_at(sent.text, cue.start, cue.end)
    if verb is None or not only_doers(claim.text, verb):
        return False
    theirs, mine = doers(sent.text, verb), doers(claim.text, verb)
    return not any(a & b for a in theirs for b in mine)


def _alike(fact: Fact, text: Analysed) -> list[Fact]:
    """The facts of ``text`` that may state ``fact``'s value again: a rank ("the first six
    months") does not state a count ("one month's notice") a second time."""
    return [f for f in text.facts if ordinal(f) == ordinal(fact)]


def _same_kind_of(a: Fact, b: Fact) -> bool:
    return a.kind == b.kind and (a.unit == b.unit or None in (a.unit, b.unit))


def _content_stems(text: Analysed) -> set[str]:
    """The stems of ``text``'s content words."""
    return {stem(text.tokens[i].norm) for i in text.content}


def _home_statement(claim: Analysed, sent: Analysed) -> tuple[int, Analysed | None]:
    """The statement of ``sent`` (a part between its breaks outside brackets, :func:`_outer_split`)
    the claim retells: ``(its offset in the sentence, it)``, when the sentence makes several,
    the claim only one, and one shares more of the claim's content words than any other; else
    ``(0, None)``."""
    pieces = _outer_split(sent.text)
    if len(pieces) < 2 or len(_outer_split(claim.text)) > 1:
        return 0, None
    mine = _content_stems(claim)
    parts: list[tuple[int, int, Analysed]] = []
    for at, piece in pieces:
        part = analyse(piece)
        parts.append((len(mine & part.stems), at, part))
    parts.sort(key=lambda p: -p[0])
    if len(parts) < 2 or parts[0][0] <= parts[1][0]:
        return 0, None
    return parts[0][1], parts[0][2]


_STATEMENT_BREAK = re.compile(r";|,\s+(?:but|whereas|while)\s+", re.IGNORECASE)
"""What parts two statements of one sentence: a semicolon, or a comma before a contrasting
conjunction ("Session lifetime is unchanged at 14 days, but sessions are renewed ...")."""


def _outer_split(text: str) -> list[tuple[int, str]]:
    """``text`` split into its statements (:data:`_STATEMENT_BREAK`) outside brackets, each with
    its offset: a semicolon in brackets parts the figures of one statement ("no significant
    effect (+0.1 t/ha; p = 0.52)")."""
    pieces, start = [], 0
    for m in _STATEMENT_BREAK.finditer(text):
        before = text[: m.start()]
        if before.count("(") > before.count(")"):
            continue
        pieces.append((start, text[start : m.start()]))
        start = m.end()
    return [*pieces, (start, text[start:])]


def _retold_otherwise(
    fact: Fact, claim: Analysed, statement: tuple[int, Analysed | None]
) -> Fact | None:
    """The value of ``statement`` (see :func:`_home_statement`) that the claim replaces by
    ``fact`` (stated elsewhere in its sentence), or None: the claim copies the statement with
    that value swapped, states a bound of the same side in other words, or retells it in its own
    words where the statement gives no value of ``fact``'s measure the claim leaves out but that
    one."""
    _, part = statement
    if part is None or fact_in(fact, part.facts, part.norms, part.stems):
        return None
    ops = _align(claim, part)
    n_claim = max(len(claim.content) + len(claim.facts), 1)
    mine = _content_stems(claim)
    shared = len(mine & part.stems) + sum(
        fact_in(f, part.facts, part.norms, part.stems) for f in claim.facts
    )
    close = shared / n_claim >= 0.6
    other = conflict(fact, claim, part, ops, close, claim.facts)
    if other is None:
        return None
    if swapped(fact, other, claim, part, ops) or bounded_alike(fact, claim, other, part):
        # (a bound in other words is still the bound: "can last up to 48 hours" of "may last
        # at most 24 hours; ... within 48 hours")
        return other
    unsaid = [
        g
        for g in part.facts
        if g.kind == other.kind
        and g.unit == other.unit
        and not fact_in(g, claim.facts, claim.norms, claim.stems)
    ]
    if close and unsaid == [other]:
        # the statement the claim retells in its own words gives one value of this measure the
        # claim does not, and not the claim's ("lead to a 14-day suspension" of "...; after
        # three violations within 30 days, the account is suspended for 7 days")
        return other
    return None


def _statements(
    fact: Fact, claim: Analysed, sents: Sequence[tuple[int, Analysed]]
) -> tuple[list[tuple[int, Fact]], list[tuple[int, Fact]]]:
    """The statements in ``sents`` of ``fact``'s value, and of the other values of its sort
    the claim does not give: ``(same, rivals)``, each ``(sentence index, value)``."""
    same: list[tuple[int, Fact]] = []
    rivals: list[tuple[int, Fact]] = []
    for k, e in sents:
        for g in e.facts:
            if not _one_sort(fact, claim, g, e):
                continue
            if fact_in(fact, [g], _NONE, _NONE):
                same.append((k, g))
            elif not fact_in(g, claim.facts, claim.norms, claim.stems):
                rivals.append((k, g))
    return same, rivals


def _slot_rival(
    fact: Fact,
    claim: Analysed,
    sents: Sequence[tuple[int, Analysed]],
    case: Sequence[Fact] = (),
    days: frozenset[int] = frozenset(),
    every: Sequence[tuple[int, Analysed]] | None = None,
    case_words: Collection[str] = frozenset(),
) -> tuple[int, Fact] | None:
    """The value the sources give for the slot the claim puts ``fact`` in, when it is another:
    ``(sentence index, its value)``.

    The sources state the claim's number, but of something else: "a minimum of 15 minutes paid
    per page" where the policy rounds up to the next 15 minutes, with a minimum of 30; "the
    rapid charger gets the 5.0 Ah down to 35 minutes" where 35 minutes is the standard
    charger's time for the 2.0 Ah battery and the rapid one's is 40. What a value is said of
    is read from the parse (:func:`~truthguard.refchecker.structure.value_contexts`): the words
    the claim ties to its value are weighed against the words each statement of a value of the
    same sort in ``sents`` is tied to; a rival of another value must share :data:`SLOT_MORE`
    more of them than every statement of the claim's own, and a third of them at least. A year
    dates an event, and the sources' other years date others: another year fills the slot only
    where it shares three of those words and the claim's own year none ("brought back to the
    valley in 1979" of "a first attempt to bring beavers back to the valley in 1968 failed,
    and none have been seen there since 1979"). The values of the user's own ``case`` (see
    :func:`_bounds_met`) say which item of a list the claim's case is in, and the ``days`` of
    the week the claim is about (:func:`case_days`) which statement: "£3 an hour on a
    Saturday" where the sources charge "£3 an hour on weekdays" and "£2.50 an hour at
    weekends" puts the weekday price in the Saturday slot. A rival said of the claim's case by
    its days or its bound may stand in any sentence of ``every`` (default: ``sents``). A
    "non-" kind tells two statements apart by the prefix alone ("Members pay £4",
    "Non-members pay £7"), the asker's own where the claim names neither (``case_words``,
    :func:`own_words`: "I'm not a member")."""
    if fact.kind != "number" or ordinal(fact):
        return None
    dated = year(fact) or day_of_date(fact, claim.facts)
    same, rivals = _statements(fact, claim, sents)
    if not same:
        return None
    texts = dict(every or sents)
    if days and all(_on_days(days, texts[k], g) is False for k, g in same):
        # every statement of the claim's value is said of other days than the claim's: a
        # value of its sort said of the claim's days fills its slot
        on = [(k, g) for k, g in rivals if _on_days(days, texts[k], g)]
        if on:
            return on[0]
    if all(_outside_bound(claim, fact, texts[k], g, case) for k, g in same):
        # every statement of the claim's value bounds a case the claim's is not in ("£19 for
        # dogs under 25 kg" of a dog of 30 kg): a rival whose bound takes the claim's case in
        # is the value of its slot ("£23 for dogs of 25 kg and over"), in the same list or
        # not, and in any passage where it is the other side of the same threshold
        near = {k for k, _ in sents}
        thresholds = frozenset().union(*(_item_bounds(texts[k], g) for k, g in same))
        cased = rivals if every is None else _statements(fact, claim, every)[1]
        for k, g in cased:
            if (k in near or _item_bounds(texts[k], g) & thresholds) and _within_bound(
                claim, fact, texts[k], g, case
            ):
                return k, g
    if not rivals:
        return None
    mine = [f for f in claim.facts if f is fact or _one_sort(fact, claim, f, claim)]
    contexts = value_contexts(claim.text, [(f.start, f.end) for f in mine])
    # only the words the claim ties to this value alone say which slot it fills ("needs 35
    # minutes and the 5.0 Ah battery 90 minutes" may be parsed with every word for both)
    at = mine.index(fact)
    said = contexts[at].difference(*(c for k, c in enumerate(contexts) if k != at))
    if not said:
        return None
    by_sentence = {
        k: [g for g in texts[k].facts if _one_sort(fact, claim, g, texts[k])]
        for k in dict.fromkeys(k for k, _ in same + rivals)
    }
    shared: dict[tuple[int, int], int] = {}
    tied: dict[tuple[int, int], frozenset[str]] = {}
    for k, facts in by_sentence.items():
        for g, words in zip(
            facts, value_contexts(texts[k].text, [(g.start, g.end) for g in facts]), strict=True
        ):
            shared[k, g.start] = len(said & words)
            tied[k, g.start] = words
    non = _non_kinds(claim.text)
    # (a "non-" kind the asker says they are, where the claim names neither side: "I'm not a
    # member", "You'll pay £4 a session")
    non |= {w[4:] for w in case_words if w.startswith("non-") and w[4:] not in claim.stems}
    for kind in sorted(non.union(*(_non_kinds(texts[j].text) for j, _ in same))):
        # the claim says its value of one side of a "non-" kind ("a non-member pays £4", "a
        # member pays £7"), every statement of it the other side ("Members pay £4"), and one
        # rival the claim's side, with as many of the claim's words less one ("Non-members pay
        # £7"): the prefix is no paraphrase's word
        mine_non = kind in non
        if not (mine_non or kind in claim.stems) or any(
            (kind in _non_kinds(texts[j].text)) == mine_non for j, _ in same
        ):
            continue
        own_n = max(len(said & tied[j, g.start]) for j, g in same)
        on_side = [
            (j, g)
            for j, g in rivals
            if (kind in _non_kinds(texts[j].text)) == mine_non
            and kind in texts[j].stems
            and len(said & tied[j, g.start]) >= max(own_n - 1, 1)
        ]
        if len(on_side) == 1:
            return on_side[0]
    own = max(shared[k, g.start] for k, g in same)
    k, rival = max(rivals, key=lambda r: shared[r[0], r[1].start])
    more = shared[k, rival.start]
    lead = _lead(claim, fact)
    if (
        lead is not None
        and not dated
        and not _describes(claim, fact)
        and all(_describes(texts[j], g) or not shared[j, g.start] for j, g in same)
    ):
        # the sources state the claim's value only of other things, as what describes a thing
        # ("on the 24-hour line") or with none of the claim's words, and the claim's bound
        # ("within 24 hours") opens one value's slot that shares two of them ("within 4 hours
        # of discovering the loss", reported to the service desk): that value is the slot's
        bounded = [
            (j, g)
            for j, g in rivals
            if _lead(texts[j], g) == lead and shared[j, g.start] >= SLOT_MORE
        ]
        if len(bounded) == 1:
            return bounded[0]
    anchor = _anchored(claim, fact)
    if anchor is not None and not dated and all(_anchored(texts[j], g) != anchor for j, g in same):
        # the claim's bound counts from an event no statement of its value counts from, and
        # one value of the sort does ("within 2 hours of collection" where the sources give
        # "within 60 minutes of collection" and "within 2 hours of centrifugation")
        from_it = [(j, g) for j, g in rivals if _anchored(texts[j], g) == anchor]
        if len(from_it) == 1:
            return from_it[0]
    if dated and (own or more < 3):
        return None
    if own <= 1 and more - own >= SLOT_MORE and more * 3 >= len(said):
        if _stated_beside(fact, claim, same, (k, rival), texts):
            return None  # the claim's other value is stated with its own, not with the rival
        if _outside_bound(claim, fact, texts[k], rival, case):
            return None  # the rival's statement bounds a case the claim's own is not in
        lead = _lead(claim, fact)
        if (
            lead is not None
            and _lead(texts[k], rival) != lead
            and any(_lead(texts[j], g) == lead for j, g in same)
        ):
            # the word that opens the claim's value is the one before its own statement, not
            # before the rival ("comes back within 10 days" of "return within 10 days", not of
            # "equal to five weeks' rent"): the words around it are a paraphrase's
            return None
        return k, rival
    return None


_NON = re.compile(r"\bnon-?([a-z]+)", re.IGNORECASE)


def _non_kinds(text: str) -> frozenset[str]:
    """The stems of the words ``text`` puts after "non-" ("member" of "Non-members pay £7")."""
    return frozenset(stem(fold(m.group(1))) for m in _NON.finditer(text))


def _nearest(values: Sequence[Fact], f: Fact) -> Fact | None:
    """The one of ``values`` nearest ``f`` in their text, by characters between them."""
    return min(
        values,
        key=lambda g: g.start - f.end if g.start >= f.end else f.start - g.end,
        default=None,
    )


def _stated_beside(
    fact: Fact,
    claim: Analysed,
    same: Sequence[tuple[int, Fact]],
    rival: tuple[int, Fact],
    texts: dict[int, Analysed],
) -> bool:
    """Whether a value the claim states with ``fact`` is stated, in the sources, with a
    statement of ``fact``'s own value and not with the rival: "away longer than ten hours you
    can claim up to £25" of "up to £10 for meals that day, rising to £25 if you are away for
    more than 10 hours", where the words around the claim's £25 are those of the £10.

    A number is stated with the value of ``fact``'s sort nearest it in its text (the claim's
    ten hours with its £25, the sentence's 10 hours with its £25, its 5 hours with its £10)."""
    mine = [f for f in claim.facts if f is fact or _one_sort(fact, claim, f, claim)]
    beside = [
        h
        for h in claim.facts
        if h.kind == "number" and all(h is not f for f in mine) and _nearest(mine, h) is fact
    ]

    def with_value(k: int, g: Fact) -> bool:
        e = texts[k]
        sort = [x for x in e.facts if x is g or _one_sort(fact, claim, x, e)]
        return any(
            all(x is not y for y in sort)
            and fact_in(h, [x], _NONE, _NONE)
            and _nearest(sort, x) is g
            for h in beside
            for x in e.facts
        )

    return bool(beside) and any(with_value(k, g) for k, g in same) and not with_value(*rival)


_AGAINST = re.compile(
    r"\b(?:versus|vs\.?|compared\s+(?:with|to)|against|as\s+opposed\s+to)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
"""Words that set a second value against a first, the subject's: "156 mAh/g versus 148"."""
_CLAUSE_END = re.compile(r";|\.(?:\s|$)|,\s*(?:and|but|while|whereas)\b")


def _set_against(
    fact: Fact, claim: Analysed, sents: Sequence[tuple[int, Analysed]]
) -> tuple[int, Fact] | None:
    """The value a sentence gives where the claim sets ``fact`` against a later value of its
    own ("the higher capacity, 156 mAh/g versus 148 mAh/g") and the sentence sets the two the
    other way round ("it delivers 148 mAh/g ..., compared with 156 mAh/g for the undoped
    material"): ``(sentence index, the value the sentence gives first)``.

    The first of two values set against each other is the subject's, the second the other
    side's. A claim naming a word of the other side the sentence gives ("for the undoped
    material") before its first value speaks of that side, and a sentence stating the two in
    the claim's order holds the claim."""
    if fact.kind != "number":
        return None
    later = [g for g in claim.facts if g.start > fact.end and _one_sort(fact, claim, g, claim)]
    if not later:
        return None
    other = later[0]
    between = claim.text[fact.end : other.start]
    if len(between.split()) > 4 or not _AGAINST.search(between):
        return None
    found = None
    for k, e in sents:
        once = _each_once(fact, other, claim, e)
        if once is None:
            continue
        mine, (second, first) = once
        if first.start > second.start:
            return None  # set against each other as the claim sets them
        gap = e.text[first.end : second.start]
        if _CLAUSE_END.search(gap) or any(first.start < g.start < second.start for g in mine):
            continue
        if not _AGAINST.search(gap):
            continue
        cut = _CLAUSE_END.search(e.text, second.end)
        stop = cut.start() if cut else len(e.text)
        side = {stem(e.tokens[i].norm) for i in e.content if second.end <= e.tokens[i].start < stop}
        if side & {
            stem(claim.tokens[i].norm) for i in claim.content if claim.tokens[i].end <= fact.start
        }:
            return None  # the claim speaks of the other side
        found = found or (k, first)
    return found


def _paired(
    fact: Fact, claim: Analysed, sents: Sequence[tuple[int, Analysed]]
) -> tuple[int, Fact] | None:
    """The value a list pairs with the claim's other value, where the claim pairs ``fact`` with
    it and the list pairs ``fact`` with another: ``(sentence index, that value)``.

    A list whose items each pair a value of one unit with one of another ("6% in year 1, 4%
    in year 2 and 2% in year 3") says which goes with which; "4% in the third year" states
    both values, each of another item. The claim's pair is ``fact`` and the one value of
    another unit in its own item; each of the two must stand in one item of the list only."""
    if fact.kind != "number" or fact.unit is None or ordinal(fact) or year(fact):
        return None
    spans = _items(claim, [fact])
    if spans is None:
        return None
    lo, hi = spans[0]
    partners = [
        g
        for g in claim.facts
        if g.kind == "number" and g.unit not in (None, fact.unit) and lo <= g.start < hi
    ]
    if len(partners) != 1:
        return None
    other = partners[0]
    for k, sent in sents:
        mine = [g for g in sent.facts if g.kind == "number" and g.unit == fact.unit]
        theirs = [g for g in sent.facts if g.kind == "number" and g.unit == other.unit]
        if len(mine) < 2 or len(theirs) < 2:
            continue
        items = _items(sent, mine)
        if items is None:
            continue
        # a value before or after the list pairs with nothing ("above the 10%: 5% in year 1,
        # 4% in year 2 ..."): the list is the rest
        alone = [not any(a <= g.start < b for g in theirs) for a, b in items]
        first = alone.index(False) if False in alone else len(alone)
        last = len(alone) - alone[::-1].index(False) if False in alone else 0
        if (first, last) != (0, len(mine)):
            mine = mine[first:last]
            items = _items(sent, mine) if len(mine) >= 2 else None
            if items is None:
                continue
        pairs = []
        for m, (a, b) in zip(mine, items, strict=True):
            inside = [g for g in theirs if a <= g.start < b]
            if len(inside) != 1:
                break
            pairs.append((m, inside[0]))
        else:
            with_mine = [p for m, p in pairs if m.value == fact.value]
            with_other = [m for m, p in pairs if p.value == other.value]
            if (
                len(with_mine) == 1
                and len(with_other) == 1
                and with_mine[0].value != other.value
                and with_other[0].value != fact.value
            ):
                return k, with_other[0]
    return None


_ONLY_BEFORE = re.compile(r"\bonly\b(?:\s+[\w'-]+){0,3}\s+$", re.IGNORECASE)
""""Only" up to three words before a value ("can *only* go on the 09:15")."""
_LIST_JOIN = re.compile(r"^\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|&\s*)$", re.IGNORECASE)
"""What stands between two items of a list ("09:15 *and* 16:40", "A*, *B")."""


def _only_part(
    fact: Fact, claim: Analysed, sents: Sequence[tuple[int, Analysed]], context: str | None = None
) -> tuple[int, Fact] | None:
    """An item of a list the sources give that the claim's "only" leaves out: ``(sentence
    index, that item)``. "Coaches can only go on the 09:15" where the timetable lists "the
    09:15 and 16:40 ferries" says the 16:40 is not for them. The claim's value stands right
    after "only" (three words at most between) and the sentence lists it with another value
    of the same sort that neither the claim nor the answer sentence it was cut from,
    ``context``, states ("can only go on the 09:15" of "can only go on the 09:15 and 16:40
    ferries"); where a sentence says "only" of the value itself, the claim says what the
    sources say ("Wool is only sold in Leeds" beside "shops in Leeds and York")."""
    if fact.kind not in ("number", "name") or not _ONLY_BEFORE.search(claim.text[: fact.start]):
        return None
    named = [*claim.facts, *(analyse(context).facts if context else ())]
    found = None
    for k, e in sents:
        items = [g for g in e.facts if g.kind == fact.kind and g.unit == fact.unit]
        at = next((j for j, g in enumerate(items) if fact_in(fact, [g], _NONE, _NONE)), None)
        if at is None:
            continue
        # the run of items joined to it as one list
        lo = hi = at
        while lo > 0 and _LIST_JOIN.match(e.text[items[lo - 1].end : items[lo].start]):
            lo -= 1
        while hi + 1 < len(items) and _LIST_JOIN.match(e.text[items[hi].end : items[hi + 1].start]):
            hi += 1
        if lo == hi and _ONLY_BEFORE.search(e.text[: items[at].start]):
            return None  # the sources say "only" of it alone themselves
        if BETWEEN.search(e.text[: items[lo].start]):
            continue  # "between 42 and 49 days" is a range, not a list of its two ends
        left_out = [
            g
            for g in items[lo : hi + 1]
            if g is not items[at] and not fact_in(g, named, _NONE, _NONE)
        ]
        if left_out and found is None:
            found = (k, left_out[0])
    return found


NEIGHBOURS = 3
"""How many words each side of a value stand for it in :func:`_exchanged` (its nearest content
words up to the next value of its sort or a semicolon)."""


_RANGE_SIGN = re.compile(r"\s*[-–—]\s*|\s+to\s+")
"""What joins the two ends of a range of numbers."""


def _neighbours(text: Analysed, values: Sequence[Fact]) -> dict[int, tuple[set[str], set[str]]]:
    """For each of ``values`` (by its start), the stems of the :data:`NEIGHBOURS` content words
    (and numbers) nearest it before and after, within the stretch between it and the values of
    its sort on either side, not past a semicolon."""
    spans = sorted((f.start, f.end) for f in values)
    # (a verb that only relates, "180 guests standing", and a name, "on the Standard plan",
    # tell the values apart here)
    content = set(text.content) | {k for k, t in enumerate(text.tokens) if t.norm in LIGHT_VERBS}
    content |= {
        k
        for f in text.facts
        if f.kind in ("name", "title")
        for k, t in enumerate(text.tokens)
        if f.start <= t.start < f.end
    }
    words = []
    toks = text.tokens
    k = 0
    while k < len(toks):
        t = toks[k]
        if k in content:
            words.append((t.start, stem(t.norm)))
        elif t.norm[:1].isdigit():
            # the two ends of a range are one value ("aged 25-45", "25 to 45"): its end is not
            # the number of a bound ("over 45")
            step = 2 if k + 2 < len(toks) and toks[k + 1].norm == "to" else 1
            u = toks[k + step] if k + step < len(toks) else None
            if (
                u is not None
                and u.norm[:1].isdigit()
                and _RANGE_SIGN.fullmatch(text.text[t.end : u.start])
            ):
                words.append((t.start, f"{t.norm}-{u.norm}"))
                k += step + 1
                continue
            words.append((t.start, t.norm))
        k += 1
    # the unit right after a value is the value's own ("30 *days*", "16 *min*"), no neighbour
    for f in values:
        first = next((i for i, (at, _) in enumerate(words) if at >= f.end), None)
        if first is not None and f.unit is not None:
            w = words[first][1]
            if w == stem(fold(str(f.unit))) or unit_of(w) == f.unit:
                del words[first]
    out: dict[int, tuple[set[str], set[str]]] = {}
    for f in values:
        lo = max([e for s, e in spans if e <= f.start] + [text.text.rfind(";", 0, f.start) + 1])
        semi = text.text.find(";", f.end)
        hi = min([s for s, _ in spans if s >= f.end] + [semi if semi >= 0 else len(text.text)])
        before = [w for at, w in words if lo <= at < f.start]
        after = [w for at, w in words if f.end <= at < hi]
        out[f.start] = (set(before[::-1][:NEIGHBOURS]), set(after[:NEIGHBOURS]))
    return out


def _shortened(fact: Fact, claim: Analysed, sent: Analysed) -> bool:
    """Whether the claim's one-word name ``fact`` is a short form of a longer word of the same
    name in ``sent``, the name's other word beside both ("Jon Walters" / "Jonathan Walters",
    "West Brom" / "West Bromwich", "Man United" / "Manchester United"). The short form is at
    most three fifths of the long one: "Robert" is no short form of "Roberta"."""
    at = tokens_of(claim, fact.start, fact.end)
    if len(at) != 1:
        return False
    i, toks, theirs = at[0], claim.tokens, sent.tokens
    word = toks[i].text
    if len(word) < 3 or not word.isalpha() or not word[0].isupper():
        return False

    def beside(j: int, step: int) -> bool:
        a, b = i + step, j + step
        return (
            0 <= a < len(toks)
            and 0 <= b < len(theirs)
            and toks[a].text == theirs[b].text
            and toks[a].text[:1].isupper()
        )

    return any(
        t.text[:1].isupper()
        and _short_form(word.casefold(), t.text.casefold())
        and (beside(j, 1) or beside(j, -1))
        for j, t in enumerate(theirs)
    )


def subject_of_another(claim_text: str, sentences: Sequence[tuple[int, int, str]]) -> list[Issue]:
    """The claim's named subject, when the sources state what the claim says of it only of
    another name: a sentence whose named subject (or the one a pronoun opening it stands for)
    is another name, and which never names the claim's, states the same relation (the claim's
    main verb, or what its linking verb links to, see
    :func:`~truthguard.refchecker.structure.relation_words`) and at least two of the words and
    names the claim says of its subject, two thirds of them at least, and no sentence naming
    the claim's subject states as many. "Queen Latifah was a regular on the Oprah Winfrey
    Network" where the sources say of Tiffany Haddish that she had a regular role on the OWN
    series, and name Queen Latifah only in the film's cast. A name the sources define as a term
    ("the Client") is the one it stands for. The checker reads it only of an answer of one
    claim: a longer answer's clauses lean on each other's subjects."""
    who = doer_name(claim_text)
    relation = relation_words(claim_text)
    if who is None or not relation:
        return []
    claim = analyse(claim_text)
    said = _said_words(claim) - who.words
    if len(said) < 2:
        return []
    aliases = _defined_terms(sentences)
    own, other = 0, None
    for k, (_, _, text) in enumerate(sentences):
        sent = analyse(text)
        hits = len(said & _said_words(sent))
        if not hits:
            continue
        subject, at = subject_name(text), k
        opening = _ANAPHOR.match(text)
        if subject is None and opening is not None and not opening.group("noun"):
            subject, at = _named_before(sentences, k)  # (a pronoun stands for it)
        if sent.norms & who.words or (
            subject is not None
            and (
                _share_a_word(subject.words, who.words)
                or _one_party(subject.words, who.words, aliases)
            )
        ):
            own = max(own, hits)
        elif (
            subject is not None
            and subject.name
            and not subject.words & said  # (a sentence about what the claim's subject did)
            and hits >= 2
            and 3 * hits >= 2 * len(said)
            and (other is None or hits > other[0])
            and any(_has_verb(sent, w) or stem(w) in sent.stems for w in relation)
        ):
            # (the same relation: "stars an actress born in Cork" says nothing of her)
            other = (hits, at, subject)
    if other is None or own >= other[0]:
        return []
    _, at, subject = other
    r, o, text = sentences[at]
    ev = (r, o + subject.start, o + subject.end, text[subject.start : subject.end])
    word = claim_text[who.start : who.end]
    return [Issue("name", "swapped", who.start, who.end, word, ev)]


def _said_words(text: Analysed) -> set[str]:
    """The stems of ``text``'s content words and the words of its names."""
    words = _content_stems(text)
    for f in text.facts:
        if f.kind == "name":
            words |= {t.norm for t in text.tokens if f.start <= t.start < f.end}
    return words


def _short_form(short: str, word: str) -> bool:
    """Whether ``short`` is a short form of ``word`` as :func:`_shortened` reads one."""
    return len(short) >= 3 and word.startswith(short) and len(short) <= 0.6 * len(word)


def _share_a_word(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two names share a word, or a short form of one ("brom" / "bromwich")."""
    return bool(a & b) or any(_short_form(x, y) or _short_form(y, x) for x in a for y in b)


def _abbreviates(name: str, sent: Analysed) -> bool:
    """Whether ``name``, in capitals, is the initials of consecutive words of ``sent`` in any
    case ("TOIL" of "time off in lieu", "MFA" of "multi-factor authentication": the parts of a
    hyphenated word count). Initials written with stops ("U.S.", "U.K.") may be two, of
    consecutive capitalised words ("United States")."""
    if re.fullmatch(r"(?:[A-Z]\.){2,6}", name):
        letters, toks = name.replace(".", ""), sent.tokens
        n = len(letters)
        return any(
            "".join(t.text[:1] for t in toks[i : i + n]) == letters
            and all(t.text[1:2].islower() for t in toks[i : i + n])
            for i in range(len(toks) - n + 1)
        )
    letters = name.removesuffix("s") if name[:-1].isupper() else name
    if not (3 <= len(letters) <= 6 and letters.isalpha() and letters.isupper()):
        return False
    initials = "".join(
        part[:1] for t in sent.tokens for part in t.norm.split("-") if part[:1].isalpha()
    )
    return letters.casefold() in initials


def _each_once(
    fact: Fact,
    other: Fact,
    claim: Analysed,
    e: Analysed,
    sort: Callable[[Fact, Analysed, Fact, Analysed], bool] = _one_sort,
) -> tuple[list[Fact], tuple[Fact, Fact]] | None:
    """The values of ``e`` of ``fact``'s ``sort``, and the one statement each of ``fact``'s value
    and ``other``'s among them; None unless ``e`` states each exactly once."""
    mine = [g for g in e.facts if sort(fact, claim, g, e)]
    here = [g for g in mine if fact_in(fact, [g], _NONE, _NONE)]
    there = [g for g in mine if fact_in(other, [g], _NONE, _NONE)]
    if len(here) != 1 or len(there) != 1:
        return None
    return mine, (here[0], there[0])


def _swap_sort(a: Fact, in_a: Analysed, b: Fact, in_b: Analysed) -> bool:
    """Whether two values could trade places (:func:`_one_sort`), or ``a`` is a bare number
    that counts no noun the parse finds ("180 seated or 120 standing") and ``b`` is a bare
    number too: what each holds is read from the words beside it."""
    if _one_sort(a, in_a, b, in_b):
        return True
    return (
        a.kind == b.kind == "number"
        and a.unit is None
        and b.unit is None
        and not (year(a) or year(b) or ordinal(a) or ordinal(b))
        and not (day_of_date(a, in_a.facts) or day_of_date(b, in_b.facts))
        and _noun_of(in_a.text, a) is None
    )


def _exchanged(
    fact: Fact, claim: Analysed, sents: Sequence[tuple[int, Analysed]]
) -> tuple[int, Fact] | None:
    """The value the sources give in the place the claim puts ``fact``, where the claim
    exchanges it with another value of its own: ``(sentence index, that value)``.

    A sentence states both values once each ("£4 when booked online, or £6 if paid at the
    counter"); the claim keeps each value's words where they stand but puts the values the
    other way round ("£6 when booked online, or £4 at the counter"). Each value is known by
    the few words beside it, on one side (:func:`_neighbours`): both of the claim's values
    must share more of them with the other's statement than with their own, and the other
    side must not pair them as the sentence does, since a claim reordered whole moves each
    value with its words."""
    if fact.kind != "number" or not _swap_sort(fact, claim, fact, claim):
        return None  # a year inside a date, an ordinal: no slot of its own to exchange
    ours: dict[int, tuple[set[str], set[str]]] | None = None
    for other in claim.facts:
        if (
            other is fact
            or other.kind != "number"
            or fact_in(fact, [other], _NONE, _NONE)
            or not _swap_sort(fact, claim, other, claim)
        ):
            continue
        for k, e in sents:
            once = _each_once(fact, other, claim, e, _swap_sort)
            if once is None:
                continue
            mine, (here, there) = once
            if ours is None:
                ours = _neighbours(
                    claim, [f for f in claim.facts if _swap_sort(fact, claim, f, claim)]
                )
            theirs = _neighbours(e, mine)
            counts = [
                (
                    len(ours[fact.start][side] & theirs[there.start][side]),
                    len(ours[fact.start][side] & theirs[here.start][side]),
                    len(ours[other.start][side] & theirs[here.start][side]),
                    len(ours[other.start][side] & theirs[there.start][side]),
                )
                for side in (0, 1)
            ]
            for side in (0, 1):
                a, b, c, d = counts[side]
                w, x, y, z = counts[1 - side]
                if a > b and c > d and not (x > w and z > y):
                    return k, there
    return None


def _name_runs(a: Analysed) -> list[list[Fact]]:
    """The names of ``a``, each as the run of its words' facts ("Fenwick", "Records")."""
    runs: list[list[Fact]] = []
    for f in a.facts:
        if f.kind != "name":
            continue
        if runs and one_name(a, runs[-1][-1], f):
            runs[-1].append(f)
        else:
            runs.append([f])
    return runs


def _variant(a: str, b: str) -> bool:
    """Whether two words of names are one, one begins with the other ("CorelDRAW" and
    "Corel's": a firm's name in its product's; "B." an initial of "Bi"), or one is the other
    misspelt ("Micheal", "Instuments")."""
    a, b = a.removesuffix("'s").rstrip("."), b.removesuffix("'s").rstrip(".")
    return (
        a.startswith(b)
        or b.startswith(a)
        or difflib.SequenceMatcher(None, a, b).ratio() >= _MISSPELT
    )


_MISSPELT = 0.8
"""How alike two words of names must be (difflib's ratio) to be one word misspelt."""


_HYPHENS = re.compile(r"[\s\-‐–]+")
"""What joins the words of a name: spaces or hyphens ("Easy Access" / "Easy-Access")."""


def _renamed(
    claim: Analysed, sents: Sequence[tuple[int, Analysed]], texts: Collection[str]
) -> list[tuple[Fact, int, Fact]]:
    """The words of the claim's names that the sources give otherwise: ``(the claim's word,
    sentence index, the sources' word)``.

    A name of several words must be stated whole somewhere in ``texts`` (its words apart or
    joined by hyphens alike; a name the claim writes with a hyphen is not read): its words
    each stated apart ("Hollin" of "Hollin Studios", "Records" of "Fenwick Records") name
    nothing the sources name. Where a sentence about the claim names a thing of the same kind
    and shape (as many words, the last the same) with other words, or the same words in
    another order ("Castle Ray" of "Ray Castle"), the claim has put another's name in its
    place."""
    out: list[tuple[Fact, int, Fact]] = []
    folded: list[str] | None = None
    for run in _name_runs(claim):
        words = [fold(f.text) for f in run]
        if len(run) < 2 or any(_HYPHENS.search(w) for w in words):
            continue
        if folded is None:
            folded = [fold(t) for t in texts]
        # (initials with or without their last period: "B.B King" is "B.B. King")
        parts = [_or_longer(w.rstrip(".")) + (r"\.?" if "." in w else "") for w in words]
        whole = re.compile(r"\b" + _HYPHENS.pattern.join(parts) + r"(?!\w)")
        if any(whole.search(t) for t in folded):
            continue
        found = None
        for k, e in sents:
            for other in _name_runs(e):
                theirs = [fold(f.text) for f in other]
                if len(theirs) != len(words) or theirs == words:
                    continue
                if theirs[-1] == words[-1]:
                    differ = [
                        (f, g)
                        for f, g, a, b in zip(run, other, words, theirs, strict=True)
                        if not _variant(a, b)
                    ]
                    if differ and all(fold(f.text) not in theirs for f, _ in differ):
                        found = (differ[0][0], k, differ[0][1])
                elif sorted(theirs) == sorted(words):
                    found = (run[0], k, other[0])
                if found is not None:
                    break
            if found is not None:
                break
        if found is not None:
            out.append(found)
    return out


def _or_longer(word: str) -> str:
    """A pattern for a word of a name, or the longer word it is a short form of, as
    :func:`_shortened` reads one ("brom" of "bromwich", not "robert" of "roberta")."""
    if len(word) < 3 or not word.isalpha():
        return re.escape(word)
    return re.escape(word) + rf"(?:\w{{{math.ceil(len(word) * 2 / 3)},}})?"


_NEXT_TO = 3
"""How many words either side of a name are read with it in :func:`_retitled`."""


def _retitled(
    claim: Analysed, sents: Sequence[tuple[int, Analysed]]
) -> list[tuple[Fact, int, Fact]]:
    """The names the claim gives a post (:func:`~truthguard.refchecker.structure.titles`:
    "the current head coach is Tomas Reyes") where a sentence about it gives that post to
    another name and none gives it to the claim's: ``(the claim's name word, sentence index,
    the other name's word)`` ("the current head coach, Lena Brandt, took over from Tomas
    Reyes")."""

    def held(a: Analysed) -> list[tuple[str, list[Fact], set[str]]]:
        runs = _name_runs(a)
        out = []
        for post, at, lo, hi in titles(a.text):
            run = next((r for r in runs if r[0].start <= at < r[-1].end), None)
            if run is not None:
                # the name's phrase, and the words next to the name
                at_run = [
                    k for k, t in enumerate(a.tokens) if run[0].start <= t.start < run[-1].end
                ]
                first, last = min(at_run, default=0), max(at_run, default=0)
                phrase = {
                    fold(t.text)
                    for k, t in enumerate(a.tokens)
                    if lo <= t.start < hi or first - _NEXT_TO <= k <= last + _NEXT_TO
                }
                out.append((stem(post), run, phrase))
        return out

    found = []
    theirs = [(k, post, run, phrase) for k, e in sents for post, run, phrase in held(e)]
    for post, run, _ in held(claim):
        mine = {fold(f.text) for f in run}
        # (the claim's name within the other's phrase or next to it is a part of it:
        # "Wabash, Indiana")
        if any(p == post and mine & phrase for _, p, _, phrase in theirs):
            continue
        other = next((x for x in theirs if x[1] == post), None)
        if other is not None:
            found.append((run[-1], other[0], other[2][-1]))
    return found


def _bounds_met(
    claim: Analysed, fact: Fact, text: Analysed, value: Fact, case: Sequence[Fact] = ()
) -> list[bool]:
    """For each bound the list item of ``text`` stating ``value`` sets on a value of a unit the
    claim also states beside ``fact`` (another value of that unit), whether the claim's is on
    its side: "£19 for dogs under 25 kg" against "a dog of 30 kg", [False]. A claim that
    states no value of the bound's unit and speaks to the user ("for your spaniel") or works
    with another of their figures ("6 months at £19", asked about 6 months) is read with the
    values of that unit the user gave of their own ``case`` ("My spaniel weighs 20 kg"); one
    that does neither ("Small dogs board for £18 a night") may state a rule for others.
    A sentence stating one value of its unit is one item, bound and all ("Larger dogs of 25 kg
    and over pay £23 a month")."""
    met = []
    mine = [g for g in claim.facts if g is not fact and g.kind == "number"]
    for b, found in _item_bounds_of(text, value):
        theirs = mine
        if not any(g.unit == b.unit for g in mine) and _of_users_case(claim, fact, case):
            theirs = [g for g in case if g.kind == "number"]
        for g in theirs:
            if g.unit != b.unit:
                continue
            if isinstance(g.value, (int, float)) and g.value != b.value:
                met.append((found[0] == "below") == (g.value < b.value))
    return met


def case_days(claim: str, case_words: Collection[str] = frozenset()) -> frozenset[int]:
    """The days of the week a claim is about: those it names ("on a Saturday"), or where it
    names none, those the asker names of their own case (``case_words``, :func:`own_words`:
    "I want the hall on a Tuesday")."""
    return named_days(claim) or named_days(" ".join(sorted(case_words)))


def of_other_days(days: frozenset[int], text: str) -> bool:
    """Whether ``text`` is said only of other days of the week than ``days`` ("The car park
    charges £3 an hour on weekdays" of a Saturday): its values are no one's to work from."""
    theirs = day_condition(text) if days else frozenset()
    return bool(theirs) and days.isdisjoint(theirs)


def of_other_case(days: frozenset[int], case: Sequence[Fact], text: str) -> bool:
    """Whether ``text`` is said only of another case than the asker's: of other days of the
    week than ``days`` (:func:`of_other_days`), or within bounds every one of which leaves out
    the value of their unit the asker gave of their own ``case`` ("Dogs under 25 kg pay £19
    a month" of a 30 kg dog; an amount of money is no case of this kind). Its values are not
    the asker's to work from."""
    if of_other_days(days, text):
        return True
    # (not an amount of money: a threshold on an order or a cap on charges is met by the sums
    # an answer works out, "£45 and £30" over "free on orders over £60", not by one figure)
    theirs = [
        g
        for g in case
        if g.kind == "number"
        and g.unit
        and isinstance(g.value, (int, float))
        and measure_of(g) != "money"
    ]
    if not theirs:
        return False
    met = []
    for b in analyse(text).facts:
        side = bound_span(text, b.start, b.end) if b.kind == "number" and b.unit else None
        if side is None:
            continue
        met += [
            (side[0] == "below") == (g.value < b.value)  # type: ignore[operator]
            for g in theirs
            if g.unit == b.unit and g.value != b.value
        ]
    return bool(met) and not any(met)


_BETWEEN_DAYS = re.compile(r"\W*(?:(?:on|at)\s+)?$", re.IGNORECASE)
"""What may stand between a cut and the next mention of days in a list of them ("Saturdays
and Sundays", "weekdays or at weekends")."""


def _item_span(text: Analysed, value: Fact) -> tuple[int, int] | None:
    """The span of the list item of ``text`` stating ``value`` (:func:`_items`), the whole
    sentence where it states no other value of its unit (:func:`_alone`)."""
    spans = _items(text, [value])
    if spans is None:
        return None
    return (0, len(text.text)) if _alone(text, value) else spans[0]


def _alone(text: Analysed, value: Fact) -> bool:
    """Whether ``value`` is the one value of its unit ``text`` states: then the whole sentence
    says what case it is for ("Larger dogs of 25 kg and over pay £23 a month")."""
    return not any(
        g is not value and g.kind == "number" and g.unit == value.unit for g in text.facts
    )


def _value_days(text: Analysed, value: Fact) -> frozenset[int]:
    """The days of the week ``value`` is said of in ``text``: those its list item names ("£12
    an hour from Monday to Friday and £15 an hour on Saturdays and Sundays": a list of days
    is one item; an item before it with no value of its unit is its own, "open Mon-Fri, 8am to
    6pm"), or, where the sentence states no other value of its unit, those the sentence names
    ("At weekends the charge is £2.50 an hour"); none where the sentence names days only as
    dates (:func:`~truthguard.refchecker.derived.day_condition`)."""
    t = text.text
    said = day_spans(t)
    cuts = [
        m.start()
        for m in _ITEM_CUT.finditer(t)
        if not (
            any(not t[e : m.start()].strip() for _, e, _ in said)
            and any(_BETWEEN_DAYS.match(t[m.end() : b]) for b, _, _ in said if b >= m.end())
        )
    ]
    lo = max((c for c in cuts if c <= value.start), default=0)
    hi = min((c for c in cuts if c >= value.end), default=len(t))
    if not day_condition(t):
        return frozenset()  # (days named only as dates)
    days = named_days(t[lo:hi])
    before = max((c for c in cuts if c < lo), default=0)
    if not days and not any(
        g.kind == "number" and g.unit == value.unit and before <= g.start < lo for g in text.facts
    ):
        # an item with no value of the unit says the case of the next one's ("open Mon-Fri,
        # 8am to 6pm")
        days = named_days(t[before:hi])
    return named_days(t) if not days and _alone(text, value) else days


def _other_days(
    fact: Fact, claim: Analysed, evid: Sequence[Analysed], days: frozenset[int]
) -> tuple[int, int, int] | None:
    """Where every statement of ``fact``'s value in ``evid`` is said of other days of the week
    than the claim's ``days``, and no value of its sort is said of those: the first
    statement's sentence and the span of its days, ``(sentence index, start, end)``."""
    if not days or fact.kind != "number" or ordinal(fact):
        return None
    same, rivals = _statements(fact, claim, list(enumerate(evid)))
    if not same or any(_on_days(days, evid[k], g) is not False for k, g in same):
        return None
    if any(_on_days(days, evid[k], g) is not False for k, g in rivals):
        return None  # (a value said of the claim's days, or of none: the slot readings')
    k = same[0][0]
    spans = [(lo, hi) for lo, hi, said in day_spans(evid[k].text) if said.isdisjoint(days)]
    return (k, *spans[0]) if spans else None


def _other_bounds(
    fact: Fact, claim: Analysed, evid: Sequence[Analysed], case: Sequence[Fact]
) -> tuple[int, int, int] | None:
    """Where every statement of ``fact``'s value in ``evid`` is in a list item whose bounds
    leave out the user's own ``case`` (:func:`_case_outside`: "Dogs under 25 kg board for £19 a
    night" of a claim to the owner of a 30 kg dog), and no value of its sort is said within it:
    the first statement's sentence and the span of its bound, ``(sentence index, start, end)``."""
    if not case or fact.kind != "number" or ordinal(fact):
        return None
    if bound_span(claim.text, fact.start, fact.end) is not None:
        return None  # a bound of the claim's own
    same, rivals = _statements(fact, claim, list(enumerate(evid)))
    spans = [_case_outside(claim, fact, evid[k], g, case) for k, g in same]
    if not spans or any(span is None for span in spans):
        return None
    if any(_case_outside(claim, fact, evid[k], g, case) is None for k, g in rivals):
        return None  # (a value said within the user's case, or of no bound: the slot readings')
    k = same[0][0]
    return (k, *spans[0])  # type: ignore[misc]


def _case_outside(
    claim: Analysed, fact: Fact, text: Analysed, value: Fact, case: Sequence[Fact]
) -> tuple[int, int] | None:
    """The span of a bound of the list item of ``text`` stating ``value`` where every such
    bound leaves out the user's own figure of its unit (``case``: "under 25 kg" of a 30 kg dog;
    not a bound on money, which the sums an answer works out meet), for a claim that speaks to
    the user or works with another of their figures and states no value of the bound's unit
    itself; else None."""
    if not _of_users_case(claim, fact, case):
        return None
    met: list[bool] = []
    first = None
    for b, found in _item_bounds_of(text, value):
        if b.unit == value.unit or measure_of(b) == "money":
            continue
        if any(g.unit == b.unit for g in claim.facts):
            continue
        for g in case:
            if g.unit == b.unit and isinstance(g.value, float) and g.value != b.value:
                met.append((found[0] == "below") == (g.value < b.value))
                first = first or (found[1], found[2])
    return first if met and not any(met) else None


def _on_days(days: frozenset[int], text: Analysed, value: Fact) -> bool | None:
    """Whether ``value``, as ``text`` states it, is said of the ``days`` a claim is about:
    True where its days take them all in, False where they take in none of them ("£3 an
    hour on weekdays" of a Saturday), None where either names no day or they part overlap."""
    theirs = _value_days(text, value) if days else frozenset()
    if not theirs:
        return None
    if days <= theirs:
        return True
    return False if days.isdisjoint(theirs) else None


def _item_bounds(text: Analysed, value: Fact) -> frozenset[tuple[str, float]]:
    """The bounds (unit, value) of the list item of ``text`` stating ``value`` (the whole
    sentence where it states one value of its unit): "25 kg" of "Larger dogs of 25 kg and
    over pay £23 a month"."""
    return frozenset((str(b.unit), float(b.value)) for b, _ in _item_bounds_of(text, value))  # type: ignore[arg-type]


def _item_bounds_of(text: Analysed, value: Fact) -> list[tuple[Fact, tuple[str, int, int]]]:
    """The numbers with a unit that bound the list item of ``text`` stating ``value`` (the
    whole sentence where it states one value of its unit, :func:`_item_span`), each with its
    side and span (:func:`~truthguard.refchecker._numbers.bound_span`)."""
    span = _item_span(text, value)
    if span is None:
        return []
    out = []
    for b in text.facts:
        if b is value or b.kind != "number" or not b.unit or not span[0] <= b.start < span[1]:
            continue
        found = bound_span(text.text, b.start, b.end)
        if found is not None and isinstance(b.value, (int, float)):
            out.append((b, found))
    return out


def _of_users_case(claim: Analysed, fact: Fact, case: Sequence[Fact]) -> bool:
    """Whether the claim is read with the user's own ``case``: it speaks to the user ("for
    your spaniel") or works with another of their figures ("6 months at £19", asked about 6
    months); one that does neither ("Small dogs board for £18 a night") may state a rule for
    others."""
    return bool(_TO_USER.search(claim.text)) or any(
        g is not fact and g.kind == "number" and g.value == q.value and g.unit == q.unit
        for g in claim.facts
        for q in case
    )


_TO_USER = re.compile(r"\byour?\b", re.IGNORECASE)
"""A claim that speaks to the user ("for your spaniel"), whose case is the user's own."""


def _outside_bound(
    claim: Analysed, fact: Fact, text: Analysed, value: Fact, case: Sequence[Fact] = ()
) -> bool:
    """Whether the list item of ``text`` stating ``value`` bounds a case the claim's is not in:
    "£19 for dogs under 25 kg" is not the price for "a dog of 30 kg", whose words the parse
    may tie to it all the same (the next item, "£23 for dogs of 25 kg and over", is)."""
    return not all(_bounds_met(claim, fact, text, value, case))


def _within_bound(
    claim: Analysed, fact: Fact, text: Analysed, value: Fact, case: Sequence[Fact] = ()
) -> bool:
    """Whether the list item of ``text`` stating ``value`` bounds a case, and the claim's is
    in it ("£23 for dogs of 25 kg and over" for "a dog of 30 kg")."""
    met = _bounds_met(claim, fact, text, value, case)
    return bool(met) and all(met)


_ITEM_CUT = re.compile(r"[,;:]|\b(?:and|or|than|while|whereas|but)\b", re.IGNORECASE)
"""What ends one item of a list of values ("the Team plan 10 and the Business plan 40")."""


_CHANGE_TO = re.compile(r"\bfrom\b[^,;:]*?\s(to)\s+(?=[$£€¥]?\d)", re.IGNORECASE)
"""A change "from" one value "to" another, each with its own words ("from 3.6% in Q1 to 2.6%
in Q2"): "from" opens the first item and "to" the second; the words before "from" are said of
both ("Switching to Sundays would raise the rate from £18 to £24")."""


def _items(a: Analysed, values: Sequence[Fact]) -> list[tuple[int, int]] | None:
    """The span of the list item holding each of ``values`` (between two of
    :data:`_ITEM_CUT`, or the "from" and the "to" of a change from one value to another); None
    when an item holds two of them."""
    cuts = [
        0,
        *(m.start() for m in _ITEM_CUT.finditer(a.text)),
        *(cut for m in _CHANGE_TO.finditer(a.text) for cut in (m.start(), m.start(1))),
        len(a.text),
    ]
    spans = [
        (max(c for c in cuts if c <= v.start), min(c for c in cuts if c >= v.end)) for v in values
    ]
    return None if len(set(spans)) < len(spans) else spans


_BEFORE_VALUE = frozenset(("of", "a", "an", "the"))
"""Words between a value and the word that says which kind of it a list item gives."""


_FOR_WORDS = 3
"""How many words of a "for" phrase after a list item's noun say which kind it gives."""

_KIND_AFTER = frozenset(("for", "in", "on"))
"""Words that open a phrase after a list item's noun saying which kind it gives ("5 days for
damage", "18p per mile in a car")."""


def _kinds(
    a: Analysed, spans: Sequence[tuple[int, int]], values: Sequence[Fact] = ()
) -> list[frozenset[str]] | None:
    """For each item of a list, the words that say which kind of the thing every item names
    it speaks of: the word before that thing's name ("Team" of "the Team plan 10"), or before
    the value that stands there ("next" of "rounded up to the next 15 minutes", "minimum" of "a
    minimum of 30 minutes"), the number right after the name when it is not the item's value
    ("500" of "350Mbps on Fibre 500"), and the words of a phrase right after the name opened
    by :data:`_KIND_AFTER` ("damage" of "5 days for damage", "car" of "18p per mile in a car");
    a word every item says tells none apart. None when the items name no one thing."""
    tokens = [[t for t in a.tokens if lo <= t.start < hi] for lo, hi in spans]
    listed = [(v.start, v.end) for v in values]
    common = frozenset.intersection(
        *(frozenset(stem(t.norm) for t in ts if "NOUN" in lemmas(t.norm)) for ts in tokens)
    )
    common -= STOPWORDS
    if not common:
        # no thing every item names: a verb every item says, each of another subject, may
        # tell them apart by the word before it ("The employee pays 5% ... and the company
        # pays 6%")
        return _subject_kinds(tokens)
    out = []
    for ts in tokens:
        kinds = set()
        for j in range(1, len(ts)):
            if stem(ts[j].norm) not in common:
                continue
            if (
                j + 1 < len(ts)
                and ts[j + 1].norm.isdigit()
                and not any(lo <= ts[j + 1].start < hi for lo, hi in listed)
            ):
                # a number that names the kind after it ("Fibre 500", "Zone 2")
                kinds.add(ts[j + 1].norm)
            if j + 1 < len(ts) and ts[j + 1].norm in _KIND_AFTER:
                # or by what it is for or where, after it ("5 days for damage and 14 days for
                # late parcels")
                kinds.update(
                    stem(t.norm)
                    for t in ts[j + 2 : j + 2 + _FOR_WORDS]
                    if t.norm.isalpha() and t.norm not in STOPWORDS
                )
            k = j - 1
            if not ts[k].norm.isalpha():
                # the value itself: the word before it ("the next 15 minutes", "a minimum of
                # 30 minutes")
                k -= 1
                while k >= 0 and ts[k].norm in _BEFORE_VALUE:
                    k -= 1
            if (
                k >= 0
                and ts[k].norm.isalpha()
                and ts[k].norm not in STOPWORDS
                and ts[k].norm not in _LEADS  # "within 5 days" bounds a value, names no kind
            ):
                kinds.add(stem(ts[k].norm))
        out.append(kinds - common)
    shared = set.intersection(*out) if out else set()
    return [frozenset(k - shared) for k in out]


def _subject_kinds(tokens: Sequence[Sequence[Any]]) -> list[frozenset[str]] | None:
    """For each item of a list that names no one thing, the word right before a verb every
    item says (its subject: "employee" of "The employee pays 5%", "company" of "and the
    company pays 6%"); None when the items share no verb or some item has no such word."""
    verbs = frozenset.intersection(
        *(frozenset(stem(t.norm) for t in ts if "VERB" in lemmas(t.norm)) for ts in tokens)
    )
    verbs -= STOPWORDS
    if not verbs:
        return None
    out = []
    for ts in tokens:
        kinds = {
            stem(ts[j - 1].norm)
            for j in range(1, len(ts))
            if stem(ts[j].norm) in verbs
            and ts[j - 1].norm.isalpha()
            and ts[j - 1].norm not in STOPWORDS
        }
        if not kinds:
            return None
        out.append(kinds)
    shared = set.intersection(*out)
    out = [k - shared for k in out]
    return [frozenset(k) for k in out] if all(out) else None


def _in_code(a: Analysed, g: Fact) -> bool:
    """Whether a number is written onto letters ("SEV2", "Q4"): part of a code or name."""
    return g.start > 0 and a.text[g.start - 1].isalpha()


def _gapped(a: Analysed, g: Fact) -> bool:
    """Whether a bare number ends a list item with no noun of its own ("the Team plan 10 and
    ..."): it counts what the list's first value counts."""
    rest = a.text[g.end :]
    return _ITEM_CUT.match(rest.lstrip()) is not None or not rest.strip(" .")


def _listed_owner(
    fact: Fact,
    claim: Analysed,
    sents: Sequence[tuple[int, Analysed]],
    case_words: Collection[str] = frozenset(),
    every: Sequence[tuple[int, Analysed]] | None = None,
) -> tuple[int, Fact] | None:
    """The value a list of the sources gives the kind of thing the claim gives ``fact`` to,
    when it is another and the list gives ``fact``'s value to a kind the claim never names:
    "the Team plan ... up to 40 jobs" of "the Free plan allows at most 2 concurrent jobs, the
    Team plan 10 and the Business plan 40". A list is a sentence whose items, one value each,
    all name one thing ("plan"), each kind of it by the word before ("Free", "Team"); a value
    left without a noun of its own in such a list ("the Team plan 10") counts what the first
    one counts. Where the claim names no kind of the list, the asker's words (``case_words``)
    may: "seven months at £22" asked about "the Core plan" of "the Core plan £14 a month ...
    and the Max plan £22 a month". Sentences of ``every`` evidence sentence (default: ``sents``)
    that state one value of the sort each about a thing the claim names are read as the items
    of one list too, in one passage or across several: a document cut into passages may give
    each kind a sentence ("The Basic plan allows up to 5 users." "The Premium plan ...")."""
    if fact.kind != "number" or ordinal(fact) or year(fact) or day_of_date(fact, claim.facts):
        return None
    if _in_code(claim, fact):
        return None  # "SEV2" names a level, it counts nothing
    mine = [g for g in claim.facts if g is fact or _one_sort(fact, claim, g, claim)]
    spans = [(0, len(claim.text))] if len(mine) == 1 else _items(claim, mine)
    # values of one item ("seven months at £22 comes to £123.20") share its words
    lo, hi = _items(claim, [fact])[0] if spans is None else spans[mine.index(fact)]
    # (the values' own digits name no kind: "2" of "2% in the third year" is no "year 2")
    said = {
        stem(t.norm)
        for t in claim.tokens
        if lo <= t.start < hi and not any(g.start <= t.start < g.end for g in mine)
    }
    for k, e in sents:
        of_sort = [g for g in e.facts if _one_sort(fact, claim, g, e)]
        gapped = [
            g
            for g in e.facts
            if fact.unit is None
            and g.unit is None
            and g.kind == "number"
            and g not in of_sort
            and not (ordinal(g) or year(g) or day_of_date(g, e.facts) or _in_code(e, g))
            and _gapped(e, g)
        ]
        # a bare number ending an item that has its value already names the item's kind
        # ("8 books on Tier 2"), it is no value of its own
        values = sorted(
            [*of_sort, *(g for g in gapped if _items(e, [g, *of_sort]) is not None)],
            key=lambda g: g.start,
        )
        items = _items(e, values) if len(values) > 1 else None
        kinds = _kinds(e, items, values) if items is not None else None
        if kinds is None or not all(kinds):
            continue
        if any(fact_in(g, values, _NONE, _NONE) for g in mine if g is not fact) and (
            spans is None or not (said & frozenset().union(*kinds))
        ):
            # the claim gives another item's value too, in the same item or naming no kind:
            # it speaks of both ("from £18 to £24 an hour")
            continue
        owner = _owner(fact, said, case_words, values, kinds)
        if owner is not None:
            return k, owner
    # sentences that state one value of the sort each, read as the items of one list where
    # each names a kind of one thing the claim or the asker names by the name before it ("The
    # Basic plan allows up to 5 users." "The Premium plan allows up to 25 users.")
    ones = [
        (k, e, of_sort[0])
        for k, e in (sents if every is None else every)
        if len(of_sort := [g for g in e.facts if _one_sort(fact, claim, g, e)]) == 1
        and not _in_code(e, of_sort[0])
    ]
    others = [g for g in mine if g is not fact]
    for noun in sorted({stem(t.norm) for t in claim.tokens} | frozenset(case_words)):
        group = [(k, e, g) for k, e, g in ones if noun in e.stems]
        values = [g for _, _, g in group]
        if len(group) < 2 or any(fact_in(g, values, _NONE, _NONE) for g in others):
            continue  # (a claim giving two of the values speaks of both)
        kinds = [_kind_before(e, noun) for _, e, _ in group]
        # (a word another of the sentences says too tells them apart no more)
        kinds = [
            w - frozenset().union(*(e.stems for j, (_, e, _) in enumerate(group) if j != i))
            for i, w in enumerate(kinds)
        ]
        if not all(kinds):
            continue
        owner = _owner(fact, said, case_words, values, kinds)
        if owner is not None:
            return next((k, g) for k, _, g in group if g is owner)
    return None


def _kind_before(e: Analysed, noun: str) -> frozenset[str]:
    """The names right before the noun ``noun`` (a stem) in ``e`` that name a kind of it
    ("Premium" of "The Premium plan"): a capitalised word that does not open the sentence,
    before the noun written in lower case (in "Carrick Pension Services" the noun is part of
    a name). A word such as "extra" or "full" tells kinds apart within one list only ("each
    extra day" and "up to one full day" of two sentences are no two kinds of day)."""
    ts = e.tokens
    return frozenset(
        stem(ts[j - 1].norm)
        for j in range(2, len(ts))
        if stem(ts[j].norm) == noun
        and ts[j].text.islower()
        and ts[j - 1].text[:1].isupper()
        and ts[j - 1].norm.isalpha()
        and ts[j - 1].norm not in STOPWORDS
    )


def _owner(
    fact: Fact,
    said: Collection[str],
    case_words: Collection[str],
    values: Sequence[Fact],
    kinds: Sequence[frozenset[str]],
) -> Fact | None:
    """The value of the one item of a list (its ``values`` and the ``kinds`` each is of) whose
    kind the claim names (its words ``said`` of ``fact``), or where it names none, the asker's
    own case (``case_words``), when the list gives ``fact``'s value only to items of other
    kinds."""
    words = frozenset(said)
    named = [j for j, w in enumerate(kinds) if w & words]
    if not named:  # the claim names no kind: the asker's own case may
        words = words | frozenset(case_words)
        named = [j for j, w in enumerate(kinds) if w & words]
    same = [j for j, g in enumerate(values) if fact_in(fact, [g], _NONE, _NONE)]
    if len(named) == 1 and same and not any(kinds[j] & words for j in same):
        return values[named[0]]
    return None


_LEADS = frozenset(
    ("within", "after", "before", "until", "under", "over", "than", "least", "most", "every")
)
"""Words that open a value's slot by a bound, a deadline or a period ("*within* 10 days",
"*over* 6 m", "at *least* 18", "*every* 3 weeks"); "of", "to", "in" or "for" open too many
relations to tell one slot from another."""


def _describes(text: Analysed, fact: Fact) -> bool:
    """Whether the value ``fact`` is joined by a hyphen to its unit and the noun it describes
    ("a 24-hour line", "the 30-day limit"): what a thing is, not a slot of its own."""
    return bool(re.match(r"-[^\W\d_]+(?:-[^\W\d_]+)*\s+[^\W\d_]", text.text[fact.end :]))


_ANCHORS = frozenset(["of", "after", "from", "before"])
"""The words after a bounded value that name the event it counts from ("within 14 days *of*
purchase", "30 days *from* delivery")."""


def _anchored(text: Analysed, fact: Fact) -> tuple[str, str] | None:
    """The bound word opening ``fact`` and the event it counts from: ("within", "collect") of
    "within 2 hours of collection"; None unless both are there."""
    lead = _lead(text, fact)
    if lead is None:
        return None
    after = [t for t in text.tokens if t.start >= fact.end][:3]
    k = next((i for i, t in enumerate(after) if t.norm in _ANCHORS), None)
    if k is None or k > 1 or k + 1 >= len(after):
        return None
    nxt = after[k + 1]
    if nxt.norm in STOPWORDS or not nxt.norm.isalpha():
        return None
    return lead, stem(nxt.norm)


def _lead(text: Analysed, fact: Fact) -> str | None:
    """The word right before ``fact`` when it opens its slot (see :data:`_LEADS`)."""
    before = [t for t in text.tokens if t.end <= fact.start]
    if not before or before[-1].norm not in _LEADS:
        return None
    return before[-1].norm


def _beyond(fact: Fact, groups: Sequence[_Group], evid: Sequence[Analysed]) -> list[Analysed]:
    """The sentences of ``groups`` stating ``fact`` that are none of ``evid``."""
    aligned = {e.text for e in evid}
    return [
        analyse(text)
        for g in groups
        if fact_in(fact, g.facts, g.norms, g.stems)
        for text in g.texts
        if text not in aligned
    ]


def _pool_bytes(pool: EvidencePool) -> int:
    # measured with tracemalloc (its words are mostly shared with the memo of analyses),
    # doubled for ``everything``, built on first use
    groups = [g for p in pool.passages for g in p]
    return sum(
        80 + 22 * (len(g.texts) + len(g.norms) + len(g.stems)) + 38 * len(g.facts) for g in groups
    )


@memoised("references", _pool_bytes, part=0.2)
def _pool_of(
    passages: tuple[tuple[str, ...], ...], references: tuple[int, ...] | None
) -> EvidencePool:
    return EvidencePool(tuple(tuple(_group(t) for t in p) for p in passages), references)


def _merge(groups: Sequence[_Group]) -> _Group:
    return _Group(
        frozenset().union(*(g.texts for g in groups)) if groups else frozenset(),
        frozenset().union(*(g.norms for g in groups)) if groups else frozenset(),
        frozenset().union(*(g.stems for g in groups)) if groups else frozenset(),
        tuple(f for g in groups for f in g.facts),
    )


_PRONOUN_SUBJECT = re.compile(r"\s*(?:and\s+|but\s+|so\s+)?(?:he|she|they|it)\b", re.IGNORECASE)
"""A claim whose subject is a pronoun: what it is about is named elsewhere."""


def _working_from(
    fact: Fact, facts: Sequence[Fact], open_: Collection[tuple[int, int]], stated: Sequence[Fact]
) -> list[Fact]:
    """The claim's ``facts`` a step working ``fact`` out may start from: all but those no source
    states and no step has worked out yet (``open_``, by span), unless ``stated`` (the user's
    values, and a source's in any passage, if not about the claim) has their value. Two values
    no one states cannot vouch for each other: "£55: £15 for the first 15 minutes and then £4
    for each of the next 10 minutes" would make £55 of £4 and £4 of £55."""
    return [g for g in facts if g is fact or (g.start, g.end) not in open_ or _stated_in(g, stated)]


def _unworked(
    unstated: list[tuple[int, Fact]],
    claim: Analysed,
    sent: Analysed,
    sources: Sequence[Fact],
    context: str | None,
    case: Sequence[Fact],
    anywhere: Sequence[Fact],
) -> list[tuple[int, Fact]]:
    """The facts of ``unstated`` (each with where its issue goes) that are not derived
    (:func:`~truthguard.refchecker.derived.derived`) from the claim and its evidence sentence
    ``sent``, a step of arithmetic working only from the values :func:`_working_from` gives
    (the user's are ``case``; a source's, ``anywhere`` in the passages)."""
    left = list(unstated)
    stated = [*case, *anywhere]
    while left:
        open_ = {(f.start, f.end) for _, f in left}
        done = [
            (at, fact)
            for at, fact in left
            if derived(
                fact,
                claim.text,
                claim.facts,
                sent.facts,
                sources,
                context,
                sent.text,
                working=_working_from(fact, claim.facts, open_, stated),
            )
        ]
        if not done:
            break
        left = [x for x in left if x not in done]
    return left


def ground_claim(
    claim_text: str,
    sentences: Sequence[tuple[int, int, str]],
    *,
    pool: EvidencePool | None = None,
    hint: int = 0,
    soft: SoftMatcher | None = None,
    word_floor: float = 0.5,
    precision_threshold: float = 0.8,
    check_content: bool = True,
    context: str | None = None,
    context_sentences: Sequence[tuple[int, int, str]] | None = None,
    context_memo: dict[tuple, Grounding] | None = None,
    referents: Sequence[str] = (),
    one_document: bool = False,
    case: Sequence[Fact] = (),
    period: str | None = None,
    case_words: Collection[str] = frozenset(),
    rounded: bool = True,
) -> Grounding:
    """Ground one claim in evidence sentences.

    Args:
        claim_text: The claim.
        sentences: The evidence sentences as (reference index, start offset in it, text).
        pool: The words and facts of the passages the claim was retrieved against, with
            their reference indices: a name found anywhere in them is supported; a number or
            word, anywhere in the passage of the sentence sharing most with the claim and, in
            another passage, in a sentence about the same thing (sharing a content word or a
            name with the claim, or two of its values). Only ``sentences`` are aligned with the
            claim (None: the pool is ``sentences``).
        hint: Index of the sentence preferred on a tie (the embedding-closest one).
        soft: Soft word matcher; None accepts only exact and stem matches.
        word_floor: Best cosine below which a content word counts as not in the evidence.
        precision_threshold: Soft precision below which the claim is Neutral.
        check_content: Check content words (off when an NLI model judges the relation instead).
        context: The answer sentence the claim was cut from, if it was (a clause or a list
            item). A claim too short to be a near-copy of its evidence sentence on its own may
            be one inside that sentence: "Ben Barnes, David James" of "Ben Barnes, David James
            and Jason R. Moore also star." swaps a name of "Ben Barnes, Ed Skrein and ...".
        context_sentences: The evidence sentences ``context`` is read against (default:
            ``sentences``), such as those found for every clause of it.
        context_memo: Groundings of ``context`` already made for other clauses of it, filled
            here; share one only between calls with the same ``pool`` and settings.
        referents: Names the claim's pronoun subject may stand for ("He was still a member",
            asked about Callum Reyes): a sentence naming one is about the claim too.
        one_document: The sources are one document the claim may draw from as a whole (a
            summary's): a content word counts anywhere in it. Among several passages (a
            retriever's), a word counts only in a sentence about the same thing.
        case: Values the user gave of their own case ("My spaniel weighs 20 kg"): which
            item of a list of bounded cases a claim speaking to the user is about.
        period: The period the question asks an amount for ("a year of electricity"): an
            amount of the claim with no period of its own is for it.
        case_words: The word stems of a question about the asker's own case (:func:`own_words`):
            the kind of thing a list of the sources gives values to that the user's case is,
            where the claim names none ("I'm on the Core plan").
        rounded: Whether a number may round or bound a value of its evidence sentence
            ("more than 2,000" of 2,226; see :func:`~truthguard.refchecker._alignment.hedge_met`):
            not in an answer that is the amount its question asks for (:func:`asks_amount`),
            which gives it as the sources state it.
    """
    claim = analyse(claim_text)
    evid = [analyse(text) for _, _, text in sentences]
    claim_stems = _content_stems(claim)
    days = case_days(claim_text, case_words)
    # (the claim's values that are no bound themselves, "a 30 kg dog" but not "up to 10 t",
    # and the asker's of the units it gives none of; see of_other_case)
    values = [
        f
        for f in claim.facts
        if f.kind == "number" and f.unit and bound_span(claim_text, f.start, f.end) is None
    ]
    values += [g for g in case if all(f.unit != g.unit for f in values)]
    # evidence sentence: most shared content stems and facts, the embedding's choice on a tie;
    # a sentence said of the days of the week the claim is about shares one more, and one said
    # only of another case one fewer ("at weekends" for a Saturday, "on weekdays" not; "dogs
    # under 25 kg" not for a 30 kg dog)
    best, best_key = None, (-1.0, 0)
    shares: list[int] = []
    for k, e in enumerate(evid):
        shared = len(claim_stems & e.stems) + sum(
            fact_in(f, e.facts, e.norms, e.stems) for f in claim.facts
        )
        if days and day_condition(e.text):
            shared += int(days <= day_condition(e.text))
        if (days or values) and of_other_case(days, values, e.text):
            shared -= 1
        key = (shared, int(k == hint))
        shares.append(shared)
        if key > best_key:
            best, best_key = k, key
    # A number or word counts where it is stated about the same thing: anywhere in the passage
    # of the sentence sharing most with it (one document reads as a whole), and in another passage
    # only in a sentence sharing a content word or a name with the claim, or several of its
    # values ("on May 17, 1954"); a value a retriever brought in from a passage about
    # something else supports nothing. A name counts anywhere in the passages the claim was
    # retrieved against: it names the same thing wherever it stands.
    home = sentences[best][0] if best is not None else None
    ties = claim_stems - _units(claim)
    if referents and _PRONOUN_SUBJECT.match(claim_text):
        ties |= {stem(fold(w)) for name in referents for w in name.split()}
    near_at = [
        (k, e)
        for k, ((ref, _, _), e) in enumerate(zip(sentences, evid, strict=True))
        if ref == home or _about(claim, ties, e.stems, e.facts)
    ]
    near = [e for _, e in near_at]
    groups: list[_Group] = []
    if pool is not None:
        refs = pool.references or (None,) * len(pool.passages)
        groups = [
            g
            for r, p in zip(refs, pool.passages, strict=True)
            for g in p
            if r is None or r == home or _about(claim, ties, g.stems, g.facts)
        ]
    norms = frozenset().union(*(e.norms for e in near)) if near else frozenset()
    stems = frozenset().union(*(e.stems for e in near)) if near else frozenset()
    all_facts = [f for e in near for f in e.facts]
    every_facts = [f for e in evid for f in e.facts]
    every_norms = frozenset().union(*(e.norms for e in evid)) if evid else frozenset()
    every_stems = frozenset().union(*(e.stems for e in evid)) if evid else frozenset()
    all_names = Names.of(every_facts)  # looked up for every name of the claim
    if pool is not None:
        # a fact may come from another sentence or passage than the rest of the claim
        about = _merge(groups)
        norms, stems = norms | about.norms, stems | about.stems
        all_facts = [*all_facts, *about.facts]
        everything = pool.everything
        every_norms, every_stems = every_norms | everything.norms, every_stems | everything.stems
        every_facts = [*every_facts, *everything.facts]
        all_names = all_names + everything.names

    # Among several passages, a content word counts in a sentence that states another of the
    # claim's words or values too (one about the same thing), or in the claim's evidence
    # sentence: an invented sentence made of the passages' words finds each of them alone in a
    # sentence about something else ("Stipends are paid out with the following month's
    # salary": "following" of "the following Monday", "paid" of "is paid at 1.5 times"). A
    # summary draws on its one document as a whole.
    word_norms, word_stems = norms, stems
    near_tied = [e for e in near if _shares_two(claim, ties, e)]  # (its rates count too)
    if not one_document:
        tied = list(near_tied)
        if pool is not None:
            tied += [g for g in groups if _shares_two(claim, ties, g)]
        word_norms = frozenset().union(*(e.norms for e in tied)) if tied else frozenset()
        word_stems = frozenset().union(*(e.stems for e in tied)) if tied else frozenset()

    def stated(fact: Fact) -> bool:
        """Whether ``fact`` is stated where it counts (see above)."""
        if fact.kind in ("name", "title"):
            return fact_in(fact, every_facts, every_norms, every_stems, all_names) or (
                fact.kind == "name"
                and any(_abbreviates(str(fact.text), e) or _shortened(fact, claim, e) for e in near)
            )
        return fact_in(fact, _dating(fact, all_facts, claim, context), norms, stems, all_names)

    issues: list[Issue] = []
    unworked: list[tuple[int, Fact]] = []  # (where its issue goes, a fact no sentence states)
    sentence = None
    ops: list = []
    periodic: list[Fact] = []  # amounts a rate for another period gives (their period is read)
    other_side = False  # the claim retells its evidence sentence of the other side of a bound
    if best is not None:
        # a sentence the claim copies nearly word for word is its evidence, even when another
        # shares more of its facts ("All of Universe 6's fighters have been eliminated" copies
        # the Universe 2 sentence, not "... fighters eliminated, Universe 6 is erased")
        best, best_key, ops = _nearest_copy(claim, evid, shares, best, best_key)
        ref, offset, text = sentences[best]
        sentence = (ref, offset, offset + len(text), text)
        sent = evid[best]
        other_side = retold_other_side(claim, sent, ops)
        n_claim = max(len(claim.content) + len(claim.facts), 1)
        close = best_key[0] / n_claim >= 0.6
        statement: tuple[int, Analysed | None] | None = None
        # the rates a claim's amount may be worked from: the claim's and its evidence
        # sentence's (times a count the claim gives), and its answer sentence's and those of
        # the sentences stating two of its words or values too (counted over another period:
        # "£186.15 of standing charges" for a year of "a standing charge of 51p a day")
        here = [(claim.text, claim.facts), (sent.text, sent.facts)]
        rates = [*here, (context, analyse(context).facts)] if context else list(here)
        rates += [(e.text, e.facts) for e in near_tied if e is not sent]
        for fact in claim.facts:
            flip = (
                _other_side(fact, claim, sent)
                or _other_way(fact, claim, sent)
                or _offset_the_other_way(fact, claim, sent)
            )
            if flip is not None and _told_elsewhere(fact, claim, sent, near):
                # a claim joined from two sentences: the statement of this value retells
                # another, which puts it on the claim's side ("keep it at 63 °C or above, with
                # one spell below that" of "... kept at 63 °C or above. It may be held below
                # 63 °C for a single period ...")
                flip = None
            if flip is not None and any(
                g is not fact
                and g.kind == "number"
                and not fact_in(g, sent.facts, sent.norms, sent.stems)
                and stated(g)
                for g in claim.facts
            ):
                # the claim gives the other side a value of its own, which another sentence
                # states ("after the first 4 weeks you're liable for 50%" where this one gives
                # 25% within them and the next 50% later in the term): it tells the other case
                flip = None
            if flip is not None:
                # "journeys of more than 300 km" where the sentence says "under 300 km",
                # "revenue fell 8 percent" where it says "up 8 percent": the same value, said
                # of the other side (an opposite, read in the claim's own sentence only); the
                # spans take in the words that say which side
                (a, b), (c, d) = flip
                ev = (ref, offset + c, offset + d, sent.text[c:d])
                issues.append(Issue(fact.kind, "opposite", a, b, claim.text[a:b], ev))
                continue
            other = _per_another_period(fact, claim, sent, near)
            if other is not None:
                # "£2 per day" where the sentence charges "£2 per hour": the same amount,
                # given for another stretch of time
                ev = (ref, offset + other.start, offset + other.end, other.text)
                issues.append(Issue(fact.kind, "conflict", fact.start, fact.end, fact.text, ev))
                continue
            # a number the claim states more often than the sentence does ("all two remaining
            # warriors from Universe 2" / "all three remaining warriors from Universe 2") is
            # not, each time, the sentence's own
            in_sentence = (
                fact_in(fact, _dating(fact, sent.facts, claim, context), sent.norms, sent.stems)
                and (
                    fact.kind != "number"
                    or times(fact, _alike(fact, claim)) <= times(fact, sent.facts)
                )
            ) or _year_after(fact, [sent])
            in_sentence = in_sentence or (fact.kind == "name" and _shortened(fact, claim, sent))
            if in_sentence:
                if statement is None:
                    statement = _home_statement(claim, sent)
                retold = _retold_otherwise(fact, claim, statement)
                if retold is not None:
                    # stated in the sentence, but in another of its statements: the claim
                    # retells the one it copies with its value replaced ("up to 24 hours when
                    # you stream for 6 of those hours" of "... for 5 of those hours; a quick
                    # charge gives about 6 hours")
                    at = statement[0] + retold.start
                    ev = (ref, offset + at, offset + at + len(retold.text), retold.text)
                    issues.append(Issue(fact.kind, "conflict", fact.start, fact.end, fact.text, ev))
                continue
            if per_count(fact, claim.text, claim.facts, here):
                continue  # a rate times the claim's count of what it is charged per: its own
            if per_period(fact, claim.text, rates, period):
                periodic.append(fact)
                continue  # a rate counted over another period ("£30 a month", "£360 a year")
            # a value this sentence states is never set against it
            other = None if in_sentence else conflict(fact, claim, sent, ops, close, claim.facts)
            # evidence may span sentences: a value stated elsewhere in the evidence is supported
            # there, unless the claim copies this sentence with only that value swapped for the
            # sentence's own ("Universe 2 is erased" / "Universe 6 ...")
            if (other is None or not swapped(fact, other, claim, sent, ops)) and stated(fact):
                # stated elsewhere, unless the claim moved it into this sentence's slot
                moved = misplaced(fact, claim, evid, best, _beyond(fact, groups, evid))
                if moved is not None and (other_side or _rated_apart(fact, claim, moved[1], sent)):
                    # "€39.99 a year" is not in the slot of "€3.99 a month", nor what "after the
                    # first 4 weeks" costs in that of what "within the first 4 weeks" costs
                    moved = None
                if moved is not None and any(
                    _retells(f, claim, sent, e)
                    for f in _alike(fact, claim)
                    if f.value == fact.value
                    for e in near
                    if e is not sent and fact_in(fact, e.facts, e.norms, e.stems)
                ):
                    # the claim states the value in a statement retelling a sentence that
                    # states it ("every 6 to 8 hours, up to a maximum of 6 tablets in 24
                    # hours"): not moved from there
                    moved = None
                if moved is not None:
                    rival = other or moved[1]
                    ev = (ref, offset + rival.start, offset + rival.end, rival.text)
                    issues.append(
                        Issue(fact.kind, "other_value", fact.start, fact.end, fact.text, ev)
                    )
                continue
            elsewhere = (
                None
                if other is not None or (fact.kind == "number" and not year(fact))
                else other_value(fact, claim, evid)
            )
            rival = other.text if other is not None else None
            if elsewhere is not None:
                rival = sentences[elsewhere[0]][2][elsewhere[1] : elsewhere[2]]
            if rival is not None and same_country(fact, rival):
                pass  # "Denmark" where the sentence has "Danish" in its slot
            elif other is not None:
                ev = (ref, offset + other.start, offset + other.end, other.text)
                issues.append(Issue(fact.kind, "conflict", fact.start, fact.end, fact.text, ev))
            elif elsewhere is not None:
                # the evidence fills this slot with another value ("The Prestige is starring
                # Michael Caine" for "The Prestige stars Orlando Bloom")
                k, lo, hi = elsewhere
                r, o, text = sentences[k]
                ev = (r, o + lo, o + hi, text[lo:hi])
                issues.append(Issue(fact.kind, "other_value", fact.start, fact.end, fact.text, ev))
            elif country_in(fact, sent):
                pass  # a country the sentence names in another form ("Danish" of "Denmark")
            elif _first_in_words(fact, sent):
                pass  # "his first appearance" where the sentence says "his debut appearance"
            elif _year_after(fact, near):
                pass  # "won it in 1963" where the sentence says "(1962) ... the following year"
            elif _names_counted(fact, claim, near):
                pass  # "one of the three streets" of "In Arden Road, Mill Lane and Quarry Street"
            elif spans_period(fact, period):
                pass  # "over 365 days" of "what would a year of electricity cost?"
            else:
                # (a count of what the claim lists, or the span between two dates, is its own;
                # whether it is worked out is read once every fact of the claim has been)
                unworked.append((len(issues), fact))
        left = _unworked(unworked, claim, sent, all_facts, context, case, every_facts)
        for at, fact in reversed(left):
            issues.insert(at, Issue(fact.kind, "ungrounded", fact.start, fact.end, fact.text))
        # a value the sources state of something else, put in this claim's slot, and one they
        # state only as the value before a change
        flagged = {(i.start, i.end) for i in issues}
        every = list(enumerate(evid))
        slot_rival = partial(_slot_rival, case=case, days=days, every=every, case_words=case_words)
        only_part = partial(_only_part, context=context)
        listed_owner = partial(_listed_owner, case_words=case_words, every=every)
        finders = (slot_rival, _exchanged, _set_against, _paired, listed_owner, _changed, only_part)
        for find in finders:
            for fact in claim.facts:
                found = None if (fact.start, fact.end) in flagged else find(fact, claim, near_at)
                if found is not None and found[0] == best and other_side:
                    found = None  # the evidence sentence speaks of the other side of its bound
                if found is not None:
                    k, theirs = found
                    r, o, _ = sentences[k]
                    ev = (r, o + theirs.start, o + theirs.end, theirs.text)
                    issues.append(
                        Issue(fact.kind, "other_value", fact.start, fact.end, fact.text, ev)
                    )
                    flagged.add((fact.start, fact.end))
        for fact in claim.facts:
            found = (
                None
                if (fact.start, fact.end) in flagged
                else _other_days(fact, claim, evid, days) or _other_bounds(fact, claim, evid, case)
            )
            if found is not None:
                # the sources state the claim's value only of other days than the claim's
                # ("£3 an hour on weekdays" of a Saturday), or within bounds that leave the
                # user's case out, and none of its sort of the claim's
                k, lo, hi = found
                r, o, text = sentences[k]
                ev = (r, o + lo, o + hi, text[lo:hi])
                issues.append(Issue(fact.kind, "of_another", fact.start, fact.end, fact.text, ev))
                flagged.add((fact.start, fact.end))
        texts = pool.everything.texts if pool is not None else [t for _, _, t in sentences]
        # (the evidence sentence's name first)
        ordered = sorted(near_at, key=lambda ke: ke[0] != best)
        for fact, k, theirs in [*_renamed(claim, ordered, texts), *_retitled(claim, ordered)]:
            if (fact.start, fact.end) not in flagged:
                r, o, _ = sentences[k]
                ev = (r, o + theirs.start, o + theirs.end, theirs.text)
                issues.append(Issue(fact.kind, "other_value", fact.start, fact.end, fact.text, ev))
                flagged.add((fact.start, fact.end))
        read = _moved_the_other_way(claim, sentences, near_at)
        read += _compared_the_other_way(claim, sentences, near_at)
        read += _days_otherwise(claim, sentences, near_at)
        read += _chosen_the_other_way(claim, claim_stems, sentences, near_at)
        read += _roles_swapped(claim, sentences, near_at)
        read += _passed_over(claim, sentences, near_at)
        read += _done_by_another(claim, sentences, near_at)
        read += _said_of_another(claim, sentences, near_at)
        read += _placed_otherwise(claim, sentences, near_at)
        read += _rank_dropped(claim, sentences, near_at)
        read += _denied_doer(claim, sentences, near_at)
        read += _denied_elided(claim, context, sentences, near_at)
        issues += [i for i in read if not any(i.start < j.end and j.start < i.end for j in issues)]
        neg = negation_issue(claim, sent, ops) if close else None
        if neg is None and close:
            neg = local_negation_issue(claim, sent)
        if neg is not None and not _flip_read(
            claim.text, sent.text, *neg, copied_share(ops, claim) >= COPIED, context
        ):
            neg = None  # the other side does not state plainly what the negation denies
        if neg is not None and neg[1] is not None:
            if statement is None:
                statement = _home_statement(claim, sent)
            at, part = statement
            if part is not None and not at <= neg[1].start < at + len(part.text):
                # the sentence denies in another of its statements than the one the claim
                # retells ("... minus a fee of €10; no fee is charged if ...")
                neg = None
            elif _denied_of_another(claim, sent, neg[1]):
                neg = None
        if neg is not None:
            issue, tok = neg
            if tok is not None:
                issue.evidence = (ref, offset + tok.start, offset + tok.end, tok.text)
            issues.append(issue)
    else:
        for fact in claim.facts:
            issues.append(Issue(fact.kind, "ungrounded", fact.start, fact.end, fact.text))

    # the claim's numbers that round or bound a value of its evidence sentence, or a value of
    # another sentence stating two of its words or values that counts the same thing: a claim
    # joined from two sentences ("643 killed, more than 2,000 injured" of "643 deaths and
    # 2,226 injuries")
    hedged: list[Fact] = []
    others: list[Analysed] | None = None  # (found only for a hedge the sentence does not meet)
    for f in claim.facts if best is not None and rounded else ():
        if hedge_met(claim, f, evid[best]) is not None:
            hedged.append(f)
        elif hedge_at(claim.text, f) is not None:
            if others is None:
                others = [
                    e for e in near if e is not evid[best] and _shares_two(claim, claim_stems, e)
                ]
            if any(_counts_alike(claim, f, e, hedge_met(claim, f, e)) for e in others):
                hedged.append(f)
    # content words: exact / stem, else soft
    matches: list[float] = []
    soft_words: dict[str, float] = {}
    if check_content and claim.content:
        # in a near-copy of the evidence sentence, a word put in place of one of its words must
        # match there ("protects him with a condition" for "... with a barrier"), not anywhere
        swapped_words: set[int] = set()
        one_for_one: dict[int, int] = {}
        framed: dict[int, int] = {}
        if best is not None and copied_share(ops, claim) >= COPIED:
            # only where a content word of the sentence was replaced: "Abe did express" for
            # "He did express" names who it is, "a condition" for "a barrier" changes what
            content_of_sent = set(evid[best].content)
            replaced = [
                op
                for op in ops
                if op[0] == "replace" and any(j in content_of_sent for j in range(op[3], op[4]))
            ]
            swapped_words = {i for op in replaced for i in range(op[1], op[2])}
            # one word put for one: unless it means the same, the claim says something else
            one_for_one = {op[1]: op[3] for op in replaced if op[2] - op[1] == op[4] - op[3] == 1}
        elif best is not None:
            # a claim that reorders the sentence's clauses still copies stretches of it: a noun
            # put for one of its nouns between two copied stretches must mean the same alone
            framed = framed_swaps(ops, set(evid[best].content))
        sent_words = (evid[best].norms, evid[best].stems) if best is not None else None
        if sent_words is not None:  # the evidence sentence's own words always count
            word_norms, word_stems = word_norms | sent_words[0], word_stems | sent_words[1]
        unaligned = []
        spans: list[tuple[int, int]] = []
        # the words of a bound are read with its value where the evidence sentence states it
        here = evid[best].facts if best is not None else []
        stated_here = [f for f in claim.facts if fact_in(f, here, _NONE, _NONE)]
        bounds = _bound_words(claim, stated_here)
        # a rounded or bounded value of the sentence's ("more than 2,000" of 2,226): the
        # hedge's words are read with it
        bounds += [(hedge_at(claim.text, f)[1], f.start) for f in hedged]  # type: ignore[index]
        # the asker's own values are read with their units and what the claim compares them by
        # ("five *weeks* is 35", "six weeks *is past* that")
        asker = [
            f for f in claim.facts if f.kind == "number" and any(same_value(f, q) for q in case)
        ]
        bounds += _compared_after(claim, asker)
        bounds += _choice_words(claim, claim_stems, near_at)
        units = _unit_words(claim, issues, periodic, asker)
        for i in claim.content:
            t = claim.tokens[i]
            if any(lo <= t.start < hi for lo, hi in bounds):
                matches.append(1.0)  # "no later than": the words of a bound read with its value
                continue
            if i in units:
                matches.append(1.0)  # "two weeks" for "14 days": the unit is read with its value
                continue
            w = t.norm.replace("'s", "").strip(".'")
            parts = [p for p in w.split("-") if p]
            ns, ss = sent_words if i in swapped_words and sent_words else (word_norms, word_stems)
            found = [p in ns or stem(p) in ss for p in parts]
            if w in ns or stem(w) in ss or (parts and all(found)) or _joined(claim, i, ns):
                matches.append(1.0)
            else:
                unaligned.append(i)
                spans.append(_unmatched_part(t.start, t.text, found))
        if unaligned:
            # soft matches are sought in the evidence sentence (and the embedding's choice):
            # encoding every passage sentence would cost more than the whole check
            picks = (best, hint)
            near = [evid[k] for k in dict.fromkeys(picks) if k is not None and k < len(evid)]
            sims = (
                soft.best(claim, unaligned, near, spans=spans)
                if soft is not None
                else [0.0] * len(unaligned)
            )
            for i, s in zip(unaligned, sims, strict=True):
                t = claim.tokens[i]
                if unknown_term(t.norm) and t.norm not in norms and not _form_of(t.norm, norms):
                    # a term no vector knows ("ritonavir"): its word pieces match others'
                    # ("saquinavir"), so like a name it must be stated (anywhere in the sources,
                    # though the claim puts it where its evidence sentence has another word)
                    soft_words[t.text] = 0.0
                    matches.append(0.0)
                    issues.append(Issue("name", "ungrounded", t.start, t.end, t.text))
                    continue
                soft_words[t.text] = round(s, 4)
                matches.append(max(min(s, 1.0), 0.0))
                put_for = one_for_one.get(i, framed.get(i))
                unrelated = False
                if (
                    put_for is not None
                    and soft is not None
                    and best is not None
                    and "NOUN" in lemmas(t.norm)
                    # between copied stretches only a noun put for a noun ("to express the
                    # King's power" for "to symbolize ...": "express" can be a noun too)
                    and (i in one_for_one or "NOUN" in lemmas(evid[best].tokens[put_for].norm))
                ):
                    # ("living" can be a noun, "either" cannot) in the same words around it, a
                    # noun's contextual vector leans towards
                    # the word it replaced; out of context a synonym still means the same
                    o = evid[best].tokens[put_for]
                    unrelated = _out_of_context(soft, t.norm, o.norm) < _UNRELATED
                    if unrelated:
                        s = min(s, 0.0)
                swap = (i in one_for_one and s < _SWAP_FLOOR) or (i in framed and unrelated)
                if swap and put_for is not None and best is not None and sentence:
                    o = evid[best].tokens[put_for]
                    ev = (sentence[0], sentence[1] + o.start, sentence[1] + o.end, o.text)
                    issues.append(Issue("content", "conflict", t.start, t.end, t.text, ev))
                elif s < word_floor:
                    # a word the passages use only of something else points at one such use
                    ev = None if one_document else _used_elsewhere(t.norm, near_at, sentences)
                    issues.append(Issue("content", "ungrounded", t.start, t.end, t.text, ev))
    precision = float(np.mean(matches)) if matches else 1.0
    copied = copied_share(ops, claim) if ops else 0.0
    # a clause with something not found, or with names or numbers that may be found only
    # elsewhere ("No. 11 also reappears" of "No. 11 also reappears, but ..." against "No. 17
    # also reappears, but ..." and "Universe 11 is erased"), is read in its sentence; so is
    # one with a pronoun subject, however closely it copies a sentence, as its sentence says
    # what the pronoun stands for
    if (
        context
        and (copied < COPIED or _PRONOUN_SUBJECT.match(claim_text))
        and (claim.facts or any(i.relation == "ungrounded" for i in issues))
    ):
        around = list(context_sentences or sentences)
        # the embedding's choice for the claim, where it stands among the sentence's evidence
        at = hint < len(sentences) and sentences[hint] in around
        where = around.index(sentences[hint]) if at else 0
        key = (context, check_content, where, tuple(around))

        def whole(text: str) -> Grounding:  # once per sentence and key (see context_memo)
            memo = {} if context_memo is None else context_memo
            if key not in memo:
                memo[key] = ground_claim(
                    text,
                    around,
                    pool=pool,
                    hint=where,
                    soft=soft,
                    word_floor=word_floor,
                    precision_threshold=precision_threshold,
                    check_content=check_content,
                    referents=referents,
                    rounded=rounded,
                )
            return memo[key]

        issues = _conflicts_in_context(claim_text, context, issues, whole)

    said = [analyse(sentence[3])] if sentence else []
    issues = [i for i in issues if not _negated_alike(claim_text, i, said)]
    # a number that rounds or bounds a value its evidence sentence states, as its hedge says
    # ("nearly 16 million" of 15.9 million), is that value; a count of one named and others
    # ("five survivors" of "she and four other survivors") is their count in all
    met = {(f.start, f.end) for f in hedged}
    if best is not None and any(i.kind == "number" for i in issues):
        met |= {(r.start, r.end) for r in totals(claim_text, evid[best].text)}
    issues = [i for i in issues if i.kind != "number" or (i.start, i.end) not in met]
    if any(i.relation in ("conflict", "opposite") for i in issues):
        label, support = "Contradiction", 0.0
    elif issues or precision < precision_threshold:
        label = "Neutral"
        n = sum(1 for i in issues if i.kind != "content")
        support = min(precision, 0.5) * (0.5 ** max(n - 1, 0)) if n else min(precision, 0.5)
    else:
        label, support = "Entailment", precision
    n_content = len(claim.content) if check_content else 0
    return Grounding(
        label,
        support,
        precision,
        issues,
        sentence,
        soft_words,
        len(claim.facts),
        n_content,
        round(copied, 4),
    )


_FIRST_WORDS = frozenset(
    [
        *("debut", "debuted", "original", "originally", "originated", "maiden"),
        *("inaugural", "initial", "initially"),
    ]
)
"""Words that say first without the ordinal: "his debut appearance", "originally recorded", "the
role was originated by"; not "premiere" (the first night of one work says nothing of its rank
among others) nor "first" as an adverb ("first staged in 1958" says nothing of a first play)."""


def _unit_words(
    claim: Analysed,
    issues: Sequence[Issue],
    periodic: Sequence[Fact] = (),
    asker: Sequence[Fact] = (),
) -> set[int]:
    """The claim's tokens naming the unit of a value no issue flags ("two *weeks*" where the
    sources say "14 days", "90 *seconds*" for "one and a half minutes", "until *year* two"
    for "for 24 months"): the value was read with its unit, converted where the sources use
    another, so the unit's word is no word the evidence must repeat. So is the period of an
    amount in ``periodic``, worked out from a rate for another period ("£276 over a *year*"
    of "£23 a month"), and the unit of a value of the ``asker``'s own, flagged or not ("five
    *weeks*" of a five-week trip)."""
    flagged = {(i.start, i.end) for i in issues} - {(f.start, f.end) for f in asker}
    out: set[int] = set()
    for f in periodic:
        at = period_span(claim.text, f.end)
        if at is not None:
            out |= {k for k, t in enumerate(claim.tokens) if at[0] <= t.start < at[1]}
    for f in claim.facts:
        if f.kind != "number" or f.unit is None or (f.start, f.end) in flagged:
            continue
        after = next((k for k, t in enumerate(claim.tokens) if t.start >= f.end), None)
        if (
            after is not None
            and not claim.text[f.end : claim.tokens[after].start].strip(" -")
            and unit_of(claim.tokens[after].norm) == f.unit
        ):
            out.add(after)
        # a period named before its number ("in *year* 3")
        before = next((k for k, t in enumerate(claim.tokens) if t.end == f.start - 1), None)
        if before is not None and claim.tokens[before].norm == f.unit:
            out.add(before)
    return out


def _form_of(word: str, norms: frozenset[str]) -> bool:
    """Whether ``word``, a term no lexicon knows, is another form of a word of ``norms`` (see
    :func:`_one_stem`); a term of six letters or more, so that "saquinavir" is no form of
    "ritonavir"."""
    if len(word) < 6:
        return False
    return any(len(n) >= 6 and _one_stem(word, n) for n in norms)


def _one_stem(a: str, b: str) -> bool:
    """Whether two long words share all but their endings: the shorter, less its last letter,
    opens the other ("glitchy" / "glitching"), or they share seven letters or more and differ
    only in the last three letters of the shorter ("rehydrated" / "rehydration")."""
    if b.startswith(a[:-1]) or a.startswith(b[:-1]):
        return True
    shared = next(
        (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return shared >= 7 and shared >= min(len(a), len(b)) - 3


_FOLLOWING_YEAR = re.compile(
    r"\b(?:the\s+(?:following|next)\s+year|a\s+year\s+later|the\s+year\s+after)\b",
    re.IGNORECASE,
)


def _names_counted(fact: Fact, claim: Analysed, sents: Sequence[Analysed]) -> bool:
    """Whether the claim's bare count ``fact`` before a plural noun ("the three streets") is how
    many names a sentence about the claim lists in one run ("In Arden Road, Mill Lane and
    Quarry Street"): the sentence counts them by naming each."""
    if fact.kind != "number" or fact.unit is not None or not isinstance(fact.value, float | int):
        return False
    noun = _PLURAL_AFTER.match(claim.text, fact.end)
    if fact.value not in range(2, 13) or noun is None:
        return False
    # (a sentence naming what is counted, "Avon Hall, Mere Hall" for "halls", or stating two
    # more of the claim's words: a list of other things counts nothing of the claim's)
    ties = _content_stems(claim)
    return any(
        fact.value in _listed_names(e)
        and (stem(noun.group(1).casefold()) in e.stems or len(ties & e.stems) >= 2)
        for e in sents
    )


_PLURAL_AFTER = re.compile(r"\s+(?:[a-z]+[\s-]+)?([a-z]+s)\b")
"""A plural noun right after a count, with at most one word before it ("three streets",
"three named roads")."""
_NAME_JOINS = frozenset([",", "and", "or", ", and", ", or"])
"""What joins two names of a list (before a "the": "Mere Hall and the Kestrel Rooms")."""


def _listed_names(sent: Analysed) -> set[int]:
    """How many names each list of two or more names in ``sent`` holds (a name of several
    words, "Mill Lane", is one, :func:`_name_runs`; names joined by commas, "and" or "or", with
    or without "the")."""
    runs: set[int] = set()
    n = 1
    names = _name_runs(sent)
    for before, after in itertools.pairwise(names):
        joint = " ".join(sent.text[before[-1].end : after[0].start].split())
        if joint.removesuffix(" the") in _NAME_JOINS:
            n += 1
        else:
            if n >= 2:
                runs.add(n)
            n = 1
    if n >= 2:
        runs.add(n)
    return runs


def _year_after(fact: Fact, sents: Sequence[Analysed]) -> bool:
    """Whether the year ``fact`` is one a sentence states as the year after the last year it
    gives before "the following year" / "the next year" / "a year later" ("Winter at Corran
    (1962) ... won the Aldwyn Prize the following year": 1963)."""
    if fact.kind != "number" or not year(fact):
        return False
    for e in sents:
        for m in _FOLLOWING_YEAR.finditer(e.text):
            before = [f for f in e.facts if f.end <= m.start() and f.kind == "number" and year(f)]
            if before and float(fact.value) == float(before[-1].value) + 1:
                return True
    return False


def _first_in_words(fact: Fact, sent: Analysed) -> bool:
    """Whether ``fact`` is the ordinal "first" and the evidence sentence says first in a word of
    its own (:data:`_FIRST_WORDS`)."""
    return fact.text.casefold() == "first" and bool(_FIRST_WORDS & sent.norms)


def _dating(
    fact: Fact, facts: Sequence[Fact], claim: Analysed, context: str | None
) -> Sequence[Fact]:
    """The evidence ``facts`` that may state ``fact``: for a decade or century ("the 1970s"),
    not a year the claim, or the answer sentence it was cut from, gives for something else
    ("... whereas his wins came between 1978 and 1994"): one stated year backs one value."""
    if fact.unit != "decade":
        return facts
    around = analyse(context).facts if context else claim.facts
    own = {f.value for f in around if f.kind == "number" and f.unit is None}
    return [f for f in facts if not (f.kind == "number" and f.unit is None and f.value in own)]


def framed_swaps(ops: list, content_of_sent: set[int]) -> dict[int, int]:
    """Claim word -> sentence word, for each word the claim puts for one content word of the
    sentence between copied stretches of :data:`FRAME` words or more in all, one word at
    least on each side ("the left side of the salary according to" for "... of the neck
    according to")."""
    out = {}
    for k in range(1, len(ops) - 1):
        tag, i1, i2, j1, j2 = ops[k]
        if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1 or j1 not in content_of_sent:
            continue
        left, right = ops[k - 1], ops[k + 1]
        if left[0] == right[0] == "equal" and (left[2] - left[1]) + (right[2] - right[1]) >= FRAME:
            out[i1] = j1
    return out


FRAME = 4
"""Copied words around a word put for one, in all, for the two to be held the same word."""


def _joined(claim: Analysed, i: int, words: frozenset[str]) -> bool:
    """Whether claim word ``i`` written together with the word before or after it is a word of
    the evidence ("time slot" / "timeslot", "life span" / "lifespan")."""
    toks = claim.tokens
    w = toks[i].norm
    return (i + 1 < len(toks) and w + toks[i + 1].norm in words) or (
        i > 0 and toks[i - 1].norm + w in words
    )


def _out_of_context(soft: SoftMatcher, word: str, other: str) -> float:
    """Cosine of two words' embeddings, each encoded alone ("freed" / "released" 0.58,
    "clay" / "jade" 0.32)."""
    if word == other:
        return 1.0
    v = soft.embedder.embed([word, other])
    return float(v[0] @ v[1])


_UNRELATED = 0.28
"""Cosine of two words encoded alone under which they name unrelated things. Near-synonyms
a retelling uses rate 0.30 ("hub" / "center") to 0.88; a noun put at random for a word, 0.13
to 0.44, so only the clearly unrelated are set against the evidence by this."""

_SWAP_FLOOR = 0.4
"""Soft match below which one word put for one in a near-copy of the evidence sentence says
something else (a conflict). A retelling puts a near-synonym there ("freed" for "released",
"plunged" for "fell"), which the token vectors rate about 0.45; a swapped noun rates lower."""


def _align(claim: Analysed, sent: Analysed) -> list:
    """The word alignment (``difflib`` opcodes) of a claim with an evidence sentence.

    A claim that is one clause of the sentence ends (or starts) where the sentence goes on, so
    a value it puts last in place of the sentence's (a name, number or date: one word of the
    claim, a fact of the same kind first in the sentence's stretch) is set against that value,
    the rest left out ("known as the Turbofan (LVH)" / "known as the Turbofan (GTF), and
    originally ..."); one it puts first, against the last of the stretch."""
    ops = difflib.SequenceMatcher(
        None, [t.norm for t in claim.tokens], [t.norm for t in sent.tokens], autojunk=False
    ).get_opcodes()
    if len(ops) < 2:
        return ops
    _, i1, i2, j1, j2 = ops[-1]
    if ops[-1][0] == "replace" and i2 - i1 == 1 < j2 - j1 and _same_kind(claim, i1, sent, j1):
        ops[-1:] = [("replace", i1, i2, j1, j1 + 1), ("delete", i2, i2, j1 + 1, j2)]
    _, i1, i2, j1, j2 = ops[0]
    if ops[0][0] == "replace" and i2 - i1 == 1 < j2 - j1 and _same_kind(claim, i1, sent, j2 - 1):
        ops[:1] = [("delete", i1, i1, j1, j2 - 1), ("replace", i1, i2, j2 - 1, j2)]
    return ops


def _same_kind(claim: Analysed, i: int, sent: Analysed, j: int) -> bool:
    """Whether token ``i`` of the claim and ``j`` of the sentence are facts of one kind."""

    def kind(text: Analysed, k: int) -> str | None:
        at = text.tokens[k].start
        return next((f.kind for f in text.facts if f.start <= at < f.end), None)

    a = kind(claim, i)
    return a is not None and a == kind(sent, j)


def _nearest_copy(
    claim: Analysed,
    evid: Sequence[Analysed],
    shares: list[int],
    best: int,
    best_key: tuple[float, int],
) -> tuple[int, tuple[float, int], list]:
    """The evidence sentence the claim copies most (at least :data:`COPIED` of its words, in
    order) among those sharing at least half as much as ``best``, else ``best``; with its key
    and the claim's alignment with it."""
    ops = _align(claim, evid[best])
    if copied_share(ops, claim) >= COPIED or len(evid) == 1:
        return best, best_key, ops
    top, top_ops, top_share = best, ops, copied_share(ops, claim)
    for k, e in enumerate(evid):
        if k != best and shares[k] > 0 and shares[k] >= best_key[0] / 2:
            k_ops = _align(claim, e)
            share = copied_share(k_ops, claim)
            if share >= COPIED and share > top_share:
                top, top_ops, top_share = k, k_ops, share
    if top == best:
        return best, best_key, ops
    return top, (float(shares[top]), 0), top_ops


def _unmatched_part(start: int, text: str, found: list[bool]) -> tuple[int, int]:
    """The character span of a word to match softly: the first part of a hyphenated compound
    the evidence lacks when it holds the others ("popularity-based" for "motion-based" is
    judged by "popularity"), else the whole word."""
    pieces = [m for m in re.finditer(r"[^-]+", text)]
    if len(pieces) == len(found) and any(found) and not all(found):
        m = pieces[found.index(False)]
        return start + m.start(), start + m.end()
    return start, start + len(text)


def _conflicts_in_context(
    claim_text: str, context: str, issues: list[Issue], ground: Callable[[str], Grounding]
) -> list[Issue]:
    """The claim's issues, with the conflicts its sentence shows inside the claim's span.

    Only when the claim lies in ``context`` verbatim; the sentence is grounded as a whole and
    each of its conflicts that falls within the claim replaces what the claim alone reported
    at that span (an ungrounded name becomes the name put in place of the sentence's own).
    """
    offset = context.find(claim_text)
    if offset < 0 or context == claim_text:
        return issues
    end = offset + len(claim_text)
    # a clause whose subject is a pronoun is about what its sentence names before it: a doer
    # the sources give that thing's action otherwise is set against it there too ("The first
    # series had more viewers, and it was directed by Leah Tamsin" where Tamsin directed the
    # second)
    relations = ("conflict", "swapped") if _PRONOUN_SUBJECT.match(claim_text) else ("conflict",)
    found = [
        Issue(x.kind, x.relation, x.start - offset, x.end - offset, x.text, x.evidence)
        for x in ground(context).issues
        if x.relation in relations and offset <= x.start and x.end <= end
    ]
    if not found:
        return issues
    spans = {(x.start, x.end) for x in found}
    return [x for x in issues if (x.start, x.end) not in spans] + found


def premises(
    issues: list[dict[str, Any]],
    claim_text: str,
    question: str,
    evidence: str = "",
    answer: Sequence[Fact] = (),
    near: Sequence[str] = (),
    anywhere: Sequence[Fact] = (),
) -> list[dict[str, Any]]:
    """The issues less those of the numbers the question itself states, where the claim applies
    the sources to them: "I care for 40 hours a week" asked, "40 hours clears the 35-hour
    minimum" answered holds the user's 40 hours against the sources' minimum.

    The user's value is theirs to state when the claim compares it, truly, with a value of the
    same measure that the sources state (:func:`_compared`), or puts it in the user's case
    ("your 14-year-old", "if you think the 2 was unfair"); so is a value worked out from it
    ("ten weeks is 70 days"). Then the comparison's words are said of the user's value, not of
    the sources' side ("six weeks is less than the 45-day limit" where they say "more than 45
    days": no opposite). A value the sources put in its slot stays set against it (relation
    ``other_value``) unless the claim compares the two.

    A figure or month of a question about the asker's own case ("I've got a 30 kg dog") that
    the claim restates where no source states it ("for a dog of 30 kg", "your arrival on 14
    May") is the user's too, unless the claim compares it untruly with the sources' value or
    puts it where the evidence sentence gives another value with the same word after it
    ("inside the 30-day cooling-off period" of "a 14-day cooling-off period", the asker having
    said their email mentions 30 days: a premise about the rules, not their case); one the
    sources state otherwise in its slot stays set against it.

    A value the claim says it works out ("so", "altogether", ...) from the question's values,
    the evidence sentence's and those the ``answer``'s other claims state ("£65 for the first
    permit and £25 for the electric one ... £90 a year altogether") is the answer's own, even
    where the evidence sentence fills its slot with another; so is a value the claim points
    back to ("up to that £1,500") that another of the answer's claims states.

    A date, month or weekday worked out from the asker's by a stretch of time may take the
    stretch from the ``near`` sentences (the claim's other sentences of the passage its
    evidence sentence is in) too: a claim joining "half the £3,400 hire" and "due by 17
    December 2026" is held against the hire's sentence, and "due 9 months before the event"
    is another. So may a number worked out step
    by step from the asker's figures take its values ("two fillings" and "white filling £95":
    £190, held against "20% off fillings"), and a value no source states that the claim says
    it works out ("so three nights cost £87 altogether" of "A room costs £29 a night"). A
    value the claim calls a total ("£90 a year altogether") that two or three amounts of its
    unit among the question's, the evidence sentence's and the ``near`` sentences' add up to
    is the answer's own, even where the evidence sentence fills its slot with another
    (:func:`~truthguard.refchecker.derived.summed_total`).

    A step of working starts only from a value a source states (the numbers ``anywhere`` in
    the passages count, if not about the claim), the question gives or an earlier step works
    out: two values no one states do not vouch for each other."""
    said = analyse(question).facts if question else []
    asked = [f for f in said if f.kind == "number"]
    if not said and not answer:
        return issues
    numbers = [f for f in analyse(claim_text).facts if f.kind == "number"]
    flagged = {
        (i["start"], i["end"]): i
        for i in issues
        if i.get("kind") == "number"
        and i.get("relation") in ("ungrounded", "other_value", "conflict")
    }
    theirs = [f for f in numbers if (f.start, f.end) not in flagged]
    users = [f for f in numbers if any(same_value(f, q) for q in asked)]
    own_case = bool(asked and _OWN_CASE.search(question or ""))
    premise: set[tuple[int, int]] = set()
    # the user's own figures and months, restated where no source states them ("your £540",
    # "a 30 kg dog", "arriving on 14 May"), where the question is about the asker's own case:
    # the user's to state, not the answer's to ground (not one the claim compares untruly with
    # the sources' value: "six weeks is more than the 45-day limit")
    months = [q for q in said if q.kind == "month"]
    for f in analyse(claim_text).facts if _OWN_CASE.search(question or "") else ():
        issue = flagged.get((f.start, f.end)) if f.kind == "number" else None
        if (f.kind == "month" and any(q.value == f.value for q in months)) or (
            issue is not None
            and issue["relation"] == "ungrounded"
            and f in users
            and all(_truly(claim_text, f, t) is not False for t in theirs)
            and not _in_sources_slot(f, claim_text, evidence)
        ):
            premise.add((f.start, f.end))
    for f in users:
        issue = flagged.get((f.start, f.end))
        if issue is None:
            continue
        relation = issue["relation"]
        rival = _value_of(issue) if relation == "other_value" else None
        if relation == "conflict":
            # the user's value the evidence's slot reading sets against a value of the same
            # measure: theirs where the claim compares it, truly, with one the sources state
            # ("150 guests seated is over the 120 limit" of "180 standing or 120 seated"), or
            # where it lies in the band the sources give the claim's statement (:func:`_in_band`)
            if (
                any(_truly(claim_text, f, t) for t in theirs)
                or _in_band(f, claim_text, evidence)
                or (own_case and _askers_slot(f, claim_text, question, evidence, issue))
            ):
                premise.add((f.start, f.end))
        elif any(
            _compared(claim_text, f, t) and (rival is None or t.value == rival) for t in theirs
        ) and (relation == "ungrounded" or rival is not None):
            premise.add((f.start, f.end))
    # a value worked out from the user's own ("25p a day, so £7.50" for 30 days late; "ten
    # weeks is 70 days" is a step of :func:`~truthguard.refchecker.derived.from_case`, below)
    sources = [*asked, *(f for f in analyse(evidence).facts if f.kind == "number")]
    nearby = [f for text in near for f in analyse(text).facts if f.kind == "number"]
    unfound = {
        (i["start"], i["end"]): i["relation"]
        for i in issues
        if i.get("kind") == "number" and i.get("relation") in ("ungrounded", "conflict")
    }
    # what is left of a whole once a part is taken ("the other £1,500" of £4,000 above the
    # first £2,500) fills no slot of the sources: it is worked out from them, or set against
    # them as a conflict is
    unfound |= {
        (i["start"], i["end"]): "conflict"
        for i in issues
        if i.get("kind") == "number"
        and i.get("relation") == "other_value"
        and REST_OF.search(claim_text[: i["start"]])
    }
    claim_facts = analyse(claim_text).facts

    # a value no source states is worked out from the asker's figures step by step; one the
    # evidence sets against another only where the two fill different slots: the claim's
    # amount against a rate the sources give per something ("£37.80 for the missing fuel" of
    # "£2.10 per litre", 18 litres asked), or a value one step makes of the asker's own
    # figures alone ("the 16 rentals left" of a 36-month lease 20 months in, against "after
    # 12 rentals have been paid")
    pool = [analyse(evidence).facts, *(analyse(t).facts for t in near), answer] if own_case else []

    def from_theirs(f: Fact, unstated: Collection[tuple[int, int]]) -> bool:
        relation = unfound.get((f.start, f.end))
        if relation == "conflict" and from_case(f, said, [f], []):
            return True
        return (
            relation == "ungrounded"
            or (
                relation == "conflict"
                and _amount_against_rate(f, flagged[(f.start, f.end)], claim_text, evidence)
            )
        ) and from_case(f, said, claim_facts, pool, unstated)

    stated = [*asked, *anywhere]

    def working(f: Fact) -> list[Fact]:
        return _working_from(f, numbers, unfound.keys() - premise, stated)

    while True:
        new = {
            (f.start, f.end)
            for f in numbers
            if (f.start, f.end) in unfound
            and (f.start, f.end) not in premise
            and (
                worked(f, claim_text, working(f), sources)
                # the answer's other values only for a value no source states: one the evidence
                # sets against it may be a changed fact that happens to be a sum
                or (
                    unfound[(f.start, f.end)] == "ungrounded"
                    and worked(f, claim_text, working(f), [*sources, *nearby, *answer])
                )
                # a value the claim calls a total fills no single item's slot: it is a sum of
                # the sources' values about the claim ("£90 a year altogether" of "the first
                # permit costs £65 a year" and "permits for electric vehicles cost £25")
                or summed_total(f, claim_text, [*sources, *nearby])
            )
        }
        # a value worked out, step by step, from the figures of a question about the asker's
        # own case ("On £36,000 your basic pay is £3,000 a month"; "five weeks is 35 days")
        if own_case:
            # (the claim's values no source states, and not read as worked out: no step works
            # from them, so two of them cannot vouch for each other)
            unstated = {span for span in unfound if span not in premise | new}
            new |= {
                (f.start, f.end)
                for f in numbers
                if (f.start, f.end) not in premise and from_theirs(f, unstated)
            }
        if not new - premise:
            break
        premise |= new

    if own_case:
        # a count of the things the asker lists ("a sofa, a fridge and two armchairs": "four
        # bulky items"), or of one thing they count twice ("three e-bike rides ... and one
        # e-scooter ride": "the four rides")
        # (a count the sources' recount sets against theirs too: the asker's count of their
        # own things is no other value of the sources' slot, "four bulky items" beside "up to
        # three items")
        totals, lists = listed_totals(question)
        premise |= {
            (f.start, f.end)
            for f in numbers
            if (
                unfound.get((f.start, f.end)) == "ungrounded"
                or flagged.get((f.start, f.end), {}).get("relation") == "other_value"
            )
            and f.unit is None
            and (
                f.value in lists
                or any(
                    n == f.value and stem(k) in counts_of(f, claim_text) for k, n in totals.items()
                )
            )
        }
    # a value the claim points back to ("up to *that* £1,500") that another claim of the answer
    # states: checked where it is stated
    premise |= {
        (f.start, f.end)
        for f in numbers
        if unfound.get((f.start, f.end)) == "ungrounded"
        and _POINTED_BACK.search(claim_text[: f.start])
        and any(same_value(f, a) for a in answer)
    }
    # a stretch of time the answer gives in two units ("6 minutes, or 360 seconds"; "90,000
    # ms" in one claim, "a minute and a half" in another): held where it is given in the other
    premise |= {
        (f.start, f.end)
        for f in numbers
        if unfound.get((f.start, f.end)) == "ungrounded"
        and any(restates(f, g) for g in (*asked, *theirs, *answer))
    }
    # a stretch between two times of day of the asker's ("down at 10am", "the last backup had
    # run at 9:50": "the 10 minutes since the 9:50 backup")
    premise |= {
        (f.start, f.end)
        for f in numbers
        if unfound.get((f.start, f.end)) == "ungrounded"
        and clock_span(f, claim_text, claim_facts, said)
    }
    # a time of day or a weekday worked out from the user's own and a stretch of time the
    # claim or the sources state ("noticed at 9, report within one hour": by 10am; "fixed at
    # 9am on Monday, closed after 24 stable hours": from 9am on Tuesday)
    stretches = [*numbers, *sources]
    # and a time of day a stretch of the asker's after or before one the sources or the claim
    # state ("25 minutes late" and "closes at 6:30pm": "collecting her at 6:55pm")
    premise |= {
        (f.start, f.end)
        for f in numbers
        if unfound.get((f.start, f.end)) == "ungrounded"
        and (timed(f, asked, stretches) or timed(f, [*theirs, *sources], asked))
    }
    said_days = [
        (question, said),
        (claim_text, claim_facts),
        (evidence, analyse(evidence).facts),
        # a claim joined from two statements dates its deadline by the other one's stretch
        *((text, analyse(text).facts) for text in near),
    ]
    premise |= {
        (i["start"], i["end"])
        for i in issues
        if i.get("kind") == "name"
        and i.get("relation") == "ungrounded"
        and str(i.get("text", "")).casefold().rstrip("s") in WEEKDAYS
        and weekday_after(i["start"], claim_text, said_days)
    }
    # a date a stretch the sources or the claim state after (or before) a date of the asker's
    # ("spent on 3 March", "within 30 days": "by 2 April"), with its day
    dates_after = {
        (i["start"], i["end"])
        for i in issues
        if i.get("kind") == "month"
        and i.get("relation") == "ungrounded"
        and date_after(i["start"], claim_text, claim_facts, said_days)
    }
    # a month the sources set after a month of the asker's ("by the 15th of the month after
    # the stay", lets in August: "by 15 September"), with its day and year
    dates_after |= {
        (f.start, f.end)
        for f in claim_facts
        if f.kind == "month" and month_after(f.start, claim_text, claim_facts, said_days)
    }
    premise |= dates_after
    premise |= {
        (f.start, f.end)
        for f in numbers
        if unfound.get((f.start, f.end)) == "ungrounded"
        and any(0 <= start - f.end <= 2 or 0 <= f.start - end <= 2 for start, end in dates_after)
    }

    def kept(i: dict[str, Any]) -> bool:
        if i.get("kind") in ("month", "name"):
            return (i.get("start"), i.get("end")) not in premise
        if i.get("kind") != "number":
            return True
        if i.get("relation") == "opposite":
            # the side the claim states is the user's value's, against the sources' own
            inside = [t for t in theirs if i["start"] <= t.start and t.end <= i["end"]]
            return not any(_truly(claim_text, f, t) for f in users for t in inside)
        return (i.get("start"), i.get("end")) not in premise

    return [i for i in issues if kept(i)]


_POINTED_BACK = re.compile(r"\b(?:that|this|those|these|the\s+same|your)\s+[$£€¥]?$", re.IGNORECASE)
"""A word pointing back to a value said before ("up to *that* £1,500"; "*your* £150", the
asker's, worked out before)."""


_NEXT_WORD = re.compile(r"[\s-]*([^\W\d_]+)")


def _next_word(text: str, f: Fact) -> str | None:
    """The stem of the word right after the number ``f`` of ``text`` and its unit's word
    (across a hyphen or spaces), if it is a content word: "left" of "14 months left"."""
    m = _NEXT_WORD.match(text, f.end)
    if m and f.unit is not None and unit_of(m.group(1)) == f.unit:
        m = _NEXT_WORD.match(text, m.end())
    word = stem(m.group(1).casefold()) if m else None
    return None if word in _NON_CONTENT_STEMS else word


def _askers_slot(
    f: Fact, claim_text: str, question: str, evidence: str, issue: dict[str, Any]
) -> bool:
    """Whether the claim's number ``f`` restates a figure of the asker's own case with the word
    the asker says right after it, which the evidence sentence says after no value the issue
    sets against it: "for each of the 14 months left" of "I've got 14 months left", against
    "the end of the 24 months": the asker's slot, not the sources'."""
    word = _next_word(claim_text, f)
    if word is None:
        return False
    said = [
        q
        for q in analyse(question).facts
        if q.kind == "number" and same_value(f, q) and _next_word(question, q) == word
    ]
    if not said:
        return False
    rival = _value_of(issue)
    return not any(
        e.kind == "number" and e.value == rival and _next_word(evidence, e) == word
        for e in analyse(evidence).facts
    )


_NON_CONTENT_STEMS = frozenset(stem(w) for w in NON_CONTENT)


def _in_sources_slot(f: Fact, claim_text: str, evidence: str) -> bool:
    """Whether the evidence sentence gives another value of the claim's number ``f``'s unit
    with the word the claim says right after ``f``: the claim puts the asker's figure in the
    sources' slot ("inside the 30-day cooling-off period" of "a 14-day cooling-off period")."""
    word = _next_word(claim_text, f)
    if word is None:
        return False
    return any(
        e.kind == "number"
        and e.value != f.value
        and _one_measure(f, e, strict=True)
        and _next_word(evidence, e) == word
        for e in analyse(evidence).facts
    )


def _amount_against_rate(f: Fact, issue: dict[str, Any], claim_text: str, evidence: str) -> bool:
    """Whether the claim's number ``f``, given per nothing, is set against a value the evidence
    sentence gives per something (``issue``'s): an amount against a rate, "£37.80 for the
    missing fuel" against "£2.10 per litre"."""
    rival = _value_of(issue)
    return (
        rival is not None
        and not per_what(f, claim_text)
        and any(
            e.kind == "number" and e.value == rival and per_what(e, evidence)
            for e in analyse(evidence).facts
        )
    )


def _value_of(issue: dict[str, Any]) -> object:
    """The value of the evidence's text an ``other_value`` issue sets against the claim's."""
    evidence = issue.get("evidence") or {}
    found = [f for f in analyse(str(evidence.get("text", ""))).facts if f.kind == "number"]
    return found[0].value if len(found) == 1 else None


def own_words(question: str) -> frozenset[str]:
    """The word stems of a question about the asker's own case ("I'm on the Core plan"), which
    name the kind of thing their case is; none for a question about the world."""
    if not question or not _OWN_CASE.search(question):
        return frozenset()
    # (and the parts of a compound: "black-and-white pages" names black and white ones)
    words = {
        w
        for t in analyse(question).tokens
        for w in (t.norm, *(t.norm.split("-") if not t.norm.startswith("non-") else ()))
    }
    stems = {stem(w) for w in words if w and w not in STOPWORDS}
    # a kind the asker denies being is the other kind: "I'm not a member", a non-member
    denied = {
        stem(fold(m.group(1)))
        for m in _NOT_KIND.finditer(question)
        if "NOUN" in lemmas(m.group(1).casefold()) and not m.group(1).endswith("ing")
    }
    return frozenset((stems - denied) | {f"non-{w}" for w in denied})


_NOT_KIND = re.compile(
    r"(?:\b(?:am|is|are|was|were)\s+not|['’](?:m|re)\s+not|\b(?:isn|aren|wasn|weren)['’]t)"
    r"\s+(?:a|an)?\s*([a-z]+?)s?\b",
    re.IGNORECASE,
)
"""A kind the asker says they are not ("I'm not a member", "we aren't residents")."""


def own_case(question: str) -> list[Fact]:
    """The values a question about the asker's own case gives of it ("My spaniel weighs 20
    kg": 20 kg); none for a question about the world."""
    if not question or not _OWN_CASE.search(question):
        return []
    return [f for f in analyse(question).facts if f.kind == "number"]


_ASKS_AMOUNT = re.compile(
    r"\bhow\s+(?:many|much|long|far|old|tall|big|large|high|deep|wide|heavy|often)\b"
    r"|\bwhat\s+(?:is|was|are|were)\s+(?:the\s+)?(?:\w+\s+){0,2}"
    r"(?:population|number|size|length|height|area|attendance|capacity|distance|amount|total)\b",
    re.IGNORECASE,
)


def asks_amount(question: str) -> bool:
    """Whether a question asks for an amount ("How many passengers ...?", "What was the
    population of ...?"): its answer gives the amount as the sources state it, so a rounded
    one ("around 300,000" of 294,000) is another answer."""
    return bool(question) and _ASKS_AMOUNT.search(question) is not None


_OWN_CASE = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Ww]e|[Oo]ur|[Uu]s)\b|\b(?:I|[Ww]e)['’]")
"""A question about the asker's own case ("I've got a 30 kg labrador", "our uptime came out at
98.7%"), whose figures are the asker's; a question about the world ("Which band formed in
1985?") presupposes its figures, and an answer restating them still has to ground them."""


_USERS = re.compile(
    r"(?:\byour\s+(?:[\w-]+\s+){0,2}|(?:^|[,;:(]\s*)(?:if|since|because|given|as)\b[^,;:]*)$",
    re.IGNORECASE,
)
"""What puts a value in the user's case: "your 14-year-old", "if you think the 2 was unfair"."""


_MORE = re.compile(
    r"\b(?:(?:more|longer|greater|higher|later|bigger|larger)\s+than|over|above|exceeds?|"
    r"exceeding|past|beyond|clears?|clearing|tops?)\b",
    re.IGNORECASE,
)
_LESS = re.compile(
    r"\b(?:(?:less|fewer|shorter|lower|earlier|smaller)\s+than|under|below|within|inside)\b",
    re.IGNORECASE,
)


_COMPARED_AFTER = re.compile(
    r"(?:[\s-]+[a-z]+)?\s*(?:is|are|was|['’]s)\s+(?:well\s+|just\s+|still\s+|already\s+)?"
    rf"({_MORE.pattern}|{_LESS.pattern}|\boutside\b)",
    re.IGNORECASE,
)
"""What compares a value (and its unit) with another after it ("six weeks *is past* that")."""


def _compared_after(claim: Analysed, values: Sequence[Fact]) -> list[tuple[int, int]]:
    """The spans of the words comparing each of ``values`` with what follows it."""
    out = []
    for f in values:
        m = _COMPARED_AFTER.match(claim.text, f.end)
        if m is not None:
            out.append((m.end() - len(m.group(1)), m.end()))
    return out


def _compared(text: str, mine: Fact, theirs: Fact) -> bool:
    """Whether the claim holds the user's value ``mine`` beside the sources' ``theirs`` of the
    same measure, and truly where the words between them compare ("40 hours clears the
    35-hour minimum", "ten weeks is 70 days, longer than the 60 days", not "six weeks is more
    than the 45-day limit"); or puts the user's value in their case ("your 14-year-old", "if you
    think the 2 was unfair")."""
    truly = _truly(text, mine, theirs)
    if truly is None:
        return _one_measure(mine, theirs, strict=True) or bool(_USERS.search(text[: mine.start]))
    return truly


_BAND = re.compile(r"\b(?:between|from)\s+[$£€¥]?\s*$", re.IGNORECASE)
"""A band's first end right before the sources' value ("in the band *between* £250.01 and ...")."""
_BAND_TOP = re.compile(r"\s*(?:and|to|-|\u2013)\s*[$£€¥]?\s*")
"""What joins a band's first end to its other ("£250.01 *and £*1,000")."""
_EQUALS = re.compile(r"\s*(?:[\w-]+\s+)?(?:is|are|equals|means|makes|=)\s*", re.IGNORECASE)
"""What states two values equal between them ("ten weeks is 70 days")."""


_JOINED_BOUND = re.compile(r"\b(?:under|over)-$", re.IGNORECASE)
"""A bound joined to the value after it ("under-65s", the people under 65)."""


def _truly(text: str, mine: Fact, theirs: Fact) -> bool | None:
    """Whether "``mine`` more / less than ``theirs``", as the words between them say, holds
    (in days for two stretches of time), or "``mine`` ... between ``theirs`` and another"
    (within both ends of the band); None when no such words stand between them."""
    if not _one_measure(mine, theirs) or mine.end > theirs.start:
        return None
    # (a bound joined to the sources' value by a hyphen, "the under-65s", is its own)
    between = _JOINED_BOUND.sub("", text[mine.end : theirs.start])
    a, b = _in_days(mine), _in_days(theirs)
    if _BAND.search(between) and "." not in between and len(between) <= 80:
        # "£640 is in the band between £250.01 and £1,000": within both ends
        top = next(
            (b for a, b in _band_ends(analyse(text), theirs) if a.start == theirs.start), None
        )
        high = _in_days(top) if top is not None else None
        if high is not None:
            return a is not None and b is not None and b <= a <= high
    more, less = _MORE.search(between), _LESS.search(between)
    if _EQUALS.fullmatch(between):
        working = _working_weeks(text, mine, theirs)
        return working if working is not None else a is not None and a == b
    if (more is None and less is None) or "." in between or len(between) > 80:
        return None
    if a is None or b is None:
        return False
    first = min((m for m in (more, less) if m is not None), key=lambda m: m.start())
    return a > b if first is more else a < b


_WORKING_DAYS = re.compile(r"\s+(?:working|business)\s+days?\b", re.IGNORECASE)
"""Days counted on weekdays only after a number ("20 working days"), five to a week."""


def _working_weeks(text: str, mine: Fact, theirs: Fact) -> bool | None:
    """Whether weeks and working days are the same stretch, five days to a week ("four weeks
    is 20 working days"); None unless one of the two values is weeks and the other working
    days."""
    for weeks, days in ((mine, theirs), (theirs, mine)):
        if (
            weeks.unit == "week"
            and _WORKING_DAYS.match(text, days.end)
            and isinstance(weeks.value, (int, float))
        ):
            return weeks.value * 5 == days.value
    return None


_STATEMENTS = re.compile(r"[;,](?=\s)")
"""Where one statement of a sentence ends and the next begins (not "1,000")."""


def _band_ends(text: Analysed, like: Fact) -> list[tuple[Fact, Fact]]:
    """The two ends of each band ``text`` states in ``like``'s measure: values of it joined by
    "and", "to" or a dash ("£250.01 to £1,000", "aged 65 to 74")."""
    ends = [f for f in text.facts if f.kind == "number" and _one_measure(like, f)]
    return [
        (a, b)
        for a, b in itertools.pairwise(ends)
        if _BAND_TOP.fullmatch(text.text, a.end, b.start)
    ]


def _bands(mine: Fact, part: Analysed) -> list[tuple[float, float]]:
    """The stretches of ``mine``'s measure one statement bounds: a band ("from £250.01 to
    £1,000", "aged 65 to 74") or one side of a bound ("up to £250", "above £1,000")."""
    out: list[tuple[float, float]] = []
    banded: set[int] = set()
    for a, b in _band_ends(part, mine):
        low, high = _in_days(a), _in_days(b)
        if low is not None and high is not None:
            out.append((low, high))
            banded |= {id(a), id(b)}
    for f in (f for f in part.facts if f.kind == "number" and _one_measure(mine, f)):
        at = _in_days(f)
        side = bound_span(part.text, f.start, f.end) if id(f) not in banded else None
        if at is not None and side is not None:
            out.append((at, math.inf) if side[0] == "above" else (-math.inf, at))
    return out


def _in_band(mine: Fact, claim_text: str, evidence: str) -> bool:
    """Whether the asker's value ``mine`` lies in a band the evidence sentence states in the
    statement the claim shares most content words with, one alone ("a £640 claim goes to your
    head of department" of "... by the line manager up to £250, by the head of department from
    £250.01 to £1,000, ..."): the sources' other values are the other statements' bounds. Not
    where the claim states the user's value as a bound of its own."""
    value = _in_days(mine)
    if value is None or not evidence or bound_span(claim_text, mine.start, mine.end):
        return False  # ("at least 15 classes": the claim makes the user's value a bound)
    words = _content_stems(analyse(claim_text))
    cuts = [0, *(m.end() for m in _STATEMENTS.finditer(evidence)), len(evidence)]
    parts = [analyse(evidence[lo:hi]) for lo, hi in itertools.pairwise(cuts)]
    shared = [len(words & _content_stems(part)) for part in parts]
    top = max(shared)
    if top == 0 or shared.count(top) > 1:
        return False
    return any(low <= value <= high for low, high in _bands(mine, parts[shared.index(top)]))


def _in_days(fact: Fact) -> float | None:
    try:
        value = float(fact.value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value * DURATION_DAYS.get(fact.unit or "", 1.0)


def _stated_in(fact: Fact, facts: Sequence[Fact]) -> bool:
    """Whether a number of ``facts`` has ``fact``'s value in its unit."""
    return any(f.kind == "number" and f.value == fact.value and f.unit == fact.unit for f in facts)


def same_value(a: Fact, b: Fact) -> bool:
    """Whether two numbers have one value, in one unit where both give one."""
    return a.value == b.value and (a.unit is None or b.unit is None or a.unit == b.unit)


def _one_measure(a: Fact, b: Fact, *, strict: bool = False) -> bool:
    """Whether two values may measure one thing: one unit, or two stretches of time. A bare
    value may have its unit said once for both ("the 30-59 minute band"); ``strict`` asks for
    the same unit, or two bare counts. Ranks and years measure nothing of the user's."""
    if ordinal(a) or ordinal(b) or year(a) or year(b):
        return False
    if durations(a.unit, b.unit):
        return True
    return a.unit == b.unit or (not strict and (a.unit is None or b.unit is None))
