"""Embedding similarity: the cosine of normalised sentence embeddings.

A thin layer over :mod:`truthguard.embedding`: the runtime named by ``backend`` loads the
:class:`~truthguard.embedding.Encoder`, the encode worker pool runs it, and the process-wide
:func:`~truthguard.embedding.embedding_cache` keeps every vector.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import numpy as np

from truthguard.embedding import (
    EmbeddingBackendName,
    Encoder,
    Runtime,
    TokenVectors,
    choose_runtime,
    default_model_cache_dir,
    default_model_path,
    embedding_cache,
    encode_worker,
    load_lock,
    parallel_encodes,
    runtime,
    started_worker,
)
from truthguard.embedding._worker import _EncodeWorker
from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.similarity.base import SimilarityBackend

__all__ = ["EmbeddingSimilarity"]


class EmbeddingSimilarity(SimilarityBackend):
    """Cosine similarity of normalised sentence embeddings.

    Three interchangeable encoders of the same model:

    * ``"onnx"``: onnxruntime + ``tokenizers``, without torch, transformers or
      sentence-transformers at run time; starts in well under a second; float32, equal to
      sentence-transformers within 1e-6 cosine. The model is exported to ONNX once (that step
      imports torch) into :func:`default_model_cache_dir`, or ``cache_dir``, and reused by
      every later process.
    * ``"openvino"`` (opt-in; ``pip install 'truthguard[openvino]'``): the same export run by
      OpenVINO, in bfloat16 on CPUs that compute it natively (AVX512_BF16 or AMX), else float32.
      About twice the speed of ``"onnx"`` there, within 1e-4 cosine of it on the packaged
      MiniLM; also starts in well under 2 s. Scores move by that much, so a threshold sitting
      exactly on a score can flip: ``"auto"`` never picks it, so every machine scores alike.
    * ``"onnx-int8"`` (opt-in): the ONNX export with int8 weights (per-channel dynamic
      quantization, made once beside the export; needs onnx for that step). About twice the
      speed of ``"onnx"``; vectors within about 0.03 cosine of it (0.007 on average), which
      moves grounding decisions near their thresholds: ``"auto"`` never picks it.
    * ``"sentence-transformers"``: the model loaded by ``SentenceTransformer`` (any device).

    ``"auto"`` (default; ``TRUTHGUARD_EMBEDDING_BACKEND`` overrides it) picks ONNX on CPU when
    onnxruntime is installed and the model can run there (an export on disk, or the means to make
    one), else sentence-transformers. Models load on first use (or :meth:`warm_up`) and are shared
    by every instance with the same settings; vectors are kept in the process-wide
    :func:`embedding_cache`, so a text is encoded once per process.

    Example:
        >>> sim = EmbeddingSimilarity()
        >>> float(sim.pairwise(["a cat"], ["a cat"])[0]) > 0.99
        True
    """

    name = "embedding"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        backend: EmbeddingBackendName | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        threads: int | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        backend = backend or os.environ.get("TRUTHGUARD_EMBEDDING_BACKEND") or "auto"  # type: ignore[assignment]
        if backend not in get_args(EmbeddingBackendName):
            raise InvalidInputError(
                "backend",
                f"expected one of {list(get_args(EmbeddingBackendName))}, got {backend!r}",
            )
        if batch_size < 1:
            raise InvalidInputError("batch_size", "must be >= 1")
        if threads is not None and threads < 1:
            raise InvalidInputError("threads", "must be >= 1")
        if backend != "auto" and runtime(backend).cpu_only and device != "cpu":
            raise InvalidInputError("device", f"the {backend} backend runs on 'cpu' only")
        self.model_path = str(model_path) if model_path else None
        self.requested_backend: str = backend
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._backend: str | None = None

    @property
    def path(self) -> str:
        """The model directory in use."""
        return self.model_path or str(default_model_path())

    @property
    def packaged(self) -> bool:
        """Whether this runs the packaged all-MiniLM-L6-v2, whose vectors the refchecker's
        fitted readings (remarks, meaning) were fitted on."""
        try:
            return _same_directory(self.path, str(default_model_path()))
        except ConfigurationError:
            return False

    @property
    def backend(self) -> str:
        """The encoder in use: ``"onnx"``, ``"onnx-int8"``, ``"openvino"`` or
        ``"sentence-transformers"`` (``auto`` resolved)."""
        if self._backend is None:
            self._backend = self._resolve_backend()
        return self._backend

    def _resolve_backend(self) -> str:
        if self.requested_backend != "auto":
            return self.requested_backend
        return choose_runtime(self.device, lambda: Path(self.path), self._cache_dir)

    def _cache_dir(self) -> Path:
        return self.cache_dir or default_model_cache_dir()

    @property
    def _runtime(self) -> Runtime:
        return runtime(self.backend)

    def _settings(self) -> dict[str, Any]:
        return {"device": self.device, "cache_dir": self._cache_dir(), "threads": self.threads}

    @property
    def cache_key(self) -> str:
        """This encoder's identity in the :func:`embedding_cache`."""
        return f"{self.backend}:{self.path}"

    @property
    def model(self) -> Encoder:
        """The loaded :class:`~truthguard.embedding.Encoder` of the model and backend."""
        path = self.path
        with load_lock:
            return self._runtime.load(path, **self._settings())

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def warm_up(self) -> None:
        """Load the model (exporting it to ONNX first if needed) and run one encode."""
        self.model.encode(["warm up"], batch_size=1, normalize_embeddings=True)

    def _worker_key(self) -> tuple[Any, ...]:
        # Instances share encoder threads when they share the model and the cache namespace;
        # a subclass (its own `model` or `cache_key`) gets threads of its own.
        where = self._runtime.placement(**self._settings())
        return (type(self), self.cache_key, self.path, *where, self.batch_size)

    def _encoder(self) -> _EncodeWorker:
        """The encoder thread of this instance's model (loading the model on first use)."""
        return encode_worker(
            self._worker_key(), lambda: self.model, self.cache_key, self.batch_size
        )

    @property
    def parallel_encodes(self) -> int:
        """Encode calls that run side by side (see :func:`parallel_encodes`); batches queued
        together are spread over that many encoder threads."""
        return parallel_encodes(self.model)

    def _lookup(self, texts: list[str]) -> tuple[list[np.ndarray | None], list[str]]:
        found = embedding_cache().get_many(self.cache_key, texts)
        missing = list(dict.fromkeys(t for t, v in zip(texts, found, strict=True) if v is None))
        return found, missing

    @staticmethod
    def _assemble(
        texts: list[str], found: list[np.ndarray | None], fresh: dict[str, np.ndarray]
    ) -> np.ndarray:
        return np.stack(
            [v if v is not None else fresh[t] for t, v in zip(texts, found, strict=True)]
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised embeddings, shape ``(len(texts), dim)``.

        Texts already in the :func:`embedding_cache` cost nothing. The others go to the model's
        encoder thread, which serves every request waiting when it frees up with one encode
        call: concurrent checks (and the concurrent branches of one check) share batches.
        """
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        found, missing = self._lookup(texts)
        fresh = self._encoder().submit(missing).result() if missing else {}
        return self._assemble(texts, found, fresh)

    def prefetch(self, texts: Sequence[str]) -> None:
        """Start encoding texts into the :func:`embedding_cache` and return at once (from any
        thread); a later :meth:`embed` of them waits for that encode instead of repeating it.
        Does nothing before the model is loaded (loading is never started from here)."""
        texts = list(texts)
        worker = started_worker(self._worker_key()) if texts and self._backend else None
        if worker is None:
            return
        _, missing = self._lookup(texts)
        if missing:
            worker.submit(missing)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`embed` that waits on the event loop, not on a thread of its executor."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        found, missing = self._lookup(texts)
        fresh: dict[str, np.ndarray] = {}
        if missing:
            worker = started_worker(self._worker_key()) if self._backend is not None else None
            if worker is None:  # first use: resolving and loading the model blocks
                worker = await asyncio.to_thread(self._encoder)
            fresh = await asyncio.wrap_future(worker.submit(missing))
        return self._assemble(texts, found, fresh)

    def token_embeddings(self, texts: Sequence[str]) -> list[TokenVectors]:
        """Per text: L2-normalised contextual token vectors, shape (n_tokens, dim), special
        tokens dropped, and each token's (start, end) character offsets in the text."""
        texts = list(texts)
        if not texts:
            return []
        return self.model.token_vectors(texts, batch_size=self.batch_size)

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        vecs = self.embed([*a, *b])  # one encode request for the whole check
        return vecs[: len(a)] @ vecs[len(a) :].T

    def pairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        if not a:
            return np.zeros(0, dtype=np.float32)
        vecs = self.embed([*a, *b])
        return np.einsum("ij,ij->i", vecs[: len(a)], vecs[len(a) :])

    async def amatrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        vecs = await self.aembed([*a, *b])
        return vecs[: len(a)] @ vecs[len(a) :].T

    async def apairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        if not a:
            return np.zeros(0, dtype=np.float32)
        vecs = await self.aembed([*a, *b])
        return np.einsum("ij,ij->i", vecs[: len(a)], vecs[len(a) :])


@functools.lru_cache(maxsize=64)  # asked once per check: resolving a path reads the disk
def _same_directory(a: str, b: str) -> bool:
    """Whether two paths name one directory (links and relative parts resolved)."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False
