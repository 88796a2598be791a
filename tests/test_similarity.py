"""The similarity package: the process-wide default backend."""

from __future__ import annotations

from truthguard.similarity import (
    EmbeddingSimilarity,
    get_default_similarity,
)


def test_default_model_loaded_once_per_process(embedder):
    assert get_default_similarity() is embedder
    other = EmbeddingSimilarity()
    assert other.model is embedder.model
