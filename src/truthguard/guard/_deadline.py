"""The deadline of one whole guarded run (a guard's ``timeout``): chain, checks and policies.

Each step of the run gets what is left of it: a chain call or a policy step past it is
cancelled (on a sync entry point its worker thread's call is abandoned, never waited for), a
check runs under the earlier of its ``check_timeout`` and the deadline, and once the deadline
has passed no step starts at all: each fails at once with :class:`RunTimedOut`, so the attempt
loop ends within the deadline with what its attempts gave.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["POLICY_GRACE", "Deadline", "RunTimedOut", "before", "call_before", "within"]

T = TypeVar("T")


class RunTimedOut(TimeoutError):
    """A step of a guarded run was cut off, or never started, at the guard's ``timeout``."""


@dataclass(frozen=True)
class Deadline:
    """When a guarded run must end (``time.monotonic()``) and the ``timeout`` it came from."""

    at: float
    timeout: float

    @classmethod
    def start(cls, timeout: float | None) -> Deadline | None:
        """The deadline ``timeout`` seconds from now; None without a timeout."""
        return None if timeout is None else cls(time.monotonic() + timeout, timeout)

    def left(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self.at - time.monotonic())

    def error(self) -> RunTimedOut:
        return RunTimedOut(f"the guard's timeout of {self.timeout:.3g}s passed")


def within(deadline: Deadline | None, timeout: float | None) -> float | None:
    """The earlier of ``timeout`` (a check's own) and what is left of ``deadline``."""
    if deadline is None:
        return timeout
    left = deadline.left()
    return left if timeout is None else min(timeout, left)


POLICY_GRACE = 0.05
"""Seconds a policy step may take past the deadline: deciding costs nothing (a static
``Fallback`` still answers), a model call of its own is cut off."""


async def before(deadline: Deadline | None, aw: Awaitable[T], *, grace: float = 0.0) -> T:
    """Await ``aw`` until ``deadline`` (``grace`` seconds more at least), cancelling it there;
    :class:`RunTimedOut` when it was cut off, or at once (``aw`` never started) when the
    deadline has passed and there is no grace."""
    if deadline is None:
        return await aw
    left = max(deadline.left(), grace)
    if left <= 0:
        if inspect.iscoroutine(aw):
            aw.close()
        raise deadline.error()
    try:
        return await asyncio.wait_for(aw, left)
    except TimeoutError as e:
        if deadline.left() > 0.01 and grace == 0:  # the step's own time-out, not the run's
            raise
        raise deadline.error() from e


def call_before(deadline: Deadline | None, fn: Callable[[], T]) -> T:
    """Call ``fn`` (sync) until ``deadline``: on a daemon worker thread, with the caller's
    context, abandoned there when the deadline passes (its call ends on its own; nobody, not
    even exit, waits for it). :class:`RunTimedOut` when cut off or when the deadline has passed."""
    if deadline is None:
        return fn()
    from truthguard._sync import chain_executor

    left = deadline.left()
    if left <= 0:
        raise deadline.error()
    future = chain_executor().submit(contextvars.copy_context().run, fn)
    try:
        return future.result(timeout=left)
    except TimeoutError:
        if future.done():  # the call's own time-out
            raise
        future.cancel()  # abandoned: the pool gives its slot to the next call
        raise deadline.error() from None
