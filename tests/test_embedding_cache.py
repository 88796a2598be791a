"""The process-wide embedding cache."""

from __future__ import annotations

import numpy as np
import pytest

from truthguard.errors import InvalidInputError
from truthguard.similarity import (
    EmbeddingCache,
)


def test_embedding_cache_is_bounded_lru_keyed_by_model():
    cache = EmbeddingCache(max_items=2)
    vec = np.eye(3, dtype=np.float32)
    cache.put_many("m1", ["a", "b"], vec[:2])
    cache.put_many("m2", ["a"], vec[2:])  # same text, other model: its own entry
    assert len(cache) == 2
    got = cache.get_many("m1", ["a", "b"])
    assert got[0] is None  # evicted: the least recently used
    np.testing.assert_array_equal(got[1], vec[1])
    np.testing.assert_array_equal(cache.get_many("m2", ["a"])[0], vec[2])
    assert (cache.hits, cache.misses) == (2, 1)
    with pytest.raises(ValueError):
        got[1][0] = 5.0  # cached vectors are read-only, so a caller cannot corrupt them
    cache.resize(1)
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.hits == 0
    with pytest.raises(InvalidInputError, match="max_items"):
        EmbeddingCache(max_items=-1)
