"""Score LlamaIndex answers in the background, from the instrumentation events.

The handler follows the top-most query (or stand-alone synthesis) span it sees: retrievals
anywhere below it give the contexts; when its ``QueryEndEvent`` / ``SynthesizeEndEvent`` fires,
the question, answer and contexts are handed to the core :class:`~truthguard.callbacks.Scorer`,
which checks them on its own event loop and writes one record per answer to the sinks (JSONL,
SQLite, logging, a callable), exactly as the LangChain callback handler does.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.instrumentation import Dispatcher, get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.events.span import SpanDropEvent
from llama_index.core.instrumentation.events.synthesis import (
    SynthesizeEndEvent,
    SynthesizeStartEvent,
)
from llama_index.core.schema import QueryBundle
from pydantic import PrivateAttr

from truthguard.callbacks import Capture, Scorer
from truthguard.callbacks.records import RecordSink, json_safe
from truthguard.detector import BaseDetector, context_text
from truthguard.errors import InvalidInputError
from truthguard_llamaindex._spans import SpanTree, span_tree
from truthguard_llamaindex.query_engine import METADATA_KEY

__all__ = ["TruthGuardEventHandler"]

WhenFull = Literal["record", "block"]


@dataclass
class _Root:
    question: str
    kind: str
    parent: str | None
    tags: dict[str, Any]
    contexts: list[str] = field(default_factory=list)


def _query_text(query: Any) -> str | None:
    text = query.query_str if isinstance(query, QueryBundle) else query
    return text if isinstance(text, str) and text.strip() else None


def _answer_text(response: Any) -> str | None:
    """The answer of a finished response; None for a stream not consumed yet."""
    if isinstance(response, StreamingResponse | AsyncStreamingResponse):
        text = response.response_txt
        return text if text else None
    if isinstance(response, PydanticResponse):
        return str(response)
    if isinstance(response, Response):
        return None if response.response is None else str(response.response)
    return response if isinstance(response, str) else None


def _run_id(span_id: str | None) -> uuid.UUID | None:
    """The uuid at the end of a LlamaIndex span id (``Class.method-<uuid>``)."""
    if span_id is None:
        return None
    try:
        return uuid.UUID(span_id[-36:])
    except ValueError:
        return uuid.uuid5(uuid.NAMESPACE_URL, span_id)


class TruthGuardEventHandler(BaseEventHandler):
    """Score every answer LlamaIndex produces, in the background; write one record each.

    Register it on the root dispatcher (``handler.register()``, or
    ``get_dispatcher().add_event_handler(handler)``); every query engine then reports to it. For
    the outermost query span it sees (a guarded engine wrapping another counts once), it takes
    the question from ``QueryStartEvent``, the answer from ``QueryEndEvent``, and the contexts
    from the response's source nodes, or else from every ``RetrievalEndEvent`` below it. A
    ``synthesize`` call outside any query is captured the same way. Scoring runs on the core
    :class:`~truthguard.callbacks.Scorer`: the query never waits for the detector. Retrievals
    are matched to their query through the span tree, tracked by a span handler the first
    handler installs on the root dispatcher (once per process).

    Args:
        detector: Scores each captured answer.
        sinks: Where records go: sink objects, callables, or paths (``.jsonl``, ``.db``).
        max_queue: Most captures waiting or being scored at once.
        concurrency: Most detector checks running at once.
        when_full: ``"record"`` (default) writes a capture that finds the queue full as a
            ``failed`` record with error ``"queue full"`` at once; ``"block"`` makes the query
            wait for room.
        timeout: Seconds one check may take before it is recorded as failed; None for no limit.
        detector_fields: Extra detector input fields for every capture (e.g. ``references``).
        recheck: On a ``GuardedQueryEngine`` query, check the answer again with ``detector``.
            Off (default): the guard has just checked it, so its verdict is recorded as it is
            (no second check, no model call), with the checked answer (the released one, or
            when rejected the last one refused) and that attempt's contexts; the record's
            ``metadata`` says ``truthguard_source: "guard"``. An unchecked fallback answer is
            checked by ``detector`` either way.

    ``flush()`` waits until every capture has a record; ``close()`` flushes, records whatever is
    still pending after its time-out as failed, and closes the sinks. A record's ``run_id`` is
    the uuid of the query span; ``metadata["span_id"]`` is the span id itself, and
    ``metadata["guard_status"]`` how a guarded engine ended (passed / fallback / rejected).
    Streaming responses not consumed when the query ends carry no answer yet and are counted in
    ``summary()["skipped"]``.

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> records = []
        >>> handler = TruthGuardEventHandler(FakeDetector(score=0.9), sinks=records.append)
        >>> handler.register()  # doctest: +SKIP
        >>> handler.close()
        True
    """

    _scorer: Scorer = PrivateAttr()
    _tree: SpanTree = PrivateAttr()
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _roots: dict[str, _Root] = PrivateAttr(default_factory=dict)
    _fields: dict[str, Any] = PrivateAttr(default_factory=dict)
    _skipped: int = PrivateAttr(default=0)
    _dispatchers: list[Dispatcher] = PrivateAttr(default_factory=list)

    def __init__(
        self,
        detector: BaseDetector,
        sinks: Sequence[Any] | Any = None,
        *,
        max_queue: int = 1000,
        concurrency: int = 4,
        when_full: WhenFull = "record",
        timeout: float | None = 120.0,
        detector_fields: dict[str, Any] | None = None,
        recheck: bool = False,
    ) -> None:
        super().__init__()
        scorer = Scorer.from_options(
            detector,
            sinks,
            max_queue=max_queue,
            concurrency=concurrency,
            when_full=when_full,
            timeout=timeout,
            recheck=recheck,
        )
        fields = dict(detector_fields or {})
        if fields:  # a wrong field fails here, not in every background check
            try:
                detector.validate_input({"question": "q", "answer": "a", **fields})
            except Exception:
                scorer.close()
                raise
        self._fields = fields
        self._tree = span_tree()  # links retrievals to their query
        self._scorer = scorer

    @classmethod
    def class_name(cls) -> str:
        return "TruthGuardEventHandler"

    # -- registration ------------------------------------------------------------------------------

    def register(self, dispatcher: Dispatcher | None = None) -> TruthGuardEventHandler:
        """Add this handler to ``dispatcher`` (default: the root one, which sees every event)."""
        d = dispatcher or get_dispatcher()
        if not any(h is self for h in d.event_handlers):
            d.add_event_handler(self)
            self._dispatchers.append(d)
        return self

    def unregister(self) -> None:
        """Remove this handler from the dispatchers :meth:`register` added it to."""
        for d in self._dispatchers:
            d.event_handlers = [h for h in d.event_handlers if h is not self]
        self._dispatchers.clear()

    # -- events ------------------------------------------------------------------------------------

    def handle(self, event: Any, **kwargs: Any) -> None:
        if isinstance(event, QueryStartEvent | SynthesizeStartEvent):
            self._start(event)
        elif isinstance(event, RetrievalEndEvent):
            self._retrieved(event)
        elif isinstance(event, QueryEndEvent | SynthesizeEndEvent):
            self._end(event)
        elif isinstance(event, SpanDropEvent):
            with self._lock:  # the query raised: nothing to score
                self._roots.pop(event.span_id or "", None)

    def _start(self, event: QueryStartEvent | SynthesizeStartEvent) -> None:
        span = event.span_id
        question = _query_text(event.query)
        if span is None or question is None:
            return
        lineage = list(self._tree.lineage(span))
        with self._lock:
            if any(s in self._roots for s in lineage):
                return  # inside a query already followed: the outer one is scored
            kind = "query" if isinstance(event, QueryStartEvent) else "synthesize"
            parent = lineage[1] if len(lineage) > 1 else None
            self._roots[span] = _Root(question, kind, parent, dict(event.tags))

    def _retrieved(self, event: RetrievalEndEvent) -> None:
        lineage = list(self._tree.lineage(event.span_id))
        texts = []
        for n in event.nodes:
            try:
                texts.append(context_text(n))
            except InvalidInputError:
                continue  # a node without text (an image) gives no context to check against
        with self._lock:
            root = next((self._roots[s] for s in lineage if s in self._roots), None)
            if root is not None:
                root.contexts.extend(texts)

    def _end(self, event: QueryEndEvent | SynthesizeEndEvent) -> None:
        with self._lock:
            root = self._roots.pop(event.span_id or "", None)
        if root is None:
            return
        answer = _answer_text(event.response)
        guard = (getattr(event.response, "metadata", None) or {}).get(METADATA_KEY)
        checked = None  # the guard's attempt on the answer: the released one, or the last refused
        if guard is not None:
            checked = next((a for a in reversed(guard.attempts) if a.answer is not None), None)
            if guard.status == "fallback":  # the fallback text was never checked: the refusal was
                checked = next((a for a in reversed(guard.attempts) if a.verdict), checked)
            if checked is not None and (answer is None or guard.status == "fallback"):
                answer = checked.answer  # log what it refused, not an unchecked fallback
        if answer is None:
            with self._lock:
                self._skipped += 1
            return
        sources = getattr(event.response, "source_nodes", None) or []
        contexts = [context_text(n) for n in sources] or list(dict.fromkeys(root.contexts))
        if checked is not None and checked.contexts:
            contexts = list(checked.contexts)
        meta: dict[str, Any] = {"span_id": event.span_id, "kind": root.kind, **root.tags}
        if guard is not None:  # answered by a GuardedQueryEngine: keep how the guard ended
            meta["guard_status"] = guard.status
        self._scorer.submit(
            Capture(
                run_id=_run_id(event.span_id),  # type: ignore[arg-type]
                parent_run_id=_run_id(root.parent),
                question=root.question,
                answer=answer,
                contexts=contexts,
                tags=[],
                metadata=json_safe(meta),
                extra=dict(self._fields),
                captured_at=time.time(),
                guard_attempt=checked,
                guard_status=guard.status if guard is not None else None,
                guard_released=guard.answer
                if guard is not None and guard.answer != answer
                else None,
            )
        )

    # -- control -----------------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Block until every captured answer has a record; False if ``timeout`` passed first."""
        return self._scorer.flush(timeout)

    async def aflush(self, timeout: float | None = None) -> bool:
        """``flush`` without blocking the event loop."""
        return await asyncio.to_thread(self._scorer.flush, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flush (up to ``timeout``), record anything left as failed, close the sinks."""
        return self._scorer.close(timeout)

    async def aclose(self, timeout: float | None = None) -> bool:
        """``close`` without blocking the event loop."""
        return await asyncio.to_thread(self._scorer.close, timeout)

    def summary(self) -> dict[str, Any]:
        """Counts, pass rate, label counts and score distribution of the records so far."""
        out = self._scorer.summary()
        with self._lock:
            out["skipped"] = self._skipped
            out["open_queries"] = len(self._roots)
        return out

    @property
    def sinks(self) -> list[RecordSink]:
        return self._scorer.sinks
