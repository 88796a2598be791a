"""The FEWL detector: Algorithm 1 of the FEWL paper as a LangChain Runnable."""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from truthguard._sync import run_sync
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError, InvalidLLMOutput, LLMCallError
from truthguard.fewl._formula import FEWLBreakdown, fewl_formula
from truthguard.fewl._parse import (
    IWCOPairs,
    parse_iwco_pairs,
    parse_reference_answer,
    settled_halves,
)
from truthguard.fewl._prompts import PROMPT_VERSION, iwco_prompt, reference_prompt
from truthguard.llm import LLMSession, as_runnable, model_id
from truthguard.result import DetectionResult, Label
from truthguard.similarity import EmbeddingSimilarity, SimilarityBackend, get_default_similarity
from truthguard.store import ArtifactStore, cached_call

__all__ = ["FEWL", "IWCO_KIND", "REFERENCE_KIND"]

REFERENCE_KIND = "fewl.reference"
IWCO_KIND = "fewl.iwco"


def _drop_collections(client: Any, names: list[str]) -> None:
    for name in names:
        with contextlib.suppress(Exception):  # already gone, or Chroma torn down at exit
            client.delete_collection(name)


@dataclass(frozen=True)
class _Slot:
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
class _Artifacts:
    """Everything FEWL needs about one question; shared by every candidate answer."""

    question: str
    slots: list[_Slot]
    references: list[str]
    pairs: IWCOPairs | None
    neighbors: list[tuple[str, float | None]]
    neighbor_answers: list[list[str]]  # [reference slot][neighbour]
    co_sim: np.ndarray | None = None
    iw_sim: np.ndarray | None = None
    wrong_scores: list[float] | None = None


