"""The OpenVINO encoder: same export, tokenizer and pooling as ONNX; bfloat16 where native."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from truthguard.embedding import OnnxEncoder, OpenVinoEncoder, openvino_bf16, openvino_installed
from truthguard.errors import ConfigurationError
from truthguard.similarity import EmbeddingSimilarity, parallel_encodes

TEXTS = [
    "Paris is the capital of France.",
    "a cat",
    "Über naïve café: ünïcödé and emoji 🙂 survive tokenisation.",
    "The Eiffel Tower was completed in 1889 for the World's Fair.",
    "A long passage about the sea. " * 60,  # truncated at the model's 256 tokens
    "",
]


@pytest.fixture(scope="module")
def exported(embedder):
    """(model directory, ONNX export) of the packaged MiniLM."""
    from truthguard.embedding import default_model_cache_dir, export_onnx

    path = embedder.path
    return path, export_onnx(path, default_model_cache_dir())


@pytest.fixture(scope="module")
def reference(exported):
    model_dir, onnx_path = exported
    return OnnxEncoder(model_dir, onnx_path, threads=1)


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


@pytest.mark.parametrize("precision", [None, "f32"])
def test_vectors_agree_with_onnxruntime(exported, reference, precision):
    model_dir, onnx_path = exported
    enc = OpenVinoEncoder(model_dir, onnx_path, threads=1, precision=precision)
    expected = precision or ("bf16" if openvino_bf16() else "f32")
    assert enc.precision == expected
    a, b = enc.encode(TEXTS), reference.encode(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384)
    # float32 is the same computation; bfloat16 products with float32 sums stay close.
    assert _cos(a, b).min() > 1 - (1e-5 if enc.precision == "f32" else 1e-3)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)

    tok_a, tok_b = enc.token_embeddings(TEXTS[:5]), reference.token_embeddings(TEXTS[:5])
    for (va, oa), (vb, ob) in zip(tok_a, tok_b, strict=True):
        assert oa == ob and va.shape == vb.shape
        assert _cos(va, vb).min() > 1 - 1e-3


def test_calls_from_several_threads_get_their_own_results(exported):
    model_dir, onnx_path = exported
    enc = OpenVinoEncoder(model_dir, onnx_path, threads=1)
    expected = {t: enc.encode([t])[0] for t in TEXTS[:4]}
    start = threading.Barrier(4)
    got: dict[str, np.ndarray] = {}

    def work(text: str) -> None:
        start.wait(timeout=10)
        for _ in range(5):
            got[text] = enc.encode([text])[0]

    threads = [threading.Thread(target=work, args=(t,)) for t in TEXTS[:4]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for text, vec in expected.items():
        np.testing.assert_array_equal(got[text], vec)


def test_one_call_at_a_time_on_every_core(exported):
    model_dir, onnx_path = exported
    enc = OpenVinoEncoder(model_dir, onnx_path, threads=1)
    assert enc.serial and parallel_encodes(enc) == 1
    sim = EmbeddingSimilarity(backend="openvino")
    assert sim.model.threads == (os.cpu_count() or 1)  # no threads= given: every core
    assert EmbeddingSimilarity(backend="openvino", threads=1).model.threads == 1


def test_compiled_model_is_cached_beside_the_export(exported):
    model_dir, onnx_path = exported
    OpenVinoEncoder(model_dir, onnx_path, threads=1)
    cache = onnx_path.parent / "openvino"
    assert cache.is_dir() and any(cache.iterdir())


def test_bad_precision_is_refused(exported):
    model_dir, onnx_path = exported
    with pytest.raises(ConfigurationError, match="precision"):
        OpenVinoEncoder(model_dir, onnx_path, precision="int8")


def test_backend_shares_the_cache_namespace_only_with_itself(embedder):
    ov = EmbeddingSimilarity(backend="openvino")
    onnx = EmbeddingSimilarity(backend="onnx")
    assert ov.backend == "openvino" and ov.cache_key != onnx.cache_key
    v = ov.embed(["Paris is the capital of France."])
    assert v.shape == (1, 384)
    with pytest.raises(Exception, match="device"):
        EmbeddingSimilarity(backend="openvino", device="cuda")


def test_auto_never_picks_it(monkeypatch):
    # Its scores differ from float32 ones by up to 1e-4: the default stays the same everywhere.
    assert openvino_installed()
    monkeypatch.delenv("TRUTHGUARD_EMBEDDING_BACKEND", raising=False)
    assert EmbeddingSimilarity().backend == "onnx"
    monkeypatch.setenv("TRUTHGUARD_EMBEDDING_BACKEND", "openvino")
    assert EmbeddingSimilarity().backend == "openvino"


def test_openvino_path_imports_no_torch(embed_in_new_process):
    backend, norm, heavy = embed_in_new_process("openvino")
    assert backend == "openvino" and norm == pytest.approx(1.0, abs=1e-5) and heavy == []
