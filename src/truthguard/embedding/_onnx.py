"""A sentence-transformers model run with onnxruntime + ``tokenizers``, without torch.

The transformer of a sentence-transformers model directory (BERT-like: ``config.json``,
``tokenizer.json``, a ``1_Pooling`` module and nothing after it but ``Normalize``) is exported
once to ONNX with ``torch.onnx.export``; the graph outputs the last hidden state, so pooling,
normalisation and per-token vectors are computed here in numpy. Importing this module imports
neither torch nor transformers; only :func:`export_onnx` does, once per model and cache directory.

The export lands in ``<cache_dir>/<model>-<digest>/model.onnx``; the digest covers the model
directory's path and its weight files' sizes and modification times, so replacing the weights
exports again. Writers take a file lock and rename atomically: concurrent processes export once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import itertools
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from truthguard.embedding._loading import quiet_transformers
from truthguard.embedding.encoder import Runtime, TokenVectors
from truthguard.errors import ConfigurationError
from truthguard.memory import SizedCache

__all__ = [
    "EXPORT_VERSION",
    "OnnxEncoder",
    "OnnxRuntime",
    "can_export",
    "export_onnx",
    "length_batches",
    "onnx_model_path",
    "onnx_support",
]

EXPORT_VERSION = "1"
"""Bumped when the exported graph changes (inputs, outputs, opset), so old exports are redone."""

_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "config.json")
_POOLING = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def onnx_support(model_dir: Path) -> str | None:
    """None when ``model_dir`` can run on the ONNX path, else the reason it cannot."""
    if not (model_dir / "tokenizer.json").is_file():
        return "no tokenizer.json (only fast tokenizers are supported)"
    if not (model_dir / "config.json").is_file():
        return "no config.json"
    modules_file = model_dir / "modules.json"
    if modules_file.is_file():
        kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in _read_json(modules_file)]
        extra = [k for k in kinds if k not in ("Transformer", "Pooling", "Normalize")]
        if extra:
            return f"modules {extra} are not supported"
    try:
        _pooling(model_dir)
    except ConfigurationError as e:
        return str(e)
    return None


def _pooling(model_dir: Path) -> str:
    config = model_dir / "1_Pooling" / "config.json"
    if not config.is_file():
        return "mean"
    options = _read_json(config)
    chosen = [mode for key, mode in _POOLING.items() if options.get(key)]
    unsupported = [
        k for k, v in options.items() if k.startswith("pooling_mode") and v and k not in _POOLING
    ]
    if unsupported or len(chosen) != 1:
        raise ConfigurationError(f"pooling {unsupported or chosen} is not supported on ONNX")
    return chosen[0]


def _max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        value = _read_json(config).get("max_seq_length")
        if value:
            return int(value)
    return int(_read_json(model_dir / "config.json").get("max_position_embeddings", 512))


def onnx_model_path(model_dir: Path, cache_dir: Path) -> Path:
    """Where the export of ``model_dir`` lives (or will) under ``cache_dir``."""
    model_dir = model_dir.resolve()
    h = hashlib.sha1(f"{EXPORT_VERSION}\x1f{model_dir}".encode())
    for name in _WEIGHTS:
        f = model_dir / name
        if f.is_file():
            st = f.stat()
            h.update(f"\x1f{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    label = "-".join(p for p in model_dir.parts[-2:] if p not in ("/", ""))
    return cache_dir / f"{label}-{h.hexdigest()[:12]}" / "model.onnx"


def can_export() -> bool:
    """Whether this environment has what :func:`export_onnx` imports (checked without importing)."""
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "onnx"))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: the atomic rename still holds
            yield
            return
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def export_onnx(model_dir: str | Path, cache_dir: str | Path) -> Path:
    """Export the transformer of ``model_dir`` to ONNX under ``cache_dir`` (once); its path.

    Needs torch, transformers and onnx (``pip install 'truthguard[local]'``). Inputs
    ``input_ids``, ``attention_mask`` (and ``token_type_ids`` when the model takes them), dynamic
    batch and sequence axes; output ``token_embeddings``, the last hidden state.
    """
    model_dir = Path(model_dir)
    target = onnx_model_path(model_dir, Path(cache_dir))
    if target.is_file():
        return target
    reason = onnx_support(model_dir)
    if reason:
        raise ConfigurationError(f"cannot run {model_dir} on ONNX: {reason}")
    with _file_lock(target.parent / ".lock"):
        if target.is_file():  # another process finished it while we waited
            return target
        try:
            import torch
            from transformers import AutoModel
        except ImportError as e:
            raise ConfigurationError(
                "exporting the embedding model to ONNX needs torch, transformers and onnx: "
                "pip install 'truthguard[local]'"
            ) from e
        if importlib.util.find_spec("onnx") is None:
            raise ConfigurationError(
                "exporting to ONNX needs onnx: pip install 'truthguard[local]'"
            )
        quiet_transformers()
        # Eager attention traces to plain MatMul/Softmax, valid for every sequence length.
        model = AutoModel.from_pretrained(
            str(model_dir), attn_implementation="eager", local_files_only=True
        ).eval()
        import inspect

        with_types = "token_type_ids" in inspect.signature(model.forward).parameters
        names = ["input_ids", "attention_mask", *(["token_type_ids"] if with_types else [])]

        class _Hidden(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *args: Any) -> Any:
                return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

        dummy = tuple(torch.ones(2, 8, dtype=torch.long) for _ in names)
        tmp = target.with_name(f".model.{os.getpid()}.{threading.get_ident()}.onnx")
        axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "token_embeddings"]}
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer notes about Python-side shape checks
            torch.onnx.export(
                _Hidden(model),
                dummy,
                str(tmp),
                input_names=names,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, target)
    return target


RUN_OVERHEAD_TOKENS = 12
"""The fixed cost of one session run, in tokens' worth of compute (MiniLM on one x86 core: about
1.5 ms a run, 0.13 ms a token)."""


SHRINK_TOKENS = 1_024
"""Padded tokens of a batch after whose run onnxruntime hands its idle arena memory back. The
arena otherwise keeps the peak of the largest batch the process ever ran (about 260 MiB more
after one batch of 32 texts of 256 tokens); a batch this large pays little for the new
allocations."""


KEPT: SizedCache[tuple[int, str], tuple[np.ndarray, Any]] = SizedCache("encoder states")
"""The last hidden states encoders keep after ``encode``, by (encoder, text), within their share
of the memory budget (see :mod:`truthguard.memory`; 1.5 KiB a token at 384 float32
dimensions). The grounding asks for the token vectors of claims and reference sentences it has
just encoded for retrieval; keeping them spares a second run of the model."""

_ENCODING_BYTES = 100
"""Bytes a token takes in a tokenizers ``Encoding`` (ids, offsets, masks, its token string)."""

_serials = itertools.count()


def length_batches(lengths: Sequence[int], batch_size: int) -> list[tuple[int, int]]:
    """Cut texts sorted by token count into batches of at most ``batch_size``, as ``(start,
    end)`` ranges, minimising the padded tokens plus :data:`RUN_OVERHEAD_TOKENS` a batch.

    Fixed 32-text batches padded a quarter of the tokens of a grounding check (a claim of ten
    tokens batched with reference sentences of sixty). Exact dynamic programming over the
    sorted lengths: a batch always ends at its longest member.

    Example:
        >>> length_batches([5, 5, 5, 60, 60], 32)
        [(0, 3), (3, 5)]
    """
    n = len(lengths)
    best = [0] * (n + 1)  # best[end]: the least cost of texts [0, end)
    cut = [0] * (n + 1)  # where the last batch of that best starts
    for end in range(1, n + 1):
        width = lengths[end - 1]
        best[end], cut[end] = min(
            (best[start] + (end - start) * width + RUN_OVERHEAD_TOKENS, start)
            for start in range(max(0, end - batch_size), end)
        )
    out = []
    end = n
    while end > 0:
        out.append((cut[end], end))
        end = cut[end]
    return out[::-1]


def _session_options(threads: int) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    # Spinning workers burn the cores other processes (and our own event loop) need.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return so


class OnnxEncoder:
    """Sentence embeddings and per-token vectors of an exported model, on onnxruntime.

    Texts are tokenised once, sorted by length and cut into batches by
    :func:`length_batches`, each padded to its longest member: short texts never pay for a long
    one. A text's vectors do not depend on the batch it ran in (rows are computed apart).

    Args:
        model_dir: The sentence-transformers model directory (tokenizer, pooling config).
        onnx_path: Its export (see :func:`export_onnx`).
        threads: onnxruntime intra-op threads.
    """

    serial = False

    def __init__(self, model_dir: Path, onnx_path: Path, *, threads: int = 1) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as e:
            raise ConfigurationError(
                "the ONNX embedding backend needs onnxruntime and tokenizers: "
                "pip install 'truthguard[local]'"
            ) from e
        self.model_dir = Path(model_dir)
        self.onnx_path = Path(onnx_path)
        self.threads = threads
        self.pooling = _pooling(self.model_dir)
        self.max_seq_length = _max_seq_length(self.model_dir)
        self.dimension = int(_read_json(self.model_dir / "config.json")["hidden_size"])
        tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tok.no_padding()  # we pad per length-sorted batch ourselves
        tok.enable_truncation(self.max_seq_length)
        self.tokenizer = tok
        keys = ("texts", "tokens", "padded_tokens", "runs", "run_seconds", "run_cpu_seconds")
        self.stats: dict[str, float] = dict.fromkeys((*keys, "kept_hits"), 0)
        """So far: texts run, their tokens, tokens run (padding included), session runs, wall
        seconds in them (summed over threads), the CPU seconds of the threads that called them
        (all of it with one session thread), and texts whose token vectors were served from
        the kept hidden states."""
        self._stats_lock = threading.Lock()
        self._serial = next(_serials)  # its key in KEPT (an id could be reused)
        self._load()

    def _load(self) -> None:
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise ConfigurationError(
                "the ONNX embedding backend needs onnxruntime: pip install 'truthguard[local]'"
            ) from e

        self.session = ort.InferenceSession(
            str(self.onnx_path), _session_options(self.threads), providers=["CPUExecutionProvider"]
        )
        self._inputs = [i.name for i in self.session.get_inputs()]
        self._shrink = ort.RunOptions()
        self._shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def _run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """The last hidden state for one padded batch (safe to call from several threads)."""
        ids = feeds["input_ids"]
        large = ids.shape[0] * ids.shape[1] >= SHRINK_TOKENS
        options = self._shrink if large else None
        (hidden,) = self.session.run(None, {k: feeds[k] for k in self._inputs}, options)
        return hidden

    def get_sentence_embedding_dimension(self) -> int:
        return self.dimension

    def _hidden(self, encodings: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Last hidden states of one batch, padded to its longest member, and the mask."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            types[row, :n] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        started, cpu = time.perf_counter(), time.thread_time()
        hidden = self._run(feeds)
        with self._stats_lock:
            self.stats["run_seconds"] += time.perf_counter() - started
            self.stats["run_cpu_seconds"] += time.thread_time() - cpu
        return hidden, mask

    def _batches(self, texts: Sequence[str], batch_size: int) -> Iterator[tuple[list[int], Any]]:
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        lengths = [len(encodings[i].ids) for i in order]
        cuts = length_batches(lengths, batch_size)
        with self._stats_lock:
            self.stats["texts"] += len(texts)
            self.stats["tokens"] += sum(lengths)
            self.stats["padded_tokens"] += sum((e - s) * lengths[e - 1] for s, e in cuts)
            self.stats["runs"] += len(cuts)
        for s, e in cuts:
            rows = order[s:e]
            yield rows, [encodings[i] for i in rows]

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        normalize_embeddings: bool = True,
        **_: Any,
    ) -> np.ndarray:
        """Pooled sentence embeddings, shape ``(len(texts), dim)``, in input order.

        The texts' last hidden states are kept for a while (see :data:`KEPT`): a
        :meth:`token_vectors` call for them soon after needs no second run of the model.
        """
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for rows, encs in self._batches(texts, batch_size):
            hidden, mask = self._hidden(encs)
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                m = mask[..., None].astype(hidden.dtype)
                pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[rows] = pooled
            self._keep([texts[i] for i in rows], hidden, encs)
        if normalize_embeddings and len(texts):
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def token_vectors(self, texts: Sequence[str], *, batch_size: int = 32) -> list[TokenVectors]:
        """Per text: L2-normalised vectors of its non-special tokens and their char offsets."""
        kept = [KEPT.get((self._serial, t)) for t in texts]  # taken now: others may evict them
        with self._stats_lock:
            self.stats["kept_hits"] += sum(k is not None for k in kept)
        missing = [i for i, k in enumerate(kept) if k is None]
        for rows, encs in self._batches([texts[i] for i in missing], batch_size):
            hidden, _ = self._hidden(encs)
            self._keep([texts[missing[i]] for i in rows], hidden, encs)
            for b, (i, e) in enumerate(zip(rows, encs, strict=True)):
                kept[missing[i]] = (hidden[b, : len(e.ids)], e)
        return [_token_vectors(*k) for k in kept]  # type: ignore[misc]

    def forget_hidden_states(self) -> None:
        """Drop this encoder's kept last hidden states (see :data:`KEPT`)."""
        serial = self._serial
        KEPT.discard(lambda key: key[0] != serial)

    def _keep(self, texts: list[str], hidden: np.ndarray, encodings: list[Any]) -> None:
        """Keep the last hidden states of the newest texts (see :data:`KEPT`)."""
        if KEPT.max_bytes <= 0:
            return
        for b, (t, e) in enumerate(zip(texts, encodings, strict=True)):
            row = hidden[b, : len(e.ids)].copy()
            KEPT.put((self._serial, t), (row, e), row.nbytes + _ENCODING_BYTES * len(e.ids))

    token_embeddings = token_vectors  # the name it had before the Encoder interface


