"""HallucinationGuard: verdicts, errors, usage, time-outs, hostile text (scripted models only)."""

from __future__ import annotations

import asyncio
import time
from contextlib import nullcontext
from typing import Any

import pytest
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import (
    ConfigurableField,
    RunnableLambda,
)

from doubles import (
    HISTORY,
    RESTATING,
    chat_rag_chain,
    least_time,
    moon_detector,
    prompt_exit,
    rag_chain,
    scripted_chain,
    time_to_exit,
)
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import GuardRejected, InvalidInputError, InvalidLLMOutput, LLMCallError
from truthguard.guard import (
    VERDICT_EVENT,
    Fallback,
    HallucinationGuard,
    Raise,
    Regenerate,
)
from truthguard.guard.extract import clean_text
from truthguard.result import DetectionResult
from truthguard.testing import FakeDetector, ScriptedChatModel


def test_passing_answer_is_released_once():
    chain, model = scripted_chain(["Paris is the capital."])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    out = guard.invoke({"question": "Capital of France?"})
    assert out.status == "passed" and out.passing
    assert out.answer == "Paris is the capital."
    assert out.n_attempts == 1 and model.call_count == 1
    assert out.verdict is not None and out.verdict.scores == {"fake": 1.0}


def test_attempts_exhausted_keeps_last_answer():
    chain, model = scripted_chain(["moon 1", "moon 2", "moon 3", "moon 4"])
    guard = HallucinationGuard(
        chain=chain, detectors=moon_detector(), policies=[Regenerate(max_uses=5)], max_attempts=3
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "rejected" and not out.passing
    assert out.answer is None and out.output is None  # nothing rejected is released
    assert out.last_answer == "moon 3" and model.call_count == 3
    assert [a.answer for a in out.attempts] == ["moon 1", "moon 2", "moon 3"]


@pytest.mark.parametrize(("on_error", "status"), [("open", "passed"), ("closed", "rejected")])
def test_detector_outage_fails_open_or_closed(on_error, status):
    chain, _ = scripted_chain(["an answer"])
    broken = FakeDetector(error=LLMCallError("fake.call", "backend down"))
    guard = HallucinationGuard(chain=chain, detectors=broken, on_error=on_error)
    out = guard.invoke({"question": "Q?"})
    assert out.status == status
    assert out.last_answer == "an answer"  # never lost
    assert "backend down" in out.verdict.errors["fake"]
    assert out.verdict.failed_open is (on_error == "open")


async def test_check_timeout_counts_as_detector_error():
    chain, _ = scripted_chain(["an answer"])
    slow = FakeDetector(score=1.0, latency=5.0)
    guard = HallucinationGuard(chain=chain, detectors=slow, check_timeout=0.05, on_error="closed")
    out = await guard.ainvoke({"question": "Q?"})
    assert out.status == "rejected" and out.last_answer == "an answer"
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
    assert not outs["all"].passing and outs["any"].passing
    assert outs["mean"].score == pytest.approx(0.6) and outs["mean"].passing
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
    assert out.passing and out.verdict.scores["fake"] == pytest.approx(0.4)
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
    assert out.status == "rejected" and out.last_answer == "the moon"
    assert "model unreachable" in out.attempts[1].error


def test_chain_error_without_any_answer_propagates():
    def broken(inp: Any) -> str:
        raise ConnectionError("down")

    guard = HallucinationGuard(
        chain=RunnableLambda(broken), detectors=moon_detector(), policies=[Regenerate()]
    )
    with pytest.raises(ConnectionError):
        guard.invoke({"question": "Q?"})


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
    assert out.passing and seen == ["Ada"]
    with pytest.raises(InvalidInputError, match="entity"):
        guard.invoke({"question": "Tell me about Ada"})
    assert seen == ["Ada"]  # rejected before the chain or the detector ran


def test_stream_releases_only_the_checked_result():
    chain, _ = scripted_chain(["moon", "sun"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    chunks = list(guard.stream({"question": "Q?"}))
    assert len(chunks) == 1 and chunks[0].answer == "sun" and chunks[0].passing


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


def test_chain_tokens_are_estimated_when_the_model_reports_none():
    model = ScriptedChatModel(script=["one two three"], report_usage=False)
    out = HallucinationGuard(chain=model, detectors=moon_detector()).invoke("a b c d?")
    usage = out.attempts[0].chain_usage
    assert usage.llm_calls == 1 and usage.estimated_tokens
    assert usage.prompt_tokens > 0 and usage.completion_tokens == 3


async def test_verdicts_appear_in_astream_events():
    chain, _ = scripted_chain(["moon", "sun"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector(), policies=[Regenerate()])
    events = [
        e
        async for e in guard.astream_events({"question": "Q?"}, version="v2")
        if e["event"] == "on_custom_event" and e["name"] == VERDICT_EVENT
    ]
    assert [e["data"]["verdict"]["passing"] for e in events] == [False, True]


def test_output_answer_composes_with_an_output_parser():
    chain, _ = rag_chain(["The moon.", "The sun."])
    guard = HallucinationGuard(
        chain=chain, detectors=moon_detector(), policies=[Regenerate()], output="answer"
    )
    assert (guard | StrOutputParser()).invoke({"question": "Q?"}) == "The sun."
    stubborn, _ = rag_chain(["The moon."] * 3)
    rejecting = HallucinationGuard(chain=stubborn, detectors=moon_detector(), output="answer")
    with pytest.raises(GuardRejected) as info:
        (rejecting | StrOutputParser()).invoke({"question": "Q?"})
    assert info.value.attempts[0].answer == "The moon."  # the answer is never lost


def test_configurable_detector_is_accepted_and_configured_per_run():
    chain, _ = scripted_chain(["an answer"] * 4)
    det = FakeDetector(score=0.7, threshold=0.5).configurable_fields(
        threshold=ConfigurableField(id="threshold")
    )
    guard = HallucinationGuard(chain=chain, detectors=[det])
    assert guard.detector_keys == ["fake"]
    assert guard.invoke("Q?").passing
    strict = guard.with_config(configurable={"threshold": 0.9})
    assert strict.invoke("Q?").status == "rejected"


class Stubborn(BaseDetector):
    """Ignores the first cancellation and keeps checking for ``seconds``."""

    detector_name = "stubborn"
    seconds: float = 1.0

    async def _acheck(self, inp: DetectorInput, session: Any) -> DetectionResult:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            await asyncio.sleep(self.seconds)
        return DetectionResult(detector="stubborn", score=1.0, label="factual")


async def test_check_timeout_holds_when_the_detector_ignores_cancellation():
    chain, _ = scripted_chain(["an answer"])
    timeout = 0.3
    guard = HallucinationGuard(chain=chain, detectors=Stubborn(), check_timeout=timeout)
    started = time.perf_counter()
    out = await guard.ainvoke({"question": "Q?"})
    elapsed = time.perf_counter() - started
    assert out.status == "rejected" and "timed out" in out.verdict.errors["stubborn"]
    assert elapsed < 1.1 * timeout + 0.2  # the bound, the chain itself is instant


async def test_cancelled_error_from_a_model_does_not_lose_the_answer():
    class Cancelling(ScriptedChatModel):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kw):
            if not self.calls:
                self._calls.append("cancelled")
                raise asyncio.CancelledError("stray")
            return await super()._agenerate(messages, stop, run_manager, **kw)

    model = Cancelling(script=["The sun."])
    guard = HallucinationGuard(chain=model, detectors=moon_detector(), policies=[Regenerate()])
    out = await guard.ainvoke("Q?")
    assert out.passing and out.answer == "The sun."
    assert "CancelledError" in out.attempts[0].error


class CancelsItself(BaseDetector):
    detector_name = "cancels"

    async def _acheck(self, inp: DetectorInput, session: Any) -> DetectionResult:
        raise asyncio.CancelledError("stray")


async def test_cancelled_error_from_a_detector_is_a_failure_not_an_escape():
    chain, _ = scripted_chain(["an answer"])
    failing = HallucinationGuard(chain=chain, detectors=CancelsItself(), on_error="open")
    res = await failing.ainvoke("Q?")
    assert res.status == "rejected" and res.last_answer == "an answer"


@pytest.mark.parametrize("bad", [5, float("nan"), ["a"], {}])
def test_question_of_the_wrong_type_names_the_field(bad):
    chain, model = scripted_chain(["x"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector())
    with pytest.raises(InvalidInputError) as info:
        guard.invoke({"question": bad})
    assert info.value.field == "question" and model.call_count == 0


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_threshold_is_refused(value):
    chain, _ = scripted_chain(["x"])
    with pytest.raises(InvalidInputError) as info:
        HallucinationGuard(chain=chain, detectors=moon_detector(), thresholds={"fake": value})
    assert info.value.field == "thresholds.fake"


def test_fail_open_never_passes_an_answer_the_detector_raised_on():
    def picky(inp: DetectorInput) -> float:
        if "\ufffd" not in inp.question and any(0xD800 <= ord(c) < 0xE000 for c in inp.question):
            raise AssertionError("a lone surrogate reached the detector")
        raise TypeError("cannot embed this text")

    chain, _ = scripted_chain(["an answer"])
    guard = HallucinationGuard(chain=chain, detectors=FakeDetector(score=picky), on_error="open")
    out = guard.invoke({"question": "Where is Dubai \ud800?"})
    assert out.status == "rejected" and out.last_answer == "an answer"
    assert "TypeError" in out.verdict.errors["fake"] and not out.verdict.failed_open
    assert out.question == "Where is Dubai \ufffd?"


# -- over HTTP: ChatOpenAI against truthguard.testing.OpenAIServer, every fault x policy --------

FAULTS = ["429", "500", "stall", "bad_json", "empty_choices", "null_content", "stream_cut"]


FALLBACK = "I cannot answer that right now."


def http_chain(server: Any, **kw: Any) -> Any:
    prompt = ChatPromptTemplate.from_messages([("human", "Q: {question}")])
    model = server.chat_model(max_retries=0, timeout=kw.pop("timeout", 0.3), **kw)
    return prompt | model | StrOutputParser()


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("policies", ["fallback", "regenerate+fallback", "raise"])
def test_chain_faults_over_http_never_lose_an_answer(fault, policies):
    from truthguard.testing import Fault, OpenAIServer

    chosen = {
        "fallback": [Fallback(answer=FALLBACK)],
        "regenerate+fallback": [Regenerate(), Fallback(answer=FALLBACK)],
        "raise": [Raise()],
    }[policies]
    with OpenAIServer(
        reply="The sun shines.", faults=[Fault(fault, match="Q:", stall_seconds=5)]
    ) as server:
        guard = HallucinationGuard(
            chain=http_chain(server), detectors=moon_detector(), policies=chosen
        )
        if policies == "raise":
            with pytest.raises(GuardRejected) as info:
                guard.invoke({"question": "What shines?"})
            assert info.value.attempts[0].error  # the chain's failure is recorded, not raised raw
            return
        out = guard.invoke({"question": "What shines?"})
    assert out.status == "fallback" and out.answer == FALLBACK  # the fallback ran
    assert out.attempts[0].answer is None and out.attempts[0].error


class YesNoChecker(BaseDetector):
    """Asks a model "Check: <answer>" and wants yes or no back (anything else is invalid)."""

    detector_name = "yesno"
    model: Any = None

    async def _acheck(self, inp: DetectorInput, session: Any) -> DetectionResult:
        text = (await session.acall(self.model, f"Check: {inp.answer}", stage="yesno")).strip()
        if text.lower() not in ("yes", "no"):
            raise InvalidLLMOutput("expected yes or no", raw=text, stage="yesno")
        ok = text.lower() == "yes"
        return DetectionResult(
            detector="yesno",
            score=float(ok),
            label="factual" if ok else "hallucinated",
            explanation=f"the checker said {text}",
        )


def http_reply(messages: list[dict[str, Any]]) -> str:
    return "yes" if str(messages[-1]["content"]).startswith("Check:") else "The sun shines."


@pytest.mark.parametrize("fault", FAULTS)
def test_detector_faults_over_http_keep_the_answer_and_send_no_outage_text(fault):
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(
        reply=http_reply, faults=[Fault(fault, match="Check:", stall_seconds=5)]
    ) as server:
        checker = YesNoChecker(model=server.chat_model(max_retries=0, timeout=0.2))
        guard = HallucinationGuard(
            chain=http_chain(server),
            detectors=checker,
            policies=[Regenerate(), Fallback(answer=FALLBACK)],
            check_timeout=0.3,
        )
        out = guard.invoke({"question": "What shines?"})
        chain_requests = [
            " ".join(str(m["content"]) for m in r.messages)
            for r in server.requests
            if str(r.messages[0]["content"]).startswith("Q:")
        ]
    assert out.status == "fallback" and out.answer == FALLBACK  # the fallback ran
    assert [a.answer for a in out.attempts[:2]] == ["The sun shines."] * 2  # both kept
    assert len(chain_requests) == 2 and "Answer again" in chain_requests[1]
    for text in chain_requests:
        assert "rror" not in text and "Invalid" not in text and "500" not in text


@pytest.mark.parametrize("timeout", [0.3, 1.0])
def test_check_timeout_holds_over_http_when_the_checker_stalls(timeout):
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(
        reply="The sun shines.", faults=[Fault("stall", match="sun shines", stall_seconds=10)]
    ) as server:
        checker = FakeDetector(score=1.0, model=server.chat_model(max_retries=2, timeout=8))
        guard = HallucinationGuard(
            chain=http_chain(server, timeout=5), detectors=checker, check_timeout=timeout
        )
        started = time.perf_counter()
        out = guard.invoke({"question": "What shines?"})
        elapsed = time.perf_counter() - started
    chain_seconds = out.attempts[0].chain_usage.wall_seconds
    assert out.status == "rejected" and out.last_answer == "The sun shines."
    assert "timed out" in out.verdict.errors["fake"]
    assert elapsed - chain_seconds < 1.1 * timeout + 0.2


# -- hostile text: arbitrary Unicode never escapes, never loses the answer, never opens the guard --

ODD = ["\ud800", "\udfff", "\x00", "\x1b[31m", "\u202e", "\ufeff", "\U0001f600", "\n\n", "\t", "é"]


def hostile_text(rng: Any, n: int) -> str:
    pieces = [rng.choice(ODD) if rng.random() < 0.4 else rng.choice(["moon", "sun", "Dubai"])]
    pieces += [rng.choice([*ODD, "word", "Paris", " ", "."]) for _ in range(n)]
    return "x" + "".join(pieces)  # never blank: a blank answer is no answer


def has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@pytest.mark.parametrize("on_error", ["open", "closed"])
def test_arbitrary_unicode_through_the_guard(on_error):
    import random

    rng = random.Random(16)
    seen: list[str] = []

    def strict(inp: DetectorInput) -> float:
        for text in (inp.question, inp.answer, *inp.contexts):
            seen.append(text)
            assert not has_lone_surrogate(text), "a lone surrogate reached the detector"
            assert "\x00" not in text, "a control character reached the detector"
        return 0.0 if "moon" in inp.answer else 1.0

    for case in range(24):
        question = hostile_text(rng, 8) + "?"
        answer = hostile_text(rng, 30) * (40_000 if case == 0 else 1)  # case 0: over 1 MB
        contexts = [hostile_text(rng, 10) for _ in range(2)]
        guard = HallucinationGuard(
            chain=RunnableLambda(lambda q, a=answer, c=contexts: {"answer": a, "context": c}),
            detectors=FakeDetector(score=strict, threshold=0.5),
            on_error=on_error,
        )
        out = guard.invoke({"question": question})
        assert out.last_answer == clean_text(answer)  # never lost (lone surrogates made U+FFFD)
        if "moon" in answer:
            assert out.status == "rejected"  # a failing check never passes
        else:
            assert out.status == "passed"
    assert len(seen) >= 24 * 4


@pytest.mark.model
def test_lone_surrogates_do_not_open_the_guard_with_the_local_refchecker():
    from truthguard.refchecker import RefChecker

    chain = RunnableLambda(
        lambda q: {"answer": "Dubai \ud800 is in Oman.", "context": ["Dubai is in the UAE \udfff."]}
    )
    for on_error in ("open", "closed"):
        guard = HallucinationGuard(chain=chain, detectors=RefChecker(), on_error=on_error)
        out = guard.invoke({"question": "Where is Dubai \ud800?"})
        assert (
            out.last_answer == "Dubai \ufffd is in Oman."
            and out.question == "Where is Dubai \ufffd?"
        )
        result = out.attempts[0].results[0]
        assert not result.is_invalid and result.score is not None  # a real verdict, no crash


def test_warm_up_reaches_every_detector(monkeypatch):
    warmed = []
    monkeypatch.setattr(FakeDetector, "warm_up", lambda self: warmed.append(self) or self)
    detectors = [FakeDetector(score=0.9), FakeDetector(score=0.8)]
    guard = HallucinationGuard(chain=RunnableLambda(lambda q: "Paris"), detectors=detectors)
    assert guard.warm_up() is guard
    assert warmed == detectors


def test_retry_output_without_an_answer_keeps_the_first_answer():
    calls = {"n": 0}

    def chain(inp: dict[str, Any]) -> Any:
        calls["n"] += 1
        return "the moon" if calls["n"] == 1 else {"unexpected": "shape"}

    guard = HallucinationGuard(
        chain=RunnableLambda(chain), detectors=moon_detector(), policies=[Regenerate()]
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "rejected" and out.last_answer == "the moon"
    assert out.attempts[1].answer is None
    assert "none of the keys" in out.attempts[1].error
    assert out.attempts[1].output == {"unexpected": "shape"}


def test_none_question_is_rejected_not_checked_as_the_text_none():
    guard = HallucinationGuard(chain=RunnableLambda(lambda q: "sun"), detectors=moon_detector())
    with pytest.raises(InvalidInputError) as info:
        guard.invoke({"question": None})
    assert info.value.field == "question"


def test_none_answer_is_not_checked_as_the_text_none():
    seen: list[str] = []

    def score(inp: Any) -> float:
        seen.append(inp.answer)
        return 1.0

    calls = {"n": 0}

    def chain(q: Any) -> dict[str, Any]:
        calls["n"] += 1
        return {"answer": "the moon" if calls["n"] == 1 else None}

    guard = HallucinationGuard(
        chain=RunnableLambda(chain),
        detectors=FakeDetector(
            score=lambda i: score(i) if "moon" not in i.answer else 0.0, threshold=0.5
        ),
        policies=[Regenerate()],
    )
    out = guard.invoke({"question": "Q?"})
    assert "None" not in seen
    assert out.status == "rejected" and out.last_answer == "the moon"
    assert "None" in out.attempts[1].error
    with pytest.raises(InvalidInputError):
        HallucinationGuard(
            chain=RunnableLambda(lambda q: {"answer": None}), detectors=moon_detector()
        ).invoke("Q?")


# The user's own model client after a sync guard: the script runs in a fresh interpreter, so
# langchain-openai's per-base-URL async client cache starts empty, as in a real app.
CLIENT_SCRIPT = """
import asyncio, sys
from langchain_core.output_parsers import StrOutputParser
from truthguard.guard import HallucinationGuard, StreamingGuard
from truthguard.testing import FakeDetector, OpenAIServer

order = sys.argv[1]
with OpenAIServer(reply="The sun shines.") as server:
    model = server.chat_model(max_retries=0, timeout=5)
    chain = model | StrOutputParser()
    guard = HallucinationGuard(chain=chain, detectors=FakeDetector(score=0.9))
    streaming = StreamingGuard(chain=chain, detector=FakeDetector(score=0.9))
    # langchain-openai binds its async client to the first loop that uses it, so an app gets
    # one asyncio.run of it: before the sync guards run, or after.
    if order == "async-first":
        print(asyncio.run(model.ainvoke("hi")).content)
    print(guard.invoke("What shines?").answer)
    print("".join(c.text or "" for c in streaming.stream("What shines?")))
    if order == "sync-first":  # two calls at once: the pool waits on an asyncio.Event
        # Deterministic too: the sync guards opened no connection in the user's async client.
        print(len(model.root_async_client._client._transport._pool.connections))
        async def two():
            return await asyncio.gather(model.ainvoke("hi"), model.ainvoke("ho"))
        print(" ".join(m.content for m in asyncio.run(two())))
"""


@pytest.mark.parametrize("order", ["async-first", "sync-first"])
def test_sync_guard_leaves_the_users_async_client_usable(order):
    import os
    import subprocess
    import sys

    pytest.importorskip("langchain_openai")
    done = subprocess.run(
        [sys.executable, "-c", CLIENT_SCRIPT, order],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    expected = ["The sun shines."] * 3
    if order == "sync-first":
        expected[-1:] = ["0", "The sun shines. The sun shines."]
    assert done.stdout.splitlines() == expected, done.stdout


def test_a_runaway_checker_reply_is_capped_and_the_verdict_says_the_checker_was_unavailable():
    from truthguard.result import RAW_OUTPUT_LIMIT
    from truthguard.testing import OpenAIServer

    huge = "maybe " * 350_000  # a 2 MB reply the checker cannot use

    def reply(messages: list[dict[str, Any]]) -> str:
        return huge if str(messages[-1]["content"]).startswith("Check:") else "The sun shines."

    with OpenAIServer(reply=reply) as server:
        checker = YesNoChecker(model=server.chat_model(max_retries=0, timeout=10))
        guard = HallucinationGuard(chain=http_chain(server, timeout=5), detectors=checker)
        out = guard.invoke({"question": "What shines?"})
    result = out.attempts[0].results[0]
    assert result.is_invalid and len(result.raw_output) == RAW_OUTPUT_LIMIT
    assert result.raw_output_chars == len(huge.strip())
    assert out.status == "rejected"
    assert "yesno was unavailable or gave no verdict" in out.verdict.reason
    assert "the guard fails closed" in out.verdict.reason


def test_the_default_checker_says_whether_an_answer_passes_over_http():
    from doubles import ListRetriever
    from truthguard.rag import build_rag_chain
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    passages = ["Dubai is a city in the United Arab Emirates (UAE)."]
    replies = {"Where is Dubai": "Dubai is in France.", "Where is Abu": "Dubai is in the UAE."}
    with OpenAIServer(reply=replies, default="I do not know.") as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages), server.chat_model(max_retries=0, timeout=5)
        )
        guard = HallucinationGuard(chain=chain, detectors=RefChecker())
        bad = guard.invoke({"question": "Where is Dubai?"})
    result = bad.attempts[0].results[0]
    assert result.threshold is None and result.label == "hallucinated"
    assert result.passing is False  # an `if result.passing:` edge routes it as a failure
    assert bad.verdict.passes == {"refchecker": False}
    # nothing rejected is reachable as the answer; the refused one stays in the attempts
    assert bad.status == "rejected" and bad.answer is None and bad.output is None
    assert bad.last_answer == "Dubai is in France."


@pytest.mark.parametrize("check_loop", ["caller", "truthguard"])
async def test_a_blocked_callers_loop_decides_the_deadline_late_never_a_pass(check_loop):
    """The checker answers in 0.1 s, the deadline is 0.5 s, and the caller's loop is busy for 1 s
    from the moment the check is sent: the verdict is decided late (a time-out), with the
    deprecated ``check_loop="truthguard"`` too (it warns and changes nothing)."""
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=http_reply, latency=0.1) as server:
        checker = YesNoChecker(model=server.chat_model(max_retries=0, timeout=5))
        with warns_if_deprecated(check_loop):
            guard = HallucinationGuard(
                chain=http_chain(server, timeout=5),
                detectors=checker,
                check_timeout=0.5,
                check_loop=check_loop,
            )

        async def saturate() -> None:
            while not any(str(r.messages[-1]["content"]).startswith("Check:") for r in
                          server.requests):  # fmt: skip
                await asyncio.sleep(0.005)
            time.sleep(1.0)  # a loop saturated by other requests' work

        out, _ = await asyncio.gather(guard.ainvoke({"question": "What shines?"}), saturate())
    assert out.status == "rejected"
    assert "timed out" in out.verdict.errors["yesno"]


def warns_if_deprecated(check_loop: str) -> Any:
    return pytest.warns(DeprecationWarning) if check_loop == "truthguard" else nullcontext()


def test_an_empty_model_answer_is_a_model_fault_not_bad_input():
    model = ScriptedChatModel(script=["", "The sun."])
    guard = HallucinationGuard(
        chain=model, detectors=FakeDetector(score=0.9), policies=[Regenerate(feedback_key=None)]
    )
    out = guard.invoke("What shines?")
    assert out.status == "passed" and out.answer == "The sun."
    assert (
        out.attempts[0].error.startswith("InvalidLLMOutput")
        and "empty answer" in out.attempts[0].error
    )


# -- chat history: what the user said is evidence; anything new still needs the contexts --------


def sources(result: DetectionResult) -> list[str]:
    return [c["evidence"]["source"] for c in result.details["claims"]]


@pytest.mark.model
def test_a_reply_restating_the_users_words_passes_with_the_chat_history_over_http():
    from truthguard.refchecker import RefChecker
    from truthguard.testing import OpenAIServer

    question = "Which tram goes through Alfama?"
    with OpenAIServer(reply=RESTATING) as server:
        chain = chat_rag_chain(server.chat_model(max_retries=0, timeout=5))
        checker = RefChecker(threshold=0.5)
        guard = HallucinationGuard(chain=chain, detectors=checker)
        told = guard.invoke({"question": question, "chat_history": HISTORY})
        prompt = [m["content"] for m in server.requests[0].messages]
        untold = guard.invoke({"question": question})
        off = HallucinationGuard(chain=chain, detectors=checker, history_key="")
        ignored = off.invoke({"question": question, "chat_history": HISTORY})
    assert HISTORY[0][1] in prompt  # the chain itself answered from the conversation
    assert told.status == "passed" and told.answer == RESTATING
    result = told.attempts[0].results[0]
    assert [c["label"] for c in result.details["claims"]] == ["Entailment", "Entailment"]
    assert sources(result) == ["history", "reference"]
    # Judged without the history, the user's trip is a claim no passage supports.
    for out in (untold, ignored):
        result = out.attempts[0].results[0]
        assert sources(result) == ["reference", "reference"]
        assert result.details["claims"][0]["label"] != "Entailment"
        assert out.status == "rejected" and out.last_answer == RESTATING


def test_every_check_gets_the_history_first_and_after_each_policy():
    from truthguard.guard import Filter, ReRetrieve

    seen: list[tuple[str, list[str]]] = []

    def score(inp: DetectorInput) -> float:
        seen.append((inp.answer, list(inp.history)))
        return 0.0 if "moon" in inp.answer else 1.0

    chain, _ = rag_chain(["The moon.", "The moon again.", "The moon still. The sun shines."])
    guard = HallucinationGuard(
        chain=chain,
        detectors=FakeDetector(score=score, threshold=0.5),
        policies=[ReRetrieve(k=[2]), Regenerate(), Filter(detector=FakeDetector(score=score))],
    )
    out = guard.invoke({"question": "What shines?", "chat_history": HISTORY})
    assert out.status == "filtered" and out.answer.startswith("The sun shines.")
    said = [text for _, text in HISTORY]
    assert [answer for answer, _ in seen] == [
        "The moon.",
        "The moon again.",
        "The moon still. The sun shines.",
        "The moon still.",  # the Filter's own check of each sentence
        "The sun shines.",
    ]
    assert all(history == said for _, history in seen)


def test_a_bad_chat_history_names_the_key_before_any_model_call():
    chain, model = scripted_chain(["x"])
    guard = HallucinationGuard(chain=chain, detectors=moon_detector())
    for value, field in [
        (5, "chat_history"),
        ({"a": 1}, "chat_history"),
        (["ok", 3], "chat_history[1]"),
    ]:
        with pytest.raises(InvalidInputError) as info:
            guard.invoke({"question": "Q?", "chat_history": value})
        assert info.value.field == field
    keyed = HallucinationGuard(chain=chain, detectors=moon_detector(), history_key="conversation")
    with pytest.raises(InvalidInputError) as info:
        keyed.invoke({"question": "Q?", "chat_history": HISTORY})
    assert info.value.field == "conversation" and model.call_count == 0


def test_a_messages_input_keeps_the_question_out_of_the_history():
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.prompts import MessagesPlaceholder

    seen: list[DetectorInput] = []
    model = ScriptedChatModel(script=["Tram 28."])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a travel assistant."), MessagesPlaceholder("messages")]
    )
    guard = HallucinationGuard(
        chain=prompt | model, detectors=FakeDetector(score=lambda i: seen.append(i) or 1.0)
    )
    messages = [
        SystemMessage("Be brief."),
        HumanMessage(HISTORY[0][1]),
        AIMessage(HISTORY[1][1]),
        HumanMessage("Which tram goes through Alfama?"),
    ]
    out = guard.invoke({"messages": messages})
    assert out.status == "passed" and out.question == "Which tram goes through Alfama?"
    assert seen[0].question == "Which tram goes through Alfama?"
    assert seen[0].history == [text for _, text in HISTORY]  # no system prompt, no question


async def test_astream_events_streams_the_released_answer_as_the_guards_chunk():
    """As StreamingGuard does: the released output is the guard's ``on_chain_stream`` event,
    never a nested run's unchecked token."""
    from truthguard.testing import OpenAIServer

    async with OpenAIServer(reply="The sun shines.", latency=0.01) as server:
        for output in ("result", "answer"):
            guard = HallucinationGuard(
                chain=http_chain(server, timeout=5),
                detectors=FakeDetector(score=1.0, threshold=0.5),
                output=output,
            )
            events = [e async for e in guard.astream_events({"question": "q?"}, version="v2")]
            streamed = [e for e in events if e["event"] == "on_chain_stream"]
            assert [e["name"] for e in streamed] == ["HallucinationGuard"]
            chunk = streamed[0]["data"]["chunk"]
            answer = chunk if output == "answer" else chunk.answer
            assert answer == "The sun shines."
            assert events[-1]["event"] == "on_chain_end"
            assert [e["event"] for e in events].index("on_custom_event") < events.index(
                streamed[0]
            )  # the verdict comes before the answer it released


def test_guard_result_passed_is_a_deprecated_alias_of_passing():
    chain, _ = scripted_chain(["x"])
    out = HallucinationGuard(chain=chain, detectors=FakeDetector(score=0.9)).invoke("Q?")
    assert out.passing is True and out.attempts[0].passing is True
    with pytest.warns(DeprecationWarning, match=r"GuardResult.passed is deprecated"):
        assert out.passed is True
    with pytest.warns(DeprecationWarning, match=r"Attempt.passed is deprecated"):
        assert out.attempts[0].passed is True
    # a result recorded before the rename still loads
    old = {**out.model_dump(), "passed": True}
    del old["passing"]
    assert type(out).model_validate(old).passing is True


def test_guard_verdict_passed_is_a_deprecated_alias_of_passing():
    from truthguard.guard import GuardVerdict

    chain, _ = scripted_chain(["x"])
    verdict = (
        HallucinationGuard(chain=chain, detectors=FakeDetector(score=0.9)).invoke("Q?").verdict
    )
    assert verdict.passing is True and "passed" not in verdict.model_dump()
    with pytest.warns(DeprecationWarning, match=r"GuardVerdict.passed is deprecated"):
        assert verdict.passed is True
    # a verdict recorded (or built) with the old name still loads
    old = {**verdict.model_dump(), "passed": False}
    del old["passing"]
    assert GuardVerdict.model_validate(old).passing is False
    assert GuardVerdict(passed=True, combine="all").passing is True


# -- a checker that hangs on the sync path: the chain, the next check and exit never wait on it -


def test_a_hanging_checker_leaves_the_next_sync_invoke_on_time():
    import concurrent.futures

    from truthguard._sync import call_executor
    from truthguard.llm import LLMSettings
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(reply=http_reply) as server:
        # the client's own time-out is far past the test: only abandoning frees a thread
        checker = YesNoChecker(
            model=server.chat_model(max_retries=0, timeout=60),
            llm_settings=LLMSettings(max_concurrency=1),
        )
        guard = HallucinationGuard(
            chain=http_chain(server, timeout=5), detectors=checker, check_timeout=0.25
        )
        n = call_executor().max_workers + 8  # more hung checks than the call pool has slots

        def timed(question: str) -> tuple[Any, float]:
            started = time.perf_counter()
            return guard.invoke({"question": question}), time.perf_counter() - started

        def burst() -> list[tuple[Any, float]]:
            with concurrent.futures.ThreadPoolExecutor(32) as callers:
                return list(callers.map(timed, ["What shines?"] * n))

        # the same burst with a healthy checker first: what this machine takes now
        usual = max(seconds for _, seconds in burst())
        # a hung check adds its 0.25 s deadline; a loaded machine stretches the hung burst as it
        # stretched the healthy one (CI: 1.69 s after a healthy 0.94 s). A check or chain held by
        # the hung calls waits for the 60 s stall or the chain's 5 s time-out, far past this bound
        bound = max(2.0, 2 * usual + 0.25)
        server.faults = [Fault("stall", match="Check:", stall_seconds=60)]
        # twice at most: a loaded machine holds a burst back now and then; hung checks holding
        # the pool hold every burst (the second one more: the first's are still hung)
        for _ in range(2):
            runs = burst()
            assert all("timed out" in out.verdict.errors["yesno"] for out, _ in runs)
            slowest = max(seconds for _, seconds in runs)
            if slowest < bound:
                break
        assert slowest < bound, (
            f"an invoke took {slowest:.2f}s for a 0.25s check_timeout (healthy: {usual:.2f}s)"
        )
        server.faults = []  # the checker is back; the hung requests still hold their threads
        for _ in range(3):  # a loaded machine holds a process back now and then; a defect always
            started = time.perf_counter()
            out = guard.invoke({"question": "What shines?"})
            elapsed = time.perf_counter() - started
            if elapsed < 1.0:
                break
    assert out.status == "passed" and out.answer == "The sun shines.", out.reason
    assert elapsed < 1.0, f"the healthy invoke took {elapsed:.2f}s"


EXIT_SCRIPT = """
import sys, time
from langchain_core.output_parsers import StrOutputParser
from langchain_openai import ChatOpenAI
from truthguard.guard import HallucinationGuard
from truthguard.testing import FakeDetector

url = sys.argv[1]
model = ChatOpenAI(base_url=url, api_key="test", model="gpt-test", max_retries=0, timeout=60)
guard = HallucinationGuard(
    chain=model | StrOutputParser(),
    detectors=FakeDetector(score=1.0, model=model),
    check_timeout=0.3,
)
out = guard.invoke("What shines?")
print(out.status, out.verdict.errors.get("fake"), flush=True)
"""


def test_a_process_exits_at_once_after_a_sync_check_timed_out():
    from truthguard.testing import Fault, OpenAIServer

    pytest.importorskip("langchain_openai")
    # the checker's request carries the answer; the chain's carries the question
    with (
        OpenAIServer(
            reply="The sun shines.", faults=[Fault("stall", match="sun shines", stall_seconds=60)]
        ) as server,
        OpenAIServer(reply="The sun shines.") as healthy,
    ):
        line, hooks, exited, bound = prompt_exit(
            lambda: time_to_exit(EXIT_SCRIPT, server.base_url),
            lambda: time_to_exit(EXIT_SCRIPT, healthy.base_url),
        )
    assert line.startswith("rejected check timed out"), line
    # nothing at exit waits for the abandoned request; the teardown after it is the
    # interpreter's own (0.5-0.8 s for these imports on a loaded 2-core machine)
    assert hooks < 0.5, f"exit hooks ended {hooks:.2f}s after the result"
    assert exited < bound, f"exited {exited:.2f}s after its result (bound {bound:.2f}s)"


# -- the whole run's deadline: a chain that hangs ends at the guard's timeout ------------------


async def _run_entry(guard: Any, entry: str, question: str) -> Any:
    if entry == "invoke":
        return guard.invoke({"question": question})
    if entry == "ainvoke":
        return await guard.ainvoke({"question": question})
    if entry == "stream":
        return list(guard.stream({"question": question}))[-1]
    return [chunk async for chunk in guard.astream({"question": question})][-1]


@pytest.mark.parametrize("entry", ["invoke", "ainvoke", "stream", "astream"])
async def test_a_hanging_chain_ends_at_the_guards_timeout(entry):
    from truthguard.testing import Fault, OpenAIServer

    with OpenAIServer(reply="The sun shines.") as server:
        guard = HallucinationGuard(
            chain=http_chain(server, timeout=60),
            detectors=moon_detector(),
            policies=[Regenerate(), Fallback(answer=FALLBACK)],
            timeout=1.0,
        )
        await _run_entry(guard, entry, "What shines?")  # warm: the client and its imports
        server.faults = [Fault("stall", match="Q:", stall_seconds=30)]  # from now on it hangs
        elapsed, out = await least_time(lambda: _run_entry(guard, entry, "What shines?"), 1.1)
        if entry.startswith("a"):  # the chain's request was cancelled, not left to hang
            assert server.wait_idle(1.0)
    assert out.status == "fallback" and out.answer == FALLBACK
    assert "timeout of 1s passed" in out.attempts[0].error
    bound = 1.1  # the timeout and 10%
    if elapsed >= bound:  # a loaded machine: plus no more than a healthy run takes now
        with OpenAIServer(reply="The sun shines.") as server:
            healthy = HallucinationGuard(
                chain=http_chain(server, timeout=60), detectors=moon_detector(), timeout=1.0
            )
            await _run_entry(healthy, entry, "What shines?")
            usual, _ = await least_time(lambda: _run_entry(healthy, entry, "What shines?"), 0.0)
        bound += usual
    assert elapsed < bound, f"{entry} returned {elapsed:.2f}s after it started (bound {bound:.2f})"


# -- verdict events never carry withheld text unless asked --------------------------------------


@pytest.mark.parametrize("opt_in", [False, True])
async def test_verdict_events_carry_a_rejected_answer_only_when_asked(opt_in):
    import json

    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply="The moon is made of green cheese.") as server:
        guard = HallucinationGuard(
            chain=http_chain(server, timeout=5),
            detectors=moon_detector(),
            policies=[Fallback(answer=FALLBACK)],
            output="answer",
            rejected_text_in_events=opt_in,
        )
        events = [e async for e in guard.astream_events({"question": "Q?"}, version="v2")]
    verdicts = [e["data"] for e in events if e["event"] == "on_custom_event"]
    assert [v["verdict"]["passing"] for v in verdicts] == [False]
    assert events[-1]["data"]["output"] == FALLBACK
    if opt_in:
        assert verdicts[0]["answer"] == "The moon is made of green cheese."
    else:
        assert verdicts[0]["answer"] is None
        assert "cheese" not in json.dumps(events, default=str)  # in no event at all
