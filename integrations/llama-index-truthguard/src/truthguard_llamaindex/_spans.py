"""Which LlamaIndex span encloses which: a span handler that keeps the parent of every open span.

Instrumentation events carry only their own ``span_id``; linking a retrieval or an LLM call to
the query it belongs to needs the span tree. One tracker is installed on the root dispatcher
per process and shared by the guarded engine's usage count and the background scorer.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from pydantic import PrivateAttr

__all__ = ["SpanTree", "span_tree"]

_MAX_DEPTH = 256  # a guard against a cycle from a misbehaving handler


class SpanTree(BaseSpanHandler[SimpleSpan]):
    """Parent links of the open spans (dict operations only: cheap on every span)."""

    _parents: dict[str, str | None] = PrivateAttr(default_factory=dict)
    _mutex: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "TruthGuardSpanTree"

    def span_enter(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        parent_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        with self._mutex:
            self._parents[id_] = parent_id

    def span_exit(self, id_: str, bound_args: Any, instance: Any = None, **kwargs: Any) -> None:
        with self._mutex:
            self._parents.pop(id_, None)

    def span_drop(self, id_: str, bound_args: Any, instance: Any = None, **kwargs: Any) -> None:
        with self._mutex:
            self._parents.pop(id_, None)

    # The base class's span bookkeeping is bypassed above; these are never reached.
    def new_span(self, *args: Any, **kwargs: Any) -> SimpleSpan | None:
        return None

    def prepare_to_exit_span(self, *args: Any, **kwargs: Any) -> SimpleSpan | None:
        return None

    def prepare_to_drop_span(self, *args: Any, **kwargs: Any) -> SimpleSpan | None:
        return None

    def parent(self, span_id: str) -> str | None:
        with self._mutex:
            return self._parents.get(span_id)

    def lineage(self, span_id: str | None) -> Iterator[str]:
        """The span itself, then its parent, grandparent, ... (open spans only)."""
        with self._mutex:
            chain = []
            while span_id is not None and len(chain) < _MAX_DEPTH:
                chain.append(span_id)
                span_id = self._parents.get(span_id)
        yield from chain

    @property
    def open_spans_count(self) -> int:
        with self._mutex:
            return len(self._parents)


_tree: SpanTree | None = None
_install_lock = threading.Lock()


def span_tree() -> SpanTree:
    """The process-wide tracker, installed on the root dispatcher on first use."""
    global _tree
    with _install_lock:
        if _tree is None:
            tree = SpanTree()
            get_dispatcher().add_span_handler(tree)
            _tree = tree
        return _tree
