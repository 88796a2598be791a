"""Admission of checks: a bound on the checks in flight, taken in order, refused when late.

A guard checks an answer within its deadline (``check_timeout``). Under a burst more checks
start than the process can finish in that time; started together, they all finish late. A
:class:`CheckGate` lets at most ``limit`` checks run at once, queues the rest in arrival order
and refuses a check, before any work is spent on it, as soon as it cannot finish in time: when
the wait the queue ahead of it implies (from the time checks have been taking) plus one check
already exceeds what is left of its deadline, when a slot frees too late for it, or when its
deadline passes in the queue. A refusal says "over capacity" and why (:class:`Refusal`).

A busy loop fires timers late: a check cut off at its deadline comes back after it. Each
check is admitted, and cut off, as if its deadline came :func:`lag_margin` early: twice how late
the loop's heartbeat fires now (:func:`loop_lag`), read as the check arrives, at most a fifth of
its time (:data:`MAX_LAG_CUT`).

How long a check takes depends on what else the loop is doing: the guard's runs still in their
chain phase (:func:`running_chain`) and the checks in flight share it. A check measured while
more of them ran than run now is scaled down to the present load (:meth:`CheckGate.check_seconds`),
so the gate stops refusing checks that would finish once a burst's chains have ended. The
checks in flight are measured too, before they end: when most of them have been running for
longer than the checks measured so far took (a burst's first checks, which share the loop with
its chains, while the only check measured ran alone), the estimate is how long they have been
running, not the checks of a quieter time.

The gate is thread-safe and bound to no event loop: one guard may check from the caller's loop
and, for a sync ``invoke``, from truthguard's own.
"""

from __future__ import annotations

import asyncio
import bisect
import statistics
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_MAX_CONCURRENT_CHECKS",
    "CheckGate",
    "Refusal",
    "behind_inline_checks",
    "inline_check",
    "inline_checks",
    "lag_margin",
    "loop_lag",
    "running_chain",
]

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

_CHAIN_LOAD = 0.25
"""A run in its chain phase loads the checks' loop as a quarter of a check does: it mostly
waits for its model's reply. Measured on 12 traced 300-run bursts of ``truthguard bench guard``
(quiet and loaded machine): fitted by least squares, a check took 3-7 ms longer per chain in
flight and 8-45 ms per check in flight (0.13-0.64 of a check per chain). Replayed on those
traces, the estimate for each admitted check was more than 20% short of its duration for 10% of
them at a quarter, 26% at a half and 52% at a whole check (a short estimate admits checks
that then time out), and more than 25% over it for 32%, 25% and 20% (the median alone: 1%
short, 82% over)."""

