"""Similarity backends."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from truthguard.errors import InvalidInputError
from truthguard.similarity import (
    CrossEncoderSimilarity,
    EmbeddingCache,
    EmbeddingSimilarity,
    LexicalSimilarity,
    default_model_cache_dir,
    embedding_cache,
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


def test_onnx_export_is_cached_beside_the_store(embedder):
    from truthguard._onnx import export_onnx

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


def test_process_cache_is_shared(embedder):
    before = len(embedding_cache())
    embedder.embed(["a text only this test embeds"])
    assert len(embedding_cache()) == before + 1


async def test_async_twins(embedder):
    m = await embedder.amatrix(["a"], ["a", "b"])
    p = await embedder.apairwise(["a"], ["a"])
    assert m.shape == (1, 2) and p[0] == pytest.approx(1.0, abs=1e-5)


def test_cross_encoder_requires_a_local_path(tmp_path):
    with pytest.raises(InvalidInputError, match="model_path"):
        CrossEncoderSimilarity(tmp_path / "missing")


# -- the encoder thread -------------------------------------------------------------------------


class _GatedModel:
    """An encoder whose first call waits for ``gate``: requests made meanwhile queue up."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.started = threading.Event()
        self.fail = fail

    def encode(self, texts, **kw):
        self.calls.append(list(texts))
        self.started.set()
        assert self.gate.wait(10)
        if self.fail:
            raise RuntimeError("encoder broke")
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


def _worker(model, key, parallel=1):
    from truthguard.similarity import _EncodeWorker

    return _EncodeWorker(model, f"test:{key}", batch_size=8, parallel=parallel)


def test_encoder_thread_serves_every_waiting_request_with_one_call():
    model = _GatedModel()
    worker = _worker(model, "coalesce")
    first = worker.submit(["a"])
    assert model.started.wait(10)  # the first encode is running (and held)
    second, third = worker.submit(["bb", "ccc"]), worker.submit(["dddd"])
    model.gate.set()
    assert first.result(10)["a"][0] == 1
    assert set(second.result(10)) == {"bb", "ccc"} and third.result(10)["dddd"][0] == 4
    assert model.calls == [["a"], ["bb", "ccc", "dddd"]]
    assert worker.calls == 2


class _TwoAtOnce(_GatedModel):
    """The first encode call waits until a second one runs beside it."""

    def encode(self, texts, **kw):
        if len(self.calls) == 1:  # the second call opens the gate the first one waits on
            self.gate.set()
        return super().encode(texts, **kw)


def test_one_big_request_is_shared_by_the_encoder_threads():
    model = _TwoAtOnce()
    worker = _worker(model, "split", parallel=2)
    texts = [f"text number {i}" for i in range(40)]
    got = worker.submit(texts).result(10)
    assert list(got) == texts and got["text number 7"][0] == len("text number 7")
    assert sorted(map(len, model.calls)) == [20, 20]  # two pieces, encoded side by side
    small = _worker(_GatedModel(), "small", parallel=2)
    small.model.gate.set()
    small.submit(["a", "b", "c"]).result(10)
    assert small.model.calls == [["a", "b", "c"]]  # too small to share


def test_two_encoder_threads_encode_side_by_side():
    model = _TwoAtOnce()
    worker = _worker(model, "parallel", parallel=2)
    first = worker.submit(["a"])
    assert model.started.wait(10)
    second = worker.submit(["bb"])  # served by the second thread while the first is held
    assert first.result(10)["a"][0] == 1 and second.result(10)["bb"][0] == 2
    assert model.calls == [["a"], ["bb"]]


def test_a_text_being_encoded_is_not_encoded_again():
    model = _GatedModel()
    worker = _worker(model, "inflight")
    first = worker.submit(["x", "yy"])
    assert model.started.wait(10)
    second = worker.submit(["yy", "zzz"])  # "yy" is already being encoded
    model.gate.set()
    got = second.result(10)
    assert sorted(got) == ["yy", "zzz"] and got["yy"][0] == 2
    assert first.result(10)["x"][0] == 1
    assert model.calls == [["x", "yy"], ["zzz"]]


def test_a_waiter_that_gives_up_does_not_cancel_an_encode_others_wait_for():
    model = _GatedModel()
    worker = _worker(model, "cancel")
    blocker = worker.submit(["held"])
    assert model.started.wait(10)
    quitter, stayer = worker.submit(["shared"]), worker.submit(["shared"])
    assert quitter.cancel()
    model.gate.set()
    assert blocker.result(10)["held"][0] == 4
    assert stayer.result(10)["shared"][0] == 6


def test_an_encode_failure_reaches_every_waiter_and_the_thread_goes_on():
    model = _GatedModel(fail=True)
    worker = _worker(model, "fail")
    first = worker.submit(["p"])
    assert model.started.wait(10)
    second = worker.submit(["q"])
    model.gate.set()
    for future in (first, second):
        with pytest.raises(RuntimeError, match="encoder broke"):
            future.result(10)
    model.fail = False
    assert worker.submit(["r"]).result(10)["r"][0] == 1  # the thread survived


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


def test_parallel_encodes_fills_the_cores_the_model_leaves_idle(monkeypatch):
    from truthguard.similarity import parallel_encodes

    class Model:
        def __init__(self, threads=None):
            if threads is not None:
                self.threads = threads

    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert parallel_encodes(Model(1)) == 4
    assert parallel_encodes(Model(2)) == 2
    assert parallel_encodes(Model(8)) == 1
    assert parallel_encodes(Model()) == 1  # torch already uses every core


def test_queued_chunks_are_spread_over_the_encoder_threads(monkeypatch):
    from truthguard.similarity import _EncodeWorker

    monkeypatch.setattr(_EncodeWorker, "TAKE", 2)
    model = _GatedModel()
    worker = _worker(model, "take")
    held = worker.submit(["held"])
    assert model.started.wait(10)
    chunks = [worker.submit([f"t{i}a", f"t{i}b"]) for i in range(3)]
    model.gate.set()
    for future in (held, *chunks):
        future.result(10)
    assert model.calls == [["held"], ["t0a", "t0b"], ["t1a", "t1b"], ["t2a", "t2b"]]
