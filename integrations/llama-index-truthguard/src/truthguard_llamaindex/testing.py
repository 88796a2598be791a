"""Offline doubles for LlamaIndex: a keyword embedding and the demo corpus as nodes.

With :class:`~truthguard.testing.ScriptedChatModel` behind :class:`ChatModelLLM` (the adapter of
:mod:`truthguard_llamaindex.models`, re-exported here) and :class:`KeywordEmbedding` for the
index, a whole LlamaIndex pipeline (retrieve, synthesise, guard, score) runs offline and
deterministically, through the same code paths as a live one.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence

from llama_index.core.bridge.pydantic import Field
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import TextNode

from truthguard_llamaindex.models import ChatModelLLM

__all__ = ["ChatModelLLM", "KeywordEmbedding", "corpus_nodes"]


_WORD = re.compile(r"[a-z0-9]+")


class KeywordEmbedding(BaseEmbedding):
    """A deterministic bag-of-words embedding (hashed words, L2-normalised); no model needed.

    Texts sharing words are close, so retrieval over a small corpus is meaningful offline.

    Example:
        >>> emb = KeywordEmbedding()
        >>> len(emb.get_text_embedding("Mars has two moons"))
        256
    """

    dim: int = Field(default=256, gt=0, description="Number of hash buckets.")

    @classmethod
    def class_name(cls) -> str:
        return "truthguard_keyword_embedding"

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in _WORD.findall(text.lower()):
            if len(word) > 2:  # short words carry little topic
                v[zlib.crc32(word.encode()) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_text_embeddings(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]


def corpus_nodes() -> list[TextNode]:
    """The passages of truthguard's shipped demo corpus as LlamaIndex nodes (one per section)."""
    from truthguard.rag import corpus_documents

    return [TextNode(text=d.page_content, metadata=dict(d.metadata)) for d in corpus_documents()]
