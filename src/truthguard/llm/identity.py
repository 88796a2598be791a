"""What counts as a model, and the stable name of one (used in cache keys).

Plain callables are named by their code and what they are bound to, so two closures over
different models never share cached outputs.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import warnings
import weakref
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda

from truthguard.errors import InvalidInputError

__all__ = ["ModelLike", "as_runnable", "model_id"]

ModelLike = Runnable[Any, Any]


def as_runnable(model: Any, *, field: str = "model") -> Runnable[Any, Any]:
    """Accept a chat model, any Runnable, or a plain callable ``str -> str``."""
    if isinstance(model, Runnable):
        return model
    if callable(model):
        return RunnableLambda(model)
    raise InvalidInputError(
        field, f"expected a LangChain chat model, Runnable or callable, got {type(model).__name__}"
    )


_NAME_ATTRS = ("model_name", "model", "model_id", "deployment_name")
_warned_ids: set[str] = set()


def model_id(model: Any) -> str:
    """A stable name for a model, used in cache keys (class name plus model name).

    Plain callables are named by their qualified name, a digest of their code, and what they are
    bound to (``functools.partial`` arguments, closure cells, defaults), so two partials or
    closures over different models never share cached outputs. A bound value with no stable
    identity (an arbitrary object) falls back to its ``id()`` with a warning: such keys are not
    reused across processes. Name the callable to avoid that: ``RunnableLambda(fn, name="...")``.
    """
    if isinstance(model, RunnableLambda):
        func = getattr(model, "func", None) or getattr(model, "afunc", None)
        name = getattr(model, "name", None)
        if func is not None and (not name or name == getattr(func, "__name__", None)):
            return _cached_callable_key(func)
    if not isinstance(model, Runnable) and callable(model):
        return _cached_callable_key(model)
    for attr in _NAME_ATTRS:
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return f"{type(model).__name__}:{value}"
    name = getattr(model, "name", None)
    if isinstance(name, str) and name:
        return f"{type(model).__name__}:{name}"
    return type(model).__name__


_MAX_DEPTH = 4
# Computed once per callable: a closure over a large table would otherwise be walked per call,
# and one over a counter would change its key as the counter moves.
_callable_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _cached_callable_key(fn: Any) -> str:
    try:
        return _callable_keys[fn]
    except (KeyError, TypeError):
        pass
    key = _callable_key(fn, 0)
    with contextlib.suppress(TypeError):  # not weak-referenceable: computed each time
        _callable_keys[fn] = key
    return key


def _callable_key(fn: Any, depth: int) -> str:
    if isinstance(fn, functools.partial):
        parts = [_callable_key(fn.func, depth + 1)]
        parts += [_value_key(a, depth + 1) for a in fn.args]
        parts += [f"{k}={_value_key(v, depth + 1)}" for k, v in sorted(fn.keywords.items())]
        return f"partial({', '.join(parts)})"
    if inspect.ismethod(fn):
        return f"{_value_key(fn.__self__, depth + 1)}.{fn.__func__.__name__}"
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    base = f"callable:{module}.{qualname}"
    code = getattr(fn, "__code__", None)
    if code is None:  # a builtin or a callable object
        if not inspect.isroutine(fn) and not isinstance(fn, type):
            return f"callable:{_value_key(fn, depth + 1)}"
        return base
    bound: list[str] = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            bound.append(_value_key(cell.cell_contents, depth + 1))
        except ValueError:  # an empty cell
            bound.append("<empty>")
    for value in getattr(fn, "__defaults__", None) or ():
        bound.append(_value_key(value, depth + 1))
    for k, v in sorted((getattr(fn, "__kwdefaults__", None) or {}).items()):
        bound.append(f"{k}={_value_key(v, depth + 1)}")
    digest = hashlib.sha1(_code_fingerprint(code).encode()).hexdigest()[:10]
    return f"{base}#{digest}" + (f"[{', '.join(bound)}]" if bound else "")


def _code_fingerprint(code: Any) -> str:
    # Nested code objects repr with their address: fingerprint them recursively instead.
    consts = [_code_fingerprint(c) if inspect.iscode(c) else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{consts}|{code.co_names}"


def _value_key(value: Any, depth: int) -> str:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return repr(value)
    if depth > _MAX_DEPTH:
        return type(value).__qualname__
    if isinstance(value, tuple | list | frozenset | set):
        items = (
            sorted(_value_key(v, depth + 1) for v in value)
            if isinstance(value, set | frozenset)
            else [_value_key(v, depth + 1) for v in value]
        )
        return f"{type(value).__name__}({', '.join(items)})"
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{_value_key(k, depth + 1)}: {_value_key(v, depth + 1)}"
            for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))
        )
        return "{" + inner + "}"
    if inspect.ismodule(value):
        return f"module:{value.__name__}"
    if isinstance(value, Runnable):
        return model_id(value)
    if callable(value) and (inspect.isroutine(value) or isinstance(value, functools.partial)):
        return _callable_key(value, depth + 1)
    if isinstance(value, type):
        return f"type:{value.__module__}.{value.__qualname__}"
    named = [
        f"{attr}={getattr(value, attr)}"
        for attr in (*_NAME_ATTRS, "base_url")
        if isinstance(getattr(value, attr, None), str)
    ]
    if named:
        return f"{type(value).__name__}({', '.join(named)})"
    key = f"{type(value).__qualname__}@{id(value):x}"
    kind = type(value).__qualname__
    if kind not in _warned_ids:
        _warned_ids.add(kind)
        warnings.warn(
            f"truthguard: a model callable is bound to a {kind} with no stable identity; its "
            "cache key uses id() and is not reused across processes. Name the model with "
            "RunnableLambda(fn, name='...') to get a stable key.",
            stacklevel=4,
        )
    return key
