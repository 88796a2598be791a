"""``ArtifactStore``: questions and the artifacts LLMs produced for them, in Chroma."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import random
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.similarity import EmbeddingSimilarity, get_default_similarity
from truthguard.store import chroma, keys
from truthguard.store.index import Neighbor, _QuestionIndex
from truthguard.store.inflight import InflightCalls
from truthguard.store.keys import norm_question, question_id, require_questions, require_text
from truthguard.store.leases import Leases
from truthguard.store.writer import _PendingWrite, _Writer

__all__ = ["ArtifactStore"]

_MISSING: Any = object()


def _vectors(value: Any, rows: int) -> np.ndarray:
    """``embeddings=`` as a float32 matrix with one finite row per question."""
    try:
        matrix = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise InvalidInputError("embeddings", f"expected a matrix of numbers: {e}") from e
    if matrix.ndim != 2 or matrix.shape[0] != rows:
        raise InvalidInputError(
            "embeddings", f"expected shape ({rows}, dim), one row per question; got {matrix.shape}"
        )
    if not np.isfinite(matrix).all():
        raise InvalidInputError("embeddings", "contains NaN or infinite values")
    return matrix


class ArtifactStore:
    """Questions and LLM artifacts in Chroma, with nearest-neighbour question search.

    Args:
        path: Directory of a persistent store (default: :func:`default_store_path`).
        url: URL of a Chroma server (``http://host:8000``); uses ``chromadb.HttpClient``.
        headers: HTTP headers sent to the server (for example ``{"Authorization": "Bearer ..."}``
            or ``{"X-Chroma-Token": ...}``); only with ``url``.
        tenant: Chroma tenant on the server (default ``default_tenant``); only with ``url``.
        database: Chroma database on the server (default ``default_database``); only with ``url``.
        client: A ready Chroma client (takes precedence over ``path`` and ``url``).
        namespace: Prefix of the two collections, to keep projects apart.
        embedder: Embedding backend for questions (default: the packaged MiniLM).
        lease_seconds: Cross-process de-duplication: how long another process waits for an
            artifact a peer announced it is producing (None: off). Best effort; see :meth:`claim`.
        refresh_seconds: :meth:`nearest` searches an in-memory copy of the questions; this is
            how old its last look at the collection may be before a search checks for questions
            that other stores or processes added (0: every search; a check costs about a
            millisecond). Questions added through this store are seen at once.

    Example:
        >>> store = ArtifactStore.in_memory()
        >>> store.put_artifact("Who wrote Hamlet?", "answer", "gpt-4o", "v1", "Shakespeare")
        >>> store.get_artifact("Who wrote Hamlet?", "answer", "gpt-4o", "v1")
        'Shakespeare'
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        url: str | None = None,
        headers: dict[str, str] | None = None,
        tenant: str | None = None,
        database: str | None = None,
        client: Any = None,
        namespace: str = "truthguard",
        embedder: EmbeddingSimilarity | None = None,
        lease_seconds: float | None = None,
        refresh_seconds: float = 1.0,
    ) -> None:
        require_text(namespace, "namespace")
        if (
            isinstance(refresh_seconds, bool)
            or not isinstance(refresh_seconds, int | float)
            or not refresh_seconds >= 0
        ):
            raise InvalidInputError("refresh_seconds", "must be a number of seconds >= 0")
        self.refresh_seconds = float(refresh_seconds)
        if lease_seconds is not None and not (
            isinstance(lease_seconds, int | float) and lease_seconds > 0
        ):
            raise InvalidInputError("lease_seconds", "must be a positive number of seconds or None")
        if headers is not None and not (
            isinstance(headers, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
        ):
            raise InvalidInputError("headers", "expected a dict of string header names to strings")
        for field, value in (("tenant", tenant), ("database", database)):
            if value is not None:
                require_text(value, field)
        if url is None and (headers or tenant or database) and client is None:
            field = "headers" if headers else "tenant" if tenant else "database"
            raise InvalidInputError(field, "only applies to a Chroma server: pass url= as well")
        chroma.chromadb_module("the store")
        # How to rebuild this store in another process (None: a client we cannot describe).
        self._spec: dict[str, Any] | None = None
        if client is None:
            if url is not None:
                client = chroma.http_client(
                    url, "the store", headers=headers, tenant=tenant, database=database
                )
                self._spec = {
                    "url": url,
                    "headers": headers,
                    "tenant": tenant,
                    "database": database,
                }
            else:
                if path is not None and not isinstance(path, str | os.PathLike):
                    raise InvalidInputError("path", f"expected a path, got {type(path).__name__}")
                path = Path(path) if path is not None else chroma.default_store_path()
                client = chroma.persistent_client(path, "the store")
                self._spec = {"path": str(path)}
        self.client = client
        self.path = Path(path) if path is not None and url is None else None
        self.url = url
        self.namespace = namespace
        self.embedder = embedder or get_default_similarity()
        self.lease_seconds = lease_seconds
        self._lock = threading.RLock()
        self._writer = _Writer(weakref.WeakMethod(self._flush))
        self._index = _QuestionIndex(self.refresh_seconds)
        self.inflight = InflightCalls()
        """The model calls for this store's artifacts in flight in this process (shared by
        :func:`~truthguard.store.cached_call`)."""
        self._questions = chroma.cosine_collection(client, f"{namespace}_questions")
        self._artifacts = chroma.cosine_collection(client, f"{namespace}_artifacts")
        self._leases = Leases(self._artifacts, self._lock)

    @classmethod
    def in_memory(cls, *, embedder: EmbeddingSimilarity | None = None) -> ArtifactStore:
        """A throw-away store for tests and notebooks (its own namespace in an ephemeral client)."""
        client = chroma.ephemeral_client("the store")
        store = cls(client=client, namespace=f"tmp{uuid.uuid4().hex[:12]}", embedder=embedder)
        store._index.refresh_seconds = None  # its own namespace: nobody else adds questions
        return store

    # -- pickling: by configuration, the client is re-created on the other side -----------------

    def __reduce__(self) -> tuple[Any, ...]:
        if self._spec is None:
            raise ConfigurationError(
                "this ArtifactStore wraps a client it cannot describe (in_memory() or client=), "
                "so it cannot move to another process: build it with path= or url= instead"
            )
        from truthguard import similarity

        # The process-wide default model is re-attached as the other process's default.
        embedder = None if self.embedder is similarity._default else self.embedder
        return (
            _rebuild_store,
            (
                {
                    **self._spec,
                    "namespace": self.namespace,
                    "embedder": embedder,
                    "lease_seconds": self.lease_seconds,
                    "refresh_seconds": self.refresh_seconds,
                },
            ),
        )

    def describe(self) -> dict[str, Any]:
        """Where this store lives (``path`` or ``url`` with tenant / database), for logs."""
        return {
            **(self._spec or {"client": type(self.client).__name__}),
            "namespace": self.namespace,
        }

    # -- questions --------------------------------------------------------------------------------

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed(list(texts))

    def add_questions(
        self,
        questions: Sequence[str],
        *,
        batch_size: int = 2048,
        embeddings: Any = None,
    ) -> list[str]:
        """Add questions (skipping ones already stored); returns their ids in input order.

        Args:
            questions: The questions.
            batch_size: Questions embedded and written per Chroma call.
            embeddings: Vectors you already have, one row per question (shape
                ``(len(questions), dim)``), used instead of embedding the questions.

        Raises:
            InvalidInputError: ``questions`` is not a list of non-blank strings, or
                ``embeddings`` does not have one finite row per question.
        """
        questions = require_questions(questions)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError("batch_size", "must be a positive integer")
        given = _vectors(embeddings, len(questions)) if embeddings is not None else None
        ids = [question_id(q) for q in questions]
        if not ids:
            return []
        unique: dict[tuple[str, str], int] = {}
        for n, key in enumerate(zip(ids, (norm_question(q) for q in questions), strict=True)):
            unique.setdefault(key, n)
        with self._lock:
            existing = set(self._questions.get(ids=list({i for i, _ in unique}), include=[])["ids"])
            new = [(i, q, n) for (i, q), n in unique.items() if i not in existing]
            for start in range(0, len(new), batch_size):
                chunk = new[start : start + batch_size]
                if given is not None:
                    vectors = given[[n for _, _, n in chunk]]
                else:
                    vectors = self._embed([q for _, q, _ in chunk])
                self._questions.add(
                    ids=[i for i, _, _ in chunk],
                    documents=[q for _, q, _ in chunk],
                    embeddings=vectors.tolist(),
                )
                self._index.added([i for i, _, _ in chunk], [q for _, q, _ in chunk], vectors)
        return ids

    def has_question(self, question: str) -> bool:
        with self._lock:
            return bool(self._questions.get(ids=[question_id(question)], include=[])["ids"])

    def count_questions(self) -> int:
        with self._lock:
            return int(self._questions.count())

    def all_questions(self) -> list[str]:
        with self._lock:
            return list(self._index.sync(self._questions).documents)

    def nearest(
        self,
        question: str,
        k: int = 25,
        *,
        max_similarity: float | None = 0.8,
        exclude_self: bool = True,
        embedding: Sequence[float] | None = None,
    ) -> list[Neighbor]:
        """The ``k`` stored questions most similar to ``question``.

        Args:
            question: The query question (need not be stored).
            k: How many neighbours to return (fewer if the store is smaller).
            max_similarity: Skip neighbours above this similarity (near-duplicates); None keeps all.
            exclude_self: Skip the query question itself.
            embedding: Use this vector instead of embedding ``question`` (a proxy for the query).
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError("k", "must be at least 1")
        if max_similarity is not None and not isinstance(max_similarity, int | float):
            raise InvalidInputError("max_similarity", "expected a number or None")
        own = question_id(question)
        if embedding is not None:
            try:
                vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
            except (TypeError, ValueError) as e:
                raise InvalidInputError("embedding", f"expected a vector of numbers: {e}") from e
        else:
            vector = self._embed([norm_question(question)])[0]
        with self._lock:  # exact search over the in-memory copy (see _QuestionIndex)
            return self._index.sync(self._questions).search(
                vector, k, max_similarity=max_similarity, exclude=own if exclude_self else None
            )

    def random_questions(
        self, k: int, *, exclude: str | None = None, seed: int | str | None = None
    ) -> list[str]:
        """``k`` stored questions drawn at random (seeded by ``seed``, or by ``exclude``)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InvalidInputError("k", "must be a non-negative integer")
        if exclude is not None:
            require_text(exclude, "exclude", blank=True)
        if seed is not None and not isinstance(seed, int | str):
            raise InvalidInputError("seed", f"expected an int or str, got {type(seed).__name__}")
        questions = [
            q
            for q in self.all_questions()
            if exclude is None or norm_question(q) != norm_question(exclude)
        ]
        rng = random.Random(seed if seed is not None else exclude)
        return rng.sample(questions, min(k, len(questions)))

    # -- artifacts --------------------------------------------------------------------------------

    artifact_id = staticmethod(keys.artifact_id)

    def get_artifact(
        self,
        question: str,
        kind: str,
        model: str,
        prompt_version: str,
        extra: str = "",
        *,
        default: Any = None,
    ) -> Any:
        """The stored payload, or ``default`` when absent (a stored None comes back as None)."""
        aid = self.artifact_id(question, kind, model, prompt_version, extra)
        with self._lock:
            res = self._artifacts.get(ids=[aid], include=["documents"])
        if not res["ids"]:
            return default
        return json.loads(res["documents"][0])["value"]

    def has_artifact(
        self, question: str, kind: str, model: str, prompt_version: str, extra: str = ""
    ) -> bool:
        """Whether an artifact is stored under this key (even one whose value is None)."""
        return (
            self.get_artifact(question, kind, model, prompt_version, extra, default=_MISSING)
            is not _MISSING
        )

    def get_artifacts(
        self, questions: Sequence[str], kind: str, model: str, prompt_version: str, extra: str = ""
    ) -> list[Any | None]:
        """Payloads for several questions in one query (None where absent)."""
        questions = require_questions(questions)
        ids = [self.artifact_id(q, kind, model, prompt_version, extra) for q in questions]
        if not ids:
            return []
        with self._lock:
            res = self._artifacts.get(ids=list(dict.fromkeys(ids)), include=["documents"])
        found = {
            i: json.loads(d)["value"] for i, d in zip(res["ids"], res["documents"], strict=True)
        }
        return [found.get(i) for i in ids]

    def put_artifact(
        self,
        question: str,
        kind: str,
        model: str,
        prompt_version: str,
        value: Any,
        extra: str = "",
    ) -> None:
        """Store a JSON-serialisable payload (replacing any previous one with the same key).

        Returns once the artifact is stored. Writes made at the same time by other threads are
        embedded and upserted together with this one.
        """
        self.put_artifacts([(question, kind, model, prompt_version, value, extra)])

    def put_artifacts(self, items: Sequence[tuple[Any, ...]]) -> None:
        """Store several artifacts, ``(question, kind, model, prompt_version, value[, extra])``
        each, with one embedding call for their questions; returns once they are stored."""
        self.put_artifacts_nowait(items).result()

    def put_artifacts_nowait(
        self, items: Sequence[tuple[Any, ...]]
    ) -> concurrent.futures.Future[None]:
        """Queue artifacts for the store's writer thread and return at once.

        The future completes when they are stored (or raises the write's error). Every write
        queued while the writer is busy goes into its next upsert, with one embedding call for
        all their questions: many checks writing at once cost a few upserts, not one each.

        Raises:
            InvalidInputError: An item is malformed or its value is not JSON-serialisable
                (raised here, before anything is queued).
        """
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise InvalidInputError("items", "expected a list of artifact tuples")
        writes = []
        for n, item in enumerate(items):
            if not isinstance(item, tuple | list) or len(item) not in (5, 6):
                raise InvalidInputError(
                    f"items[{n}]",
                    "expected (question, kind, model, version, value[, extra])",
                )
            question, kind, model, prompt_version, value, *rest = item
            extra = rest[0] if rest else ""
            writes.append(self._pending_write(question, kind, model, prompt_version, value, extra))
        return self._writer.submit(writes)

    def _pending_write(
        self, question: Any, kind: Any, model: Any, prompt_version: Any, value: Any, extra: Any
    ) -> _PendingWrite:
        aid = self.artifact_id(question, kind, model, prompt_version, extra)
        try:
            doc = json.dumps({"value": value}, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidInputError("value", f"artifact must be JSON-serialisable: {e}") from e
        meta = {
            "question_id": question_id(question),
            "kind": kind,
            "model": model,
            "prompt_version": prompt_version,
            "extra": extra,
            "created": time.time(),
        }
        return _PendingWrite(aid, norm_question(question), doc, meta)

    def _flush(self, batch: list[_PendingWrite]) -> None:
        latest = {w.id: w for w in batch}  # the last write of a key wins, as with single upserts
        questions = list(dict.fromkeys(w.question for w in latest.values()))
        vectors = dict(zip(questions, self._embed(questions), strict=True))
        with self._lock:
            self._artifacts.upsert(
                ids=list(latest),
                documents=[w.document for w in latest.values()],
                embeddings=[vectors[w.question].tolist() for w in latest.values()],
                metadatas=[w.metadata for w in latest.values()],
            )

    def count_artifacts(self, kind: str | None = None) -> int:
        if kind is not None:
            require_text(kind, "kind")
        with self._lock:
            if kind is None:
                return int(self._artifacts.count())
            return len(self._artifacts.get(where={"kind": kind}, include=[])["ids"])

    # -- cross-process leases (best effort) -------------------------------------------------------

    def claim(self, aid: str) -> bool:
        """Announce that this process is producing artifact ``aid``; False if a peer is.

        A lease is a small record ``(owner, expires)`` next to the artifacts. Chroma has no
        compare-and-set, so two processes that miss at the same instant can both win: the
        scheme only makes duplicates rare. A process that loses waits up to ``lease_seconds``
        for the artifact and then makes the call itself, so a crashed peer delays, never blocks.
        """
        if self.lease_seconds is None:
            return True
        return self._leases.claim(aid, self.lease_seconds, self._zero_vector)

    def release(self, aid: str) -> None:
        """Drop this process's lease on ``aid`` (the artifact is stored, or the call failed)."""
        if self.lease_seconds is None:
            return
        self._leases.release(aid)

    def _zero_vector(self) -> list[float]:
        # A lease is found by id only; it still needs a vector of the collection's dimension.
        return [1.0] + [0.0] * (int(self._embed(["lease"]).shape[1]) - 1)

    def count_leases(self) -> int:
        return self._leases.count()

    async def aget_artifact(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.get_artifact, *args, **kwargs)

    async def aput_artifact(
        self,
        question: str,
        kind: str,
        model: str,
        prompt_version: str,
        value: Any,
        extra: str = "",
    ) -> None:
        """:meth:`put_artifact` that waits on the event loop, not on a thread."""
        item = (question, kind, model, prompt_version, value, extra)
        await asyncio.wrap_future(self.put_artifacts_nowait([item]))

    async def anearest(self, *args: Any, **kwargs: Any) -> list[Neighbor]:
        return await asyncio.to_thread(self.nearest, *args, **kwargs)


def _rebuild_store(spec: dict[str, Any]) -> ArtifactStore:
    spec = dict(spec)
    path = spec.pop("path", None)
    return ArtifactStore(path, **spec)
