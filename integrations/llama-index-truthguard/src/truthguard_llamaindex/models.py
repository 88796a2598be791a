"""Adapters between truthguard and LlamaIndex models.

* :class:`ChatModelLLM`: any LangChain chat model (``ChatOpenAI``, ``ChatOllama``, truthguard's
  ``ScriptedChatModel``...) as a LlamaIndex LLM, so one model object serves both frameworks;
* :class:`MiniLMEmbedding`: the MiniLM sentence embedding packaged with truthguard (the one its
  detectors use, cache included) as a LlamaIndex embedding model; no download, no API key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback

from truthguard.llm import message_text

__all__ = ["ChatModelLLM", "MiniLMEmbedding"]


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


class MiniLMEmbedding(BaseEmbedding):
    """The MiniLM packaged with truthguard as a LlamaIndex embedding model (384 dimensions).

    Vectors are L2-normalised and share the encode cache of truthguard's detectors, so texts a
    detector has embedded are not encoded again. Pass ``similarity`` to use another
    :class:`~truthguard.similarity.EmbeddingSimilarity`.

    Example:
        >>> emb = MiniLMEmbedding()
        >>> len(emb.get_text_embedding("Mars has two moons."))
        384
    """

    _similarity: Any = PrivateAttr()

    def __init__(self, similarity: Any = None, **kwargs: Any) -> None:
        from truthguard.similarity import get_default_similarity

        kwargs.setdefault("model_name", "truthguard-minilm")
        super().__init__(**kwargs)
        self._similarity = similarity or get_default_similarity()

    @classmethod
    def class_name(cls) -> str:
        return "truthguard_minilm_embedding"

    def _vectors(self, texts: Sequence[str]) -> list[list[float]]:
        return self._similarity.embed(list(texts)).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vectors([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return (await self._similarity.aembed([query]))[0].tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vectors([text])[0]

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return (await self._similarity.aembed([text]))[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(texts)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return (await self._similarity.aembed(list(texts))).tolist()
