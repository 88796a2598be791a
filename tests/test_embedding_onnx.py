"""The ONNX encoder: exported once, equal to sentence-transformers, no torch at run time."""

from __future__ import annotations

import numpy as np
import pytest

from truthguard.similarity import (
    EmbeddingSimilarity,
    default_model_cache_dir,
)


def test_onnx_export_is_cached_beside_the_store(embedder):
    from truthguard.embedding import export_onnx

    embedder.warm_up()
    path = embedder.model.onnx_path
    assert path.is_file() and path.is_relative_to(default_model_cache_dir())
    assert export_onnx(embedder.path, default_model_cache_dir()) == path  # no second export


@pytest.mark.model
def test_onnx_equals_sentence_transformers(embedder):
    texts = [
        "Paris is the capital of France.",
        "a cat",
        "Über naïve café: ünïcödé and emoji 🙂 survive tokenisation.",
        "A long passage about the sea. " * 60,  # truncated at the model's 256 tokens
        "",
    ]
    onnx = EmbeddingSimilarity(backend="onnx")
    st = EmbeddingSimilarity(backend="sentence-transformers")
    assert onnx.cache_key != st.cache_key  # the shared cache never mixes the two
    a, b = onnx.embed(texts), st.embed(texts)
    assert np.einsum("ij,ij->i", a, b).min() > 1 - 1e-3

    tok_a, tok_b = onnx.token_embeddings(texts[:4]), st.token_embeddings(texts[:4])
    for (va, oa), (vb, ob) in zip(tok_a, tok_b, strict=True):
        assert oa == ob and va.shape == vb.shape == (len(oa), 384)
        assert np.einsum("ij,ij->i", va, vb).min() > 1 - 1e-3
        np.testing.assert_allclose(np.linalg.norm(va, axis=1), 1.0, atol=1e-5)
    _, offsets = tok_a[0]  # special tokens dropped; offsets index the original text
    words = ["Paris", "is", "the", "capital", "of", "France", "."]
    assert [texts[0][s:e] for s, e in offsets] == words
    assert onnx.token_embeddings([]) == []


def test_onnx_path_imports_no_torch(embed_in_new_process):
    backend, norm, heavy = embed_in_new_process()
    assert backend == "onnx" and norm == pytest.approx(1.0, abs=1e-5)
    assert heavy == ["onnxruntime"]  # and nothing of torch, transformers, sentence-transformers
