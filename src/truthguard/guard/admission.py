"""Admission of checks: a bound on the checks in flight, taken in order, refused when late.

A guard checks an answer within its deadline (``check_timeout``). Under a burst more checks
start than the process can finish in that time; started together, they all finish late. A
:class:`CheckGate` lets at most ``limit`` checks run at once, queues the rest in arrival order
and refuses a check, before any work is spent on it, as soon as it cannot finish in time: when
the wait the queue ahead of it implies (from the time checks have been taking) plus one check
already exceeds what is left of its deadline, when a slot frees too late for it, or when its
deadline passes in the queue. A refusal says "over capacity" and why (:class:`Refusal`).

The gate is thread-safe and bound to no event loop: one guard may check from the caller's loop
and, for a sync ``invoke``, from truthguard's own.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass, field

__all__ = ["DEFAULT_MAX_CONCURRENT_CHECKS", "CheckGate", "Refusal"]

DEFAULT_MAX_CONCURRENT_CHECKS = 64
"""Every guard's default ``max_concurrent_checks``. An LLM check spends most of its time
waiting for its model's replies, so more checks in flight finish more per second until the
client's CPU is saturated; past that, the deadline-based refusals keep what is admitted on
time. With ``truthguard bench guard --burst 1,30,300`` (an LLM ``RefChecker`` over HTTP, a 2 s
deadline, 2 shared cores), 300 concurrent runs passed 136 on average at 32 (117-155 over 10
runs) and 167 at 64 (123-180 over 7), returning within 2.12 s of the chain's end at p99 at
both; 8 and 16 slots left the client idle (about 40 and 63 passed), 128 passed no more (142-155
over 3)."""

_RECENT = 32
"""The estimate of how long a check takes is the median duration of this many latest checks: a
check is admitted when it is more likely than not to finish in time, and one slow check (a
retried request) does not refuse the queue behind it. Against a running mean (weight 0.2 for the
newest), the 300-run burst of ``truthguard bench guard`` passed 126-221 (mean 174, 4 of 5 runs
150 or more) instead of 123-183 (mean 153, 2 of 5), the two interleaved on one machine."""


@dataclass(frozen=True)
class Refusal:
    """Why a check was not admitted (it never started)."""

    reason: str
    """One sentence, starting "over capacity"."""
    waited: float
    """Seconds the check spent in the queue before it was refused."""
    queued: int
    """Checks ahead of it when it arrived."""


@dataclass(eq=False)
class _Waiter:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    deadline: float | None
    arrived: float
    ahead: int
    granted: bool = False
    refusal: Refusal | None = None


@dataclass
class CheckGate:
    """At most ``limit`` checks at once, admitted in arrival order, each within its deadline.

    Example:
        >>> import asyncio
        >>> gate = CheckGate(limit=1)
        >>> async def one():
        ...     refusal = await gate.enter(deadline=None)
        ...     gate.leave(0.1)
        ...     return refusal
        >>> asyncio.run(one()) is None
        True
    """

    limit: int
    """Most checks in flight at once."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _active: int = field(default=0, repr=False)
    _queue: deque[_Waiter] = field(default_factory=deque, repr=False)
    _seconds: float | None = field(default=None, repr=False)
    _recent: deque[float] = field(default_factory=lambda: deque(maxlen=_RECENT), repr=False)

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError(f"limit must be >= 1, got {self.limit}")

    @classmethod
    def bounding(cls, limit: int | None) -> CheckGate | None:
        """The gate of a guard's ``max_concurrent_checks``: None (no gate) for no bound."""
        return None if limit is None else cls(limit)

    @property
    def active(self) -> int:
        """Checks admitted and not yet finished."""
        return self._active

    @property
    def queued(self) -> int:
        """Checks waiting for a slot."""
        return len(self._queue)

    @property
    def check_seconds(self) -> float | None:
        """Estimate of how long one admitted check takes: the median of the latest checks'
        durations (None before the first)."""
        return self._seconds

    def expected_wait(self, ahead: int) -> float:
        """Seconds a check with ``ahead`` checks queued before it should wait for a slot."""
        if self._seconds is None:
            return 0.0
        # every slot frees once per check; the queue ahead and this check share ``limit`` slots
        return (ahead + 1) * self._seconds / self.limit

    async def enter(self, deadline: float | None) -> Refusal | None:
        """Wait for a slot; None once admitted (call :meth:`leave` after), else why not.

        ``deadline`` is a ``time.monotonic()`` instant by which the check must be done; None
        for none (the check then waits for its turn however long it takes).
        """
        arrived = time.monotonic()
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._active < self.limit and not self._queue:
                self._active += 1
                return None
            ahead = len(self._queue)
            waiter = _Waiter(loop, loop.create_future(), deadline, arrived, ahead)
            refusal = self._too_late(waiter, self.expected_wait(ahead), arrived)
            if refusal is not None:
                return refusal
            self._queue.append(waiter)
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), timeout)
        except (TimeoutError, asyncio.CancelledError) as e:
            with self._lock:
                decided = waiter.granted or waiter.refusal is not None
                if not decided:
                    self._queue.remove(waiter)
            if waiter.granted and isinstance(e, asyncio.CancelledError):
                self.leave(None)  # granted as the wait ended: give the slot back
            if isinstance(e, asyncio.CancelledError):
                raise
            if not decided:
                waited = time.monotonic() - arrived
                return Refusal(
                    f"over capacity: no check slot came free within the deadline "
                    f"({self.limit} checks in flight, {ahead} queued ahead of this one, "
                    f"waited {waited:.2f}s)",
                    waited=waited,
                    queued=ahead,
                )
        if waiter.refusal is not None:
            return waiter.refusal
        return None

    def leave(self, seconds: float | None) -> None:
        """Give a slot back; ``seconds`` is how long the check held it (None: it never ran).

        The slot goes to the first queued check that can still finish in time; those before
        it that no longer can (given how long checks have been taking) are refused.
        """
        with self._lock:
            now = time.monotonic()
            if seconds is not None:
                self._recent.append(seconds)
                self._seconds = statistics.median(self._recent)
            while self._queue:
                waiter = self._queue.popleft()
                if waiter.loop.is_closed():
                    continue
                # it would start now: refused when it could not finish in time
                waiter.refusal = self._too_late(waiter, 0.0, now)
                if waiter.refusal is None:
                    waiter.granted = True  # the slot passes straight to it: _active unchanged
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
                if waiter.granted:
                    return
            self._active -= 1

    def _too_late(self, waiter: _Waiter, wait: float, now: float) -> Refusal | None:
        """Why ``waiter``, started ``wait`` seconds from ``now``, would end past its deadline
        (given how long checks have been taking); None when it would not."""
        if waiter.deadline is None or self._seconds is None:
            return None
        left = waiter.deadline - now
        if wait + self._seconds <= left:
            return None
        waited = now - waiter.arrived
        if wait == 0.0 and waited > 0.0:
            why = (
                f"a check slot came free after {waited:.2f}s with {max(left, 0):.2f}s left of "
                f"the deadline, and a check takes about {self._seconds:.2f}s"
            )
        else:
            why = (
                f"{waiter.ahead} checks were queued ahead of this one for {self.limit} slots: "
                f"about {wait:.2f}s to wait plus {self._seconds:.2f}s to check, with "
                f"{max(left, 0):.2f}s left of the deadline"
            )
        return Refusal(f"over capacity: {why}", waited=waited, queued=waiter.ahead)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
