"""Claim-to-reference matching with embeddings: top-k segments and the evidence span of a claim.

Every claim, segment and sentence span of one check is embedded in a single call (the embedder
memoises texts, so a reference shared by several answers is encoded once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.segment import Segment, Span
from truthguard.similarity import EmbeddingSimilarity

__all__ = ["Retrieval", "aretrieve"]


@dataclass
class Retrieval:
    """Which segments each claim is checked against, and where its evidence lies."""

    segments: list[Segment]
    """All segments of the references."""
    top_k: list[list[int]]
    """Per claim, indices of its most similar segments, best first."""
    segment_sims: np.ndarray
    """Cosine of every claim with every segment, shape (claims, segments)."""
    evidence: list[tuple[int, Span, float]]
    """Per claim, (segment index, best sentence span in the reference, its cosine)."""

    def support(self, i: int) -> float:
        """Embedding support of claim ``i``: best cosine over its top-k segments and their spans."""
        best_seg = max(float(self.segment_sims[i, j]) for j in self.top_k[i])
        return max(best_seg, self.evidence[i][2])


async def aretrieve(
    claims: list[Claim], segments: list[Segment], embedder: EmbeddingSimilarity, *, top_k: int
) -> Retrieval:
    """Embed claims, segments and spans in one call and match them."""
    spans = [(j, span) for j, seg in enumerate(segments) for span in seg.spans]
    texts = [c.text for c in claims] + [s.text for s in segments] + [sp.text for _, sp in spans]
    vecs = await embedder.aembed(texts)
    n, m = len(claims), len(segments)
    c_vecs, s_vecs, p_vecs = vecs[:n], vecs[n : n + m], vecs[n + m :]
    seg_sims = c_vecs @ s_vecs.T
    span_sims = c_vecs @ p_vecs.T
    span_seg = np.array([j for j, _ in spans])
    top: list[list[int]] = []
    evidence: list[tuple[int, Span, float]] = []
    k = min(top_k, m)
    for i in range(n):
        order = np.argsort(-seg_sims[i], kind="stable")[:k]
        chosen = [int(j) for j in order]
        top.append(chosen)
        mask = np.isin(span_seg, chosen)
        cand = np.where(mask)[0]
        best = int(cand[np.argmax(span_sims[i, cand])])
        evidence.append((int(span_seg[best]), spans[best][1], float(span_sims[i, best])))
    return Retrieval(segments, top, seg_sims, evidence)
