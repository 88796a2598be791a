"""The interface every similarity backend implements."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from truthguard.errors import InvalidInputError

__all__ = ["SimilarityBackend"]


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
