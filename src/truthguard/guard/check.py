"""What every guard shares: checking one answer, and the attempt loop of one request.

Finding the detector behind a wrapped runnable, running it under the guard's own deadline
without ever raising, and the one threshold rule the verdict is decided with: the core guards
and the LlamaIndex ``GuardedQueryEngine`` all use them. :func:`attempt_loop` sets up the
:class:`~truthguard.guard.attempts.AttemptLoop` of the two LangChain guards; :class:`Deadline`,
:func:`before` and :func:`within` keep a guard's whole-run ``timeout``.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langchain_core.runnables.configurable import DynamicRunnable

from truthguard import _sync
from truthguard.detector import BaseDetector
from truthguard.errors import LLMCallError
from truthguard.guard._deadline import (
    POLICY_GRACE,
    Deadline,
    RunTimedOut,
    before,
    call_before,
    within,
)
from truthguard.guard._models import GuardVerdict
from truthguard.guard._runs import attempt_config
from truthguard.guard.admission import (
    MAX_LAG_CUT,
    CheckGate,
    Refusal,
    inline_check,
    lag_margin,
)
from truthguard.guard.attempts import AttemptLoop
from truthguard.guard.usage import UsageCollector
from truthguard.guard.verdict import NEVER_OPEN, OVER_CAPACITY, Combine, OnError, decide
from truthguard.result import DetectionResult

__all__ = [
    "OUTAGES",
    "POLICY_GRACE",
    "CheckLoop",
    "Deadline",
    "RunTimedOut",
    "attempt_loop",
    "base_detector",
    "before",
    "call_before",
    "deprecated_check_loop",
    "over_capacity",
    "run_checks",
    "run_detector",
    "score_bounds",
    "thresholds_for",
    "verdict_for",
    "we_are_cancelled",
    "within",
]

CheckLoop = Literal["caller", "truthguard"]
"""Deprecated: where a guard's async checks run. They run on the caller's event loop;
``"truthguard"`` is accepted with a ``DeprecationWarning`` and changes nothing (see
:func:`deprecated_check_loop`)."""

# Exceptions that mean "the checker is unavailable" (fail-open may pass the answer); anything
# else a detector raises is a fault on this input and never a pass.
OUTAGES: tuple[type[BaseException], ...] = (LLMCallError, TimeoutError, ConnectionError)

# Past its deadline a detector that ignores cancellation is abandoned after this grace.
_CANCEL_GRACE = 0.05


def base_detector(runnable: Any) -> BaseDetector | None:
    """The detector behind ``runnable``: itself, or the default of ``configurable_fields`` /
    ``configurable_alternatives`` and ``with_config`` / ``bind`` wrappers around one."""
    seen = 0
    while seen < 20:
        if isinstance(runnable, BaseDetector):
            return runnable
        if isinstance(runnable, DynamicRunnable):
            runnable = runnable.default
        elif isinstance(runnable, RunnableBinding):
            runnable = runnable.bound
        else:
            return None
        seen += 1
    return None


def score_bounds(
    keys: Sequence[str], detectors: Sequence[Runnable[Any, Any]]
) -> dict[str, tuple[float, float] | None]:
    """The range each detector key's scores lie in (``BaseDetector.score_bounds``), for
    :func:`~truthguard.guard.verdict.check_detector_options`."""
    found = [base_detector(d) for d in detectors]
    return {k: None if d is None else d.score_bounds for k, d in zip(keys, found, strict=True)}


def thresholds_for(
    keys: Sequence[str],
    detectors: Sequence[Runnable[Any, Any]],
    results: Sequence[DetectionResult],
    overrides: Mapping[str, float],
) -> dict[str, float]:
    """The native-scale threshold each detector key is decided against.

    The guard's own ``thresholds`` entry first; else the threshold the result was checked
    against (the one a configurable or delegating detector really ran with); else the
    detector's ``threshold``. A key with none of them is left out (the result's ``passing`` or
    label decides).
    """
    out: dict[str, float] = {}
    for key, detector, result in zip(keys, detectors, results, strict=True):
        t = overrides.get(key)
        if t is None:
            t = result.threshold
        if t is None:
            found = base_detector(detector)
            t = found.threshold if found is not None else None
        if t is not None:
            out[key] = t
    return out


class VerdictOptions(Protocol):
    """The options a guard decides with (``HallucinationGuard``, ``GuardedQueryEngine``)."""

    combine: Combine
    thresholds: dict[str, float]
    score_ranges: dict[str, tuple[float, float]]
    mean_threshold: float
    on_error: OnError


def verdict_for(
    guard: VerdictOptions,
    keys: Sequence[str],
    detectors: Sequence[Runnable[Any, Any]],
    results: Sequence[DetectionResult],
) -> GuardVerdict:
    """The verdict on one answer: :func:`~truthguard.guard.verdict.decide` with ``guard``'s
    options and the thresholds of :func:`thresholds_for`."""
    return decide(
        keys,
        results,
        combine=guard.combine,
        thresholds=thresholds_for(keys, detectors, results, guard.thresholds),
        ranges=guard.score_ranges,
        mean_threshold=guard.mean_threshold,
        on_error=guard.on_error,
        # an answer with nothing to check is released unless the options say "retry"
        refusals=getattr(guard, "refusals", "release"),
    )


def we_are_cancelled() -> bool:
    """True when the current task itself was asked to stop (not a callee's stray error)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _forget(task: asyncio.Future[Any]) -> None:
    # An abandoned check's late exception must not be logged as "never retrieved".
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


async def run_detector(
    detector: Runnable[Any, Any],
    payload: dict[str, Any],
    config: RunnableConfig | None,
    *,
    timeout: float | None,
) -> DetectionResult:
    """One detector on one answer, never raising: errors and time-outs become ``invalid``.

    The deadline is the guard's own: a detector that does not stop when cancelled is abandoned
    after a short grace, so the guard returns on time. A detector that raised (bad input, a bug,
    a stray ``CancelledError``) is flagged to fail even with ``on_error="open"``.
    """
    name = base_detector(detector).detector_name  # type: ignore[union-attr]
    # the task copies the context now: its sync model calls end at this deadline too
    token = _sync.CALL_DEADLINE.set(None if timeout is None else time.monotonic() + timeout)
    try:
        task = asyncio.ensure_future(detector.ainvoke(payload, config))
    finally:
        _sync.CALL_DEADLINE.reset(token)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        _forget(task)
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_GRACE)
        _forget(task)
        return DetectionResult.invalid(
            name, f"check timed out after {timeout:.3g}s", details={"error": "timeout"}
        )
    if task.cancelled():  # cancelled from inside, not by us: a failure, never a pass
        return DetectionResult.invalid(
            name,
            "detector raised CancelledError",
            details={"error": "CancelledError", NEVER_OPEN: True},
        )
    exc = task.exception()
    if exc is None:
        result = task.result()
        if isinstance(result, DetectionResult):
            return result
        return DetectionResult.invalid(
            name,
            f"detector returned {type(result).__name__}, not a DetectionResult",
            details={"error": "bad_result", NEVER_OPEN: True},
        )
    details: dict[str, Any] = {"error": type(exc).__name__}
    if not isinstance(exc, OUTAGES):
        details[NEVER_OPEN] = True
    return DetectionResult.invalid(
        name, f"detector raised {type(exc).__name__}: {exc}", details=details
    )


