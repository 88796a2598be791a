"""Callback handlers that score every answer of a chain or model in the background."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler

from truthguard.callbacks._tracker import RunTracker
from truthguard.callbacks._worker import Scorer, WhenFull
from truthguard.callbacks.records import RecordSink
from truthguard.detector import BaseDetector
from truthguard.guard.guard import VERDICT_EVENT

__all__ = ["AsyncTruthGuardCallbackHandler", "TruthGuardCallbackHandler"]


class _Core:
    """Shared by the sync and async handlers: tracking runs and the background scorer."""

    def __init__(
        self,
        detector: BaseDetector,
        sinks: Sequence[Any] | Any,
        *,
        max_queue: int,
        concurrency: int,
        when_full: WhenFull,
        timeout: float | None,
        question_key: str | None,
        answer_key: str | None,
        detector_fields: Sequence[str],
        recheck: bool,
        history_key: str | None,
    ) -> None:
        self.tracker = RunTracker(question_key, answer_key, tuple(detector_fields), history_key)
        self.scorer = Scorer.from_options(
            detector,
            sinks,
            max_queue=max_queue,
            concurrency=concurrency,
            when_full=when_full,
            timeout=timeout,
            recheck=recheck,
        )

    def end(self, run_id: UUID, output: Any, inputs: Any = None) -> None:
        capture = self.tracker.end(run_id, output, inputs)
        if capture is not None:
            self.scorer.submit(capture)

    def summary(self) -> dict[str, Any]:
        out = self.scorer.summary()
        out["skipped"] = self.tracker.skipped
        return out


_DOC = """

    Attach it to any chain or model (``config={"callbacks": [handler]}``). For the top-most run it
    sees, it takes the question from the input (``question_key``, else question / input / query,
    or the last human message of a chat model), the answer from the output, the documents of
    every retriever run inside as contexts, and the chat history from the input (``history_key``,
    else chat_history / history / messages, or a chat model's messages before the question),
    which the detector reads as ``history``. When that run ends the capture is queued and scored
    by ``detector`` on a background event loop, so the chain does not wait for the detector.

    Args:
        detector: Scores each captured answer.
        sinks: Where records go: sink objects, callables, or paths (``.jsonl``, ``.db``).
        max_queue: Most captures waiting or being scored at once.
        concurrency: Most detector checks running at once.
        when_full: ``"record"`` (default) writes a capture that finds the queue full as a
            ``failed`` record (failure ``"queue_full"``) at once, so the chain is never slowed
            and nothing is lost silently; ``"block"`` makes the chain wait for room.
        timeout: Seconds one check may take: at that deadline it is recorded ``failed``
            (failure ``"timeout"``) and cancelled, even if the detector ignores the
            cancellation; None for no limit.
        question_key: Input key of the question.
        answer_key: Output key of the answer.
        history_key: Input key of the chat history; ``""`` passes none. A run whose history is
            not a string or a list of turns is skipped (counted in ``summary()["skipped"]``),
            as one without a question is.
        detector_fields: Input keys of the captured run passed on to the detector (for
            example ``entity`` for Reverse Validation).
        recheck: On a ``HallucinationGuard`` run, check the answer again with ``detector``.
            Off (default): the guard has just checked it, so its verdict is recorded as it is
            (no second check, no model call), with the checked answer (the released one, or
            when rejected or replaced by a fallback the last one refused, so it counts as not
            passing) and that attempt's contexts; the record's ``metadata`` says
            ``truthguard_source: "guard"``, ``guard_status`` how the guard ended and, after a
            fallback, ``guard_released`` the text it released. A fallback with no checked
            answer before it is checked by ``detector`` either way. A check the guard refused
            over capacity is recorded ``failed`` (failure ``"over_capacity"``, its error the
            refusal's reason), never checked again here.

    Every capture gets exactly one record. Streamed runs (``stream`` / ``astream``) are
    captured like invoked ones. A check whose model calls failed is recorded ``failed``
    (failure ``"outage"``, label ``invalid``), not as a scored answer, and counts in
    ``summary()["failed"]``. Text is cleaned (lone surrogates become U+FFFD) so file sinks
    accept every record.

    ``flush()`` waits until every capture has a record; ``close(timeout)`` flushes, then within
    about ``timeout`` records whatever is still pending as failed (failure ``"closed"``), asks
    the stuck checks to stop and closes the sinks. A capture arriving after ``close()`` is
    recorded failed (``"closed"``); the JSONL and SQLite sinks still store such late records.
    Records carry the run id. A handler still open at interpreter exit gets its pending
    captures scored first (up to 10 s), then is closed. Checks run on truthguard's one
    long-lived background loop (the one sync ``invoke`` uses), which is never closed, so model
    clients bound to it keep working after a handler is closed.
"""


class _Hooks:
    """Every hook and control method, written once: bookkeeping on the core, which never waits
    except ``end`` under ``when_full="block"``. The sync handler uses them as they are; the
    async one awaits the same methods (:func:`_awaited`)."""

    _core: _Core

    def __init__(
        self,
        detector: BaseDetector,
        sinks: Sequence[Any] | Any = None,
        *,
        max_queue: int = 1000,
        concurrency: int = 4,
        when_full: WhenFull = "record",
        timeout: float | None = 120.0,
        question_key: str | None = None,
        answer_key: str | None = None,
        detector_fields: Sequence[str] = (),
        recheck: bool = False,
        history_key: str | None = None,
    ) -> None:
        self._core = _Core(
            detector,
            sinks,
            max_queue=max_queue,
            concurrency=concurrency,
            when_full=when_full,
            timeout=timeout,
            question_key=question_key,
            answer_key=answer_key,
            detector_fields=detector_fields,
            recheck=recheck,
            history_key=history_key,
        )

    # -- hooks ------------------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kw: Any,
    ) -> None:
        self._core.tracker.start_chain(run_id, parent_run_id, inputs, **kw)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self._core.end(run_id, outputs, kw.get("inputs"))  # streamed runs: inputs only here

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kw: Any) -> None:
        if name == VERDICT_EVENT:
            self._core.tracker.verdict(run_id, data)

    def on_chat_model_start(
        self,
        serialized: Any,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kw: Any,
    ) -> None:
        self._core.tracker.start_model(run_id, parent_run_id, messages, **kw)

    def on_llm_start(
        self,
        serialized: Any,
        prompts: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kw: Any,
    ) -> None:
        self._core.tracker.start_llm(run_id, parent_run_id, prompts, **kw)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        self._core.end(run_id, response)

    def on_tool_start(
        self,
        serialized: Any,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kw: Any,
    ) -> None:
        self._core.tracker.start_other(run_id, parent_run_id, **kw)

    on_retriever_start = on_tool_start  # (serialized, query): followed the same way

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kw: Any) -> None:
        self._core.tracker.retrieved(run_id, documents)

    def _forget(self, _value: Any, *, run_id: UUID, **kw: Any) -> None:
        self._core.tracker.forget(run_id)

    # A failed run gives nothing to score; tools are followed only to find their root.
    on_chain_error = on_llm_error = on_retriever_error = on_tool_error = on_tool_end = _forget

    # -- control ----------------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Block until every captured answer has a record; False if ``timeout`` passed first."""
        return self._core.scorer.flush(timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flush (up to ``timeout``), record anything left as failed, close the sinks."""
        return self._core.scorer.close(timeout)

    def summary(self) -> dict[str, Any]:
        """Counts, pass rate, labels, failures by kind and score distribution so far."""
        return self._core.summary()

    @property
    def sinks(self) -> list[RecordSink]:
        return self._core.scorer.sinks


_HOOKS = [name for name in vars(_Hooks) if name.startswith("on_")]  # aliases included
_ENDS = {"on_chain_end", "on_llm_end"}
"""The hooks that submit a capture: under ``when_full="block"`` they may wait for room."""


def _awaited(name: str) -> Any:
    """The coroutine twin of one of :class:`_Hooks`' hooks, for the async handler."""
    hook = getattr(_Hooks, name)

    @functools.wraps(hook)
    async def twin(self: _Hooks, *args: Any, **kw: Any) -> None:
        if name in _ENDS and self._core.scorer.when_full == "block":
            await asyncio.to_thread(hook, self, *args, **kw)  # may wait for room: off the loop
        else:
            hook(self, *args, **kw)

    twin.__name__ = twin.__qualname__ = name  # an alias keeps the hook's own name
    return twin


class TruthGuardCallbackHandler(_Hooks, BaseCallbackHandler):
    __doc__ = (
        "Score the answers of the runs it observes in the background; write one record each."
        + _DOC
        + """
    Example:
        >>> from truthguard.testing import FakeDetector
        >>> records = []
        >>> handler = TruthGuardCallbackHandler(FakeDetector(score=0.9), sinks=records.append)
        >>> handler.close()
        True
    """
    )

    @property
    def run_inline(self) -> bool:  # type: ignore[override]
        # Hooks only do bookkeeping: no executor hop in async chains, unless "block" may wait.
        return self._core.scorer.when_full != "block"


class AsyncTruthGuardCallbackHandler(_Hooks, AsyncCallbackHandler):
    __doc__ = (
        "The async twin of :class:`TruthGuardCallbackHandler` (same arguments and records)."
        + _DOC
        + """
    Use ``await handler.aflush()`` / ``await handler.aclose()`` from async code.
    """
    )

    @property
    def run_inline(self) -> bool:  # type: ignore[override]
        # The hooks only do bookkeeping: awaited in place, not as one task per event per run.
        return self._core.scorer.when_full != "block"

    async def aflush(self, timeout: float | None = None) -> bool:
        """``flush`` without blocking the event loop."""
        return await asyncio.to_thread(self._core.scorer.flush, timeout)

    async def aclose(self, timeout: float | None = None) -> bool:
        """``close`` without blocking the event loop."""
        return await asyncio.to_thread(self._core.scorer.close, timeout)


for _name in _HOOKS:  # the same hooks, awaited: an async handler's hooks are coroutines
    setattr(AsyncTruthGuardCallbackHandler, _name, _awaited(_name))
del _name
