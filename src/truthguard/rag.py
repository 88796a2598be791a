"""A retrieval-augmented chain the guard can re-retrieve on.

:func:`build_rag_chain` wires a retriever, a prompt and a chat model into a chain that takes
``{"question": ...}`` and returns ``{"question", "context", "answer"}``. It exposes what the
guard's policies need: the retriever's ``search_kwargs`` (``ReRetrieve`` asks for a larger
``k``), an optional fallback retriever as a configurable alternative, a ``retrieval_query`` input
key (a rewritten query), a ``feedback`` slot in the prompt (``Regenerate``) and the model's
``temperature`` when it has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import (
    ConfigurableField,
    Runnable,
    RunnableConfig,
    RunnableLambda,
    RunnablePassthrough,
    RunnablePick,
)

from truthguard.errors import InvalidInputError
from truthguard.guard.policies import (
    RETRIEVAL_QUERY_KEY,
    RETRIEVER_FIELD,
    SEARCH_KWARGS_FIELD,
    TEMPERATURE_FIELD,
)

__all__ = [
    "RAG_PROMPT",
    "build_rag_chain",
    "chroma_retriever",
    "corpus_documents",
    "format_documents",
    "split_markdown",
]

# Grounded answering prompt (our wording); the feedback slot is filled by the guard's Regenerate.
RAG_PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "Answer the question using the numbered passages below. Use only facts the passages "
            "support; if they do not contain the answer, say that you cannot tell from them.\n\n"
            "{context}",
        ),
        ("human", "{question}\n\n{feedback}"),
    ]
).partial(feedback="")


def format_documents(docs: Sequence[Document]) -> str:
    """Numbered passages, one per document, for the prompt."""
    return "\n\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(docs, 1))


def _configurable_retriever(retriever: BaseRetriever) -> Runnable[Any, Any]:
    if "search_kwargs" in type(retriever).model_fields:  # VectorStoreRetriever and friends
        return retriever.configurable_fields(
            search_kwargs=ConfigurableField(
                id=SEARCH_KWARGS_FIELD, name="Search kwargs", description="e.g. {'k': 8}"
            )
        )
    return retriever


def _merging_search_kwargs(
    chosen: Runnable[Any, Any], own: dict[str, dict[str, Any]]
) -> Runnable[Any, Any]:
    """Merge a configured ``search_kwargs`` over the chosen retriever's own (keyed by alternative).

    ``ReRetrieve`` sends ``{"k": 8}``; the retriever's filter, score threshold... must survive.
    """

    def merged(config: RunnableConfig) -> RunnableConfig:
        conf = config.get("configurable") or {}
        extra = conf.get(SEARCH_KWARGS_FIELD)
        if not isinstance(extra, dict):
            return config
        base = own.get(conf.get(RETRIEVER_FIELD) or "primary", {})
        return {**config, "configurable": {**conf, SEARCH_KWARGS_FIELD: {**base, **extra}}}

    def retrieve(query: str, config: RunnableConfig) -> Any:
        return chosen.invoke(query, merged(config))

    async def aretrieve(query: str, config: RunnableConfig) -> Any:
        return await chosen.ainvoke(query, merged(config))

    return RunnableLambda(retrieve, afunc=aretrieve, name="retrieve")


def _retrieval_query(x: Any) -> str:
    question = x.get("question") if isinstance(x, Mapping) else None
    if not isinstance(question, str) or not question.strip():
        raise InvalidInputError(
            "question", "the RAG chain takes a dict with a non-blank string 'question'"
        )
    return x.get(RETRIEVAL_QUERY_KEY) or question


def build_rag_chain(
    retriever: BaseRetriever,
    model: BaseChatModel | Runnable[Any, Any],
    *,
    prompt: ChatPromptTemplate | None = None,
    fallback_retriever: BaseRetriever | None = None,
) -> Runnable[dict[str, Any], dict[str, Any]]:
    """Build ``question -> retrieve -> prompt -> model`` returning question, context and answer.

    Args:
        retriever: Any LangChain retriever (for example ``store.as_retriever()`` on a
            :class:`~truthguard.vectorstore.ChromaVectorStore`).
        model: The chat model that answers.
        prompt: A prompt with ``{context}``, ``{question}`` and ``{feedback}`` (default
            :data:`RAG_PROMPT`).
        fallback_retriever: Selected with ``configurable={"retriever": "fallback"}`` (what
            ``ReRetrieve(alternative="fallback")`` sends).

    Example:
        >>> # chain = build_rag_chain(store.as_retriever(search_kwargs={"k": 4}), model)
        >>> # guard = HallucinationGuard(chain=chain, detectors=[...], policies=[ReRetrieve()])
    """
    if not isinstance(retriever, BaseRetriever):
        raise InvalidInputError(
            "retriever", f"expected a retriever, got {type(retriever).__name__}"
        )
    prompt = prompt or RAG_PROMPT
    missing = {"context", "question"} - set(prompt.input_variables) - set(prompt.partial_variables)
    if missing:
        raise InvalidInputError("prompt", f"needs the variables {sorted(missing)}")
    chosen: Runnable[Any, Any] = _configurable_retriever(retriever)
    if fallback_retriever is not None:
        chosen = chosen.configurable_alternatives(  # type: ignore[attr-defined]
            ConfigurableField(id=RETRIEVER_FIELD, name="Retriever"),
            default_key="primary",
            fallback=_configurable_retriever(fallback_retriever),
        )
    own = {
        key: dict(getattr(r, "search_kwargs", None) or {})
        for key, r in (("primary", retriever), ("fallback", fallback_retriever))
        if r is not None
    }
    chosen = _merging_search_kwargs(chosen, own)
    if "temperature" in getattr(type(model), "model_fields", {}):
        model = model.configurable_fields(  # type: ignore[union-attr]
            temperature=ConfigurableField(id=TEMPERATURE_FIELD, name="Temperature")
        )
    query = RunnableLambda(_retrieval_query, name="query")
    answer = (
        RunnablePassthrough.assign(context=lambda x: format_documents(x["context"]))
        | prompt
        | model
        | StrOutputParser()
    )
    chain = RunnablePassthrough.assign(context=query | chosen) | RunnablePassthrough.assign(
        answer=answer
    )
    # RunnablePick streams (a lambda would wait for the whole answer before yielding).
    pick = RunnablePick(["question", "context", "answer"]).with_config(run_name="rag_output")
    return (chain | pick).with_config(run_name="truthguard_rag")


def chroma_retriever(
    documents: Sequence[Document | str],
    *,
    k: int = 4,
    embeddings: Embeddings | None = None,
    persist_directory: str | Path | None = None,
) -> BaseRetriever:
    """The default retriever: ``documents`` in a :class:`~truthguard.vectorstore.ChromaVectorStore`.

    Args:
        documents: Documents or plain strings.
        k: Documents fetched per query (``ReRetrieve`` can raise it per attempt).
        embeddings: Defaults to :class:`~truthguard.embeddings.SimilarityEmbeddings` (MiniLM).
        persist_directory: Keep the collection on disk instead of in memory.
    """
    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.vectorstore import ChromaVectorStore

    if k < 1:
        raise InvalidInputError("k", "must be at least 1")
    docs = [d if isinstance(d, Document) else Document(page_content=str(d)) for d in documents]
    if not docs:
        raise InvalidInputError("documents", "needs at least one document")
    store = ChromaVectorStore.from_texts(
        [d.page_content for d in docs],
        embeddings or SimilarityEmbeddings(),
        metadatas=[d.metadata for d in docs],
        persist_directory=persist_directory,
    )
    return store.as_retriever(search_kwargs={"k": k})


def corpus_documents(path: str | Path | None = None) -> list[Document]:
    """Passages of the shipped demo corpus (or of the ``.md`` files in ``path``).

    Each Markdown file is split at its ``##`` headings; the passage keeps its heading and the
    file name in ``metadata``.
    """
    if path is None:
        files = sorted(
            (
                f
                for f in resources.files("truthguard").joinpath("corpus").iterdir()
                if f.name.endswith(".md")
            ),
            key=lambda f: f.name,
        )
    else:
        root = Path(path)
        if not root.is_dir():
            raise InvalidInputError("path", f"no directory at {root}")
        files = sorted(root.glob("*.md"))  # type: ignore[arg-type]
    docs: list[Document] = []
    for f in files:
        docs += split_markdown(f.read_text(encoding="utf-8"), source=f.name)
    return docs


def split_markdown(text: str, *, source: str = "") -> list[Document]:
    """Split a Markdown page into one passage per ``##`` section (prefixed with its headings)."""
    sections: list[tuple[str, list[str]]] = []
    title = ""
    for line in text.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
        elif line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        elif line.strip():
            sections.append(("", [line]))
    docs = []
    for section, body in sections:
        content = " ".join(" ".join(body).split())
        if not content:
            continue
        head = f"{title} - {section}" if section else title
        docs.append(
            Document(
                page_content=f"{head}: {content}" if head else content,
                metadata={"source": source, "section": section or title},
            )
        )
    return docs
