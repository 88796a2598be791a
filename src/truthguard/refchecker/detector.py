"""The RefChecker detector: extract claims, check each against the references, aggregate."""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePath
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_config_list
from pydantic import Field, field_validator

from truthguard._sync import submit
from truthguard.detector import BaseDetector, DetectorInput, context_text
from truthguard.embedding._onnx import KEPT
from truthguard.errors import InvalidInputError
from truthguard.llm import LLMSession
from truthguard.memory import memoised
from truthguard.refchecker.aggregate import ABSTAIN, aggregate, response_score
from truthguard.refchecker.checkers import ClaimChecker, LocalChecker
from truthguard.refchecker.claimkind import is_refusal
from truthguard.refchecker.decision import (
    GroundingDecision,
    answer_features,
    answer_form,
    decided_by_claims,
)
from truthguard.refchecker.extractors import Claim, ClaimExtractor, LocalExtractor
from truthguard.refchecker.grounding import analyse
from truthguard.refchecker.remarks import RemarkModel, read_remarks
from truthguard.refchecker.retrieval import Retrieval, aretrieve, lexical_candidates
from truthguard.refchecker.segment import Segment, segment_references, split_sentences
from truthguard.refchecker.support import SupportModel, answer_probability, claim_numbers
from truthguard.result import DetectionResult, Label
from truthguard.similarity import EmbeddingSimilarity, embedding_cache, get_default_similarity
from truthguard.store import ArtifactStore

__all__ = ["RefChecker", "RefCheckerInput"]

_PREFETCH_CHUNK = 256
"""Texts per encode call when a batch's texts are embedded up front (chunks run concurrently)."""

_KEPT_BYTES_PER_CHAR = 420
"""Bytes of kept hidden state a character of text comes to: a token (1.5 KiB at 384 float32s,
and its encoding) is about four characters of English."""


def _segments_bytes(segments: tuple[Segment, ...]) -> int:
    # measured with tracemalloc: within 10% for references of 400 to 40,000 characters
    return sum(320 + len(s.text) + 130 * len(s.spans) for s in segments)


@memoised("references", _segments_bytes, part=0.5)
def _segmented(texts: tuple[str, ...], size: int) -> tuple[Segment, ...]:
    """:func:`segment_references` of ``texts``, memoised within the references' share of the
    memory budget (:mod:`truthguard.memory`)."""
    # A batch segments each input's references twice (prefetch, then the check), and inputs
    # often share references: long ones take milliseconds to cut. Segments are immutable.
    return tuple(segment_references(list(texts), size=size))


def _statements(turn: str) -> str:
    """A chat turn with its questions blanked out (offsets kept): asking "Was it built in
    1902?" says nothing about when it was built, so only what a turn states is evidence."""
    out = turn
    for sentence in split_sentences(turn):
        if sentence.text.rstrip(" \"'’”)]").endswith("?"):
            out = (
                out[: sentence.start] + " " * (sentence.end - sentence.start) + out[sentence.end :]
            )
    return out


