"""HallucinationGuard: verdicts, policies, errors, usage, tracing (scripted models only)."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig, RunnableLambda

from truthguard.detector import DetectorInput
from truthguard.errors import GuardRejected, InvalidInputError
from truthguard.guard import (
    VERDICT_EVENT,
    Fallback,
    GuardPolicy,
    HallucinationGuard,
    Raise,
    Regenerate,
    ReRetrieve,
    Rerun,
)
from truthguard.testing import FakeDetector, ScriptedChatModel


def moon_detector(**kw: Any) -> FakeDetector:
    """Fails any answer mentioning the moon."""
    return FakeDetector(score=lambda i: 0.0 if "moon" in i.answer else 1.0, threshold=0.5, **kw)


def scripted_chain(answers: list[str]) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=answers)
    prompt = ChatPromptTemplate.from_template("{question}\n{feedback}").partial(feedback="")
    return prompt | model, model


class Recorder(BaseCallbackHandler):
    """Records chain starts (name, tags, parent) and custom events."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, list[str], UUID | None, UUID]] = []
        self.events: list[tuple[str, Any, UUID]] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, **kw):
        self.starts.append((kw.get("name") or "", list(tags or []), parent_run_id, run_id))

    def on_custom_event(self, name, data, *, run_id, **kw):
        self.events.append((name, data, run_id))


def test_passing_answer_is_released_once():
    chain, model = scripted_chain(["Paris is the capital."])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    out = guard.invoke({"question": "Capital of France?"})
    assert out.status == "passed" and out.passed
    assert out.answer == "Paris is the capital."
    assert out.n_attempts == 1 and model.call_count == 1
    assert out.verdict is not None and out.verdict.scores == {"fake": 1.0}


def test_regenerate_sends_feedback_and_temperature():
    seen: list[dict[str, Any]] = []

    def answer(inp: dict[str, Any], config: RunnableConfig) -> str:
        seen.append({"feedback": inp.get("feedback"), **config.get("configurable", {})})
        return "the moon" if len(seen) == 1 else "the sun"

    guard = HallucinationGuard(
        chain=RunnableLambda(answer),
        detectors=moon_detector(),
        policies=[Regenerate(temperature=0.9)],
    )
    out = guard.invoke({"question": "What shines by day?"})
    assert out.status == "passed" and out.answer == "the sun"
    assert [a.policy for a in out.attempts] == [None, "regenerate"]
    assert seen[0]["feedback"] is None
    assert "the moon" in seen[1]["feedback"] and "fake score 0.000" in seen[1]["feedback"]
    assert seen[1]["temperature"] == 0.9


