"""Who retries a call truthguard makes: the session, never the model's client behind its back.

A client that retries by itself (``ChatOpenAI``'s ``max_retries``, a ``with_retry()`` wrapper)
does so inside one ``invoke``. On truthguard's own loops that ``invoke`` runs on a worker thread
that no deadline can stop, so a check that returned at its deadline left its calls retrying for
seconds afterwards. So the session owns the retries of the calls it makes: it calls a *twin* of
the model whose client sends one request per call, and retries as often as the client would have
(or ``LLMSettings.max_retries``), which stops the moment the check is cancelled.

The user's model is never changed. The twin is a shallow copy that shares its connection pool,
rate limiter, callbacks and every setting but the retry count (and a request time-out no longer
than the session's per attempt), made once per model (and again if the model's fields change).
"""

from __future__ import annotations

import email.utils
import math
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_RETRIES",
    "CallPlan",
    "call_plan",
    "own_retries",
    "retry_delay",
    "retryable",
    "sdk_root",
    "with_timeout",
]

DEFAULT_RETRIES = 2
"""Retries of a model that does not retry by itself (and of one the session retries for)."""

MAX_RETRY_AFTER = 60.0
"""A server asking to wait longer than this (``Retry-After``) is not retried."""

_RETRY_STATUS = frozenset({408, 409, 429})  # the 4xx worth retrying; every 5xx is


@dataclass(frozen=True)
class CallPlan:
    """How the session calls one model: what it invokes and how often it may retry."""

    runnable: Any
    """The model to invoke: the user's, or its twin without retries of its own."""
    retries: int
    """Extra attempts the session makes."""
    retry_on: tuple[type[BaseException], ...] = (Exception,)
    """Exceptions a retry is made for (a ``with_retry()`` wrapper's ``retry_exception_types``)."""


def call_plan(model: Any, max_retries: int | None, timeout: float | None = None) -> CallPlan:
    """The twin to call and the retries to make for ``model`` (see ``LLMSettings.max_retries``).

    A model whose own retries can be turned off is called through its twin and the session
    retries as often as the model would have (or ``max_retries``). One whose retries cannot be
    turned off keeps them, and the session adds none unless ``max_retries`` says so. The twin's
    requests also end at ``timeout`` (the session's limit per attempt) when the client's own
    limit is longer or unset (``ChatOpenAI``'s default), so a call abandoned on a worker thread
    ends with its attempt instead of holding the thread for good.
    """
    own = own_retries(model)
    if own == 0 and sdk_root(model) is None:  # nothing to turn off: the model itself
        return CallPlan(model, DEFAULT_RETRIES if max_retries is None else max_retries)
    twin = _twin(model, timeout)
    if twin is None:
        return CallPlan(model, 0 if max_retries is None else max_retries)
    runnable, retry_on = twin
    retries = (own or DEFAULT_RETRIES) if max_retries is None else max_retries
    return CallPlan(runnable, retries, retry_on)


def sdk_root(model: Any) -> Any:
    """The SDK client (``root_client``) of the chat model under any bindings, if it has one."""
    from langchain_core.runnables.base import RunnableBindingBase

    for _ in range(_MAX_LAYERS):
        if not isinstance(model, RunnableBindingBase):
            root = getattr(model, "root_client", None)
            return root if callable(getattr(root, "with_options", None)) else None
        model = model.bound
    return None


def own_retries(model: Any) -> int:
    """Retries ``model`` makes by itself, all layers together (``ChatOpenAI.max_retries``, a
    ``with_retry()`` wrapper, through ``bind`` / ``with_config`` bindings)."""
    from langchain_core.runnables.base import RunnableBindingBase
    from langchain_core.runnables.retry import RunnableRetry

    attempts = 1
    for _ in range(_MAX_LAYERS):
        if isinstance(model, RunnableRetry):
            attempts *= max(1, model.max_attempt_number)
        if not isinstance(model, RunnableBindingBase):
            n = _client_retries(model)
            return attempts * (n + 1) - 1 if n is not None else attempts - 1
        model = model.bound
    return attempts - 1


_MAX_LAYERS = 4


def _client_retries(model: Any) -> int | None:
    n = getattr(model, "max_retries", None)
    if n is None and hasattr(model, "max_retries"):  # ChatOpenAI: None = the SDK's default
        n = getattr(getattr(model, "root_client", None), "max_retries", None)
    if isinstance(n, int) and not isinstance(n, bool):
        return max(0, n)
    return None


# Twins by (id(model), timeout), with a weak reference that drops the entries when the model goes
# away, and the model's fields as they were when the twin was made (a changed field makes a new
# twin).
_Twin = tuple[Any, tuple[type[BaseException], ...]]  # the model to call, what to retry on
_twins: dict[tuple[int, float | None], tuple[dict[str, Any], _Twin]] = {}
_lock = threading.Lock()


