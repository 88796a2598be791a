"""Claim-to-reference matching with embeddings: top-k segments and the evidence span of a claim.

The claims and the sentence spans of every segment are embedded in one call (the embedder
memoises texts, so a reference shared by several answers is encoded once). A segment's similarity
to a claim is that of its best-matching sentence: a segment is relevant when any of its sentences
is, and each reference sentence is encoded once instead of once alone and once in its segment.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from truthguard.memory import memoised
from truthguard.refchecker._analysis import analyse
from truthguard.refchecker._facts import stem
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.segment import Segment, Span
from truthguard.similarity import EmbeddingSimilarity

__all__ = ["Retrieval", "aretrieve", "lexical_candidates"]


@dataclass
class Retrieval:
    """Which segments each claim is checked against, and where its evidence lies."""

    segments: list[Segment]
    """All segments of the references."""
    top_k: list[list[int]]
    """Per claim, indices of its most similar segments, best first."""
    segment_sims: np.ndarray
    """Similarity of every claim to every segment (its best sentence), shape (claims, segments)."""
    evidence: list[tuple[int, Span, float]]
    """Per claim, (segment index, best sentence span in the reference, its cosine)."""

    @cached_property
    def one_document(self) -> bool:
        """Whether the segments all come from one reference (a document read whole)."""
        return len({seg.reference for seg in self.segments}) == 1

    def support(self, i: int) -> float:
        """Embedding support of claim ``i``: the cosine of its evidence span."""
        return self.evidence[i][2]


async def aretrieve(
    claims: list[Claim], segments: list[Segment], embedder: EmbeddingSimilarity, *, top_k: int
) -> Retrieval:
    """Embed claims and reference sentences in one call, then rank segments for each claim."""
    spans = [(j, span) for j, seg in enumerate(segments) for span in seg.spans]
    span_texts = [sp.text for _, sp in spans]
    if len(span_texts) > _LEXICAL_MIN:  # word look-ups off the loop for long references
        keep = await asyncio.to_thread(lexical_candidates, [c.text for c in claims], span_texts)
    else:
        keep = [True] * len(span_texts)
    kept = [t for t, k in zip(span_texts, keep, strict=True) if k]
    texts = [c.text for c in claims] + kept
    if len(texts) <= _CHUNK:
        vecs = await embedder.aembed(texts)
    else:  # each chunk's cache look-up is its own short step on the loop
        parts = [texts[i : i + _CHUNK] for i in range(0, len(texts), _CHUNK)]
        vecs = np.concatenate(await asyncio.gather(*(embedder.aembed(p) for p in parts)))
    if len(kept) < len(span_texts):
        # sentences sharing no word or fact with any claim are not encoded: similarity 0
        full = np.zeros((len(claims) + len(span_texts), vecs.shape[1]), dtype=vecs.dtype)
        full[: len(claims)] = vecs[: len(claims)]
        full[len(claims) + np.flatnonzero(keep)] = vecs[len(claims) :]
        vecs = full
    if len(claims) * max(1, len(segments)) > _OFF_LOOP_PAIRS:  # numpy work off the event loop
        return await asyncio.to_thread(_rank, claims, segments, spans, vecs, top_k)
    return _rank(claims, segments, spans, vecs, top_k)


_LEXICAL_MIN = 12
"""Reference sentences of one check up to which all are encoded (no lexical filter)."""


def lexical_candidates(claims: Sequence[str], spans: Sequence[str]) -> list[bool]:
    """Which reference sentences can be evidence: those sharing a content word (by stem) or
    a name / number with some claim. Encoding dominates a local check, and in a long reference
    most sentences share nothing with a short answer; a sentence sharing nothing could only be
    the evidence of a claim the grounding would find unsupported anyway. All of them when there
    are at most :data:`_LEXICAL_MIN`, or when none shares anything."""
    if len(spans) <= _LEXICAL_MIN:
        return [True] * len(spans)
    stems: set[str] = set()
    values: set[tuple[str, object]] = set()
    for text in claims:
        a = analyse(text)
        stems.update(stem(a.tokens[i].norm) for i in a.content)
        values.update((f.kind, f.value) for f in a.facts)
    where = _where(tuple(spans))
    out = [False] * len(spans)
    for key in (*stems, *values):
        for k in where.get(key, ()):
            out[k] = True
    return out if any(out) else [True] * len(spans)


def _where_bytes(where: dict[object, list[int]]) -> int:
    # measured with tracemalloc: about 1.5 x (100 + 8 a sentence) for each word or fact
    return sum(150 + 12 * len(at) for at in where.values())


@memoised("references", _where_bytes, part=0.3)
def _where(spans: tuple[str, ...]) -> dict[object, list[int]]:
    """The sentences each stem and each fact's ``(kind, value)`` occurs in, by index (memoised:
    every answer checked against one reference looks its sentences up again)."""
    out: dict[object, list[int]] = {}
    for k, text in enumerate(spans):
        a = analyse(text)
        for key in (*a.stems, *{(f.kind, f.value) for f in a.facts}):
            out.setdefault(key, []).append(k)
    return out


_CHUNK = 2_048
"""Texts per embedding request of one retrieval."""
_OFF_LOOP_PAIRS = 20_000
"""Claim x segment pairs above which the ranking runs on a worker thread."""


def _rank(
    claims: list[Claim],
    segments: list[Segment],
    spans: list[tuple[int, Span]],
    vecs: np.ndarray,
    top_k: int,
) -> Retrieval:
    n = len(claims)
    span_sims = vecs[:n] @ vecs[n:].T
    span_seg = np.array([j for j, _ in spans])
    # Best sentence per segment: spans are stored segment by segment, in order.
    starts = np.r_[0, np.flatnonzero(np.diff(span_seg)) + 1]
    seg_sims = np.maximum.reduceat(span_sims, starts, axis=1)
    k = min(top_k, len(segments))
    top: list[list[int]] = []
    evidence: list[tuple[int, Span, float]] = []
    for i in range(n):
        chosen = [int(j) for j in np.argsort(-seg_sims[i], kind="stable")[:k]]
        top.append(chosen)
        # the evidence is the best sentence of the best segment (only that one is looked up)
        s = int(starts[chosen[0]])
        b = s + int(np.argmax(span_sims[i, s : s + len(segments[chosen[0]].spans)]))
        evidence.append((chosen[0], spans[b][1], float(span_sims[i, b])))
    return Retrieval(segments, top, seg_sims, evidence)
