"""How the guard runs a chain attempt: tags, hidden streams, captured contexts, feedback slot.

* Every run below an attempt carries the inheritable tag ``guard:attempt:N``.
* Streaming consumers (``astream_events``, LangGraph ``stream_mode="messages"``) are detached
  from attempt runs unless the user opts in, so no unchecked token reaches them.
* Documents returned by retriever runs inside an attempt are captured, for chains whose output
  carries no contexts.
* Chat models inside the chain are wrapped so that a ``Regenerate`` feedback text set in
  ``configurable`` is appended to their prompt, never to the retrieval query.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import HumanMessage, convert_to_messages
from langchain_core.prompt_values import ChatPromptValue, PromptValue
from langchain_core.prompts import BasePromptTemplate
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableLambda,
    RunnableParallel,
    RunnableSequence,
)
from langchain_core.runnables.config import patch_config
from langchain_core.runnables.configurable import DynamicRunnable
from langchain_core.runnables.fallbacks import RunnableWithFallbacks
from langchain_core.runnables.passthrough import RunnableAssign

from truthguard.detector import context_text

__all__ = [
    "FEEDBACK_FIELD",
    "RetrieverCapture",
    "attempt_callbacks",
    "attempt_chain",
    "attempt_config",
    "config_ids",
    "find_prompt_slot",
    "reads_config",
    "scoped_config",
    "uses_retrieval_query",
    "with_feedback_slot",
]

FEEDBACK_FIELD = "truthguard_feedback"
"""``configurable`` key carrying Regenerate's feedback to the wrapped chat models."""


def _is_streaming_consumer(handler: Any) -> bool:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    return isinstance(handler, _StreamingCallbackHandler)


def attempt_callbacks(
    run_manager: Any, tag: str, *, stream_nested: bool, extra: Sequence[BaseCallbackHandler] = ()
) -> BaseCallbackManager:
    """A child callback manager for one attempt: inheritable tag, optional hidden streams."""
    manager: BaseCallbackManager = run_manager.get_child()
    manager.add_tags([tag], inherit=True)  # get_child(tag) would tag only the direct child
    if not stream_nested:
        for h in [*manager.handlers, *manager.inheritable_handlers]:
            if _is_streaming_consumer(h):
                manager.remove_handler(h)
    for h in extra:
        manager.add_handler(h, inherit=True)
    return manager


def attempt_config(
    config: RunnableConfig,
    run_manager: Any,
    tag: str,
    *,
    stream_nested: bool,
    extra: Sequence[BaseCallbackHandler] = (),
    configurable: Mapping[str, Any] | None = None,
) -> RunnableConfig:
    """The config of runs inside one attempt: :func:`attempt_callbacks` below the guard's run,
    and a step's ``configurable`` values merged over the caller's."""
    callbacks = attempt_callbacks(run_manager, tag, stream_nested=stream_nested, extra=extra)
    child = patch_config(config, callbacks=callbacks)
    if configurable:
        child["configurable"] = {**child.get("configurable", {}), **configurable}
    return child


@contextmanager
def scoped_config(config: RunnableConfig) -> Iterator[None]:
    """Make ``config`` the ambient parent config while an attempt runs.

    LangChain merges a runnable's own config with the ambient one (a context variable holding
    the guard's config, streaming consumers included): without this, ``with_config`` bindings
    inside the chain would bring back the handlers an attempt was detached from.
    """
    from langchain_core.runnables.config import var_child_runnable_config

    token = var_child_runnable_config.set(config)
    try:
        yield
    finally:
        # Closed from another context (LangChain closes a streamed generator outside the
        # context its steps ran in): nothing of ours is set in this one.
        with contextlib.suppress(ValueError):
            var_child_runnable_config.reset(token)


class RetrieverCapture(BaseCallbackHandler):
    """Collects the documents of every retriever run below it (in order, de-duplicated)."""

    run_inline = True
    # Only retriever ends matter: LangChain skips ignored events before dispatching them.
    ignore_llm = ignore_chat_model = ignore_chain = ignore_agent = True
    ignore_retry = ignore_custom_event = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: list[str] = []

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kw: Any) -> None:
        texts = []
        for d in documents or []:
            try:
                texts.append(context_text(d, field="documents"))
            except Exception:  # a retriever returning odd objects must not break the attempt
                continue
        with self._lock:
            for t in texts:
                if t not in self._texts:
                    self._texts.append(t)

    @property
    def contexts(self) -> list[str]:
        with self._lock:
            return list(self._texts)


def config_ids(runnable: Runnable[Any, Any]) -> set[str]:
    """The ``configurable`` ids a runnable exposes (empty when it cannot tell)."""
    try:
        return {spec.id for spec in runnable.config_specs}
    except Exception:  # a custom runnable with a broken config_specs: assume nothing
        return set()


def reads_config(runnable: Runnable[Any, Any]) -> bool:
    """True when a function inside the chain takes the run config (it may read any key)."""
    from langchain_core.runnables.utils import accepts_config

    for r in _walk(runnable):
        if isinstance(r, RunnableLambda):
            func = getattr(r, "func", None) or getattr(r, "afunc", None)
            try:
                if func is not None and accepts_config(func):
                    return True
            except (TypeError, ValueError):  # a builtin without a signature
                continue
    return False


