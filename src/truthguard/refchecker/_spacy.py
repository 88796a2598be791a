"""spaCy's memory and start: imported without torch and without its command line, and
parsing inside memory zones.

The small English pipeline runs on numpy alone. thinc, spaCy's machine-learning layer,
imports torch at its own import whenever torch is installed (for its optional torch-backed
models), which adds about 180 MiB to the process although the pipeline never calls it. Unless
torch is loaded already, thinc is imported while ``import torch`` fails, so it records torch as
absent; torch stays importable afterwards for anything else. A process whose own spaCy
pipelines need torch (spacy-transformers) imports torch, or spaCy, before truthguard's first
parse.

spaCy's package imports its command line (typer, weasel, requests and more) only to re-export
``spacy.info``: a fifth of a second of every cold start. While spaCy is imported here,
``spacy.cli`` is a placeholder whose ``info`` imports the real one when called; the placeholder
is gone afterwards, so ``import spacy.cli`` gives the real command line.

thinc keeps the backend a model runs on (numpy, on CPU) in a context variable, and a parse in a
context that has none looks the backends up again: thinc's registry of installed entry points
and imports of optional backends, about 1 ms. Every ``asyncio.to_thread`` call runs in a fresh
copy of its caller's context, so a check paid it about once; :class:`ZonedParser` sets the
backend its first parse found in such a context instead (thinc's own choice, made once).

Loading the pipeline: :func:`load` builds its tokenizer once instead of twice, and catalogue's
registries (spaCy's and thinc's) select their entry points once per group instead of at every
look-up.

A pipeline keeps every new word it reads (its strings, its lexeme, the lemmatizer's memo) for
the life of the process: about 3.5 KiB per parse of a sentence with a few new words, so a
service checking new references grows without end. :class:`ZonedParser` parses inside spaCy's
memory zones (``Language.memory_zone``, spaCy 3.8) and closes a zone, freeing what its parses
added, once no Doc made in it is held any more.
"""

from __future__ import annotations

import importlib
import sys
import threading
import weakref
from collections.abc import Callable
from contextlib import ExitStack
from types import ModuleType
from typing import Any

__all__ = ["ZONE_STRINGS", "ZonedParser", "load", "without_torch"]

_LOCK = threading.Lock()


def _info(*args: Any, **kwargs: Any) -> Any:
    """``spacy.info``, from spaCy's command line imported at the first call."""
    from spacy.cli.info import info

    return info(*args, **kwargs)


def _placeholders() -> dict[str, ModuleType]:
    """``spacy.cli`` and ``spacy.cli.info`` as spaCy's import needs them: ``info`` alone."""
    cli = ModuleType("spacy.cli")
    cli.__path__ = []  # a package, so that its submodule can be found
    info = ModuleType("spacy.cli.info")
    info.info = _info  # type: ignore[attr-defined]
    cli.info = info  # type: ignore[attr-defined]
    return {"spacy.cli": cli, "spacy.cli.info": info}


def without_torch(name: str) -> ModuleType:
    """Import module ``name`` (spaCy) with thinc seeing no torch, unless either is loaded, and
    spaCy's command line left unimported (see above)."""
    with _LOCK:
        stand_ins = {} if "spacy" in sys.modules else _placeholders()
        for key, module in stand_ins.items():
            sys.modules.setdefault(key, module)
        blocked = "torch" not in sys.modules and "thinc" not in sys.modules
        if blocked:
            sys.modules["torch"] = None  # type: ignore[assignment]  # "import torch" fails here
        try:
            return importlib.import_module(name)
        finally:
            if blocked and sys.modules.get("torch", ...) is None:
                del sys.modules["torch"]
            for key, module in stand_ins.items():
                if sys.modules.get(key) is module:
                    del sys.modules[key]
            spacy = sys.modules.get("spacy")
            if stand_ins and getattr(spacy, "cli", None) is stand_ins["spacy.cli"]:
                delattr(spacy, "cli")
            _select_once()


ZONE_STRINGS = 20_000
"""A memory zone is closed once its parses have added this many strings (new words and their
forms: about 9 for a sentence with three new words, some 400 bytes each with their lexemes,
so about 8 MiB): what a zone holds stays small, and a workload whose texts recur adds no
strings, so its parses are never dropped for a zone."""

_RETRY = 64
"""Parses between tries to close a zone while one of its Docs is still held."""

_PRUNE = 4_096
"""The references to a zone's Docs are pruned of the freed ones when this many (or twice the
live ones at the last pruning) have accumulated."""


