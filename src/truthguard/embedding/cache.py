"""The process-wide cache of normalised embeddings, keyed by (model, text)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from truthguard.errors import InvalidInputError
from truthguard.memory import SizedCache

__all__ = ["EmbeddingCache", "embedding_cache"]


class EmbeddingCache:
    """A process-wide LRU of normalised embeddings keyed by (model, text), bounded in bytes.

    Every :class:`~truthguard.similarity.EmbeddingSimilarity` of a process shares it (see
    :func:`embedding_cache`), so the store, the checkers, FEWL and the benchmarks encode a text
    once. By default it takes the vectors' share of the memory budget (see
    :mod:`truthguard.memory`): a vector of 384 float32 dimensions counts 1.5 KiB, plus its text
    and a fixed overhead.

    Args:
        max_items: A bound on the entries too (none by default).
        max_bytes: A fixed bound in bytes instead of the vectors' share of the budget.

    Example:
        >>> cache = EmbeddingCache(max_items=2)
        >>> cache.put_many("model", ["a"], np.ones((1, 3), dtype=np.float32))
        >>> cache.get_many("model", ["a", "b"])[1] is None
        True
    """

    def __init__(self, max_items: int | None = None, *, max_bytes: int | None = None) -> None:
        if max_items is not None and max_items < 0:
            raise InvalidInputError("max_items", "must be >= 0")
        self._data: SizedCache[tuple[str, str], np.ndarray] = SizedCache(
            "vectors", max_bytes=max_bytes, max_entries=max_items
        )

    @property
    def max_items(self) -> int | None:
        """The bound on entries, if any."""
        return self._data.max_entries

    @property
    def max_bytes(self) -> int:
        """The bound in bytes."""
        return self._data.max_bytes

    @property
    def nbytes(self) -> int:
        """The approximate bytes held."""
        return self._data.nbytes

    @property
    def hits(self) -> int:
        return self._data.hits

    @property
    def misses(self) -> int:
        return self._data.misses

    def __len__(self) -> int:
        return len(self._data)

    def can_hold(self, n: int, dimension: int = 384) -> bool:
        """Whether ``n`` vectors of ``dimension`` float32s fit in half the bound at once."""
        fits = n * (4 * dimension + 300) <= self.max_bytes // 2
        return fits and (self.max_items is None or n <= self.max_items // 2)

    def get_many(self, model: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (None where absent); hits become most recent."""
        return [self._data.get((model, t)) for t in texts]

    def put_many(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors (evicting the least recently used beyond the bounds)."""
        for t, v in zip(texts, vectors, strict=True):
            v = np.array(v, dtype=np.float32)  # a copy: callers may write to their array
            v.setflags(write=False)
            self._data.put((model, t), v, v.nbytes + len(t))

    def resize(self, max_items: int | None = None, *, max_bytes: int | None = None) -> None:
        """Change the bounds given, evicting the oldest entries if needed."""
        if max_items is not None and max_items < 0:
            raise InvalidInputError("max_items", "must be >= 0")
        self._data.resize(max_bytes, max_entries=max_items)

    def clear(self) -> None:
        self._data.clear()


_CACHE = EmbeddingCache()


def embedding_cache() -> EmbeddingCache:
    """The process-wide embedding cache (the vectors' share of the memory budget)."""
    return _CACHE
