"""The ONNX export of a sentence-transformers model run by OpenVINO, in bfloat16 where the CPU
computes it natively.

On CPUs with bfloat16 instructions (AVX512_BF16 or AMX) OpenVINO runs the exported graph about
twice as fast as onnxruntime runs it in float32 (all-MiniLM-L6-v2, two cores), while the
embeddings stay within 1e-4 cosine of the float32 ones: the matrix products read bfloat16 but
accumulate in float32. Elsewhere it runs float32. Opt-in (``backend="openvino"``): scores move
by that 1e-4, so it is never chosen for the user.

Same export, tokenizer, pooling and per-token vectors as
:class:`~truthguard.embedding.OnnxEncoder`; only the runtime differs. The compiled model is cached
in ``openvino/`` beside the export, so a later process loads it in a fraction of a second.
Importing this module imports no runtime.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from truthguard.embedding._onnx import OnnxEncoder, export_onnx
from truthguard.embedding.encoder import Runtime
from truthguard.errors import ConfigurationError

__all__ = ["OpenVinoEncoder", "OpenVinoRuntime", "openvino_bf16", "openvino_installed"]


def openvino_installed() -> bool:
    """Whether the OpenVINO runtime can be imported (checked without importing it)."""
    return importlib.util.find_spec("openvino") is not None


def _core() -> Any:
    import openvino

    return openvino.Core()


def _has_bf16(core: Any) -> bool:
    return "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def openvino_bf16() -> bool:
    """Whether OpenVINO is installed and this CPU computes bfloat16 natively (imports it)."""
    if not openvino_installed():
        return False
    try:
        return _has_bf16(_core())
    except Exception:  # a broken install, or no CPU plugin: not usable
        return False


class OpenVinoEncoder(OnnxEncoder):
    """:class:`~truthguard.embedding.OnnxEncoder` on the OpenVINO runtime.

    Calls from several threads are safe (each thread has its own infer request) but run one at
    a time on the compiled model's threads (``serial``): give it every core rather than run
    calls side by side.

    Args:
        model_dir: The sentence-transformers model directory (tokenizer, pooling config).
        onnx_path: Its ONNX export (see :func:`~truthguard.embedding.export_onnx`).
        threads: OpenVINO inference threads.
        precision: ``"bf16"``, ``"f32"``, or None for bf16 where the CPU has it natively.
    """

    serial = True

    def __init__(
        self,
        model_dir: Path,
        onnx_path: Path,
        *,
        threads: int = 1,
        precision: str | None = None,
    ) -> None:
        if precision not in (None, "bf16", "f32"):
            raise ConfigurationError(f"precision: expected 'bf16' or 'f32', got {precision!r}")
        self.precision = precision
        super().__init__(model_dir, onnx_path, threads=threads)

    def _load(self) -> None:
        try:
            core = _core()
        except ImportError as e:
            raise ConfigurationError(
                "the OpenVINO embedding backend needs openvino: pip install 'truthguard[openvino]'"
            ) from e
        if self.precision is None:
            self.precision = "bf16" if _has_bf16(core) else "f32"
        core.set_property({"CACHE_DIR": str(self.onnx_path.parent / "openvino")})
        self.compiled = core.compile_model(
            str(self.onnx_path),
            "CPU",
            {
                "INFERENCE_PRECISION_HINT": self.precision,
                "INFERENCE_NUM_THREADS": self.threads,
                "NUM_STREAMS": 1,
                "PERFORMANCE_HINT": "LATENCY",
                # Pinned threads would fight other processes for the cores they are tied to.
                "ENABLE_CPU_PINNING": False,
            },
        )
        self._inputs = [p.get_any_name() for p in self.compiled.inputs]
        self._local = threading.local()

    def _run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        # An infer request serves one call at a time: each encoder thread has its own.
        request = getattr(self._local, "request", None)
        if request is None:
            request = self._local.request = self.compiled.create_infer_request()
        result = request.infer(
            {k: feeds[k] for k in self._inputs}, share_inputs=True, share_outputs=False
        )
        return np.asarray(result[self.compiled.outputs[0]], dtype=np.float32)


@functools.lru_cache(maxsize=8)
def _load(path: str, cache_dir: str, threads: int) -> OpenVinoEncoder:
    onnx_path = export_onnx(path, cache_dir)
    return OpenVinoEncoder(Path(path), onnx_path, threads=threads)


class OpenVinoRuntime(Runtime):
    """Runs the ONNX export with OpenVINO, on CPU (opt-in: ``auto`` never picks it)."""

    name: ClassVar[str] = "openvino"
    cpu_only: ClassVar[bool] = True

    def threads(self, threads: int | None) -> int:
        """``threads``, else every core: OpenVINO runs one call at a time."""
        return threads or (os.cpu_count() or 1)

    def load(self, path: str, *, device: str, cache_dir: Path, threads: int | None) -> Any:
        return _load(path, str(cache_dir), self.threads(threads))

    def placement(self, *, device: str, cache_dir: Path, threads: int | None) -> tuple[Any, ...]:
        return (str(cache_dir), self.threads(threads))
