from __future__ import annotations

import math

from llama_index.core.llms import ChatMessage

from truthguard.testing import ScriptedChatModel
from truthguard_llamaindex.testing import ChatModelLLM, KeywordEmbedding, corpus_nodes


def test_chat_model_llm_sync_async_stream_and_usage():
    model = ScriptedChatModel(script=["one two", "three", "four five six"])
    llm = ChatModelLLM(model=model)
    r = llm.complete("a prompt")
    assert r.text == "one two"
    assert r.additional_kwargs == {"prompt_tokens": 2, "completion_tokens": 2}
    chunks = list(llm.stream_complete("p"))
    assert chunks[-1].text == "three"
    assert model.calls == ["a prompt", "p"]


async def test_chat_model_llm_async_path():
    llm = ChatModelLLM(model=ScriptedChatModel(script=lambda p: p.upper()))
    assert (await llm.acomplete("mars")).text == "MARS"
    reply = await llm.achat([ChatMessage(role="user", content="phobos")])
    assert "PHOBOS" in reply.message.content


def test_chat_model_llm_without_reported_usage():
    llm = ChatModelLLM(model=ScriptedChatModel(script=["x"], report_usage=False))
    assert llm.complete("p").additional_kwargs == {}


def test_keyword_embedding_is_deterministic_and_topical():
    emb = KeywordEmbedding(dim=64)
    a = emb.get_text_embedding("Mars has two moons")
    assert a == KeywordEmbedding(dim=64).get_text_embedding("Mars has two moons")
    assert math.isclose(sum(x * x for x in a), 1.0)

    def cos(u, v):
        return sum(x * y for x, y in zip(u, v, strict=True))

    q = emb.get_query_embedding("moons of Mars")
    assert cos(q, a) > cos(q, emb.get_text_embedding("Gutenberg printing press"))
    assert emb.get_text_embedding("") == [0.0] * 64


def test_corpus_nodes_are_the_shipped_sections():
    nodes = corpus_nodes()
    assert len(nodes) >= 10 and all(n.text.strip() for n in nodes)
    assert {n.metadata["source"] for n in nodes} == {
        "hallucination-detection.md",
        "printing-press.md",
        "solar-system.md",
    }