def _twin(model: Any, timeout: float | None) -> _Twin | None:
    fields = getattr(model, "__dict__", None)
    if fields is None:
        return None
    key = (id(model), timeout)
    entry = _twins.get(key)
    if entry is not None and _same(entry[0], fields):
        return entry[1]
    built = _build_twin(model, timeout, 0)
    if built is None:
        return None
    with _lock:
        if key not in _twins:
            try:
                weakref.finalize(model, _twins.pop, key, None)
            except TypeError:  # not weak-referenceable: built each time
                return built
        _twins[key] = (dict(fields), built)
    return built


def _same(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return len(old) == len(new) and all(new.get(k, _MISSING) is v for k, v in old.items())


_MISSING = object()


def _build_twin(model: Any, timeout: float | None, depth: int) -> _Twin | None:
    from langchain_core.runnables.base import RunnableBindingBase
    from langchain_core.runnables.retry import RunnableRetry

    if depth >= _MAX_LAYERS:
        return None
    if not isinstance(model, RunnableBindingBase):  # a binding forwards root_client to its model
        root = getattr(model, "root_client", None)
        if root is not None and callable(getattr(root, "with_options", None)):
            return _openai_twin(model, root, timeout), (Exception,)
        return (model, (Exception,)) if not _client_retries(model) else None
    inner = _build_twin(model.bound, timeout, depth + 1)
    if inner is None:
        return None
    runnable, retry_on = inner
    if isinstance(model, RunnableRetry):  # its attempts become the session's
        return runnable, tuple(model.retry_exception_types or (Exception,))
    return model.model_copy(update={"bound": runnable}), retry_on


def with_timeout(model: Any, timeout: float) -> Any:
    """``model`` (an OpenAI-SDK chat model under any bindings) with requests that end within
    ``timeout`` seconds: a copy whose client has that time-out. Nothing is added to the call's
    arguments, which a LangChain LLM cache (``set_llm_cache``) keys on: a ``bind(timeout=...)``
    of the time left would give every call a key of its own, so none would hit the cache."""
    built = _build_twin(model, timeout, 0)
    return model.bind(timeout=timeout) if built is None else built[0]


def _openai_twin(model: Any, root: Any, timeout: float | None) -> Any:
    # The SDK's documented per-request override: a client copy sharing the HTTP pool.
    limit = _bounded(getattr(root, "timeout", None), timeout)
    if getattr(root, "max_retries", None) == 0 and limit is getattr(root, "timeout", None):
        return model  # nothing to change
    update: dict[str, Any] = {"max_retries": 0}
    update["root_client"] = sync = root.with_options(max_retries=0, timeout=limit)
    update["client"] = sync.chat.completions
    aroot = getattr(model, "root_async_client", None)
    if aroot is not None and callable(getattr(aroot, "with_options", None)):
        alimit = _bounded(getattr(aroot, "timeout", None), timeout)
        update["root_async_client"] = async_ = aroot.with_options(max_retries=0, timeout=alimit)
        update["async_client"] = async_.chat.completions
    return model.model_copy(update=update)


def _bounded(current: Any, limit: float | None) -> Any:
    """The client's time-out, no longer than ``limit`` (an ``httpx.Timeout`` the user set up
    field by field is kept as it is)."""
    if limit is None:
        return current
    if current is None:
        return limit
    if isinstance(current, int | float) and not isinstance(current, bool):
        return current if current <= limit else limit
    return current


def retryable(exc: BaseException, retry_on: tuple[type[BaseException], ...]) -> bool:
    """Whether another attempt may succeed where ``exc`` failed.

    Errors that carry an HTTP response are retried as the OpenAI client retries them: not a
    refused request (4xx) other than a time-out, conflict or rate limit (408, 409, 429); as the
    server's ``x-should-retry`` says; never when it asks for a wait longer than
    :data:`MAX_RETRY_AFTER`. Every other error is retried (a bad body, a dropped connection).
    """
    if not isinstance(exc, retry_on):
        return False
    headers = _headers(exc)
    should = headers.get("x-should-retry") if headers is not None else None
    if should in ("true", "false"):
        return should == "true"
    wait = _retry_after(headers)
    if wait is not None and wait > MAX_RETRY_AFTER:
        return False
    status = _status(exc)
    # A 2xx whose body was unreadable is worth another try; a refused request is not.
    return status is None or not 400 <= status < 500 or status in _RETRY_STATUS


def retry_delay(exc: BaseException, backoff: float) -> float:
    """Seconds to wait before the next attempt: the server's ``Retry-After``, else ``backoff``."""
    wait = _retry_after(_headers(exc))
    return backoff if wait is None else wait


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _headers(exc: BaseException) -> Any:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers if headers is not None and callable(getattr(headers, "get", None)) else None


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return _finite(float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return _finite(float(value))
        except ValueError:
            when = email.utils.parsedate_tz(value)
            return None if when is None else _finite(email.utils.mktime_tz(when) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _finite(seconds: float) -> float | None:
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
