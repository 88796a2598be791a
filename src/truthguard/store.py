"""A Chroma-backed store of questions and of the artifacts LLMs produced for them.

Two collections per namespace:

* ``<ns>_questions``: each question once, embedded with the similarity model, for k-nearest-
  neighbour search (FEWL's laziness penalty, example selection).
* ``<ns>_artifacts``: JSON payloads keyed by (question, kind, model, prompt version, extra): the
  reference answers of each model, generated wrong / corrected answer sets, Reverse Validation
  stage outputs, extracted claims. A detector looks here before calling a model, so no artifact
  is generated twice.

By default the store is a ``chromadb.PersistentClient`` in ``$TRUTHGUARD_HOME/chroma``
(``~/.cache/truthguard/chroma`` when unset); pass ``url=`` (with ``headers``, ``tenant``,
``database``) for a Chroma server (``HttpClient``), ``client=`` for any client you built, or use
:meth:`ArtifactStore.in_memory`.

Sharing: a store made from ``path`` or ``url`` pickles as its configuration and reconnects in the
process that unpickles it, so detectors holding one can be shipped to worker processes. Within a
process, concurrent calls of :func:`cached_call` for the same artifact share one model call. Across
processes (several workers on one Chroma server) ``lease_seconds`` turns on a best-effort scheme:
the first worker to miss an artifact writes a short lease, and workers that see a fresh lease wait
for the artifact instead of calling the model themselves (see :meth:`ArtifactStore.claim`).

Writes are batched: artifacts written at the same time by several threads are embedded in one
encode call and upserted together (group commit), and a write returns only once it is stored.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import random
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from truthguard.errors import ConfigurationError, InvalidInputError, InvalidLLMOutput
from truthguard.similarity import EmbeddingSimilarity, get_default_similarity

__all__ = ["ArtifactStore", "Neighbor", "cached_call", "default_store_path", "question_id"]

_MISSING: Any = object()
_LEASE_KIND = "__lease__"


def default_store_path() -> Path:
    """``$TRUTHGUARD_HOME/chroma``, or ``~/.cache/truthguard/chroma``."""
    home = os.environ.get("TRUTHGUARD_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "truthguard"
    return base / "chroma"


def _chroma() -> Any:
    try:
        import chromadb
    except ImportError as e:
        raise ConfigurationError(
            "the store needs chromadb: pip install 'truthguard[chroma]'"
        ) from e
    return chromadb


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def _norm(question: str) -> str:
    return " ".join(question.split()).strip()


def _text(value: Any, field: str, *, blank: bool = False) -> str:
    """``value`` if it is a string (non-blank unless ``blank``), else InvalidInputError."""
    if not isinstance(value, str):
        raise InvalidInputError(field, f"expected a string, got {type(value).__name__}")
    if not blank and not value.strip():
        raise InvalidInputError(field, "must not be blank")
    return value


def _question_list(questions: Any, field: str = "questions") -> list[str]:
    # A bare string is iterable: refuse it rather than store its characters.
    if isinstance(questions, str | bytes | Mapping) or not isinstance(questions, Iterable):
        raise InvalidInputError(
            field, f"expected a list of strings, got {type(questions).__name__}"
        )
    return [_text(q, f"{field}[{i}]") for i, q in enumerate(questions)]


def question_id(question: str) -> str:
    """Stable id of a question (whitespace-normalised text, SHA-1)."""
    return "q-" + hashlib.sha1(_norm(_text(question, "question")).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Neighbor:
    """A stored question near a query question."""

    question: str
    similarity: float
    id: str


@dataclass
class _PendingWrite:
    """One artifact waiting for the store's writer thread."""

    id: str
    question: str
    document: str
    metadata: dict[str, Any]


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


