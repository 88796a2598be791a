from __future__ import annotations

import asyncio
import json
import sqlite3
import threading

import pytest
from llama_index.core import VectorStoreIndex, get_response_synthesizer
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, TextNode

from truthguard.callbacks import JSONLSink, SQLiteSink
from truthguard.errors import InvalidInputError
from truthguard.guard import Regenerate
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard_llamaindex import GuardedQueryEngine, TruthGuardEventHandler
from truthguard_llamaindex.testing import ChatModelLLM, KeywordEmbedding, corpus_nodes


def _echo(prompt: str) -> str:
    """Answers with the question it was asked, so each record can be matched to its query."""
    return "answer to " + prompt.split("Query: ")[-1].split("\n")[0].strip()


@pytest.fixture(scope="module")
def index():
    return VectorStoreIndex(corpus_nodes(), embed_model=KeywordEmbedding())


@pytest.fixture()
def engine(index):
    model = ScriptedChatModel(script=_echo, latency=0.005)
    return index.as_query_engine(llm=ChatModelLLM(model=model), similarity_top_k=2)


@pytest.fixture()
def make_handler():
    made = []

    def make(*args, **kwargs):
        handler = TruthGuardEventHandler(*args, **kwargs).register()
        made.append(handler)
        return handler

    yield make
    for h in made:  # the root dispatcher is process-wide: leave it as found
        h.unregister()
        h.close(timeout=10)


async def test_100_concurrent_queries_lose_no_record(engine, make_handler, tmp_path):
    records = []
    lock = threading.Lock()

    def collect(record):
        with lock:
            records.append(record)

    handler = make_handler(
        FakeDetector(score=0.8, threshold=0.5, latency=0.002),
        sinks=[collect, JSONLSink(tmp_path / "s.jsonl")],
        concurrency=8,
    )
    questions = [f"What do we know about Mars, item {i}?" for i in range(100)]
    await asyncio.gather(*(engine.aquery(q) for q in questions))
    assert await handler.aflush(timeout=60)
    summary = handler.summary()
    assert (summary["count"], summary["scored"], summary["failed"]) == (100, 100, 0)
    assert summary["open_queries"] == 0
    assert sorted(r.question for r in records) == sorted(questions)
    assert all(r.answer == f"answer to {r.question}" for r in records)  # correlated per query
    assert all(len(r.contexts) == 2 and "Mars" in " ".join(r.contexts) for r in records)
    assert len({r.run_id for r in records}) == 100
    assert all(r.metadata["span_id"].endswith(r.run_id) for r in records)
    handler.close()
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert len(lines) == 100 and json.loads(lines[0])["status"] == "scored"


def test_a_guarded_engine_is_one_capture_with_the_released_answer(engine, make_handler, tmp_path):
    records = []
    db = tmp_path / "scores.db"
    handler = make_handler(FakeDetector(score=1.0), sinks=[records.append, SQLiteSink(db)])
    guarded = GuardedQueryEngine(
        query_engine=engine,
        detectors=FakeDetector(score=lambda i: 1.0 if "fact-checker" in i.answer else 0.0),
        policies=[Regenerate()],
    )
    response = guarded.query("Where is Olympus Mons?")
    handler.flush(timeout=30)
    assert len(records) == 1  # the inner engine's two queries are not scored separately
    result = response.metadata["truthguard"]
    assert response.response is None and result.status == "rejected"  # nothing released
    assert records[0].answer == result.last_answer  # the refused answer is still logged
    assert records[0].metadata["span_id"].startswith("GuardedQueryEngine.query")
    assert records[0].metadata["guard_status"] == response.metadata["truthguard"].status
    handler.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT answer FROM truthguard_scores").fetchall()
    assert rows == [(result.last_answer,)]


