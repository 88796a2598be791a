"""One event-loop story: drive async logic from sync code without touching the user's loops.

``asyncio.run`` fails inside a running loop (Jupyter, async web apps) and closes its loop when it
returns, which strands whatever was bound to it. So:

* sync entry points (``invoke``, ``check``, ``batch``) submit their coroutine to one long-lived
  *portal* loop on a daemon thread and block on the future; the portal is never closed;
* on the portal (and on any other loop truthguard owns, such as a callback handler's), model calls
  go through the model's **sync** API on worker threads (:func:`call_executor`). The user's async
  clients (an ``httpx.AsyncClient`` pool cached per base URL, as ``langchain-openai`` does) are
  never bound to a truthguard loop, so ``asyncio.run(model.ainvoke(...))`` still works afterwards
  and nothing breaks when a truthguard loop stops;
* async entry points (``ainvoke``, ``acheck``, ``abatch``) run on the caller's loop and use the
  model's async API there, as the caller would.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
import weakref
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

__all__ = [
    "call_executor",
    "invoke_user",
    "mark_private",
    "on_private_loop",
    "run_sync",
    "stream_user",
    "submit",
]

T = TypeVar("T")

# Threads that own a truthguard event loop carry this prefix (the portal, a handler's scorer).
THREAD_PREFIX = "truthguard-"

_loop: asyncio.AbstractEventLoop | None = None
_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_size = 0
_lock = threading.Lock()
_private: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def mark_private(loop: asyncio.AbstractEventLoop) -> None:
    """Declare ``loop`` truthguard's own: model calls made on it use the sync API."""
    _private.add(loop)


def on_private_loop() -> bool:
    """True when the running loop belongs to truthguard rather than to the user."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return loop in _private or threading.current_thread().name.startswith(THREAD_PREFIX)


MIN_CALL_THREADS = 64


def call_executor(workers: int = MIN_CALL_THREADS) -> concurrent.futures.ThreadPoolExecutor:
    """Worker threads for sync model calls made from truthguard's loops, at least ``workers``.

    A loop's default executor (``min(32, cpus + 4)`` threads) would queue a check's concurrent
    calls behind each other and eat their time-outs, and so would any fixed size below the
    session's own bound. So the pool holds as many threads as the largest ``workers`` asked for
    (callers pass their session's ``max_concurrency``; never fewer than 64). Threads start only
    when calls are waiting. When a larger pool is needed it replaces the current one, whose
    queued calls still run and whose threads exit once it is drained.
    """
    global _executor, _executor_size
    workers = max(MIN_CALL_THREADS, workers)
    with _lock:
        if _executor is None or _executor_size < workers:
            old, _executor = (
                _executor,
                concurrent.futures.ThreadPoolExecutor(
                    max_workers=workers, thread_name_prefix=f"{THREAD_PREFIX}call"
                ),
            )
            _executor_size = workers
            if old is not None:
                old.shutdown(wait=False)
        return _executor


def _portal_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            mark_private(loop)
            thread = threading.Thread(
                target=loop.run_forever, name=f"{THREAD_PREFIX}sync-portal", daemon=True
            )
            thread.start()
            _loop = loop
        return _loop


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on the portal loop and return a thread-safe future (never blocks)."""
    return asyncio.run_coroutine_threadsafe(coro, _portal_loop())


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the portal loop and return its result.

    A ``KeyboardInterrupt`` (or any exception) while waiting cancels the coroutine, so it does not
    keep running on the portal after the caller gave up.
    """
    loop = _portal_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # pragma: no cover - would deadlock; a programming error
        coro.close()
        raise RuntimeError("run_sync() called from the portal loop itself; await instead")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def has_sync_path(runnable: Any) -> bool:
    """False for a ``RunnableLambda`` over an async function only (it has no sync ``invoke``)."""
    from langchain_core.runnables import RunnableLambda

    return not (isinstance(runnable, RunnableLambda) and getattr(runnable, "func", None) is None)


async def invoke_user(runnable: Any, input: Any, config: Any) -> Any:
    """Run a user's chain or model as its caller would: ``ainvoke`` on the caller's loop; on
    truthguard's own loops (a sync entry point) its sync ``invoke`` on a worker thread, so its
    async clients never bind to a truthguard loop. Context variables (the ambient config) go
    with it. Cancelling abandons the thread's call, which ends on its own."""
    if not (on_private_loop() and has_sync_path(runnable)):
        return await runnable.ainvoke(input, config)
    loop = asyncio.get_running_loop()
    ctx = contextvars.copy_context()
    fn = functools.partial(ctx.run, runnable.invoke, input, config)
    return await loop.run_in_executor(call_executor(), fn)


_DONE = object()


async def stream_user(runnable: Any, input: Any, config: Any) -> AsyncIterator[Any]:
    """:func:`invoke_user` for streams: ``astream`` on the caller's loop; on truthguard's loops
    the sync ``stream`` on a worker thread, its chunks handed over one by one. Closing the
    iterator stops the thread's stream at its next chunk (and closes it there)."""
    if not (on_private_loop() and has_sync_path(runnable)):
        stream = runnable.astream(input, config)
        try:
            async for chunk in stream:
                yield chunk
        finally:
            await stream.aclose()
        return
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()
    ctx = contextvars.copy_context()

    def put(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: nobody is listening
            stop.set()

    def pump() -> None:
        try:
            it = runnable.stream(input, config)
            try:
                for chunk in it:
                    if stop.is_set():
                        break
                    put((chunk, None))
            finally:
                close = getattr(it, "close", None)
                if close is not None:
                    close()
        except BaseException as e:  # handed to the consumer, raised there
            put((_DONE, e))
        else:
            put((_DONE, None))

    future = loop.run_in_executor(call_executor(), functools.partial(ctx.run, pump))
    try:
        while True:
            item, error = await queue.get()
            if item is _DONE:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        if future.done():
            future.exception()  # retrieved: pump() never raises, but be sure
