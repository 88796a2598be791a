"""CascadeChecker: the local check first, an LLM check (over HTTP) only for uncertain answers.

The second stage is the LLM RefChecker over ``ChatOpenAI`` talking to
:class:`~truthguard.testing.OpenAIServer`, so every count below is of real HTTP requests.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from doubles import ListRetriever
from truthguard.cascade import CascadeChecker, escalation_reasons
from truthguard.errors import InvalidInputError
from truthguard.llm import LLMSettings
from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker
from truthguard.result import DetectionResult, Label
from truthguard.testing import FakeDetector, Fault, OpenAIServer

PASSAGES = ["Dubai is a city in the United Arab Emirates (UAE)."]
QUESTION = "Which country is Dubai in?"
CLEAR = "Dubai is in the UAE."  # every claim supported: the local check is sure (above the band)
UNSURE = "Dubai is in Qatar."  # a name no source states: score 0.01, inside the band below
BAND = (0.0, 0.6)

EXTRACT = "Break the answer below into"  # in the LLM extractor's prompt only
CHECK = "You compare one claim with reference passages"  # in the LLM checker's prompt only


def llm_server(**kwargs) -> OpenAIServer:
    """Answers the LLM RefChecker: one triplet per answer, every claim contradicted; anything
    else (the RAG chain's prompt) gets the unsure answer."""
    replies = {EXTRACT: '("Dubai", "is in", "Qatar")', CHECK: "Contradiction"}
    return OpenAIServer(reply=replies, default=UNSURE, **kwargs)


def llm_refchecker(server: OpenAIServer, **model_kwargs) -> RefChecker:
    model_kwargs.setdefault("max_retries", 0)
    model_kwargs.setdefault("timeout", 5)
    llm = server.chat_model(**model_kwargs)
    return RefChecker(
        extractor=LLMExtractor(model=llm),
        checker=LLMChecker(model=llm),
        llm_settings=LLMSettings(max_retries=0),  # a failed call fails at once
    )


def cascade(server: OpenAIServer, **kwargs) -> CascadeChecker:
    model_kwargs = kwargs.pop("model_kwargs", {})
    return CascadeChecker(escalate_to=llm_refchecker(server, **model_kwargs), band=BAND, **kwargs)


def ask(answer: str) -> dict:
    return {"question": QUESTION, "answer": answer, "contexts": PASSAGES}


def test_a_clear_answer_is_decided_locally_with_no_llm_call():
    with llm_server() as server:
        result = cascade(server).invoke(ask(CLEAR))
        assert server.requests == []
    assert result.details["decided_by"] == "local" and result.label == Label.FACTUAL
    assert result.detector == "cascade" and result.passing is True
    summary = result.details["cascade"]
    assert summary["escalated"] is False and summary["llm"] is None
    assert summary["local"]["score"] == result.score > BAND[1]
    assert result.usage.llm_calls == 0 and summary["cost"]["llm_calls"] == 0
    assert result.details["claims"]  # the deciding stage's details stay readable


def test_an_escalated_answer_makes_exactly_the_calls_of_one_llm_check():
    with llm_server() as server:
        alone = llm_refchecker(server).invoke(ask(UNSURE))
        calls_alone = len(server.requests)
        server.reset()
        result = cascade(server).invoke(ask(UNSURE))
        assert len(server.requests) == calls_alone == alone.usage.llm_calls == 2
    assert result.details["decided_by"] == "llm"
    assert result.label == Label.HALLUCINATED and result.passing is False
    summary = result.details["cascade"]
    assert summary["reasons"] == ["band"]
    assert BAND[0] <= summary["local"]["score"] <= BAND[1]
    assert summary["llm"]["score"] == result.score == alone.score
    assert result.usage.llm_calls == summary["cost"]["llm_calls"] == calls_alone
    assert result.usage.total_tokens == alone.usage.total_tokens > 0
    assert result.explanation.startswith("Escalated (band)")


async def test_async_checks_escalate_only_the_uncertain_answers():
    with llm_server() as server:
        checker = cascade(server)
        results = await checker.abatch([ask(CLEAR), ask(UNSURE), ask(CLEAR)])
        assert len(server.requests) == 2  # one LLM check: extraction and one claim
    assert [r.details["decided_by"] for r in results] == ["local", "llm", "local"]


def test_a_batch_lets_the_local_refchecker_embed_its_texts_up_front(monkeypatch):
    seen = []

    async def record(self, inputs, config=None):
        seen.append([inp["answer"] for inp in inputs])

    monkeypatch.setattr(RefChecker, "aprefetch", record)
    checker = CascadeChecker(escalate_to=FakeDetector(score=0.9), band=BAND)
    results = checker.batch([ask(CLEAR), {"question": "", "answer": "x"}, ask(UNSURE)],
                            return_exceptions=True)  # fmt: skip
    assert seen == [[CLEAR, UNSURE]]  # the invalid input is left to its own check
    assert isinstance(results[1], InvalidInputError)
    assert [r.details["decided_by"] for r in (results[0], results[2])] == ["local", "llm"]


def test_a_failing_second_stage_gives_the_local_verdict_marked_failed():
    with llm_server(faults=[Fault("500")]) as server:
        result = cascade(server).invoke(ask(UNSURE))
        assert [r.status for r in server.requests] == [500]  # the extraction, not retried
    assert result.details["decided_by"] == "local:escalation_failed"
    assert result.label == Label.HALLUCINATED  # the local check's own verdict
    assert result.score == result.details["cascade"]["local"]["score"]
    assert result.details["cascade"]["llm"]["label"] == "invalid"
    assert "second stage gave no verdict" in result.explanation


def test_a_failing_second_stage_gives_an_invalid_result_when_the_policy_says_so():
    with llm_server(faults=[Fault("500")]) as server:
        result = cascade(server, on_escalation_failure="invalid").invoke(ask(UNSURE))
    assert result.label == Label.INVALID and result.score is None
    assert result.details["decided_by"] == "escalation_failed"
    assert result.details["cascade"]["local"]["label"] == "hallucinated"


def test_a_second_stage_past_the_deadline_is_cancelled_and_the_local_verdict_returned():
    with llm_server(faults=[Fault("stall", stall_seconds=10)]) as server:
        checker = cascade(server, deadline=0.5)
        started = time.perf_counter()
        result = checker.invoke(ask(UNSURE))
        elapsed = time.perf_counter() - started
    assert elapsed < 2.0  # the deadline, not the stalled request's 10 s
    assert result.details["decided_by"] == "local:escalation_timed_out"
    assert result.label == Label.HALLUCINATED and result.details["cascade"]["llm"] is None


def test_a_hanging_second_stage_keeps_the_guards_deadline():
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain

    with llm_server(faults=[Fault("stall", match=EXTRACT, stall_seconds=10)]) as server:
        chain = build_rag_chain(
            ListRetriever(passages=PASSAGES), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(
            chain=chain,
            detectors=cascade(server, deadline=0.6),
            check_timeout=1.5,
            max_attempts=1,
            policies=[],
        )
        started = time.perf_counter()
        out = guard.invoke({"question": QUESTION})
        elapsed = time.perf_counter() - started
    assert elapsed < 1.5  # inside the guard's check_timeout: the cascade's own deadline held
    (attempt,) = out.attempts
    (result,) = attempt.results
    assert result.details["decided_by"] == "local:escalation_timed_out"
    assert attempt.verdict.decided_by == {"cascade": "local:escalation_timed_out"}
    assert out.passing is False  # the local verdict: hallucinated


def test_without_its_own_deadline_the_cascade_is_cut_at_the_guards():
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain

    with llm_server(faults=[Fault("stall", match=EXTRACT, stall_seconds=10)]) as server:
        chain = build_rag_chain(
            ListRetriever(passages=PASSAGES), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(
            chain=chain, detectors=cascade(server), check_timeout=0.6, max_attempts=1, policies=[]
        )
        started = time.perf_counter()
        out = guard.invoke({"question": QUESTION})
        elapsed = time.perf_counter() - started
    assert elapsed < 2.0
    (result,) = out.attempts[0].results
    assert result.is_invalid and "timed out" in result.invalid_reason


async def test_the_guards_verdict_event_carries_decided_by():
    from truthguard.guard import VERDICT_EVENT, HallucinationGuard
    from truthguard.rag import build_rag_chain

    with llm_server() as server:
        chain = build_rag_chain(
            ListRetriever(passages=PASSAGES), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(
            chain=chain, detectors=cascade(server), max_attempts=1, policies=[]
        )
        events = [
            e
            async for e in guard.astream_events({"question": QUESTION}, version="v2")
            if e["event"] == "on_custom_event" and e["name"] == VERDICT_EVENT
        ]
    (event,) = events
    assert event["data"]["verdict"]["decided_by"] == {"cascade": "llm"}


def test_the_callback_handler_records_which_stage_decided():
    from truthguard.callbacks import TruthGuardCallbackHandler
    from truthguard.rag import build_rag_chain

    records = []
    with llm_server() as server:
        chain = build_rag_chain(
            ListRetriever(passages=PASSAGES), server.chat_model(max_retries=0, timeout=5)
        )
        handler = TruthGuardCallbackHandler(cascade(server), sinks=records.append)
        chain.invoke({"question": QUESTION}, {"callbacks": [handler]})
        assert handler.flush(timeout=30)
        handler.close()
    (record,) = records
    assert record.decided_by == "llm" and record.label == "hallucinated"


def test_opentelemetry_events_carry_decided_by():
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from truthguard import otel

    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the global provider can be set only once
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    from langchain_core.runnables import RunnableLambda

    from truthguard.guard import HallucinationGuard

    local = FakeDetector(score=lambda inp: 0.4 if "Qatar" in inp.answer else 0.9)
    checker = CascadeChecker(local=local, escalate_to=FakeDetector(score=0.1), band=BAND)
    with trace.get_tracer("tests").start_as_current_span("handler record"):
        otel.emit_result(checker.invoke(ask(UNSURE)))
    guard = HallucinationGuard(
        chain=RunnableLambda(lambda q: {"answer": CLEAR, "context": PASSAGES}),
        detectors=checker,
        max_attempts=1,
        policies=[],
    )
    with trace.get_tracer("tests").start_as_current_span("guarded call"):
        guard.invoke({"question": QUESTION})
    spans = {s.name: s for s in exporter.get_finished_spans()}
    (record,) = spans["handler record"].events
    assert record.attributes[otel.DECIDED_BY] == "llm"
    (verdict,) = spans["guarded call"].events  # the guard's own, one per detector
    assert verdict.attributes[otel.DECIDED_BY] == "local"
    assert verdict.attributes[otel.DECISION] == "pass"


def test_signals_read_from_the_public_result():
    def result(**kw) -> DetectionResult:
        return DetectionResult(detector="x", **kw)

    assert escalation_reasons(result(score=0.3, label="factual"), band=BAND) == ["band"]
    assert escalation_reasons(result(score=0.9, label="factual"), band=BAND) == []
    unverifiable = result(label="unverifiable", details={"reason": "abstain"})
    assert escalation_reasons(unverifiable, band=BAND) == ["no_evidence"]
    refusal = result(label="unverifiable", passing=True, details={"reason": "refusal"})
    assert escalation_reasons(refusal, band=BAND) == []
    assert escalation_reasons(result(label="invalid"), band=BAND) == ["invalid"]
    claims = [{"label": "Entailment"}, {"label": "Neutral"}]
    chat = result(
        score=0.9, label="factual", details={"claims": claims, "decision": {"form": "reply"}}
    )
    assert escalation_reasons(chat, band=BAND) == ["chat_reply"]  # a passed chat reply
    assert escalation_reasons(chat, band=BAND, escalate_on=["band", "invalid"]) == []
    rejected = result(score=0.9, label="hallucinated", passing=False, details={"claims": claims})
    assert escalation_reasons(rejected, band=BAND) == ["undecided_claims"]
    contradicted = result(
        score=0.9, label="hallucinated", details={"claims": [*claims, {"label": "Contradiction"}]}
    )
    assert escalation_reasons(contradicted, band=BAND) == []  # a contradiction decides
    with pytest.raises(InvalidInputError, match="escalate_on"):
        escalation_reasons(chat, band=BAND, escalate_on=["sometimes"])


@pytest.mark.parametrize(
    ("passing", "other", "reasons"),
    [
        (True, {"passing": False}, ["second_opinion"]),  # passed, the other model rejects
        (False, {"passing": True}, ["second_opinion"]),  # rejected, the other model passes
        (True, {"passing": True}, []),
        (False, {"passing": False}, []),
        (True, None, []),  # a local detector that gives no second opinion
    ],
)
def test_the_two_local_decisions_parting_ways_is_a_signal(passing, other, reasons):
    decision = {"form": "support"} if other is None else {"second_opinion": other}
    local = DetectionResult(
        detector="refchecker",
        score=0.9 if passing else 0.05,
        label="factual" if passing else "hallucinated",
        passing=passing,
        details={"claims": [{"label": "Entailment"}], "decision": decision},
    )
    # no band: the signal alone
    assert escalation_reasons(local, band=None, escalate_on=["second_opinion"]) == reasons
    assert escalation_reasons(local, band=None, escalate_on=["band", "invalid"]) == []


def test_a_second_opinion_escalates_only_when_named():
    # the support model passes it (score above the band); the answer-level model does not
    answer = "Dubai is in the Arab world."
    with llm_server() as server:
        alone = llm_refchecker(server).invoke(ask(answer))
        calls_alone = len(server.requests)
        server.reset()
        plain = cascade(server).invoke(ask(answer))
        assert server.requests == []
        asked = cascade(server, escalate_on=("band", "no_evidence", "invalid", "second_opinion"))
        result = asked.invoke(ask(answer))
        assert len(server.requests) == calls_alone == alone.usage.llm_calls
    assert plain.details["decided_by"] == "local" and plain.passing is True
    local = plain.details["cascade"]["local"]
    assert local["score"] > BAND[1]
    assert result.details["decided_by"] == "llm" and result.passing is False
    assert result.details["cascade"]["reasons"] == ["second_opinion"]
    assert result.usage.llm_calls == calls_alone


@pytest.mark.parametrize(
    ("passing", "log_odds", "reasons"),
    [
        (True, -0.4, ["meaning"]),  # passed, while what a sentence means looks unsupported
        (True, 0.3, []),
        (False, -0.4, []),  # already rejected: nothing for a second stage to overturn here
        (True, None, []),  # no sentence long enough for its meaning to be read
    ],
)
def test_the_meaning_reading_parting_ways_with_a_pass_is_a_signal(passing, log_odds, reasons):
    meaning = None if log_odds is None else {"log_odds": log_odds, "sentence": "It is X."}
    local = DetectionResult(
        detector="refchecker",
        score=0.9 if passing else 0.05,
        label="factual" if passing else "hallucinated",
        passing=passing,
        details={"claims": [{"label": "Entailment"}], "decision": {"meaning": meaning}},
    )
    assert escalation_reasons(local, band=None, escalate_on=["meaning"]) == reasons
    assert escalation_reasons(local, band=None, escalate_on=["band", "invalid"]) == []


TOWER = [
    "The Selwyn Tower is 312 metres tall and has 78 floors. It was completed in 1998 after four "
    "years of work, and its observation deck on the 75th floor opened to the public in 1999."
]


def test_a_pass_the_meaning_reading_doubts_is_escalated_over_http():
    # every word and number of it is in the passage; "views of the whole bay" is not said
    answer = "Its observation deck sits on the 75th floor and offers views of the whole bay."
    inp = {"question": "Tell me about the Selwyn Tower.", "answer": answer, "contexts": TOWER}
    band = (0.0, 0.2)  # the local score (about 0.36) is outside it
    with llm_server() as server:
        alone = llm_refchecker(server).invoke(inp)
        calls_alone = len(server.requests)
        server.reset()
        plain = cascade(server).model_copy(update={"band": band}).invoke(inp)
        assert server.requests == []
        asked = cascade(
            server, escalate_on=("band", "no_evidence", "invalid", "meaning")
        ).model_copy(update={"band": band})
        result = asked.invoke(inp)
        assert len(server.requests) == calls_alone == alone.usage.llm_calls
    local = plain.details["cascade"]["local"]
    assert plain.details["decided_by"] == "local" and plain.passing is True
    assert band[1] < local["score"]
    assert result.details["decided_by"] == "llm"
    assert result.details["cascade"]["reasons"] == ["meaning"]


def test_references_reach_a_stage_that_only_takes_contexts():
    seen = []

    def score(inp):
        seen.append(inp.contexts)
        return 0.4

    checker = CascadeChecker(
        local=FakeDetector(score=score), escalate_to=FakeDetector(score=score), band=BAND
    )
    checker.invoke({"question": "Q?", "answer": "A b.", "references": ["R."], "contexts": ["C."]})
    assert seen == [["R.", "C."], ["R.", "C."]]


def test_options_are_checked_at_construction():
    with pytest.raises(InvalidInputError, match="band"):
        CascadeChecker(escalate_to=FakeDetector(), band=(0.7, 0.2))
    with pytest.raises(InvalidInputError, match="escalate_on"):
        CascadeChecker(escalate_to=FakeDetector(), escalate_on=("often",))
    with pytest.raises(InvalidInputError, match="deadline"):
        CascadeChecker(escalate_to=FakeDetector(), deadline=0)


def test_a_raising_second_stage_is_a_failure_by_the_policy():
    checker = CascadeChecker(
        local=FakeDetector(score=0.4),
        escalate_to=FakeDetector(error=RuntimeError("boom")),
        band=BAND,
    )
    result = checker.invoke(ask(UNSURE))
    assert result.details["decided_by"] == "local:escalation_failed"
    assert "RuntimeError: boom" in result.details["cascade"]["error"]


def test_no_second_stage_starts_once_the_local_one_used_the_deadline():
    second = FakeDetector(score=0.9)
    checker = CascadeChecker(
        local=FakeDetector(score=0.4, latency=0.3), escalate_to=second, band=BAND, deadline=0.2
    )
    result = checker.invoke(ask(UNSURE))
    assert result.details["decided_by"] == "local:escalation_timed_out"
    assert second.check_count == 0 and "no time left" in result.explanation


def test_a_raising_second_stage_under_the_invalid_policy_says_what_it_raised():
    checker = CascadeChecker(
        local=FakeDetector(score=0.4),
        escalate_to=FakeDetector(error=RuntimeError("boom")),
        band=BAND,
        on_escalation_failure="invalid",
    )
    result = checker.invoke(ask(UNSURE))
    assert result.is_invalid and result.details["decided_by"] == "escalation_failed"
    assert result.details["cascade"]["error"] == "RuntimeError: boom"
    assert result.details["cascade"]["local"]["score"] == 0.4


def test_cancelling_the_check_cancels_the_second_stage():
    from truthguard.detector import BaseDetector

    stopped: list[str] = []

    class Hanging(BaseDetector):
        detector_name = "hanging"

        async def _acheck(self, inp, session):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                stopped.append("cancelled")
                raise

    checker = CascadeChecker(local=FakeDetector(score=0.4), escalate_to=Hanging(), band=BAND)

    async def main():
        task = asyncio.ensure_future(checker.ainvoke(ask(UNSURE)))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)  # the second stage's task runs its cancellation
        assert stopped == ["cancelled"]

    asyncio.run(main())


def test_truthguard_evaluate_scores_with_a_cascade_from_its_config(tmp_path):
    import json

    from truthguard.evaluation import evaluate, read_results

    rows = [
        {"id": "clear", "question": QUESTION, "answer": CLEAR, "contexts": PASSAGES},
        {"id": "unsure", "question": QUESTION, "answer": UNSURE, "contexts": PASSAGES},
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with llm_server() as server:
        config = {
            "detectors": {
                "cascade": {
                    "type": "cascade",
                    "model": {
                        "provider": "openai",
                        "kwargs": {
                            "model": "gpt-test",
                            "base_url": server.base_url,
                            "api_key": "sk-test",
                            "max_retries": 0,
                        },
                    },
                    "options": {"band": list(BAND), "local": {"top_k": 2}},
                }
            }
        }
        evaluate(tmp_path / "rows.jsonl", config, tmp_path / "run", progress=False)
        assert len(server.requests) == 2  # the unsure answer's one LLM check
    decided = {r["id"]: r["details"]["decided_by"] for r in read_results(tmp_path / "run")}
    assert decided == {"clear": "local", "unsure": "llm"}


def test_a_cascade_config_names_a_wrong_stage_option():
    from truthguard.evaluation.config import build_detectors, load_config

    spec = {"type": "cascade", "model": {"provider": "scripted", "kwargs": {"default": "NONE"}}}
    config = load_config({"detectors": {"c": {**spec, "options": {"local": {"top_k": 0}}}}})
    with pytest.raises(InvalidInputError, match=r"detectors\.c\.options\.local\.top_k"):
        build_detectors(config)
    without_model = load_config({"detectors": {"c": {"type": "cascade"}}})
    with pytest.raises(InvalidInputError, match=r"detectors\.c\.model"):
        build_detectors(without_model)


def test_a_cascade_pickles_by_configuration():
    import pickle

    checker = CascadeChecker(
        local=RefChecker(top_k=2), escalate_to=FakeDetector(score=0.2), band=BAND, deadline=3.0
    )
    copy = pickle.loads(pickle.dumps(checker))
    assert copy.band == BAND and copy.deadline == 3.0 and copy.local.top_k == 2
    assert copy.invoke(ask(UNSURE)).details["decided_by"] == "llm"


def test_the_docs_example_prints_what_it_says(capsys):
    import re
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "cascade.md").read_text()
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    exec(compile(code, "docs/cascade.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    promised = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    assert printed == promised and len(printed) == 2


# -- the streaming guard: each sentence is one check, escalated alone -------------------------


def _kind(request) -> str:
    """Which caller made a request: the LLM stage's extraction or claim check, else the chain."""
    return next((k for k in (EXTRACT, CHECK) if k in request.prompt), "chain")


def streaming_guard(server: OpenAIServer, **kwargs):
    from truthguard.guard import StreamingGuard
    from truthguard.rag import build_rag_chain

    chain = build_rag_chain(
        ListRetriever(passages=PASSAGES),
        server.chat_model(max_retries=0, timeout=5, streaming=True),
    )
    return StreamingGuard(chain=chain, detector=cascade(server), **kwargs)


def test_a_streamed_answer_of_clear_sentences_makes_no_llm_check():
    with llm_server() as server:
        server.default = "Dubai is a city. Dubai is in the UAE."  # each sentence above the band
        chunks = list(streaming_guard(server).stream({"question": QUESTION}))
        assert [_kind(r) for r in server.requests] == ["chain"]
    sentences = [c for c in chunks if c.kind == "sentence"]
    assert [c.text for c in sentences] == ["Dubai is a city.", " Dubai is in the UAE."]
    assert [c.check.details["decided_by"] for c in sentences] == ["local", "local"]
    assert all(c.check.details["cascade"]["llm"] is None for c in sentences)
    result = chunks[-1].result
    assert result.status == "passed" and result.verdict.decided_by == {"cascade": "local"}
    assert result.attempts[0].check_usage.llm_calls == 0


def test_a_streamed_sentence_in_the_band_is_decided_by_one_llm_check():
    with llm_server() as server:
        server.default = f"{CLEAR} {UNSURE}"
        chunks = list(streaming_guard(server).stream({"question": QUESTION}))
        kinds = [_kind(r) for r in server.requests]
    assert kinds == ["chain", EXTRACT, CHECK]  # the unsure sentence's one LLM check, no more
    (released,) = [c for c in chunks if c.kind == "sentence"]
    assert released.text == CLEAR and released.check.details["decided_by"] == "local"
    result = chunks[-1].result
    assert result.status == "rejected" and result.answer == CLEAR
    local, escalated = result.attempts[0].results
    assert (local.details["decided_by"], escalated.details["decided_by"]) == ("local", "llm")
    assert escalated.details["cascade"]["reasons"] == ["band"]
    assert escalated.score == escalated.details["cascade"]["llm"]["score"]
    assert escalated.usage.llm_calls == 2
    assert result.verdict.decided_by == {"cascade": "llm"} and not result.verdict.passing
    assert result.attempts[0].check_usage.llm_calls == 2


async def test_a_filtering_stream_makes_one_llm_check_per_escalated_sentence():
    from truthguard.guard import Filter

    clear = "Dubai is in the UAE."
    wrong = ["Dubai is in Qatar.", "Dubai is a city in Oman."]  # both inside the band
    with llm_server() as server:
        server.default = f"{wrong[0]} {clear} {wrong[1]}"
        guard = streaming_guard(server, policies=[Filter()])
        chunks = [c async for c in guard.astream({"question": QUESTION})]
        kinds = [_kind(r) for r in server.requests]
    assert kinds.count("chain") == 1
    assert kinds.count(EXTRACT) == kinds.count(CHECK) == 2  # one LLM check per wrong sentence
    assert [c.text for c in chunks if c.kind == "sentence"] == [clear]
    result = chunks[-1].result
    assert result.status == "filtered"
    decided = [r.details["decided_by"] for r in result.attempts[0].results]
    assert decided == ["llm", "local", "llm"]
    assert result.attempts[0].check_usage.llm_calls == 4


# -- the agents middleware: a real create_agent over the same server ---------------------------


def agent_server(answer: str, regenerated: str = CLEAR) -> OpenAIServer:
    """``llm_server`` playing the agent's model too: a search first, then ``answer`` from the
    tool result, ``regenerated`` when the middleware's feedback asks again."""
    from truthguard.testing import ToolCall

    server = llm_server()
    checks = server.reply

    def reply(messages: list[dict]):
        prompt = messages[-1].get("content") or ""
        for needle, text in checks.items():  # the LLM stage's prompts, as llm_server answers
            if needle in prompt:
                return text
        if messages[-1]["role"] == "tool":
            return answer
        if "fact-checker" in prompt:
            return regenerated
        return ToolCall("search", {"query": QUESTION})

    server.reply = reply
    return server


def grounded_agent(server: OpenAIServer, **options):
    from langchain.agents import create_agent
    from langchain_core.tools import create_retriever_tool

    from truthguard.agents import GroundingMiddleware

    search = create_retriever_tool(
        ListRetriever(passages=PASSAGES), "search", "Search the encyclopedia."
    )
    return create_agent(
        server.chat_model(max_retries=0, timeout=5),
        tools=[search],
        middleware=[GroundingMiddleware(detectors=[cascade(server)], **options)],
    )


def verdict_events():
    """A callback handler keeping the data of every ``truthguard_verdict`` event."""
    from langchain_core.callbacks import BaseCallbackHandler

    from truthguard.guard import VERDICT_EVENT

    class Verdicts(BaseCallbackHandler):
        def __init__(self) -> None:
            self.seen: list[dict] = []

        def on_custom_event(self, name, data, **kwargs) -> None:
            if name == VERDICT_EVENT:
                self.seen.append(data)

    return Verdicts()


def test_an_agents_clear_answer_is_decided_locally_with_no_llm_check():
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    events = verdict_events()
    with agent_server(CLEAR) as server:
        out = grounded_agent(server).invoke(
            {"messages": [("user", QUESTION)]}, {"callbacks": [events]}
        )
        kinds = [_kind(r) for r in server.requests]
    assert kinds == ["chain", "chain"]  # the tool call and the answer, no LLM check
    assert out["messages"][-1].content == CLEAR
    result = out["truthguard"]
    assert result.status == "passed" and result.verdict.decided_by == {"cascade": "local"}
    (attempt,) = result.attempts
    assert attempt.contexts == PASSAGES and attempt.check_usage.llm_calls == 0
    assert attempt.results[0].details["cascade"]["escalated"] is False
    assert [e["verdict"]["decided_by"] for e in events.seen] == [{"cascade": "local"}]


async def test_an_agents_uncertain_answer_is_escalated_then_regenerated():
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    events = verdict_events()
    with agent_server(UNSURE, regenerated=CLEAR) as server:
        out = await grounded_agent(server).ainvoke(
            {"messages": [("user", QUESTION)]}, {"callbacks": [events]}
        )
        kinds = [_kind(r) for r in server.requests]
    # the tool call, the unsure answer, its one LLM check, the regenerated (clear) answer
    assert kinds == ["chain", "chain", EXTRACT, CHECK, "chain"]
    assert out["messages"][-1].content == CLEAR
    assert not any(UNSURE in str(m.content) for m in out["messages"])  # never released
    result = out["truthguard"]
    assert result.status == "passed"
    assert [a.policy for a in result.attempts] == [None, "regenerate"]
    decided = [a.verdict.decided_by for a in result.attempts]
    assert decided == [{"cascade": "llm"}, {"cascade": "local"}]
    assert [a.check_usage.llm_calls for a in result.attempts] == [2, 0]
    escalated = result.attempts[0].results[0]
    assert escalated.details["cascade"]["reasons"] == ["band"] and escalated.passing is False
    assert [e["verdict"]["decided_by"] for e in events.seen] == decided


# -- any number of stages: local, an open checker, the LLM last -------------------------------

ASKED = {  # question -> the RAG app's answer
    "Where is Dubai?": CLEAR,
    "Which country holds Dubai?": "Dubai is in Qatar.",
    "What country is Dubai part of?": "Dubai is in Kuwait.",
}


def test_three_stages_each_decide_and_the_llm_sees_only_what_the_open_checker_escalates(
    tmp_path,
):
    from doubles import tiny_minicheck
    from truthguard.cascade import CascadeStage
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import MiniCheckChecker

    folder = tiny_minicheck(tmp_path / "mc", "roberta", [*PASSAGES, *ASKED, *ASKED.values()])
    open_stage = RefChecker(checker=MiniCheckChecker(model=folder), score="mean_support")
    *_, first, second = ASKED.items()
    # the open stage's band: what calibrate would pick on these two answers, around the second
    probe = {a: open_stage.invoke({"question": q, **ask(a)}).score for q, a in (first, second)}
    gap = abs(probe[first[1]] - probe[second[1]]) / 2
    assert gap > 0  # random weights, two different answers: two different scores
    band = (max(0.0, probe[second[1]] - gap), min(1.0, probe[second[1]] + gap))
    replies = {EXTRACT: '("Dubai", "is in", "Kuwait")', CHECK: "Contradiction", **ASKED}
    with OpenAIServer(reply=replies) as server:
        checker = CascadeChecker(
            stages=[
                CascadeStage(name="local", detector=RefChecker(), band=BAND),
                CascadeStage(name="minicheck", detector=open_stage, band=band),
                CascadeStage(name="llm", detector=llm_refchecker(server)),
            ]
        )
        guard = HallucinationGuard(
            chain=build_rag_chain(
                ListRetriever(passages=PASSAGES), server.chat_model(max_retries=0, timeout=5)
            ),
            detectors=checker,
            max_attempts=1,
            policies=[],
        )
        decided, llm_prompts = {}, {}
        for question, answer in ASKED.items():
            server.reset()
            out = guard.invoke({"question": question})
            (attempt,) = out.attempts
            (result,) = attempt.results
            decided[answer] = (result.details["decided_by"], out.passing)
            llm_prompts[answer] = [
                r.prompt for r in server.requests if EXTRACT in r.prompt or CHECK in r.prompt
            ]
            stages = [s["name"] for s in result.details["cascade"]["stages"]]
            assert stages == ["local", "minicheck", "llm"][: len(stages)]
            assert attempt.verdict.decided_by == {"cascade": result.details["decided_by"]}
    assert decided == {
        CLEAR: ("local", True),
        first[1]: ("minicheck", False),  # no claim over 0.5 at random weights: none supported
        second[1]: ("llm", False),
    }
    assert llm_prompts[CLEAR] == [] and llm_prompts[first[1]] == []
    extract, *checks = llm_prompts[second[1]]
    assert EXTRACT in extract and second[1] in extract and len(checks) == 1
    assert all("Kuwait" in p and CHECK in p for p in checks)


def test_stages_are_checked_at_construction():
    from truthguard.cascade import CascadeStage

    one = CascadeStage(name="a", detector=FakeDetector(score=0.5))
    with pytest.raises(ValueError, match="at least two stages"):
        CascadeChecker(stages=[one])
    with pytest.raises(ValueError, match="a name of its own"):
        CascadeChecker(stages=[one, one])
    with pytest.raises(ValueError, match="either stages or escalate_to"):
        CascadeChecker(stages=[one, one], escalate_to=FakeDetector(score=0.5))
    with pytest.raises(ValueError, match="escalate_to: give the second stage"):
        CascadeChecker()
    with pytest.raises(ValueError, match="band"):
        CascadeStage(name="b", detector=FakeDetector(score=0.5), band=(0.7, 0.2))


def test_a_failing_middle_stage_leaves_the_stage_before_it_deciding():
    from truthguard.cascade import CascadeStage

    def boom(inp):
        raise RuntimeError("no weights")

    checker = CascadeChecker(
        stages=[
            CascadeStage(name="local", detector=FakeDetector(score=0.4), band=(0.3, 0.7)),
            CascadeStage(name="open", detector=FakeDetector(score=boom), band=(0.3, 0.7)),
            CascadeStage(name="llm", detector=FakeDetector(score=0.1)),
        ]
    )
    r = checker.invoke(ask(UNSURE))
    assert r.details["decided_by"] == "local:escalation_failed"
    assert "the stage 'open' raised RuntimeError: no weights" in r.explanation
    assert r.score == 0.4


def test_truthguard_evaluate_builds_a_cascade_of_stages_from_its_config(tmp_path):
    import json

    from doubles import tiny_minicheck
    from truthguard.evaluation import evaluate, read_results

    folder = tiny_minicheck(tmp_path / "mc", "roberta", [*PASSAGES, CLEAR, UNSURE])
    rows = [
        {"id": "clear", "question": QUESTION, "answer": CLEAR, "contexts": PASSAGES},
        {"id": "unsure", "question": QUESTION, "answer": UNSURE, "contexts": PASSAGES},
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    stages = [
        {"name": "local", "band": list(BAND)},
        {"name": "open", "band": [0.0, 1.0], "options": {"checker": f"minicheck:{folder}"}},
        {"name": "llm"},  # the last stage checks with the detector's model
    ]
    with llm_server() as server:
        model = {
            "provider": "openai",
            "kwargs": {
                "model": "gpt-test",
                "base_url": server.base_url,
                "api_key": "sk-test",
                "max_retries": 0,
            },
        }
        config = {
            "detectors": {
                "cascade": {"type": "cascade", "model": model, "options": {"stages": stages}}
            }
        }
        evaluate(tmp_path / "rows.jsonl", config, tmp_path / "run", progress=False)
        assert len(server.requests) == 2  # the unsure answer's one LLM check, after the open stage
    results = {r["id"]: r["details"] for r in read_results(tmp_path / "run")}
    assert {k: d["decided_by"] for k, d in results.items()} == {"clear": "local", "unsure": "llm"}
    ran = [s["name"] for s in results["unsure"]["cascade"]["stages"]]
    assert ran == ["local", "open", "llm"]
    bad = {
        "detectors": {"c": {"type": "cascade", "model": model, "options": {"stages": [{"x": 1}]}}}
    }
    with pytest.raises(InvalidInputError, match=r"stages\[0\]"):
        evaluate(tmp_path / "rows.jsonl", bad, tmp_path / "run2", progress=False)
