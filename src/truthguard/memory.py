"""One memory budget for the process-wide caches of the local checkers, in bytes.

The local RefChecker keeps what it computed for texts it may see again: embedding vectors,
the encoder's last hidden states, spaCy parses, token analyses, the soft matcher's token
vectors, and what each reference is cut into (its segments, its pool of evidence, the index of
its sentences by word). Each of these caches takes a fixed share of one budget, counts the
approximate bytes of its entries and evicts the least recently used past its share, so a
process that checks a new reference every call stays within the budget however long it runs.

It also memoises what it reads from single words (stems, lemmas, whether a word is a known
noun, ...) in ``functools.lru_cache`` memos: looked up for every token, they stay as fast as
a dict lookup, and are bounded here by their count (:func:`word_memos`): each entry is counted
as :data:`WORD_ENTRY_BYTES`, and once their entries pass the ``words`` share of the budget,
every word memo is emptied (a word read again costs 0.4 to 5 microseconds to memoise anew).

The budget is ``TRUTHGUARD_MEMORY_BUDGET_MB`` (read at import, default
:data:`DEFAULT_BUDGET_MB`), or :func:`set_memory_budget` at run time (which shrinks full
caches at once). It bounds the caches only: the loaded models, spaCy's pipeline and the
interpreter come on top of it (see the configuration docs for what a container needs).

Example:
    >>> from truthguard.memory import memory_budget, set_memory_budget
    >>> previous = memory_budget()
    >>> set_memory_budget(64)
    >>> memory_budget()
    64.0
    >>> set_memory_budget(previous)
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from truthguard.errors import InvalidInputError

__all__ = [
    "DEFAULT_BUDGET_MB",
    "SHARES",
    "WORD_ENTRY_BYTES",
    "SizedCache",
    "cache_usage",
    "memoised",
    "memory_budget",
    "set_memory_budget",
    "word_memos",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_BUDGET_MB = 64.0
"""The caches' budget when ``TRUTHGUARD_MEMORY_BUDGET_MB`` is not set: with the 305-340 MiB a
process with the local RefChecker holds after its first check, a 512 MiB container keeps room
for the server's own work. More is faster where texts recur (see the configuration docs)."""

SHARES = {
    "vectors": 0.20,
    "parses": 0.25,
    "encoder states": 0.20,
    "analyses": 0.15,
    "token vectors": 0.05,
    "references": 0.10,
    "words": 0.05,
}
"""Each cache's share of the budget: embedding vectors (``EmbeddingCache``), spaCy parses,
the ONNX encoder's kept last hidden states, token analyses, the soft matcher's token vectors,
the references' memos (segments, evidence pools, sentence indexes: 15-30 bytes per
character of a reference each, so a few long references would otherwise fill any bound in
entries), and the word memos together (:func:`word_memos`)."""

WORD_ENTRY_BYTES = 230
"""Bytes one entry of a word memo is counted as: its key, its value and the memo's own
bookkeeping. Measured with tracemalloc: emptying every word memo after the local grounding of
440 answers over CHALE references freed 224 bytes an entry (17,022 entries); one memo filled
alone with distinct words takes 80 (a yes / no per word) to 340 bytes (a word's lemmas) an
entry."""

_WORD_MEMO_MIN = 1024
"""A ``functools.lru_cache`` of a truthguard module bounded at this many entries or more is a
word memo (the smaller ones hold loaded models and the like, a few entries each)."""

_WORD_CHECK_EVERY = 64
"""The word memos are counted every this many entries put into the budget's caches: words
enter the memos with new texts, and every new text is put into one of those caches."""

_ENTRY_OVERHEAD = 200
"""Bytes of an entry's key, ordered-dict node and object headers, added to its own size."""


def _budget_from_env() -> float:
    raw = os.environ.get("TRUTHGUARD_MEMORY_BUDGET_MB")
    if not raw:
        return DEFAULT_BUDGET_MB
    try:
        value = float(raw)
    except ValueError as e:
        raise InvalidInputError(
            "TRUTHGUARD_MEMORY_BUDGET_MB", f"must be a number of MiB, got {raw!r}"
        ) from e
    if value < 0:
        raise InvalidInputError("TRUTHGUARD_MEMORY_BUDGET_MB", "must be >= 0")
    return value