def _token_vectors(hidden: np.ndarray, encoding: Any) -> TokenVectors:
    """One text's normalised vectors of its non-special tokens, and their char offsets."""
    offsets = encoding.offsets  # a fresh list at each access: read it once
    keep = [t for t, special in enumerate(encoding.special_tokens_mask) if not special]
    vecs = hidden[keep].astype(np.float32)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return vecs, [tuple(offsets[t]) for t in keep]


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


@functools.lru_cache(maxsize=8)
def _load(path: str, cache_dir: str, threads: int) -> OnnxEncoder:
    onnx_path = export_onnx(path, cache_dir)  # a no-op once the export is on disk
    return OnnxEncoder(Path(path), onnx_path, threads=threads)


class OnnxRuntime(Runtime):
    """Exports a model directory to ONNX once and runs it with onnxruntime, on CPU."""

    name: ClassVar[str] = "onnx"
    cpu_only: ClassVar[bool] = True

    def threads(self, threads: int | None) -> int:
        """``threads``, else the cores the load leaves idle: the encode worker runs sessions
        side by side for the rest."""
        return threads or _default_threads()

    def load(self, path: str, *, device: str, cache_dir: Path, threads: int | None) -> Any:
        return _load(path, str(cache_dir), self.threads(threads))

    def placement(self, *, device: str, cache_dir: Path, threads: int | None) -> tuple[Any, ...]:
        return (str(cache_dir), self.threads(threads))

    def can_run(self, model_dir: Callable[[], Path], cache_dir: Callable[[], Path]) -> bool:
        """Whether onnxruntime is installed and can run the model (exported, or exportable)."""
        if importlib.util.find_spec("onnxruntime") is None:
            return False
        if importlib.util.find_spec("tokenizers") is None:
            return False
        path = model_dir()
        if onnx_support(path) is not None:
            return False
        return onnx_model_path(path, cache_dir()).is_file() or can_export()
