"""Sentence, clause and segment splitting, with character offsets (no model needed).

References are cut into *segments* of at most ``size`` words made of whole sentences (a sentence
longer than ``size`` is cut into word windows). Segments are what a checker reads for one claim;
the sentences inside them are the *spans* evidence is localised to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "Segment",
    "Span",
    "iter_sentences",
    "segment_references",
    "split_clauses",
    "split_sentences",
]

# A sentence ends at . ! ? (optionally followed by a closing quote/bracket) and white space, or
# at a line break. Tokenised corpora write "word ." with a space, which this accepts too.
# (?<!\s): a line-break match may only start where a white-space run starts; "\s*\n+\s*" was
# retried at every position of a long run (quadratic: minutes on 100,000 spaces).
# Pasted-together passages ("... the band Whale.David Lee Roth is ...", "... founded in
# 1997.Your Pie is ...", '... called "Jane".First for ...') end a sentence at a period between
# a lower-case word, a number or a closing bracket or quote and a capitalised word, with no space.
_SENT_END = re.compile(
    r"""(?<=[.!?])["')\]]*\s+(?=\S)|(?<!\s)[^\S\n]*\n\s*"""
    r"""|(?<=[a-z\d)"”][a-z\d)"”][.!?])(?=[A-Z][a-z])"""
)
# Longest text an abbreviation check needs to see before a boundary ("Prof." and a word break).
_ABBREV_WINDOW = 16
# Common abbreviations that end with a period but do not end a sentence; a capital alone is an
# initial ("J. Smith"), but not a scale of degrees ("at 45 °C. At 25 °C ...").
_ABBREV = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|No|Inc|Ltd|Co|Corp|Gov|Sen|Rep|"
    r"c|ca|approx|"
    r"Gen|Col|Lt|Capt|Sgt|Rev|Mt|Ft|Rt|Hon|Maj|Brig|Adm|Cdr|Fr|Pres|Jan|Feb|Apr|Aug|Sept?|Oct|Nov|Dec|v)|(?<!°)\b[A-Z])\.$"
)
# A list item's marker ("- ", "* ", "• ") is no part of what the item says.
_BULLET = re.compile(r"[-*•–]\s+")
# "a.m." / "p.m." end a sentence only before a capitalised word that is not a time zone.
_CLOCK = re.compile(r"\b[ap]\.m\.$", re.IGNORECASE)
_CAPITALISED = re.compile(r"[A-Z](?![A-Z]{1,4}\b)")
# Longest quotation a sentence boundary is held back inside.
_QUOTE_SPAN = 300


def _in_quotation(text: str, start: int, at: int) -> bool:
    """Whether ``at`` falls inside a double quotation opened since ``start`` and closed within
    :data:`_QUOTE_SPAN` characters (an unclosed quote mark never holds a boundary back)."""
    piece = text[max(start, at - _QUOTE_SPAN) : at]
    curly = piece.count("“") - piece.count("”")
    straight = piece.count('"') % 2
    if curly <= 0 and not straight:
        return False
    after = text[at : at + _QUOTE_SPAN]
    return ("”" in after) if curly > 0 else ('"' in after)