_lock = threading.Lock()
_budget_mb = _budget_from_env()
_caches: weakref.WeakValueDictionary[int, SizedCache[Any, Any]] = weakref.WeakValueDictionary()


def memory_budget() -> float:
    """The caches' budget in MiB."""
    return _budget_mb


def set_memory_budget(mb: float) -> None:
    """Set the caches' budget to ``mb`` MiB; caches over their new share evict at once.

    0 turns the shared caches off (every text is computed afresh).
    """
    global _budget_mb
    if mb < 0:
        raise InvalidInputError("mb", "must be >= 0")
    with _lock:
        _budget_mb = float(mb)
        caches = list(_caches.values())
    for cache in caches:
        if cache.share is not None:
            cache.resize(cache.share_bytes())
    _bound_words()


def cache_usage() -> dict[str, dict[str, int]]:
    """Per cache name: entries, bytes held and the bytes it may hold (summed over caches of
    one name)."""
    out: dict[str, dict[str, int]] = {}
    with _lock:
        caches = list(_caches.values())
    for cache in caches:
        row = out.setdefault(cache.name, {"entries": 0, "bytes": 0, "max_bytes": 0})
        row["entries"] += len(cache)
        row["bytes"] += cache.nbytes
        row["max_bytes"] += cache.max_bytes
    entries = _word_entries(word_memos())
    out["words"] = {
        "entries": entries,
        "bytes": entries * WORD_ENTRY_BYTES,
        "max_bytes": _words_bytes(),
    }
    return out


# -- the word memos ------------------------------------------------------------------------------

_memos: list[Any] = []
_memos_seen = -1  # len(sys.modules) when they were last looked for
_puts = 0


def word_memos() -> list[Callable[..., Any]]:
    """The word memos of the truthguard modules imported so far: their module-level functions
    memoised with ``functools.lru_cache`` bounded at 1,024 entries or more. Their entries
    together are bounded by the ``words`` share of the budget (see the module's doc)."""
    global _memos, _memos_seen
    seen = len(sys.modules)
    if seen != _memos_seen:
        found = []
        for name, module in list(sys.modules.items()):
            if not name.startswith("truthguard.") or module is None:
                continue
            for value in list(vars(module).values()):
                if _is_word_memo(value) and value.__module__ == name:
                    found.append(value)
        _memos, _memos_seen = found, seen
    return _memos


def _is_word_memo(value: Any) -> bool:
    parameters = getattr(value, "cache_parameters", None)
    if parameters is None or not hasattr(value, "cache_clear"):
        return False
    maxsize = parameters().get("maxsize")
    return maxsize is not None and maxsize >= _WORD_MEMO_MIN


def _word_entries(memos: list[Any]) -> int:
    return sum(memo.cache_info().currsize for memo in memos)


def _words_bytes() -> int:
    return int(SHARES["words"] * _budget_mb * 2**20)


def _bound_words() -> None:
    """Empty every word memo once their entries, counted at :data:`WORD_ENTRY_BYTES`, pass the
    ``words`` share of the budget (a ``functools.lru_cache`` cannot shrink, only empty)."""
    memos = word_memos()
    if _word_entries(memos) * WORD_ENTRY_BYTES > _words_bytes():
        for memo in memos:
            memo.cache_clear()


def _put_one() -> None:
    global _puts
    _puts += 1
    if _puts % _WORD_CHECK_EVERY == 0 or not _budget_mb:  # with no budget, at every text
        _bound_words()


