"""gen_ai.evaluation.result events: in the SDK's in-memory exporter and over OTLP/HTTP.

The OTLP receiver is a small HTTP server started in the test on 127.0.0.1: it decodes each
``POST /v1/traces`` body with the OpenTelemetry protobuf definitions, as a collector does. Arize
Phoenix, the receiver teams use, cannot share this virtualenv (it pins its own stack); with
``TRUTHGUARD_PHOENIX=/path/to/venv/bin/phoenix`` set, a test starts it as a subprocess and reads
the events back from its REST API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from doubles import fresh_interpreter
from truthguard import otel
from truthguard.guard import GuardVerdict
from truthguard.result import DetectionResult, Label

NAMES = {
    "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.value",
    "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.explanation",
}


@pytest.fixture(scope="module")
def exporter():
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the global provider can be set only once
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


@pytest.fixture()
def spans(exporter):
    exporter.clear()
    yield exporter
    exporter.clear()


def tracer():
    return trace.get_tracer("tests")


def events(span, name=otel.EVALUATION_EVENT):
    return [e for e in span.events if e.name == name]


def verdict(passed: bool) -> tuple[list[DetectionResult], GuardVerdict]:
    result = DetectionResult(
        detector="refchecker",
        score=0.9 if passed else 0.1,
        label=Label.FACTUAL if passed else Label.HALLUCINATED,
        passing=passed,
        explanation="claim 1: Contradiction",
    )
    v = GuardVerdict(
        passing=passed,
        combine="all",
        score=result.score,
        scores={"refchecker": result.score},
        passes={"refchecker": passed},
        reason="passed" if passed else "rejected: failed: refchecker",
    )
    return [result], v


def test_a_verdict_is_an_event_on_the_current_span(spans):
    results, v = verdict(False)
    with tracer().start_as_current_span("chat gpt-test") as span:
        otel.emit_verdict(["refchecker"], results, v, attempt=2, response_id="chatcmpl-1")
    (finished,) = spans.get_finished_spans()
    assert finished.context.span_id == span.get_span_context().span_id
    (event,) = events(finished)
    attrs = dict(event.attributes)
    assert set(attrs) >= NAMES
    assert attrs["gen_ai.evaluation.name"] == "refchecker"
    assert attrs["gen_ai.evaluation.score.value"] == pytest.approx(0.1)
    assert attrs["gen_ai.evaluation.score.label"] == "fail"
    assert attrs["gen_ai.response.id"] == "chatcmpl-1"
    assert (attrs["truthguard.decision"], attrs["truthguard.attempt"]) == ("fail", 2)
    assert "error.type" not in attrs


def test_without_a_current_span_the_event_gets_a_span_of_its_own(spans):
    with tracer().start_as_current_span("llm") as parent:
        parent_context = parent.get_span_context()
    invalid = DetectionResult.invalid("fewl", "check timed out", details={"error": "timeout"})
    otel.emit_result(invalid, span_context=parent_context, response_id="chatcmpl-2")
    own = [s for s in spans.get_finished_spans() if s.name == otel.EVALUATION_EVENT]
    (span,) = own
    assert span.parent.span_id == parent_context.span_id  # parented to the evaluated span
    assert span.context.trace_id == parent_context.trace_id
    attrs = dict(events(span)[0].attributes)
    assert (attrs["gen_ai.evaluation.name"], attrs["error.type"]) == ("fewl", "timeout")
    assert "gen_ai.evaluation.score.value" not in attrs


def test_an_explanation_is_capped():
    attrs = otel.evaluation_attributes("x", explanation="word " * 5000)
    assert len(attrs["gen_ai.evaluation.explanation"]) == 4096


def test_configure_turns_emission_off_and_back(spans):
    results, v = verdict(True)
    otel.configure(enabled=False)
    try:
        with tracer().start_as_current_span("llm"):
            otel.emit_verdict(["refchecker"], results, v, attempt=1)
    finally:
        otel.configure(enabled=None)
    (span,) = spans.get_finished_spans()
    assert events(span) == []


def test_the_agent_middleware_emits_each_check_on_the_callers_span(spans):
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from truthguard.agents import GroundingMiddleware
    from truthguard.testing import OpenAIServer, ToolCall

    @tool
    def search(query: str) -> str:
        """Search the encyclopedia."""
        return "The Eiffel Tower was completed in 1889."

    def reply(messages: list[dict]):
        if "fact-checker" in (messages[-1]["content"] or ""):
            return "It was completed in 1889."
        if messages[-1]["role"] == "tool":
            return "It was completed in 1925."
        return ToolCall("search", {"query": "Eiffel Tower"})

    with OpenAIServer(reply=reply) as server:
        model = server.chat_model(max_retries=0, timeout=10)
        agent = create_agent(model, tools=[search], middleware=[GroundingMiddleware()])
        with tracer().start_as_current_span("invoke_agent") as span:
            agent.invoke({"messages": [("user", "When was the Eiffel Tower completed?")]})
    (finished,) = [s for s in spans.get_finished_spans() if s.name == "invoke_agent"]
    assert finished.context.span_id == span.get_span_context().span_id
    got = [dict(e.attributes) for e in events(finished)]
    assert [(a["truthguard.attempt"], a["truthguard.decision"]) for a in got] == [
        (1, "fail"),
        (2, "pass"),
    ]
    assert all(a["gen_ai.response.id"].startswith("chatcmpl-") for a in got)
    assert all(a["gen_ai.evaluation.name"] == "refchecker" for a in got)


def test_guard_verdicts_are_events_on_the_current_span(spans):
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda

    from truthguard.guard import HallucinationGuard, Regenerate
    from truthguard.testing import FakeDetector

    calls = []

    def answer(question: str) -> AIMessage:
        calls.append(question)
        text = "Paris." if len(calls) > 1 else "Lyon."
        return AIMessage(content=text, response_metadata={"id": f"chatcmpl-{len(calls)}"})

    guard = HallucinationGuard(
        chain=RunnableLambda(answer),
        detectors=FakeDetector(score=lambda i: 1.0 if i.answer == "Paris." else 0.0),
        policies=[Regenerate(feedback_key=None)],
    )
    with tracer().start_as_current_span("chain") as span:
        assert guard.invoke("Capital of France?").status == "passed"
    (finished,) = [s for s in spans.get_finished_spans() if s.name == "chain"]
    assert finished.context.span_id == span.get_span_context().span_id
    got = [dict(e.attributes) for e in events(finished)]
    assert [(a["truthguard.attempt"], a["truthguard.decision"]) for a in got] == [
        (1, "fail"),
        (2, "pass"),
    ]
    assert [a["gen_ai.response.id"] for a in got] == ["chatcmpl-1", "chatcmpl-2"]
    assert got[1]["truthguard.policy"] == "regenerate"


async def test_a_streaming_guard_emits_one_event_per_sentence(spans):
    from truthguard.guard import StreamingGuard
    from truthguard.testing import FakeDetector, ScriptedChatModel

    model = ScriptedChatModel(script=lambda p: "Paris is in France. It has a river.")
    guard = StreamingGuard(chain=model, detector=FakeDetector(score=1.0))
    with tracer().start_as_current_span("stream"):
        await guard.ainvoke("Where is Paris?")
    (finished,) = [s for s in spans.get_finished_spans() if s.name == "stream"]
    got = [dict(e.attributes) for e in events(finished)]
    assert [a["gen_ai.evaluation.score.label"] for a in got] == ["pass", "pass"]


def test_callback_records_are_parented_to_the_span_of_the_answer(spans):
    from langchain_core.runnables import RunnableLambda

    from truthguard.callbacks import TruthGuardCallbackHandler
    from truthguard.testing import FakeDetector

    handler = TruthGuardCallbackHandler(FakeDetector(score=0.2, threshold=0.5), sinks=[])
    chain = RunnableLambda(lambda q: {"answer": "Lyon.", "context": ["Paris is the capital."]})
    with tracer().start_as_current_span("chain") as span:
        chain.invoke({"question": "Capital of France?"}, {"callbacks": [handler]})
    assert handler.flush(timeout=30)
    handler.close(timeout=30)
    (own,) = [s for s in spans.get_finished_spans() if s.name == otel.EVALUATION_EVENT]
    assert own.parent.span_id == span.get_span_context().span_id  # scored later, same parent
    attrs = dict(events(own)[0].attributes)
    assert (attrs["gen_ai.evaluation.name"], attrs["gen_ai.evaluation.score.label"]) == (
        "fake",
        "fail",
    )
    assert attrs["truthguard.run_id"]


class _CallbackTracer:
    """A tracer like OpenInference's LangChain instrumentor: a span per run, opened and ended
    from callbacks, never made current, found with ``get_span(run_id)``."""

    def __new__(cls):
        from langchain_core.callbacks import BaseCallbackHandler

        class Tracer(BaseCallbackHandler):
            def __init__(self) -> None:
                self.spans: dict = {}

            def get_span(self, run_id):
                return self.spans.get(run_id)

            def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
                parent = self.spans.get(parent_run_id)
                context = trace.set_span_in_context(parent) if parent else None
                name = kw.get("name") or "chain"
                self.spans[run_id] = tracer().start_span(name, context=context)

            def on_chain_end(self, outputs, *, run_id, **kw):
                self.spans[run_id].end()

        return Tracer()


def test_with_a_callback_tracer_verdicts_land_on_the_runs_span(spans):
    from langchain_core.runnables import RunnableLambda

    from truthguard.guard import HallucinationGuard
    from truthguard.testing import FakeDetector

    callback_tracer = _CallbackTracer()
    guard = HallucinationGuard(
        chain=RunnableLambda(lambda q: "Paris."), detectors=FakeDetector(score=0.9)
    )
    guard.invoke("Capital of France?", {"callbacks": [callback_tracer]})
    assert trace.get_current_span().is_recording() is False  # nothing was made current
    (run,) = [s for s in spans.get_finished_spans() if s.name == "HallucinationGuard"]
    got = [dict(e.attributes) for e in events(run)]
    assert [(a["gen_ai.evaluation.name"], a["truthguard.decision"]) for a in got] == [
        ("fake", "pass")
    ]


def test_with_openinference_records_are_parented_to_the_runs_span(spans, monkeypatch):
    # A record is captured in a callback, outside its run's config: the span is asked of
    # OpenInference's instrumentor (here a stand-in module with its attribute names).
    import types

    from langchain_core.runnables import RunnableLambda

    from truthguard.callbacks import TruthGuardCallbackHandler
    from truthguard.testing import FakeDetector

    callback_tracer = _CallbackTracer()
    module = types.ModuleType("openinference.instrumentation.langchain")
    module.LangChainInstrumentor = type(
        "LangChainInstrumentor", (), {"_instance": types.SimpleNamespace(_tracer=callback_tracer)}
    )
    monkeypatch.setitem(sys.modules, module.__name__, module)
    handler = TruthGuardCallbackHandler(FakeDetector(score=0.9, threshold=0.5), sinks=[])
    chain = RunnableLambda(
        lambda q: {"answer": "Paris.", "context": ["Paris is the capital."]}, name="rag"
    )
    chain.invoke({"question": "Capital of France?"}, {"callbacks": [handler, callback_tracer]})
    assert handler.flush(timeout=30)
    handler.close(timeout=30)
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "rag"]
    (own,) = [s for s in finished if s.name == otel.EVALUATION_EVENT]
    assert own.parent.span_id == run.context.span_id


# -- over OTLP/HTTP into a receiver on 127.0.0.1 ------------------------------------------------


class _Receiver(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ReceiverHandler)
        self.bodies: list[bytes] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"


class _ReceiverHandler(BaseHTTPRequestHandler):
    server: _Receiver

    def log_message(self, format, *args) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v1/traces":
            self.server.bodies.append(body)
            self.send_response(200)
        else:
            self.send_response(404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_events_reach_an_otlp_http_receiver():
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    receiver = _Receiver()
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    try:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(receiver.endpoint)))
        results, v = verdict(False)
        with provider.get_tracer("tests").start_as_current_span("chat gpt-test") as span:
            otel.emit_verdict(["refchecker"], results, v, attempt=1, response_id="chatcmpl-9")
        provider.shutdown()
    finally:
        receiver.shutdown()
        receiver.server_close()
    request = ExportTraceServiceRequest()
    request.ParseFromString(b"".join(receiver.bodies))
    (sent,) = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert sent.span_id == span.get_span_context().span_id.to_bytes(8, "big")
    (event,) = [e for e in sent.events if e.name == otel.EVALUATION_EVENT]
    attrs = {a.key: a.value for a in event.attributes}
    assert NAMES | {"gen_ai.response.id", "truthguard.decision"} <= set(attrs)
    assert attrs["gen_ai.evaluation.score.label"].string_value == "fail"
    assert attrs["gen_ai.evaluation.score.value"].double_value == pytest.approx(0.1)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.skipif(
    not os.environ.get("TRUTHGUARD_PHOENIX"),
    reason="set TRUTHGUARD_PHOENIX to a phoenix executable in its own virtualenv",
)
def test_events_reach_arize_phoenix(tmp_path):
    import time
    import urllib.request

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(tmp_path),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
    }
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [os.environ["TRUTHGUARD_PHOENIX"], "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300  # Phoenix migrates its database on first start
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "no Phoenix"
                time.sleep(1)
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{base}/v1/traces")))
        results, v = verdict(False)
        with provider.get_tracer("tests").start_as_current_span("chat gpt-test") as span:
            otel.emit_verdict(["refchecker"], results, v, attempt=1, response_id="chatcmpl-7")
        provider.shutdown()
        span_id = format(span.get_span_context().span_id, "016x")
        deadline = time.monotonic() + 60  # Phoenix writes received spans in batches
        while True:
            with urllib.request.urlopen(f"{base}/v1/projects/default/spans?limit=10") as reply:
                stored = json.load(reply)["data"]
            if any(s["context"]["span_id"] == span_id for s in stored):
                break
            assert time.monotonic() < deadline, "the span never showed up in Phoenix"
            time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)
    (sent,) = [s for s in stored if s["context"]["span_id"] == span_id]
    (event,) = [e for e in sent["events"] if e["name"] == otel.EVALUATION_EVENT]
    assert set(event["attributes"]) >= NAMES | {"gen_ai.response.id", "truthguard.decision"}
    assert event["attributes"]["gen_ai.evaluation.score.label"] == "fail"


# -- absent or unused: nothing imported, nothing emitted ----------------------------------------

_CHECK = """
import json, sys
{block}
from langchain_core.runnables import RunnableLambda
from truthguard import otel
from truthguard.guard import HallucinationGuard
from truthguard.testing import FakeDetector
{configure}
guard = HallucinationGuard(chain=RunnableLambda(lambda q: "Paris."),
                           detectors=[FakeDetector(score=0.9)])
