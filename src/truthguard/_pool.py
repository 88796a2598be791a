"""A bounded pool of daemon threads whose abandoned calls give their slot back.

``concurrent.futures.ThreadPoolExecutor`` is the wrong pool for a sync call a deadline gives up
on: its threads are joined at interpreter exit (a process that printed its result waits for a
hung request), and an abandoned call keeps its worker, so once every worker holds one the next
healthy call queues behind them. Here:

* threads are daemons, so neither exit nor anyone else waits for an abandoned call;
* at most ``max_workers`` calls run that someone still waits for; cancelling the future of a
  running call (``asyncio`` does when the awaiting task is cancelled) abandons it: its thread
  carries on until the call ends by itself, but its slot goes to the next call at once;
* idle threads exit after :data:`IDLE_SECONDS`.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_SECONDS", "DaemonPool"]

IDLE_SECONDS = 30.0
"""An idle worker exits after this long without work."""


class _Call(concurrent.futures.Future[Any]):
    """A future whose ``cancel`` on a running call abandons it (the pool frees its slot)."""

    def __init__(self, pool: DaemonPool) -> None:
        super().__init__()
        self._pool = pool
        self.abandoned = False

    def cancel(self) -> bool:
        if super().cancel():
            return True
        self._pool._abandon(self)
        return False


class DaemonPool(concurrent.futures.Executor):
    """Daemon worker threads running at most ``max_workers`` calls that are still awaited.

    Example:
        >>> pool = DaemonPool(4, "example")
        >>> pool.submit(sum, [1, 2]).result()
        3
    """

    def __init__(self, max_workers: int, name: str) -> None:
        self.max_workers = max_workers
        self.name = name
        self._cond = threading.Condition()
        self._queue: collections.deque[tuple[_Call, Callable[..., Any], tuple, dict]] = (
            collections.deque()
        )
        self._live = 0  # running calls someone waits for
        self._idle = 0  # threads waiting for work
        self._threads = 0
        self._started = 0

    @property
    def threads(self) -> int:
        """Worker threads alive now (abandoned calls' included)."""
        return self._threads

    @property
    def running(self) -> int:
        """Calls running that someone still waits for."""
        return self._live

    def grow(self, max_workers: int) -> None:
        """Raise the bound to ``max_workers`` (never lowers it)."""
        with self._cond:
            if max_workers > self.max_workers:
                self.max_workers = max_workers
                self._spawn_if_needed()
                self._cond.notify_all()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> _Call:
        future = _Call(self)
        with self._cond:
            self._queue.append((future, fn, args, kwargs))
            self._spawn_if_needed()
            self._cond.notify()
        return future

    def _spawn_if_needed(self) -> None:
        # Called under the lock: a thread for each queued call that may run now and has none.
        runnable = min(len(self._queue), self.max_workers - self._live)
        while self._idle < runnable:
            self._idle += 1
            self._threads += 1
            self._started += 1
            threading.Thread(
                target=self._work, name=f"{self.name}_{self._started}", daemon=True
            ).start()

    def _abandon(self, future: _Call) -> None:
        with self._cond:
            if future.running() and not future.abandoned:
                future.abandoned = True
                self._live -= 1
                self._spawn_if_needed()
                self._cond.notify()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not (self._queue and self._live < self.max_workers):
                    if not self._cond.wait(IDLE_SECONDS) and not (
                        self._queue and self._live < self.max_workers
                    ):
                        self._idle -= 1
                        self._threads -= 1
                        return
                self._idle -= 1
                self._live += 1
                future, fn, args, kwargs = self._queue.popleft()
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as e:  # handed to whoever waits, as the stdlib pool does
                    future.set_exception(e)
                else:
                    future.set_result(result)
            del fn, args, kwargs
            with self._cond:
                if not future.abandoned:
                    self._live -= 1
                self._idle += 1
                self._cond.notify()
            del future
