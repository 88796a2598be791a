"""The background scorer: a bounded set of pending captures scored on truthguard's event loop.

Every capture gets exactly one record: the first of (its score, its failure, close()'s verdict)
claims it, and later ones are dropped. Checks run on the one long-lived loop that truthguard's
sync entry points use (:mod:`truthguard._sync`), never on a loop of the handler's own: a model
client that binds connections to the loop it first ran on (``ChatOpenAI`` caches one per base
URL) keeps working after a handler is closed, because that loop is never closed.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import concurrent.futures.thread  # its exit hook must be registered before ours (see below)
import contextlib
import contextvars
import functools
import itertools
import logging
import signal
import threading
import time
import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from truthguard import _sync, otel
from truthguard.callbacks._tracker import Capture
from truthguard.callbacks.records import (
    AttemptRecord,
    Failure,
    RecordSink,
    ScoreRecord,
    as_sink,
    failing_claims,
)
from truthguard.detector import BaseDetector
from truthguard.errors import InvalidInputError
from truthguard.guard.admission import behind_inline_checks
from truthguard.guard.extract import check_input
from truthguard.result import DetectionResult

__all__ = ["Scorer"]

logger = logging.getLogger("truthguard.callbacks")

WhenFull = Literal["record", "block"]

EXIT_TIMEOUT = 10.0
"""Seconds the interpreter waits at exit for open handlers' pending captures to be scored."""

_open: weakref.WeakSet[Scorer] = weakref.WeakSet()
_hooks_lock = threading.Lock()
_hooks_installed = False


def _drain_open() -> None:
    """Before threads and executors shut down: let pending captures finish scoring."""
    deadline = time.monotonic() + EXIT_TIMEOUT
    for scorer in list(_open):
        scorer.flush(max(0.0, deadline - time.monotonic()))


def _close_open() -> None:
    """At interpreter exit: record whatever is still pending as failed and close the sinks."""
    for scorer in list(_open):
        with contextlib.suppress(Exception):  # exit must go on; close() logs its own errors
            scorer.close(timeout=1.0)


def _install_exit_hooks() -> None:
    # Not weakref.finalize: its exit hook may run first and stop work that is still pending.
    # threading's exit hooks run before non-daemon threads are joined and, registered after
    # concurrent.futures', before executors refuse new work (checks use asyncio.to_thread).
    global _hooks_installed
    with _hooks_lock:
        if _hooks_installed:
            return
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            with contextlib.suppress(RuntimeError):  # already shutting down
                register(_drain_open)
        atexit.register(_close_open)
        _install_sigterm_exit()
        _hooks_installed = True


