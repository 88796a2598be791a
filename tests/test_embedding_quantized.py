"""The int8 ONNX encoder: quantized locally once, beside the export, and close to float32."""

from __future__ import annotations

import numpy as np

from truthguard.embedding import quantize_onnx, quantized_path
from truthguard.similarity import EmbeddingSimilarity

TEXTS = [
    "Paris is the capital of France.",
    "Bi Sheng made movable type from baked clay in the eleventh century.",
    "a cat",
]


def test_int8_is_made_once_beside_the_export(embedder, tmp_path):
    embedder.warm_up()
    export = embedder.model.onnx_path
    (tmp_path / "model.onnx").symlink_to(export)
    path = quantize_onnx(tmp_path / "model.onnx")
    assert path == quantized_path(tmp_path / "model.onnx") == tmp_path / "model.int8.onnx"
    assert path.stat().st_size < export.stat().st_size / 3  # int8 weights, not float32
    written = path.stat().st_mtime_ns
    assert quantize_onnx(tmp_path / "model.onnx") == path
    assert path.stat().st_mtime_ns == written  # not quantized again
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".model")] == []


def test_int8_backend_is_close_to_float32_but_not_equal(embedder):
    int8 = EmbeddingSimilarity(backend="onnx-int8")
    assert int8.backend == "onnx-int8"
    assert int8.cache_key != embedder.cache_key  # the shared cache never mixes the two
    assert int8.model.onnx_path == quantized_path(embedder.model.onnx_path)
    a, b = int8.embed(TEXTS), embedder.embed(TEXTS)
    cos = np.einsum("ij,ij->i", a, b)
    assert cos.min() > 0.95
    assert cos.min() < 1 - 1e-5  # really another model
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    ((vecs, offsets),) = int8.token_embeddings(TEXTS[:1])
    assert vecs.shape == (len(offsets), 384)


def test_auto_never_picks_int8(embedder):
    assert EmbeddingSimilarity().backend == "onnx"
