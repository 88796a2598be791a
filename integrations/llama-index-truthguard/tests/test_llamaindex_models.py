"""The model adapters: a LangChain chat model as a LlamaIndex LLM, the packaged MiniLM as an
embedding model; through a real index and a real OpenAI-compatible server."""

from __future__ import annotations

import numpy as np
import pytest
from llama_index.core import VectorStoreIndex

from truthguard.refchecker import RefChecker
from truthguard_llamaindex import ChatModelLLM, GuardedQueryEngine, MiniLMEmbedding
from truthguard_llamaindex.testing import corpus_nodes


@pytest.fixture(scope="module")
def embedder():
    from truthguard.similarity import get_default_similarity

    return get_default_similarity()


@pytest.fixture(scope="module")
def minilm(embedder):
    return MiniLMEmbedding(embedder)


def test_minilm_vectors_are_the_detectors_vectors(minilm, embedder):
    text = "Mars has two small moons, Phobos and Deimos."
    vector = np.asarray(minilm.get_text_embedding(text))
    assert vector.shape == (384,)
    assert np.allclose(vector, embedder.embed([text])[0], atol=1e-6)
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-4)


async def test_minilm_async_batch_matches_sync(minilm):
    texts = ["Saturn has rings.", "Gutenberg worked in Mainz."]
    got = await minilm.aget_text_embedding_batch(texts)
    assert np.allclose(got, minilm.get_text_embedding_batch(texts), atol=1e-6)


def test_a_guarded_index_over_minilm_and_chat_openai(minilm):
    pytest.importorskip("langchain_openai")
    from truthguard.testing import OpenAIServer

    index = VectorStoreIndex(corpus_nodes(), embed_model=minilm)
    with OpenAIServer(reply="Mars has two small moons, Phobos and Deimos.") as server:
        llm = ChatModelLLM(model=server.chat_model(max_retries=0, timeout=10))
        engine = index.as_query_engine(llm=llm, similarity_top_k=2)
        guarded = GuardedQueryEngine(query_engine=engine, detectors=RefChecker(threshold=0.5))
        response = guarded.query("Which planet has the moons Phobos and Deimos?")
        assert len(server.requests) == 1
    result = response.metadata["truthguard"]
    assert result.status == "passed"
    assert any("Phobos" in n.node.get_content() for n in response.source_nodes)
    assert result.usage.prompt_tokens > 0  # the server's reported usage reached the guard


@pytest.mark.parametrize(
    ("reply", "released"),
    [
        ("Mars has two small moons. They are Phobos and Deimos.", None),
        ("Phobos and Deimos orbit Saturn.", "I cannot tell."),
    ],
)
def test_a_guarded_streaming_engine_over_chat_openai_streams_only_checked_text(
    minilm, reply, released
):
    pytest.importorskip("langchain_openai")
    from llama_index.core.base.response.schema import StreamingResponse

    from truthguard.guard import Fallback
    from truthguard.testing import OpenAIServer

    index = VectorStoreIndex(corpus_nodes(), embed_model=minilm)
    with OpenAIServer(reply=reply) as server:
        llm = ChatModelLLM(model=server.chat_model(max_retries=0, timeout=10, streaming=True))
        engine = index.as_query_engine(llm=llm, similarity_top_k=2, streaming=True)
        guarded = GuardedQueryEngine(
            query_engine=engine,
            detectors=RefChecker(threshold=0.5),
            policies=[Fallback(answer="I cannot tell.")],
        )
        response = guarded.query("Which planet has the moons Phobos and Deimos?")
        assert server.requests[0].stream  # the engine really streamed
    assert isinstance(response, StreamingResponse)
    pieces = list(response.response_gen)
    result = response.metadata["truthguard"]
    if released is None:
        assert result.status == "passed" and len(pieces) == 2 and "".join(pieces) == reply
    else:
        assert result.status == "fallback" and pieces == [released]
        assert "Saturn" in result.attempts[0].answer  # the refused answer is kept, never streamed
