"""The embedding runtimes by name, and the one ``backend="auto"`` picks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from truthguard.embedding._onnx import OnnxRuntime
from truthguard.embedding._openvino import OpenVinoRuntime
from truthguard.embedding._quantized import OnnxInt8Runtime
from truthguard.embedding._sentence_transformers import SentenceTransformerRuntime
from truthguard.embedding.encoder import Runtime

__all__ = ["RUNTIMES", "EmbeddingBackendName", "choose_runtime", "runtime"]

EmbeddingBackendName = Literal["auto", "onnx", "onnx-int8", "openvino", "sentence-transformers"]

_ONNX = OnnxRuntime()
_SENTENCE_TRANSFORMERS = SentenceTransformerRuntime()

RUNTIMES: dict[str, Runtime] = {
    r.name: r for r in (_ONNX, OnnxInt8Runtime(), OpenVinoRuntime(), _SENTENCE_TRANSFORMERS)
}
"""Every runtime by its ``backend`` name."""


def runtime(name: str) -> Runtime:
    """The runtime called ``name`` (``"auto"`` is resolved by :func:`choose_runtime` first)."""
    return RUNTIMES[name]


def choose_runtime(
    device: str, model_dir: Callable[[], Path], cache_dir: Callable[[], Path]
) -> str:
    """What ``"auto"`` means: ONNX on CPU when onnxruntime can run the model (an export on disk,
    or the means to make one), else sentence-transformers. OpenVINO moves scores by about 1e-4
    and int8 weights by about 1e-2, so neither is picked for the user: every machine scores
    alike."""
    if device == "cpu" and _ONNX.can_run(model_dir, cache_dir):
        return _ONNX.name
    return _SENTENCE_TRANSFORMERS.name
