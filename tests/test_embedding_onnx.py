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


def _padded(lengths, cuts):
    return sum((e - s) * lengths[e - 1] for s, e in cuts)


def test_length_batches_cover_the_texts_in_order_within_the_batch_size():
    from truthguard.embedding import length_batches

    lengths = sorted([4, 7, 7, 9, 12, 30, 31, 33, 60, 61, 200] * 7)
    cuts = length_batches(lengths, 8)
    assert [s for s, _ in cuts] == [0, *[e for _, e in cuts[:-1]]]  # contiguous
    assert cuts[-1][1] == len(lengths) and all(0 < e - s <= 8 for s, e in cuts)
    assert length_batches([], 32) == []
    assert length_batches([5], 32) == [(0, 1)]


def test_length_batches_keep_short_texts_apart_from_long_ones():
    from truthguard.embedding import length_batches

    # a grounding check: short claims and long reference sentences in one call
    lengths = [9, 10, 11, 12, 55, 58, 60, 64]
    cuts = length_batches(lengths, 32)
    assert cuts == [(0, 4), (4, 8)]
    assert _padded(lengths, cuts) < _padded(lengths, [(0, 8)])
    # equal lengths are never cut below the batch size (each run has a fixed cost)
    assert len(length_batches([20] * 40, 32)) == 2


def test_length_batches_are_optimal():
    import itertools
    import random

    from truthguard.embedding._onnx import RUN_OVERHEAD_TOKENS, length_batches

    rng = random.Random(0)
    for _ in range(30):
        lengths = sorted(rng.randint(1, 80) for _ in range(rng.randint(1, 9)))
        n, size = len(lengths), rng.randint(1, 4)
        best = None
        for mask in itertools.product([0, 1], repeat=n - 1):  # every way to cut the sorted list
            ends = [i + 1 for i, m in enumerate(mask) if m] + [n]
            cuts = list(zip([0, *ends[:-1]], ends, strict=True))
            if all(e - s <= size for s, e in cuts):
                cost = _padded(lengths, cuts) + RUN_OVERHEAD_TOKENS * len(cuts)
                best = cost if best is None else min(best, cost)
        got = length_batches(lengths, size)
        assert _padded(lengths, got) + RUN_OVERHEAD_TOKENS * len(got) == best


def test_vectors_do_not_depend_on_the_batch(embedder, monkeypatch):
    from truthguard.embedding import _onnx

    monkeypatch.setattr(_onnx.KEPT, "max_bytes", 0)  # token vectors from runs of their own
    texts = ["Paris.", "The capital of France is Paris, on the Seine.", "a cat", "x " * 70]
    model = embedder.model
    model.forget_hidden_states()
    before = dict(model.stats)
    together = model.encode(texts)
    alone = np.concatenate([model.encode([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)
    tokens_together = model.token_vectors(texts)
    for t, (vecs, offsets) in zip(texts, tokens_together, strict=True):
        ((v1, o1),) = model.token_vectors([t])
        assert offsets == o1
        np.testing.assert_allclose(vecs, v1, atol=1e-6)
    stats = {k: model.stats[k] - before[k] for k in before}
    assert stats["texts"] == 2 * len(texts) * 2
    assert stats["tokens"] <= stats["padded_tokens"]


def test_token_vectors_of_just_encoded_texts_need_no_second_run(embedder):
    model = embedder.model
    texts = ["The bridge opened in 1932.", "It spans the harbour of the city."]
    model.encode(texts)
    runs, hits = model.stats["runs"], model.stats["kept_hits"]
    kept = model.token_vectors(texts)
    assert model.stats["runs"] == runs and model.stats["kept_hits"] == hits + 2
    model.forget_hidden_states()  # computed afresh, and equal
    fresh = model.token_vectors(texts)
    assert model.stats["runs"] == runs + 1
    for (va, oa), (vb, ob) in zip(kept, fresh, strict=True):
        assert oa == ob
        np.testing.assert_allclose(va, vb, atol=1e-6)


def test_kept_hidden_states_are_bounded_by_their_bytes(embedder, monkeypatch):
    from truthguard.embedding import _onnx

    monkeypatch.setattr(_onnx.KEPT, "max_bytes", 3 * 16 * (384 * 4 + 100))  # ~3 of these texts
    model = embedder.model
    model.forget_hidden_states()
    texts = [f"Sentence number {i} is about rivers and their bridges." for i in range(6)]
    model.encode(texts)
    kept = [t for t in texts if (model._serial, t) in _onnx.KEPT]
    # the newest texts, as many as fit: one more of the same size would pass the bound
    assert kept and kept == texts[len(texts) - len(kept) :]
    sizes = [_onnx.KEPT._data[model._serial, t][1] for t in kept]
    assert sum(sizes) <= _onnx.KEPT.max_bytes < sum(sizes) + min(sizes)
    assert 0 < _onnx.KEPT.nbytes <= _onnx.KEPT.max_bytes
    assert (model._serial, texts[-1]) in _onnx.KEPT  # the newest are kept
    assert (model._serial, texts[0]) not in _onnx.KEPT
    model.forget_hidden_states()
    assert not any(key[0] == model._serial for key in list(_onnx.KEPT._data))


def test_large_batches_hand_the_arena_back_with_the_same_vectors(embedder, monkeypatch):
    from truthguard.embedding import _onnx

    model = embedder.model
    texts = [
        f"Sentence {i} about the rivers, the bridges and the towers of a city." for i in range(8)
    ]
    monkeypatch.setattr(_onnx, "SHRINK_TOKENS", 10**9)
    kept_arena = model.encode(texts)
    calls: list[object] = []
    run = model.session.run

    def spy(outputs, feeds, options=None):
        calls.append(options)
        return run(outputs, feeds, options)

    monkeypatch.setattr(model.session, "run", spy, raising=False)
    monkeypatch.setattr(_onnx, "SHRINK_TOKENS", 8)
    shrunk = model.encode(texts)
    assert calls and all(o is model._shrink for o in calls)
    np.testing.assert_allclose(shrunk, kept_arena, atol=1e-6)