def uses_retrieval_query(runnable: Runnable[Any, Any]) -> bool:
    """True when the chain retrieves with a ``retrieval_query`` input key (``build_rag_chain``)."""
    return any(
        isinstance(r, RunnableLambda)
        and getattr(getattr(r, "func", None), "__name__", "") == "_retrieval_query"
        for r in _walk(runnable)
    )


def find_prompt_slot(runnable: Runnable[Any, Any], key: str) -> bool:
    """True when a prompt template inside the chain has a ``{key}`` variable."""
    for r in _walk(runnable):
        if isinstance(r, BasePromptTemplate) and (
            key in r.input_variables or key in (r.partial_variables or {})
        ):
            return True
    return False


def _walk(r: Any, depth: int = 0) -> list[Any]:
    if depth > 50:
        return []
    out = [r]
    for child in _children(r):
        out += _walk(child, depth + 1)
    return out


def _children(r: Any) -> list[Any]:
    if isinstance(r, RunnableSequence):
        return list(r.steps)
    if isinstance(r, RunnableParallel):
        return list(r.steps__.values())
    if isinstance(r, RunnableAssign):
        return [r.mapper]
    if isinstance(r, RunnableBinding):
        return [r.bound]
    if isinstance(r, RunnableWithFallbacks):
        return [r.runnable, *r.fallbacks]
    if isinstance(r, DynamicRunnable):
        return [r.default]
    if isinstance(r, RunnableLambda):
        return list(r.deps)
    return []


def _is_model(r: Any) -> bool:
    if isinstance(r, BaseLanguageModel):
        return True
    return isinstance(r, DynamicRunnable) and isinstance(r.default, BaseLanguageModel)


def _append_feedback(value: Any, config: RunnableConfig) -> Any:
    feedback = (config.get("configurable") or {}).get(FEEDBACK_FIELD)
    if not feedback:
        return value
    if isinstance(value, str):
        return f"{value}\n\n{feedback}"
    messages = value.to_messages() if isinstance(value, PromptValue) else convert_to_messages(value)
    return ChatPromptValue(messages=[*messages, HumanMessage(content=feedback)])


def with_feedback_slot(runnable: Runnable[Any, Any]) -> tuple[Runnable[Any, Any], int]:
    """A copy of the chain whose chat models read Regenerate's feedback from ``configurable``.

    Returns the new chain and how many models were wrapped (0: the chain is returned as is).
    Only the standard composition primitives are entered; a model hidden inside a function is
    out of reach.
    """
    return _inject(runnable, 0)


def attempt_chain(
    chain: Runnable[Any, Any], with_slot: Runnable[Any, Any] | None, config: RunnableConfig
) -> Runnable[Any, Any]:
    """The chain an attempt runs: ``with_slot`` (:func:`with_feedback_slot`'s copy) only when
    ``config`` carries feedback for its models, else the user's own chain.

    Without feedback the slot would pass every prompt through unchanged, at the price of one
    more run per model call (a sync function, so a worker-thread hop in async chains, and its
    callback events): about 4% of the Python calls of a guarded, LLM-checked ``ChatOpenAI``
    chain (1,700 of 43,000 per request, cProfile).
    """
    if with_slot is not None and (config.get("configurable") or {}).get(FEEDBACK_FIELD):
        return with_slot
    return chain


def _wrap(model: Runnable[Any, Any]) -> Runnable[Any, Any]:
    return RunnableLambda(_append_feedback, name="guard_feedback") | model


def _inject(r: Any, depth: int) -> tuple[Any, int]:
    if depth > 50:
        return r, 0
    if _is_model(r):
        return _wrap(r), 1
    if isinstance(r, RunnableSequence):
        steps, n = _inject_all(r.steps, depth)
        return (RunnableSequence(*steps, name=r.name) if n else r), n
    if isinstance(r, RunnableParallel):
        keys = list(r.steps__)
        steps, n = _inject_all([r.steps__[k] for k in keys], depth)
        return (RunnableParallel(dict(zip(keys, steps, strict=True))) if n else r), n
    if isinstance(r, RunnableAssign):
        mapper, n = _inject(r.mapper, depth + 1)
        return (RunnableAssign(mapper=mapper) if n else r), n
    if isinstance(r, RunnableBinding):
        bound, n = _inject(r.bound, depth + 1)
        return (r.model_copy(update={"bound": bound}) if n else r), n
    if isinstance(r, RunnableWithFallbacks):
        items, n = _inject_all([r.runnable, *r.fallbacks], depth)
        return (r.model_copy(update={"runnable": items[0], "fallbacks": items[1:]}) if n else r), n
    return r, 0


def _inject_all(items: Sequence[Any], depth: int) -> tuple[list[Any], int]:
    out, total = [], 0
    for item in items:
        new, n = _inject(item, depth + 1)
        out.append(new)
        total += n
    return out, total