status = guard.invoke("Capital of France?").status
otel.emit_verdict([], [], None, attempt=1)  # must return before touching its arguments
loaded = sorted(m for m, v in sys.modules.items() if m.startswith("opentelemetry") and v)
print(json.dumps([status, otel.active(), loaded]))
"""


def test_nothing_is_imported_or_emitted_without_opentelemetry():
    code = _CHECK.format(
        block="sys.modules['opentelemetry'] = None  # not installed",
        configure="otel.configure(enabled=True)  # asked for, still nothing to import",
    )
    status, active, modules = fresh_interpreter(code)
    assert (status, active, modules) == ("passed", False, [])


def test_without_a_span_or_a_provider_nothing_is_sent(monkeypatch):
    sent = []
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
    monkeypatch.setattr(trace, "get_tracer", lambda *a, **k: sent.append(a))
    otel.emit_evaluation(otel.evaluation_attributes("refchecker", score=1.0))
    assert sent == []


def test_with_openinferences_langchain_instrumentor_events_land_on_the_runs_spans(spans):
    # Runs where OpenInference's LangChain instrumentor is installed (not in the dev extra).
    instrumentation = pytest.importorskip("openinference.instrumentation.langchain")
    from langchain_core.runnables import RunnableLambda

    from truthguard.callbacks import TruthGuardCallbackHandler
    from truthguard.guard import HallucinationGuard
    from truthguard.testing import FakeDetector

    instrumentor = instrumentation.LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=trace.get_tracer_provider())
    try:
        guard = HallucinationGuard(
            chain=RunnableLambda(lambda q: "Paris."), detectors=FakeDetector(score=0.9)
        )
        guard.invoke("Capital of France?")
        handler = TruthGuardCallbackHandler(FakeDetector(score=0.9, threshold=0.5), sinks=[])
        chain = RunnableLambda(
            lambda q: {"answer": "Paris.", "context": ["Paris is the capital."]}, name="rag"
        )
        chain.invoke({"question": "Capital of France?"}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
        handler.close(timeout=30)
    finally:
        instrumentor.uninstrument()
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "HallucinationGuard"]
    assert [e.attributes["truthguard.decision"] for e in events(run)] == ["pass"]
    (rag,) = [s for s in finished if s.name == "rag"]
    (own,) = [s for s in finished if s.name == otel.EVALUATION_EVENT]
    assert own.parent.span_id == rag.context.span_id
