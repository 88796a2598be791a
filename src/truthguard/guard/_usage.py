"""A callback handler that adds up the LLM usage of the runs below it (one per attempt)."""

from __future__ import annotations

import threading
import time
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from truthguard.result import Usage

__all__ = ["UsageCollector"]


class UsageCollector(BaseCallbackHandler):
    """Counts model calls, tokens (from ``usage_metadata``) and call latency."""

    run_inline = True  # cheap and thread-safe: no executor hop in async chains

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starts: dict[UUID, float] = {}
        self.calls = 0
        self.failed = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.seconds = 0.0

    def _start(self, run_id: UUID) -> None:
        with self._lock:
            self._starts[run_id] = time.perf_counter()

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kw: Any) -> None:
        self._start(run_id)

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **kw: Any
    ) -> None:
        self._start(run_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kw: Any) -> None:
        p = c = 0
        for gens in response.generations:
            for g in gens:
                meta = getattr(getattr(g, "message", None), "usage_metadata", None) or {}
                p += int(meta.get("input_tokens", 0))
                c += int(meta.get("output_tokens", 0))
        with self._lock:
            started = self._starts.pop(run_id, None)
            self.calls += 1
            self.prompt_tokens += p
            self.completion_tokens += c
            if started is not None:
                self.seconds += time.perf_counter() - started

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        with self._lock:
            started = self._starts.pop(run_id, None)
            self.calls += 1
            self.failed += 1
            if started is not None:
                self.seconds += time.perf_counter() - started

    def usage(self, wall_seconds: float = 0.0) -> Usage:
        with self._lock:
            return Usage(
                llm_calls=self.calls,
                failed_calls=self.failed,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                llm_seconds=self.seconds,
                wall_seconds=wall_seconds,
            )