_MARKS = 4096
"""Load changes kept to average the load over a check's life: a burst of 300 runs makes about
1,200 (each run's chain start and end, its check's admission and end)."""


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
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    """The time deadlines are given in (``time.monotonic``; tests pass their own)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _active: int = field(default=0, repr=False)
    _chains: int = field(default=0, repr=False)
    _queue: deque[_Waiter] = field(default_factory=deque, repr=False)
    _floor: float | None = field(default=None, repr=False)
    # when each check in flight was admitted (sorted; as many as are in flight)
    _started: list[float] = field(default_factory=list, repr=False)
    # (duration, mean load over it) of the latest checks
    _recent: deque[tuple[float, float]] = field(
        default_factory=lambda: deque(maxlen=_RECENT), repr=False
    )
    # (instant, load-seconds before it, load after it) at each change of the load
    _marks: list[tuple[float, float, float]] = field(default_factory=list, repr=False)

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
    def chains(self) -> int:
        """The guard's runs in their chain phase (:func:`running_chain`)."""
        return self._chains

    @property
    def load(self) -> float:
        """Work sharing the checks' loop now, in checks: those in flight and the runs in their
        chain phase, each counted as :data:`_CHAIN_LOAD` of a check."""
        return self._active + _CHAIN_LOAD * self._chains

    @property
    def check_seconds(self) -> float | None:
        """Estimate of how long a check admitted now takes (None before the first has ended).

        The median of the latest checks' durations, each brought to the present load: a check
        takes its floor (the shortest check seen: the network's part) plus its turns on a loop
        it shared with ``load`` runs on average, so a check that ran under more load than now
        counts as that part scaled by the present load over its own. One that ran under less
        counts as it was. At least the median time the checks in flight have been running:
        their durations are no shorter, and they run now.
        """
        with self._lock:
            return self._estimate()

    def expected_wait(self, ahead: int) -> float:
        """Seconds a check with ``ahead`` checks queued before it should wait for a slot."""
        with self._lock:
            return self._wait(ahead, self._estimate())

    def chain_started(self) -> None:
        """A run of the guard starts its chain phase: load on the loop its checks will share."""
        with self._lock:
            self._changed(self.clock(), chains=1)

    def chain_ended(self) -> None:
        """That run's chain phase ended (whether or not a check follows)."""
        with self._lock:
            self._changed(self.clock(), chains=-1)

    async def enter(self, deadline: float | None) -> Refusal | None:
        """Wait for a slot; None once admitted (call :meth:`leave` after), else why not.

        ``deadline`` is a ``time.monotonic()`` instant by which the check must be done; None
        for none (the check then waits for its turn however long it takes).
        """
        arrived = self.clock()
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._active < self.limit and not self._queue:
                self._changed(arrived, active=1)
                bisect.insort(self._started, arrived)
                return None
            ahead = len(self._queue)
            waiter = _Waiter(loop, loop.create_future(), deadline, arrived, ahead)
            seconds = self._estimate()
            refusal = self._too_late(waiter, self._wait(ahead, seconds), arrived, seconds)
            if refusal is not None:
                return refusal
            self._queue.append(waiter)
        timeout = None if deadline is None else max(0.0, deadline - self.clock())
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
                waited = self.clock() - arrived
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
            now = self.clock()
            self._ended(now, seconds)
            if seconds is not None:
                self._recent.append((seconds, self._mean_load(now - seconds, now)))
                self._floor = seconds if self._floor is None else min(self._floor, seconds)
            estimate = self._estimate()
            while self._queue:
                waiter = self._queue.popleft()
                if waiter.loop.is_closed():
                    continue
                # it would start now: refused when it could not finish in time
                waiter.refusal = self._too_late(waiter, 0.0, now, estimate)
                if waiter.refusal is None:
                    waiter.granted = True  # the slot passes straight to it: _active unchanged
                    bisect.insort(self._started, now)
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
                if waiter.granted:
                    return
            self._changed(now, active=-1)

    # -- under the lock ----------------------------------------------------------------------------

    def _changed(self, now: float, *, active: int = 0, chains: int = 0) -> None:
        """Record a change of the load at ``now``, for the mean load over a check's life."""
        area = 0.0
        if self._marks:
            since, before, load = self._marks[-1]
            area = before + load * max(0.0, now - since)
        self._active += active
        self._chains += chains
        self._marks.append((now, area, self.load))
        if len(self._marks) > 2 * _MARKS:
            del self._marks[:_MARKS]

    def _ended(self, now: float, seconds: float | None) -> None:
        """Forget the admission instant of a check that ended ``seconds`` after it (the nearest
        one kept; the latest when None: a check given a slot as its caller left)."""
        if not self._started:
            return
        if seconds is None:
            self._started.pop()
            return
        i = bisect.bisect_left(self._started, now - seconds)
        if i == len(self._started) or (
            i > 0 and now - seconds - self._started[i - 1] < self._started[i] - (now - seconds)
        ):
            i -= 1
        del self._started[i]

    def _mean_load(self, start: float, end: float) -> float:
        """The load averaged over ``start`` to ``end`` (at least 1: the check itself); from the
        oldest change kept when ``start`` is older."""
        start = max(start, self._marks[0][0]) if self._marks else end
        if end <= start:
            return 1.0
        return max(1.0, (self._area(end) - self._area(start)) / (end - start))

    def _area(self, t: float) -> float:
        """Load-seconds from the oldest change kept to ``t``, at or after it."""
        since, before, load = self._marks[bisect.bisect_right(self._marks, t, key=_instant) - 1]
        return before + load * (t - since)

    def _estimate(self) -> float | None:
        if not self._recent or self._floor is None:
            return None
        # what a check admitted now shares the loop with: the chains, and the checks in flight
        # with it among them (a queued check takes the slot of one that ends)
        now = min(self._active + 1, self.limit) + _CHAIN_LOAD * self._chains
        floor = self._floor
        measured = statistics.median(
            floor + (seconds - floor) * min(1.0, now / load) for seconds, load in self._recent
        )
        if not self._started:
            return measured
        # the checks in flight take at least as long as they have been running
        return max(measured, self.clock() - statistics.median(self._started))

    def _wait(self, ahead: int, seconds: float | None) -> float:
        if seconds is None:
            return 0.0
        # every slot frees once per check; the queue ahead and this check share ``limit`` slots
        return (ahead + 1) * seconds / self.limit

    def _too_late(
        self, waiter: _Waiter, wait: float, now: float, seconds: float | None
    ) -> Refusal | None:
        """Why ``waiter``, started ``wait`` seconds from ``now``, would end past its deadline
        when a check takes ``seconds``; None when it would not."""
        if waiter.deadline is None or seconds is None:
            return None
        left = waiter.deadline - now
        if wait + seconds <= left:
            return None
        waited = now - waiter.arrived
        if wait == 0.0 and waited > 0.0:
            why = (
                f"a check slot came free after {waited:.2f}s with {max(left, 0):.2f}s left of "
                f"the deadline, and a check takes about {seconds:.2f}s"
            )
        else:
            why = (
                f"{waiter.ahead} checks were queued ahead of this one for {self.limit} slots: "
                f"about {wait:.2f}s to wait plus {seconds:.2f}s to check, with "
                f"{max(left, 0):.2f}s left of the deadline"
            )
        return Refusal(f"over capacity: {why}", waited=waited, queued=waiter.ahead)


