"""A small LangChain ``VectorStore`` over ``chromadb``, the default for the selector and RAG helper.

``langchain-chroma`` is the full integration; this module covers what truthguard needs (add,
similarity search with scores, MMR, delete) without that extra dependency.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from truthguard.errors import InvalidInputError
from truthguard.store import chroma

__all__ = ["ChromaVectorStore"]


def _client(path: str | Path | None) -> Any:
    if path is None:
        return chroma.ephemeral_client("ChromaVectorStore")
    return chroma.persistent_client(path, "ChromaVectorStore")


def _scalar_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in meta.items():
        if v is None:
            continue  # Chroma rejects None values
        if not isinstance(v, str | int | float | bool):
            raise InvalidInputError(
                f"metadatas.{k}", f"Chroma stores str, int, float or bool, got {type(v).__name__}"
            )
        out[k] = v
    return out


class ChromaVectorStore(VectorStore):
    """Documents in a Chroma collection, embedded with any LangChain ``Embeddings``.

    Args:
        embedding: Embeds documents and queries (for example
            :class:`~truthguard.embeddings.SimilarityEmbeddings`).
        collection_name: Chroma collection (default: a fresh unique name).
        persist_directory: Directory of a persistent client; None keeps it in memory.
        client: A ready Chroma client (takes precedence over ``persist_directory``).

    Example:
        >>> from truthguard.embeddings import SimilarityEmbeddings
        >>> store = ChromaVectorStore.from_texts(["a cat", "a car"], SimilarityEmbeddings())
        >>> store.similarity_search("kitten", k=1)[0].page_content
        'a cat'
    """

    def __init__(
        self,
        embedding: Embeddings,
        *,
        collection_name: str | None = None,
        persist_directory: str | Path | None = None,
        client: Any = None,
    ) -> None:
        self._embedding = embedding
        self.client = client if client is not None else _client(persist_directory)
        name = collection_name or f"truthguard_{uuid.uuid4().hex[:12]}"
        self.collection = chroma.cosine_collection(self.client, name)

    @property
    def embeddings(self) -> Embeddings:
        return self._embedding

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        texts = list(texts)
        if not texts:
            return []
        ids = list(ids) if ids else [uuid.uuid4().hex for _ in texts]
        metas = [_scalar_metadata(m) for m in (metadatas or [{} for _ in texts])]
        if not (len(ids) == len(metas) == len(texts)):
            raise InvalidInputError("metadatas", "needs one entry per text (and so does ids)")
        vectors = self._embedding.embed_documents(texts)
        self.collection.upsert(
            ids=ids,
            documents=texts,
            embeddings=vectors,
            metadatas=[m or None for m in metas],  # type: ignore[misc]
        )
        return ids

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        if ids:
            self.collection.delete(ids=ids)
        return True

    def get_by_ids(self, ids: Any, /) -> list[Document]:
        res = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        return [
            Document(id=i, page_content=d, metadata=m or {})
            for i, d, m in zip(res["ids"], res["documents"], res["metadatas"], strict=True)
        ]

    def _query(
        self,
        vector: list[float],
        k: int,
        include_embeddings: bool = False,
        filter: dict[str, Any] | None = None,
        where_document: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        if filter is not None and not isinstance(filter, dict):
            raise InvalidInputError(
                "filter", f"expected a Chroma where-dict, got {type(filter).__name__}"
            )
        n = min(k, self.collection.count())
        if n == 0:
            return {
                "ids": [[]],
                "documents": [[]],
                "metadatas": [[]],
                "distances": [[]],
                "embeddings": [[]],
            }
        include = ["documents", "metadatas", "distances"]
        if include_embeddings:
            include.append("embeddings")
        # Chroma returns fewer than n_results when the filters match fewer documents.
        return self.collection.query(
            query_embeddings=[vector],
            n_results=n,
            include=include,
            where=filter or None,
            where_document=where_document or None,
        )

    def similarity_search_by_vector_with_score(
        self,
        embedding: list[float],
        k: int = 4,
        filter: dict[str, Any] | None = None,
        where_document: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """Documents with their cosine *distance* (0 = identical), nearest first.

        ``filter`` (metadata) and ``where_document`` are Chroma ``where`` clauses.
        """
        res = self._query(embedding, k, filter=filter, where_document=where_document)
        return [
            (Document(id=i, page_content=d, metadata=m or {}), float(dist))
            for i, d, m, dist in zip(
                res["ids"][0],
                res["documents"][0],
                res["metadatas"][0],
                res["distances"][0],
                strict=True,
            )
        ]

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return self.similarity_search_by_vector_with_score(
            self._embedding.embed_query(query), k, **kwargs
        )

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [d for d, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        return [d for d, _ in self.similarity_search_by_vector_with_score(embedding, k, **kwargs)]

    def _select_relevance_score_fn(self) -> Any:
        return self._cosine_relevance_score_fn

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        return self.max_marginal_relevance_search_by_vector(
            self._embedding.embed_query(query), k, fetch_k, lambda_mult, **kwargs
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        res = self._query(
            embedding,
            max(k, fetch_k),
            include_embeddings=True,
            filter=kwargs.get("filter"),
            where_document=kwargs.get("where_document"),
        )
        if not res["ids"][0]:
            return []
        picked = maximal_marginal_relevance(
            np.asarray(embedding, dtype=np.float32),
            [list(v) for v in res["embeddings"][0]],
            lambda_mult=lambda_mult,
            k=k,
        )
        return [
            Document(
                id=res["ids"][0][i],
                page_content=res["documents"][0][i],
                metadata=res["metadatas"][0][i] or {},
            )
            for i in picked
        ]

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> ChromaVectorStore:
        store = cls(embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store