@pytest.mark.parametrize("recheck", [False, True])
def test_a_guarded_engine_over_chat_openai_is_recorded_with_the_guards_verdict(
    index, make_handler, recheck
):
    """The guard has just checked the answer: the handler records that verdict with the
    attempt's contexts and makes no second check, unless told to re-check."""
    pytest.importorskip("langchain_openai")
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    records = []
    own = FakeDetector(score=0.2, threshold=0.5)  # the handler's own detector
    handler = make_handler(own, sinks=records.append, recheck=recheck)
    answer = "Mars has two moons, Phobos and Deimos."
    with OpenAIServer(reply=answer) as server:
        llm = ChatModelLLM(model=server.chat_model(max_retries=0, timeout=5))
        guarded = GuardedQueryEngine(
            query_engine=index.as_query_engine(llm=llm, similarity_top_k=2),
            detectors=RefChecker(threshold=0.5),
        )
        response = guarded.query("Which planet has the moons Phobos and Deimos?")
        assert handler.flush(timeout=30)
        requests = len(server.requests)
    result = response.metadata["truthguard"]
    (record,) = records
    assert requests == 1 and result.status == "passed" and record.answer == answer
    assert record.contexts == result.attempts[0].contexts
    if recheck:
        assert own.check_count == 1 and (record.detector, record.passing) == ("fake", False)
    else:
        assert own.check_count == 0 and record.metadata["truthguard_source"] == "guard"
        assert (record.detector, record.passing, record.label) == ("refchecker", True, "factual")
        assert record.metadata["guard_status"] == "passed"


def test_a_guarded_engine_that_falls_back_is_recorded_with_the_answer_it_refused(
    index, make_handler
):
    pytest.importorskip("langchain_openai")
    from truthguard.guard import Fallback
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    records = []
    own = FakeDetector(score=1.0)  # would pass the fallback text if it were asked
    handler = make_handler(own, sinks=records.append)
    wrong = "Phobos and Deimos are the moons of Jupiter, discovered in 1610."
    with OpenAIServer(reply=wrong) as server:
        llm = ChatModelLLM(model=server.chat_model(max_retries=0, timeout=5))
        guarded = GuardedQueryEngine(
            query_engine=index.as_query_engine(llm=llm, similarity_top_k=2),
            detectors=RefChecker(threshold=0.5),
            policies=[Fallback(answer="I cannot tell.")],
        )
        response = guarded.query("Which planet has the moons Phobos and Deimos?")
        assert handler.flush(timeout=30)
    result = response.metadata["truthguard"]
    (record,) = records
    assert (result.status, response.response) == ("fallback", "I cannot tell.")
    assert (record.answer, record.passing, record.label) == (wrong, False, "hallucinated")
    assert record.contexts == result.attempts[0].contexts and own.check_count == 0
    assert record.metadata["guard_status"] == "fallback"
    assert record.metadata["guard_released"] == "I cannot tell."
    assert handler.summary()["pass_rate"] == 0.0


class _RetrieveAndJoin(CustomQueryEngine):
    """A hand-written engine returning a plain string: its contexts come from the retrieval."""

    retriever: BaseRetriever

    def custom_query(self, query_str: str) -> str:
        nodes = self.retriever.retrieve(query_str)
        return "joined: " + " | ".join(n.node.get_content()[:10] for n in nodes)


def test_contexts_come_from_retrieval_events_when_the_response_has_none(index, make_handler):
    records = []
    handler = make_handler(FakeDetector(score=1.0), sinks=records.append)
    retriever = index.as_retriever(similarity_top_k=3)
    expected = [n.node.get_content() for n in retriever.retrieve("Bi Sheng movable type")]
    # CustomQueryEngine emits no QueryStartEvent: wrap it so the query is seen, as users do.
    guarded = GuardedQueryEngine(
        query_engine=_RetrieveAndJoin(retriever=retriever), detectors=FakeDetector()
    )
    guarded.query("Bi Sheng movable type")
    handler.flush(timeout=30)
    assert len(records) == 1 and records[0].answer.startswith("joined: ")
    assert records[0].contexts == expected


def test_a_synthesis_outside_any_query_is_captured(make_handler):
    records = []
    handler = make_handler(FakeDetector(score=1.0), sinks=records.append)
    llm = ChatModelLLM(model=ScriptedChatModel(script=["Gutenberg."]))
    synth = get_response_synthesizer(llm=llm)
    node = NodeWithScore(node=TextNode(text="Gutenberg built a press around 1450."), score=1.0)
    synth.synthesize("Who built the press?", nodes=[node])
    handler.flush(timeout=30)
    assert [(r.question, r.answer) for r in records] == [("Who built the press?", "Gutenberg.")]
    assert records[0].metadata["kind"] == "synthesize"
    assert records[0].contexts == ["Gutenberg built a press around 1450."]