def test_reretrieve_asks_for_more_documents_and_rewritten_query():
    seen: list[dict[str, Any]] = []

    def answer(inp: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        conf = config.get("configurable", {})
        seen.append({"query": inp.get("retrieval_query"), **conf})
        k = conf.get("search_kwargs", {}).get("k", 2)
        return {"answer": "the moon" if k < 8 else "the sun", "context": ["doc"] * k}

    guard = HallucinationGuard(
        chain=RunnableLambda(answer),
        detectors=moon_detector(),
        policies=[ReRetrieve(k=[8], rewrite=lambda q: q.upper(), alternative="wide")],
    )
    out = guard.invoke({"question": "what shines?"})
    assert out.status == "passed" and out.answer == "the sun"
    assert seen[1] == {"query": "WHAT SHINES?", "search_kwargs": {"k": 8}, "retriever": "wide"}
    assert len(out.attempts[1].contexts) == 8 and out.attempts[1].policy == "re_retrieve"


def test_policies_apply_in_order_each_up_to_max_uses():
    chain, model = scripted_chain(["moon 1", "moon 2", "moon 3", "moon 4", "sun"])
    guard = HallucinationGuard(
        chain=chain,
        detectors=moon_detector(),
        policies=[ReRetrieve(k=[4, 8], max_uses=2), Regenerate(max_uses=3)],
        max_attempts=10,
    )
    out = guard.invoke({"question": "Q?"})
    assert [a.policy for a in out.attempts] == [
        None,
        "re_retrieve",
        "re_retrieve",
        "regenerate",
        "regenerate",
    ]
    assert out.answer == "sun" and model.call_count == 5


def test_attempts_exhausted_keeps_last_answer():
    chain, model = scripted_chain(["moon 1", "moon 2", "moon 3", "moon 4"])
    guard = HallucinationGuard(
        chain=chain, detectors=moon_detector(), policies=[Regenerate(max_uses=5)], max_attempts=3
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "rejected" and not out.passed
    assert out.answer == "moon 3" and model.call_count == 3
    assert [a.answer for a in out.attempts] == ["moon 1", "moon 2", "moon 3"]


def test_fixed_fallback_after_exhaustion_is_released_unchecked():
    chain, _ = scripted_chain(["moon 1", "moon 2"])
    detector = moon_detector()
    guard = HallucinationGuard(
        chain=chain,
        detectors=detector,
        policies=[Regenerate(max_uses=5), Fallback(answer="I am not sure.")],
        max_attempts=2,
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "fallback" and not out.passed
    assert out.answer == "I am not sure." and out.verdict is None
    assert [a.policy for a in out.attempts] == [None, "regenerate", "fallback"]
    assert detector.check_count == 2  # the fixed fallback was not checked


def test_runnable_fallback_is_checked_when_asked():
    chain, _ = scripted_chain(["moon"])
    backup = RunnableLambda(lambda inp: "a careful answer")
    guard = HallucinationGuard(
        chain=chain,
        detectors=moon_detector(),
        policies=[Fallback(runnable=backup, check=True)],
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "passed" and out.answer == "a careful answer"
    assert out.attempts[-1].verdict is not None


def test_raise_policy_carries_every_attempt():
    chain, _ = scripted_chain(["moon 1", "moon 2"])
    guard = HallucinationGuard(
        chain=chain, detectors=moon_detector(), policies=[Regenerate(), Raise()]
    )
    with pytest.raises(GuardRejected) as info:
        guard.invoke({"question": "Q?"})
    err = info.value
    assert [a.answer for a in err.attempts] == ["moon 1", "moon 2"]
    assert err.result is not None and err.result.passed is False
    assert err.n_attempts == 2
    assert err.usage.llm_calls == sum(
        a.chain_usage.llm_calls + a.check_usage.llm_calls for a in err.attempts
    )
    assert err.usage.llm_calls >= 2  # one model call per attempt at least


@pytest.mark.parametrize(("on_error", "status"), [("open", "passed"), ("closed", "rejected")])
def test_detector_error_fails_open_or_closed(on_error, status):
    chain, _ = scripted_chain(["an answer"])
    broken = FakeDetector(error=RuntimeError("backend down"))
    guard = HallucinationGuard(chain=chain, detectors=broken, on_error=on_error)
    out = guard.invoke({"question": "Q?"})
    assert out.status == status
    assert out.answer == "an answer"  # never lost
    assert "backend down" in out.verdict.errors["fake"]
    assert out.verdict.failed_open is (on_error == "open")


async def test_check_timeout_counts_as_detector_error():
    chain, _ = scripted_chain(["an answer"])
    slow = FakeDetector(score=1.0, latency=5.0)
    guard = HallucinationGuard(chain=chain, detectors=slow, check_timeout=0.05, on_error="closed")
    out = await guard.ainvoke({"question": "Q?"})
    assert out.status == "rejected" and out.answer == "an answer"
    assert "timed out" in out.verdict.errors["fake"]
    assert out.attempts[0].results[0].is_invalid


def test_combination_rules():
    chain, _ = scripted_chain(["x"] * 3)
    good, bad = FakeDetector(score=0.9, threshold=0.5), FakeDetector(score=0.3, threshold=0.5)
    outs = {
        rule: HallucinationGuard(chain=chain, detectors=[good, bad], combine=rule)
        .invoke("Q?")
        .verdict
        for rule in ("all", "any", "mean")
    }
    assert not outs["all"].passed and outs["any"].passed
    assert outs["mean"].score == pytest.approx(0.6) and outs["mean"].passed
    assert set(outs["all"].scores) == {"fake", "fake#2"}


def test_threshold_override_and_score_range():
    chain, _ = scripted_chain(["x"])
    fewl_like = FakeDetector(score=-0.2)  # unbounded native scale
    guard = HallucinationGuard(
        chain=chain,
        detectors=fewl_like,
        thresholds={"fake": -0.5},
        score_ranges={"fake": (-1.0, 1.0)},
    )
    out = guard.invoke("Q?")
    assert out.passed and out.verdict.scores["fake"] == pytest.approx(0.4)
    with pytest.raises(InvalidInputError, match="thresholds"):
        HallucinationGuard(chain=chain, detectors=fewl_like, thresholds={"nope": 1.0})


def test_usage_is_summed_over_attempts_including_detector_calls():
    chain, _ = scripted_chain(["moon", "sun"])
    judge = ScriptedChatModel(script=lambda p: "ok", model_name="judge")
    detector = moon_detector(model=judge)
    guard = HallucinationGuard(chain=chain, detectors=detector, policies=[Regenerate()])
    out = guard.invoke({"question": "Q?"})
    assert out.usage.llm_calls == 4  # 2 chain calls + 2 detector calls
    per_attempt = [a.chain_usage.total_tokens + a.check_usage.total_tokens for a in out.attempts]
    assert all(t > 0 for t in per_attempt)
    assert out.usage.total_tokens == sum(per_attempt)
    assert [a.check_usage.llm_calls for a in out.attempts] == [1, 1]


def test_attempts_are_child_runs_tagged_and_verdicts_dispatched():
    chain, _ = scripted_chain(["moon", "sun"])
    rec = Recorder()
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    guard.invoke({"question": "Q?"}, {"callbacks": [rec]})
    guard_run = next(r for r in rec.starts if r[2] is None)[3]
    children = [r for r in rec.starts if r[2] == guard_run]
    tags = [t for _, ts, _, _ in children for t in ts if t.startswith("guard:attempt:")]
    assert "guard:attempt:1" in tags and "guard:attempt:2" in tags
    verdicts = [d for name, d, _ in rec.events if name == VERDICT_EVENT]
    assert [(d["attempt"], d["verdict"]["passed"]) for d in verdicts] == [(1, False), (2, True)]
    assert all(run_id == guard_run for name, _, run_id in rec.events)


def test_later_chain_error_does_not_lose_the_first_answer():
    calls = {"n": 0}

    def flaky(inp: dict[str, Any]) -> str:
        calls["n"] += 1
        if calls["n"] > 1:
            raise ConnectionError("model unreachable")
        return "the moon"

    guard = HallucinationGuard(
        chain=RunnableLambda(flaky), detectors=moon_detector(), policies=[Regenerate()]
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "rejected" and out.answer == "the moon"
    assert "model unreachable" in out.attempts[1].error


def test_first_chain_error_propagates():
    def broken(inp: Any) -> str:
        raise ConnectionError("down")

    guard = HallucinationGuard(chain=RunnableLambda(broken), detectors=moon_detector())
    with pytest.raises(ConnectionError):
        guard.invoke("Q?")


def test_input_without_question_names_the_field():
    chain, _ = scripted_chain(["x"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector())
    with pytest.raises(InvalidInputError) as info:
        guard.invoke({"prompt": "Q?"})
    assert info.value.field == "question"


def test_answer_from_message_and_dict_outputs():
    msg_chain = RunnableLambda(lambda q: ScriptedChatModel(script=["sun"]).invoke(q))
    guard = HallucinationGuard(chain=msg_chain, detectors=moon_detector())
    assert guard.invoke("Q?").answer == "sun"
    dict_chain = RunnableLambda(lambda q: {"result": "sun", "source_documents": ["a", "b"]})
    out = HallucinationGuard(chain=dict_chain, detectors=moon_detector()).invoke("Q?")
    assert out.answer == "sun" and out.attempts[0].contexts == ["a", "b"]


class EntityInput(DetectorInput):
    entity: str
    """The entity the passage is about."""


class EntityDetector(FakeDetector):
    input_model = EntityInput


def test_detector_fields_are_forwarded():
    seen: list[str] = []

    def score(inp: Any) -> float:
        seen.append(inp.entity)
        return 1.0

    chain = RunnableLambda(lambda inp: f"About {inp['entity']}")
    guard = HallucinationGuard(
        chain=chain, detectors=EntityDetector(score=score), detector_fields=["entity"]
    )
    out = guard.invoke({"question": "Tell me about Ada", "entity": "Ada"})
    assert out.passed and seen == ["Ada"]
    with pytest.raises(InvalidInputError, match="entity"):
        guard.invoke({"question": "Tell me about Ada"})
    assert seen == ["Ada"]  # rejected before the chain or the detector ran


def test_stream_releases_only_the_checked_result():
    chain, _ = scripted_chain(["moon", "sun"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    chunks = list(guard.stream({"question": "Q?"}))
    assert len(chunks) == 1 and chunks[0].answer == "sun" and chunks[0].passed


async def test_abatch_is_bounded_and_keeps_order():
    in_flight = {"now": 0, "max": 0}

    async def answer(q: str) -> str:
        in_flight["now"] += 1
        in_flight["max"] = max(in_flight["max"], in_flight["now"])
        await asyncio.sleep(0.01)
        in_flight["now"] -= 1
        return f"answer to {q}"

    guard = HallucinationGuard(
        chain=RunnableLambda(answer), detectors=moon_detector(), batch_concurrency=3
    )
    outs = await guard.abatch([f"q{i}" for i in range(12)])
    assert [o.answer for o in outs] == [f"answer to q{i}" for i in range(12)]
    assert in_flight["max"] <= 3


def test_custom_policy():
    class AddHint(GuardPolicy):
        name = "hint"

        async def astep(self, ctx):
            return Rerun(input={**ctx.input, "hint": "not the moon"})

    chain = RunnableLambda(lambda inp: "the sun" if "hint" in inp else "the moon")
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[AddHint()])
    out = guard.invoke({"question": "Q?"})
    assert out.passed and [a.policy for a in out.attempts] == [None, "hint"]


def test_fallback_needs_exactly_one_source():
    with pytest.raises(InvalidInputError):
        Fallback()
    with pytest.raises(InvalidInputError):
        Fallback(answer="x", runnable=RunnableLambda(lambda x: x))


def test_regenerate_on_a_string_input_appends_the_feedback():
    model = ScriptedChatModel(script=lambda p: "the sun" if "fact-checker" in p else "the moon")
    guard = HallucinationGuard(chain=model, detectors=moon_detector(), policies=[Regenerate()])
    out = guard.invoke("What shines by day?")
    assert out.passed and out.answer == "the sun"
    assert model.calls[1].startswith("What shines by day?\n\nA fact-checker")


def test_chain_tokens_are_estimated_when_the_model_reports_none():
    model = ScriptedChatModel(script=["one two three"], report_usage=False)
    out = HallucinationGuard(chain=model, detectors=moon_detector()).invoke("a b c d?")
    usage = out.attempts[0].chain_usage
    assert usage.llm_calls == 1 and usage.estimated_tokens
    assert usage.prompt_tokens > 0 and usage.completion_tokens == 3


def test_a_failing_policy_is_recorded_and_the_answer_kept():
    guard = HallucinationGuard(
        chain=RunnableLambda(lambda q: "the moon"),
        detectors=moon_detector(),
        policies=[ReRetrieve(rewrite=str.upper), Fallback(answer="unsure")],
    )
    out = guard.invoke("Q?")  # rewrite needs a dict input to carry the rewritten query
    assert out.status == "fallback" and out.attempts[0].answer == "the moon"
    assert "rewrite" in out.attempts[1].error and out.attempts[1].policy == "re_retrieve"


async def test_verdicts_appear_in_astream_events():
    chain, _ = scripted_chain(["moon", "sun"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    events = [
        e
        async for e in guard.astream_events({"question": "Q?"}, version="v2")
        if e["event"] == "on_custom_event" and e["name"] == VERDICT_EVENT
    ]
    assert [e["data"]["verdict"]["passed"] for e in events] == [False, True]


def test_warm_up_reaches_every_detector(monkeypatch):
    warmed = []
    monkeypatch.setattr(FakeDetector, "warm_up", lambda self: warmed.append(self) or self)
    detectors = [FakeDetector(score=0.9), FakeDetector(score=0.8)]
    guard = HallucinationGuard(chain=RunnableLambda(lambda q: "Paris"), detectors=detectors)
    assert guard.warm_up() is guard
    assert warmed == detectors
