"""What every embedding runtime gives: an :class:`Encoder` (a loaded model) and a
:class:`Runtime` (how it loads one and where that encoder runs).

:class:`~truthguard.similarity.EmbeddingSimilarity` talks to the runtime it was given through
these two interfaces only, so adding a runtime is one module in this package and one entry in
:mod:`truthguard.embedding.runtimes`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

__all__ = ["Encoder", "Runtime", "TokenVectors"]

TokenVectors = tuple[np.ndarray, list[tuple[int, int]]]
"""One text's L2-normalised token vectors, shape (n_tokens, dim), and each token's (start, end)
character offsets in the text, special tokens dropped."""


class Encoder(Protocol):
    """A loaded embedding model.

    Encoders may also have ``threads`` (the cores one call uses), which decides how many calls
    the encode worker runs side by side (see :func:`~truthguard.embedding.parallel_encodes`).
    """

    serial: bool
    """True when calls run one at a time on every core: never run two side by side."""

    def encode(self, texts: Sequence[str], **options: Any) -> np.ndarray:
        """Sentence embeddings, shape ``(len(texts), dim)``, in input order. The options are
        sentence-transformers' (``batch_size``, ``normalize_embeddings``, ...); an encoder
        ignores those it has no use for."""
        ...

    def token_vectors(self, texts: Sequence[str], *, batch_size: int = 32) -> list[TokenVectors]:
        """Per text: its contextual token vectors and their character offsets."""
        ...

    def get_sentence_embedding_dimension(self) -> int:
        """The length of a sentence embedding."""
        ...


class Runtime(ABC):
    """How one runtime loads a model directory, and what tells its loaded encoders apart.

    Loaded encoders are shared: loading the same model with the same settings twice in a
    process returns the same encoder.
    """

    name: ClassVar[str]
    """The ``backend`` name that selects this runtime."""
    cpu_only: ClassVar[bool] = False
    """Whether the runtime refuses every device but ``"cpu"``."""

    @abstractmethod
    def load(self, path: str, *, device: str, cache_dir: Path, threads: int | None) -> Encoder:
        """The encoder of the model directory ``path`` (``threads=None``: the default)."""

    @abstractmethod
    def placement(self, *, device: str, cache_dir: Path, threads: int | None) -> tuple[Any, ...]:
        """Besides the model, what tells two of this runtime's encoders apart."""