def test_a_failing_query_leaves_nothing_open(index, make_handler):
    records = []
    handler = make_handler(FakeDetector(), sinks=records.append)
    model = ScriptedChatModel(script=["x"], fail_first=1)
    engine = index.as_query_engine(llm=ChatModelLLM(model=model))
    with pytest.raises(RuntimeError):
        engine.query("Where is Mars?")
    handler.flush(timeout=30)
    assert records == [] and handler.summary()["open_queries"] == 0


def test_full_queue_and_closed_handler_still_write_a_record(engine, make_handler):
    records = []
    handler = make_handler(FakeDetector(latency=0.3), sinks=records.append, max_queue=1)
    for i in range(3):
        engine.query(f"Question {i} about the Sun?")
    handler.close(timeout=30)
    engine.query("After close, about the Moon?")
    assert len(records) == 4
    assert sorted(r.error or "scored" for r in records) == [
        "handler closed",
        "queue full",
        "queue full",
        "scored",
    ]


def test_an_unconsumed_stream_is_skipped_not_invented(index, make_handler):
    records = []
    handler = make_handler(FakeDetector(), sinks=records.append)
    llm = ChatModelLLM(model=ScriptedChatModel(script=["streamed answer"]))
    engine = index.as_query_engine(llm=llm, streaming=True)
    response = engine.query("Where is Mars?")
    handler.flush(timeout=30)
    assert records == [] and handler.summary()["skipped"] == 1
    assert str(response.get_response()) == "streamed answer"


def test_register_is_idempotent_and_unregister_removes_it(make_handler):
    handler = make_handler(FakeDetector())
    handler.register()
    root = get_dispatcher()
    assert sum(h is handler for h in root.event_handlers) == 1
    handler.unregister()
    assert not any(h is handler for h in root.event_handlers)


def test_bad_arguments_name_the_field():
    with pytest.raises(InvalidInputError, match="detector"):
        TruthGuardEventHandler("not a detector")
    with pytest.raises(InvalidInputError, match="max_queue"):
        TruthGuardEventHandler(FakeDetector(), max_queue=0)
    with pytest.raises(InvalidInputError, match="when_full"):
        TruthGuardEventHandler(FakeDetector(), when_full="drop")
    with pytest.raises(InvalidInputError, match="entity"):
        TruthGuardEventHandler(FakeDetector(), detector_fields={"entity": "Mars"})


def test_records_are_gen_ai_evaluation_events_under_the_query_span(engine, make_handler):
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the global provider can be set only once
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handler = make_handler(FakeDetector(score=0.9, threshold=0.5), sinks=[])
    with trace.get_tracer("tests").start_as_current_span("query") as span:
        engine.query("Where is Olympus Mons?")
    assert handler.flush(timeout=30)
    own = [s for s in exporter.get_finished_spans() if s.name == "gen_ai.evaluation.result"]
    (record,) = own
    assert record.parent.span_id == span.get_span_context().span_id
    (event,) = record.events
    attrs = dict(event.attributes)
    assert attrs["gen_ai.evaluation.name"] == "fake"
    assert attrs["gen_ai.evaluation.score.label"] == "pass"
    assert attrs["gen_ai.evaluation.score.value"] == pytest.approx(0.9)
    exporter.clear()


def test_with_openinferences_instrumentor_records_are_under_the_query_span(engine, make_handler):
    # Runs where OpenInference's LlamaIndex instrumentor is installed (not in the dev extra).
    instrumentation = pytest.importorskip("openinference.instrumentation.llama_index")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the global provider can be set only once
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = instrumentation.LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        handler = make_handler(FakeDetector(score=0.9, threshold=0.5), sinks=[])
        engine.query("Where is Olympus Mons?")
        assert handler.flush(timeout=30)
    finally:
        instrumentor.uninstrument()
    finished = exporter.get_finished_spans()
    (query,) = [s for s in finished if s.name.endswith("QueryEngine.query")]
    (own,) = [s for s in finished if s.name == "gen_ai.evaluation.result"]
    assert own.parent.span_id == query.context.span_id
    exporter.clear()
