"""RunTracker (callbacks/_tracker.py): which runs are captured, with what question, answer and
contexts."""

from __future__ import annotations

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

from doubles import echo_chain
from truthguard.callbacks import (
    AsyncTruthGuardCallbackHandler,
    ScoreRecord,
    TruthGuardCallbackHandler,
)
from truthguard.testing import FakeDetector, ScriptedChatModel


class FixedRetriever(BaseRetriever):
    docs: list[str]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content=d) for d in self.docs]


def test_contexts_come_from_retriever_runs():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    retriever = FixedRetriever(docs=["Paris is in France.", "Lyon is in France."])
    chain = RunnableParallel(
        context=RunnableLambda(lambda x: x["question"]) | retriever,
        question=RunnablePassthrough(),
    ) | RunnableLambda(lambda x: {"answer": f"{len(x['context'])} docs"})
    chain.invoke({"question": "Where is Paris?"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert len(records) == 1
    assert records[0].contexts == ["Paris is in France.", "Lyon is in France."]
    assert records[0].answer == "2 docs"


def test_model_attached_directly_is_captured():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    model = ScriptedChatModel(script=["Shakespeare."], callbacks=[handler])
    model.invoke("Who wrote Hamlet?")
    handler.close(timeout=10)
    assert [(r.question, r.answer) for r in records] == [("Who wrote Hamlet?", "Shakespeare.")]


def test_runs_without_question_are_skipped_and_counted():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    RunnableLambda(lambda x: "y").invoke({"prompt": "no question key"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert records == [] and handler.summary()["skipped"] == 1


def test_detector_fields_are_passed_to_the_detector():
    from truthguard.detector import DetectorInput

    class EntityInput(DetectorInput):
        entity: str

    class EntityDetector(FakeDetector):
        input_model = EntityInput

    records: list[ScoreRecord] = []
    detector = EntityDetector(score=lambda inp: float(inp.entity in inp.answer), threshold=0.5)
    handler = TruthGuardCallbackHandler(detector, sinks=records.append, detector_fields=["entity"])
    chain = RunnableLambda(lambda inp: f"{inp['entity']} was a painter.")
    chain.invoke({"question": "Who was Hals?", "entity": "Frans Hals"}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert records[0].status == "scored" and records[0].passing is True


async def test_streamed_chains_are_recorded_like_invoked_ones():
    records: list[ScoreRecord] = []
    handler = AsyncTruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    chain = echo_chain()
    async for _ in chain.astream({"question": "astreamed?"}, {"callbacks": [handler]}):
        pass
    sync_handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    for _ in chain.stream({"question": "streamed?"}, {"callbacks": [sync_handler]}):
        pass
    assert await handler.aclose(timeout=10) and sync_handler.close(timeout=10)
    assert sorted((r.question, r.answer) for r in records) == [
        ("astreamed?", "answer: astreamed?"),
        ("streamed?", "answer: streamed?"),
    ]
    assert handler.summary()["skipped"] == sync_handler.summary()["skipped"] == 0


class TwoDocs(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content="a"), Document(page_content="b")]


async def test_retriever_run_on_its_own_is_not_kept_open():
    handler = TruthGuardCallbackHandler(FakeDetector(score=1.0), sinks=[])
    retriever = TwoDocs()
    for i in range(3):
        retriever.invoke(f"q{i}", {"callbacks": [handler]})
        await retriever.ainvoke(f"q{i}", {"callbacks": [handler]})
    assert handler._core.tracker.open_runs == 0
    assert handler.close(timeout=10)


def test_a_run_with_a_bad_chat_history_is_skipped_and_counted():
    records: list[ScoreRecord] = []
    handler = TruthGuardCallbackHandler(FakeDetector(), sinks=records.append)
    chain = RunnableLambda(lambda x: "an answer")
    chain.invoke({"question": "Q?", "chat_history": 5}, {"callbacks": [handler]})
    chain.invoke({"question": "Q?", "chat_history": [("human", "hi")]}, {"callbacks": [handler]})
    handler.close(timeout=10)
    assert [r.question for r in records] == ["Q?"] and handler.summary()["skipped"] == 1
