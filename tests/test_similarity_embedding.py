"""Embedding similarity: cosine of normalised vectors over the encoders and their cache."""

from __future__ import annotations

import numpy as np
import pytest

from truthguard.errors import InvalidInputError
from truthguard.similarity import (
    EmbeddingSimilarity,
    embedding_cache,
)


def test_embedding_similarity_is_cosine_of_normalised_vectors(embedder):
    vecs = embedder.embed(["Paris is the capital of France.", "The capital of France is Paris."])
    assert vecs.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    m = embedder.matrix(
        ["Paris is the capital of France."],
        ["The capital of France is Paris.", "Bananas are yellow."],
    )
    assert m[0, 0] > 0.9 > m[0, 1]


def _count_encodes(sim, monkeypatch) -> list[list[str]]:
    """The texts of every encode call the model makes from now on."""
    calls: list[list[str]] = []
    real = sim.model.encode

    def counting(texts, **kw):
        calls.append(list(texts))
        return real(texts, **kw)

    monkeypatch.setattr(sim.model, "encode", counting)
    return calls


def test_one_encode_call_per_check_and_one_per_process(embedder, monkeypatch):
    sim = EmbeddingSimilarity()
    calls = _count_encodes(sim, monkeypatch)
    a = [f"one encode call, answer {i}" for i in range(5)]
    b = [f"one encode call, reference {i}" for i in range(4)]
    sim.matrix(a, b)
    assert len(calls) == 1 and len(calls[0]) == 9
    sim.matrix(a, b)  # memoised: no new encode
    EmbeddingSimilarity().embed([*b, a[0]])  # another instance shares the process cache
    assert len(calls) == 1
    sim.embed([*a, "one encode call, new text", "one encode call, new text"])
    assert calls[1] == ["one encode call, new text"]  # only the new text, once


def test_embedding_options_are_checked():
    with pytest.raises(InvalidInputError, match="backend"):
        EmbeddingSimilarity(backend="tensorflow")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="device"):
        EmbeddingSimilarity(backend="onnx", device="cuda")
    with pytest.raises(InvalidInputError, match="threads"):
        EmbeddingSimilarity(threads=0)
    with pytest.raises(InvalidInputError, match="batch_size"):
        EmbeddingSimilarity(batch_size=0)


def test_backend_choice(embedder, monkeypatch):
    assert embedder.backend == "onnx"  # onnxruntime is installed and the export is possible
    assert EmbeddingSimilarity(backend="sentence-transformers").backend == "sentence-transformers"
    monkeypatch.setenv("TRUTHGUARD_EMBEDDING_BACKEND", "sentence-transformers")
    assert EmbeddingSimilarity().backend == "sentence-transformers"
    assert EmbeddingSimilarity(backend="onnx").backend == "onnx"  # an explicit choice wins
    assert EmbeddingSimilarity(device="cuda", backend="auto").backend == "sentence-transformers"


def test_process_cache_is_shared(embedder):
    before = len(embedding_cache())
    embedder.embed(["a text only this test embeds"])
    assert len(embedding_cache()) == before + 1


async def test_async_twins(embedder):
    m = await embedder.amatrix(["a"], ["a", "b"])
    p = await embedder.apairwise(["a"], ["a"])
    assert m.shape == (1, 2) and p[0] == pytest.approx(1.0, abs=1e-5)


def test_prefetch_fills_the_cache_for_a_later_embed(embedder, monkeypatch):
    sim = EmbeddingSimilarity()
    sim.embed(["load the model first"])
    calls = _count_encodes(sim, monkeypatch)
    texts = ["prefetched text one", "prefetched text two"]
    sim.prefetch(texts)
    vecs = sim.embed(texts)  # waits for the prefetch's encode instead of repeating it
    assert calls == [texts] and vecs.shape == (2, 384)
    EmbeddingSimilarity().prefetch(["never encoded: this instance has not loaded a model"])
    assert len(calls) == 1


async def test_concurrent_aembed_calls_match_one_embed(embedder):
    import asyncio

    sim = EmbeddingSimilarity()
    sim.embed(["warm"])
    texts = [f"concurrent aembed {i}" for i in range(12)]
    rows = await asyncio.gather(*(sim.aembed([t]) for t in texts))
    together = sim.embed(texts)
    np.testing.assert_allclose(np.vstack(rows), together, atol=1e-6)


def test_packaged_says_whether_the_packaged_minilm_runs(tmp_path):
    from truthguard.embedding import default_model_path

    assert EmbeddingSimilarity().packaged
    assert EmbeddingSimilarity(model_path=default_model_path()).packaged
    assert not EmbeddingSimilarity(model_path=tmp_path).packaged
