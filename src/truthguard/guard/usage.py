"""A callback handler that adds up the LLM usage of the runs below it (one per attempt).

The guards count each attempt's chain and policy calls with it; so does a guard in another
framework for the LangChain runnables it calls (a fallback chain, a query rewriter).
"""

from __future__ import annotations

import threading
import time
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from truthguard.llm import count_tokens, message_text
from truthguard.result import Usage

__all__ = ["UsageCollector"]


class UsageCollector(BaseCallbackHandler):
    """Counts model calls, tokens and call latency.

    Tokens come from the model's ``usage_metadata``; when a model reports none, they are
    counted with tiktoken on the prompt and the generation (``estimated_tokens`` is then set),
    as the detectors' sessions do.
    """

    run_inline = True  # cheap and thread-safe: no executor hop in async chains
    # Only model events count: LangChain skips a handler's ignored events before dispatching
    # them, so the chain, tool and retriever runs of an attempt cost it nothing.
    ignore_chain = ignore_agent = ignore_retriever = ignore_retry = ignore_custom_event = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starts: dict[UUID, tuple[float, str]] = {}
        self.estimated = False
        self.calls = 0
        self.failed = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.seconds = 0.0

    def _start(self, run_id: UUID, prompt: str) -> None:
        with self._lock:
            self._starts[run_id] = (time.perf_counter(), prompt)

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kw: Any) -> None:
        self._start(run_id, "\n".join(str(p) for p in prompts or []))

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **kw: Any
    ) -> None:
        flat = [m for batch in messages or [] for m in batch]
        self._start(run_id, "\n".join(message_text(m) for m in flat))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kw: Any) -> None:
        p = c = 0
        texts = []
        reported = False
        for gens in response.generations:
            for g in gens:
                meta = getattr(getattr(g, "message", None), "usage_metadata", None) or {}
                if meta.get("input_tokens") or meta.get("output_tokens"):
                    reported = True
                p += int(meta.get("input_tokens", 0))
                c += int(meta.get("output_tokens", 0))
                texts.append(g.text)
        with self._lock:
            started = self._starts.pop(run_id, None)
        if not reported:  # estimate, like LLMSession does for models without usage_metadata
            p = count_tokens(started[1]) if started else 0
            c = sum(count_tokens(t) for t in texts)
        with self._lock:
            self.calls += 1
            self.prompt_tokens += p
            self.completion_tokens += c
            self.estimated = self.estimated or not reported
            if started is not None:
                self.seconds += time.perf_counter() - started[0]

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        with self._lock:
            started = self._starts.pop(run_id, None)
            self.calls += 1
            self.failed += 1
            if started is not None:
                self.seconds += time.perf_counter() - started[0]

    def usage(self, wall_seconds: float = 0.0) -> Usage:
        with self._lock:
            return Usage(
                llm_calls=self.calls,
                failed_calls=self.failed,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                estimated_tokens=self.estimated,
                llm_seconds=self.seconds,
                wall_seconds=wall_seconds,
            )
