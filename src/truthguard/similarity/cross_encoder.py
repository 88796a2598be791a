"""Similarity scored by a sentence-transformers ``CrossEncoder`` (consistency or NLI model)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from truthguard.embedding import load_lock, sentence_transformers_class
from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.similarity.base import SimilarityBackend

__all__ = ["CrossEncoderSimilarity"]


@functools.lru_cache(maxsize=4)
def _load_cross_encoder(path: str, device: str) -> Any:
    model_class = sentence_transformers_class("CrossEncoder", "cross-encoder similarity")
    return model_class(path, device=device, local_files_only=True)


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
        with load_lock:
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
