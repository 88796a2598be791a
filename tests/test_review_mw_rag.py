"""Review fixes: ReRetrieve's larger k keeps the retriever's other search kwargs."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

from truthguard.embeddings import SimilarityEmbeddings
from truthguard.errors import InvalidInputError
from truthguard.guard import HallucinationGuard, ReRetrieve
from truthguard.rag import build_rag_chain
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard.vectorstore import ChromaVectorStore


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
