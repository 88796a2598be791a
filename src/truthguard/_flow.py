"""Drive a generator of operations, written once for sync and async callers.

A flow is a generator that yields operations (what to do: call a model, check an answer) and
receives each result, or the exception it raised, as httpx's auth flows do. The flow holds the
logic; its driver carries out the operations: ``drive`` with a function that returns results,
``adrive`` with one that may return awaitables. Both run the one loop in :func:`_carry`.

Example:
    >>> def flow():
    ...     total = yield 1
    ...     total += yield 2
    ...     return total
    >>> drive(flow(), lambda op: op * 10)
    30
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from typing import Any

__all__ = ["adrive", "drive"]

Flow = Generator[Any, Any, Any]


async def _carry(
    flow: Flow, run: Callable[[Any], Any], passthrough: tuple[type[BaseException], ...]
) -> Any:
    """The loop: run each operation, send its result (or throw its error) back into the flow.

    Only ``Exception``s go back into the flow; ``passthrough`` types (a framework's own control
    flow, such as LangGraph's interrupts) and cancellation reach the caller as they are.
    """
    op = next(flow)
    while True:
        try:
            value = run(op)
            if inspect.isawaitable(value):
                value = await value
        except passthrough:
            raise
        except Exception as e:
            try:
                op = flow.throw(e)
            except StopIteration as stop:
                return stop.value
            continue
        try:
            op = flow.send(value)
        except StopIteration as stop:
            return stop.value


def drive(
    flow: Flow, run: Callable[[Any], Any], *, passthrough: tuple[type[BaseException], ...] = ()
) -> Any:
    """Run ``flow`` to its return value, carrying out each operation with ``run`` (sync).

    ``run`` returns results, never awaitables, so the loop never suspends: one ``send`` runs it.
    """
    loop = _carry(flow, run, passthrough)
    try:
        loop.send(None)
    except StopIteration as stop:
        return stop.value
    loop.close()
    raise TypeError("drive(): run returned an awaitable; use adrive from async code")


async def adrive(
    flow: Flow, run: Callable[[Any], Any], *, passthrough: tuple[type[BaseException], ...] = ()
) -> Any:
    """Run ``flow`` to its return value, awaiting what ``run`` returns for each operation."""
    return await _carry(flow, run, passthrough)
