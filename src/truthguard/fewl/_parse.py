"""Parsers of FEWL's model outputs: reference answers and (wrong, corrected) pairs. Pure functions.

Both run in time linear in the reply: markers are found line by line with small anchored
patterns (no quantifiers over the same characters side by side), at most
:data:`~truthguard._text.MAX_SCAN` characters are read, and every answer and pair half passes
:func:`~truthguard._text.has_content`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from truthguard._text import capped, has_content, require_content, scan_note
from truthguard.errors import InvalidLLMOutput

__all__ = ["IWCOPairs", "parse_iwco_pairs", "parse_reference_answer", "settled_halves"]

# A half of a pair opens with a label at the start of a line (after bullets, numbering and
# markdown emphasis) or after a "|" on a one-line pair. Bullets and emphasis are skipped with
# str.lstrip, then these anchored patterns run once per line start: one regex over the whole
# layout retried its overlapping white-space runs at every line (cubic on long blank runs).
# Corrected labels come first so that "Non-wrong answer:" is not read as "wrong answer:".
_LEAD = " \t>*-\u2022"
_EMPHASIS = " \t*_"
_NUMBER = re.compile(r"\(?\d{1,3}[ \t]*[.):\]]?\)?")
_LABEL = re.compile(
    r"(?:(?P<co>non[- ]?wrong|not[ \t]+wrong|corrected|correction|correct|right|true|co)"
    r"|(?P<iw>intentionally[ \t]+wrong|wrong|incorrect|false|iw))"
    r"(?:[ \t]+(?:answer|statement|version|response|claim))?"
    r"(?:[ \t]*#?\d{1,3})?"
    r"[ \t*_]*[:：\-–—]",
    re.IGNORECASE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _skip(text: str, i: int, chars: str, end: int) -> int:
    while i < end and text[i] in chars:
        i += 1
    return i


def _marker_at(text: str, i: int, end: int) -> tuple[str, int] | None:
    """``(kind, end of the label)`` when a pair label opens at ``text[i]``, else None."""
    i = _skip(text, i, _LEAD, end)
    num = _NUMBER.match(text, i, end)
    if num is not None:
        i = num.end()
    i = _skip(text, i, _EMPHASIS, end)
    m = _LABEL.match(text, i, end)
    if m is None:
        return None
    return ("co" if m.group("co") else "iw"), m.end()


def _markers(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every pair label, in order."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        starts = [pos]
        bar = text.find("|", pos, end)
        while bar >= 0:
            starts.append(bar + 1)
            bar = text.find("|", bar + 1, end)
        for s in starts:
            found = _marker_at(text, s, end)
            if found is not None:
                out.append((s, found[1], found[0]))
        if nl < 0:
            break
        pos = nl + 1
    return out


@dataclass(frozen=True)
class IWCOPairs:
    """Parsed pairs and how many halves had to be dropped.

    Attributes:
        pairs: ``(wrong, corrected)`` answers, in the order the model wrote them.
        dropped: Halves without a partner (or empty) that were skipped.
    """

    pairs: list[tuple[str, str]]
    dropped: int

    @property
    def wrong(self) -> list[str]:
        return [w for w, _ in self.pairs]

    @property
    def corrected(self) -> list[str]:
        return [c for _, c in self.pairs]


def _clean(segment: str) -> str:
    segment = _BLANK_LINE.split(segment.strip(), maxsplit=1)[0]  # chatter after a blank line
    segment = segment.strip().rstrip("|").strip().strip("*_").strip()
    return " ".join(segment.split())


def parse_iwco_pairs(
    text: str, *, limit: int | None = None, min_pairs: int = 1, stage: str = "fewl.iwco"
) -> IWCOPairs:
    """Extract (wrong, corrected) pairs from the generator's reply.

    Tolerates numbering drift (pairs are matched by adjacency, not by their numbers), label
    variants ("Wrong answer 3:", "**Corrected:**", "Non-wrong answer:"), multi-line halves,
    one-line pairs separated by ``|``, missing halves (skipped) and chatter before, between or
    after the pairs. A half without content ("...", an echoed "<false answer>") counts as
    missing.

    Args:
        text: The model's reply.
        limit: Keep at most this many pairs (the first ones).
        min_pairs: Fewest valid pairs accepted.
        stage: Stage name for the error.

    Raises:
        InvalidLLMOutput: Fewer than ``min_pairs`` complete pairs were found (keeps the raw text).
    """
    full = text
    text, cut = capped(text)
    markers = _markers(text)
    halves: list[tuple[str, str]] = []
    for i, (_, label_end, kind) in enumerate(markers):
        end = markers[i + 1][0] if i + 1 < len(markers) else len(text)
        content = _clean(text[label_end:end])
        halves.append((kind, content if has_content(content) else ""))
    pairs: list[tuple[str, str]] = []
    dropped = 0
    pending: str | None = None
    for kind, content in halves:
        if kind == "iw":
            if pending is not None:
                dropped += 1  # a wrong answer without its correction
            pending = content or None
            if not content:
                dropped += 1
        elif pending is not None and content:
            pairs.append((pending, content))
            pending = None
        else:
            dropped += 1  # a correction without a wrong answer before it, or empty
    if pending is not None:
        dropped += 1
    if limit is not None:
        pairs = pairs[:limit]
    if len(pairs) < min_pairs:
        raise InvalidLLMOutput(
            f"found {len(pairs)} complete wrong/corrected pairs, need at least {min_pairs}"
            + scan_note(cut),
            raw=full,
            stage=stage,
        )
    return IWCOPairs(pairs=pairs, dropped=dropped)


def settled_halves(text: str) -> list[str]:
    """The pair halves of a reply that is still streaming whose text can no longer change.

    A half ends where the next label starts, so every half but the last is settled; each comes
    out exactly as :func:`parse_iwco_pairs` will read it from the whole reply (empty halves and
    those without content are left out). Used to start work on the first pairs while the model
    is still writing the others.
    """
    text, _ = capped(text)
    markers = _markers(text)
    out: list[str] = []
    for i in range(len(markers) - 1):
        content = _clean(text[markers[i][1] : markers[i + 1][0]])
        if has_content(content):
            out.append(content)
    return out


def parse_reference_answer(text: str, *, stage: str = "fewl.reference", source: str = "") -> str:
    """A reference model's answer, stripped, once it passes the "has content" rule.

    Args:
        text: The model's reply.
        stage: Stage name for the error.
        source: Which model / sample answered, for the reason.

    Raises:
        InvalidLLMOutput: The answer is empty, punctuation only or a placeholder ("N/A").
    """
    what = f"reference answer of {source}" if source else "reference answer"
    return require_content(text, what=what, stage=stage, raw=text)
