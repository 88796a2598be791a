"""The model calls in flight in this process, by artifact id, so concurrent checks share one."""

from __future__ import annotations

import concurrent.futures
import threading

__all__ = ["InflightCalls"]


class InflightCalls:
    """Artifact id -> the future of the call producing it, for calls in flight in this process.

    The first caller to :meth:`join` an id leads (it makes the call and settles the future);
    later callers get the leader's future until the leader :meth:`forget`\\ s the id. A plain
    lock guards the map, so callers on any thread or event loop share it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[str, concurrent.futures.Future[str]] = {}

    def join(self, aid: str) -> tuple[concurrent.futures.Future[str], bool]:
        """The future of the call producing ``aid``, and whether this caller leads it."""
        with self._lock:
            leader = self._futures.get(aid)
            if leader is not None:
                return leader, False
            future: concurrent.futures.Future[str] = concurrent.futures.Future()
            self._futures[aid] = future
            return future, True

    def forget(self, aid: str) -> None:
        """The call for ``aid`` is over: the next caller leads a new one."""
        with self._lock:
            self._futures.pop(aid, None)
