"""Claim checkers: label each claim Entailment / Neutral / Contradiction against the references.

* :class:`LLMChecker`: an LLM reads the claim's top-k reference segments (paper section 3.2), one
  call per claim or, in joint mode, several claims per call.
* :class:`LocalChecker`: no LLM; embedding similarity of the claim to its best passage, or the
  probabilities of a sentence-transformers ``CrossEncoder`` NLI model when one is given.

Each verdict carries a *support* in [0, 1] used by the ``mean_support`` / ``min_support`` scores:
1 or 0 for an LLM label (Entailment or not), the cosine for the embedding checker, the entailment
probability for the NLI checker.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from truthguard.errors import ConfigurationError
from truthguard.llm import LLMSession, as_runnable
from truthguard.refchecker._parse import parse_joint_labels, parse_label
from truthguard.refchecker._prompts import CHECK_PROMPT, JOINT_CHECK_PROMPT, PROMPT_VERSION
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.lexical import content_recall
from truthguard.refchecker.retrieval import Retrieval
from truthguard.similarity import CrossEncoderSimilarity
from truthguard.store import ArtifactStore, cached_call

__all__ = ["ClaimChecker", "ClaimVerdict", "LLMChecker", "LocalChecker"]


class ClaimVerdict(BaseModel):
    """A checker's verdict on one claim."""

    model_config = ConfigDict(extra="forbid")

    label: str
    """Entailment, Neutral or Contradiction."""
    support: float
    """How well the references support the claim, in [0, 1]."""
    raw: str
    """The checker's raw output for this claim (LLM text, or the local checker's numbers)."""
    mode: str
    """How it was reached: single, joint, joint-fallback, embedding or nli."""


class ClaimChecker(BaseModel, ABC):
    """Base class of checkers."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @abstractmethod
    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order."""


def _passages(retrieval: Retrieval, indices: list[int]) -> str:
    return "\n".join(f"[{n}] {retrieval.segments[j].text}" for n, j in enumerate(indices, 1))


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()