def over_capacity(detector: Runnable[Any, Any], refusal: Refusal) -> DetectionResult:
    """The ``invalid`` result of a check the guard's :class:`CheckGate` did not admit: no work
    was done on it, and its reason starts "over capacity"."""
    name = base_detector(detector).detector_name  # type: ignore[union-attr]
    return DetectionResult.invalid(
        name,
        refusal.reason,
        details={"error": OVER_CAPACITY, "waited": refusal.waited, "queued": refusal.queued},
    )


async def run_checks(
    detectors: Sequence[Runnable[Any, Any]],
    payload: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    config: RunnableConfig | None,
    *,
    timeout: float | None,
    gate: CheckGate | None = None,
) -> list[DetectionResult]:
    """Every detector on one answer, concurrently, within one deadline; never raising.

    ``payload`` is the detector input: one for every detector, or one per detector (the
    LlamaIndex engine gives each only the fields it accepts). The deadline is ``timeout``
    seconds from now, the wait for a slot of ``gate`` included: a check the gate does not admit
    in time gets an ``invalid`` result per detector saying "over capacity"
    (:func:`over_capacity`) without any work spent on it, and an admitted one has what is left
    of the deadline (:func:`run_detector`), both less what coming back after a cut-off takes:
    the loop's lag margin (:func:`~truthguard.guard.admission.lag_margin`: on a busy loop a
    cut-off fires late) and the cancelled detector's grace.
    Every guard checks through here, the streaming one sentence by sentence.
    """
    payloads = [payload] * len(detectors) if isinstance(payload, Mapping) else list(payload)
    with inline_check():  # background scoring gives way meanwhile
        return await _run_checks(detectors, payloads, config, timeout, gate)


