"""The background scorer: a bounded set of pending captures scored on a private event loop."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import logging
import threading
import time
import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from truthguard.callbacks._tracker import Capture
from truthguard.callbacks.records import RecordSink, ScoreRecord
from truthguard.detector import BaseDetector
from truthguard.result import DetectionResult

__all__ = ["Scorer"]

logger = logging.getLogger("truthguard.callbacks")

WhenFull = Literal["record", "block"]


def _close_at_exit(ref: weakref.ref[Scorer]) -> None:
    scorer = ref()
    if scorer is not None:
        scorer.close(timeout=10.0)


def _stop_loop(loop: asyncio.AbstractEventLoop) -> None:
    with contextlib.suppress(RuntimeError):  # already closed by close()
        loop.call_soon_threadsafe(loop.stop)


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class Scorer:
    """Scores captures in the background and writes one record per capture to the sinks.

    At most ``max_pending`` captures wait or run at once. When that many are pending, a new
    capture is written straight away as a ``failed`` record with error ``"queue full"``
    (``when_full="record"``, the default: the chain is never slowed and nothing vanishes), or the
    caller waits for room (``when_full="block"``).
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
    ) -> None:
        self.detector = detector
        self.sinks = list(sinks)
        self.when_full = when_full
        self.timeout = timeout
        self.concurrency = concurrency
        self._slots = threading.BoundedSemaphore(max_pending)
        self._cond = threading.Condition()
        self._pending: dict[concurrent.futures.Future[Any], Capture] = {}
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="truthguard-scorer", daemon=True
        )
        self._thread.start()
        self._sem: asyncio.Semaphore | None = None
        self._stats_lock = threading.Lock()
        self._labels: Counter[str] = Counter()
        self._scores: list[float] = []
        self._passed = 0
        self._with_verdict = 0
        self._failed: Counter[str] = Counter()
        self._written = 0
        self.sink_errors = 0
        # A handler that is never closed still gets its pending captures recorded at exit.
        ref = weakref.ref(self)
        atexit.register(_close_at_exit, ref)
        # A handler dropped without close() has nothing pending (pending work holds a reference
        # to it): stop its loop so its thread does not outlive it.
        weakref.finalize(self, _stop_loop, self._loop)

    # -- submission -----------------------------------------------------------------------------

    def submit(self, capture: Capture) -> None:
        """Queue a capture (never raises; a capture that cannot be queued is recorded failed)."""
        if self._closed:
            self._write(self._failed_record(capture, "handler closed"))
            return
        if not self._slots.acquire(blocking=self.when_full == "block"):
            self._write(self._failed_record(capture, "queue full"))
            return
        with self._cond:  # close() sets _closed under this lock: no task after its flush
            closed = self._closed
            if not closed:
                # A fresh context: the check must not inherit the observed chain's run config
                # (its callbacks and tracers), or it would show up as a child of that chain.
                fut = contextvars.Context().run(
                    asyncio.run_coroutine_threadsafe, self._score(capture), self._loop
                )
                self._pending[fut] = capture
        if closed:
            self._slots.release()
            self._write(self._failed_record(capture, "handler closed"))
            return
        fut.add_done_callback(self._done)

    def _done(self, fut: concurrent.futures.Future[Any]) -> None:
        with self._cond:
            capture = self._pending.get(fut)
        if capture is not None:  # written before flush() can return
            if fut.cancelled():
                self._write(self._failed_record(capture, "not scored before close"))
            elif (e := fut.exception()) is not None:
                self._write(self._failed_record(capture, f"{type(e).__name__}: {e}"))
        with self._cond:
            self._pending.pop(fut, None)
            self._cond.notify_all()
        self._slots.release()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    # -- scoring --------------------------------------------------------------------------------

    async def _score(self, capture: Capture) -> None:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.concurrency)
        async with self._sem:
            started = time.perf_counter()
            payload = {
                "question": capture.question,
                "answer": capture.answer,
                "contexts": capture.contexts,
                **capture.extra,
            }
            try:
                result = await asyncio.wait_for(self.detector.ainvoke(payload), self.timeout)
            except TimeoutError:
                record = self._failed_record(capture, f"detector timed out after {self.timeout}s")
            except Exception as e:
                record = self._failed_record(capture, f"{type(e).__name__}: {e}")
            else:
                record = self._scored_record(capture, result, time.perf_counter() - started)
        self._write(record)

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

    def _failed_record(self, capture: Capture, error: str) -> ScoreRecord:
        return ScoreRecord(
            status="failed", error=error, scored_at=time.time(), **self._base(capture)
        )

    def _scored_record(self, capture: Capture, r: DetectionResult, seconds: float) -> ScoreRecord:
        return ScoreRecord(
            status="scored",
            score=r.score,
            passing=r.passing,
            label=r.label.value,
            explanation=r.explanation,
            error=r.invalid_reason,
            usage=r.usage.model_dump(),
            scored_at=time.time(),
            score_seconds=seconds,
            **self._base(capture),
        )

    def _write(self, record: ScoreRecord) -> None:
        with self._stats_lock:
            self._written += 1
            if record.status == "failed":
                self._failed[record.error or "unknown"] += 1
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
            while self._pending:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Flush, cancel what is still pending after ``timeout`` (recorded failed), close sinks."""
        with self._cond:
            if self._closed:
                return True
            # Closed before flushing: a capture arriving from now on is recorded as failed
            # instead of being queued on a loop that is about to stop.
            self._closed = True
        drained = self.flush(timeout)
        if not drained:  # cancel inside the loop so every task unwinds before it stops
            asyncio.run_coroutine_threadsafe(_cancel_all(), self._loop).result(timeout=10.0)
            self.flush(5.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5.0)
        if not self._thread.is_alive():
            self._loop.close()
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                logger.exception("truthguard: sink %r failed to close", sink)
        return drained

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