class LLMChecker(ClaimChecker):
    """Labels claims with an LLM, one call per claim or several claims per call.

    In joint mode a reply that does not align with its claims (a number missing, repeated or
    unreadable) is re-asked claim by claim; no label is ever filled in by default.

    Example:
        >>> from truthguard.testing import ScriptedChatModel
        >>> checker = LLMChecker(model=ScriptedChatModel(default="Entailment"), joint=True)
    """

    model: Any
    """A LangChain chat model (or any Runnable / callable str -> str)."""
    joint: bool = False
    """Check several claims per call (fewer calls, longer prompts)."""
    joint_size: int = Field(default=8, ge=1)
    """Most claims per joint call."""

    @field_validator("model")
    @classmethod
    def _model_like(cls, v: Any) -> Any:
        as_runnable(v, field="model")  # a wrong model fails here, not at the first check
        return v

    async def _ask(
        self,
        question: str,
        claim: Claim,
        indices: list[int],
        retrieval: Retrieval,
        session: LLMSession,
        store: ArtifactStore | None,
        mode: str,
    ) -> ClaimVerdict:
        reference = _passages(retrieval, indices)
        prompt = CHECK_PROMPT.format(
            question=question, reference=reference, claim=claim.prompt_text()
        )
        # cached_call validates before storing and re-asks a stored reply the parser refuses.
        text = await cached_call(
            session,
            self.model,
            prompt,
            store=store,
            question=question,
            kind="refchecker.check",
            prompt_version=PROMPT_VERSION,
            stage="refchecker.check",
            extra=_digest(claim.prompt_text(), reference),
            metadata={"replay_key": f"check:{question}\x1f{claim.prompt_text()}"},
            validate=lambda t: parse_label(t, stage="refchecker.check"),
        )
        label = parse_label(text, stage="refchecker.check")
        return ClaimVerdict(label=label, support=float(label == "Entailment"), raw=text, mode=mode)

    async def _ask_joint(
        self,
        question: str,
        chunk: list[int],
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        indices = list(dict.fromkeys(j for i in chunk for j in retrieval.top_k[i]))
        reference = _passages(retrieval, indices)
        listed = "\n".join(f"{n}. {claims[i].prompt_text()}" for n, i in enumerate(chunk, 1))
        prompt = JOINT_CHECK_PROMPT.format(
            question=question, reference=reference, claims=listed, n=len(chunk)
        )
        text = await cached_call(
            session,
            self.model,
            prompt,
            store=store,
            question=question,
            kind="refchecker.check.joint",
            prompt_version=PROMPT_VERSION,
            stage="refchecker.check.joint",
            extra=_digest(listed, reference),
            metadata={"replay_key": f"joint:{question}\x1f{listed}"},
        )
        labels = parse_joint_labels(text, len(chunk))
        if labels is None:  # misaligned: re-ask each claim on its own
            return await session.gather(
                self._ask(
                    question,
                    claims[i],
                    retrieval.top_k[i],
                    retrieval,
                    session,
                    store,
                    "joint-fallback",
                )
                for i in chunk
            )
        return [
            ClaimVerdict(label=lab, support=float(lab == "Entailment"), raw=text, mode="joint")
            for lab in labels
        ]

    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        if not self.joint:
            return await session.gather(
                self._ask(question, c, retrieval.top_k[i], retrieval, session, store, "single")
                for i, c in enumerate(claims)
            )
        chunks = [
            list(range(s, min(s + self.joint_size, len(claims))))
            for s in range(0, len(claims), self.joint_size)
        ]
        parts = await session.gather(
            self._ask_joint(question, chunk, claims, retrieval, session, store) for chunk in chunks
        )
        return [v for part in parts for v in part]


class LocalChecker(ClaimChecker):
    """Labels claims without an LLM.

    Embedding mode (default): a claim's support mixes its best cosine similarity (packaged
    MiniLM) with a sentence of its top-k segments and, with weight ``lexical_weight``, the share
    of its content words found in those segments. It is labelled Entailment at or above
    ``entailment_threshold`` and Neutral below: similarity cannot tell a contradiction from an
    unrelated statement, so this mode never says Contradiction. The default 0.6 sits where MiniLM
    places close paraphrases (cosine around 0.6 to 0.9), above unrelated sentences on the same
    topic (typically 0.2 to 0.5); a claim whose words all occur in its evidence passes it from a
    cosine of 0.2 up.

    NLI mode (``nli`` set): a sentence-transformers ``CrossEncoder`` NLI model scores each
    (segment, claim) pair of the claim's top-k segments. As RefChecker's rule has it, the claim is
    Entailment when some segment entails it (probability >= ``nli_threshold``), else
    Contradiction when some segment contradicts it (same threshold), else Neutral; its support is
    the highest entailment probability.

    Example:
        >>> checker = LocalChecker(entailment_threshold=0.65)
    """

    entailment_threshold: float = Field(default=0.6, ge=-1.0, le=1.0)
    """Cosine at or above which the embedding mode says Entailment."""
    nli: Any = None
    """A :class:`~truthguard.similarity.CrossEncoderSimilarity` over an NLI model, or the path of
    a local ``CrossEncoder`` NLI model directory; None for the embedding mode."""
    nli_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    """Probability at or above which an NLI entailment / contradiction counts."""
    lexical_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    """Embedding mode: weight of lexical grounding in the support, ``(1 - w) * cosine + w *
    recall``, where recall is the share of the claim's content words found in its top-k
    segments. Sentence embeddings barely move when one name or number is swapped; a name absent
    from the references cannot be entailed by them. Equal weighting by default; 0 gives pure
    cosine."""

    @field_validator("nli", mode="before")
    @classmethod
    def _load_nli(cls, v: Any) -> Any:
        if isinstance(v, str | Path):
            return CrossEncoderSimilarity(v)
        if v is not None and not callable(getattr(v, "probabilities", None)):
            raise ValueError("expected a CrossEncoderSimilarity or a model directory path")
        return v

    async def acheck(
        self,
        question: str,
        claims: list[Claim],
        retrieval: Retrieval,
        session: LLMSession,
        *,
        store: ArtifactStore | None,
    ) -> list[ClaimVerdict]:
        if self.nli is None:
            out = []
            for i, claim in enumerate(claims):
                cosine = retrieval.support(i)
                numbers = {"cosine": round(cosine, 4)}
                support = cosine
                if self.lexical_weight:
                    segments = [retrieval.segments[j].text for j in retrieval.top_k[i]]
                    recall = content_recall(claim.text, " ".join(segments))
                    numbers["recall"] = round(recall, 4)
                    support = (1 - self.lexical_weight) * cosine + self.lexical_weight * recall
                support = min(max(support, 0.0), 1.0)
                label = "Entailment" if support >= self.entailment_threshold else "Neutral"
                out.append(
                    ClaimVerdict(
                        label=label, support=support, raw=json.dumps(numbers), mode="embedding"
                    )
                )
            return out
        return await asyncio.to_thread(self._nli_check, claims, retrieval)

    def _nli_check(self, claims: list[Claim], retrieval: Retrieval) -> list[ClaimVerdict]:
        pairs = [
            (retrieval.segments[j].text, c.text)
            for i, c in enumerate(claims)
            for j in retrieval.top_k[i]
        ]
        probs = self.nli.probabilities(pairs)  # one predict call for the whole check
        if probs.ndim != 2 or probs.shape[1] < 3:
            raise ConfigurationError("the NLI model must output entailment/neutral/contradiction")
        ent = self.nli.label_index("entailment")
        con = self.nli.label_index("contradiction")
        out = []
        row = 0
        for i in range(len(claims)):
            k = len(retrieval.top_k[i])
            block = probs[row : row + k]
            row += k
            p_ent, p_con = float(block[:, ent].max()), float(block[:, con].max())
            if p_ent >= self.nli_threshold:
                label = "Entailment"
            elif p_con >= self.nli_threshold:
                label = "Contradiction"
            else:
                label = "Neutral"
            raw = json.dumps({"entailment": round(p_ent, 4), "contradiction": round(p_con, 4)})
            out.append(ClaimVerdict(label=label, support=p_ent, raw=raw, mode="nli"))
        return out
