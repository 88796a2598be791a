"""Lemmas of a word under each part of speech (lemminflect, the local extra), looked up once."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType, ModuleType

from truthguard.refchecker._spacy import without_torch

__all__ = ["lemmas"]


@functools.lru_cache(maxsize=1 << 15)  # the same words recur in every claim and passage
def lemmas(word: str) -> Mapping[str, tuple[str, ...]]:
    """``word``'s lemmas by part of speech ("wrote" -> {"VERB": ("write",)}); empty for a word
    the lexicon does not know. Read-only: the mapping is shared by every caller."""
    return MappingProxyType(_lemminflect().getAllLemmas(word))


@functools.cache
def _lemminflect() -> ModuleType:
    # the local extra's; imported at the first check (it imports spaCy, so without torch)
    return without_torch("lemminflect")