def _margin(timeout: float | None) -> float:
    """Seconds a check's deadline is brought forward so that its result is back by then.

    After a cut-off two things still happen before the guard has the result: the timer fires
    as late as the loop runs (:func:`~truthguard.guard.admission.lag_margin`, two turns of the
    loop) and the cancelled detector gets :data:`_CANCEL_GRACE` to stop. Both are spent inside
    the deadline, at most :data:`~truthguard.guard.admission.MAX_LAG_CUT` of the check's time.
    """
    if timeout is None:
        return 0.0
    return min(_CANCEL_GRACE + lag_margin(), MAX_LAG_CUT * timeout)


async def _run_checks(
    detectors: Sequence[Runnable[Any, Any]],
    payloads: list[Mapping[str, Any]],
    config: RunnableConfig | None,
    timeout: float | None,
    gate: CheckGate | None,
) -> list[DetectionResult]:
    if timeout is not None and timeout <= 0:  # the run's deadline has passed: no work, no wait
        return [
            DetectionResult.invalid(
                base_detector(d).detector_name,  # type: ignore[union-attr]
                "check timed out after 0s",
                details={"error": "timeout"},
            )
            for d in detectors
        ]
    deadline = None if timeout is None else time.monotonic() + timeout
    if gate is not None:
        # admitted only if it can end by the cut-off it would get (below)
        refusal = await gate.enter(None if deadline is None else deadline - _margin(timeout))
        if refusal is not None:
            return [over_capacity(d, refusal) for d in detectors]
    admitted = time.monotonic()
    held: float | None = None
    try:
        left = None if deadline is None else max(0.0, deadline - admitted)
        if left is not None:  # cut off early enough to be back by the deadline
            left = max(0.0, left - _margin(timeout))
        results = await asyncio.gather(
            *(
                run_detector(d, dict(p), config, timeout=left)
                for d, p in zip(detectors, payloads, strict=True)
            )
        )
        held = time.monotonic() - admitted
    finally:
        if gate is not None:
            gate.leave(held)  # None when cancelled: no estimate from a check cut short
    return list(results)


def deprecated_check_loop(value: CheckLoop) -> CheckLoop:
    """Warn that ``check_loop="truthguard"`` is deprecated and changes nothing.

    It ran checks on truthguard's own loop through the models' sync API. Measured under a
    burst (``truthguard bench guard``), a user's own ``ChatOpenAI`` there decided fewer checks
    in time than on the caller's loop (threads contend for the interpreter with that loop), so
    checks always run on the caller's loop, and ``max_concurrent_checks`` keeps their deadlines.
    """
    if value == "truthguard":
        warnings.warn(
            'check_loop="truthguard" is deprecated and has no effect: checks run on the '
            "caller's event loop; under a burst, max_concurrent_checks keeps each check's "
            "deadline (the checks capacity allows run, the rest are refused as over capacity)",
            DeprecationWarning,
            stacklevel=2,
        )
    return value


class AttemptOptions(Protocol):
    """What :func:`attempt_loop` reads from a LangChain guard (plain or streaming), so this
    module never imports the guards that import it."""

    policies: list[Any]
    max_attempts: int
    chain: Runnable[Any, Any]
    stream_nested: bool
    _n_models: int


def attempt_loop(
    guard: AttemptOptions,
    question: str,
    input: Any,
    run_manager: Any,
    config: RunnableConfig,
    history: Sequence[Any] = (),
) -> AttemptLoop:
    """The attempt loop of one request to a LangChain guard (the plain or the streaming one).

    A policy's own model calls (a query rewriter) are traced under the attempt they produce
    (tag ``guard:attempt:N``, hidden from streaming consumers as that attempt's runs are) and
    counted into its usage.
    """

    def policy_config(number: int, usage: UsageCollector) -> RunnableConfig:
        tag = f"guard:attempt:{number}"
        return attempt_config(
            config, run_manager, tag, stream_nested=guard.stream_nested, extra=[usage]
        )

    return AttemptLoop(
        question=question,
        input=input,
        policies=guard.policies,
        max_attempts=guard.max_attempts,
        chain=guard.chain,
        n_models=guard._n_models,
        policy_config=policy_config,
        history=history,
    )
