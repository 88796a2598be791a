""":class:`LLMSession`: the bounded, retried, timed-out and counted model calls of one check.

A :class:`LLMSession` runs the model calls of one check: it bounds how many run at once, retries
with exponential back-off, applies a per-call timeout, and records tokens and latency for the
check's :class:`~truthguard.result.Usage`. Any LangChain ``BaseChatModel`` works, and so does any
``Runnable`` that maps a string to a string (or to a message).

Rate limiting belongs to the model: pass ``rate_limiter=InMemoryRateLimiter(...)`` to your chat
model and every call truthguard makes goes through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

from truthguard import _sync
from truthguard.errors import (
    InvalidInputError,
    InvalidLLMOutput,
    LLMCallError,
    MissingRecordingError,
)
from truthguard.llm.identity import as_runnable, model_id
from truthguard.llm.messages import IncompleteReply, Prompt, cut_short, output_text, prompt_text
from truthguard.llm.retries import (
    CallPlan,
    call_plan,
    retry_delay,
    retryable,
    sdk_root,
    with_timeout,
)
from truthguard.llm.settings import LLMSettings
from truthguard.llm.streaming import reply_so_far, stream_async, stream_sync, streams_like_invoke
from truthguard.llm.tokens import UsageTap, count_tokens, with_tap
from truthguard.result import Usage

__all__ = ["CallRecord", "LLMSession"]

T = TypeVar("T")
logger = logging.getLogger("truthguard.llm")  # the package's name, as before the split


@dataclass
class CallRecord:
    """One model call as the session saw it."""

    stage: str
    model: str
    seconds: float
    """Time the call's attempts took (waiting for a concurrency slot excluded)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    attempts: int = 1
    error: str | None = None
    wait_seconds: float = 0.0
    """Time spent waiting for a concurrency slot."""


def _retryable(exc: BaseException, retry_on: tuple[type[BaseException], ...]) -> bool:
    # A missing recording, bad input or a reply that is not text fails the same way every time.
    if not isinstance(exc, Exception) or isinstance(
        exc, MissingRecordingError | InvalidInputError | InvalidLLMOutput
    ):
        return False
    return isinstance(exc, _TimedOut | IncompleteReply) or retryable(exc, retry_on)


def _has_sync_path(runnable: Runnable[Any, Any]) -> bool:
    # A RunnableLambda over an async function has no sync invoke.
    return not (isinstance(runnable, RunnableLambda) and getattr(runnable, "func", None) is None)