def _aligned(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The claims with the labels the word alignment gave them (``aligned`` in the local
    checker's output), which the fitted decision was fitted on; others as they are."""
    out = []
    for c in claims:
        aligned = claim_numbers(c).get("aligned")
        out.append({**c, "label": aligned} if aligned else c)
    return out


class RefCheckerInput(DetectorInput):
    """RefChecker's input: the usual fields plus explicit reference texts."""

    references: list[str] = Field(default_factory=list)
    """Reference passages (strings or Documents), checked together with ``contexts``."""

    @field_validator("references", mode="before")
    @classmethod
    def _coerce_references(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str | bytes | dict) or not hasattr(v, "__iter__"):
            raise ValueError(f"must be a list of strings or Documents, got {type(v).__name__}")
        return [context_text(item, field=f"references[{i}]") for i, item in enumerate(v)]


class RefChecker(BaseDetector):
    """Reference-based fine-grained hallucination checking (Hu et al., 2024).

    The answer is split into claims, each claim is checked against its top-k most similar
    segments of the references (``references`` and ``contexts`` of the input) and labelled
    Entailment / Neutral / Contradiction; the labels are aggregated (``strict``, ``soft``,
    ``major``) and scored. With no claim the response ``Abstain``s (``unverifiable``); with no
    reference the result is ``unverifiable`` and no model is called.

    The default pipeline is fully local (sentence/clause claims, embedding checker). Pass
    ``extractor=LLMExtractor(model=llm)`` and ``checker=LLMChecker(model=llm)`` for the LLM
    pipeline of the paper.

    Example:
        >>> rc = RefChecker(score="min_support")
        >>> r = rc.invoke({"question": "Where is Dubai?", "answer": "Dubai is in the UAE.",
        ...                "references": ["Dubai is a city in the United Arab Emirates (UAE)."]})
        >>> r.details["aggregate"]["strict"]
        'Entailment'
    """

    detector_name = "refchecker"
    input_model = RefCheckerInput
    score_bounds = (0.0, 1.0)

    extractor: ClaimExtractor = Field(default_factory=LocalExtractor)
    """Turns the answer into claims (``LocalExtractor`` or ``LLMExtractor``)."""
    checker: ClaimChecker = Field(default_factory=LocalChecker)
    """Labels each claim (``LocalChecker`` or ``LLMChecker``), or a string: the name of a
    published open checker (``"minicheck-flan-t5-large"``, see
    :data:`~truthguard.refchecker.named.CHECKER_NAMES`), ``KIND:MODEL`` or a folder of weights
    (:func:`~truthguard.refchecker.named.checker_from_spec`)."""
    score: Literal["calibrated", "entailment_ratio", "mean_support", "min_support"] = "calibrated"
    """Numeric score: ``calibrated`` (``1 - P(hallucinated)`` of :attr:`decision`; with a
    checker other than the local grounding one, ``entailment_ratio``), ``entailment_ratio``,
    ``mean_support`` or ``min_support`` (see
    :func:`~truthguard.refchecker.aggregate.response_score`)."""
    verdict: Literal["calibrated", "strict", "major"] = "calibrated"
    """What sets the label when no ``threshold`` is given. ``calibrated``: hallucinated when
    ``P(hallucinated)`` reaches the decision's threshold (the local grounding checker; other
    checkers fall back to ``strict``). ``strict`` / ``major``: the claims' aggregate, factual
    only on Entailment."""
    decision: GroundingDecision | None = None
    """The calibrated answer-level decision (None: the packaged one, fitted on HaluEval's
    development half; see :mod:`~truthguard.refchecker.decision`), or the path of one saved
    with ``GroundingDecision.save`` (what ``truthguard calibrate --refit-decision`` writes)."""
    chat_replies: Literal["open", "grounded"] = "open"
    """How a reply in a chat (an input with a ``history``) is held to the sources. The history
    is evidence of what was said either way: a reply may repeat the user's own words.

    ``open``: a reply may carry remarks and things the user knows that no source holds, as in
    open-domain chat; a contradicted or altered fact, another value for a slot the sources
    fill, or a wrong short answer put first still fail it, while a short reply or a claim about
    names the sources lack is weighed by the decision's model on the replies' own scale.
    ``grounded``: a reply is held to the sources as an answer is (a RAG assistant answering
    from what it retrieved): the same rules and models as without a history, and of the
    history only what its turns state is evidence, not their questions (asking "Was it built
    in 1902?" says nothing about when it was built).

    Measured with the packaged decision (``truthguard bench halueval --in-chat``, first 200
    rows): HaluEval's QA rows asked in a chat (the question as the history) had 25% of their
    hallucinated answers rejected with ``open``, 80.5% with ``grounded`` (as without a chat);
    HaluEval's dialogue, whose correct replies often state facts its knowledge lacks, passes
    90.5% of correct replies with ``open`` and 31% with ``grounded``."""
    decide: Literal["support", "fitted"] = "support"
    """How the local grounding checker's claims decide the answer.

    ``support`` (default): each fact claim's ``P(unsupported)`` comes from the support model
    (:mod:`~truthguard.refchecker.support`: its facts found in the sources, its words matched by
    meaning, fitted on hand-written claim-evidence pairs), and the answer is as supported as its
    least supported claim: one invented or altered sentence fails it, a paraphrase does not.
    ``fitted``: the earlier answer-level model (:attr:`decision`, fitted on HaluEval's
    development half), which weighs shares of missing names and words by the answer's form; it
    passes HaluEval's summaries that name people their article does not, and fails most
    paraphrased RAG answers. A chat reply with ``chat_replies="open"`` is always weighed by
    :attr:`decision` (remarks and world knowledge are expected there)."""
    remarks: RemarkModel | bool = True
    """Whether a fact claim that reads, by meaning, as a remark about the sources ("Beyond her
    stage name, the passage tells us nothing about her") is checked as a hedge, on its names and
    numbers alone (see :mod:`~truthguard.refchecker.remarks`). True: the packaged
    :class:`~truthguard.refchecker.remarks.RemarkModel`; a model (or the path of a saved one)
    to use another; False: only the wording rules of :mod:`~truthguard.refchecker.claimkind`
    name remarks. It reads the packaged MiniLM's vectors: with another :attr:`similarity`
    model it names none. A reply in an open chat (:attr:`chat_replies`) is
    weighed by :attr:`decision`, remarks and all, so none is read there."""
    segment_size: int = Field(default=80, ge=1)
    """Most words per reference segment."""
    top_k: int = Field(default=3, ge=1)
    """Segments each claim is checked against (the most similar ones)."""
    similarity: EmbeddingSimilarity | None = None
    """Embedding model for retrieval and localisation (default: the packaged MiniLM)."""
    store: ArtifactStore | None = None
    """Optional artifact store: extracted claims and LLM labels are cached there."""
    max_answer_chars: int | None = Field(default=50_000, ge=1)
    """Longest answer checked, in characters (the cost grows with its sentences: about 50 k
    characters, some 900 sentences, take a few seconds locally); a longer one gives an
    ``unverifiable`` result with reason ``too_large`` and no work. None for no limit."""
    max_context_chars: int | None = Field(default=100_000, ge=1)
    """Most characters of ``references`` and ``contexts`` together (new references cost about as
    much per sentence as the answer the first time they are seen); more gives an
    ``unverifiable`` result with reason ``too_large``. None for no limit."""

    @field_validator("checker", mode="before")
    @classmethod
    def _named_checker(cls, v: Any) -> Any:
        if isinstance(v, str):
            from truthguard.refchecker.named import checker_from_spec

            return checker_from_spec(v) or LocalChecker()
        return v

    @field_validator("remarks", mode="before")
    @classmethod
    def _remark_file(cls, v: Any) -> Any:
        return _saved(v, RemarkModel, "remark model")

    @field_validator("decision", mode="before")
    @classmethod
    def _decision_file(cls, v: Any) -> Any:
        return _saved(v, GroundingDecision, "decision")

    def batch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[DetectionResult]:
        inputs = self._validated(inputs)
        configs = get_config_list(config, len(inputs))
        waves = self._waves(inputs)
        out: list[DetectionResult] = []
        ahead = submit(self._aembed(waves[0][2], configs[waves[0][0] : waves[0][1]]))
        try:
            for k, (lo, hi, _) in enumerate(waves):
                ahead.result()
                if k + 1 < len(waves):  # the next wave is embedded while this one is checked
                    nxt = waves[k + 1]
                    ahead = submit(self._aembed(nxt[2], configs[nxt[0] : nxt[1]]))
                out += super().batch(
                    inputs[lo:hi], configs[lo:hi], return_exceptions=return_exceptions, **kwargs
                )
        finally:
            ahead.cancel()
        return out

    async def abatch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[DetectionResult]:
        inputs = self._validated(inputs)
        configs = get_config_list(config, len(inputs))
        waves = self._waves(inputs)
        out: list[DetectionResult] = []
        ahead = asyncio.ensure_future(self._aembed(waves[0][2], configs[waves[0][0] : waves[0][1]]))
        try:
            for k, (lo, hi, _) in enumerate(waves):
                await ahead
                if k + 1 < len(waves):  # the next wave is embedded while this one is checked
                    nxt = waves[k + 1]
                    ahead = asyncio.ensure_future(self._aembed(nxt[2], configs[nxt[0] : nxt[1]]))
                out += await super().abatch(
                    inputs[lo:hi], configs[lo:hi], return_exceptions=return_exceptions, **kwargs
                )
        finally:
            ahead.cancel()
        return out

    def _waves(self, inputs: list[Any]) -> list[tuple[int, int, list[str]]]:
        """Consecutive stretches ``inputs[lo:hi]`` to embed up front and check in turn, with
        the texts each will embed (see :meth:`_batch_texts`): each as long as the last hidden
        states of its texts fit in a third of the encoder's kept states
        (:data:`~truthguard.embedding._onnx.KEPT`), so a wave, the next one (embedded while it
        is checked) and the texts its checks embed themselves fit together: with halves, two
        full waves and those texts overflow it, and a check whose states were pushed out runs
        the encoder again for its token vectors. The soft matcher reads token vectors of a
        check's claims and sentences from those states, where a batch embedded whole would have
        pushed its first checks' states out before those checks ran. One stretch when nothing
        is kept."""
        room = KEPT.max_bytes // 3
        waves: list[tuple[int, int, list[str]]] = []
        texts: dict[str, None] = {}
        lo = used = 0
        for k, inp in enumerate(inputs):
            own = list(dict.fromkeys(self._input_texts(inp)))
            mine = [t for t in own if t not in texts]
            if room > 0 and k > lo and used + _KEPT_BYTES_PER_CHAR * sum(map(len, mine)) > room:
                waves.append((lo, k, list(texts)))
                lo, texts, used, mine = k, {}, 0, own
            texts.update(dict.fromkeys(mine))
            used += _KEPT_BYTES_PER_CHAR * sum(map(len, mine))
        waves.append((lo, len(inputs), list(texts)))
        return waves

    def _validated(self, inputs: list[Any]) -> list[Any]:
        """Each input validated (and its texts cleaned) once, for the prefetch and the check
        alike; an invalid one is kept as it is, for its check to report."""
        out = []
        for raw in inputs:
            try:
                out.append(self.validate_input(raw))
            except InvalidInputError:
                out.append(raw)
        return out

    def _evidence(self, references: list[str], history: list[str]) -> list[Segment]:
        """The segments a check reads: the references, then the chat turns (in a grounded
        chat only what they state, see :func:`_statements`)."""
        texts = [
            *references,
            *(t if self.chat_replies == "open" else _statements(t) for t in history),
        ]
        return list(_segmented(tuple(texts), self.segment_size))

    def _batch_texts(self, inputs: list[Any]) -> list[str]:
        """The texts a batch's checks will embed, known before any check runs.

        With the local extractor (claims are a pure function of the answer): every claim and
        every reference sentence of the valid inputs that have both, each once. Other extractors
        need a model call to know their claims: nothing is known in advance.
        """
        if type(self.extractor).aextract is not LocalExtractor.aextract:
            return []
        texts: dict[str, None] = {}
        for raw in inputs:
            texts.update(dict.fromkeys(self._input_texts(raw)))
        return list(texts)

    def _input_texts(self, raw: Any) -> list[str]:
        """The texts one input's check will embed, where the local extractor makes its claims
        (see :meth:`_batch_texts`); none otherwise, or for an invalid input."""
        if type(self.extractor).aextract is not LocalExtractor.aextract:
            return []
        assert isinstance(self.extractor, LocalExtractor)
        try:
            inp = self.validate_input(raw)
        except InvalidInputError:
            return []  # the check itself reports it
        assert isinstance(inp, RefCheckerInput)
        segments = self._evidence([*inp.references, *inp.contexts], inp.history)
        claims = self.extractor.extract(inp.question, inp.answer) if segments else []
        claims = [c for c in claims if _checkable(c)]
        if not claims:
            return []  # unverifiable or abstains: nothing is embedded
        spans = [sp.text for seg in segments for sp in seg.spans]
        keep = lexical_candidates([c.text for c in claims], spans)
        return [c.text for c in claims] + [t for t, k in zip(spans, keep, strict=True) if k]

    async def aprefetch(
        self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None = None
    ) -> None:
        """Embed the texts that checking ``inputs`` will need into the process-wide cache.

        ``batch`` / ``abatch`` do this before their checks start: checks that run at the same
        time and share a reference would each miss the cache and encode it again, and one
        length-sorted pass pads less than per-check calls. Call it for the next batch while one
        is being checked to overlap the encoding with the checking. Vectors do not depend on
        which texts share an encode call, so no check's result changes. Only the local
        extractor's claims are known in advance; with another extractor it does nothing.
        """
        await self._aembed(self._batch_texts(inputs), config)

    async def _aembed(
        self, texts: list[str], config: RunnableConfig | list[RunnableConfig] | None
    ) -> None:
        """Embed ``texts`` into the process-wide cache (see :meth:`aprefetch`)."""
        embedder = self.similarity or get_default_similarity()
        if not isinstance(embedder, EmbeddingSimilarity):
            return  # a backend without the shared cache would encode everything twice
        if not texts or not embedding_cache().can_hold(len(texts)):
            return  # the checks embed their own texts (the cache could not hold the batch)
        texts.sort(key=len)
        chunks = [texts[s : s + _PREFETCH_CHUNK] for s in range(0, len(texts), _PREFETCH_CHUNK)]
        bounded = self._bounded(config)
        first = bounded[0] if isinstance(bounded, list) and bounded else bounded
        bound = int(first.get("max_concurrency") or 1)  # type: ignore[union-attr]

        async def embed(chunk: list[str], gate: asyncio.Semaphore) -> None:
            async with gate:
                await embedder.aembed(chunk)

        try:
            gate = asyncio.Semaphore(min(bound, embedder.parallel_encodes))
            await asyncio.gather(*(embed(c, gate) for c in chunks))
        except Exception:
            # Each check meets the same error (a model that will not load) and reports it where
            # the caller expects it: raised, or returned per input with ``return_exceptions``.
            return

    def _too_large(self, answer: str, references: list[str]) -> DetectionResult | None:
        """The ``too_large`` result when the answer or the references exceed their limits."""
        context_chars = sum(len(r) for r in references)
        over = []
        if self.max_answer_chars is not None and len(answer) > self.max_answer_chars:
            over.append(f"the answer has {len(answer):,} characters (max_answer_chars="
                        f"{self.max_answer_chars:,})")  # fmt: skip
        if self.max_context_chars is not None and context_chars > self.max_context_chars:
            over.append(f"the references have {context_chars:,} characters (max_context_chars="
                        f"{self.max_context_chars:,})")  # fmt: skip
        if not over:
            return None
        return self._unverifiable(
            f"Not checked: {' and '.join(over)}; raise the limit to check it.",
            reason="too_large",
            answer_chars=len(answer),
            context_chars=context_chars,
            max_answer_chars=self.max_answer_chars,
            max_context_chars=self.max_context_chars,
        )

    def _unverifiable(
        self, explanation: str, *, passing: bool | None = None, **details: Any
    ) -> DetectionResult:
        """An ``unverifiable`` result: nothing was checked, for the ``reason`` in ``details``."""
        return DetectionResult(
            detector=self.detector_name,
            label=Label.UNVERIFIABLE,
            passing=passing,
            explanation=explanation,
            details=details,
        )

    async def _read_remarks(
        self, claims: list[Claim], embedder: Any
    ) -> tuple[list[Claim], list[float | None]]:
        """The claims with the facts that read as remarks about the sources made hedges."""
        if (
            self.remarks is False
            or not any(c.kind == "fact" for c in claims)
            or not _packaged_embedding(embedder)
        ):
            return claims, [None] * len(claims)
        model = RemarkModel.default() if self.remarks is True else self.remarks
        vectors = await embedder.aembed([c.text for c in claims])
        return read_remarks(claims, vectors, model)

    async def _acheck(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        assert isinstance(inp, RefCheckerInput)
        references = [*inp.references, *inp.contexts]
        too_large = self._too_large(inp.answer, references)
        if too_large is not None:
            return too_large
        n_references = len(references)
        segments = self._evidence(references, inp.history)
        if not any(seg.reference < n_references for seg in segments):
            return self._unverifiable(
                "No reference to check against: pass `references` or `contexts`.",
                reason="no_references",
            )
        if is_refusal(inp.answer):
            # declining to answer states nothing a passage could support or contradict
            return self._unverifiable(_REFUSAL, passing=True, reason="refusal", claims=[])
        extraction = await self.extractor.aextract(
            inp.question, inp.answer, session, store=self.store
        )
        embedder = self.similarity or get_default_similarity()
        chat = bool(inp.history) and self.chat_replies == "open"
        if chat:
            # an open chat's reply is weighed by the decision's model, remarks and all
            extracted, p_remark = extraction.claims, [None] * len(extraction.claims)
        else:
            extracted, p_remark = await self._read_remarks(extraction.claims, embedder)
        skipped = [c for c in extracted if not _checkable(c)]
        claims = [c for c in extracted if _checkable(c)]
        remark_of = {c.text: p for c, p in zip(extracted, p_remark, strict=True)}
        base_details: dict[str, Any] = {
            "extractor_output": extraction.raw,
            "unparsed": extraction.unparsed,
            "n_segments": len(segments),
            "skipped": [{"claim": c.text, "kind": c.kind} for c in skipped],
        }
        if not claims and skipped:
            kinds = sorted({c.kind for c in skipped})
            refusal = "refusal" in kinds
            return self._unverifiable(
                _REFUSAL
                if refusal
                else f"No checkable fact: the answer is only {', '.join(kinds)}.",
                passing=True,
                **base_details,
                reason="refusal" if refusal else "no_facts",
                aggregate=aggregate([]),
                claims=[],
            )
        if not claims:
            return self._unverifiable(
                "Abstain: no claim could be extracted from the answer.",
                **base_details,
                reason="abstain",
                aggregate=aggregate([]),
                claims=[],
            )
        retrieval = await aretrieve(claims, segments, embedder, top_k=self.top_k)
        verdicts = await self.checker.acheck(
            inp.question, claims, retrieval, session, store=self.store
        )
        labels = [v.label for v in verdicts]
        agg = aggregate(labels)
        supports = [v.support for v in verdicts]
        placed = _place_claims(inp.answer, [c.text for c in claims])
        details = {
            **base_details,
            "aggregate": agg,
            "claims": [
                {
                    "claim": c.text,
                    "sentence": c.sentence,
                    "kind": c.kind,
                    "p_remark": remark_of.get(c.text),
                    "triplet": list(c.triplet) if c.triplet else None,
                    "label": v.label,
                    "support": round(v.support, 4),
                    "mode": v.mode,
                    "checker_output": v.raw,
                    "segments": retrieval.top_k[i],
                    "start": placed[i][0] if placed[i] else None,
                    "end": placed[i][1] if placed[i] else None,
                    "evidence": _evidence(retrieval, i, v.evidence, n_references),
                    "issues": [_issue(x, placed[i]) for x in v.issues],
                }
                for i, (c, v) in enumerate(zip(claims, verdicts, strict=True))
            ],
        }
        # the fitted decision reads the claims as the word alignment labelled them
        features = answer_features(_aligned(details["claims"]))
        p_hallucinated: float | None = None
        threshold = 0.5
        least = None if chat or self.decide == "fitted" else answer_probability(details["claims"])
        if least is not None:
            # outside an open chat, an answer is as supported as its least supported claim
            model = getattr(self.checker, "support", None) or SupportModel.default()
            p_hallucinated, threshold = least[0], model.answer_threshold
            details["decision"] = {
                "p_hallucinated": round(p_hallucinated, 4),
                "threshold": threshold,
                "decided_by": "claim",
                "form": "support",
                "deciding_claim": details["claims"][least[1]]["claim"],
            }
            if features is not None:
                # the answer-level model's verdict on the same readings, for whoever asks
                # where the two disagree (a cascade's ``second_opinion`` signal)
                other = self.decision or GroundingDecision.default()
                p_other, _, _ = _fitted(details["claims"], features, supports, False, other)
                details["decision"]["second_opinion"] = {
                    "p_hallucinated": round(p_other, 4),
                    "threshold": other.threshold,
                    "passing": p_other < other.threshold,
                }
            meaning = _least_meaning(details["claims"])
            if meaning is not None:
                # what the sentences mean, read apart from the decision (a cascade's
                # ``meaning`` signal: the two part ways on a passed answer)
                details["decision"]["meaning"] = meaning
        elif features is not None:
            decision = self.decision or GroundingDecision.default()
            threshold = decision.threshold
            p_hallucinated, by_claims, form = _fitted(
                details["claims"], features, supports, chat, decision
            )
            details["decision"] = {
                "p_hallucinated": round(p_hallucinated, 4),
                "threshold": threshold,
                "decided_by": by_claims[1] if by_claims is not None else "answer",
                "form": form,
                "deciding_claim": (
                    by_claims[2]["claim"] if by_claims is not None and by_claims[2] else None
                ),
                "features": {k: round(x, 4) for k, x in features.items()},
            }
        if self.score == "calibrated":
            score = (
                1.0 - p_hallucinated
                if p_hallucinated is not None
                else response_score(labels, supports, "entailment_ratio")
            )
        else:
            score = response_score(labels, supports, self.score)
        verdict = self.verdict
        if verdict == "calibrated" and p_hallucinated is None:
            verdict = "strict"  # another checker: its claims' labels decide
        passing: bool | None = None
        if self.threshold is not None and score is not None:
            label = Label.FACTUAL if score >= self.threshold else Label.HALLUCINATED
            decided = f"score {score:.2f} vs threshold {self.threshold:.2f}"
        elif verdict == "calibrated":
            assert p_hallucinated is not None
            label = Label.FACTUAL if p_hallucinated < threshold else Label.HALLUCINATED
            decided = f"P(hallucinated) {p_hallucinated:.2f} vs {threshold:.2f}"
        else:
            outcome = agg[verdict]
            assert outcome != ABSTAIN
            label = Label.FACTUAL if outcome == "Entailment" else Label.HALLUCINATED
            decided = str(outcome)
        if self.threshold is None:
            passing = label == Label.FACTUAL
        soft = agg["soft"]
        assert isinstance(soft, dict)
        explanation = (
            f"{len(claims)} claim(s): {soft['Entailment']:.0%} entailed, "
            f"{soft['Neutral']:.0%} neutral, {soft['Contradiction']:.0%} contradicted "
            f"({verdict}: {decided})."
        )
        bad = [d for d in details["claims"] if d["label"] != "Entailment"]
        if bad:
            explanation += " Not supported: " + "; ".join(_why(d) for d in bad[:3])
            explanation += " ..." if len(bad) > 3 else ""
        return DetectionResult(
            detector=self.detector_name,
            score=score,
            label=label,
            passing=passing,
            explanation=explanation,
            details=details,
        )


_REFUSAL = "The answer declines to answer (a refusal): nothing to check."

_SAYS = {
    "conflict": "the sources say {theirs!r}",
    "other_value": "the sources give {theirs!r}",
    "swapped": "the sources say {theirs!r} did it",
    "of_another": "the sources say it of {theirs!r}",
    "opposite": "the sources say {theirs!r}",
    "ungrounded": "no source states it",
    "unanswered": "the claim restates the question, and no source states what it adds",
    "off_question": "the question asks {asked}, and this gives {given}",
}


def _why(claim: dict[str, Any]) -> str:
    """One not-supported claim for the explanation: the claim, the span that decided it and
    what the evidence sentence says there (or that no source states it)."""
    out = repr(claim["claim"])
    issues = claim.get("issues") or []
    span = next((i for i in issues if i["relation"] != "ungrounded"), None)
    span = span or next((i for i in issues if i["kind"] != "content"), None)
    span = span or next(iter(issues), None)
    if span is not None:
        theirs = (span.get("evidence") or {}).get("text", "")
        says = _SAYS.get(span["relation"], "the sources differ").format(
            theirs=theirs, asked=span.get("asked", ""), given=span.get("given", "")
        )
        if span["relation"] == "ungrounded" and theirs:
            says = f"the sources use {theirs!r} only of something else"
        text, (start, end) = span["text"], _in_claim(span)
        for nxt in issues[issues.index(span) + 1 :]:  # a name's words: "Peter Hale", not "Peter"
            if nxt["relation"] != span["relation"] or nxt["kind"] != span["kind"]:
                break
            at, to = _in_claim(nxt)
            if end is None or at is None or not 0 <= at - end <= 1:
                break  # (a word apart, or before it: the issues of one reading need no order)
            text, end = text + " " * (at - end) + nxt["text"], to
        ok = start is not None and end is not None and 0 <= start < end
        own = str(claim["claim"])[start:end] if ok else ""
        if text in own:
            text = own  # the answer's own words ("20th", whose value reads "20")
        out += f" ({text!r}: {says})"
    evidence = claim.get("evidence") or {}
    if evidence.get("text"):
        out += f", held against {evidence['text']!r}"
    return out


def _in_claim(issue: dict[str, Any]) -> tuple[int | None, int | None]:
    """An issue's span in its claim's own text (a result's issue also carries its span in the
    answer, None where the claim was not found there)."""
    if "claim_start" in issue:
        return issue["claim_start"], issue["claim_end"]
    return issue.get("start"), issue.get("end")


def _saved(v: Any, model: Any, what: str) -> Any:
    """``v`` itself, or the model saved at the path ``v`` names (a field validator's reading)."""
    if not isinstance(v, str | PurePath):
        return v
    path = Path(v).expanduser()
    if not path.is_file():
        raise ValueError(f"no {what} file at {path}")
    try:
        return model.load(path)
    except ValueError as e:  # not JSON, or not a model: ValidationError is a ValueError
        raise ValueError(f"{path} holds no saved {model.__name__}: {e}") from e


def _least_meaning(claims: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The fact claim whose sentence the meaning model reads as least supported: its log-odds
    and text; None when no claim's meaning was read."""
    least: tuple[float, str] | None = None
    for c in claims:
        z = claim_numbers(c).get("meaning")
        if c.get("kind") != "fact" or not isinstance(z, int | float):
            continue
        if least is None or z < least[0]:
            least = (float(z), c.get("sentence") or c["claim"])
    return None if least is None else {"log_odds": round(least[0], 4), "sentence": least[1]}


def _packaged_embedding(embedder: Any) -> bool:
    """Whether ``embedder`` runs the packaged MiniLM, whose vectors the remark model reads (a
    user's other model of the same width would be misread)."""
    return getattr(embedder, "packaged", False) is True


def _checkable(claim: Claim) -> bool:
    """A fact, or talk around facts that names or numbers something (checked on those alone)."""
    if claim.kind == "fact":
        return True
    if claim.kind in ("refusal", "framing"):
        return False
    return bool(analyse(claim.text).facts)


def _evidence(
    retrieval: Retrieval, i: int, chosen: dict[str, Any] | None, n_references: int
) -> dict[str, Any]:
    j, span, sim = retrieval.evidence[i]
    out = {
        "reference": retrieval.segments[j].reference,
        "start": span.start,
        "end": span.end,
        "text": span.text,
        "similarity": round(sim, 4),
    }
    if chosen is not None and (chosen["reference"], chosen["start"]) != (
        out["reference"],
        span.start,
    ):
        # the checker compared the claim with another sentence: show that one (cosine unknown)
        out = {**chosen, "similarity": None}
    # references come first, then the chat history's turns
    if out["reference"] >= n_references:
        out = {**out, "source": "history", "turn": out["reference"] - n_references}
    else:
        out = {**out, "source": "reference"}
    return out


_WHOLE_ANSWER = 20_000
"""Up to this many characters a claim is looked for in the whole answer; beyond it, in a
window after the previous claim (claims come in answer order), so placement stays linear."""


def _place_claims(answer: str, claims: list[str]) -> list[tuple[int, int, list] | None]:
    """Where each claim sits in the answer: (start, end, char map claim -> answer) or None.

    Claims are usually verbatim pieces of the answer; otherwise (rejoined clauses, a question
    prefix, LLM-written claims) their characters are mapped by alignment where they match. In
    a long answer both searches stay within a window around the previous claim's end.
    """
    import difflib

    out: list[tuple[int, int, list] | None] = []
    cursor = 0
    whole = len(answer) <= _WHOLE_ANSWER
    for text in claims:
        if whole:
            lo, hi = 0, len(answer)
        else:  # a window a few claims long on both sides of the previous claim's end
            reach = 4 * len(text) + 2_000
            lo, hi = max(0, cursor - reach), min(len(answer), cursor + reach)
        at = answer.find(text, cursor, hi)
        if at < 0:
            at = answer.find(text, lo, hi)
        if at >= 0:
            out.append((at, at + len(text), []))
            cursor = at + len(text)
            continue
        window = answer[lo:hi]
        blocks = difflib.SequenceMatcher(None, text, window, autojunk=False).get_matching_blocks()
        blocks = [b for b in blocks if b.size >= 3]
        if not blocks:
            out.append(None)
            continue
        moved = [(a, lo + b, size) for a, b, size in blocks]
        out.append((moved[0][1], moved[-1][1] + moved[-1][2], moved))
    return out


def _fitted(
    claims: list[dict[str, Any]],
    features: dict[str, float],
    supports: list[float],
    chat: bool,
    decision: GroundingDecision,
) -> tuple[float, Any, str]:
    """``P(hallucinated)`` by the answer-level ``decision`` (``decide="fitted"``), the claims'
    verdict when they decide (:func:`decided_by_claims`) and the answer's form."""
    form = answer_form(claims, chat=chat, passage_sentences=decision.passage_sentences)
    p = decision.probability(features, form=form)
    by_claims = decided_by_claims(_aligned(claims), chat=chat, decision=decision)
    if by_claims is not None:
        # the claims decide (see decided_by_claims): the score agrees with them
        if by_claims[0]:
            p = max(p, decision.threshold)
        else:
            # every claim entailed: as likely wrong as its least-supported claim says
            p = min(p, 1.0 - min(supports), decision.threshold * 0.999)
    return p, by_claims, form


def _issue(issue: dict[str, Any], placed: tuple[int, int, list] | None) -> dict[str, Any]:
    """A checker's issue with its span moved from claim offsets to answer offsets."""
    out = {k: v for k, v in issue.items() if k not in ("start", "end")}
    start = end = None
    if placed is not None:
        at, _, blocks = placed
        if not blocks:
            start, end = at + issue["start"], at + issue["end"]
        else:
            for a, b, size in blocks:
                if a <= issue["start"] and issue["end"] <= a + size:
                    start, end = b + issue["start"] - a, b + issue["end"] - a
                    break
    out["start"], out["end"] = start, end
    out["claim_start"], out["claim_end"] = issue["start"], issue["end"]
    return out
