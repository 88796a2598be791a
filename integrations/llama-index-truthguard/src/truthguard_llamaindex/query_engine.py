"""``GuardedQueryEngine``: check every answer of a LlamaIndex query engine, act when it fails.

The attempt loop is the core guard's: :class:`~truthguard.guard.attempts.AttemptLoop` decides
what comes next and keeps the records, with the same verdict rule
(:func:`~truthguard.guard.verdict.decide`, with the guards' threshold rule and detector
deadline from ``truthguard.guard.check``), the same policy objects (``ReRetrieve``,
``Regenerate``, ``Fallback``, ``Raise`` or your own ``GuardPolicy``), the same ``Attempt`` /
``GuardResult`` records. What differs is how a policy's step is carried out on a LlamaIndex engine:

* ``ReRetrieve(k=[...])`` retrieves again with a copy of the engine's ``VectorIndexRetriever``
  whose ``similarity_top_k`` is raised; ``ReRetrieve(alternative="name")`` uses the retriever of
  that name in ``retrievers`` (a fallback retriever); ``rewrite`` changes the retrieval query.
* ``Regenerate`` answers again with the failing detectors' explanations appended to the query the
  synthesiser sees, while retrieval keeps using the original question.
* ``Fallback(answer=...)`` / ``Fallback(runnable=...)`` / :class:`FallbackEngine` end the loop.

The engine carries out the loop's actions in a generator of operations; ``query`` runs them
synchronously (the wrapped engine's own sync path) and ``aquery`` awaits them (its async path),
so there is no recursion and no event loop started inside a running one.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks.base import CallbackManager
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import QueryBundle
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from truthguard import otel
from truthguard.detector import BaseDetector, context_text
from truthguard.errors import InvalidInputError
from truthguard.guard import (
    Attempt,
    GuardPolicy,
    GuardResult,
    GuardVerdict,
    PolicyContext,
    Regenerate,
    ReRetrieve,
    Rerun,
)
from truthguard.guard.admission import DEFAULT_MAX_CONCURRENT_CHECKS, CheckGate, running_chain
from truthguard.guard.attempts import Action, AskPolicy, AttemptLoop, Finish, RunAttempt
from truthguard.guard.check import (
    POLICY_GRACE,
    CheckLoop,
    Deadline,
    RunTimedOut,
    before,
    call_before,
    deprecated_check_loop,
    run_checks,
    score_bounds,
    verdict_for,
    within,
)
from truthguard.guard.policies import (
    FEEDBACK_TEMPLATE,
    RETRIEVAL_QUERY_KEY,
    RETRIEVER_FIELD,
    SEARCH_KWARGS_FIELD,
)
from truthguard.guard.validation import input_errors
from truthguard.guard.verdict import check_detector_options, unique_keys
from truthguard.result import DetectionResult, Label, Usage
from truthguard.sync import adrive, drive
from truthguard_llamaindex._ops import (
    Answer,
    Await,
    EngineRunnable,
    Invoke,
    Loop,
    Op,
    Query,
    RetrieveThenSynthesize,
)
from truthguard_llamaindex._usage import install

__all__ = ["METADATA_KEY", "FallbackEngine", "GuardedQueryEngine"]

logger = logging.getLogger("truthguard.llamaindex")

METADATA_KEY = "truthguard"
"""Key of the :class:`~truthguard.guard.GuardResult` in the returned ``Response.metadata``."""

# -- policies and their context -----------------------------------------------------------------


class FallbackEngine(GuardPolicy):
    """Answer with another query engine instead (terminal), e.g. a wider or a curated index.

    Example:
        >>> # policies=[Regenerate(), FallbackEngine(engine=wide_index.as_query_engine())]
    """

    name: ClassVar[str] = "fallback_engine"
    terminal: ClassVar[bool] = True
    after_over_capacity: ClassVar[bool] = True

    engine: BaseQueryEngine
    """The query engine that answers instead."""
    check: bool = False
    """Check its answer too (unchecked answers are released with status ``fallback``)."""

    async def astep(self, ctx: PolicyContext) -> Rerun:
        return Rerun(input=ctx.input, runnable=EngineRunnable(self.engine), check=self.check)


@dataclass
class _Context(PolicyContext):
    """The core policy context; feedback comes only from detectors that gave a failing verdict."""

    keys: list[str] = field(default_factory=list)

    def feedback(self) -> str:
        last = self.last
        verdict = last.verdict
        notes = [
            f"{r.detector}: {r.explanation}"
            for key, r in zip(self.keys, last.results, strict=False)
            # An error or time-out says nothing about the answer: it is never fed back.
            if verdict is not None
            and verdict.passes.get(key) is False
            and r.label not in (Label.INVALID, Label.UNVERIFIABLE)
            and r.explanation
        ]
        if not notes:
            return ""
        return FEEDBACK_TEMPLATE.format(answer=last.answer or "", explanation="; ".join(notes))


# -- the engine ---------------------------------------------------------------------------------


class GuardedQueryEngine(BaseModel, BaseQueryEngine):
    """A query engine that checks each answer of ``query_engine``; re-tries, falls back or raises.

    Each answer is checked by every detector concurrently against the response's source nodes;
    the results are combined as in :class:`~truthguard.guard.HallucinationGuard` (``combine``,
    ``thresholds``, ``on_error``). A failing answer goes through ``policies`` in order until one
    passes or ``max_attempts`` is reached. The returned ``Response`` is the released answer; its
    ``metadata["truthguard"]`` is a :class:`~truthguard.guard.GuardResult` with the verdict, every
    attempt (each with its own response, contexts, detector results and usage) and the total
    usage (the wrapped engine's LLM calls plus the detectors' calls).

    The engine's LLM usage is read from LlamaIndex's instrumentation events: the first engine
    built registers a span tracker and a usage listener on the root dispatcher (once per
    process; both only do bookkeeping).

    Over a streaming engine (``as_query_engine(streaming=True)``) each answer is read whole and
    checked; the released answer then comes back as a ``StreamingResponse`` (``aquery``: an
    ``AsyncStreamingResponse``) yielding its sentences, so nothing unchecked is streamed.

    When attempts run out without a ``Raise`` policy, the last answer is returned with status
    ``rejected``: it is never lost. ``Raise()`` raises :class:`~truthguard.errors.GuardRejected`
    carrying every attempt instead.

    Example:
        >>> from llama_index.core import VectorStoreIndex
        >>> from truthguard.guard import ReRetrieve, Regenerate, Fallback
        >>> # guarded = GuardedQueryEngine(
        >>> #     query_engine=index.as_query_engine(similarity_top_k=2),
        >>> #     detectors=[RefChecker(threshold=0.5)],
        >>> #     policies=[ReRetrieve(k=[6]), Regenerate(), Fallback(answer="I don't know.")])
        >>> # guarded.query("Which planet has Phobos?").metadata["truthguard"].status
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    query_engine: BaseQueryEngine
    """The query engine to guard."""
    detectors: list[BaseDetector] = Field(min_length=1)
    """Detectors run on every answer (a single detector is accepted too)."""
    policies: list[GuardPolicy] = Field(default_factory=list)
    """What to do with a failing answer, in order (each used up to its ``max_uses``)."""
    combine: Literal["all", "any", "mean"] = "all"
    """``all``: every detector passes; ``any``: one does; ``mean``: mean normalised score."""
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Native-scale threshold per detector key, overriding the detector's own ``threshold``."""
    score_ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Native ``(low, high)`` score range per detector key for normalising (default (0, 1))."""
    mean_threshold: float = Field(default=0.5, ge=0, le=1)
    """Pass mark of the mean normalised score when ``combine="mean"``."""
    max_attempts: int = Field(default=3, ge=1)
    """Most answers per query, the first included (terminal policies still apply)."""
    check_timeout: float | None = Field(default=60.0, gt=0)
    """Seconds the check of one answer may take from the engine's answer, a wait for a check
    slot included; None for no limit."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds a whole query may take, the engine's answers, checks and policies together
    (None: no limit). An engine call still running at the deadline is given up (``aquery``
    cancels it; ``query``, which then runs each engine call on a daemon worker thread, abandons
    it there), a check runs under the earlier of ``check_timeout`` and the deadline, and past it
    no step starts: the query ends at once as its attempts so far say (an engine call cut off is
    a failed attempt with a ``TimeoutError``, so a static ``Fallback`` still answers)."""
    max_concurrent_checks: int | None = Field(default=DEFAULT_MAX_CONCURRENT_CHECKS, ge=1)
    """Most answers this engine checks at once (``query`` and ``aquery`` together); the rest
    wait their turn in arrival order, and one that cannot finish within ``check_timeout`` is
    refused before any work ("over capacity"), as in ``HallucinationGuard``: then only
    ``Fallback`` / ``FallbackEngine`` / ``Raise`` apply. None for no bound."""
    check_loop: CheckLoop = "caller"
    """Deprecated, no effect: ``aquery``'s checks run on the caller's event loop (``query``'s
    on truthguard's, as every sync entry point); ``"truthguard"`` warns."""
    on_error: Literal["open", "closed"] = "closed"
    """A detector error / time-out / non-verdict counts as a pass (open) or a failure (closed)."""
    refusals: Literal["release", "retry"] = "release"
    """An answer with nothing to check (a refusal such as "I don't know", or only greetings and
    opinions) is released as it is (``release``), or treated as failing so the policies try
    again (``retry``)."""
    retrievers: dict[str, BaseRetriever] = Field(default_factory=dict)
    """Fallback retrievers by name, for ``ReRetrieve(alternative=name)``."""
    detector_fields: dict[str, Any] = Field(default_factory=dict)
    """Extra detector input fields for every query (e.g. ``references``), given to the detectors
    that accept them."""
    callback_manager: CallbackManager | None = Field(default=None, exclude=True)
    """Legacy LlamaIndex callbacks (default: the wrapped engine's)."""

    _gate: CheckGate | None = PrivateAttr(default=None)

    def __init__(self, **kwargs: Any) -> None:
        with input_errors():
            super().__init__(**kwargs)
        if self.callback_manager is None:
            self.callback_manager = getattr(
                self.query_engine, "callback_manager", None
            ) or CallbackManager([])
        install()  # LLM usage of each attempt is read from instrumentation events

    _check_loop = field_validator("check_loop")(deprecated_check_loop)

    @field_validator("detectors", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, BaseDetector) else v

    @model_validator(mode="after")
    def _check_config(self) -> GuardedQueryEngine:
        check_detector_options(
            self.detector_keys, thresholds=self.thresholds, score_ranges=self.score_ranges,
            bounds=score_bounds(self.detector_keys, self.detectors),
        )  # fmt: skip
        self._check_fields()
        for i, policy in enumerate(self.policies):
            self._check_policy(f"policies[{i}]", policy)
        self._gate = CheckGate.bounding(self.max_concurrent_checks)
        return self

    def _check_fields(self) -> None:
        """Every extra field goes to at least one detector, with a value it accepts."""
        for name, value in self.detector_fields.items():
            takers = [d for d in self.detectors if name in d.input_model.model_fields]
            if not takers:
                raise InvalidInputError(
                    f"detector_fields.{name}", "no detector of this engine accepts this field"
                )
            for d in takers:
                d.validate_input({"question": "q", "answer": "a", name: value})

    def _check_policy(self, where: str, policy: GuardPolicy) -> None:
        if isinstance(policy, Regenerate) and policy.temperature is not None:
            raise InvalidInputError(
                f"{where}.temperature",
                "a LlamaIndex engine has no per-call temperature; set it on the LLM instead",
            )
        if not isinstance(policy, ReRetrieve):
            return
        engine = self.query_engine
        if not isinstance(engine, RetrieverQueryEngine):
            raise InvalidInputError(
                where,
                f"ReRetrieve needs a RetrieverQueryEngine (index.as_query_engine()) to retrieve "
                f"again; {type(engine).__name__} has no retriever to change",
            )
        if policy.alternative is not None:
            if policy.alternative not in self.retrievers:
                raise InvalidInputError(
                    f"{where}.alternative",
                    f"no retriever named {policy.alternative!r} in retrievers= "
                    f"(known: {sorted(self.retrievers)})",
                )
        elif not _has_top_k(engine.retriever):
            raise InvalidInputError(
                where,
                f"ReRetrieve(k=...) raises similarity_top_k, which "
                f"{type(engine.retriever).__name__} does not have; give a fallback retriever "
                f"with retrievers={{'name': ...}} and ReRetrieve(alternative='name')",
            )

    @property
    def detector_keys(self) -> list[str]:
        """One key per detector: its ``detector_name``, suffixed ``#2``... when repeated."""
        return unique_keys(d.detector_name for d in self.detectors)

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"query_engine": self.query_engine}

    # -- the two drivers ---------------------------------------------------------------------------

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        streamed: list[bool] = []
        deadline = Deadline.start(self.timeout)
        response = drive(
            self._loop(query_bundle, streamed, deadline), partial(_run_before, deadline=deadline)
        )
        return _as_stream(response) if any(streamed) else response

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        streamed: list[bool] = []
        deadline = Deadline.start(self.timeout)
        response = await adrive(
            self._loop(query_bundle, streamed, deadline), partial(_arun_before, deadline=deadline)
        )
        return _as_async_stream(response) if any(streamed) else response

    # -- the loop (no I/O of its own) --------------------------------------------------------------

    def _loop(
        self, bundle: QueryBundle, streamed: list[bool], deadline: Deadline | None = None
    ) -> Loop:
        question = bundle.query_str
        if not question or not question.strip():
            raise InvalidInputError("query_str", "must not be blank")
        loop = AttemptLoop(
            question=question,
            input={"question": question},
            policies=self.policies,
            max_attempts=self.max_attempts,
            # The policy's own model calls (a query rewriter) are counted into its attempt.
            policy_config=lambda number, usage: {
                "callbacks": [usage],
                "tags": [f"guard:attempt:{number}"],
            },
            context=partial(_Context, keys=self.detector_keys),
            log=logger,
        )
        action: Action = loop.start()
        config: RunnableConfig = {}
        while not isinstance(action, Finish):
            if isinstance(action, RunAttempt):
                try:  # the loop carries what earlier steps set (ReRetrieve's k into Regenerate)
                    op = (
                        Query(self.query_engine, bundle)
                        if action.number == 1
                        else self._plan(action, bundle, question, config)
                    )
                except Exception as e:  # a step the engine cannot take: a failed attempt
                    attempt = Attempt(
                        number=action.number,
                        policy=action.policy,
                        error=f"policy failed: {type(e).__name__}: {e}",
                    )
                    action = loop.attempted(attempt, error=e)
                    continue
                attempt = yield from self._attempt(
                    question, action.number, action.policy, op, action.check, streamed, deadline
                )
                action = loop.attempted(attempt)
            elif isinstance(action, AskPolicy):
                config = action.context.config or {}
                try:
                    step = yield Await(
                        lambda a=action: before(
                            deadline, a.policy.astep(a.context), grace=POLICY_GRACE
                        )
                    )
                except Exception as e:  # recorded; GuardRejected (the Raise policy) re-raised
                    action = loop.policy_failed(e)
                else:
                    action = loop.stepped(step)
            else:
                action = loop.released(Response(response=action.answer))
        return self._finish(loop.result())

    def _plan(
        self, step: RunAttempt, bundle: QueryBundle, question: str, config: RunnableConfig
    ) -> Op:
        """Turn an attempt the loop asks for into an operation on the LlamaIndex engine."""
        if step.runnable is not None:
            if isinstance(step.runnable, EngineRunnable):
                return Query(step.runnable.engine, QueryBundle(question))
            return Invoke(step.runnable, step.input, config)
        new = dict(step.input) if isinstance(step.input, Mapping) else {"question": step.input}
        question = str(new.pop("question", question))
        rewritten = new.pop(RETRIEVAL_QUERY_KEY, None)
        # Without a rewrite, retrieve with the caller's own bundle (its embedding, if any).
        retrieval = QueryBundle(rewritten) if rewritten else bundle
        # Anything else a policy added (Regenerate's feedback, a custom instruction) goes to
        # the synthesiser after the question; retrieval keeps the question itself.
        notes = [str(v) for v in new.values() if isinstance(v, str) and v.strip()]
        synthesis = "\n\n".join([question, *notes])
        configurable = dict(step.configurable)
        search = configurable.pop(SEARCH_KWARGS_FIELD, None) or {}
        alternative = configurable.pop(RETRIEVER_FIELD, None)
        if configurable:
            raise InvalidInputError(
                "configurable", f"not supported by GuardedQueryEngine: {sorted(configurable)}"
            )
        engine = self.query_engine
        if not isinstance(engine, RetrieverQueryEngine):
            if search or alternative:  # refused at construction for the built-in ReRetrieve
                raise InvalidInputError("policies", "re-retrieval needs a RetrieverQueryEngine")
            return Query(
                engine,
                QueryBundle(
                    query_str=synthesis,
                    custom_embedding_strs=retrieval.embedding_strs,
                    embedding=retrieval.embedding,
                ),
            )
        retriever = self.retrievers[alternative] if alternative else engine.retriever
        k = search.get("k")
        if k is not None and _has_top_k(retriever):
            retriever = copy.copy(retriever)  # per attempt: concurrent queries keep their own k
            retriever.similarity_top_k = int(k)  # type: ignore[attr-defined]
        return RetrieveThenSynthesize(engine, retriever, retrieval, QueryBundle(synthesis))

    def _attempt(
        self,
        question: str,
        number: int,
        policy: str | None,
        op: Op,
        check: bool,
        streamed: list[bool],
        deadline: Deadline | None = None,
    ) -> Generator[Op, Any, Attempt]:
        started = time.perf_counter()
        try:
            with running_chain(self._gate):  # the query's work shares the checks' loop
                answer_: Answer = yield op
            streamed.append(answer_.streamed)
            response = answer_.response
            if response.response is None:
                raise InvalidInputError("response", "the engine returned an empty response")
            answer = str(response.response)
            contexts = [context_text(n) for n in response.source_nodes]
        except Exception as e:
            if number == 1 and not isinstance(e, RunTimedOut):
                raise  # nothing to keep yet: the caller sees the engine's own error
            return Attempt(
                number=number,
                policy=policy,
                error=f"{type(e).__name__}: {e}",
                chain_usage=op.spent or Usage(),  # the calls made before it failed still count
                seconds=time.perf_counter() - started,
            )
        attempt = Attempt(
            number=number,
            policy=policy,
            answer=answer,
            output=response,
            contexts=contexts,
            chain_usage=answer_.usage,
        )
        if check:
            timeout = within(deadline, self.check_timeout)
            results = yield Await(lambda: self._acheck(question, answer, contexts, timeout))
            attempt.results = results
            attempt.verdict = self._decide(results)
            attempt.check_usage = Usage.total([r.usage for r in results])
            otel.emit_verdict(
                self.detector_keys, results, attempt.verdict, attempt=number, policy=policy
            )
        attempt.seconds = time.perf_counter() - started
        attempt.chain_usage.wall_seconds = attempt.chain_usage.wall_seconds or attempt.seconds
        return attempt

    async def _acheck(
        self, question: str, answer: str, contexts: list[str], timeout: float | None
    ) -> list[DetectionResult]:
        base: dict[str, Any] = {"question": question, "answer": answer, "contexts": contexts}

        def payload(detector: BaseDetector) -> dict[str, Any]:
            fields = detector.input_model.model_fields
            return {**base, **{k: v for k, v in self.detector_fields.items() if k in fields}}

        # As in the core guard: the answer survives any detector failure, time-out or refusal.
        return await run_checks(
            self.detectors,
            [payload(d) for d in self.detectors],
            None,
            timeout=timeout,
            gate=self._gate,
        )

    def _decide(self, results: list[DetectionResult]) -> GuardVerdict:
        return verdict_for(self, self.detector_keys, self.detectors, results)

    def _finish(self, result: GuardResult) -> Response:
        output = result.output
        source = output if isinstance(output, Response) else Response(response=None)
        # A new Response: the attempt keeps its own, so the result holds no cycle back to itself.
        return Response(
            response=result.answer,
            source_nodes=list(source.source_nodes),
            metadata={**(source.metadata or {}), METADATA_KEY: result},
        )