class ZonedParser:
    """Parse with a spaCy pipeline inside memory zones; each zone is closed once its parses
    have added :data:`ZONE_STRINGS` strings and no Doc it made is alive.

    A Doc made in a zone must never be read after the zone closes (its words are freed). Before
    closing, ``release`` is called: the owner drops every Doc it keeps (its memo of parses).
    A Doc that is still alive after that (a reader in another thread holds it, or one of its
    tokens or spans) keeps the zone open; the next :data:`_RETRY` parses go into it and the
    close is tried again. Docs hold no reference cycles, so a dropped one is freed at once.

    Not thread-safe: the owner serialises calls (one pipeline parses one text at a time).

    Args:
        nlp: A spaCy ``Language``.
        release: Drops every Doc this parser made that its owner still keeps.
        zone_strings: Strings a zone may add before it is closed.
    """

    def __init__(
        self, nlp: Any, release: Callable[[], None], zone_strings: int = ZONE_STRINGS
    ) -> None:
        self.nlp = nlp
        self.release = release
        self.zone_strings = zone_strings
        self.closed = 0
        """Zones closed so far."""
        self.deferred = 0
        """Tries to close a zone that found one of its Docs still held."""
        self._zone: ExitStack | None = None
        self._docs: list[weakref.ref[Any]] = []
        self._opened_at = 0  # strings in the store when the zone opened
        self._retry_in = 0  # parses before the next try to close a zone whose Doc was held
        self._prune_at = _PRUNE
        self._keep_ops: Callable[[], None] | None = None

    def __call__(self, text: str) -> Any:
        return self.pipe([text])[0]

    def pipe(self, texts: list[str]) -> list[Any]:
        """The Docs of ``texts``, parsed together (spaCy's ``Language.pipe``: the same parses as
        one at a time, in about a third of the time for a batch of sentences)."""
        if self._zone is not None:
            if self._retry_in:
                self._retry_in = max(self._retry_in - len(texts), 0)
                if not self._retry_in:
                    self._close()
            elif len(self.nlp.vocab.strings) - self._opened_at >= self.zone_strings:
                self._close()
        if self._zone is None:
            self._open()
        if self._keep_ops is None:
            self._keep_ops = _ops_keeper()
        self._keep_ops()
        docs = [self.nlp(texts[0])] if len(texts) == 1 else list(self.nlp.pipe(texts))
        self._docs += [weakref.ref(doc) for doc in docs]
        if len(self._docs) >= self._prune_at:  # texts that recur add no strings: a long zone
            self._docs = [ref for ref in self._docs if ref() is not None]
            self._prune_at = max(_PRUNE, 2 * len(self._docs))
        return docs

    def _open(self) -> None:
        zone = ExitStack()
        zone.enter_context(self.nlp.memory_zone())
        self._zone = zone
        self._docs = []
        self._prune_at = _PRUNE
        self._opened_at = len(self.nlp.vocab.strings)

    def _close(self) -> None:
        self.release()
        self._docs = [ref for ref in self._docs if ref() is not None]
        if self._docs:  # held elsewhere: reading it after the close would read freed words
            self.deferred += 1
            self._retry_in = _RETRY
            return
        assert self._zone is not None
        self._zone.close()
        self._zone = None
        for _, pipe in self.nlp.pipeline:  # the lemmatizer's memo of forms, keyed by word
            memo = getattr(pipe, "cache", None)
            if isinstance(memo, dict):
                memo.clear()
        self.closed += 1


def _ops_keeper() -> Callable[[], None]:
    """A function that sets thinc's current backend, the one found now, in a context that has
    none (see above); it does nothing where thinc's backends are not where this thinc keeps
    them."""
    try:
        from thinc.backends import context_ops, get_current_ops, set_current_ops
    except ImportError:  # pragma: no cover - another thinc: it looks its backend up itself
        return lambda: None
    ops = get_current_ops()

    def keep() -> None:
        if context_ops.get() is None:
            set_current_ops(ops)

    return keep


_EMPTY_TOKENIZER = "truthguard.empty_tokenizer.v1"


def _empty_tokenizer() -> Callable[[Any], Any]:
    from spacy.tokenizer import Tokenizer

    return lambda nlp: Tokenizer(nlp.vocab)


def load(spacy: ModuleType, name: str, **kwargs: Any) -> Any:
    """``spacy.load(name, **kwargs)``, the tokenizer built once.

    spaCy builds the language's default tokenizer first (1,300 special cases, three regular
    expressions compiled) and then replaces every part of it with the package's own; here the
    first one is an empty tokenizer, so only the package's is built (a tenth of a CPU second).
    A package that brings no tokenizer rules is loaded as spaCy loads it.
    """
    if _EMPTY_TOKENIZER not in spacy.registry.tokenizers:
        spacy.registry.tokenizers.register(_EMPTY_TOKENIZER, func=_empty_tokenizer)
    nlp = spacy.load(
        name, config={"nlp": {"tokenizer": {"@tokenizers": _EMPTY_TOKENIZER}}}, **kwargs
    )
    if not nlp.tokenizer.rules:
        return spacy.load(name, **kwargs)
    return nlp


class _EntryPoints:
    """catalogue's installed entry points, each group's selection made once.

    catalogue (spaCy's and thinc's registries) reads the installed entry points once, at its
    import, and then filters all of them again at every registry look-up: about 180 look-ups
    while spaCy loads a pipeline (some 40 ms), one in thinc's backend look-up. The entry points
    do not change after catalogue has read them, so a group's selection is kept here.
    """

    def __init__(self, entry_points: Any) -> None:
        self.entry_points = entry_points
        self._groups: dict[str, Any] = {}

    def select(self, **params: Any) -> Any:
        if list(params) != ["group"]:
            return self.entry_points.select(**params)
        group = params["group"]
        found = self._groups.get(group)
        if found is None:
            found = self._groups[group] = self.entry_points.select(group=group)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.entry_points, name)


def _select_once() -> None:
    """catalogue's entry points wrapped in :class:`_EntryPoints`, once it is imported."""
    catalogue = sys.modules.get("catalogue")
    entry_points = getattr(catalogue, "AVAILABLE_ENTRY_POINTS", None)
    if entry_points is None or isinstance(entry_points, _EntryPoints):
        return
    if callable(getattr(entry_points, "select", None)):
        catalogue.AVAILABLE_ENTRY_POINTS = _EntryPoints(entry_points)  # type: ignore[union-attr]