class LLMSession:
    """The model calls of one check: bounded concurrency, retries, time-outs, accounting.

    Cancellation is never retried: cancelling a check (``asyncio.wait_for``, a guard's time-out)
    cancels its calls in flight at once. On truthguard's own loops (sync entry points) model calls
    run through the model's sync API on worker threads; a cancelled one is abandoned there and
    ends with the client's own time-out, without a retry (the session owns the retries, see
    :mod:`truthguard.llm.retries`).

    Example:
        >>> session = LLMSession(LLMSettings(max_concurrency=4))
        >>> # answers = await session.gather(session.acall(model, p, stage="x") for p in prompts)
    """

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        config: RunnableConfig | None = None,
        token_encoding: str = "cl100k_base",
        defer_writes: bool = False,
    ) -> None:
        self.settings = settings or LLMSettings()
        self.defer_writes = defer_writes
        """Whether store writes may finish after the call that produced them returns (the
        session's owner then awaits :meth:`drain` before the check ends)."""
        self._deferred: list[asyncio.Task[Any]] = []
        self.config: RunnableConfig = config or {}
        self.token_encoding = token_encoding
        self.records: list[CallRecord] = []
        self.cache_hits: int = 0
        self._semaphore: asyncio.Semaphore | None = None
        self._started = time.perf_counter()
        total = self.settings.total_timeout
        self._deadline = None if total is None else time.monotonic() + total

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:  # created lazily, inside the running loop
            self._semaphore = asyncio.Semaphore(self.settings.max_concurrency)
        return self._semaphore

    def defer(self, aw: Awaitable[Any]) -> None:
        """Run ``aw`` in the background; :meth:`drain` waits for it (used for store writes, so
        the check goes on with a model's answer while the answer is being stored)."""
        self._deferred.append(asyncio.ensure_future(aw))

    async def drain(self) -> None:
        """Wait for every deferred write. A failed write is logged, never raised: the answer it
        was storing has been used already, and a later check will simply ask again."""
        while self._deferred:
            tasks, self._deferred = self._deferred, []
            try:
                outcomes = await asyncio.gather(*tasks, return_exceptions=True)
            except asyncio.CancelledError:
                for t in tasks:
                    t.cancel()
                raise
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    logger.warning("could not store a model answer: %s", outcome)

    def abandon(self) -> None:
        """Cancel the deferred writes (the check is being torn down; a write already running
        on a worker thread still lands)."""
        tasks, self._deferred = self._deferred, []
        for t in tasks:
            t.cancel()

    def record_cache_hit(self, n: int = 1) -> None:
        """Count artifacts served from the store instead of a model call."""
        self.cache_hits += n

    def _budget(self) -> asyncio.Timeout | None:
        if self._deadline is None:
            return None
        return asyncio.timeout(max(0.0, self._deadline - time.monotonic()))

    async def _invoke(
        self,
        runnable: Runnable[Any, Any],
        prompt: Prompt,
        config: Any,
        on_text: Callable[[str], None] | None = None,
        partial: list[Any] | None = None,
    ) -> Any:
        stream = on_text is not None and streams_like_invoke(runnable)
        if _sync.on_private_loop() and _has_sync_path(runnable):
            # Keep the user's async clients off truthguard's loops (see truthguard._sync).
            loop = asyncio.get_running_loop()
            ctx = contextvars.copy_context()
            left = _sync.time_left()
            if left is not None and sdk_root(runnable) is not None:
                # the OpenAI SDK's per-request time-out: an abandoned call ends with its check
                runnable = with_timeout(runnable, left)
            if stream:
                fn: Any = functools.partial(stream_sync, runnable, prompt, config, on_text, partial)
            else:
                fn = functools.partial(runnable.invoke, prompt, config)
            pool = _sync.call_executor(self.settings.max_concurrency)
            return await loop.run_in_executor(pool, functools.partial(ctx.run, fn))
        if stream:
            return await stream_async(runnable, prompt, config, on_text, partial)
        return await runnable.ainvoke(prompt, config=config)

    async def acall(
        self,
        model: Any,
        prompt: Prompt,
        *,
        stage: str,
        metadata: Mapping[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> str:
        """Call ``model`` once (with retries) and return its text.

        Args:
            model: A chat model, Runnable or callable.
            prompt: A string or a list of messages.
            stage: Name of the detector stage, recorded and put in the run's metadata.
            metadata: Extra run metadata (replay models key recordings on it).
            on_text: Called with the reply so far as it streams in, so work on its first
                parts overlaps the rest of the generation. Only chat models that stream
                exactly what ``invoke`` would return are streamed (see
                :func:`streams_like_invoke`); others are invoked as usual and ``on_text`` is
                not called. It may be called from a worker thread, and again from the start
                when an attempt is retried, so it must be thread-safe and idempotent.

        Raises:
            LLMCallError: Every attempt failed or timed out, or the check's ``total_timeout``
                ran out.
            InvalidLLMOutput: The model returned something that is not text.
            MissingRecordingError: A replay model has no recording for this call.
            asyncio.CancelledError: The check was cancelled (never retried).
        """
        plan = call_plan(as_runnable(model), self.settings.max_retries, self.settings.timeout)
        name = model_id(model)
        config: RunnableConfig = {
            **self.config,
            "run_name": f"truthguard:{stage}",
            "tags": [*self.config.get("tags", []), f"truthguard:{stage}"],
            "metadata": {
                **self.config.get("metadata", {}),
                "truthguard_stage": stage,
                **(metadata or {}),
            },
        }
        settings = self.settings
        record = CallRecord(stage, name, 0.0, attempts=0)
        queued = time.perf_counter()
        started = queued
        budget = self._budget()
        try:
            async with budget or contextlib.nullcontext(), self.semaphore:
                if any(h.is_set() for h in _HALT.get()):  # a sibling failed: do not start
                    raise asyncio.CancelledError()
                started = time.perf_counter()
                record.wait_seconds = started - queued
                text = await self._attempts(plan, prompt, config, record, on_text)
        except MissingRecordingError:  # no call was made: nothing to record
            raise
        except InvalidLLMOutput as e:
            self._close(record, started, f"invalid output: {e}")
            raise
        except asyncio.CancelledError:
            self._close(record, started, "cancelled")
            raise
        except Exception as e:
            if budget is not None and budget.expired():
                reason = f"timed out (total_timeout={settings.total_timeout}s)"
            elif isinstance(e, _TimedOut):
                reason = f"timed out (timeout={settings.timeout}s)"
            else:
                reason = f"{type(e).__name__}: {e}"
            self._close(record, started, reason)
            cause = e.__cause__ if isinstance(e, _TimedOut) else e
            raise LLMCallError(stage, reason, attempts=record.attempts) from cause
        self._close(record, started, None)
        return text

    def _close(self, record: CallRecord, started: float, error: str | None) -> None:
        record.seconds = time.perf_counter() - started
        record.error = error
        self.records.append(record)

    async def _attempts(
        self,
        plan: CallPlan,
        prompt: Prompt,
        config: RunnableConfig,
        record: CallRecord,
        on_text: Callable[[str], None] | None = None,
    ) -> str:
        settings = self.settings
        runnable = plan.runnable
        while True:
            record.attempts += 1
            tap = UsageTap()
            output: Any = None
            partial: list[Any] = []  # what a stream delivered before it failed (paid for)
            try:
                try:
                    async with asyncio.timeout(settings.timeout):
                        output = await self._invoke(
                            runnable, prompt, with_tap(config, tap), on_text, partial
                        )
                except TimeoutError as e:
                    raise _TimedOut() from e
                text = output_text(output, record.stage)
                if cut_short(output):
                    raise IncompleteReply("the reply ended without a finish reason (a cut stream)")
                self._count(record, prompt, tap, output, text)
                return text
            except Exception as e:
                # Whatever the model did send is paid for, kept or not.
                self._count(record, prompt, tap, reply_so_far(output, partial), None)
                if record.attempts > plan.retries or not _retryable(e, plan.retry_on):
                    raise
                failure = e
            except asyncio.CancelledError:
                self._count(record, prompt, tap, reply_so_far(output, partial), None)
                raise
            first = settings.backoff_initial
            backoff = min(settings.backoff_max, first * 2 ** (record.attempts - 1))
            await asyncio.sleep(retry_delay(failure, backoff + random.uniform(0, first)))

    def _count(
        self,
        record: CallRecord,
        prompt: Prompt,
        tap: UsageTap,
        output: Any,
        text: str | None,
    ) -> None:
        """Add one attempt's tokens: as the model reported them, else counted with tiktoken."""
        replies = list(tap.replies)
        if not replies:
            if output is None:
                return  # nothing came back
            if text is None:
                try:
                    text = output_text(output, record.stage)
                except InvalidLLMOutput:
                    return  # not a reply we can count
            replies = [(getattr(output, "usage_metadata", None), text)]
        for usage, reply in replies:
            if usage and (usage.get("input_tokens") or usage.get("output_tokens")):
                record.prompt_tokens += int(usage.get("input_tokens", 0))
                record.completion_tokens += int(usage.get("output_tokens", 0))
            else:
                record.prompt_tokens += count_tokens(prompt_text(prompt), self.token_encoding)
                record.completion_tokens += count_tokens(reply, self.token_encoding)
                record.estimated = True

    async def gather(self, aws: Iterable[Awaitable[T]]) -> list[T]:
        """Await several calls concurrently (the session's semaphore bounds them).

        Results come back in input order. When one fails, the others are cancelled (a check
        that is already invalid should not keep spending tokens), every one of them is awaited
        (so no exception goes unretrieved), and the first error in input order is raised. When
        ``gather`` itself is cancelled, so are all the calls.
        """
        halt = asyncio.Event()
        tasks = [asyncio.ensure_future(_halting(aw, halt)) for aw in aws]
        if not tasks:
            return []
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        except BaseException:  # we were cancelled ourselves: take the calls down with us
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        pending = [t for t in tasks if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        first: BaseException | None = None
        for t in tasks:  # retrieve every outcome; raise the first failure in input order
            if t.cancelled():
                continue
            exc = t.exception()
            if exc is not None and first is None:
                first = exc
        if first is not None:
            raise first
        if any(t.cancelled() for t in tasks):  # cancelled from elsewhere, nothing failed
            raise asyncio.CancelledError()
        return [t.result() for t in tasks]

    def usage(self) -> Usage:
        """Usage of everything this session did so far.

        Tokens include replies that were discarded (a retried cut-off stream) or that came with
        a failed call, since they are paid for. ``llm_seconds`` leaves out time spent waiting for
        a concurrency slot (see ``CallRecord.wait_seconds``).
        """
        ok = [r for r in self.records if r.error is None]
        return Usage(
            llm_calls=len(self.records),
            failed_calls=len(self.records) - len(ok),
            cached_calls=self.cache_hits,
            prompt_tokens=sum(r.prompt_tokens for r in self.records),
            completion_tokens=sum(r.completion_tokens for r in self.records),
            estimated_tokens=any(r.estimated for r in self.records),
            llm_seconds=sum(r.seconds for r in self.records),
            wall_seconds=time.perf_counter() - self._started,
        )


# Set inside the tasks of one gather(): once one of them fails, calls still waiting for a slot
# must not start (they would run before gather() gets to cancel them).
# Nested gathers (FEWL's neighbour branch gathers inside the check's gather) stack their
# events, so a failure anywhere above also stops calls queued in an inner gather.
_HALT: contextvars.ContextVar[tuple[asyncio.Event, ...]] = contextvars.ContextVar(
    "truthguard_gather_halt", default=()
)


async def _halting(aw: Awaitable[T], halt: asyncio.Event) -> T:
    _HALT.set((*_HALT.get(), halt))  # this task's own context: seen by the acall below
    try:
        return await aw
    except Exception:
        halt.set()
        raise


class _TimedOut(Exception):
    """One attempt ran past ``LLMSettings.timeout`` (retryable, unlike the total budget)."""
