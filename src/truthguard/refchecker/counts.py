"""Counts: a claim that puts another number before the same thing its evidence counts.

A number is looked up anywhere in the sources, as a fact may come from another sentence; so
"she played two other female roles" finds "two" in the title "Two and a Half Men" of the very
sentence that says "three other female roles". What a number counts is the noun it modifies in
the sentence's parse ("roles" of "three other female roles", "minutes" of "10,000 build
minutes"): a claim number whose noun a sentence of its evidence counts with another number, and
never with this one, says another count than the sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from truthguard.refchecker._alignment import hedge_met
from truthguard.refchecker._analysis import Against, Analysed, analyse
from truthguard.refchecker._facts import Fact, stem
from truthguard.refchecker.derived import per_what
from truthguard.refchecker.structure import counted

__all__ = ["Recount", "agreeing", "recounts", "totals"]


@dataclass(frozen=True)
class Recount(Against):
    """A claim number set against the evidence's number for the same counted word."""


_ORDINAL = re.compile(r"(?:st|nd|rd|th)$|^(?:first|second|third)$", re.IGNORECASE)


def _count(text: str, value: float) -> bool:
    """Whether a number is a count: not a year, an ordinal or part of a word ("100-grain")."""
    if _ORDINAL.search(text) or not text.replace(",", "").replace(".", "").isalnum():
        return False
    return not (value.is_integer() and 1000 <= value <= 2100 and len(text) == 4)


_Count = tuple[float, int, int, str, set[str], set[str]]
"""A count: its value, start, end and text, the stems of the noun it counts and the words that
qualify it, and the stems of the nouns compounded with that noun (the kind of it counted)."""


def _counted(a: Analysed, *, measures: bool = False) -> list[_Count]:
    """Each count of the text (value, start, end, text) with the stem of the noun it counts,
    read from the parse: the noun the number modifies and the words that qualify it ("10,000
    build minutes": minutes, build; "three other female roles": roles, other, female), and the
    nouns compounded with it, which name the kind counted (build). With ``measures``, a number
    the tokeniser read with a unit counts too ("10,000 minutes" is 10,000 of the minutes
    "10,000 build minutes" counts)."""
    counts = [
        f
        for f in a.facts
        if f.kind == "number"
        and (f.unit is None or (measures and isinstance(f.value, float)))
        and _count(f.text, float(f.value))
        # "100-grain", "24-inch": a measure written as one word
        and a.text[f.end : f.end + 1] not in ("-", "‐", "–")
    ]
    if not counts:
        return []
    nouns = {(c.start, c.end): c for c in counted(a.text)}
    out = []
    for f in counts:
        # the parse splits a number where the tokeniser does; a fact may span several tokens
        c = next((c for (lo, _), c in nouns.items() if f.start <= lo < f.end), None)
        if c is not None:
            words = {stem(c.noun), *(stem(m) for m in c.modifiers)}
            kinds = {stem(k) for k in c.kinds}
            if per_what(f, a.text):
                # a rate counts its noun per something else ("5 points per £1"): it is set only
                # against another rate, never against an amount ("4,410 points")
                words = {f"per {w}" for w in words}
                kinds = {f"per {w}" for w in kinds}
            out.append((float(f.value), f.start, f.end, f.text, words, kinds))
    return out


_BEYOND = frozenset(map(stem, ("extra", "additional", "further", "more", "other", "remaining")))
"""Words that make a count one of what comes beyond another ("3 *extra* days")."""

_OTHER = stem("other")


def _in_all(a: Analysed) -> list[_Count]:
    """The counts of others joined to what is named ("she and four other survivors"): that
    many and the things "and" joins to them in all (five survivors; "Ames, Bell and three
    other members" are five), read without "other"."""
    joined = [(c.start, c.joined) for c in counted(a.text) if c.joined]
    out = []
    for value, start, end, text, words, kinds in _counted(a):
        more = next((n for lo, n in joined if start <= lo < end), 0)
        if _OTHER in words and more:
            out.append((value + more, start, end, text, words - {_OTHER}, kinds))
    return out


def totals(claim_text: str, evidence_text: str) -> list[Recount]:
    """The claim's counts of a noun that the evidence sentence gives as one named and others
    ("five survivors" of "she and four other survivors")."""
    mine = _counted(analyse(claim_text))
    if not mine:
        return []
    whole = _in_all(analyse(evidence_text))
    out = []
    for value, start, end, text, words, _ in mine:
        t = next((t for t in whole if t[0] == value and t[4] & words), None)
        if t is not None and not words & _BEYOND:
            out.append(Recount(start, end, text, t[1], t[2], t[3]))
    return out