def _install_sigterm_exit() -> None:
    """A SIGTERM kills a process without its exit hooks; where the application left SIGTERM at
    its default, make it a normal exit (``SystemExit``, status 143) so pending captures are
    scored or recorded before the process ends. An application's own handler is left alone."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread
    with contextlib.suppress(ValueError, OSError, AttributeError):
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _exit_on_sigterm)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
    raise SystemExit(128 + signum)


def _is_outage(result: DetectionResult) -> bool:
    """The checker gave no verdict: a failed model call, or a reply that was empty or could
    not be parsed (the guards' "unavailable"). Either way nothing was judged."""
    return result.is_invalid


class Scorer:
    """Scores captures in the background and writes one record per capture to the sinks.

    At most ``max_pending`` captures wait or run at once. When that many are pending, a new
    capture is written straight away as a ``failed`` record with failure ``"queue_full"``
    (``when_full="record"``, the default: the chain is never slowed and nothing vanishes), or the
    caller waits for room (``when_full="block"``; a capture submitted from truthguard's own loop
    thread cannot wait for that loop and is recorded ``queue_full`` instead).

    A check that outlives ``timeout`` is recorded ``failed`` with failure ``"timeout"`` at its
    deadline and cancelled; it keeps its concurrency slot until it has actually stopped.

    The guards' in-line checks come first: a background check starts only when no guard of this
    process has a check queued or running (it waits for a lull within its ``timeout``, and is
    recorded ``timeout``, "deferred behind the guards' in-line checks", when none comes).
    """

    def __init__(
        self,
        detector: BaseDetector,
        sinks: Sequence[RecordSink],
        *,
        max_pending: int,
        concurrency: int,
        when_full: WhenFull,
        timeout: float | None,
        recheck: bool = False,
    ) -> None:
        self.detector = detector
        self.recheck = recheck
        self.sinks = list(sinks)
        self.when_full = when_full
        self.timeout = timeout
        self.concurrency = concurrency
        self._slots = threading.BoundedSemaphore(max_pending)
        self._cond = threading.Condition()
        self._unrecorded: dict[int, Capture] = {}  # submitted, no record written yet
        self._writing = 0  # records claimed but still being written to the sinks
        self._running: set[concurrent.futures.Future[Any]] = set()
        self._seq = itertools.count()
        self._closed = False
        self._finished = False  # the sinks are closed: nothing more is recorded
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None
        self._stats_lock = threading.Lock()
        self._labels: Counter[str] = Counter()
        self._scores: list[float] = []
        self._passed = 0
        self._with_verdict = 0
        self._failed: Counter[str] = Counter()
        self._written = 0
        self.sink_errors = 0
        _install_exit_hooks()
        _open.add(self)  # pending work holds a reference, so a dropped handler is still drained

    @classmethod
    def from_options(
        cls,
        detector: Any,
        sinks: Sequence[Any] | Any,
        *,
        max_queue: int,
        concurrency: int,
        when_full: WhenFull,
        timeout: float | None,
        recheck: bool = False,
    ) -> Scorer:
        """A scorer from a handler's user-facing options, each checked and named in the error.

        ``sinks`` may be one sink or a list of them, each anything :func:`as_sink` takes (a
        path, a logger, a callable, a sink). The LangChain handlers and the LlamaIndex event
        handler both build their scorer here.
        """
        if not isinstance(detector, BaseDetector):
            raise InvalidInputError(
                "detector", f"expected a truthguard detector, got {type(detector).__name__}"
            )
        for name, value in (("max_queue", max_queue), ("concurrency", concurrency)):
            # bool is an int, NaN compares false with everything, '10' is no number: all refused.
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInputError(
                    name, f"expected a whole number of at least 1, got {value!r}"
                )
        if when_full not in ("record", "block"):
            raise InvalidInputError("when_full", "expected 'record' or 'block'")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise InvalidInputError(
                "timeout", f"expected a positive number of seconds or None, got {timeout!r}"
            )
        if sinks is None:
            sinks = []
        elif not isinstance(sinks, list | tuple):
            sinks = [sinks]
        return cls(
            detector,
            [as_sink(s) for s in sinks],
            max_pending=max_queue,
            concurrency=concurrency,
            when_full=when_full,
            timeout=timeout,
            recheck=bool(recheck),
        )

    # -- submission -----------------------------------------------------------------------------

    def submit(self, capture: Capture) -> None:
        """Queue a capture (never raises; a capture that cannot be queued is recorded failed)."""
        if self._closed:
            self._write(self._failed_record(capture, "handler closed", "closed"))
            return
        attempt = capture.guard_attempt
        if attempt is not None and attempt.verdict is not None and not self.recheck:
            # A guard already checked this answer: record its verdict, never check it twice.
            record = self._guard_record(capture, attempt)
            otel.emit_record(record, span_context=capture.span_context)
            self._write(record)
            return
        loop = _sync._portal_loop()
        # Waiting for room on the loop's own thread would wait for that very thread: deadlock.
        block = self.when_full == "block" and _running_loop() is not loop
        if not self._slots.acquire(blocking=block):
            self._write(self._failed_record(capture, "queue full", "queue_full"))
            return
        with self._cond:  # close() sets _closed under this lock: no task after its flush
            closed = self._closed
            if not closed:
                seq = next(self._seq)
                self._unrecorded[seq] = capture
                # A fresh context: the check must not inherit the observed chain's run config
                # (its callbacks and tracers), or it would show up as a child of that chain.
                fut = contextvars.Context().run(
                    asyncio.run_coroutine_threadsafe, self._score(seq, capture), loop
                )
                self._running.add(fut)
        if closed:
            self._slots.release()
            self._write(self._failed_record(capture, "handler closed", "closed"))
            return
        fut.add_done_callback(functools.partial(self._done, seq))

    def _done(self, seq: int, fut: concurrent.futures.Future[Any]) -> None:
        if fut.cancelled():
            self._record_once(seq, "not scored before close", "closed")
        elif (e := fut.exception()) is not None:
            self._record_once(seq, f"{type(e).__name__}: {e}", "error")
        with self._cond:
            self._running.discard(fut)
            self._cond.notify_all()
        self._slots.release()

    def _claim(self, seq: int) -> Capture | None:
        """The capture, if nothing recorded it yet; the caller must then write its record."""
        with self._cond:
            capture = self._unrecorded.pop(seq, None)
            if capture is not None:
                self._writing += 1
            return capture

    def _release_claim(self) -> None:
        with self._cond:
            self._writing -= 1
            self._cond.notify_all()

    def _record_once(
        self,
        seq: int,
        error: str | None = None,
        failure: Failure | None = None,
        *,
        result: DetectionResult | None = None,
        seconds: float | None = None,
    ) -> None:
        capture = self._claim(seq)
        if capture is None:
            return
        try:
            if result is not None:
                record = self._result_record(capture, result, seconds or 0.0)
            else:
                record = self._failed_record(capture, error or "unknown", failure or "error")
        except Exception as e:  # building the record failed: still one record for the capture
            record = self._failed_record(capture, f"{type(e).__name__}: {e}", "error")
        try:
            otel.emit_record(record, span_context=capture.span_context)
            self._write(record)
        finally:
            self._release_claim()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._unrecorded)

    # -- scoring --------------------------------------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:  # the portal loop may be replaced
            self._sem, self._sem_loop = asyncio.Semaphore(self.concurrency), loop
        return self._sem

    async def _score(self, seq: int, capture: Capture) -> None:
        async with self._semaphore():
            started = time.perf_counter()
            # the guards' in-line checks first: this one starts in a lull, or is shed
            deferred = await behind_inline_checks(self.timeout)
            if deferred is None:
                self._record_once(
                    seq,
                    f"timeout: deferred behind the guards' in-line checks for {self.timeout}s",
                    "timeout",
                )
                return
            left = None if self.timeout is None else max(0.0, self.timeout - deferred)
            payload = check_input(
                capture.question, capture.answer, capture.contexts, capture.history
            )
            payload.update(capture.extra)
            check = asyncio.ensure_future(self.detector.ainvoke(payload))
            check.add_done_callback(_retrieve)
            try:
                # Not wait_for: it waits for a check that ignores its cancellation to finish.
                done, _ = await asyncio.wait({check}, timeout=left)
            except asyncio.CancelledError:  # close() gave up on us
                check.cancel()
                raise
            if not done:
                check.cancel()
                self._record_once(seq, f"timeout: no result within {self.timeout}s", "timeout")
                await asyncio.wait({check})  # hold the concurrency slot until it has stopped
                return
            seconds = time.perf_counter() - started
            if check.cancelled():
                self._record_once(seq, "the check was cancelled", "error")
            elif (e := check.exception()) is not None:
                self._record_once(seq, f"{type(e).__name__}: {e}", "error")
            else:
                self._record_once(seq, result=check.result(), seconds=seconds)

    def _base(self, capture: Capture) -> dict[str, Any]:
        return {
            "run_id": str(capture.run_id),
            "parent_run_id": str(capture.parent_run_id) if capture.parent_run_id else None,
            "question": capture.question,
            "answer": capture.answer,
            "contexts": capture.contexts,
            "detector": self.detector.detector_name,
            "tags": capture.tags,
            "metadata": capture.metadata,
            "captured_at": capture.captured_at,
        }

    def _failed_record(self, capture: Capture, error: str, failure: Failure) -> ScoreRecord:
        return ScoreRecord(
            status="failed",
            failure=failure,
            error=error,
            scored_at=time.time(),
            **self._base(capture),
        )

    def _result_record(self, capture: Capture, r: DetectionResult, seconds: float) -> ScoreRecord:
        if _is_outage(r):  # the detector could not judge: a failure, not a verdict
            return ScoreRecord(
                status="failed",
                failure="outage",
                label=r.label.value,
                explanation=r.explanation,
                error=f"checker unavailable: {r.invalid_reason}",
                raw_output=r.raw_output,
                usage=r.usage.model_dump(),
                scored_at=time.time(),
                score_seconds=seconds,
                **self._base(capture),
            )
        return self._scored_record(capture, r, seconds)

    def _guard_record(self, capture: Capture, attempt: Any) -> ScoreRecord:
        """The record of an answer a guard checked: its verdict, no new check.

        ``score`` is the verdict's mean normalised score and ``passing`` whether the guard let
        the answer through; the label is the one detector's label (or, with several, factual
        when the verdict passed). A verdict no checker could give (every result an outage) is a
        failed record, as it would be for the handler's own check; a check the guard refused
        over capacity is one with failure ``"over_capacity"`` and the refusal as its error.
        """
        verdict, results = attempt.verdict, list(attempt.results)
        base = self._base(capture)
        # one name per detector: a streaming guard's attempt has a result per sentence
        names = list(dict.fromkeys(r.detector for r in results)) or list(verdict.passes)
        base["detector"] = "+".join(names) or base["detector"]
        base["metadata"] = {
            **base["metadata"],
            "truthguard_source": "guard",
            "guard_status": capture.guard_status,
            "guard_attempt": attempt.number,
        }
        if capture.guard_released is not None:
            base["metadata"]["guard_released"] = capture.guard_released
        base["attempts"] = _attempt_records(capture.guard_attempts or [attempt], capture)
        base["reason"] = _attempt_reason(attempt)
        base["claims"] = _attempt_claims(attempt)
        usage = attempt.check_usage.model_dump()
        failure: Failure | None = None
        if verdict.over_capacity:  # refused before any detector ran: the refusal says why
            failure = "over_capacity"
            error = next((r.invalid_reason for r in results if r.invalid_reason), None)
            error = error or next(iter(verdict.errors.values()), "over capacity")
        elif not results and "chain" in verdict.errors:  # the chain gave nothing to check
            failure = "error"
            error = verdict.reason
        elif results and all(_is_outage(r) for r in results):
            failure = "outage"
            error = "checker unavailable: " + "; ".join(
                r.invalid_reason or r.explanation for r in results
            )
        if failure is not None:
            return ScoreRecord(
                status="failed",
                failure=failure,
                label="invalid",
                explanation=verdict.reason,
                error=error,
                usage=usage,
                scored_at=time.time(),
                score_seconds=attempt.check_usage.wall_seconds,
                **base,
            )
        if len(results) == 1:
            label = results[0].label.value
        elif not results and verdict.errors and not any(verdict.passes.values()):
            label = "invalid" if verdict.score is None else "hallucinated"
        else:
            label = "factual" if verdict.passing else "hallucinated"
        return ScoreRecord(
            status="scored",
            score=verdict.score,
            passing=verdict.passing,
            label=label,
            explanation=verdict.reason,
            usage=usage,
            scored_at=time.time(),
            score_seconds=attempt.check_usage.wall_seconds,
            **base,
        )

    def _scored_record(self, capture: Capture, r: DetectionResult, seconds: float) -> ScoreRecord:
        return ScoreRecord(
            status="scored",
            score=r.score,
            passing=r.passing,
            label=r.label.value,
            explanation=r.explanation,
            decided_by=d if isinstance(d := r.details.get("decided_by"), str) else None,
            error=r.invalid_reason,
            usage=r.usage.model_dump(),
            scored_at=time.time(),
            score_seconds=seconds,
            claims=failing_claims(r, capture.answer) if r.passing is False else [],
            **self._base(capture),
        )

    def _write(self, record: ScoreRecord) -> None:
        with self._stats_lock:
            self._written += 1
            if record.status == "failed":
                self._failed[record.failure or "error"] += 1
            else:
                self._labels[record.label or "unknown"] += 1
                if record.score is not None:
                    self._scores.append(record.score)
                if record.passing is not None:
                    self._with_verdict += 1
                    self._passed += int(record.passing)
        for sink in self.sinks:
            try:
                sink.write(record)
            except Exception:  # one broken sink must not stop the others
                with self._stats_lock:
                    self.sink_errors += 1
                logger.exception("truthguard: sink %r failed to write a record", sink)

    # -- lifecycle ------------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted capture has its record; False on time-out."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._unrecorded or self._writing:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Flush up to ``timeout``; record what is still pending as failed; close the sinks.

        Returns within about ``timeout`` even when a check blocks the loop: the failed records
        are written from the calling thread, and the stuck checks are only asked to stop. An
        interrupted close (a SIGTERM made ``SystemExit``, Ctrl-C) still records every pending
        capture as failed before the interruption goes on, and the scorer stays in the exit
        hooks until its sinks are closed, so no capture goes without a record.
        """
        with self._cond:
            # Closed before flushing: a capture arriving from now on is recorded as failed
            # instead of being queued.
            self._closed = True
            if self._finished:
                return True
        error = "close interrupted before it was scored"
        try:
            drained = self.flush(timeout)
            error = "not scored before close"
        finally:
            self._finish(error)
        return drained

    def _finish(self, error: str) -> None:
        """Record what is still pending as failed (``closed``), stop the running checks, close
        the sinks; once."""
        with self._cond:
            if self._finished:
                return
            left = list(self._unrecorded)
        for seq in left:
            self._record_once(seq, error, "closed")
        with self._cond:
            running = list(self._running)
        for fut in running:  # asks the loop to cancel the task; does not wait for it
            fut.cancel()
        with self._cond:  # a record the loop claimed just before may still be being written
            self._cond.wait_for(lambda: not self._writing, timeout=1.0)
            if self._finished:
                return
            self._finished = True
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                logger.exception("truthguard: sink %r failed to close", sink)
        _open.discard(self)

    def summary(self) -> dict[str, Any]:
        with self._stats_lock:
            scores = np.asarray(self._scores, dtype=float)
            failed = sum(self._failed.values())
            dist = (
                {
                    "min": float(scores.min()),
                    "p25": float(np.percentile(scores, 25)),
                    "median": float(np.median(scores)),
                    "p75": float(np.percentile(scores, 75)),
                    "max": float(scores.max()),
                    "mean": float(scores.mean()),
                }
                if scores.size
                else None
            )
            return {
                "count": self._written,
                "scored": self._written - failed,
                "failed": failed,
                "failures": dict(self._failed),
                "labels": dict(self._labels),
                "passed": self._passed,
                "pass_rate": self._passed / self._with_verdict if self._with_verdict else None,
                "scores": dist,
                "pending": self.pending,
                "sink_errors": self.sink_errors,
            }


def _attempt_claims(attempt: Any) -> list[Any]:
    """The failing claims of an attempt's answer, over every detector (and streamed sentence)
    that did not pass it."""
    if attempt.passing:
        return []
    return [
        claim
        for r in attempt.results
        if r.passing is False
        for claim in failing_claims(r, attempt.answer)
    ]


def _attempt_reason(attempt: Any) -> str:
    """Why an attempt ended as it did: the verdict's reason, then what each failing detector
    said of the answer; the chain's error when it gave no answer to check."""
    if attempt.verdict is None:
        if attempt.error:
            return f"no answer was checked: {attempt.error}"
        return "released unchecked" if attempt.answer is not None else "no answer"
    parts = [attempt.verdict.reason]
    if not attempt.verdict.passing:
        parts += [r.explanation for r in attempt.results if r.passing is False and r.explanation]
    return "; ".join(p for p in parts if p) or ("passed" if attempt.passing else "failed")


_ENDINGS = {"fallback": "fallback", "filtered": "filter", "rejected": "rejected"}


def _attempt_records(attempts: list[Any], capture: Capture) -> list[AttemptRecord]:
    """Every attempt of a guarded run, each with what the guard did after it."""
    out = []
    for i, a in enumerate(attempts):
        if i + 1 < len(attempts):
            followed_by = attempts[i + 1].policy
        elif (a.verdict is not None and a.passing) or (a.verdict is None and a.policy):
            followed_by = None  # released: passed, or the fallback's own text
        else:  # the last answer was refused (or unchecked): the guard's ending followed it
            followed_by = _ENDINGS.get(capture.guard_status or "")
        out.append(
            AttemptRecord(
                number=a.number,
                policy=a.policy,
                followed_by=followed_by,
                answer=a.answer,
                passing=None if a.verdict is None else a.passing,
                reason=_attempt_reason(a),
                claims=_attempt_claims(a),
            )
        )
    return out


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a finished check's exception as seen (it was recorded, or its record was taken)."""
    if not task.cancelled():
        task.exception()
