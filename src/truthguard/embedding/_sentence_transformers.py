"""The sentence-transformers runtime: the model loaded by ``SentenceTransformer`` (any device)."""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from truthguard.embedding._loading import sentence_transformers_class
from truthguard.embedding.encoder import Runtime, TokenVectors

__all__ = ["SentenceTransformerEncoder", "SentenceTransformerRuntime"]


class SentenceTransformerEncoder:
    """A loaded ``SentenceTransformer`` as an :class:`~truthguard.embedding.Encoder`.

    Every other attribute (``tokenizer``, ``max_seq_length``, ...) is the model's own.

    Args:
        model: The loaded ``SentenceTransformer``.
    """

    serial = False

    def __init__(self, model: Any) -> None:
        self.model = model
        self._offsets_lock = threading.Lock()
        self._offsets_tokenizer: Any = None

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not set yet (a copy being built): never recurse
            raise AttributeError(name)
        return getattr(self.model, name)

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        return self.model.encode(texts, **kwargs)

    def get_sentence_embedding_dimension(self) -> int:
        return self.model.get_sentence_embedding_dimension()

    def token_vectors(self, texts: Sequence[str], *, batch_size: int = 32) -> list[TokenVectors]:
        """Per text: L2-normalised vectors of its non-special tokens and their char offsets."""
        model = self.model
        rows = model.encode(
            list(texts),
            batch_size=batch_size,
            output_value="token_embeddings",
            convert_to_numpy=False,
            show_progress_bar=False,
        )
        # A private copy: a fast tokenizer's padding state is shared with concurrent encode() calls.
        with self._offsets_lock:
            if self._offsets_tokenizer is None:
                self._offsets_tokenizer = copy.deepcopy(model.tokenizer)
            enc = self._offsets_tokenizer(
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


@functools.lru_cache(maxsize=8)
def _load(path: str, device: str) -> SentenceTransformerEncoder:
    model_class = sentence_transformers_class("SentenceTransformer", "embedding similarity")
    return SentenceTransformerEncoder(model_class(path, device=device, local_files_only=True))


class SentenceTransformerRuntime(Runtime):
    """Loads a model directory with ``SentenceTransformer`` on any torch device."""

    name: ClassVar[str] = "sentence-transformers"

    def load(
        self, path: str, *, device: str, cache_dir: Path, threads: int | None
    ) -> SentenceTransformerEncoder:
        return _load(path, device)

    def placement(self, *, device: str, cache_dir: Path, threads: int | None) -> tuple[Any, ...]:
        return (device,)
