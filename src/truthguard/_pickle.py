"""Pickling detectors by configuration, so they can be shipped to worker processes.

A detector's state is pickled with :class:`_PortablePickler`, which swaps what cannot cross a
process boundary for a recipe that rebuilds it on the other side:

* LangChain models that declare themselves serialisable (``ChatOpenAI``, ``ChatAnthropic``, ...)
  travel as ``dumpd`` configuration and are rebuilt with ``load``; their HTTP clients are new,
  and API keys are never pickled (they are read from the worker's environment);
* locks become fresh locks; the process-wide default embedding model becomes the worker's own;
* an :class:`~truthguard.store.ArtifactStore` travels as its ``path`` / ``url`` (its own
  ``__reduce__``).

Private attributes of a detector (per-process caches such as FEWL's private in-memory store) are
reset to their defaults.
"""

from __future__ import annotations

import io
import pickle
import threading
import warnings
from typing import Any

__all__ = ["dumps_portable", "restore_detector"]

_LOCK = type(threading.Lock())
_RLOCK = type(threading.RLock())


def _load_lc(cls: type, payload: dict[str, Any]) -> Any:
    from langchain_core.load import load

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # load() is flagged beta
        return load(payload, secrets_from_env=True, allowed_objects=[cls])


def _default_similarity() -> Any:
    from truthguard.similarity import get_default_similarity

    return get_default_similarity()


class _PortablePickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type):
            return NotImplemented
        if isinstance(obj, _LOCK):
            return (threading.Lock, ())
        if isinstance(obj, _RLOCK):
            return (threading.RLock, ())
        from truthguard import similarity

        if similarity._default is not None and obj is similarity._default:
            return (_default_similarity, ())
        from langchain_core.language_models import BaseLanguageModel

        if isinstance(obj, BaseLanguageModel) and obj.is_lc_serializable():
            from langchain_core.load import dumpd

            return (_load_lc, (type(obj), dumpd(obj)))
        return NotImplemented


def dumps_portable(obj: Any) -> bytes:
    """Pickle ``obj`` with the portable rules above."""
    buf = io.BytesIO()
    _PortablePickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def restore_detector(cls: type, payload: bytes) -> Any:
    """Rebuild a detector pickled by ``BaseDetector.__reduce__``."""
    state = pickle.loads(payload)
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj
