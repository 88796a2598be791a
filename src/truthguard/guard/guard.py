"""``HallucinationGuard``: a Runnable that checks a chain's answer and acts when it fails."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
    adispatch_custom_event,
)
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableSerializable,
)
from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from truthguard import otel
from truthguard._clean import clean_text
from truthguard._config import with_default_concurrency
from truthguard._sync import invoke_user, run_sync
from truthguard.errors import GuardRejected, InvalidInputError, InvalidLLMOutput
from truthguard.guard._deadline import POLICY_GRACE, Deadline, before, within
from truthguard.guard._models import Attempt, GuardResult, GuardVerdict
from truthguard.guard._runs import (
    RetrieverCapture,
    attempt_chain,
    attempt_config,
    scoped_config,
    with_feedback_slot,
)
from truthguard.guard.admission import DEFAULT_MAX_CONCURRENT_CHECKS, CheckGate, running_chain
from truthguard.guard.attempts import Action, AskPolicy, Finish, RunAttempt
from truthguard.guard.check import (
    CheckLoop,
    attempt_loop,
    base_detector,
    deprecated_check_loop,
    run_checks,
    run_detector,
    score_bounds,
    verdict_for,
    we_are_cancelled,
)
from truthguard.guard.extract import (
    answer_of,
    check_input,
    contexts_of,
    history_of,
    question_of,
)
from truthguard.guard.policies import GuardPolicy
from truthguard.guard.usage import UsageCollector
from truthguard.guard.validation import input_errors
from truthguard.guard.verdict import check_detector_options, unique_keys
from truthguard.result import DetectionResult, Usage

# ``base_detector`` and ``run_detector`` live in ``guard.check``; still importable from here.
__all__ = ["VERDICT_EVENT", "HallucinationGuard", "base_detector", "run_detector"]

logger = logging.getLogger("truthguard.guard")

_LONG_ANSWER = 100_000
"""Characters above which an answer is cleaned on a worker thread."""

VERDICT_EVENT = "truthguard_verdict"
"""Name of the custom callback event the guard dispatches after every check."""


class HallucinationGuard(RunnableSerializable[Any, GuardResult]):
    """Check a chain's answers with one or more detectors; re-try, fall back or raise on failure.

    The wrapped chain takes a string or a dict carrying the question (``question_key``) and
    returns a string, a message, or a dict with the answer (``answer_key``) and optionally the
    context documents (``context_key``). Each answer is checked by every detector concurrently;
    the results are combined (``combine``); a failing answer goes through ``policies`` in order
    until one passes or ``max_attempts`` is reached. When the input carries a chat history
    (``history_key``), every check gets its earlier turns as ``history``: what the user said is
    evidence of what was said, anything new still needs the contexts.

    Every run inside an attempt carries the inherited tag ``guard:attempt:N`` and each verdict is
    dispatched as the custom event ``truthguard_verdict``. A checker that is unavailable (a model
    outage, an unparseable reply, ``check_timeout`` exceeded) gives an ``invalid`` result,
    counted as a pass (``on_error="open"``) or a failure (``"closed"``); a detector that raises on
    the input fails in both modes. If the chain itself raises, the policies still run (a fallback
    answers); only when no attempt produced an answer does the chain's error reach the caller.
    The output is a :class:`GuardResult`; earlier answers stay in ``attempts``.

    Streaming: ``stream`` / ``astream`` yield one chunk, the final :class:`GuardResult`, only once
    the answer has passed (or the guard has given up). Nothing unchecked is streamed: the runs of
    every attempt (and the detectors' own model calls) are hidden from ``astream_events`` and
    LangGraph ``stream_mode="messages"`` unless ``stream_nested=True``. For an answer streamed
    sentence by sentence, each sentence checked first, see :class:`StreamingGuard`.

    With ``output="answer"`` the guard returns the released answer text (and raises
    :class:`GuardRejected` when no answer passed), so ``guard | StrOutputParser()`` and other
    string consumers compose.

    Example:
        >>> from langchain_core.runnables import RunnableLambda
        >>> from truthguard.testing import FakeDetector
        >>> chain = RunnableLambda(lambda q: "Paris")
        >>> guard = HallucinationGuard(chain=chain, detectors=[FakeDetector(score=0.9)])
        >>> guard.invoke("What is the capital of France?").status
        'passed'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    chain: Runnable[Any, Any]
    """The chain to guard."""
    detectors: list[Runnable[Any, Any]] = Field(min_length=1)
    """Detectors run on every answer (a single one is accepted too); a detector wrapped in
    ``configurable_fields`` / ``with_config`` is resolved with the run's config."""
    combine: Literal["all", "any", "mean"] = "all"
    """``all``: every detector passes; ``any``: one does; ``mean``: mean normalised score."""
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Native-scale threshold per detector key, overriding the detector's own ``threshold``."""
    score_ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Native ``(low, high)`` score range per detector key for normalising (default (0, 1))."""
    mean_threshold: float = Field(default=0.5, ge=0, le=1)
    """Pass mark of the mean normalised score when ``combine="mean"``."""
    policies: list[GuardPolicy] = Field(default_factory=list)
    """What to do with a failing answer, in order (each used up to its ``max_uses``)."""
    max_attempts: int = Field(default=3, ge=1)
    """Most chain calls per request, the first included (terminal policies still apply)."""
    check_timeout: float | None = Field(default=60.0, gt=0)
    """Seconds the check of one answer may take from the chain's end, a wait for a check slot
    included (the guard returns within it even when a detector ignores cancellation); None for
    no limit."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds the whole run may take, chain calls, checks and policies together (None: no
    limit). Each step gets what is left: a chain call still running at the deadline is
    cancelled (from ``invoke`` its worker thread's call is abandoned, never waited for), a check
    runs under the earlier of ``check_timeout`` and the deadline, and past it no step starts: the
    run ends at once as its attempts so far say (a chain cut off is a failed attempt with a
    ``TimeoutError``, a check cut off an ``invalid`` result, so a static ``Fallback`` still
    answers). Kept by ``invoke``, ``ainvoke``, ``stream``, ``astream`` and ``batch``."""
    max_concurrent_checks: int | None = Field(default=DEFAULT_MAX_CONCURRENT_CHECKS, ge=1)
    """Most answers this guard checks at once; the rest wait their turn in arrival order. A
    check that cannot finish within ``check_timeout`` (counted from the chain's end, the wait
    included) is refused before any work is spent on it, with an ``invalid`` result whose
    reason starts "over capacity" (a failure, or a pass with ``on_error="open"``). After such a
    refusal only ``Fallback`` and ``Raise`` apply (re-running the chain or checking again would
    add to the overload); the result's ``over_capacity`` and ``reason`` say so. None for no
    bound."""
    check_loop: CheckLoop = "caller"
    """Deprecated, no effect: checks run on the caller's event loop (``"truthguard"`` warns;
    ``max_concurrent_checks`` keeps deadlines under a burst)."""
    on_error: Literal["open", "closed"] = "closed"
    """An unavailable checker (outage / time-out / non-verdict) counts as a pass (open) or a
    failure (closed). A detector that raises on the input always counts as a failure."""
    refusals: Literal["release", "retry"] = "release"
    """An answer with nothing to check (a refusal such as "I don't know", or only greetings and
    opinions) is released as it is (``release``), or treated as failing so the policies try
    again (``retry``)."""
    question_key: str | None = None
    """Input key of the question (default: the first of question, input, query)."""
    answer_key: str | None = None
    """Output key of the answer (default: the first of answer, output, result, text, content)."""
    context_key: str | None = None
    """Output key of the contexts (default: context, contexts, source_documents, ...)."""
    history_key: str | None = None
    """Input key of the chat history passed to every check as ``history`` (default: the first
    of chat_history, history, messages; an input that is a list of messages is a conversation
    itself); ``""`` passes none. The question's own turn is never part of it."""
    detector_fields: list[str] = Field(default_factory=list)
    """Chain input keys copied into the detector input (for example ``entity``)."""
    batch_concurrency: int = Field(default=4, ge=1)
    """Default bound for ``batch`` / ``abatch`` when the config sets no ``max_concurrency``."""
    output: Literal["result", "answer"] = "result"
    """``result``: return a :class:`GuardResult`; ``answer``: return the released text (raise
    :class:`GuardRejected` when nothing passed)."""
    rejected_text_in_events: bool = False
    """Let the ``truthguard_verdict`` event of a failing answer carry its text (``answer``).
    Off (the default), the event of an answer that is not released has ``answer: None``, so a
    consumer forwarding events (``astream_events`` to a browser) never receives text the guard
    withheld; the verdict, its reason and the contexts are always there."""
    stream_nested: bool = False
    """Let streaming consumers (``astream_events``, LangGraph ``stream_mode="messages"``) see
    the runs inside each attempt, unchecked tokens included. Off: only the guard's own output
    and its ``truthguard_verdict`` events are streamed."""

    _chain_for_attempts: Runnable[Any, Any] | None = PrivateAttr(default=None)
    _n_models: int = PrivateAttr(default=0)
    _gate: CheckGate | None = PrivateAttr(default=None)

    def __init__(self, **kwargs: Any) -> None:
        with input_errors():
            super().__init__(**kwargs)

    def warm_up(self) -> HallucinationGuard:
        """Load every detector's local models now (see :meth:`BaseDetector.warm_up`)."""
        for detector in self.detectors:
            detector.warm_up()
        return self

    _check_loop = field_validator("check_loop")(deprecated_check_loop)

    @field_validator("detectors", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        items = v if isinstance(v, list | tuple) else [v]
        for i, d in enumerate(items):
            if base_detector(d) is None:
                raise InvalidInputError(
                    f"detectors[{i}]",
                    "expected a truthguard detector (or one wrapped by configurable_fields / "
                    f"with_config), got {type(d).__name__}",
                )
        return list(items)

    @model_validator(mode="after")
    def _check_keys(self) -> HallucinationGuard:
        keys = self.detector_keys
        check_detector_options(
            keys,
            thresholds=self.thresholds,
            score_ranges=self.score_ranges,
            bounds=score_bounds(keys, self.detectors),
        )
        self._check_policies()
        self._gate = CheckGate.bounding(self.max_concurrent_checks)
        return self

    def _check_policies(self) -> None:
        """Refuse, at construction, a policy that could not change anything."""
        if self.max_attempts == 1:
            idle = [p.name for p in self.policies if not p.terminal]
            if idle:
                raise InvalidInputError(
                    "max_attempts",
                    f"is 1, so the policies {idle} could never run; raise max_attempts or drop "
                    "them",
                )
        for p in self.policies:
            p.validate_chain(self.chain)
        self._chain_for_attempts, self._n_models = with_feedback_slot(self.chain)

    @property
    def OutputType(self) -> Any:
        return str if self.output == "answer" else GuardResult

    @property
    def detector_keys(self) -> list[str]:
        """One key per detector: its ``detector_name``, suffixed ``#2``... when repeated."""
        return unique_keys(base_detector(d).detector_name for d in self.detectors)  # type: ignore[union-attr]

    # -- public API -----------------------------------------------------------------------------

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        self._validate(input)
        return self._call_with_config(self._invoke_sync, input, config, run_type="chain", **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        self._validate(input)
        return await self._acall_with_config(
            self._invoke_async, input, config, run_type="chain", **kwargs
        )

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """One chunk, the output, once the guard has decided; ``astream_events`` reports it as
        the guard's ``on_chain_stream`` event (as :class:`StreamingGuard` reports each chunk)."""
        self._validate(input)

        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in self._atransform_stream_with_config(
            one(), self._stream_async, config, run_type="chain", **kwargs
        ):
            yield chunk

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[GuardResult]:
        return super().batch(
            inputs, self._bounded(config), return_exceptions=return_exceptions, **kwargs
        )

    async def abatch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[GuardResult]:
        return await super().abatch(
            inputs, self._bounded(config), return_exceptions=return_exceptions, **kwargs
        )

    # -- machinery ------------------------------------------------------------------------------

    def _validate(self, input: Any) -> None:
        """Fail fast, before any model call, naming the offending field."""
        question_of(input, self.question_key)
        history_of(input, self.history_key)
        if self.detector_fields:
            if not isinstance(input, Mapping):
                raise InvalidInputError("detector_fields", "needs a dict chain input")
            for key in self.detector_fields:
                if key not in input:
                    raise InvalidInputError(key, "listed in detector_fields but not in the input")

    def _bounded(
        self, config: RunnableConfig | list[RunnableConfig] | None
    ) -> RunnableConfig | list[RunnableConfig]:
        return with_default_concurrency(config, self.batch_concurrency)

    def _invoke_sync(
        self, input: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        return self._shape(run_sync(self._arun(input, run_manager, config)))

    async def _invoke_async(
        self, input: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        return self._shape(await self._arun(input, run_manager, config))

    async def _stream_async(
        self,
        inputs: AsyncIterator[Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> AsyncIterator[Any]:
        async for input in inputs:  # exactly one: astream's
            yield self._shape(await self._arun(input, run_manager, config))

    def _shape(self, result: GuardResult) -> Any:
        if self.output == "result":
            return result
        if result.status == "rejected":  # a bare string could not say it failed
            last = result.verdict.reason if result.verdict else "no passing answer"
            raise GuardRejected(
                f"no passing answer after {result.n_attempts} attempt(s): {last}",
                attempts=list(result.attempts),
                result=result.verdict,
                usage=result.usage,
            )
        return result.answer

    async def _arun(self, input: Any, run_manager: Any, config: RunnableConfig) -> GuardResult:
        question = clean_text(question_of(input, self.question_key))
        history = history_of(input, self.history_key, question=question)
        deadline = Deadline.start(self.timeout)
        loop = attempt_loop(self, question, input, run_manager, config, history)
        action: Action = loop.start()
        while not isinstance(action, Finish):
            if isinstance(action, RunAttempt):
                attempt, error = await self._attempt(
                    action, question, history, input, run_manager, config, deadline
                )
                action = loop.attempted(attempt, error=error)
            elif isinstance(action, AskPolicy):
                try:
                    with scoped_config(action.context.config):  # type: ignore[arg-type]
                        step = await before(
                            deadline, action.policy.astep(action.context), grace=POLICY_GRACE
                        )
                except Exception as e:  # recorded; GuardRejected (the Raise policy) re-raised
                    action = loop.policy_failed(e)
                else:
                    action = loop.stepped(step)
            else:
                action = loop.released(action.answer)
        return loop.result()

    async def _attempt(
        self,
        action: RunAttempt,
        question: str,
        history: list[Any],
        original_input: Any,
        run_manager: Any,
        config: RunnableConfig,
        deadline: Deadline | None = None,
    ) -> tuple[Attempt, Exception | None]:
        number, policy = action.number, action.policy
        started = time.perf_counter()
        tag = f"guard:attempt:{number}"
        collector = UsageCollector()
        capture = RetrieverCapture()
        child = attempt_config(
            config, run_manager, tag, stream_nested=self.stream_nested,
            extra=[collector, capture], configurable=action.configurable,
        )  # fmt: skip
        runnable = action.runnable or attempt_chain(self.chain, self._chain_for_attempts, child)
        output: Any = None
        try:
            try:
                with scoped_config(child), running_chain(self._gate):
                    output = await before(deadline, invoke_user(runnable, action.input, child))
            except asyncio.CancelledError as e:
                if we_are_cancelled():
                    raise
                # A model raised CancelledError on its own: a failed call, not our cancellation.
                raise RuntimeError(f"the chain raised CancelledError: {e}") from e
            # An output without a usable answer is a failed attempt too: earlier answers stay.
            answer = answer_of(output, self.answer_key)
            if len(answer) > _LONG_ANSWER:  # megabytes of text: cleaned off the event loop
                answer = await asyncio.to_thread(clean_text, answer)
            else:
                answer = clean_text(answer)
            if not answer.strip():  # an empty reply (null content, no choices) is no answer
                # A model fault (null content, no choices), not bad input from the user.
                raise InvalidLLMOutput("the chain's model gave an empty answer", raw=answer,
                                       stage="chain")  # fmt: skip
            contexts = [clean_text(c) for c in contexts_of(output, self.context_key)]
        except Exception as e:
            logger.warning("truthguard: attempt %d raised %s: %s", number, type(e).__name__, e)
            failed = Attempt(
                number=number,
                policy=policy,
                output=output,
                error=f"{type(e).__name__}: {e}",
                chain_usage=collector.usage(time.perf_counter() - started),
                seconds=time.perf_counter() - started,
            )
            return failed, e
        if not contexts:  # a chain that drops its documents: take them from its retriever runs
            contexts = [clean_text(c) for c in capture.contexts]
        chain_seconds = time.perf_counter() - started
        attempt = Attempt(
            number=number,
            policy=policy,
            answer=answer,
            output=output,
            contexts=contexts,
            chain_usage=collector.usage(chain_seconds),
        )
        if action.check:
            check_config = attempt_config(
                config, run_manager, tag, stream_nested=self.stream_nested
            )
            with scoped_config(check_config):
                results = await self._check(
                    question, answer, contexts, history, original_input, check_config,
                    within(deadline, self.check_timeout),
                )  # fmt: skip
            verdict = self._decide(results)
            attempt.results = results
            attempt.verdict = verdict
            attempt.check_usage = Usage.total([r.usage for r in results])
            # The verdict event goes to every consumer, streaming ones included.
            event_config = attempt_config(config, run_manager, tag, stream_nested=True)
            await self._emit(number, policy, answer, verdict, event_config, contexts)
            otel.emit_verdict(
                self.detector_keys, results, verdict, attempt=number, policy=policy,
                response_id=otel.response_id(output),
            )  # fmt: skip
        attempt.seconds = time.perf_counter() - started
        return attempt, None

    def _decide(self, results: list[DetectionResult]) -> GuardVerdict:
        return verdict_for(self, self.detector_keys, self.detectors, results)

    async def _check(
        self,
        question: str,
        answer: str,
        contexts: list[str],
        history: list[Any],
        original_input: Any,
        config: RunnableConfig,
        timeout: float | None,
    ) -> list[DetectionResult]:
        # the first check and every re-check read the request's own history
        payload = check_input(question, answer, contexts, history)
        for key in self.detector_fields:  # presence checked in _validate
            value = original_input[key]
            payload[key] = clean_text(value) if isinstance(value, str) else value
        return await run_checks(self.detectors, payload, config, timeout=timeout, gate=self._gate)

    async def _emit(
        self,
        number: int,
        policy: str | None,
        answer: str,
        verdict: GuardVerdict,
        config: RunnableConfig,
        contexts: list[str] | None = None,
    ) -> None:
        data = {
            "attempt": number,
            "policy": policy,
            "answer": answer if verdict.passing or self.rejected_text_in_events else None,
            "verdict": verdict.model_dump(),
            "contexts": list(contexts or []),
        }
        await adispatch_custom_event(VERDICT_EVENT, data, config=config)
