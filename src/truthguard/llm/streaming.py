"""Streamed replies: which models stream what ``invoke`` would, and the chunks merged once."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.runnables import Runnable

from truthguard.llm.messages import Prompt, message_text

__all__ = ["reply_so_far", "stream_async", "stream_sync", "streams_like_invoke"]


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


def reply_so_far(output: Any, partial: list[Any]) -> Any:
    """The reply an attempt got: its output, else what its stream delivered before failing."""
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


async def stream_async(
    runnable: Runnable[Any, Any],
    prompt: Prompt,
    config: Any,
    on_text: Callable[[str], None],
    partial: list[Any] | None,
) -> Any:
    """Stream ``runnable`` on the running loop; the merged reply."""
    reply = _Streamed(on_text, partial)
    async for chunk in runnable.astream(prompt, config=config):
        reply.add(chunk)
    return reply.total


def stream_sync(
    runnable: Runnable[Any, Any],
    prompt: Prompt,
    config: Any,
    on_text: Callable[[str], None],
    partial: list[Any] | None,
) -> Any:
    """Stream ``runnable`` through its sync API (on a worker thread); the merged reply."""
    reply = _Streamed(on_text, partial)
    for chunk in runnable.stream(prompt, config=config):
        reply.add(chunk)
    return reply.total