# Clause boundaries: semicolons, and a comma before a coordinating or relative connective.
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|which|who)\s)", re.IGNORECASE)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Span:
    """A piece of a text, with its character offsets in that text."""

    text: str
    start: int
    end: int


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentences; offsets index into ``text``."""
    return list(iter_sentences(text))


def iter_sentences(text: str) -> Iterator[Span]:
    """:func:`split_sentences` one sentence at a time (a long text can be left half-read)."""
    spans: list[Span] = []
    start = 0
    for m in _SENT_END.finditer(text):
        # only the end of the piece matters: re-reading a growing piece was quadratic
        tail = text[max(start, m.start() - _ABBREV_WINDOW) : m.start()].rstrip()
        if tail and _ABBREV.search(tail):
            continue  # "Dr. Smith": not a boundary
        if tail and _CLOCK.search(tail) and not _CAPITALISED.match(text, m.end()):
            continue  # "10:31 p.m. BST", "at 9 a.m. on": the time goes on
        if _in_quotation(text, start, m.end()):
            continue  # 'He said "Stop. Now." and left': one sentence
        between = text[m.start() : m.end()]
        if text[m.end() : m.end() + 1].islower() and ("\n" not in between or between.strip()):
            # a sentence opens with a capital: "Warner Bros. bought it", "5 ft. tall", and a
            # quotation closed mid-sentence goes on ('"Stop." and left'); a line break does end
            # one, as list items do
            continue
        _append(spans, text, start, m.start())
        start = m.end()
        yield from spans
        spans.clear()
    _append(spans, text, start, len(text))
    yield from spans


def _append(spans: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    bullet = _BULLET.match(piece, lead)
    if bullet is not None and bullet.end() < len(piece.rstrip()):
        lead, stripped = bullet.end(), piece[bullet.end() :].strip()
    spans.append(Span(stripped, start + lead, start + lead + len(stripped)))


def split_clauses(sentence: str, *, min_words: int = 4) -> list[str]:
    """Split one sentence at clause boundaries, keeping every piece at least ``min_words`` long.

    A piece shorter than ``min_words`` is glued back to its neighbour, so a list such as
    "red, green and blue" stays one claim.
    """
    pieces = [p.strip() for p in _outside_brackets(sentence) if p and p.strip()]
    merged: list[str] = []
    for piece in pieces:
        if merged and (
            len(piece.split()) < min_words
            or len(merged[-1].split()) < min_words
            or _last_item(merged[-1], piece)
        ):
            merged[-1] = f"{merged[-1]}, {piece}"
        else:
            merged.append(piece)
    return merged or ([sentence.strip()] if sentence.strip() else [])


def _outside_brackets(sentence: str) -> list[str]:
    """``sentence`` cut at each clause boundary that no bracket or double quotation holds open:
    "(for example, which chamber it's in)" is one aside of its clause, not a clause."""
    pieces, start = [], 0
    for m in _CLAUSE.finditer(sentence):
        before = sentence[: m.start()]
        brackets = before.count("(") + before.count("[") - before.count(")") - before.count("]")
        if brackets > 0 or _in_quotation(sentence, 0, m.start()):
            continue
        pieces.append(sentence[start : m.start()])
        start = m.end()
    return [*pieces, sentence[start:]]


_LIST_ITEM_WORDS = 4
"""Most words of an item in a series ("A, B, and C"): a clause is longer."""


def _last_item(before: str, piece: str) -> bool:
    """Whether ``piece`` ("and C") ends the series ``before`` leads ("three: A, B"): the item
    before it is short and follows a comma or a colon, so ", and" joins items, not clauses."""
    if not piece.casefold().startswith("and "):
        return False
    at = max(before.rfind(","), before.rfind(":"))
    return at >= 0 and len(before[at + 1 :].split()) <= _LIST_ITEM_WORDS


@dataclass(frozen=True)
class Segment:
    """A passage of one reference, made of whole sentences where possible."""

    reference: int
    """Index of the reference the segment comes from."""
    start: int
    """Character offset of the segment in its reference."""
    end: int
    """End offset (exclusive)."""
    text: str
    """The segment's text."""
    spans: tuple[Span, ...]
    """Its sentences, with offsets in the reference (for evidence localisation)."""


def _windows(sentence: Span, size: int) -> list[Span]:
    words = list(_WORD.finditer(sentence.text))
    out = []
    for i in range(0, len(words), size):
        chunk = words[i : i + size]
        s, e = chunk[0].start(), chunk[-1].end()
        out.append(Span(sentence.text[s:e], sentence.start + s, sentence.start + e))
    return out


def segment_references(references: list[str], *, size: int = 80) -> list[Segment]:
    """Cut each reference into segments of at most ``size`` words of whole sentences.

    Args:
        references: The reference texts.
        size: Most words per segment; a longer sentence is cut into ``size``-word windows.

    Returns:
        The segments of every reference, in order.
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    segments: list[Segment] = []
    for r, ref in enumerate(references):
        units: list[Span] = []
        for sentence in split_sentences(ref):
            if len(sentence.text.split()) > size:
                units.extend(_windows(sentence, size))
            else:
                units.append(sentence)
        group: list[Span] = []
        words = 0
        for unit in [*units, None]:
            n = len(unit.text.split()) if unit is not None else 0
            if group and (unit is None or words + n > size):
                s, e = group[0].start, group[-1].end
                segments.append(Segment(r, s, e, ref[s:e], tuple(group)))
                group, words = [], 0
            if unit is not None:
                group.append(unit)
                words += n
    return segments
