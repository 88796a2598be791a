"""Lemmas of a word under each part of speech (lemminflect, the local extra), looked up once."""

from __future__ import annotations

import bisect
import functools
import gzip
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType, ModuleType

from truthguard.refchecker._spacy import without_torch

__all__ = ["lemmas"]

_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1 << 15)  # the same words recur in every claim and passage
def lemmas(word: str) -> Mapping[str, tuple[str, ...]]:
    """``word``'s lemmas by part of speech ("wrote" -> {"VERB": ("write",)}); empty for a word
    the lexicon does not know. Read-only: the mapping is shared by every caller."""
    return MappingProxyType(_lemminflect().getAllLemmas(word))


@functools.cache
def _lemminflect() -> ModuleType:
    # the local extra's; imported at the first check (it imports spaCy, so without torch)
    with _LOCK:  # the first look-ups of concurrent checks must read the table once
        module = without_torch("lemminflect")
        lemmatizer = module.Lemmatizer()  # the one instance every look-up goes through
        if not hasattr(lemmatizer, "lemma_dict"):  # not read yet: read it by word instead
            lemmatizer.lemma_dict = LemmaTable(lemmatizer.lemma_lu_fn)
    return module


class LemmaTable(Mapping[str, dict[str, tuple[str, ...]]]):
    """lemminflect's lemma table (word -> {part of speech: spellings}), each word's lines read
    when it is looked up.

    lemminflect parses the whole table (80,000 lines) into dictionaries at its first look-up,
    about a third of a CPU second of a cold start. Here its file is decompressed and split into
    lines once, the lines ordered for a binary search by word, and a word's lines (contiguous in
    that order, as each starts with the word and a comma) parsed with lemminflect's own codec in
    file order when it is asked for: the same mapping, about a tenth of the time to load.

    Args:
        path: The gzipped table (``word,category,spelling/spelling``, one line each).
    """

    def __init__(self, path: str) -> None:
        from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec
        from lemminflect.core.LexicalUtils import categoryToUPos

        self._parse_line = LemmaLUCodec.fromString
        self._upos = categoryToUPos
        with gzip.open(path, "rb") as f:
            lines = f.read().decode().split("\n")
        while lines and not lines[-1]:
            lines.pop()  # the file's last newline
        self._lines = lines
        self._order = sorted(range(len(lines)), key=lines.__getitem__)

    def _entry(self, word: str) -> dict[str, tuple[str, ...]] | None:
        prefix = f"{word},"
        lines, order = self._lines, self._order
        at = bisect.bisect_left(order, prefix, key=lines.__getitem__)
        found = []
        while at < len(order) and lines[order[at]].startswith(prefix):
            found.append(order[at])
            at += 1
        if not found:
            return None
        entry: dict[str, tuple[str, ...]] = {}
        for i in sorted(found):  # a later line of one part of speech wins, as in lemminflect
            _, category, forms = self._parse_line(lines[i])
            entry[self._upos(category)] = forms
        return entry

    def __getitem__(self, word: str) -> dict[str, tuple[str, ...]]:
        entry = self._entry(word) if "\n" not in word else None
        if entry is None:
            raise KeyError(word)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(self._parse_line(line)[0] for line in self._lines))

    def __len__(self) -> int:
        return sum(1 for _ in self)
