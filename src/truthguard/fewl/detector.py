"""The FEWL detector: Algorithm 1 of the FEWL paper as a LangChain Runnable."""

from __future__ import annotations

import contextlib
import math
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from truthguard._sync import run_sync
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError, InvalidLLMOutput, LLMCallError
from truthguard.fewl._artifacts import (
    IWCO_KIND,
    REFERENCE_KIND,
    ArtifactFetcher,
    Artifacts,
    Slot,
    pair_prefetcher,
)
from truthguard.fewl._formula import FEWLBreakdown, fewl_formula
from truthguard.llm import LLMSession, as_runnable, model_id
from truthguard.result import DetectionResult, Label
from truthguard.similarity import EmbeddingSimilarity, SimilarityBackend, get_default_similarity
from truthguard.store import ArtifactStore

__all__ = ["FEWL", "IWCO_KIND", "REFERENCE_KIND"]

_OWN_STORE_LOCK = threading.Lock()


def _drop_collections(client: Any, names: list[str]) -> None:
    for name in names:
        with contextlib.suppress(Exception):  # already gone, or Chroma torn down at exit
            client.delete_collection(name)


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

    def _slots(self) -> list[Slot]:
        mode = self.effective_mode
        if mode == "panel":
            ids = [model_id(m) for m in self.reference_models]
            return [
                Slot(m, 0, i if ids.count(ids[i]) > 1 else None)
                for i, m in enumerate(self.reference_models)
            ]
        if mode == "multi":
            return [Slot(self.reference_models[0], s) for s in range(self.n_samples)]
        return [Slot(self.reference_models[0], 0)]

    @property
    def _needs_pairs(self) -> bool:
        return self.expertise == "estimated" or self.threshold is None

    def get_store(self) -> ArtifactStore:
        """The store in use (creating the private in-memory one on first need)."""
        if self.store is not None:
            return self.store
        if self._own_store is None:
            with _OWN_STORE_LOCK:  # checks on two event loops at once must share one store
                if self._own_store is None:
                    self._own_store = self._private_store()
        return self._own_store

    def _private_store(self) -> ArtifactStore:
        embedder = self.similarity if isinstance(self.similarity, EmbeddingSimilarity) else None
        store = ArtifactStore.in_memory(embedder=embedder)
        # Its collections live in the process-wide ephemeral Chroma: drop them with the store,
        # or every detector made without a store (one per request, say) leaks its artifacts.
        names = [f"{store.namespace}_questions", f"{store.namespace}_artifacts"]
        weakref.finalize(store, _drop_collections, store.client, names)
        return store

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
    ) -> Artifacts:
        fetcher = ArtifactFetcher(
            similarity=self.similarity,
            generator=self.generator if self.generator is not None else self.reference_models[0],
            n_pairs=self.n_pairs,
            min_pairs=self.min_pairs,
            k_neighbors=self.k_neighbors,
            max_neighbor_similarity=self.max_neighbor_similarity,
            neighbor_mode=self.neighbor_mode,
            penalty=self.penalty,
        )
        return await fetcher.fetch(
            question, session, self.get_store(), self._slots(), answers, pairs=self._needs_pairs
        )

    def _pair_prefetcher(self) -> Any:
        """Embeds each IW/CO half as it settles in a streamed reply (None without embeddings)."""
        return pair_prefetcher(self.similarity)

    # -- scoring ------------------------------------------------------------------------------

    def _formula(self, truth: np.ndarray, nb: np.ndarray | None, arts: Artifacts) -> FEWLBreakdown:
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

    def _neighbor_texts(self, arts: Artifacts) -> list[str]:
        return [a for row in arts.neighbor_answers for a in row]

    async def _candidate_sims(
        self, texts: list[str], arts: Artifacts
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Similarity of each text with the references (T, N) and the neighbour answers."""
        truth = await self.similarity.amatrix(texts, arts.references)
        flat = self._neighbor_texts(arts)
        if not flat:
            return truth, None
        n, k = len(arts.references), len(arts.neighbors)
        nb = await self.similarity.amatrix(texts, flat)
        return truth, nb.reshape(len(texts), n, k)

    async def _prepare(self, arts: Artifacts) -> None:
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

    async def _score(self, answer: str, arts: Artifacts) -> DetectionResult:
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