def recounts(claim_text: str, evidence_text: str, *, rounded: bool = True) -> list[Recount]:
    """The claim's numbers the evidence sentence gives another value for the same counted word
    (see the module); with ``rounded``, not one that rounds or bounds the sentence's value as
    its hedge says."""
    claim = analyse(claim_text)
    mine = _counted(claim)
    if not mine:
        return []
    a = analyse(evidence_text)
    # (one named and others is a count of them all: "she and four other survivors" is five)
    whole = _in_all(a)
    theirs = _counted(a) + whole
    if not theirs:
        return []
    measured = _counted(a, measures=True)
    # a count that rounds or bounds one the sentence states ("more than 2,000" of 2,226)
    hedged = {f.start for f in claim.facts if rounded and hedge_met(claim, f, a) is not None}
    others = {t[1] for t in whole}
    out = []
    for value, start, end, text, words, _ in mine:
        if start in hedged:
            continue
        alone = not words & _BEYOND  # (not "four *other* survivors")
        read = [t for t in measured if not (alone and t[1] in others)]
        # a count of what comes beyond ("3 extra desk days") is no other count of the whole
        # ("10 desk days"), nor the other way round
        # nor is a count of a kind of the claim's noun the claim does not name ("20 tier
        # points" of "4,410 points")
        same = [
            t
            for t in theirs
            if t[4] & words and bool(t[4] & _BEYOND) == bool(words & _BEYOND) and t[5] <= words
        ]
        # the same value of the same noun, read as a measure, is no other count
        stated = any(t[0] == value and t[4] & words for t in read)
        if same and not stated and all(t[0] != value for t in same):
            t = same[0]
            out.append(Recount(start, end, text, t[1], t[2], t[3]))
    return out


def _stated(a: Analysed) -> dict[float, tuple[int, int, str]]:
    """The counts a text states, by value, whatever they count ("41 each home and away", "the
    population is 2,413"); a number word written with a capital mid-sentence is part of a
    title ("Two and a Half Men") and states no count."""
    out: dict[float, tuple[int, int, str]] = {}
    for f in a.facts:
        if f.kind != "number" or f.unit is not None or not _count(f.text, float(f.value)):
            continue
        if f.text[:1].isupper() and f.start > 0:
            continue
        out.setdefault(float(f.value), (f.start, f.end, f.text))
    return out


def _value_in(fact: Fact, values: set[float]) -> bool:
    return (
        fact.kind == "number"
        and isinstance(fact.value, (int, float))
        and float(fact.value) in values
    )


def agreeing(claim_text: str, evidence_text: str, *, of_noun: bool = False) -> list[Recount]:
    """The claim's counts the evidence sentence states too (a count the sources do state, which
    another sentence's other count for the same word does not undo); with ``of_noun``, only
    those it states of the same counted word ("up to 2 guests" for "up to two guests", not
    "four grandchildren" for "four children"). A value the sentence states of another noun
    while it counts the claim's noun with another value is no agreement (:func:`_exchanged`)."""
    mine = _counted(analyse(claim_text))
    if not mine:
        return []
    a = analyse(evidence_text)
    values = {m[0] for m in mine}
    if not any(_value_in(f, values) for f in a.facts):
        return []  # (no statement of the claim's numbers, so no parse)
    counted, stated = _counted(a), _stated(a)
    # "four other survivors" after one named counts five in all, not four
    others = {t[1] for t in _in_all(a)}
    out = []
    for value, start, end, text, words, _ in mine:
        alone = not words & _BEYOND
        same = [
            t[1:4]
            for t in counted
            if t[4] & words and t[0] == value and not (alone and t[1] in others)
        ]
        bare = value in stated and not of_noun and not (alone and stated[value][0] in others)
        if bare and not same and _exchanged(value, words, counted, evidence_text):
            bare = False
        if same or bare:
            t = same[0] if same else stated[value]
            out.append(Recount(start, end, text, t[0], t[1], t[2]))
    return out


def _exchanged(value: float, words: set[str], counts: list[_Count], text: str) -> bool:
    """Whether a sentence (``text``) counts the claim's noun (``words``) with another value and
    counts another noun with the claim's ``value``: the claim has exchanged the two ("3,400
    stores" of "employs 3,400 people across 120 stores"), so the value it states is no
    agreement. Only counts written before their noun are read: a number after a noun labels
    it ("code 4", "March 31"), and a rate counts the noun it is of ("eight items per visit"
    counts items)."""
    plain = {w.removeprefix("per ") for w in words}
    counts = [t for t in counts if _before_noun(text, t)]
    return any(t[4] & words and t[0] != value for t in counts) and any(
        t[0] == value and not {w.removeprefix("per ") for w in t[4]} & plain for t in counts
    )


def _before_noun(text: str, count: _Count) -> bool:
    """Whether the noun a count counts stands within three words after its number (not after
    a list's number, "2. children of staff")."""
    if text[count[2] : count[2] + 1] in (".", ")"):
        return False
    after = [stem(w.casefold()) for w in _WORDS.findall(text, count[2])[:3]]
    return bool({w.removeprefix("per ") for w in count[4]} & set(after))


_WORDS = re.compile(r"[^\W\d_][\w'’-]*")
