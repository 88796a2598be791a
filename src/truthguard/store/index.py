"""An exact in-memory copy of the questions collection, for nearest-neighbour search."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Neighbor", "_QuestionIndex"]


@dataclass(frozen=True)
class Neighbor:
    """A stored question near a query question."""

    question: str
    similarity: float
    id: str


class _QuestionIndex:
    """An exact in-memory copy of the questions collection, for nearest-neighbour search.

    Chroma stays the record. The copy is loaded on first use, extended in place by this
    store's :meth:`ArtifactStore.add_questions`, and reloaded when the collection's count
    differs from it (another store or process added questions; questions are never deleted),
    which a search checks when the last check is older than ``refresh_seconds``.
    10,000 MiniLM questions take 15 MiB (up to twice that while the buffer grows). Callers hold
    the store's lock.
    """

    PAGE = 5000

    def __init__(self, refresh_seconds: float | None) -> None:
        self.refresh_seconds = refresh_seconds
        """How old a count check may be before a search checks again; None: never (nobody
        else writes this collection)."""
        self._checked = 0.0
        self.loaded = False
        self.ids: list[str] = []
        self.documents: list[str] = []
        self._rows: dict[str, int] = {}
        self._buf = np.zeros((0, 0), dtype=np.float32)

    @property
    def matrix(self) -> np.ndarray:
        return self._buf[: len(self.ids)]

    def sync(self, collection: Any) -> _QuestionIndex:
        """Reload when the collection holds questions this copy lacks (checked at most every
        ``refresh_seconds``: a count costs about a millisecond, the search itself less)."""
        now = time.monotonic()
        due = self.refresh_seconds is not None and now - self._checked >= self.refresh_seconds
        if not self.loaded or due:
            count = int(collection.count())
            self._checked = now
            if not self.loaded or count != len(self.ids):
                self._load(collection, count)
        return self

    def _load(self, collection: Any, count: int) -> None:
        self.loaded, self.ids, self.documents, self._rows = True, [], [], {}
        self._buf = np.zeros((0, 0), dtype=np.float32)
        for offset in range(0, count, self.PAGE):
            page = collection.get(
                include=["documents", "embeddings"], limit=self.PAGE, offset=offset
            )
            if len(page["ids"]):
                self._append(
                    list(page["ids"]),
                    list(page["documents"] or []),
                    np.asarray(page["embeddings"], dtype=np.float32),
                )

    def added(self, ids: list[str], documents: list[str], vectors: np.ndarray) -> None:
        """Questions this store just wrote (ignored until the copy is loaded)."""
        if self.loaded and ids:
            self._append(ids, documents, np.asarray(vectors, dtype=np.float32))

    def _append(self, ids: list[str], documents: list[str], vectors: np.ndarray) -> None:
        n, extra = len(self.ids), len(ids)
        if self._buf.shape[0] < n + extra or self._buf.shape[1] != vectors.shape[1]:
            grown = np.zeros((max(2 * (n + extra), 1024), vectors.shape[1]), dtype=np.float32)
            if n:
                grown[:n] = self._buf[:n]
            self._buf = grown
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._buf[n : n + extra] = vectors / np.maximum(norms, 1e-12)
        for offset, qid in enumerate(ids):
            self._rows[qid] = n + offset
        self.ids += ids
        self.documents += documents

    def search(
        self, vector: np.ndarray, k: int, *, max_similarity: float | None, exclude: str | None
    ) -> list[Neighbor]:
        """Exact cosine top-``k``, most similar first (ties: the earlier stored first)."""
        if not self.ids:
            return []
        norm = float(np.linalg.norm(vector))
        sims = self.matrix @ (vector / norm if norm > 0 else vector)
        keep = np.ones(len(self.ids), dtype=bool)
        if max_similarity is not None:
            keep &= sims <= max_similarity
        if exclude is not None and exclude in self._rows:
            keep[self._rows[exclude]] = False
        candidates = np.flatnonzero(keep)
        if len(candidates) > k:
            # Keep every tie of the k-th similarity: argpartition picks among ties at random.
            kth = -np.partition(-sims[candidates], k - 1)[k - 1]
            candidates = candidates[sims[candidates] >= kth]
        order = candidates[np.lexsort((candidates, -sims[candidates]))][:k]
        return [
            Neighbor(question=self.documents[i], similarity=float(sims[i]), id=self.ids[i])
            for i in order
        ]
