"""A real guarded LCEL chain for the record and review tests: ``ChatOpenAI`` over
:class:`~truthguard.testing.OpenAIServer`, a Chroma retriever on a ``chroma run`` server, the
local ``RefChecker`` in a ``HallucinationGuard``, and the callback handler writing JSONL."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

PASSAGES = [
    "Mars has two small moons, Phobos and Deimos. Asaph Hall discovered both in 1877.",
    "Jupiter has dozens of moons; the four largest are Io, Europa, Ganymede and Callisto.",
]
WRONG = "Mars has two moons, Phobos and Deimos, which Asaph Hall discovered in 1610."
RIGHT = "Mars has two moons, Phobos and Deimos, discovered by Asaph Hall in 1877."
QUESTION = "Which moons does Mars have, and who found them?"


def mars_reply(messages: list[dict[str, Any]]) -> str:
    """Errs until the guard's feedback reaches it, as a model corrected by its checker does."""
    return RIGHT if "fact-checker doubted" in str(messages[-1]["content"]) else WRONG


def guarded_chain(server: Any, chroma_url: str, *, policies: list[Any]) -> Any:
    """``retriever | prompt | ChatOpenAI | StrOutputParser`` guarded by the local RefChecker."""
    import chromadb
    from langchain_chroma import Chroma
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.guard import HallucinationGuard
    from truthguard.refchecker import RefChecker

    host, port = chroma_url.removeprefix("http://").split(":")
    store = Chroma(
        collection_name=f"mars-{uuid.uuid4().hex[:8]}",
        embedding_function=SimilarityEmbeddings(),
        client=chromadb.HttpClient(host=host, port=int(port)),
    )
    store.add_texts(PASSAGES)
    retriever = store.as_retriever(search_kwargs={"k": 2})
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the passages.\n\n{context}"),
            ("human", "{question}\n\n{feedback}"),
        ]
    )
    chain = (
        {
            "context": (lambda x: x["question"]) | retriever,
            "question": lambda x: x["question"],
            "feedback": lambda x: x.get("feedback") or "",  # Regenerate's notes, when asked again
        }
        | RunnablePassthrough.assign(
            context=lambda x: "\n\n".join(d.page_content for d in x["context"])
        )
        | prompt
        | server.chat_model(max_retries=0, timeout=10)
        | StrOutputParser()
    )
    return HallucinationGuard(chain=chain, detectors=[RefChecker()], policies=policies)


def run_logged(guard: Any, log: Path) -> Any:
    """Invoke ``guard`` once with the callback handler attached; the handler's JSONL is ``log``."""
    from truthguard.callbacks import JSONLSink, TruthGuardCallbackHandler
    from truthguard.refchecker import RefChecker

    handler = TruthGuardCallbackHandler(RefChecker(), sinks=[JSONLSink(log)])
    try:
        return guard.invoke({"question": QUESTION}, {"callbacks": [handler]})
    finally:
        handler.close()
