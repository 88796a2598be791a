"""Sentence and token embeddings: the runtimes that compute them, their threads, their cache.

* :class:`Encoder`: a loaded model (``encode``, ``token_vectors``, ``serial``); one
  :class:`Runtime` per way of running it, each in a module of its own: sentence-transformers
  (any torch device), ONNX (onnxruntime + ``tokenizers``, no torch at run time), ONNX with
  int8 weights (``"onnx-int8"``, quantized locally from the export) and OpenVINO (the same
  export, bfloat16 where the CPU has it). :func:`runtime` finds one by its
  ``backend`` name and :func:`choose_runtime` says what ``"auto"`` means.
* the encode worker pool (:func:`encode_worker`): the threads that run a loaded encoder's
  encode calls, sharing one call among every request waiting for it.
* :class:`EmbeddingCache`: the process-wide cache of vectors (:func:`embedding_cache`).

:class:`~truthguard.similarity.EmbeddingSimilarity` puts these together. Importing this package
imports no model runtime.
"""

from __future__ import annotations

from truthguard.embedding._loading import (
    load_lock,
    quiet_transformers,
    sentence_transformers_class,
)
from truthguard.embedding._onnx import (
    OnnxEncoder,
    OnnxRuntime,
    can_export,
    export_onnx,
    length_batches,
    onnx_model_path,
    onnx_support,
)
from truthguard.embedding._openvino import (
    OpenVinoEncoder,
    OpenVinoRuntime,
    openvino_bf16,
    openvino_installed,
)
from truthguard.embedding._paths import default_model_cache_dir, default_model_path
from truthguard.embedding._quantized import OnnxInt8Runtime, quantize_onnx, quantized_path
from truthguard.embedding._sentence_transformers import (
    SentenceTransformerEncoder,
    SentenceTransformerRuntime,
)
from truthguard.embedding._worker import encode_worker, parallel_encodes, started_worker
from truthguard.embedding.cache import EmbeddingCache, embedding_cache
from truthguard.embedding.encoder import Encoder, Runtime, TokenVectors
from truthguard.embedding.runtimes import (
    RUNTIMES,
    EmbeddingBackendName,
    choose_runtime,
    runtime,
)

__all__ = [
    "RUNTIMES",
    "EmbeddingBackendName",
    "EmbeddingCache",
    "Encoder",
    "OnnxEncoder",
    "OnnxInt8Runtime",
    "OnnxRuntime",
    "OpenVinoEncoder",
    "OpenVinoRuntime",
    "Runtime",
    "SentenceTransformerEncoder",
    "SentenceTransformerRuntime",
    "TokenVectors",
    "can_export",
    "choose_runtime",
    "default_model_cache_dir",
    "default_model_path",
    "embedding_cache",
    "encode_worker",
    "export_onnx",
    "length_batches",
    "load_lock",
    "onnx_model_path",
    "onnx_support",
    "openvino_bf16",
    "openvino_installed",
    "parallel_encodes",
    "quantize_onnx",
    "quantized_path",
    "quiet_transformers",
    "runtime",
    "sentence_transformers_class",
    "started_worker",
]
