"""``cached_call``: a model call answered from the artifact store when it can be.

Within a process, concurrent calls for one artifact share one model call (the store's
:class:`~truthguard.store.inflight.InflightCalls`). Across processes sharing a Chroma server,
``store.lease_seconds`` turns on leases: the first process to miss an artifact claims it, and
the others poll for it (up to the lease) instead of calling the model themselves.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from truthguard.errors import InvalidLLMOutput

if TYPE_CHECKING:
    from truthguard.store.artifacts import ArtifactStore

__all__ = ["cached_call"]

_MISSING: Any = object()


async def _wait_for_peer(
    store: ArtifactStore, key: tuple[str, ...], validate: Callable[[str], Any] | None
) -> str | None:
    """Poll for an artifact a peer process holds a lease on; None when the lease runs out."""
    deadline = time.monotonic() + float(store.lease_seconds or 0)
    delay = 0.05
    while time.monotonic() < deadline:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.5)
        hit = await store.aget_artifact(*key, default=_MISSING)
        if hit is not _MISSING and hit is not None:
            try:
                if validate is not None:
                    validate(str(hit))
            except InvalidLLMOutput:
                return None
            return str(hit)
    return None


async def cached_call(
    session: Any,
    model: Any,
    prompt: Any,
    *,
    store: ArtifactStore | None,
    question: str,
    kind: str,
    prompt_version: str,
    stage: str,
    extra: str = "",
    metadata: dict[str, Any] | None = None,
    validate: Callable[[str], Any] | None = None,
    on_text: Callable[[str], None] | None = None,
    lookup: bool = True,
) -> str:
    """Call ``model`` through ``session`` unless the store already holds this artifact.

    The artifact key is (question, kind, model id, prompt version, extra); a hit is counted on the
    session as a cached call and costs no model call. Only successful outputs are stored, and
    when ``validate`` is given (a parser that raises on garbage, e.g. ``InvalidLLMOutput``) only
    outputs it accepts: an unusable answer is asked again next time, never served from the store.
    A stored output that ``validate`` rejects (written before a stricter parser) is replaced.

    Concurrent calls for the same key in one process share one model call (the others count a
    cached call); with ``store.lease_seconds`` set, processes sharing a server also wait for a
    peer that is already producing the artifact (best effort, see :meth:`ArtifactStore.claim`).

    With a session made with ``defer_writes=True`` the answer is returned as soon as it is
    validated and stored in the background (the session's owner awaits ``session.drain()``);
    otherwise it is stored before this returns. ``on_text`` is passed to ``session.acall``
    (streamed replies); it is not called for a stored or shared answer. ``lookup=False`` skips
    the store read, for a caller that has just read the store in bulk and found nothing.
    """
    from truthguard.llm import model_id

    name = model_id(model)
    if store is None:
        text = await _ask(session, model, prompt, stage, metadata, on_text)
        if validate is not None:
            validate(text)
        return text
    key = (question, kind, name, prompt_version, extra)
    hit = await _stored(store, key, validate) if lookup else None
    if hit is not None:
        session.record_cache_hit()
        return hit
    aid = store.artifact_id(*key)
    future, leads = store.inflight.join(aid)
    if not leads:
        try:  # a sibling check in this process is producing it: share its output
            text = await asyncio.wrap_future(future)
        except Exception:
            pass  # the sibling failed: make our own attempt below, with our own retries
        else:
            session.record_cache_hit()
            return text
        return await _call_and_store(
            session, model, prompt, store, key, stage, metadata, validate, on_text
        )
    owned = False
    handed_off = False  # to a deferred write, which forgets the in-flight entry when done
    try:
        owned = store.lease_seconds is None or await asyncio.to_thread(store.claim, aid)
        if not owned:
            text = await _wait_for_peer(store, key, validate)
            if text is not None:
                session.record_cache_hit()
                future.set_result(text)
                return text
        text = await _ask(session, model, prompt, stage, metadata, on_text)
        if validate is not None:
            validate(text)
        if getattr(session, "defer_writes", False):
            # Our siblings and this check go on with the answer while it is being stored; the
            # in-flight entry stays until it is, so a check starting meanwhile shares it too.
            future.set_result(text)
            session.defer(_store_and_release(store, key, aid, text, owned))
            handed_off = True
        else:
            await _put(store, key, text)
            future.set_result(text)
        return text
    except BaseException as e:
        if not future.done():
            future.set_exception(e if isinstance(e, Exception) else RuntimeError("cancelled"))
        raise
    finally:
        if not handed_off:
            await _forget(store, aid, owned)


async def _ask(
    session: Any,
    model: Any,
    prompt: Any,
    stage: str,
    metadata: dict[str, Any] | None,
    on_text: Callable[[str], None] | None,
) -> str:
    extra = {"on_text": on_text} if on_text is not None else {}  # any session-like object
    return await session.acall(model, prompt, stage=stage, metadata=metadata, **extra)


async def _put(store: ArtifactStore, key: tuple[str, ...], text: str) -> None:
    question, kind, name, prompt_version, extra = key
    await store.aput_artifact(question, kind, name, prompt_version, text, extra)


async def _store_and_release(
    store: ArtifactStore, key: tuple[str, ...], aid: str, text: str, owned: bool
) -> None:
    try:
        await _put(store, key, text)
    finally:
        await _forget(store, aid, owned)


async def _forget(store: ArtifactStore, aid: str, owned: bool) -> None:
    store.inflight.forget(aid)
    if owned and store.lease_seconds is not None:
        await asyncio.to_thread(store.release, aid)


async def _stored(
    store: ArtifactStore, key: tuple[str, ...], validate: Callable[[str], Any] | None
) -> str | None:
    hit = await store.aget_artifact(*key)
    if hit is None:
        return None
    try:
        if validate is not None:
            validate(str(hit))
    except InvalidLLMOutput:
        return None  # stored before a stricter parser: ask again and replace it
    return str(hit)


async def _call_and_store(
    session: Any,
    model: Any,
    prompt: Any,
    store: ArtifactStore,
    key: tuple[str, ...],
    stage: str,
    metadata: dict[str, Any] | None,
    validate: Callable[[str], Any] | None,
    on_text: Callable[[str], None] | None = None,
) -> str:
    text = await _ask(session, model, prompt, stage, metadata, on_text)
    if validate is not None:
        validate(text)
    await _put(store, key, text)
    return text
