"""Keep truthguard's result models in LangGraph checkpoints without warnings.

LangGraph's checkpoint serializer rebuilds pydantic models and enums from their module and class
name, and warns ("Deserializing unregistered type ...", to be blocked in a future version) for
any type not on its allowlist. :data:`LANGGRAPH_ALLOWLIST` names every truthguard type that can
sit in a graph's state; :func:`checkpoint_serializer` builds LangGraph's own serializer with it.

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver  # doctest: +SKIP
    >>> checkpointer = InMemorySaver(serde=checkpoint_serializer())  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from truthguard.errors import ConfigurationError, InvalidInputError

__all__ = ["LANGGRAPH_ALLOWLIST", "checkpoint_serializer"]

LANGGRAPH_ALLOWLIST: tuple[tuple[str, str], ...] = (
    ("truthguard.result", "DetectionResult"),
    ("truthguard.result", "Label"),
    ("truthguard.result", "Usage"),
    ("truthguard.guard", "GuardResult"),
    ("truthguard.guard", "GuardVerdict"),
    ("truthguard.guard", "Attempt"),
    # Read only: checkpoints written before the guard's models took their public module name
    # recorded the private one; that module must keep these names for them to load.
    ("truthguard.guard._models", "GuardResult"),
    ("truthguard.guard._models", "GuardVerdict"),
    ("truthguard.guard._models", "Attempt"),
)
"""``(module, class)`` pairs for LangGraph's ``allowed_msgpack_modules``.

A checkpoint records a type by its public module (``truthguard.result``, ``truthguard.guard``),
so moving a private module never breaks a saved graph.
"""


def checkpoint_serializer(extra: Iterable[tuple[str, ...] | type] = ()) -> Any:
    """LangGraph's ``JsonPlusSerializer`` allowing truthguard's types (and ``extra`` ones).

    With an explicit allowlist LangGraph blocks every other custom type, so list your own state
    types in ``extra`` (classes or ``(module, name)`` pairs). LangChain messages, documents and
    LangGraph's own types are always allowed.

    Raises:
        ConfigurationError: ``langgraph`` is not installed.
        InvalidInputError: An ``extra`` entry is neither a class nor a ``(module, name)`` pair.
    """
    try:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ConfigurationError(
            "checkpoint_serializer() needs langgraph: pip install langgraph"
        ) from e
    allowed: list[tuple[str, ...]] = list(LANGGRAPH_ALLOWLIST)
    for i, item in enumerate(extra):
        if isinstance(item, type):
            allowed.append((item.__module__, item.__name__))
        elif (
            isinstance(item, tuple)
            and len(item) >= 2
            and all(isinstance(p, str) and p for p in item)
        ):
            allowed.append(item)
        else:
            raise InvalidInputError(
                f"extra[{i}]", f"expected a class or a (module, name) tuple, got {item!r}"
            )
    return JsonPlusSerializer(allowed_msgpack_modules=allowed)
