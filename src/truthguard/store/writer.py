"""The thread that writes a store's queued artifacts, many writes per upsert (group commit)."""

from __future__ import annotations

import concurrent.futures
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from truthguard.errors import ConfigurationError

__all__ = ["_PendingWrite", "_Writer"]


@dataclass
class _PendingWrite:
    """One artifact waiting for the store's writer thread."""

    id: str
    question: str
    document: str
    metadata: dict[str, Any]


class _Writer:
    """The thread that stores a store's queued artifacts, many writes per upsert.

    It holds the store only through a weak reference (a store nobody uses any more is still
    collected, and its in-memory collections dropped) and stops after a second without work.
    """

    IDLE_SECONDS = 1.0

    def __init__(self, flush: weakref.WeakMethod[Any]) -> None:
        self._flush = flush
        self._cond = threading.Condition()
        self._pending: list[tuple[list[_PendingWrite], concurrent.futures.Future[None]]] = []
        self._running = False
        self._pid = 0

    def submit(self, writes: list[_PendingWrite]) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not writes:
            future.set_result(None)
            return future
        with self._cond:
            if self._pid != os.getpid():  # a forked child has no writer thread
                self._pid, self._running, self._pending = os.getpid(), False, []
            self._pending.append((writes, future))
            if not self._running:
                self._running = True
                threading.Thread(
                    target=self._run, name="truthguard-store-writer", daemon=True
                ).start()
            self._cond.notify()
        return future

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending:
                    self._cond.wait(self.IDLE_SECONDS)
                if not self._pending:
                    self._running = False
                    return
                batch, self._pending = self._pending, []
            flush = self._flush()
            error: BaseException | None = None
            try:
                if flush is None:
                    raise ConfigurationError("the artifact store was closed before its writes")
                flush([w for writes, _ in batch for w in writes])
            except BaseException as e:  # the thread must outlive a failed write: report it
                error = e
            finally:
                # let go of the store before waking its waiters: one may drop it at once, and
                # its private collections go with it only when nothing else holds it
                del flush
            for _, future in batch:
                _settle(future, error)


def _settle(future: concurrent.futures.Future[None], error: BaseException | None) -> None:
    try:
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
    except concurrent.futures.InvalidStateError:
        pass  # its waiter was cancelled: nobody to tell
