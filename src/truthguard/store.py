"""A Chroma-backed store of questions and of the artifacts LLMs produced for them.

Two collections per namespace:

* ``<ns>_questions``: each question once, embedded with the similarity model, for k-nearest-
  neighbour search (FEWL's laziness penalty, example selection).
* ``<ns>_artifacts``: JSON payloads keyed by (question, kind, model, prompt version, extra): the
  reference answers of each model, generated wrong / corrected answer sets, Reverse Validation
  stage outputs, extracted claims. A detector looks here before calling a model, so no artifact
  is generated twice.

By default the store is a ``chromadb.PersistentClient`` in ``$TRUTHGUARD_HOME/chroma``
(``~/.cache/truthguard/chroma`` when unset); pass ``url=`` for a Chroma server
(``HttpClient``), ``client=`` for any client you built, or use :meth:`ArtifactStore.in_memory`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from truthguard.errors import ConfigurationError, InvalidInputError, InvalidLLMOutput
from truthguard.similarity import EmbeddingSimilarity, get_default_similarity

__all__ = ["ArtifactStore", "Neighbor", "cached_call", "default_store_path", "question_id"]


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


def question_id(question: str) -> str:
    """Stable id of a question (whitespace-normalised text, SHA-1)."""
    return "q-" + hashlib.sha1(_norm(question).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Neighbor:
    """A stored question near a query question."""

    question: str
    similarity: float
    id: str


class ArtifactStore:
    """Questions and LLM artifacts in Chroma, with nearest-neighbour question search.

    Args:
        path: Directory of a persistent store (default: :func:`default_store_path`).
        url: URL of a Chroma server (``http://host:8000``); uses ``chromadb.HttpClient``.
        client: A ready Chroma client (takes precedence over ``path`` and ``url``).
        namespace: Prefix of the two collections, to keep projects apart.
        embedder: Embedding backend for questions (default: the packaged MiniLM).

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
        client: Any = None,
        namespace: str = "truthguard",
        embedder: EmbeddingSimilarity | None = None,
    ) -> None:
        chromadb = _chroma()
        if client is None:
            if url is not None:
                parsed = urlparse(url)
                if not parsed.hostname:
                    raise InvalidInputError("url", f"not a URL with a host: {url!r}")
                client = chromadb.HttpClient(
                    host=parsed.hostname,
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=_settings(),
                )
            else:
                path = Path(path) if path is not None else default_store_path()
                path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(path), settings=_settings())
        self.client = client
        self.path = Path(path) if path is not None and url is None else None
        self.namespace = namespace
        self.embedder = embedder or get_default_similarity()
        self._lock = threading.RLock()
        # embedding_function=None: we always pass our own vectors (Chroma's default would
        # download an ONNX model).
        self._questions = client.get_or_create_collection(
            f"{namespace}_questions", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )
        self._artifacts = client.get_or_create_collection(
            f"{namespace}_artifacts", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    @classmethod
    def in_memory(cls, *, embedder: EmbeddingSimilarity | None = None) -> ArtifactStore:
        """A throw-away store for tests and notebooks (its own namespace in an ephemeral client)."""
        chromadb = _chroma()
        client = chromadb.EphemeralClient(settings=_settings())
        return cls(client=client, namespace=f"tmp{uuid.uuid4().hex[:12]}", embedder=embedder)

    # -- questions --------------------------------------------------------------------------------

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed(list(texts))

    def add_questions(self, questions: Sequence[str], *, batch_size: int = 2048) -> list[str]:
        """Add questions (skipping ones already stored); returns their ids in input order."""
        ids = [question_id(q) for q in questions]
        unique = dict.fromkeys(zip(ids, (_norm(q) for q in questions), strict=True))
        with self._lock:
            existing = set(self._questions.get(ids=list({i for i, _ in unique}), include=[])["ids"])
            new = [(i, q) for i, q in unique if i not in existing]
            for start in range(0, len(new), batch_size):
                chunk = new[start : start + batch_size]
                vectors = self._embed([q for _, q in chunk])
                self._questions.add(
                    ids=[i for i, _ in chunk],
                    documents=[q for _, q in chunk],
                    embeddings=vectors.tolist(),
                )
        return ids

    def has_question(self, question: str) -> bool:
        with self._lock:
            return bool(self._questions.get(ids=[question_id(question)], include=[])["ids"])

    def count_questions(self) -> int:
        with self._lock:
            return int(self._questions.count())

    def all_questions(self) -> list[str]:
        with self._lock:
            return list(self._questions.get(include=["documents"])["documents"] or [])

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
        if k < 1:
            raise InvalidInputError("k", "must be at least 1")
        own = question_id(question)
        vector = (
            np.asarray(embedding, dtype=np.float32)
            if embedding is not None
            else self._embed([_norm(question)])[0]
        )
        with self._lock:
            total = self._questions.count()
            if total == 0:
                return []
            n = min(total, k * 2 + 2)
            while True:
                res = self._questions.query(
                    query_embeddings=[vector.tolist()],
                    n_results=n,
                    include=["documents", "distances"],
                )
                out: list[Neighbor] = []
                for qid, doc, dist in zip(
                    res["ids"][0], res["documents"][0], res["distances"][0], strict=True
                ):
                    sim = 1.0 - float(dist)
                    if exclude_self and qid == own:
                        continue
                    if max_similarity is not None and sim > max_similarity:
                        continue
                    out.append(Neighbor(question=doc, similarity=sim, id=qid))
                if len(out) >= k or n >= total:
                    return out[:k]
                n = min(total, n * 2)

    def random_questions(
        self, k: int, *, exclude: str | None = None, seed: int | str | None = None
    ) -> list[str]:
        """``k`` stored questions drawn at random (seeded by ``seed``, or by ``exclude``)."""
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
        key = json.dumps([_norm(question), kind, model, prompt_version, extra])
        return "a-" + hashlib.sha1(key.encode("utf-8")).hexdigest()

    def get_artifact(
        self, question: str, kind: str, model: str, prompt_version: str, extra: str = ""
    ) -> Any | None:
        """The stored payload, or None when absent."""
        aid = self.artifact_id(question, kind, model, prompt_version, extra)
        with self._lock:
            res = self._artifacts.get(ids=[aid], include=["documents"])
        if not res["ids"]:
            return None
        return json.loads(res["documents"][0])["value"]

    def get_artifacts(
        self, questions: Sequence[str], kind: str, model: str, prompt_version: str, extra: str = ""
    ) -> list[Any | None]:
        """Payloads for several questions in one query (None where absent)."""
        ids = [self.artifact_id(q, kind, model, prompt_version, extra) for q in questions]
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
        """Store a JSON-serialisable payload (replacing any previous one with the same key)."""
        aid = self.artifact_id(question, kind, model, prompt_version, extra)
        try:
            doc = json.dumps({"value": value})
        except TypeError as e:
            raise InvalidInputError("value", f"artifact must be JSON-serialisable: {e}") from e
        vector = self._embed([_norm(question)])[0]
        with self._lock:
            self._artifacts.upsert(
                ids=[aid],
                documents=[doc],
                embeddings=[vector.tolist()],
                metadatas=[
                    {
                        "question_id": question_id(question),
                        "kind": kind,
                        "model": model,
                        "prompt_version": prompt_version,
                        "extra": extra,
                        "created": time.time(),
                    }
                ],
            )

    def count_artifacts(self, kind: str | None = None) -> int:
        with self._lock:
            if kind is None:
                return int(self._artifacts.count())
            return len(self._artifacts.get(where={"kind": kind}, include=[])["ids"])

    async def aget_artifact(self, *args: Any, **kwargs: Any) -> Any | None:
        return await asyncio.to_thread(self.get_artifact, *args, **kwargs)

    async def aput_artifact(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.put_artifact, *args, **kwargs)

    async def anearest(self, *args: Any, **kwargs: Any) -> list[Neighbor]:
        return await asyncio.to_thread(self.nearest, *args, **kwargs)


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
) -> str:
    """Call ``model`` through ``session`` unless the store already holds this artifact.

    The artifact key is (question, kind, model id, prompt version, extra); a hit is counted on the
    session as a cached call and costs no model call. Only successful outputs are stored, and
    when ``validate`` is given (a parser that raises on garbage, e.g. ``InvalidLLMOutput``) only
    outputs it accepts: an unusable answer is asked again next time, never served from the store.
    A stored output that ``validate`` rejects (written before a stricter parser) is replaced.
    """
    from truthguard.llm import model_id

    name = model_id(model)
    if store is not None:
        hit = await store.aget_artifact(question, kind, name, prompt_version, extra)
        if hit is not None:
            try:
                if validate is not None:
                    validate(str(hit))
            except InvalidLLMOutput:
                pass  # stored before a stricter parser: ask again and replace it
            else:
                session.record_cache_hit()
                return str(hit)
    text = await session.acall(model, prompt, stage=stage, metadata=metadata)
    if validate is not None:
        validate(text)
    if store is not None:
        await store.aput_artifact(question, kind, name, prompt_version, text, extra)
    return text
