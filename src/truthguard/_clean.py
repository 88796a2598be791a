"""Text made safe for every backend (tokenizers, JSON, SQLite, Chroma); no truthguard imports.

A leaf module so that any layer (detector inputs, model outputs in ``llm``, sinks) can use it.
"""

from __future__ import annotations

import re

__all__ = ["clean_text"]

# Lone surrogates (a JSON "\ud800" escape decodes to one) cannot be encoded as UTF-8, so
# tokenizers, sinks and stores reject them; C0 controls other than tab / newline / carriage
# return carry no text and NUL truncates strings in C libraries.
_UNENCODABLE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_text(text: str) -> str:
    r"""``text`` made safe for every backend: lone surrogates become U+FFFD, controls are dropped.

    A valid surrogate pair is joined into its character. Tab, newline and carriage return are
    kept; every other C0 control character and DEL is removed. Applied once, where text enters
    a detector, a guard, the handler or the selector.

    Example:
        >>> clean_text("Dubai \ud800 is\x00 in the UAE.") == "Dubai \ufffd is in the UAE."
        True
    """
    if len(text) > _PIECE:
        return _clean_long(text)
    if text.isascii():
        return _CONTROL.sub("", text) if _CONTROL.search(text) else text
    if _UNENCODABLE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _CONTROL.sub("", text)


_PIECE = 1 << 18
"""Characters per regex call on a long text: each call holds the GIL, so a long text cleaned
on a worker thread never keeps the event loop's thread waiting for long."""


def _clean_long(text: str) -> str:
    """:func:`clean_text` for a long text, one bounded regex call at a time (same result)."""
    starts = range(0, len(text), _PIECE)
    if any(_UNENCODABLE.search(text, i, i + _PIECE) for i in starts):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        starts = range(0, len(text), _PIECE)
    if not any(_CONTROL.search(text, i, i + _PIECE) for i in starts):
        return text
    return "".join(_CONTROL.sub("", text[i : i + _PIECE]) for i in starts)
