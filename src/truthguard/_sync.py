"""Drive a coroutine from synchronous code without ``asyncio.run``.

``asyncio.run`` fails inside a running loop (Jupyter, async web apps). Instead, sync entry points
submit their coroutine to one daemon thread that owns a long-lived event loop, and block on the
future. The detectors' logic is written once, as async code.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _portal_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="truthguard-sync-portal", daemon=True
            )
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the portal loop and return its result."""
    loop = _portal_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # pragma: no cover - would deadlock; a programming error
        coro.close()
        raise RuntimeError("run_sync() called from the portal loop itself; await instead")
    return asyncio.run_coroutine_threadsafe(coro, loop).result()
