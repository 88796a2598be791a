"""The RAG helper: output shape, and the knobs the guard's policies turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

from truthguard.embeddings import SimilarityEmbeddings
from truthguard.errors import InvalidInputError
from truthguard.guard import HallucinationGuard, Regenerate, ReRetrieve
from truthguard.rag import build_rag_chain, corpus_documents, split_markdown
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard.vectorstore import ChromaVectorStore

SEEN: list[str] = []


class TemperatureModel(ScriptedChatModel):
    temperature: float = 0.0

    def _produce(self, prompt: str, metadata: Mapping[str, Any]) -> str:
        SEEN.append(prompt)  # configurable fields make copies: record outside the instance
        return f"temperature {self.temperature}"


@pytest.fixture(scope="module")
def corpus_store(embedder):
    return ChromaVectorStore.from_texts(
        [d.page_content for d in corpus_documents()],
        SimilarityEmbeddings(embedder),
        metadatas=[d.metadata for d in corpus_documents()],
    )


def test_chain_returns_question_context_answer(corpus_store):
    model = ScriptedChatModel(script=lambda p: "Eight planets.")
    chain = build_rag_chain(corpus_store.as_retriever(search_kwargs={"k": 2}), model)
    out = chain.invoke({"question": "How many planets orbit the Sun?"})
    assert set(out) == {"question", "context", "answer"}
    assert out["answer"] == "Eight planets." and len(out["context"]) == 2
    assert "Mercury" in model.calls[0]  # the retrieved passage reached the prompt


def test_reretrieve_raises_k_through_the_guard(corpus_store):
    model = ScriptedChatModel(script=lambda p: f"saw {p.count('[')} passages")
    chain = build_rag_chain(corpus_store.as_retriever(search_kwargs={"k": 1}), model)
    detector = FakeDetector(score=lambda inp: 1.0 if len(inp.contexts) >= 4 else 0.0, threshold=0.5)
    guard = HallucinationGuard(chain=chain, detectors=detector, policies=[ReRetrieve(k=[4])])
    out = guard.invoke({"question": "Who invented printing with movable metal type?"})
    assert out.passing and [len(a.contexts) for a in out.attempts] == [1, 4]


def test_rewritten_query_and_fallback_retriever(corpus_store, embedder):
    fallback = InMemoryVectorStore.from_texts(
        ["The fallback knows: Gutenberg worked in Mainz."], SimilarityEmbeddings(embedder)
    )
    model = ScriptedChatModel(script=lambda p: "ok")
    chain = build_rag_chain(
        corpus_store.as_retriever(search_kwargs={"k": 1}),
        model,
        fallback_retriever=fallback.as_retriever(search_kwargs={"k": 1}),
    )
    out = chain.invoke(
        {"question": "Q?", "retrieval_query": "Pluto dwarf planet"},
    )
    assert "Pluto" in out["context"][0].page_content
    out = chain.invoke({"question": "Q?"}, {"configurable": {"retriever": "fallback"}})
    assert out["context"][0].page_content.startswith("The fallback knows")


def test_feedback_and_temperature_reach_the_model(corpus_store):
    model = TemperatureModel()
    SEEN.clear()
    chain = build_rag_chain(corpus_store.as_retriever(search_kwargs={"k": 1}), model)
    detector = FakeDetector(score=lambda inp: float("0.7" in inp.answer), threshold=0.5)
    guard = HallucinationGuard(
        chain=chain, detectors=detector, policies=[Regenerate(temperature=0.7)]
    )
    out = guard.invoke({"question": "What colour is Mars?"})
    assert out.passing and out.answer == "temperature 0.7"
    assert "fact-checker doubted" in SEEN[-1] and "fact-checker" not in SEEN[-2]


def test_prompt_needs_context_and_question(corpus_store):
    from langchain_core.prompts import ChatPromptTemplate

    with pytest.raises(InvalidInputError, match="prompt"):
        build_rag_chain(
            corpus_store.as_retriever(),
            ScriptedChatModel(script=["x"]),
            prompt=ChatPromptTemplate.from_template("{question}"),
        )


def test_split_markdown_and_shipped_corpus():
    docs = split_markdown("# Title\n\n## A\none\ntwo\n\n## B\nthree\n", source="t.md")
    assert [d.page_content for d in docs] == ["Title - A: one two", "Title - B: three"]
    shipped = corpus_documents()
    assert len(shipped) >= 10 and {d.metadata["source"] for d in shipped} >= {"solar-system.md"}


def test_chroma_retriever_default(embedder):
    from truthguard.rag import chroma_retriever

    retriever = chroma_retriever(
        ["Phobos orbits Mars.", "Gutenberg printed in Mainz."],
        k=1,
        embeddings=SimilarityEmbeddings(embedder),
    )
    assert retriever.invoke("moons of Mars")[0].page_content == "Phobos orbits Mars."
    with pytest.raises(InvalidInputError, match="documents"):
        chroma_retriever([], embeddings=SimilarityEmbeddings(embedder))


def test_chain_over_langchain_chroma_streams_the_answer_and_re_retrieves(embedder):
    from langchain_chroma import Chroma

    store = Chroma.from_texts(
        ["Phobos orbits Mars.", "Deimos orbits Mars.", "Io orbits Jupiter."],
        SimilarityEmbeddings(embedder),
        collection_name="rag_stream_test",
    )
    model = ScriptedChatModel(
        script=lambda p: "Mars has two moons, Phobos and Deimos." if "[3]" in p else "One."
    )
    chain = build_rag_chain(store.as_retriever(search_kwargs={"k": 1}), model)
    answer_chunks = [
        c["answer"] for c in chain.stream({"question": "Moons of Mars?"}) if "answer" in c
    ]
    assert len(answer_chunks) > 1  # streamed token by token, not once at the end
    guard = HallucinationGuard(
        chain=chain,
        detectors=FakeDetector(score=lambda i: 1.0 if "two" in i.answer else 0.0, threshold=0.5),
        policies=[ReRetrieve(k=[3])],
    )
    out = guard.invoke({"question": "Moons of Mars?"})
    assert out.passing and [len(a.contexts) for a in out.attempts] == [1, 3]
    store.delete_collection()


def tenant_store(embedder) -> InMemoryVectorStore:
    store = InMemoryVectorStore(embedding=SimilarityEmbeddings(embedder))
    store.add_documents(
        [
            Document(page_content=f"Planet fact {i} for {t}.", metadata={"tenant": t})
            for t in ("acme", "other")
            for i in range(4)
        ]
    )
    return store


def only_acme(doc: Document) -> bool:
    return doc.metadata.get("tenant") == "acme"


def test_larger_k_keeps_the_retriever_filter(embedder):
    retriever = tenant_store(embedder).as_retriever(search_kwargs={"k": 1, "filter": only_acme})
    chain = build_rag_chain(retriever, ScriptedChatModel(script=lambda p: "an answer"))
    out = chain.invoke({"question": "planet fact?"}, {"configurable": {"search_kwargs": {"k": 6}}})
    assert len(out["context"]) == 4  # every acme document, and no other tenant's
    assert all(d.metadata["tenant"] == "acme" for d in out["context"])


async def test_reretrieve_on_a_score_threshold_retriever(embedder):
    store = ChromaVectorStore.from_texts(
        [f"Planet fact {i}." for i in range(8)], SimilarityEmbeddings(embedder)
    )
    retriever = store.as_retriever(
        search_type="similarity_score_threshold",
        search_kwargs={"k": 1, "score_threshold": 0.0},
    )
    chain = build_rag_chain(retriever, ScriptedChatModel(script=lambda p: "an answer"))
    guard = HallucinationGuard(
        chain=chain,
        detectors=FakeDetector(score=lambda i: len(i.contexts) / 10, threshold=0.5),
        policies=[ReRetrieve(k=[6])],
    )
    out = await guard.ainvoke({"question": "planet fact?"})
    assert out.attempts[1].error is None
    assert len(out.attempts[1].contexts) == 6 and out.status == "passed"


def test_search_kwargs_stays_a_configurable_field(embedder):
    retriever = tenant_store(embedder).as_retriever(search_kwargs={"k": 1})
    chain = build_rag_chain(retriever, ScriptedChatModel(script=lambda p: "an answer"))
    assert "search_kwargs" in {s.id for s in chain.config_specs}


@pytest.mark.parametrize("bad", [{"query": "planet fact?"}, {"question": "  "}, {"question": None}])
async def test_input_without_a_question_names_the_field(embedder, bad):
    retriever = tenant_store(embedder).as_retriever(search_kwargs={"k": 1})
    chain = build_rag_chain(retriever, ScriptedChatModel(script=lambda p: "an answer"))
    with pytest.raises(InvalidInputError) as info:
        chain.invoke(bad)
    assert info.value.field == "question"
    with pytest.raises(InvalidInputError):
        await chain.ainvoke(bad)