def _released_sentences(text: str | None) -> list[str]:
    """``text`` cut after each sentence (whitespace kept, so the pieces join back to it)."""
    from truthguard.refchecker.segment import split_sentences

    if not text:
        return []
    spans = split_sentences(text)
    cuts = [s.start for s in spans[1:]]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b]]


def _as_stream(response: Response) -> StreamingResponse:
    """The released answer as a stream of its sentences (checked before the first one)."""
    return StreamingResponse(
        response_gen=iter(_released_sentences(response.response)),
        source_nodes=response.source_nodes,
        metadata=response.metadata,
    )


def _as_async_stream(response: Response) -> AsyncStreamingResponse:
    """The async twin of :func:`_as_stream`."""

    async def sentences() -> Any:
        for sentence in _released_sentences(response.response):
            yield sentence

    return AsyncStreamingResponse(
        response_gen=sentences(),
        source_nodes=response.source_nodes,
        metadata=response.metadata,
    )


def _has_top_k(retriever: BaseRetriever) -> bool:
    prop = getattr(type(retriever), "similarity_top_k", None)
    return isinstance(prop, property) and prop.fset is not None


def _run_before(op: Op, *, deadline: Deadline | None) -> Any:
    """``op.run()`` for ``query``; under a deadline an engine call runs on a daemon worker
    thread, abandoned there at the deadline (the checks and policies keep it themselves)."""
    if isinstance(op, Await):
        return op.run()
    return call_before(deadline, op.run)


async def _arun_before(op: Op, *, deadline: Deadline | None) -> Any:
    """``await op.arun()`` for ``aquery``; an engine call still running at the deadline is
    cancelled."""
    if isinstance(op, Await):
        return await op.arun()
    return await before(deadline, op.arun())
