"""Word tokens with offsets, case and accent folding, and a light stem (no model needed)."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

__all__ = ["Fact", "Token", "fold", "stem", "tokenize"]


@dataclass(frozen=True)
class Token:
    """A word of a text with its offsets; ``norm`` is case- and accent-folded."""

    text: str
    start: int
    end: int
    norm: str


@dataclass(frozen=True)
class Fact:
    """A hard fact: ``kind`` is number, month, name or title; ``value`` its normal form."""

    kind: str
    value: object
    start: int
    end: int
    text: str
    unit: str | None = None
    alternatives: frozenset = field(default_factory=frozenset)
    """Other values the same text may stand for (a numeric date part that may be a month)."""
    series: bool = field(default=False, compare=False)
    """A bare number after a noun it names one of a series with ("term 2", "Zone 1"): it counts
    nothing (:data:`~truthguard.refchecker._numbers.SERIES`)."""


_WORD = re.compile(
    # "U.S." and "J.K." are one word; "Whale.David" (two passages pasted together) two
    r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s)?|[^\W\d_]+(?:(?:['’\-]|\.(?![A-Z][a-z]))[^\W\d_]+)*\.?"
    r"|[$£€¥%°]",
    re.UNICODE,
)


def fold(text: str) -> str:
    """Case-fold and strip accents ("Lajčák" -> "lajcak"), unify apostrophes."""
    if text.isascii():
        return text.casefold()  # nothing to decompose, strip or unify
    text = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()


def tokenize(text: str) -> list[Token]:
    """Word tokens with offsets; a trailing period is kept only on initials and abbreviations."""
    out = []
    for m in _WORD.finditer(text):
        s, e = m.start(), m.end()
        word = m.group()
        if word.endswith(".") and (
            (len(word) > 2 and not re.fullmatch(r"(?:[A-Za-z]\.)+", word))
            or (len(word) == 2 and word[0].islower() and s > 0 and text[s - 1].isdigit())
        ):
            # a sentence's last word, not an abbreviation; a small letter joined to the number
            # before it is that number's unit, not an initial ("rose to 42p.", "at 2.1x.")
            e -= 1
            word = word[:-1]
        out.append(Token(word, s, e, fold(word)))
    return out


_SUFFIXES = (
    "ational",
    "ization",
    "isation",
    "fulness",
    "ousness",
    "iveness",
    "ements",
    "ments",
    "ement",
    "ment",
    "ations",
    "ation",
    "ings",
    "ing",
    "ies",
    "ied",
    "edly",
    "ed",
    "ers",
    "er",
    "est",
    "ness",
    "ly",
    "es",
    "s",
)


@functools.lru_cache(maxsize=1 << 16)  # the same words are stemmed for every claim and passage
def stem(word: str) -> str:
    """A light suffix-stripping stem: "arrangements" / "arranged" / "arranging" -> "arrang"."""
    w = fold(word).replace("'s", "").strip("'")
    if len(w) <= 3:
        return w
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]  # "stopped" -> "stopp" -> "stop"
    w = w.rstrip("e") if len(w) > 4 else w
    # British and American spellings stem alike: "paralysed" / "paralyzed", "organise" /
    # "organize", "colour" / "color"
    if len(w) > 5 and w[-2:] in ("iz", "yz"):
        w = w[:-1] + "s"
    elif len(w) > 5 and w.endswith("our"):
        w = w[:-2] + "r"
    return w