@contextmanager
def running_chain(gate: CheckGate | None) -> Iterator[None]:
    """Count a guard run's chain phase as load on ``gate``'s loop (nothing without a gate)."""
    if gate is None:
        yield
        return
    gate.chain_started()
    try:
        yield
    finally:
        gate.chain_ended()


def _instant(mark: tuple[float, float, float]) -> float:
    return mark[0]


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# -- in-line checks first: background scoring waits for them ------------------------------------

_inline_lock = threading.Lock()
_inline = 0

_YIELD_POLL = 0.02
"""Seconds between looks at the in-line checks by background work waiting for them."""


@contextmanager
def inline_check() -> Iterator[None]:
    """Count a guard's check of one answer (queued or running) as in-line work of this
    process, which background scoring gives way to (:func:`behind_inline_checks`)."""
    global _inline
    with _inline_lock:
        _inline += 1
    try:
        yield
    finally:
        with _inline_lock:
            _inline -= 1


def inline_checks() -> int:
    """The guards' checks queued or running in this process now."""
    return _inline


async def behind_inline_checks(timeout: float | None) -> float | None:
    """Wait until no guard's check is queued or running in this process; the seconds waited,
    or None when ``timeout`` passed first (the background work is then shed).

    A callback handler scores answers in the background; a guard checks them in-line, within a
    user's deadline. Both share this process's CPU and, often, one model client, so under a burst
    the background checks would take time from the in-line ones. They start only in a lull.
    """
    started = time.monotonic()
    while _inline > 0:
        waited = time.monotonic() - started
        if timeout is not None and waited >= timeout:
            return None
        await asyncio.sleep(_YIELD_POLL)
    return time.monotonic() - started


# -- how late the loop runs its timers now -----------------------------------------------------

_BEAT = 0.02
"""Seconds between a loop's heartbeats while checks read its lag."""

_LAG_WINDOW = 0.5
"""The lag is the latest heartbeat's lateness, or the largest over this many seconds."""

_IDLE_STOP = 2.0
"""A heartbeat stops this many seconds after the lag was last read."""


class _Heartbeat:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.beats: deque[tuple[float, float]] = deque(maxlen=64)  # (woke at, seconds late)
        self.read_at = time.monotonic()
        self.running = False

    def start(self) -> None:
        if not self.running:
            self.running = True
            self.loop.call_later(_BEAT, self._beat, time.monotonic() + _BEAT)

    def _beat(self, due: float) -> None:
        now = time.monotonic()
        self.beats.append((now, max(0.0, now - due)))
        if now - self.read_at > _IDLE_STOP:
            self.running = False
            return
        self.loop.call_later(_BEAT, self._beat, now + _BEAT)

    def lag(self) -> float:
        now = time.monotonic()
        self.read_at = now
        self.start()
        recent = [late for at, late in self.beats if now - at <= _LAG_WINDOW]
        return max(recent, default=0.0)


_heartbeats: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Heartbeat] = (
    weakref.WeakKeyDictionary()
)


def loop_lag() -> float:
    """Seconds the running loop's timers fire late now: the largest lateness of its heartbeats
    over the last half second (0.0 until it has beaten; the heartbeat starts on the first read
    and stops after two seconds unread)."""
    loop = asyncio.get_running_loop()
    beat = _heartbeats.get(loop)
    if beat is None:
        beat = _heartbeats[loop] = _Heartbeat(loop)
    return beat.lag()


LAG_MARGIN = 2.0
"""A check is admitted, and cut off, as if its deadline came this many times the loop's
current lag (:func:`loop_lag`) early: the cut-off's timer fires that late on a busy loop, and
the result takes about as long again to come back through it. The 300-run burst of
``truthguard bench guard --burst 300 --burst-pool 32`` on a 2-core machine loaded by other work
(load average 8-13), 11 runs interleaved with runs without the margin: after-chain p99 lower in
10 of the 11 pairs (mean 2.34 s against 2.80 s), 74 answers passing on average against 66."""

MAX_LAG_CUT = 0.2
"""The most of a check's time its margin takes (the lag margin, and the guard's grace for a
cancelled detector to stop): at its admission as at its cut-off. A passing peak of the lag (a
burst's chains starting together stall the loop for half a second) must not refuse every check
that arrives meanwhile when the cut-off it would get leaves it four fifths of its time."""


def lag_margin(timeout: float | None = None) -> float:
    """Seconds a check's deadline is brought forward on the running loop now:
    :data:`LAG_MARGIN` times its :func:`loop_lag`, at most :data:`MAX_LAG_CUT` of ``timeout``
    when one is given."""
    margin = LAG_MARGIN * loop_lag()
    return margin if timeout is None else min(margin, MAX_LAG_CUT * timeout)