class FEWL(BaseDetector):
    """FEWL: factualness of an answer measured against reference LLMs, without a gold answer.

    For a question ``x`` and a candidate answer ``y`` (the ``answer`` field), FEWL asks reference
    models for their own answers ``h_i(x)``, weights them by an expertise score estimated from
    generated intentionally wrong (IW) and corrected (CO) answers, and subtracts a laziness
    penalty: how similar ``y`` is to the reference answers of nearby, different questions from
    the store. Scores are comparable between answers to one question (use :meth:`rank`);
    they have no absolute scale.

    Label: with ``threshold`` set, ``factual`` iff ``score >= threshold``. Without it, the
    generated wrong answers are scored like candidates (same references, same neighbours, no
    extra model call) and the answer is ``factual`` iff its score is above their median, so IW/CO
    pairs are generated even with ``expertise="uniform"`` unless a threshold is given.

    Every model call of one check runs concurrently; reference answers (to the question and to
    its neighbours) and IW/CO pairs are stored, so a second answer to the same question costs no
    model call.

    Example:
        >>> from truthguard.testing import ScriptedChatModel
        >>> from truthguard.similarity import LexicalSimilarity
        >>> ref = ScriptedChatModel(model_name="ref", default="Paris is the capital of France.")
        >>> detector = FEWL(reference_models=[ref], mode="single", expertise="uniform",
        ...                 penalty=False, threshold=0.1, similarity=LexicalSimilarity())
        >>> detector.check("What is the capital of France?", "The capital is Paris.").label.value
        'factual'
    """

    detector_name = "fewl"

    reference_models: list[Any] = Field(min_length=1)
    """Reference chat models h_i (LangChain chat models, Runnables or callables)."""
    mode: Literal["panel", "multi", "single"] | None = None
    """``panel``: each reference model answers once (N = number of models); ``multi``: the one
    reference model answers ``n_samples`` times; ``single``: the first model answers once (N=1).
    None picks ``panel`` for several models and ``multi`` for one."""
    n_samples: int = Field(default=5, ge=1)
    """Answers drawn from the single reference model in ``multi`` mode (M)."""
    generator: Any = None
    """Model that writes the IW/CO pairs; None uses the first reference model."""
    n_pairs: int = Field(default=25, ge=1)
    """Wrong/corrected pairs requested in the one generator call (R)."""
    min_pairs: int = Field(default=5, ge=1)
    """Fewest valid pairs accepted; fewer makes the result ``invalid``."""
    k_neighbors: int = Field(default=25, ge=1)
    """Neighbour questions in the laziness penalty (K)."""
    max_neighbor_similarity: float | None = Field(default=0.8, gt=-1.0, le=1.0)
    """Skip neighbour questions more similar than this (near-duplicates); None keeps all."""
    neighbor_mode: Literal["knn", "random"] = "knn"
    """``knn``: the K nearest stored questions; ``random``: K random stored questions under the
    similarity cut-off (the paper's tables 9 / 11)."""
    divergence: Literal["tv", "js", "kl"] = "tv"
    """f-divergence whose variational form combines the two terms."""
    expertise: Literal["estimated", "uniform", "given"] = "estimated"
    """How the weights lambda are set: from IW/CO answers, 1/N, or from ``weights``."""
    weights: list[float] | None = None
    """Expertise weights for ``expertise="given"``, one per reference answer."""
    penalty: bool = True
    """Subtract the laziness penalty."""
    similarity: SimilarityBackend = Field(default_factory=get_default_similarity)
    """Similarity(a, b) of two texts (default: packaged MiniLM embedding cosine)."""
    store: ArtifactStore | None = None
    """Where questions and artifacts live; None uses a private in-memory store that lives as
    long as this detector (neighbours then come only from questions it has seen)."""

    _own_store: ArtifactStore | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_options(self) -> FEWL:
        mode = self.effective_mode
        if mode == "multi" and len(self.reference_models) != 1:
            raise ValueError("mode: 'multi' samples one model; pass exactly one reference model")
        if self.min_pairs > self.n_pairs:
            raise ValueError(f"min_pairs: {self.min_pairs} exceeds n_pairs={self.n_pairs}")
        if self.expertise == "given":
            if self.weights is None:
                raise ValueError("weights: required when expertise='given'")
            if len(self.weights) != self.n_references:
                raise ValueError(
                    f"weights: expected {self.n_references} (one per reference answer), "
                    f"got {len(self.weights)}"
                )
            # Checked here, not after the reference models have been paid for.
            if not all(math.isfinite(w) and w >= 0 for w in self.weights) or not sum(self.weights):
                raise ValueError("weights: must be finite, non-negative, with a positive sum")
        # Last, so the option checks above keep their own messages.
        for i, model in enumerate(self.reference_models):
            as_runnable(model, field=f"reference_models[{i}]")
        if self.generator is not None:
            as_runnable(self.generator, field="generator")
        return self

    # -- configuration helpers ----------------------------------------------------------------

    @property
    def effective_mode(self) -> str:
        """The mode in use (``mode``, or the default for the number of models)."""
        if self.mode is not None:
            return self.mode
        return "panel" if len(self.reference_models) > 1 else "multi"

    @property
    def n_references(self) -> int:
        """N, the number of reference answers per question."""
        return len(self._slots())

    def _slots(self) -> list[_Slot]:
        mode = self.effective_mode
        if mode == "panel":
            ids = [model_id(m) for m in self.reference_models]
            return [
                _Slot(m, 0, i if ids.count(ids[i]) > 1 else None)
                for i, m in enumerate(self.reference_models)
            ]
        if mode == "multi":
            return [_Slot(self.reference_models[0], s) for s in range(self.n_samples)]
        return [_Slot(self.reference_models[0], 0)]

    @property
    def _needs_pairs(self) -> bool:
        return self.expertise == "estimated" or self.threshold is None

    def get_store(self) -> ArtifactStore:
        """The store in use (creating the private in-memory one on first need)."""
        if self.store is not None:
            return self.store
        if self._own_store is None:
            embedder = self.similarity if isinstance(self.similarity, EmbeddingSimilarity) else None
            store = ArtifactStore.in_memory(embedder=embedder)
            # Its collections live in the process-wide ephemeral Chroma: drop them with the store,
            # or every detector made without a store (one per request, say) leaks its artifacts.
            names = [f"{store.namespace}_questions", f"{store.namespace}_artifacts"]
            weakref.finalize(store, _drop_collections, store.client, names)
            self._own_store = store
        return self._own_store

    # -- public ranking API -------------------------------------------------------------------

    def rank(self, question: str, answers: Sequence[str]) -> list[tuple[str, DetectionResult]]:
        """Candidates ordered by FEWL score, best first (invalid results last).

        All candidates share one set of artifacts (reference answers, IW/CO pairs, neighbours),
        so ranking ``n`` answers costs the model calls of one check. Each result's ``usage`` is
        that of the whole ranking.
        """
        return run_sync(self.arank(question, answers))

    async def arank(
        self, question: str, answers: Sequence[str]
    ) -> list[tuple[str, DetectionResult]]:
        """Async twin of :meth:`rank`."""
        if isinstance(answers, str) or not isinstance(answers, Sequence):
            raise InvalidInputError("answers", "expected a list of answer strings")
        if not answers:
            raise InvalidInputError("answers", "needs at least one answer")
        inputs = []
        for i, a in enumerate(answers):
            try:
                inputs.append(self.validate_input({"question": question, "answer": a}))
            except InvalidInputError as e:
                if e.field != "answer":
                    raise
                raise InvalidInputError(f"answers[{i}]", str(e).split(": ", 1)[-1]) from e
        session = LLMSession(self.llm_settings, defer_writes=True)
        started = time.perf_counter()
        try:
            results = await self._ranked(question, inputs, session)
        except BaseException:
            session.abandon()
            raise
        await session.drain()
        final = [
            self._finalize(r, inp, session, started) for r, inp in zip(results, inputs, strict=True)
        ]
        order = sorted(
            range(len(final)),
            key=lambda i: (final[i].score is None, -(final[i].score or 0.0), i),
        )
        return [(inputs[i].answer, final[i]) for i in order]

    async def _ranked(
        self, question: str, inputs: list[DetectorInput], session: LLMSession
    ) -> list[DetectionResult]:
        try:
            arts = await self._artifacts(question, session, [inp.answer for inp in inputs])
            await self._prepare(arts)
            results = [await self._score(inp.answer, arts) for inp in inputs]
        except InvalidLLMOutput as e:
            bad = DetectionResult.invalid(
                self.detector_name, str(e), raw_output=e.raw, details={"stage": e.stage}
            )
            results = [bad] * len(inputs)
        except LLMCallError as e:
            if self.llm_settings.raise_on_error:
                raise
            bad = DetectionResult.invalid(
                self.detector_name, str(e), details={"stage": e.stage, "error": str(e.__cause__)}
            )
            results = [bad] * len(inputs)
        return results

    # -- the check ----------------------------------------------------------------------------

    async def _acheck(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        arts = await self._artifacts(inp.question, session, [inp.answer])
        await self._prepare(arts)
        return await self._score(inp.answer, arts)

    async def _artifacts(
        self, question: str, session: LLMSession, answers: Sequence[str] = ()
    ) -> _Artifacts:
        store = self.get_store()
        slots = self._slots()
        generator = self.generator if self.generator is not None else self.reference_models[0]

        async def own_reference(slot: _Slot) -> str:
            text = await self._reference(session, store, slot, question, "fewl.reference")
            await self._prefetch([text])  # embedded while the other calls are in flight
            return text

        async def pairs() -> IWCOPairs:
            found = await self._pairs(session, store, generator, question)
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
        if self._needs_pairs:
            calls.append(pairs())
        calls.append(neighbour_branch())
        calls.append(self._prefetch(list(answers)))
        outputs = await session.gather(calls)

        references = outputs[: len(slots)]
        found_pairs = outputs[len(slots)] if self._needs_pairs else None
        neighbors, neighbor_answers = outputs[-2]
        return _Artifacts(question, slots, references, found_pairs, neighbors, neighbor_answers)

    async def _prefetch(self, texts: list[str]) -> None:
        """Embed texts into the process cache as soon as they are known (no-op otherwise)."""
        if texts and isinstance(self.similarity, EmbeddingSimilarity):
            await self.similarity.aembed(texts)

    async def _neighbor_references(
        self, session: LLMSession, store: ArtifactStore, slots: list[_Slot], questions: list[str]
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
        self, session: LLMSession, store: ArtifactStore, slot: _Slot, question: str
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
        slot: _Slot,
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

    def _pair_prefetcher(self) -> Any:
        """An ``on_text`` callback that embeds each pair half as soon as it is settled, while
        the generator is still writing the rest (a no-op without an embedding backend)."""
        if not isinstance(self.similarity, EmbeddingSimilarity):
            return None
        similarity = self.similarity
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
                similarity.prefetch(fresh)

        return on_text

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
            on_text=self._pair_prefetcher(),
        )

    # -- scoring ------------------------------------------------------------------------------

    def _formula(self, truth: np.ndarray, nb: np.ndarray | None, arts: _Artifacts) -> FEWLBreakdown:
        return fewl_formula(
            truth,
            arts.co_sim,
            arts.iw_sim,
            nb,
            divergence=self.divergence,
            expertise=self.expertise,
            penalty=nb is not None,
            weights=self.weights,
        )

    def _neighbor_texts(self, arts: _Artifacts) -> list[str]:
        return [a for row in arts.neighbor_answers for a in row]

    async def _candidate_sims(
        self, texts: list[str], arts: _Artifacts
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Similarity of each text with the references (T, N) and the neighbour answers."""
        truth = await self.similarity.amatrix(texts, arts.references)
        flat = self._neighbor_texts(arts)
        if not flat:
            return truth, None
        n, k = len(arts.references), len(arts.neighbors)
        nb = await self.similarity.amatrix(texts, flat)
        return truth, nb.reshape(len(texts), n, k)

    async def _prepare(self, arts: _Artifacts) -> None:
        """Similarities that do not depend on the candidate (expertise, wrong-answer baseline)."""
        if arts.pairs is None:
            return
        if self.expertise == "estimated":
            arts.co_sim = await self.similarity.amatrix(arts.references, arts.pairs.corrected)
            arts.iw_sim = await self.similarity.amatrix(arts.references, arts.pairs.wrong)
        if self.threshold is None:
            truth, nb = await self._candidate_sims(arts.pairs.wrong, arts)
            arts.wrong_scores = [
                self._formula(truth[j], None if nb is None else nb[j], arts).score
                for j in range(len(arts.pairs.wrong))
            ]

    async def _score(self, answer: str, arts: _Artifacts) -> DetectionResult:
        truth, nb = await self._candidate_sims([answer], arts)
        breakdown = self._formula(truth[0], None if nb is None else nb[0], arts)
        score = breakdown.score
        if self.threshold is not None:
            factual = score >= self.threshold
            rule = f"score {score:.4f} {'>=' if factual else '<'} threshold {self.threshold:g}"
        else:
            wrong = np.asarray(arts.wrong_scores)
            median = float(np.median(wrong))
            factual = score > median
            beaten = int((wrong < score).sum())
            rule = (
                f"default rule (no threshold): it outscores {beaten} of {len(wrong)} generated "
                f"wrong answers; factual iff above their median {median:.4f}"
            )
        penalty_note = (
            f"laziness penalty over {len(arts.neighbors)} {self.neighbor_mode} neighbour questions"
            if nb is not None
            else (
                "laziness penalty skipped: no stored neighbour question under the cut-off"
                if self.penalty
                else "no laziness penalty"
            )
        )
        explanation = (
            f"FEWL score {score:.4f} ({self.divergence.upper()}, {self.expertise} expertise over "
            f"{len(arts.references)} reference answers, {penalty_note}). Label "
            f"{'factual' if factual else 'hallucinated'}: {rule}. FEWL scores have no absolute "
            "scale; compare answers to the same question."
        )
        details: dict[str, Any] = {
            "breakdown": breakdown.to_dict(),
            "references": [
                {"model": s.name, "answer": a}
                for s, a in zip(arts.slots, arts.references, strict=True)
            ],
            "neighbors": [{"question": q, "similarity": s} for q, s in arts.neighbors],
            "neighbor_mode": self.neighbor_mode,
            "penalty_applied": nb is not None,
            "mode": self.effective_mode,
            "label_rule": "threshold" if self.threshold is not None else "wrong_answer_median",
        }
        if arts.pairs is not None:
            details["iwco_pairs"] = [{"wrong": w, "corrected": c} for w, c in arts.pairs.pairs]
            details["iwco_dropped_halves"] = arts.pairs.dropped
        if arts.wrong_scores is not None:
            details["wrong_answer_scores"] = arts.wrong_scores
        return DetectionResult(
            detector=self.detector_name,
            score=score,
            label=Label.FACTUAL if factual else Label.HALLUCINATED,
            explanation=explanation,
            details=details,
        )
