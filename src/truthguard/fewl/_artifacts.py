"""What FEWL needs about one question, and how it is fetched: reference answers, IW/CO pairs,
neighbour questions and their reference answers.

Each item is read from the artifact store, or asked of its model once and stored
(:func:`~truthguard.store.cached_call`), so a second answer to the same question costs no model
call. Every call of one question goes out at once, and each text is embedded as soon as it is
known (while the other calls are in flight).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from truthguard.fewl._parse import (
    IWCOPairs,
    parse_iwco_pairs,
    parse_reference_answer,
    settled_halves,
)
from truthguard.fewl._prompts import PROMPT_VERSION, iwco_prompt, reference_prompt
from truthguard.llm import LLMSession, model_id
from truthguard.similarity import EmbeddingSimilarity, SimilarityBackend
from truthguard.store import ArtifactStore, cached_call

__all__ = [
    "IWCO_KIND",
    "REFERENCE_KIND",
    "ArtifactFetcher",
    "Artifacts",
    "Slot",
    "pair_prefetcher",
]

REFERENCE_KIND = "fewl.reference"
IWCO_KIND = "fewl.iwco"


@dataclass(frozen=True)
class Slot:
    """One reference answer source: a model and a sample index."""

    model: Any
    sample: int
    position: int | None = None
    """Panel position, set only when another panel model has the same :func:`model_id`: the
    cache key must then tell them apart, or both would be served one stored answer."""

    @property
    def name(self) -> str:
        base = f"{model_id(self.model)}#{self.sample}"
        return base if self.position is None else f"{base}@{self.position}"

    @property
    def extra(self) -> str:
        base = f"sample={self.sample}"
        return base if self.position is None else f"{base};panel={self.position}"


@dataclass
class Artifacts:
    """Everything FEWL needs about one question; shared by every candidate answer."""

    question: str
    slots: list[Slot]
    references: list[str]
    pairs: IWCOPairs | None
    neighbors: list[tuple[str, float | None]]
    neighbor_answers: list[list[str]]  # [reference slot][neighbour]
    co_sim: np.ndarray | None = None
    iw_sim: np.ndarray | None = None
    wrong_scores: list[float] | None = None


def pair_prefetcher(similarity: SimilarityBackend) -> Any:
    """An ``on_text`` callback that embeds each pair half as soon as it is settled, while
    the generator is still writing the rest (a no-op without an embedding backend)."""
    if not isinstance(similarity, EmbeddingSimilarity):
        return None
    embedder = similarity
    lock = threading.Lock()
    seen: set[str] = set()
    lines = [0]

    def on_text(text: str) -> None:
        with lock:  # the model's stream may call from a worker thread
            n = text.count("\n")
            if n == lines[0]:  # a half can only settle when a new line starts
                return
            lines[0] = n
            fresh = [h for h in settled_halves(text) if h not in seen]
            seen.update(fresh)
        if fresh:
            embedder.prefetch(fresh)

    return on_text


@dataclass
class ArtifactFetcher:
    """Fetches one question's artifacts with a FEWL detector's options."""

    similarity: SimilarityBackend
    """Where texts are embedded ahead of scoring (a no-op unless it embeds)."""
    generator: Any
    """The model that writes the IW/CO pairs."""
    n_pairs: int
    """Pairs asked for in the one generator call."""
    min_pairs: int
    """Fewest valid pairs accepted."""
    k_neighbors: int
    """Neighbour questions asked for."""
    max_neighbor_similarity: float | None
    """Neighbours more similar than this are skipped."""
    neighbor_mode: str
    """``knn`` or ``random``."""
    penalty: bool
    """Whether neighbours are needed at all (the laziness penalty)."""

    async def fetch(
        self,
        question: str,
        session: LLMSession,
        store: ArtifactStore,
        slots: list[Slot],
        answers: Sequence[str] = (),
        *,
        pairs: bool,
    ) -> Artifacts:
        """Everything about ``question``, every model call at once; ``answers`` (the candidates)
        are embedded meanwhile. ``pairs``: fetch the IW/CO pairs too."""

        async def own_reference(slot: Slot) -> str:
            text = await self._reference(session, store, slot, question, "fewl.reference")
            await self._prefetch([text])  # embedded while the other calls are in flight
            return text

        async def iwco() -> IWCOPairs:
            found = await self._pairs(session, store, self.generator, question)
            await self._prefetch([*found.wrong, *found.corrected])
            return found

        async def neighbour_branch() -> tuple[list[tuple[str, float | None]], list[list[str]]]:
            await asyncio.to_thread(store.add_questions, [question])
            neighbors = await self._neighbors(store, question) if self.penalty else []
            answers = await self._neighbor_references(
                session, store, slots, [q for q, _ in neighbors]
            )
            await self._prefetch([a for row in answers for a in row])
            return neighbors, answers

        # Every model call of the check at once: the question's own references and the IW/CO
        # pairs go out before the neighbour search, which runs (with its calls) alongside them.
        calls: list[Any] = [own_reference(slot) for slot in slots]
        if pairs:
            calls.append(iwco())
        calls.append(neighbour_branch())
        calls.append(self._prefetch(list(answers)))
        outputs = await session.gather(calls)

        references = outputs[: len(slots)]
        found_pairs = outputs[len(slots)] if pairs else None
        neighbors, neighbor_answers = outputs[-2]
        return Artifacts(question, slots, references, found_pairs, neighbors, neighbor_answers)

    async def _prefetch(self, texts: list[str]) -> None:
        """Embed texts into the process cache as soon as they are known (no-op otherwise)."""
        if texts and isinstance(self.similarity, EmbeddingSimilarity):
            await self.similarity.aembed(texts)

    async def _neighbor_references(
        self, session: LLMSession, store: ArtifactStore, slots: list[Slot], questions: list[str]
    ) -> list[list[str]]:
        """Reference answers of every slot to every neighbour: one store read per slot, then
        one concurrent call per answer not stored yet."""
        if not questions:
            return [[] for _ in slots]
        stored = await asyncio.gather(
            *(
                asyncio.to_thread(
                    store.get_artifacts,
                    questions,
                    REFERENCE_KIND,
                    model_id(slot.model),
                    PROMPT_VERSION,
                    slot.extra,
                )
                for slot in slots
            )
        )
        rows: list[list[Any]] = []
        for slot, found in zip(slots, stored, strict=True):
            row: list[Any] = []
            for q, hit in zip(questions, found, strict=True):
                text = str(hit).strip() if hit is not None else ""
                if text:
                    session.record_cache_hit()
                    row.append(text)
                else:  # absent (or unusable): ask, and embed the answer as soon as it comes
                    row.append(self._neighbor_reference(session, store, slot, q))
            rows.append(row)
        pending = [x for row in rows for x in row if not isinstance(x, str)]
        answers = iter(await session.gather(pending))
        return [[x if isinstance(x, str) else next(answers) for x in row] for row in rows]

    async def _neighbor_reference(
        self, session: LLMSession, store: ArtifactStore, slot: Slot, question: str
    ) -> str:
        # The bulk read just missed it: no second read before the call.
        text = await self._reference(
            session, store, slot, question, "fewl.neighbor_reference", lookup=False
        )
        if isinstance(self.similarity, EmbeddingSimilarity):
            self.similarity.prefetch([text])  # batched with the other answers arriving now
        return text

    async def _neighbors(
        self, store: ArtifactStore, question: str
    ) -> list[tuple[str, float | None]]:
        k, cut = self.k_neighbors, self.max_neighbor_similarity
        if self.neighbor_mode == "knn":
            found = await store.anearest(question, k, max_similarity=cut)
            return [(n.question, n.similarity) for n in found]
        pool = await asyncio.to_thread(
            store.random_questions, 4 * k, exclude=question, seed=question
        )
        if not pool:
            return []
        vecs = await asyncio.to_thread(store.embedder.embed, [question, *pool])
        sims = vecs[1:] @ vecs[0]
        keep = [(q, float(s)) for q, s in zip(pool, sims, strict=True) if cut is None or s <= cut]
        random.Random(question).shuffle(keep)
        return keep[:k]

    async def _cached(
        self,
        session: LLMSession,
        store: ArtifactStore,
        model: Any,
        prompt: str,
        *,
        question: str,
        kind: str,
        extra: str,
        stage: str,
        check: Any,
        on_text: Any = None,
        lookup: bool = True,
    ) -> Any:
        # cached_call validates with ``check`` before storing, and re-asks a stored artifact
        # ``check`` refuses (e.g. pairs stored under a smaller ``min_pairs``).
        text = await cached_call(
            session,
            model,
            prompt,
            store=store,
            question=question,
            kind=kind,
            prompt_version=PROMPT_VERSION,
            stage=stage,
            extra=extra,
            metadata={"fewl_question": question, "fewl_kind": kind, "fewl_extra": extra},
            validate=check,
            on_text=on_text,
            lookup=lookup,
        )
        return check(text)

    async def _reference(
        self,
        session: LLMSession,
        store: ArtifactStore,
        slot: Slot,
        question: str,
        stage: str,
        *,
        lookup: bool = True,
    ) -> str:
        def check(text: str) -> str:
            return parse_reference_answer(text, stage=stage, source=slot.name)

        return await self._cached(
            session,
            store,
            slot.model,
            reference_prompt(question, slot.sample),
            question=question,
            kind=REFERENCE_KIND,
            extra=slot.extra,
            stage=stage,
            check=check,
            lookup=lookup,
        )

    async def _pairs(
        self, session: LLMSession, store: ArtifactStore, generator: Any, question: str
    ) -> IWCOPairs:
        def check(text: str) -> IWCOPairs:
            return parse_iwco_pairs(
                text, limit=self.n_pairs, min_pairs=self.min_pairs, stage="fewl.iwco"
            )

        return await self._cached(
            session,
            store,
            generator,
            iwco_prompt(question, self.n_pairs),
            question=question,
            kind=IWCO_KIND,
            extra=f"n={self.n_pairs}",
            stage="fewl.iwco",
            check=check,
            on_text=pair_prefetcher(self.similarity),
        )
