"""Offline doubles for LlamaIndex: a LangChain chat model as a LlamaIndex LLM, a keyword embedding.

With :class:`~truthguard.testing.ScriptedChatModel` behind :class:`ChatModelLLM` and
:class:`KeywordEmbedding` for the index, a whole LlamaIndex pipeline (retrieve, synthesise, guard,
score) runs offline and deterministically, through the same code paths as a live one.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import TextNode

from truthguard.llm import message_text

__all__ = ["ChatModelLLM", "KeywordEmbedding", "corpus_nodes"]


def _response(message: Any) -> CompletionResponse:
    usage = getattr(message, "usage_metadata", None) or {}
    extra = {}
    if usage:  # the key names OpenAI's LlamaIndex LLM reports, read by the guard's usage count
        extra = {
            "prompt_tokens": int(usage.get("input_tokens", 0)),
            "completion_tokens": int(usage.get("output_tokens", 0)),
        }
    return CompletionResponse(text=message_text(message), additional_kwargs=extra, raw=message)


class ChatModelLLM(CustomLLM):
    """A LangChain chat model (for example ``ScriptedChatModel``) used as a LlamaIndex LLM.

    Completions go through the chat model's ``invoke`` / ``ainvoke`` (async is native), so its
    latency, injected failures and call log behave as they do in LangChain; token usage
    reported by the model is passed on in ``additional_kwargs``.

    Example:
        >>> from truthguard.testing import ScriptedChatModel
        >>> llm = ChatModelLLM(model=ScriptedChatModel(script=["Paris."]))
        >>> llm.complete("Capital of France?").text
        'Paris.'
    """

    model: Any = Field(description="The LangChain chat model that answers.")
    context_window: int = Field(default=4096, description="Context window announced to LlamaIndex.")
    num_output: int = Field(default=256, description="Output tokens announced to LlamaIndex.")

    @classmethod
    def class_name(cls) -> str:
        return "truthguard_chat_model_llm"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.num_output,
            model_name=str(getattr(self.model, "model_name", "chat-model")),
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return _response(self.model.invoke(prompt))

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        return _response(await self.model.ainvoke(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = ""
        for chunk in self.model.stream(prompt):
            delta = message_text(chunk)
            text += delta
            yield CompletionResponse(text=text, delta=delta)


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
