"""``HallucinationGuard``: a Runnable that checks a chain's answer and acts when it fails."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    BaseCallbackManager,
    CallbackManagerForChainRun,
    adispatch_custom_event,
)
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import patch_config
from pydantic import ConfigDict, Field, field_validator, model_validator

from truthguard._config import with_default_concurrency
from truthguard._sync import run_sync
from truthguard.detector import BaseDetector
from truthguard.errors import GuardRejected, InvalidInputError
from truthguard.guard._extract import answer_of, contexts_of, question_of
from truthguard.guard._models import Attempt, GuardResult, GuardVerdict
from truthguard.guard._usage import UsageCollector
from truthguard.guard._validation import input_errors
from truthguard.guard._verdict import decide
from truthguard.guard.policies import GuardPolicy, PolicyContext, Release
from truthguard.result import DetectionResult, Usage

__all__ = ["VERDICT_EVENT", "HallucinationGuard"]

logger = logging.getLogger("truthguard.guard")

VERDICT_EVENT = "truthguard_verdict"
"""Name of the custom callback event the guard dispatches after every check."""


class HallucinationGuard(RunnableSerializable[Any, GuardResult]):
    """Check a chain's answers with one or more detectors; re-try, fall back or raise on failure.

    The wrapped chain takes a string or a dict carrying the question (``question_key``) and
    returns a string, a message, or a dict with the answer (``answer_key``) and optionally the
    context documents (``context_key``). Each answer is checked by every detector concurrently;
    the results are combined (``combine``); a failing answer goes through ``policies`` in order
    until one passes or ``max_attempts`` is reached.

    Every chain call is a child run tagged ``guard:attempt:N`` and each verdict is dispatched as
    the custom event ``truthguard_verdict``. A detector that raises or exceeds ``check_timeout``
    yields an ``invalid`` result, counted as a pass (``on_error="open"``) or a failure
    (``"closed"``). The output is a :class:`GuardResult`; earlier answers stay in ``attempts``.

    Streaming: ``stream`` / ``astream`` yield one chunk, the final :class:`GuardResult`, only once
    the answer has passed (or the guard has given up). Nothing unchecked is streamed.

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
    detectors: list[BaseDetector] = Field(min_length=1)
    """Detectors run on every answer (a single detector is accepted too)."""
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
    """Seconds one detector may spend on one answer; None for no limit."""
    on_error: Literal["open", "closed"] = "closed"
    """A detector error / time-out / non-verdict counts as a pass (open) or a failure (closed)."""
    question_key: str | None = None
    """Input key of the question (default: the first of question, input, query)."""
    answer_key: str | None = None
    """Output key of the answer (default: the first of answer, output, result, text, content)."""
    context_key: str | None = None
    """Output key of the contexts (default: context, contexts, source_documents, ...)."""
    detector_fields: list[str] = Field(default_factory=list)
    """Chain input keys copied into the detector input (for example ``entity``)."""
    batch_concurrency: int = Field(default=4, ge=1)
    """Default bound for ``batch`` / ``abatch`` when the config sets no ``max_concurrency``."""

    def __init__(self, **kwargs: Any) -> None:
        with input_errors():
            super().__init__(**kwargs)

    def warm_up(self) -> HallucinationGuard:
        """Load every detector's local models now (see :meth:`BaseDetector.warm_up`)."""
        for detector in self.detectors:
            detector.warm_up()
        return self

    @field_validator("detectors", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, BaseDetector) else v

    @model_validator(mode="after")
    def _check_keys(self) -> HallucinationGuard:
        keys = set(self.detector_keys)
        for name, mapping in (("thresholds", self.thresholds), ("score_ranges", self.score_ranges)):
            unknown = sorted(set(mapping) - keys)
            if unknown:
                raise InvalidInputError(
                    name, f"unknown detector keys {unknown}; known: {sorted(keys)}"
                )
        for key, (lo, hi) in self.score_ranges.items():
            if hi <= lo:
                raise InvalidInputError(f"score_ranges.{key}", "needs high > low")
        return self

    @property
    def detector_keys(self) -> list[str]:
        """One key per detector: its ``detector_name``, suffixed ``#2``... when repeated."""
        seen: dict[str, int] = {}
        keys = []
        for d in self.detectors:
            n = seen.get(d.detector_name, 0) + 1
            seen[d.detector_name] = n
            keys.append(d.detector_name if n == 1 else f"{d.detector_name}#{n}")
        return keys

    # -- public API -----------------------------------------------------------------------------

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardResult:
        self._validate(input)
        return self._call_with_config(self._invoke_sync, input, config, run_type="chain", **kwargs)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardResult:
        self._validate(input)
        return await self._acall_with_config(
            self._invoke_async, input, config, run_type="chain", **kwargs
        )

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
    ) -> GuardResult:
        return run_sync(self._arun(input, run_manager, config))

    async def _invoke_async(
        self, input: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> GuardResult:
        return await self._arun(input, run_manager, config)

    def _next_policy(self, uses: list[int], n_attempts: int) -> int | None:
        exhausted = n_attempts >= self.max_attempts
        for i, p in enumerate(self.policies):
            if uses[i] >= p.max_uses or (exhausted and not p.terminal):
                continue
            return i
        return None

    async def _arun(self, input: Any, run_manager: Any, config: RunnableConfig) -> GuardResult:
        question = question_of(input, self.question_key)
        attempts = [
            await self._attempt(
                1, None, self.chain, input, {}, True, question, input, run_manager, config
            )
        ]
        uses = [0] * len(self.policies)
        status: Literal["passed", "fallback", "rejected"] = "rejected"
        while True:
            last = attempts[-1]
            if last.passed:
                status = "passed"
                break
            i = self._next_policy(uses, len(attempts))
            if i is None:
                break
            policy = self.policies[i]
            uses[i] += 1
            n = len(attempts) + 1
            # The policy's own model calls (a query rewriter) belong to attempt n.
            policy_usage = UsageCollector()
            policy_callbacks: BaseCallbackManager = run_manager.get_child(f"guard:attempt:{n}")
            policy_callbacks.add_handler(policy_usage, inherit=True)
            ctx = PolicyContext(
                question=question,
                input=input,
                attempts=attempts,
                uses=uses[i],
                config=patch_config(config, callbacks=policy_callbacks),
            )
            try:
                step = await policy.astep(ctx)
            except GuardRejected:
                raise  # the Raise policy: carries every attempt
            except Exception as e:  # a broken policy must not lose the answers so far
                logger.warning("truthguard: policy %s failed: %s", policy.name, e)
                attempts.append(
                    Attempt(
                        number=n,
                        policy=policy.name,
                        error=f"policy failed: {type(e).__name__}: {e}",
                        chain_usage=policy_usage.usage(),
                    )
                )
                continue
            if isinstance(step, Release):
                attempts.append(
                    Attempt(
                        number=n,
                        policy=policy.name,
                        answer=step.answer,
                        output=step.answer,
                        chain_usage=policy_usage.usage(),
                    )
                )
                status = "fallback"
                break
            attempts.append(
                await self._attempt(
                    n,
                    policy.name,
                    step.runnable or self.chain,
                    step.input,
                    step.configurable,
                    step.check,
                    question,
                    input,
                    run_manager,
                    config,
                )
            )
            attempts[-1].chain_usage = policy_usage.usage() + attempts[-1].chain_usage
            if not step.check and attempts[-1].answer is not None:
                status = "fallback"
                break
        return self._result(question, attempts, status)

    def _result(
        self,
        question: str,
        attempts: list[Attempt],
        status: Literal["passed", "fallback", "rejected"],
    ) -> GuardResult:
        final = attempts[-1]
        if status == "rejected" and final.answer is None:
            final = next(a for a in reversed(attempts) if a.answer is not None)
        usage = Usage.total([a.chain_usage + a.check_usage for a in attempts])
        usage.wall_seconds = sum(a.seconds for a in attempts)
        return GuardResult(
            question=question,
            answer=final.answer,
            output=final.output,
            status=status,
            passed=status == "passed",
            verdict=final.verdict,
            attempts=attempts,
            usage=usage,
        )

    async def _attempt(
        self,
        number: int,
        policy: str | None,
        runnable: Runnable[Any, Any],
        chain_input: Any,
        configurable: dict[str, Any],
        check: bool,
        question: str,
        original_input: Any,
        run_manager: Any,
        config: RunnableConfig,
    ) -> Attempt:
        started = time.perf_counter()
        tag = f"guard:attempt:{number}"
        collector = UsageCollector()
        callbacks: BaseCallbackManager = run_manager.get_child(tag)
        callbacks.add_handler(collector, inherit=True)
        child = patch_config(config, callbacks=callbacks)
        if configurable:
            child["configurable"] = {**child.get("configurable", {}), **configurable}
        output: Any = None
        try:
            output = await runnable.ainvoke(chain_input, child)
            # An output without a usable answer is a failed attempt too: earlier answers stay.
            answer = answer_of(output, self.answer_key)
            contexts = contexts_of(output, self.context_key)
        except Exception as e:
            if number == 1:
                raise  # nothing to keep yet: the caller sees the chain's own error
            return Attempt(
                number=number,
                policy=policy,
                output=output,
                error=f"{type(e).__name__}: {e}",
                chain_usage=collector.usage(time.perf_counter() - started),
                seconds=time.perf_counter() - started,
            )
        chain_seconds = time.perf_counter() - started
        attempt = Attempt(
            number=number,
            policy=policy,
            answer=answer,
            output=output,
            contexts=contexts,
            chain_usage=collector.usage(chain_seconds),
        )
        if check:
            check_config = patch_config(config, callbacks=run_manager.get_child(tag))
            results = await self._check(question, answer, contexts, original_input, check_config)
            verdict = self._decide(results)
            attempt.results = results
            attempt.verdict = verdict
            attempt.check_usage = Usage.total([r.usage for r in results])
            await self._emit(number, policy, answer, verdict, check_config)
        attempt.seconds = time.perf_counter() - started
        return attempt

    def _decide(self, results: list[DetectionResult]) -> GuardVerdict:
        keys = self.detector_keys
        thresholds = {
            k: self.thresholds.get(k, d.threshold)
            for k, d in zip(keys, self.detectors, strict=True)
            if self.thresholds.get(k, d.threshold) is not None
        }
        return decide(
            keys,
            results,
            combine=self.combine,
            thresholds=thresholds,  # type: ignore[arg-type]
            ranges=self.score_ranges,
            mean_threshold=self.mean_threshold,
            on_error=self.on_error,
        )

    async def _check(
        self,
        question: str,
        answer: str,
        contexts: list[str],
        original_input: Any,
        config: RunnableConfig,
    ) -> list[DetectionResult]:
        payload: dict[str, Any] = {"question": question, "answer": answer, "contexts": contexts}
        for key in self.detector_fields:  # presence checked in _validate
            payload[key] = original_input[key]

        async def one(detector: BaseDetector) -> DetectionResult:
            try:
                return await asyncio.wait_for(
                    detector.ainvoke(payload, config), timeout=self.check_timeout
                )
            except TimeoutError:
                return DetectionResult.invalid(
                    detector.detector_name,
                    f"check timed out after {self.check_timeout}s",
                    details={"error": "timeout"},
                )
            except Exception as e:  # the answer must survive any detector failure
                return DetectionResult.invalid(
                    detector.detector_name,
                    f"detector raised {type(e).__name__}: {e}",
                    details={"error": type(e).__name__},
                )

        return list(await asyncio.gather(*(one(d) for d in self.detectors)))

    async def _emit(
        self,
        number: int,
        policy: str | None,
        answer: str,
        verdict: GuardVerdict,
        config: RunnableConfig,
    ) -> None:
        data = {
            "attempt": number,
            "policy": policy,
            "answer": answer,
            "verdict": verdict.model_dump(),
        }
        await adispatch_custom_event(VERDICT_EVENT, data, config=config)
