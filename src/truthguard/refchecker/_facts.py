"""Hard facts of a text (numbers, dates, names, quoted titles, negations), normalised, with offsets.

Everything here is rule-based and written to English, not to any data set:

* numbers in digits ("1,200", "3.5", "1.2 million", "11th", "1960s"), in words ("twelve",
  "two hundred and five", "twenty-first", "eleventh"), with a unit when one follows or precedes
  ("$", "%", "percent", "km", ...): "1,200" = "1200" = "one thousand two hundred";
* dates: month names are facts of their own ("August" = "Aug." = month 8), and numeric dates
  ("2021-08-19", "19/08/2021", "8/19/2021") break down into year, month and day;
* proper names: capitalised words (not function words, not a sentence's first word unless it is
  capitalised mid-text too), all-caps acronyms and initials;
* quoted titles: text between quotation marks;
* negation cues: not, n't, never, no, none, nothing, nobody, neither, nor, without.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from truthguard.refchecker.lexical import STOPWORDS

__all__ = [
    "FUNCTION_WORDS",
    "Fact",
    "Token",
    "extract_facts",
    "fold",
    "negations",
    "stem",
    "tokenize",
]


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


_WORD = re.compile(
    r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s)?|[^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?|[$£€¥%]", re.UNICODE
)


def fold(text: str) -> str:
    """Case-fold and strip accents ("Lajčák" -> "lajcak"), unify apostrophes."""
    text = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()


def tokenize(text: str) -> list[Token]:
    """Word tokens with offsets; a trailing period is kept only on initials and abbreviations."""
    out = []
    for m in _WORD.finditer(text):
        s, e = m.start(), m.end()
        word = m.group()
        if word.endswith(".") and len(word) > 2 and not re.fullmatch(r"(?:[A-Za-z]\.)+", word):
            e -= 1  # a sentence's last word, not an abbreviation
            word = word[:-1]
        out.append(Token(word, s, e, fold(word)))
    return out


_SUFFIXES = (
    "ational",
    "ization",
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
    return w.rstrip("e") if len(w) > 4 else w


# -- numbers -------------------------------------------------------------------------------------

_UNITS_W = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS_W = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ORD_W = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
    "fortieth": 40,
    "fiftieth": 50,
    "sixtieth": 60,
    "seventieth": 70,
    "eightieth": 80,
    "ninetieth": 90,
    "hundredth": 100,
    "thousandth": 1000,
}
_SCALES = {
    "hundred": 100,
    "thousand": 1_000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
    "trillion": 1_000_000_000_000,
    "dozen": 12,
}
_SCALE_ABBR = {"k": 1_000, "m": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000, "b": 1_000_000_000}
_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
_MONTH_ABBR = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_UNIT_ALIASES = {
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "percentage": "%",
    "$": "$",
    "dollar": "$",
    "dollars": "$",
    "usd": "$",
    "us$": "$",
    "£": "£",
    "pound": "£",
    "pounds": "£",
    "gbp": "£",
    "€": "€",
    "euro": "€",
    "euros": "€",
    "eur": "€",
    "¥": "¥",
    "yen": "¥",
    "km": "km",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "m": "m",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "cm": "cm",
    "centimetre": "cm",
    "centimetres": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "in": "in",
    "inch": "in",
    "inches": "in",
    "kg": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "lb": "lb",
    "lbs": "lb",
    "pound-weight": "lb",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "year": "year",
    "years": "year",
    "month": "month",
    "months": "month",
    "day": "day",
    "days": "day",
    "hour": "hour",
    "hours": "hour",
    "minute": "minute",
    "minutes": "minute",
    "century": "century",
    "centuries": "century",
}


def _number_value(word: str) -> tuple[float, str | None] | None:
    """Value of one numeric token ("1,200", "11th", "1960s", "3.5") and its kind of suffix."""
    m = re.fullmatch(r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(st|nd|rd|th|s)?", word)
    if not m:
        return None
    value = float(m.group(1).replace(",", ""))
    suffix = m.group(2)
    return value, ("decade" if suffix == "s" else "ordinal" if suffix else None)


def _word_number(tokens: list[Token], i: int) -> tuple[float, int] | None:
    """A number written in words starting at token ``i``: (value, tokens used)."""
    total, current, used, seen = 0.0, 0.0, 0, False
    j = i
    while j < len(tokens):
        parts = tokens[j].norm.split("-")
        ok = True
        for p in parts:
            if p in _UNITS_W:
                current += _UNITS_W[p]
            elif p in _TENS_W:
                current += _TENS_W[p]
            elif p in _ORD_W:
                current += _ORD_W[p] if _ORD_W[p] < 100 else 0
                current = current * _ORD_W[p] if _ORD_W[p] >= 100 else current
            elif p in _SCALES and (seen or p == "dozen"):
                if p == "dozen":
                    current = (current or 1) * 12
                elif _SCALES[p] == 100:
                    current = (current or 1) * 100
                else:
                    total += (current or 1) * _SCALES[p]
                    current = 0
            else:
                ok = False
                break
            seen = True
        if not ok:
            if seen and j == i and parts[0] and parts[0] not in _SCALES:
                used = 1  # "two-day", "one-off": the number word leads a compound
            break
        j += 1
        used = j - i
        if parts[-1] in _ORD_W:
            break  # an ordinal ends the number
        # "two hundred and five": "and" joins only when a number word follows
        if j + 1 < len(tokens) and tokens[j].norm == "and" and _is_number_word(tokens[j + 1].norm):
            j += 1
    if not seen or used == 0:  # "one-" and the like: no whole number word
        return None
    return total + current, used


def _is_number_word(norm: str) -> bool:
    return all(
        p in _UNITS_W or p in _TENS_W or p in _ORD_W or p in _SCALES for p in norm.split("-")
    )


def _unit_after(tokens: list[Token], j: int) -> tuple[str | None, int]:
    if j < len(tokens):
        two = f"{tokens[j].norm} {tokens[j + 1].norm}" if j + 1 < len(tokens) else ""
        if two in _UNIT_ALIASES:
            return _UNIT_ALIASES[two], 2
        if tokens[j].norm in _UNIT_ALIASES:
            return _UNIT_ALIASES[tokens[j].norm], 1
    return None, 0


_NUM_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b|\b(\d{1,2})/(\d{1,2})/(\d{2,4})\b")


def _numeric_dates(text: str) -> tuple[list[Fact], list[tuple[int, int]]]:
    facts: list[Fact] = []
    spans = []
    for m in _NUM_DATE.finditer(text):
        spans.append((m.start(), m.end()))
        if m.group(1):
            y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
            facts += [
                Fact("number", float(y), m.start(1), m.end(1), m.group(1)),
                Fact("month", mo, m.start(2), m.end(2), m.group(2)),
                Fact("number", float(d), m.start(3), m.end(3), m.group(3)),
            ]
        else:
            a, b, y = int(m.group(4)), int(m.group(5)), int(m.group(6))
            if y < 100:
                y += 2000 if y < 50 else 1900
            facts.append(Fact("number", float(y), m.start(6), m.end(6), m.group(6)))
            # day/month order is ambiguous: each part is a number that may be a month
            for g, v in ((4, a), (5, b)):
                alt = frozenset({("month", v)}) if v <= 12 else frozenset()
                facts.append(Fact("number", float(v), m.start(g), m.end(g), m.group(g), None, alt))
    return facts, spans


def covered(tokens: list[Token], spans: list[Any]) -> set[int]:
    """Indices of the tokens starting inside one of ``spans`` (objects with start / end)."""
    import bisect

    starts = [t.start for t in tokens]
    out: set[int] = set()
    for sp in spans:
        lo = bisect.bisect_left(starts, sp.start)
        hi = bisect.bisect_left(starts, sp.end)
        out.update(range(lo, hi))
    return out


def _numbers(text: str, tokens: list[Token], skip: list[tuple[int, int]]) -> list[Fact]:
    facts: list[Fact] = []
    skip_idx = covered(tokens, [Fact("span", None, s, e, "") for s, e in skip])
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if skip_idx and i in skip_idx:
            i += 1
            continue
        parsed = _number_value(tok.text)
        used = 1
        if parsed is not None:
            value, suffix = parsed
        else:
            wn = _word_number(tokens, i)
            if wn is None:
                i += 1
                continue
            value, used = wn
            suffix = None
        j = i + used
        # a scale word after digits: "1.2 million", "3 bn"
        if parsed is not None and j < len(tokens):
            nxt = tokens[j].norm
            if nxt in _SCALES and nxt != "dozen":
                value *= _SCALES[nxt]
                j += 1
            elif nxt in _SCALE_ABBR and tokens[j].start == tokens[j - 1].end:
                value *= _SCALE_ABBR[nxt]
                j += 1
        unit = "decade" if suffix == "decade" else None
        before = tokens[i - 1].norm if i > 0 else ""
        if before in ("$", "£", "€", "¥", "us$") and tokens[i - 1].end >= tok.start - 1:
            unit = _UNIT_ALIASES[before]
        if unit is None:
            unit, _ = _unit_after(tokens, j)
            if unit == "in":
                unit = None  # "in" is a preposition far more often than inches
        start, end = tok.start, tokens[j - 1].end
        facts.append(Fact("number", value, start, end, text[start:end], unit))
        i = j
    return facts


# -- names, titles, negation ---------------------------------------------------------------------

_CONNECTIVES = frozenset(
    [
        "after",
        "before",
        "during",
        "since",
        "until",
        "while",
        "if",
        "because",
        "although",
        "though",
        "however",
        "upon",
        "within",
        "without",
        "between",
        "among",
    ]
)
"""Conjunctions and prepositions that are function words beyond :data:`.lexical.STOPWORDS`."""
# Capitalised, these are never names. "One" and "Having" stay possible names ("One Direction").
FUNCTION_WORDS = (STOPWORDS - {"one", "having"}) | _CONNECTIVES
"""Function words: never a name when capitalised, never a content word (see grounding)."""
_TITLE = re.compile(r"[\"“”«](.{2,120}?)[\"“”»]|``\s*(.{2,120}?)\s*''|(?<!\w)'([^']{2,80}?)'(?!\w)")
_NEG = frozenset(
    ["not", "never", "no", "none", "nothing", "nobody", "neither", "nor", "without", "cannot"]
)


def negations(tokens: list[Token]) -> list[int]:
    """Indices of negation cues among ``tokens``."""
    return [
        i
        for i, t in enumerate(tokens)
        if t.norm in _NEG or t.norm.endswith("n't") or t.norm == "n't"
    ]


def _is_sentence_start(text: str, tokens: list[Token], i: int) -> bool:
    if i == 0:
        return True
    gap = text[tokens[i - 1].end : tokens[i].start]
    prev = tokens[i - 1].text
    return bool(re.search(r"[.!?:;\"“(\[]", gap)) or prev in (".", "!", "?")


def _names(text: str, tokens: list[Token], skip: set[int]) -> list[Fact]:
    facts = []
    for i, tok in enumerate(tokens):
        if i in skip or not tok.text[:1].isupper() or tok.norm in FUNCTION_WORDS:
            continue
        if tok.norm.rstrip(".") in _MONTHS or tok.norm.rstrip(".") in _MONTH_ABBR:
            continue
        if _is_number_word(tok.norm):
            continue
        if _is_sentence_start(text, tokens, i) and _common_opener(tok):
            # "Typically, ...": a capital there says nothing; such a word is a content word
            continue
        facts.append(
            Fact("name", tok.norm.rstrip(".").removesuffix("'s"), tok.start, tok.end, tok.text)
        )
    return facts


_OPENERS = frozenset(
    [
        "although",
        "also",
        "and",
        "another",
        "because",
        "both",
        "but",
        "despite",
        "during",
        "each",
        "either",
        "even",
        "every",
        "finally",
        "first",
        "following",
        "furthermore",
        "further",
        "hence",
        "however",
        "including",
        "indeed",
        "initially",
        "instead",
        "later",
        "like",
        "many",
        "meanwhile",
        "moreover",
        "most",
        "much",
        "next",
        "now",
        "once",
        "one",
        "originally",
        "other",
        "others",
        "overall",
        "perhaps",
        "previously",
        "since",
        "some",
        "still",
        "subsequently",
        "such",
        "then",
        "there",
        "therefore",
        "these",
        "this",
        "those",
        "though",
        "thus",
        "today",
        "together",
        "unlike",
        "upon",
        "when",
        "whereas",
        "whether",
        "while",
        "with",
        "yet",
        "according",
        "after",
        "before",
        "along",
        "among",
        "around",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "into",
        "of",
        "on",
        "over",
        "through",
        "throughout",
        "to",
        "under",
        "until",
        "within",
        "without",
        "it",
        "its",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "his",
        "her",
        "their",
        "our",
        "my",
        "your",
        "several",
        "few",
    ]
)


def _common_opener(tok: Token) -> bool:
    # adverbs ("Typically") and openers carry their capital from the sentence, not from a name
    return tok.norm in _OPENERS or (tok.norm.endswith("ly") and len(tok.norm) > 4)


def _titles(text: str) -> list[Fact]:
    out = []
    for m in _TITLE.finditer(text):
        g = next(i for i in (1, 2, 3) if m.group(i) is not None)
        inner = m.group(g)
        if len(inner.split()) < 2 and not inner[:1].isupper():
            continue
        value = " ".join(t.norm for t in tokenize(inner))
        if value:
            out.append(Fact("title", value, m.start(g), m.end(g), inner))
    return out


def extract_facts(text: str, tokens: list[Token] | None = None) -> list[Fact]:
    """Every hard fact of ``text``, in text order."""
    tokens = tokenize(text) if tokens is None else tokens
    facts, date_spans = _numeric_dates(text)
    facts += _numbers(text, tokens, date_spans)
    for t in tokens:
        key = t.norm.rstrip(".")
        month = _MONTHS.get(key) or (_MONTH_ABBR.get(key) if t.text[:1].isupper() else None)
        if month and not (key == "may" and not t.text[0].isupper()):
            facts.append(Fact("month", month, t.start, t.end, t.text))
    numeric_idx = covered(tokens, facts)
    facts += _names(text, tokens, numeric_idx)
    facts += _titles(text)
    return sorted(facts, key=lambda f: (f.start, f.end))