class SizedCache(Generic[K, V]):
    """A thread-safe LRU bounded by the approximate bytes of its entries.

    A cache named in :data:`SHARES` (and given no ``max_bytes``) takes that share of the
    budget and follows :func:`set_memory_budget`; otherwise ``max_bytes`` bounds it. An entry
    larger than the whole bound is not kept.

    Args:
        name: What it holds, as in :data:`SHARES`.
        max_bytes: A fixed bound instead of a share of the budget.
        max_entries: A bound on the entries too (none by default).
        part: The part of ``name``'s share this cache takes, where several caches share it.

    Example:
        >>> cache = SizedCache("example", max_bytes=1_000)
        >>> cache.put("a", "x", 600)
        >>> cache.put("b", "y", 600)  # over the bound: "a" is evicted
        >>> cache.get("a") is None, cache.get("b")
        (True, 'y')
    """

    def __init__(
        self,
        name: str,
        *,
        max_bytes: int | None = None,
        max_entries: int | None = None,
        part: float = 1.0,
    ) -> None:
        if max_bytes is not None and max_bytes < 0:
            raise InvalidInputError("max_bytes", "must be >= 0")
        if max_entries is not None and max_entries < 0:
            raise InvalidInputError("max_entries", "must be >= 0")
        if max_bytes is None and name not in SHARES:
            raise InvalidInputError("name", f"has no share of the budget ({', '.join(SHARES)})")
        if not 0 < part <= 1:
            raise InvalidInputError("part", "must be in (0, 1]")
        self.name = name
        self.share = SHARES[name] * part if max_bytes is None else None
        self.max_bytes = self.share_bytes() if max_bytes is None else max_bytes
        self.max_entries = max_entries
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        with _lock:
            _caches[id(self)] = self

    def share_bytes(self) -> int:
        """This cache's share of the current budget, in bytes."""
        return int((self.share or 0.0) * _budget_mb * 2**20)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recent), or None."""
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return hit[0]

    def put(self, key: K, value: V, nbytes: int) -> None:
        """Keep ``value`` under ``key``, counted as ``nbytes`` (plus a fixed entry overhead)."""
        _put_one()  # new text: new words in the word memos too
        size = int(nbytes) + _ENTRY_OVERHEAD
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            if size > self.max_bytes or self.max_entries == 0:
                return
            self._data[key] = (value, size)
            self.nbytes += size
            self._evict()

    def discard(self, keep: Callable[[K], bool]) -> None:
        """Drop every entry whose key ``keep`` rejects."""
        with self._lock:
            for key in [k for k in self._data if not keep(k)]:
                self.nbytes -= self._data.pop(key)[1]

    def resize(self, max_bytes: int | None = None, *, max_entries: int | None = None) -> None:
        """Change the bounds given, evicting the least recently used entries past them."""
        if max_bytes is not None and max_bytes < 0:
            raise InvalidInputError("max_bytes", "must be >= 0")
        if max_entries is not None and max_entries < 0:
            raise InvalidInputError("max_entries", "must be >= 0")
        with self._lock:
            if max_bytes is not None:
                self.max_bytes = max_bytes
            if max_entries is not None:
                self.max_entries = max_entries
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.nbytes = 0
            self.hits = self.misses = 0

    def _evict(self) -> None:
        most = len(self._data) if self.max_entries is None else self.max_entries
        while (self.nbytes > self.max_bytes or len(self._data) > most) and self._data:
            _, (_, size) = self._data.popitem(last=False)
            self.nbytes -= size


def memoised(
    name: str, size_of: Callable[[Any], int], *, part: float = 1.0
) -> Callable[[Callable[..., V]], Any]:
    """Memoise a function of hashable positional arguments in a :class:`SizedCache` of
    ``name``'s share (``part`` of it), each result counted as ``size_of(result)`` bytes; the
    wrapper's ``cache`` is that cache (``cache_clear()`` empties it). A one-argument function
    is keyed by its argument, others by the tuple of theirs."""

    def wrap(fn: Callable[..., V]) -> Callable[..., V]:
        cache: SizedCache[Any, V] = SizedCache(name, part=part)

        def cached(*args: Any) -> V:
            key = args[0] if len(args) == 1 else args
            hit = cache.get(key)
            if hit is not None:
                return hit
            value = fn(*args)
            cache.put(key, value, size_of(value))
            return value

        functools.update_wrapper(cached, fn)
        cached.cache = cache  # type: ignore[attr-defined]
        cached.cache_clear = cache.clear  # type: ignore[attr-defined]
        return cached

    return wrap
