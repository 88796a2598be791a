"""LLM usage of one guarded attempt, read from LlamaIndex's LLM instrumentation events.

The guarded engine sets a collector in a context variable around each call of the wrapped
engine; the events of LLM calls made in that context (threads and tasks copy it) add to it.
An LLM call inside another (``chat`` implemented with ``complete``) is counted once.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatStartEvent,
    LLMCompletionEndEvent,
    LLMCompletionStartEvent,
)

from truthguard.llm import count_tokens
from truthguard.result import Usage
from truthguard_llamaindex._spans import span_tree

__all__ = ["LLMUsage", "collect_usage", "install"]


class LLMUsage:
    """Calls, tokens and latency of the LLM calls seen in one context."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, tuple[float, str]] = {}
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.estimated = False
        self.seconds = 0.0

    def start(self, span_id: str, prompt: str) -> None:
        tree = span_tree()
        with self._lock:
            if any(s in self._open for s in tree.lineage(tree.parent(span_id))):
                return  # an inner call of a call already counted
            self._open[span_id] = (time.perf_counter(), prompt)

    def end(self, span_id: str, response: Any) -> None:
        with self._lock:
            started = self._open.pop(span_id, None)
        if started is None:
            return
        extra = getattr(response, "additional_kwargs", None) or {}
        p, c = extra.get("prompt_tokens"), extra.get("completion_tokens")
        estimated = not (isinstance(p, int) and isinstance(c, int))
        if estimated:  # the model reported nothing: count with tiktoken, as LLMSession does
            p = count_tokens(started[1])
            message = getattr(response, "message", None)  # a ChatResponse, else a completion
            text = message.content if message is not None else getattr(response, "text", "")
            c = count_tokens(str(text or ""))
        with self._lock:
            self.calls += 1
            self.prompt_tokens += int(p)
            self.completion_tokens += int(c)
            self.estimated = self.estimated or estimated
            self.seconds += time.perf_counter() - started[0]

    def usage(self, wall_seconds: float = 0.0) -> Usage:
        with self._lock:
            failed = len(self._open)  # started and never ended: the call raised
            return Usage(
                llm_calls=self.calls + failed,
                failed_calls=failed,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                estimated_tokens=self.estimated,
                llm_seconds=self.seconds,
                wall_seconds=wall_seconds,
            )


_current: contextvars.ContextVar[LLMUsage | None] = contextvars.ContextVar(
    "truthguard_llm_usage", default=None
)


class _UsageEvents(BaseEventHandler):
    """Routes LLM start / end events to the collector of the context they fire in."""

    @classmethod
    def class_name(cls) -> str:
        return "TruthGuardUsageEvents"

    def handle(self, event: Any, **kwargs: Any) -> None:
        collector = _current.get()
        if collector is None or event.span_id is None:
            return
        if isinstance(event, LLMCompletionStartEvent):
            collector.start(event.span_id, event.prompt)
        elif isinstance(event, LLMChatStartEvent):
            collector.start(event.span_id, "\n".join(str(m.content) for m in event.messages))
        elif isinstance(event, LLMCompletionEndEvent | LLMChatEndEvent):
            collector.end(event.span_id, event.response)


_installed = False
_install_lock = threading.Lock()


def install() -> None:
    """Register the usage event handler (and the span tree) on the root dispatcher, once."""
    global _installed
    with _install_lock:
        if not _installed:
            span_tree()
            get_dispatcher().add_event_handler(_UsageEvents())
            _installed = True


@contextmanager
def collect_usage() -> Iterator[LLMUsage]:
    """Count the LLM calls made inside the ``with`` block (this context and its children)."""
    install()
    collector = LLMUsage()
    token = _current.set(collector)
    try:
        yield collector
    finally:
        _current.reset(token)
