"""One event-loop story: drive async logic from sync code without touching the user's loops.

``asyncio.run`` fails inside a running loop (Jupyter, async web apps) and closes its loop when it
returns, which strands whatever was bound to it. So:

* sync entry points (``invoke``, ``check``, ``batch``) submit their coroutine to one long-lived
  *portal* loop on a daemon thread and block on the future; the portal is never closed;
* on the portal (and on any other loop truthguard owns, such as a callback handler's), model calls
  go through the model's **sync** API on daemon worker threads (a check's calls on
  :func:`call_executor`, the user's chain on :func:`chain_executor`). The user's async
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
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

from truthguard._pool import DaemonPool

__all__ = [
    "CALL_DEADLINE",
    "call_executor",
    "chain_executor",
    "invoke_user",
    "mark_private",
    "on_private_loop",
    "run_sync",
    "stream_user",
    "submit",
    "time_left",
]

T = TypeVar("T")

# Threads that own a truthguard event loop carry this prefix (the portal, a handler's scorer).
THREAD_PREFIX = "truthguard-"

_loop: asyncio.AbstractEventLoop | None = None
_executor: DaemonPool | None = None
_chain_executor: DaemonPool | None = None
_lock = threading.Lock()
_private: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

CALL_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "truthguard_call_deadline", default=None
)
"""When (``time.monotonic()``) the check making a model call gives up on it (set by the guards'
``run_detector``): a sync call on a worker thread is sent with no longer a request time-out, so
the request itself ends there instead of holding a thread and a pooled connection after the
check was abandoned."""


def time_left() -> float | None:
    """Seconds until :data:`CALL_DEADLINE`, never below 10 ms; None when no deadline is set."""
    deadline = CALL_DEADLINE.get()
    return None if deadline is None else max(0.01, deadline - time.monotonic())


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


def call_executor(workers: int = MIN_CALL_THREADS) -> DaemonPool:
    """Worker threads for the sync model calls of checks made on truthguard's loops.

    A loop's default executor (``min(32, cpus + 4)`` threads) would queue a check's concurrent
    calls behind each other and eat their time-outs, and so would any fixed size below the
    session's own bound. So the pool runs as many calls at once as the largest ``workers`` asked
    for (callers pass their session's ``max_concurrency``; never fewer than 64). It is not the
    pool the user's chain runs on (:func:`chain_executor`), its threads are daemons, and a call
    its check gave up on frees its slot at once (:class:`~truthguard._pool.DaemonPool`): a
    checker that hangs neither delays the next chain or check nor holds the process at exit.
    """
    global _executor
    workers = max(MIN_CALL_THREADS, workers)
    with _lock:
        if _executor is None:
            _executor = DaemonPool(workers, f"{THREAD_PREFIX}call")
        else:
            _executor.grow(workers)
        return _executor


def chain_executor() -> DaemonPool:
    """Worker threads for the user's chains and models run from truthguard's loops (a sync
    entry point's chain call), apart from the checks' pool, with the same daemon threads."""
    global _chain_executor
    with _lock:
        if _chain_executor is None:
            _chain_executor = DaemonPool(MIN_CALL_THREADS, f"{THREAD_PREFIX}chain")
        return _chain_executor


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


def run_sync(coro: Coroutine[Any, Any, T], *, context: contextvars.Context | None = None) -> T:
    """Run ``coro`` to completion on the portal loop and return its result.

    A ``KeyboardInterrupt`` (or any exception) while waiting cancels the coroutine, so it does not
    keep running on the portal after the caller gave up. ``context``: run it in that context
    (not a copy of the caller's): the steps of one async generator driven one ``run_sync`` at a
    time then share their context variables, as they would under one ``async for``.
    """
    loop = _portal_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # pragma: no cover - would deadlock; a programming error
        coro.close()
        raise RuntimeError("run_sync() called from the portal loop itself; await instead")
    if context is not None:
        coro = _in_context(coro, context)
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


async def _in_context(coro: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    # awaited, so cancelling this task cancels the inner one
    return await asyncio.get_running_loop().create_task(coro, context=context)


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
    return await loop.run_in_executor(chain_executor(), fn)


_DONE = object()


class StreamStopped(Exception):
    """Raised inside a chain's model stream once its consumer has stopped reading."""


class _NotStops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "StreamStopped" not in record.getMessage()


_stops_quiet = False


def _quiet_stops() -> None:
    """LangChain logs every error a callback raises, ours included: not a stop, which is no
    error (the consumer left)."""
    global _stops_quiet
    with _lock:
        if not _stops_quiet:
            logging.getLogger("langchain_core.callbacks.manager").addFilter(_NotStops())
            _stops_quiet = True


def _with_stop(config: Any, stop: threading.Event) -> Any:
    """``config`` with a handler that stops the chain's model streams once ``stop`` is set.

    Closing a LangChain sequence's sync stream does not close its model's: each step's
    generator swallows the close and reads its input to the end (the whole answer generated
    and billed). An error raised in the model's own token callback does stop it: the model's
    stream ends there, its HTTP response is closed, and the error unwinds the chain.
    """
    from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager

    class _Stop(BaseCallbackHandler):
        raise_error = True
        run_inline = True

        def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
            if stop.is_set():
                raise StreamStopped("the stream's consumer stopped reading")

    _quiet_stops()
    handler = _Stop()
    config = dict(config or {})
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.copy()
        callbacks.add_handler(handler, inherit=True)
    else:
        callbacks = [*(callbacks or []), handler]
    config["callbacks"] = callbacks
    return config


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
    config = _with_stop(config, stop)

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
        except StreamStopped:  # the consumer left: nobody to tell
            pass
        except BaseException as e:  # handed to the consumer, raised there
            put((_DONE, e))
        else:
            put((_DONE, None))

    future = loop.run_in_executor(chain_executor(), functools.partial(ctx.run, pump))
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
