"""Similarity backends."""

from __future__ import annotations

import numpy as np
import pytest

from truthguard.errors import InvalidInputError
from truthguard.similarity import (
    CrossEncoderSimilarity,
    EmbeddingSimilarity,
    LexicalSimilarity,
    get_default_similarity,
    rouge_l,
    token_f1,
)


def test_token_f1_hand_computed():
    # common tokens: "the", "cat" -> p = 2/3, r = 2/4, f1 = 2pr/(p+r) = 4/7
    assert token_f1("the cat sat", "The cat, the dog") == pytest.approx(
        2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)
    )
    assert token_f1("", "") == 1.0
    assert token_f1("a", "") == 0.0


def test_rouge_l_hand_computed():
    # LCS("a b c d", "a c d e") = 3 -> p = r = 3/4
    assert rouge_l("a b c d", "a c d e") == pytest.approx(0.75)
    assert rouge_l("x y", "z") == 0.0


def test_lexical_backend_matrix_and_pairwise():
    sim = LexicalSimilarity("rouge_l")
    m = sim.matrix(["a b", "c"], ["a b", "c", "d"])
    assert m.shape == (2, 3)
    assert m[0, 0] == 1.0 and m[1, 1] == 1.0 and m[1, 2] == 0.0
    np.testing.assert_allclose(sim.pairwise(["a b", "c"], ["a b", "d"]), [1.0, 0.0])
    with pytest.raises(InvalidInputError, match="metric"):
        LexicalSimilarity("bleu")
    with pytest.raises(InvalidInputError, match="b"):
        sim.pairwise(["a"], [])


def test_embedding_similarity_is_cosine_of_normalised_vectors(embedder):
    vecs = embedder.embed(["Paris is the capital of France.", "The capital of France is Paris."])
    assert vecs.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    m = embedder.matrix(
        ["Paris is the capital of France."],
        ["The capital of France is Paris.", "Bananas are yellow."],
    )
    assert m[0, 0] > 0.9 > m[0, 1]


def test_default_model_loaded_once_per_process(embedder):
    assert get_default_similarity() is embedder
    other = EmbeddingSimilarity()
    assert other.model is embedder.model


def test_one_encode_call_per_check(embedder, monkeypatch):
    sim = EmbeddingSimilarity()
    calls = []
    real = sim.model.encode

    def counting(texts, **kw):
        calls.append(list(texts))
        return real(texts, **kw)

    monkeypatch.setattr(sim.model, "encode", counting)
    a = [f"answer number {i}" for i in range(5)]
    b = [f"reference text {i}" for i in range(4)]
    sim.matrix(a, b)
    assert len(calls) == 1 and len(calls[0]) == 9
    sim.matrix(a, b)  # memoised: no new encode
    assert len(calls) == 1


async def test_async_twins(embedder):
    m = await embedder.amatrix(["a"], ["a", "b"])
    p = await embedder.apairwise(["a"], ["a"])
    assert m.shape == (1, 2) and p[0] == pytest.approx(1.0, abs=1e-5)


def test_cross_encoder_requires_a_local_path(tmp_path):
    with pytest.raises(InvalidInputError, match="model_path"):
        CrossEncoderSimilarity(tmp_path / "missing")
