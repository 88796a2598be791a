"""Shares: "more than half", "about a third", "one in four", "38 per cent", "39 of the 80".

A chat model retells "39 of the 80 passengers survived" as "fewer than half survived" or
"about half of them survived"; the sources state neither "half" nor the bound. A share is read
from the claim as a value with a bound (more than, fewer than, about, or as stated), and from
the evidence as a count of a whole ("39 of the 80", "three out of five"), a fraction or a
percentage. A claim's share is supported when a share the evidence states meets its bound, and
set against the share its evidence sentence states when none does ("more than half" where the
sentence says "39 of the 80").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from truthguard.refchecker._numbers import _UNITS_W

__all__ = ["Share", "agrees", "read_shares", "shares"]

_WORD_VALUE = {w: float(v) for w, v in _UNITS_W.items() if v} | {"twenty": 20.0}
_SMALL = list(_WORD_VALUE)
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|" + "|".join(_SMALL) + r")"
_DENOMINATORS = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "quarter": 4,
    "quarters": 4,
    "fourth": 4,
    "fourths": 4,
    "fifth": 5,
    "fifths": 5,
    "sixth": 6,
    "sixths": 6,
    "seventh": 7,
    "sevenths": 7,
    "eighth": 8,
    "eighths": 8,
    "ninth": 9,
    "ninths": 9,
    "tenth": 10,
    "tenths": 10,
}
_NUMERATORS = {"a": 1, "one": 1} | {
    w: int(v) for w, v in _UNITS_W.items() if v and 2 <= v <= 9 and w.isalpha()
}
_FRACTIONS = {r"half": 1 / 2} | {
    rf"{n}[- ]{d}": k / m
    for n, k in _NUMERATORS.items()
    for d, m in _DENOMINATORS.items()
    if k < m and (k == 1) == (not d.endswith("s"))
}
"""A fraction in words and its value: "half", "a third", "two-thirds", "nine-tenths"."""
_MEASURE = (
    r"(?:hour|mile|century|decade|dozen|time|point|year|day|minute|second|inch|cup|pound|kilo)"
)
"""Words after which "half" is an amount ("half an hour"), not a share."""
_BOUNDS = {
    ">": r"more than|over|above|at least|upwards of|just over|well over",
    "<": r"fewer than|less than|under|below|at most|just under|not even",
    "~": r"about|around|roughly|approximately|nearly|almost|some|close to|an estimated",
}
_BOUND = r"(?:(" + "|".join(f"(?:{v})" for v in _BOUNDS.values()) + r")\s+)?"
_FRACTION = r"(" + "|".join(f"(?:{k})" for k in _FRACTIONS) + r")"
_PATTERNS = [
    # "about a third of", "more than half", "two-thirds of"
    (
        "fraction",
        re.compile(
            _BOUND + r"\b" + _FRACTION + r"\b(?!\s+(?:an?\s+)?" + _MEASURE + ")",
            re.I,
        ),
    ),
    # "one in four", "three out of five", "one of every ten"
    (
        "ratio",
        re.compile(_BOUND + r"\b" + _NUM + r"\s+(?:in|out of|of every)\s+" + _NUM + r"\b", re.I),
    ),
    # "39 of the 80", "nine of its 14"
    (
        "count",
        re.compile(
            _BOUND
            + r"\b"
            + _NUM
            + r"\s+of\s+(?:the|its|their|these|those|his|her|all)\s+"
            + _NUM
            + r"\b",
            re.I,
        ),
    ),
    # "38 per cent", "40%", "40 percent"
    ("percent", re.compile(_BOUND + r"\b" + _NUM + r"\s*(?:%|per\s*cent\b|percent\b)", re.I)),
    # "most of the", "the majority of"
    ("most", re.compile(r"()\b(?:most|the majority|a majority) of\b", re.I)),
]


_PART_BEFORE = re.compile(
    r"\b(?:the|this|that|first|second|third|last|latter|former|other|each|every)\s+$", re.I
)


@dataclass(frozen=True)
class Share:
    """A share a text states: its value (0-1), its bound (">", "<", "~" or "=") and span."""

    value: float
    bound: str
    start: int
    end: int
    text: str


def _value(word: str) -> float:
    w = word.lower().replace(",", "")
    return _WORD_VALUE[w] if w in _WORD_VALUE else float(w)


def _bound(word: str | None) -> str:
    if not word:
        return "="
    w = word.lower()
    for b, alts in _BOUNDS.items():
        if re.fullmatch(alts, w):
            return b
    return "="


def shares(text: str) -> list[Share]:
    """The shares ``text`` states, in order, none overlapping another."""
    out: list[Share] = []
    for kind, pat in _PATTERNS:
        for m in pat.finditer(text):
            if any(s.start < m.end() and m.start() < s.end for s in out):
                continue
            b = _bound(m.group(1))
            if kind == "fraction":
                if b == "=" and not re.match(r"\s+of\b", text[m.end() :]):
                    continue  # "half an hour": no share of anything
                if _PART_BEFORE.search(text[: m.start()]):
                    continue  # "the second half of the season": a part, not a share
                word = m.group(2).lower()
                v = next(val for k, val in _FRACTIONS.items() if re.fullmatch(k, word))
            elif kind in ("ratio", "count"):
                n, d = _value(m.group(2)), _value(m.group(3))
                if not 0 < n <= d or re.fullmatch(r"1\d{3}|20\d{2}", m.group(3)):
                    continue  # "3 in 2009" is a year, not a whole
                if kind == "count" and n == 1:
                    continue  # "one of the 100 most influential": one of them, not a share
                v = n / d
            elif kind == "percent":
                v = _value(m.group(2)) / 100
                if v > 1:
                    continue
            else:
                v, b = 0.5, ">"
            out.append(Share(v, b, m.start(), m.end(), m.group(0)))
    return sorted(out, key=lambda s: s.start)


def agrees(claim: Share, evidence: Share) -> bool:
    """Whether the share the evidence states meets the claim's."""
    e, p = evidence.value, claim.value
    if evidence.bound in (">", "<"):
        # "more than half" in the evidence meets "more than a third", not "about half"
        return claim.bound == evidence.bound and (e >= p if claim.bound == ">" else e <= p)
    if claim.bound == ">":
        return e > p
    if claim.bound == "<":
        return e < p
    if claim.bound == "~":
        return abs(e - p) <= max(0.06, 0.15 * p)
    # as stated: a third is 33%, and 1 in 152 is not 1 in 100
    return abs(e - p) <= 0.05 * p + (0.005 if p >= 0.1 else 0.0)


@functools.lru_cache(maxsize=8192)
def _shares_of(text: str) -> tuple[Share, ...]:
    return tuple(shares(text))


def read_shares(
    claim_text: str, evidence: Sequence[str], best: int
) -> tuple[list[tuple[int, int]], tuple[Share, Share] | None]:
    """The spans of the claim's shares that a share of ``evidence`` meets (their numbers are
    supported there), and the first claim share none meets while the evidence sentence ``best``
    states a share: ``(the claim's, the sentence's)``, or None."""
    mine = _shares_of(claim_text)
    if not mine:
        return [], None
    theirs = [s for text in evidence for s in _shares_of(text)]
    met, against = [], None
    for share in mine:
        if any(agrees(share, t) for t in theirs):
            met.append((share.start, share.end))
        elif against is None and (here := _shares_of(evidence[best])):
            against = (share, here[0])
    return met, against