class _QuestionIndex:
    """An exact in-memory copy of the questions collection, for nearest-neighbour search.

    Chroma stays the record. The copy is loaded on first use, extended in place by this
    store's :meth:`ArtifactStore.add_questions`, and reloaded when the collection's count
    differs from it (another store or process added questions; questions are never deleted),
    which a search checks when the last check is older than ``refresh_seconds``.
    10,000 MiniLM questions take 15 MiB (up to twice that while the buffer grows). Callers hold
    the store's lock.
    """

    PAGE = 5000

    def __init__(self, refresh_seconds: float | None) -> None:
        self.refresh_seconds = refresh_seconds
        """How old a count check may be before a search checks again; None: never (nobody
        else writes this collection)."""
        self._checked = 0.0
        self.loaded = False
        self.ids: list[str] = []
        self.documents: list[str] = []
        self._rows: dict[str, int] = {}
        self._buf = np.zeros((0, 0), dtype=np.float32)

    @property
    def matrix(self) -> np.ndarray:
        return self._buf[: len(self.ids)]

    def sync(self, collection: Any) -> _QuestionIndex:
        """Reload when the collection holds questions this copy lacks (checked at most every
        ``refresh_seconds``: a count costs about a millisecond, the search itself less)."""
        now = time.monotonic()
        due = self.refresh_seconds is not None and now - self._checked >= self.refresh_seconds
        if not self.loaded or due:
            count = int(collection.count())
            self._checked = now
            if not self.loaded or count != len(self.ids):
                self._load(collection, count)
        return self

    def _load(self, collection: Any, count: int) -> None:
        self.loaded, self.ids, self.documents, self._rows = True, [], [], {}
        self._buf = np.zeros((0, 0), dtype=np.float32)
        for offset in range(0, count, self.PAGE):
            page = collection.get(
                include=["documents", "embeddings"], limit=self.PAGE, offset=offset
            )
            if len(page["ids"]):
                self._append(
                    list(page["ids"]),
                    list(page["documents"] or []),
                    np.asarray(page["embeddings"], dtype=np.float32),
                )

    def added(self, ids: list[str], documents: list[str], vectors: np.ndarray) -> None:
        """Questions this store just wrote (ignored until the copy is loaded)."""
        if self.loaded and ids:
            self._append(ids, documents, np.asarray(vectors, dtype=np.float32))

    def _append(self, ids: list[str], documents: list[str], vectors: np.ndarray) -> None:
        n, extra = len(self.ids), len(ids)
        if self._buf.shape[0] < n + extra or self._buf.shape[1] != vectors.shape[1]:
            grown = np.zeros((max(2 * (n + extra), 1024), vectors.shape[1]), dtype=np.float32)
            if n:
                grown[:n] = self._buf[:n]
            self._buf = grown
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._buf[n : n + extra] = vectors / np.maximum(norms, 1e-12)
        for offset, qid in enumerate(ids):
            self._rows[qid] = n + offset
        self.ids += ids
        self.documents += documents

    def search(
        self, vector: np.ndarray, k: int, *, max_similarity: float | None, exclude: str | None
    ) -> list[Neighbor]:
        """Exact cosine top-``k``, most similar first (ties: the earlier stored first)."""
        if not self.ids:
            return []
        norm = float(np.linalg.norm(vector))
        sims = self.matrix @ (vector / norm if norm > 0 else vector)
        keep = np.ones(len(self.ids), dtype=bool)
        if max_similarity is not None:
            keep &= sims <= max_similarity
        if exclude is not None and exclude in self._rows:
            keep[self._rows[exclude]] = False
        candidates = np.flatnonzero(keep)
        if len(candidates) > k:
            part = np.argpartition(-sims[candidates], k - 1)[:k]
            candidates = candidates[part]
        order = candidates[np.lexsort((candidates, -sims[candidates]))]
        return [
            Neighbor(question=self.documents[i], similarity=float(sims[i]), id=self.ids[i])
            for i in order
        ]


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
        _text(namespace, "namespace")
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
                _text(value, field)
        if url is None and (headers or tenant or database) and client is None:
            field = "headers" if headers else "tenant" if tenant else "database"
            raise InvalidInputError(field, "only applies to a Chroma server: pass url= as well")
        chromadb = _chroma()
        # How to rebuild this store in another process (None: a client we cannot describe).
        self._spec: dict[str, Any] | None = None
        if client is None:
            if url is not None:
                _text(url, "url")
                parsed = urlparse(url)
                if not parsed.hostname or parsed.scheme not in ("http", "https"):
                    raise InvalidInputError("url", f"not an http(s) URL with a host: {url!r}")
                kwargs: dict[str, Any] = {}
                if tenant is not None:
                    kwargs["tenant"] = tenant
                if database is not None:
                    kwargs["database"] = database
                try:
                    client = chromadb.HttpClient(
                        host=parsed.hostname,
                        port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                        ssl=parsed.scheme == "https",
                        headers=headers,
                        settings=_settings(),
                        **kwargs,
                    )
                except Exception as e:  # unknown tenant / database, server unreachable, auth
                    raise ConfigurationError(f"cannot use the Chroma server at {url}: {e}") from e
                self._spec = {
                    "url": url,
                    "headers": headers,
                    "tenant": tenant,
                    "database": database,
                }
            else:
                if path is not None and not isinstance(path, str | os.PathLike):
                    raise InvalidInputError("path", f"expected a path, got {type(path).__name__}")
                path = Path(path) if path is not None else default_store_path()
                path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(path), settings=_settings())
                self._spec = {"path": str(path)}
        self.client = client
        self.path = Path(path) if path is not None and url is None else None
        self.url = url
        self.namespace = namespace
        self.embedder = embedder or get_default_similarity()
        self.lease_seconds = lease_seconds
        self._owner = uuid.uuid4().hex  # who wrote a lease
        self._lock = threading.RLock()
        self._init_runtime()
        # embedding_function=None: we always pass our own vectors (Chroma's default would
        # download an ONNX model).
        self._questions = client.get_or_create_collection(
            f"{namespace}_questions", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )
        self._artifacts = client.get_or_create_collection(
            f"{namespace}_artifacts", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    def _init_runtime(self) -> None:
        self._writer = _Writer(weakref.WeakMethod(self._flush))
        self._index = _QuestionIndex(self.refresh_seconds)
        # artifact id -> future of the output, for calls in flight in this process
        self._inflight: dict[str, concurrent.futures.Future[str]] = {}
        self._inflight_lock = threading.Lock()

    @classmethod
    def in_memory(cls, *, embedder: EmbeddingSimilarity | None = None) -> ArtifactStore:
        """A throw-away store for tests and notebooks (its own namespace in an ephemeral client)."""
        chromadb = _chroma()
        client = chromadb.EphemeralClient(settings=_settings())
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
        questions = _question_list(questions)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError("batch_size", "must be a positive integer")
        given = _vectors(embeddings, len(questions)) if embeddings is not None else None
        ids = [question_id(q) for q in questions]
        if not ids:
            return []
        unique: dict[tuple[str, str], int] = {}
        for n, key in enumerate(zip(ids, (_norm(q) for q in questions), strict=True)):
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
            vector = self._embed([_norm(question)])[0]
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
            _text(exclude, "exclude", blank=True)
        if seed is not None and not isinstance(seed, int | str):
            raise InvalidInputError("seed", f"expected an int or str, got {type(seed).__name__}")
        questions = [
            q for q in self.all_questions() if exclude is None or _norm(q) != _norm(exclude)
        ]
        rng = random.Random(seed if seed is not None else exclude)
        return rng.sample(questions, min(k, len(questions)))

    # -- artifacts --------------------------------------------------------------------------------

    @staticmethod
    def artifact_id(
        question: str, kind: str, model: str, prompt_version: str, extra: str = ""
    ) -> str:
        """Id of an artifact; raises InvalidInputError naming a field that is not a string."""
        key = json.dumps(
            [
                _norm(_text(question, "question")),
                _text(kind, "kind"),
                _text(model, "model"),
                _text(prompt_version, "prompt_version", blank=True),
                _text(extra, "extra", blank=True),
            ]
        )
        return "a-" + hashlib.sha1(key.encode("utf-8")).hexdigest()

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
        questions = _question_list(questions)
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
        return _PendingWrite(aid, _norm(question), doc, meta)

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
            _text(kind, "kind")
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
        lid = "l-" + aid
        now = time.time()
        with self._lock:
            res = self._artifacts.get(ids=[lid], include=["documents"])
            if res["ids"]:
                lease = json.loads(res["documents"][0])
                if lease["owner"] != self._owner and lease["expires"] > now:
                    return False
            doc = json.dumps({"owner": self._owner, "expires": now + self.lease_seconds})
            self._artifacts.upsert(
                ids=[lid],
                documents=[doc],
                embeddings=[self._zero_vector()],
                metadatas=[{"kind": _LEASE_KIND, "created": now}],
            )
            # Last writer wins: read back, so a peer that wrote in between keeps its lease.
            back = self._artifacts.get(ids=[lid], include=["documents"])
        return bool(back["ids"]) and json.loads(back["documents"][0])["owner"] == self._owner

    def release(self, aid: str) -> None:
        """Drop this process's lease on ``aid`` (the artifact is stored, or the call failed)."""
        if self.lease_seconds is None:
            return
        with self._lock:
            self._artifacts.delete(ids=["l-" + aid])

    def _zero_vector(self) -> list[float]:
        # A lease is found by id only; it still needs a vector of the collection's dimension.
        return [1.0] + [0.0] * (int(self._embed(["lease"]).shape[1]) - 1)

    def count_leases(self) -> int:
        with self._lock:
            return len(self._artifacts.get(where={"kind": _LEASE_KIND}, include=[])["ids"])

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
            try:
                if flush is None:
                    raise ConfigurationError("the artifact store was closed before its writes")
                flush([w for writes, _ in batch for w in writes])
            except BaseException as e:  # the thread must outlive a failed write: report it
                for _, future in batch:
                    _settle(future, e)
            else:
                for _, future in batch:
                    _settle(future, None)
            finally:
                del flush


def _settle(future: concurrent.futures.Future[None], error: BaseException | None) -> None:
    try:
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
    except concurrent.futures.InvalidStateError:
        pass  # its waiter was cancelled: nobody to tell


def _rebuild_store(spec: dict[str, Any]) -> ArtifactStore:
    spec = dict(spec)
    path = spec.pop("path", None)
    return ArtifactStore(path, **spec)


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
    with store._inflight_lock:
        leader = store._inflight.get(aid)
        if leader is None:
            future: concurrent.futures.Future[str] = concurrent.futures.Future()
            store._inflight[aid] = future
    if leader is not None:
        try:  # a sibling check in this process is producing it: share its output
            text = await asyncio.wrap_future(leader)
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
    with store._inflight_lock:
        store._inflight.pop(aid, None)
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
