"""Lexical grounding: how many of a claim's content words occur in a passage (no model)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "content_recall", "content_words"]

_STOP_TEXT = """
a an the and or but nor of in on at to for from by with about as into onto over under
is are was were be been being am do does did has have had having it its this that these
those there here he she they them his her their we us our you your i me my not no so than
then too very can could would should will shall may might must also which who whom whose what
when where why how all any both each few more most other some such only own same just one
"""
STOPWORDS = frozenset(_STOP_TEXT.split())
"""Function words ignored by :func:`content_words`."""

_TOKEN = re.compile(r"\w+", re.UNICODE)


def content_words(text: str) -> set[str]:
    """Lower-cased word tokens of ``text`` without stop words."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return {t for t in _TOKEN.findall(text) if t not in STOPWORDS}


def content_recall(claim: str, passage: str) -> float:
    """Share of the claim's content words found in the passage (1.0 for a claim with none)."""
    words = content_words(claim)
    if not words:
        return 1.0
    return len(words & content_words(passage)) / len(words)
