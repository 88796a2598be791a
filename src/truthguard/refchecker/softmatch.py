"""Soft word matching for grounding: contextual token vectors of an embedding model."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from truthguard.memory import SizedCache
from truthguard.refchecker._analysis import Analysed

__all__ = ["TOKEN_VECTORS", "SoftMatcher"]

TOKEN_VECTORS: SizedCache[tuple[str, str], tuple[np.ndarray, list[tuple[int, int]]]] = SizedCache(
    "token vectors"
)
"""Token vectors and offsets of texts, by (model, text), for every matcher of the process."""

_serials = itertools.count()


class SoftMatcher:
    """BERTScore-style word matching with contextual token vectors of an embedding model.

    Words are the mean of their tokens' vectors; vectors of evidence sentences are memoised
    (references are re-used across claims) in ``cache``, by default the process-wide one that
    takes the token vectors' share of the memory budget (see :mod:`truthguard.memory`);
    matchers over one model share its entries.
    """

    def __init__(self, embedder: Any, cache: SizedCache[Any, Any] | None = None) -> None:
        self.embedder = embedder
        self._cache = TOKEN_VECTORS if cache is None else cache
        self._model = getattr(embedder, "cache_key", None) or f"#{next(_serials)}"

    def _token_vectors(
        self, texts: Sequence[str]
    ) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        found: dict[str, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        missing: list[str] = []
        for t in dict.fromkeys(texts):  # hits are taken now: another thread may evict them
            hit = self._cache.get((self._model, t))
            if hit is None:
                missing.append(t)
            else:
                found[t] = hit
        if missing:
            fresh = self.embedder.token_embeddings(missing)
            found.update(zip(missing, fresh, strict=True))
            for t, (vecs, offsets) in zip(missing, fresh, strict=True):
                self._cache.put((self._model, t), (vecs, offsets), vecs.nbytes + 64 * len(offsets))
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
