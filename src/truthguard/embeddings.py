"""The similarity backend's sentence embeddings as a LangChain ``Embeddings``."""

from __future__ import annotations

import asyncio

from langchain_core.embeddings import Embeddings

from truthguard.similarity import EmbeddingSimilarity, get_default_similarity

__all__ = ["SimilarityEmbeddings"]


class SimilarityEmbeddings(Embeddings):
    """Wrap :class:`~truthguard.similarity.EmbeddingSimilarity` (packaged MiniLM by default).

    Vectors are normalised, so cosine similarity equals the inner product. Any LangChain
    ``VectorStore`` can use them, and the encode cache is shared with the detectors.

    Example:
        >>> emb = SimilarityEmbeddings()
        >>> len(emb.embed_query("hello"))
        384
    """

    def __init__(self, similarity: EmbeddingSimilarity | None = None) -> None:
        self.similarity = similarity or get_default_similarity()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.similarity.embed(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.similarity.embed([text])[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)
