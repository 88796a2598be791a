"""Soft word matching for grounding: contextual token vectors of an embedding model."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from truthguard.refchecker._analysis import Analysed

__all__ = ["SoftMatcher"]


class SoftMatcher:
    """BERTScore-style word matching with contextual token vectors of an embedding model.

    Words are the mean of their tokens' vectors; vectors of evidence sentences are memoised
    (references are re-used across claims).
    """

    def __init__(self, embedder: Any, cache_size: int = 2_000) -> None:
        self.embedder = embedder
        self._cache: OrderedDict[str, tuple[np.ndarray, list[tuple[int, int]]]] = OrderedDict()
        self._lock = threading.Lock()
        self.cache_size = cache_size

    def _token_vectors(
        self, texts: Sequence[str]
    ) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        found: dict[str, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        missing: list[str] = []
        with self._lock:  # hits are taken now: another thread may evict them before we return
            for t in dict.fromkeys(texts):
                hit = self._cache.get(t)
                if hit is None:
                    missing.append(t)
                else:
                    self._cache.move_to_end(t)
                    found[t] = hit
        if missing:
            fresh = self.embedder.token_embeddings(missing)
            found.update(zip(missing, fresh, strict=True))
            with self._lock:
                for t, v in zip(missing, fresh, strict=True):
                    self._cache[t] = v
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [found[t] for t in texts]

    @staticmethod
    def _words(
        vecs: np.ndarray, offsets: list[tuple[int, int]], spans: list[tuple[int, int]]
    ) -> np.ndarray:
        rows = []
        for s, e in spans:
            idx = [i for i, (a, b) in enumerate(offsets) if a < e and b > s]
            v = vecs[idx].mean(axis=0) if idx else np.zeros(vecs.shape[1] if vecs.size else 1)
            n = np.linalg.norm(v)
            rows.append(v / n if n > 0 else v)
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 1), np.float32)

    def best(
        self,
        claim: Analysed,
        words: list[int],
        evidence: Sequence[Analysed],
        *,
        spans: Sequence[tuple[int, int]] | None = None,
    ) -> list[float]:
        """For each claim token index in ``words``: its best cosine with an evidence word.

        ``spans`` (character offsets in the claim, one per word) narrows a word to a part of it,
        such as the unmatched half of a hyphenated compound."""
        if not words or not evidence:
            return [0.0] * len(words)
        encoded = self._token_vectors([claim.text, *[ev.text for ev in evidence]])
        cv, co = encoded[0]
        if cv.size == 0:
            return [0.0] * len(words)
        if spans is None:
            spans = [(claim.tokens[i].start, claim.tokens[i].end) for i in words]
        cw = self._words(cv, co, list(spans))
        mats = []
        for ev, (ev_v, ev_o) in zip(evidence, encoded[1:], strict=True):
            if ev.content and ev_v.size:
                spans = [(ev.tokens[i].start, ev.tokens[i].end) for i in ev.content]
                mats.append(self._words(ev_v, ev_o, spans))
        if not mats:
            return [0.0] * len(words)
        sims = cw @ np.concatenate(mats).T
        return [float(x) for x in sims.max(axis=1)]


# -- fact matching -------------------------------------------------------------------------------
