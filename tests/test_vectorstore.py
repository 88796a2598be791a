"""Review fixes: ChromaVectorStore honours metadata filters instead of ignoring them."""

from __future__ import annotations

import pytest

from truthguard.embeddings import SimilarityEmbeddings
from truthguard.errors import InvalidInputError
from truthguard.vectorstore import ChromaVectorStore


@pytest.fixture(scope="module")
def store(embedder):
    texts = [f"Planet fact {i} for {t}." for t in ("acme", "other") for i in range(3)]
    metas = [{"tenant": t} for t in ("acme", "other") for _ in range(3)]
    return ChromaVectorStore.from_texts(texts, SimilarityEmbeddings(embedder), metadatas=metas)


def test_similarity_search_filter(store):
    docs = store.similarity_search("planet fact", k=6, filter={"tenant": "acme"})
    assert len(docs) == 3 and {d.metadata["tenant"] for d in docs} == {"acme"}
    assert store.similarity_search("planet fact", k=6, filter={"tenant": "nobody"}) == []


def test_retriever_search_kwargs_filter(store):
    retriever = store.as_retriever(search_kwargs={"k": 6, "filter": {"tenant": "other"}})
    assert {d.metadata["tenant"] for d in retriever.invoke("planet fact")} == {"other"}


async def test_mmr_and_async_filter(store):
    docs = await store.amax_marginal_relevance_search(
        "planet fact", k=2, fetch_k=6, filter={"tenant": "acme"}
    )
    assert len(docs) == 2 and {d.metadata["tenant"] for d in docs} == {"acme"}
    docs = await store.asimilarity_search("planet fact", k=6, filter={"tenant": "acme"})
    assert {d.metadata["tenant"] for d in docs} == {"acme"}


def test_relevance_scores_with_filter(store):
    pairs = store.similarity_search_with_relevance_scores(
        "planet fact", k=6, filter={"tenant": "acme"}
    )
    assert len(pairs) == 3 and all(0.0 <= s <= 1.0 for _, s in pairs)


def test_a_callable_filter_is_refused_not_ignored(store):
    with pytest.raises(InvalidInputError) as info:
        store.similarity_search("planet fact", filter=lambda d: True)
    assert info.value.field == "filter"
