"""Counts: a claim that puts another number before the same thing its evidence counts.

A number is looked up anywhere in the sources, as a fact may come from another sentence; so
"she played two other female roles" finds "two" in the title "Two and a Half Men" of the very
sentence that says "three other female roles". What a number counts is the word after it
("roles", "times", "miles"): a claim number whose counted word a sentence of its evidence counts
with another number, and never with this one, says another count than the sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from truthguard.refchecker._analysis import Against, Analysed, analyse
from truthguard.refchecker._facts import stem

__all__ = ["Recount", "agreeing", "recounts"]

AFTER = 2
"""Most words between a number and what it counts ("three other female roles": female)."""


@dataclass(frozen=True)
class Recount(Against):
    """A claim number set against the evidence's number for the same counted word."""


_ORDINAL = re.compile(r"(?:st|nd|rd|th)$|^(?:first|second|third)$", re.IGNORECASE)


def _count(text: str, value: float) -> bool:
    """Whether a number is a count: not a year, an ordinal or part of a word ("100-grain")."""
    if _ORDINAL.search(text) or not text.replace(",", "").replace(".", "").isalnum():
        return False
    return not (value.is_integer() and 1000 <= value <= 2100 and len(text) == 4)


def _counted(a: Analysed) -> list[tuple[float, int, int, str, set[str]]]:
    """Each number of the text (value, start, end, text) with the stems of the content words
    right after it."""
    content = set(a.content)
    out = []
    for f in a.facts:
        if f.kind != "number" or f.unit is not None or not _count(f.text, float(f.value)):
            continue  # a measure ("14.6 km"), a year or an ordinal is compared elsewhere
        after = [k for k, t in enumerate(a.tokens) if t.start >= f.end][: AFTER + 1]
        if a.text[f.end : f.end + 1] in ("-", "‐", "–") or (
            after and a.tokens[after[0]].start == f.end
        ):
            continue  # "100-grain", "24-inch": a measure written as one word
        words = {stem(a.tokens[k].norm) for k in after if k in content}
        if words:
            out.append((float(f.value), f.start, f.end, f.text, words))
    return out


def recounts(claim_text: str, evidence_text: str) -> list[Recount]:
    """The claim's numbers the evidence sentence gives another value for the same counted word
    (see the module)."""
    mine = _counted(analyse(claim_text))
    if not mine:
        return []
    theirs = _counted(analyse(evidence_text))
    out = []
    for value, start, end, text, words in mine:
        same = [t for t in theirs if t[4] & words]
        if same and all(t[0] != value for t in same):
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


def agreeing(claim_text: str, evidence_text: str) -> list[Recount]:
    """The claim's counts the evidence sentence states too (a count the sources do state, which
    another sentence's other count for the same word does not undo)."""
    mine = _counted(analyse(claim_text))
    if not mine:
        return []
    a = analyse(evidence_text)
    counted, stated = _counted(a), _stated(a)
    out = []
    for value, start, end, text, words in mine:
        same = [t[1:4] for t in counted if t[4] & words and t[0] == value]
        if same or value in stated:
            t = same[0] if same else stated[value]
            out.append(Recount(start, end, text, t[0], t[1], t[2]))
    return out
