"""Parser of the generator's (intentionally wrong, corrected) answer pairs. Pure functions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from truthguard.errors import InvalidLLMOutput

__all__ = ["IWCOPairs", "parse_iwco_pairs"]

# A label that opens one half of a pair, at the start of a line (after bullets, numbering and
# markdown emphasis) or after a "|" on a one-line pair. Corrected labels come first so that
# "Non-wrong answer:" is not read as "wrong answer:".
_MARKER = re.compile(
    r"(?:^|(?<=\|))[ \t>*\-•]*"
    r"(?:\(?\d{1,3}\s*[.):\]]?\)?[ \t]*)?"
    r"(?:\*\*|__)?[ \t]*"
    r"(?:(?P<co>non[- ]?wrong|not[ \t]+wrong|corrected|correction|correct|right|true|co)"
    r"|(?P<iw>intentionally[ \t]+wrong|wrong|incorrect|false|iw))"
    r"(?:[ \t]+(?:answer|statement|version|response|claim))?"
    r"(?:[ \t]*#?\d{1,3})?"
    r"[ \t]*(?:\*\*|__)?[ \t]*[:：\-–—][ \t]*(?:\*\*|__)?",
    re.IGNORECASE | re.MULTILINE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


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
    after the pairs.

    Args:
        text: The model's reply.
        limit: Keep at most this many pairs (the first ones).
        min_pairs: Fewest valid pairs accepted.
        stage: Stage name for the error.

    Raises:
        InvalidLLMOutput: Fewer than ``min_pairs`` complete pairs were found (keeps the raw text).
    """
    markers = list(_MARKER.finditer(text))
    halves: list[tuple[str, str]] = []
    for i, m in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(text)
        kind = "co" if m.group("co") else "iw"
        halves.append((kind, _clean(text[m.end() : end])))
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
            f"found {len(pairs)} complete wrong/corrected pairs, need at least {min_pairs}",
            raw=text,
            stage=stage,
        )
    return IWCOPairs(pairs=pairs, dropped=dropped)
