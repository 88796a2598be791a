"""The process-wide cache of normalised embeddings, keyed by (model, text)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from truthguard.errors import InvalidInputError

__all__ = ["EmbeddingCache", "embedding_cache"]


class EmbeddingCache:
    """A process-wide, size-bounded LRU of normalised embeddings keyed by (model, text).

    Every :class:`~truthguard.similarity.EmbeddingSimilarity` of a process shares it (see
    :func:`embedding_cache`), so the store, the checkers, FEWL and the benchmarks encode a text
    once. At 384 float32 dimensions, 100,000 entries take about 150 MiB.

    Example:
        >>> cache = EmbeddingCache(max_items=2)
        >>> cache.put_many("model", ["a"], np.ones((1, 3), dtype=np.float32))
        >>> cache.get_many("model", ["a", "b"])[1] is None
        True
    """

    def __init__(self, max_items: int = 100_000) -> None:
        if max_items < 0:
            raise InvalidInputError("max_items", "must be >= 0")
        self.max_items = max_items
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, model: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (None where absent); hits become most recent."""
        out: list[np.ndarray | None] = []
        with self._lock:
            for t in texts:
                v = self._data.get((model, t))
                if v is not None:
                    self._data.move_to_end((model, t))
                out.append(v)
            found = sum(v is not None for v in out)
            self.hits += found
            self.misses += len(out) - found
        return out

    def put_many(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors (evicting the least recently used beyond ``max_items``)."""
        with self._lock:
            for t, v in zip(texts, vectors, strict=True):
                v = np.array(v, dtype=np.float32)  # a copy: callers may write to their array
                v.setflags(write=False)
                self._data[(model, t)] = v
                self._data.move_to_end((model, t))
            while len(self._data) > self.max_items:
                self._data.popitem(last=False)

    def resize(self, max_items: int) -> None:
        """Change the bound, evicting the oldest entries if needed."""
        if max_items < 0:
            raise InvalidInputError("max_items", "must be >= 0")
        with self._lock:
            self.max_items = max_items
            while len(self._data) > max_items:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


_CACHE = EmbeddingCache(int(os.environ.get("TRUTHGUARD_EMBEDDING_CACHE", "100000")))


def embedding_cache() -> EmbeddingCache:
    """The process-wide embedding cache (``TRUTHGUARD_EMBEDDING_CACHE`` sets its size at import)."""
    return _CACHE
