"""AttemptLoop: the attempt loop's decisions, driven by hand with verdicts (no chain, no model)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import pytest
from langchain_core.runnables import RunnableLambda

from truthguard.errors import GuardRejected
from truthguard.guard import (
    Attempt,
    Fallback,
    GuardVerdict,
    PolicyContext,
    Raise,
    Regenerate,
    Release,
    Rerun,
)
from truthguard.guard.attempts import (
    AskPolicy,
    AttemptLoop,
    Finish,
    ReleaseAnswer,
    RunAttempt,
)
from truthguard.guard.usage import UsageCollector
from truthguard.result import DetectionResult, Label, Usage

INPUT = {"question": "Which planet has Phobos?"}


class Configs:
    """A ``policy_config`` that keeps the usage collector handed out for each attempt."""

    def __init__(self) -> None:
        self.collectors: dict[int, UsageCollector] = {}

    def __call__(self, number: int, usage: UsageCollector) -> dict[str, Any]:
        self.collectors[number] = usage
        return {"tags": [f"guard:attempt:{number}"]}

    def spend(self, number: int) -> None:
        """One failed model call made by the policy asked for attempt ``number``."""
        collector = self.collectors[number]
        collector.on_chat_model_start({}, [[]], run_id=(run := uuid4()))
        collector.on_llm_error(RuntimeError("down"), run_id=run)


def loop_of(*policies: Any, max_attempts: int = 3, **kw: Any) -> AttemptLoop:
    return AttemptLoop(
        question=INPUT["question"],
        input=INPUT,
        policies=list(policies),
        max_attempts=max_attempts,
        **kw,
    )


def checked(action: Any, passed: bool, answer: str = "Mars.", **kw: Any) -> Attempt:
    """The attempt a guard would record for ``action``: an answer with a verdict."""
    assert isinstance(action, RunAttempt), action
    return Attempt(
        number=action.number,
        policy=action.policy,
        answer=answer,
        verdict=kw.pop("verdict", None) or GuardVerdict(passing=passed, combine="all"),
        **kw,
    )


def asked(action: Any) -> AskPolicy:
    assert isinstance(action, AskPolicy), action
    return action


def one_call() -> Usage:
    return Usage(llm_calls=1, prompt_tokens=10, completion_tokens=2)


def test_a_passing_first_answer_finishes_passed():
    loop = loop_of(Regenerate())
    action = loop.start()
    assert action == RunAttempt(number=1, input=INPUT)
    assert loop.attempted(checked(action, True)) == Finish("passed")
    result = loop.result()
    assert result.status == "passed" and result.passing and result.answer == "Mars."
    assert result.attempts == loop.attempts and result.n_attempts == 1


async def test_a_failing_answer_asks_the_first_policy_and_runs_its_step():
    configs = Configs()
    loop = loop_of(Regenerate(), policy_config=configs)
    doubt = DetectionResult(
        detector="fake", score=0.1, label=Label.HALLUCINATED, explanation="Phobos orbits Mars"
    )
    ask = asked(loop.attempted(checked(loop.start(), False, answer="Venus.", results=[doubt])))
    assert ask.number == 2 and ask.policy.name == "regenerate"
    ctx = ask.context
    assert (ctx.question, ctx.input, ctx.uses) == (INPUT["question"], INPUT, 1)
    assert ctx.attempts is loop.attempts and ctx.last.answer == "Venus."
    assert ctx.config == {"tags": ["guard:attempt:2"]} and list(configs.collectors) == [2]
    assert ctx.feedback_route == "input" and ctx.released is None
    run = loop.stepped(await ask.policy.astep(ctx))
    assert isinstance(run, RunAttempt)
    assert (run.number, run.policy, run.check, run.runnable) == (2, "regenerate", True, None)
    assert "Venus." in run.input["feedback"] and "Phobos orbits Mars" in run.input["feedback"]
    assert loop.attempted(checked(run, True)) == Finish("passed")
    assert [a.policy for a in loop.result().attempts] == [None, "regenerate"]


def test_policies_go_in_order_each_up_to_its_max_uses_then_the_last_answer_is_kept():
    loop = loop_of(Regenerate(max_uses=2), Regenerate(feedback_key=None), max_attempts=9)
    action: Any = loop.start()
    seen = []
    while isinstance(action, RunAttempt):
        action = loop.attempted(checked(action, False, answer=f"answer {action.number}"))
        if isinstance(action, AskPolicy):
            seen.append((action.number, action.context.uses, action.policy.feedback_key))
            action = loop.stepped(Rerun(input=INPUT))
    assert seen == [(2, 1, "feedback"), (3, 2, "feedback"), (4, 1, None)]
    assert action == Finish("rejected")
    result = loop.result()
    assert result.status == "rejected" and not result.passing and result.last_answer == "answer 4"


def test_at_max_attempts_only_terminal_policies_are_asked():
    loop = loop_of(Regenerate(max_uses=5), Fallback(answer="I don't know."), max_attempts=2)
    assert asked(loop.attempted(checked(loop.start(), False))).policy.name == "regenerate"
    ask = asked(loop.attempted(checked(loop.stepped(Rerun(input=INPUT)), False)))
    assert ask.policy.name == "fallback" and ask.number == 3


def test_max_attempts_of_one_without_terminal_policies_rejects_at_once():
    loop = loop_of(max_attempts=1)
    assert loop.attempted(checked(loop.start(), False)) == Finish("rejected")
    assert loop.result().last_answer == "Mars."


async def test_a_fixed_fallback_is_released_and_recorded_in_the_guards_own_form():
    configs = Configs()
    loop = loop_of(Fallback(answer="I don't know."), policy_config=configs)
    ask = asked(loop.attempted(checked(loop.start(), False)))
    configs.spend(ask.number)
    release = loop.stepped(await ask.policy.astep(ask.context))
    assert release == ReleaseAnswer(answer="I don't know.", number=2, policy="fallback")
    assert loop.released({"text": "I don't know."}) == Finish("fallback")
    result = loop.result()
    assert result.status == "fallback" and not result.passing
    assert result.verdict is result.attempts[0].verdict  # the refusal the fallback rests on
    assert result.answer == "I don't know." and result.output == {"text": "I don't know."}
    assert result.attempts[-1].chain_usage.failed_calls == 1


async def test_an_unchecked_fallback_answer_is_released():
    fallback = Fallback(runnable=RunnableLambda(lambda x: "elsewhere"))
    loop = loop_of(fallback)
    ask = asked(loop.attempted(checked(loop.start(), False)))
    run = loop.stepped(await ask.policy.astep(ask.context))
    assert isinstance(run, RunAttempt) and not run.check and run.runnable is fallback.runnable
    unchecked = Attempt(number=run.number, policy=run.policy, answer="elsewhere")
    assert loop.attempted(unchecked) == Finish("fallback")
    assert loop.result().answer == "elsewhere" and loop.result().status == "fallback"


async def test_an_unchecked_fallback_without_an_answer_keeps_the_earlier_one():
    loop = loop_of(Fallback(runnable=RunnableLambda(lambda x: "elsewhere")))
    ask = asked(loop.attempted(checked(loop.start(), False, answer="Venus.")))
    run = loop.stepped(await ask.policy.astep(ask.context))
    assert isinstance(run, RunAttempt)
    failed = Attempt(number=run.number, policy=run.policy, error="ValueError: no")
    assert loop.attempted(failed, error=ValueError("no")) == Finish("rejected")
    result = loop.result()
    assert result.last_answer == "Venus." and result.attempts[-1].error == "ValueError: no"


async def test_the_raise_policy_ends_the_request_with_its_own_error():
    loop = loop_of(Raise())
    ask = asked(loop.attempted(checked(loop.start(), False)))
    with pytest.raises(GuardRejected) as raised:
        await ask.policy.astep(ask.context)
    with pytest.raises(GuardRejected) as again:
        loop.policy_failed(raised.value)
    assert again.value is raised.value and again.value.n_attempts == 1
    assert loop.status == "rejected"


def test_a_broken_policy_is_recorded_and_the_next_one_asked(caplog):
    configs = Configs()
    loop = loop_of(Regenerate(), Fallback(answer="unsure"), policy_config=configs)
    ask = asked(loop.attempted(checked(loop.start(), False)))
    configs.spend(ask.number)
    with caplog.at_level(logging.WARNING, logger="truthguard.guard"):
        ask = asked(loop.policy_failed(ValueError("boom")))
    assert ask.policy.name == "fallback" and ask.number == 3
    broken = loop.attempts[1]
    assert (broken.number, broken.policy, broken.answer) == (2, "regenerate", None)
    assert broken.error == "policy failed: ValueError: boom"
    assert (broken.chain_usage.llm_calls, broken.chain_usage.failed_calls) == (1, 1)
    assert "policy regenerate failed: boom" in caplog.text
    assert loop.attempts[0].answer == "Mars."  # the answer so far is kept


def test_a_broken_last_policy_rejects_with_the_answer_kept():
    loop = loop_of(Regenerate())
    asked(loop.attempted(checked(loop.start(), False)))
    assert loop.policy_failed(ValueError("boom")) == Finish("rejected")
    result = loop.result()
    assert result.last_answer == "Mars." and result.n_attempts == 2


def test_a_policys_own_calls_count_into_the_attempt_it_produces():
    configs = Configs()
    loop = loop_of(Regenerate(), policy_config=configs)
    ask = asked(loop.attempted(checked(loop.start(), False, chain_usage=one_call())))
    configs.spend(ask.number)
    run = loop.stepped(Rerun(input=INPUT))
    loop.attempted(checked(run, True, chain_usage=one_call()))
    first, second = loop.attempts
    assert first.chain_usage.llm_calls == 1
    assert (second.chain_usage.llm_calls, second.chain_usage.failed_calls) == (2, 1)
    assert loop.result().usage.llm_calls == 3


def test_total_usage_adds_chain_and_checks_and_wall_time_is_the_attempts_sum():
    loop = loop_of(Regenerate())
    check = Usage(llm_calls=2, prompt_tokens=5)
    first = checked(loop.start(), False, chain_usage=one_call(), check_usage=check, seconds=1.5)
    asked(loop.attempted(first))
    loop.attempted(checked(loop.stepped(Rerun(input=INPUT)), True, seconds=0.5))
    usage = loop.usage()
    assert (usage.llm_calls, usage.prompt_tokens, usage.wall_seconds) == (3, 15, 2.0)
    assert loop.result().usage == usage


def test_no_answer_at_all_gives_back_the_chains_own_error():
    loop = loop_of()
    action = loop.start()
    error = ConnectionError("refused")
    failed = Attempt(number=action.number, error="ConnectionError: refused")
    assert loop.attempted(failed, error=error) == Finish("rejected")
    assert loop.chain_error() is error
    with pytest.raises(ConnectionError) as raised:
        loop.result()
    assert raised.value is error


def test_an_error_after_an_answer_keeps_that_answer():
    loop = loop_of(Regenerate())
    asked(loop.attempted(checked(loop.start(), False, answer="Venus.")))
    run = loop.stepped(Rerun(input=INPUT))
    loop.attempted(Attempt(number=run.number, error="TimeoutError: "), error=TimeoutError())
    assert loop.chain_error() is None and loop.result().last_answer == "Venus."


def test_the_streaming_rule_can_override_passed_and_answered():
    loop = loop_of(Regenerate())
    loop.start()
    # Every streamed sentence passed: the attempt passed though it carries no verdict.
    assert loop.attempted(Attempt(number=1, answer="Mars."), passed=True) == Finish("passed")

    loop = loop_of(Regenerate())
    action = loop.start()
    ask = asked(loop.attempted(checked(action, True), passed=False, released="Phobos is."))
    assert ask.context.released == "Phobos is."
    run = loop.stepped(Rerun(input=INPUT, check=False))
    # An unchecked stream that broke off after some text is no answer to release.
    assert loop.attempted(checked(run, False), answered=False) == Finish("rejected")


def test_the_feedback_route_is_asked_of_the_chain_when_one_is_given():
    chain = RunnableLambda(lambda x: x)
    loop = loop_of(Regenerate(), chain=chain, n_models=1)
    assert asked(loop.attempted(checked(loop.start(), False))).context.feedback_route == "model"
    loop = loop_of(Regenerate(), chain=chain, n_models=0)
    assert asked(loop.attempted(checked(loop.start(), False))).context.feedback_route == "input"


def test_a_context_subclass_shapes_what_the_policy_sees():
    @dataclass
    class Calm(PolicyContext):
        tone: str = "plain"

        def feedback(self) -> str:
            return f"{self.tone}: try again"

    loop = loop_of(Regenerate(), context=lambda **kw: Calm(tone="calm", **kw))
    ctx = asked(loop.attempted(checked(loop.start(), False))).context
    assert isinstance(ctx, Calm) and ctx.feedback() == "calm: try again"


def test_the_context_never_feeds_back_an_outage():
    outage = DetectionResult.invalid("fake", "backend down", details={"error": "LLMCallError"})
    loop = loop_of(Regenerate())
    ctx = asked(loop.attempted(checked(loop.start(), False, results=[outage]))).context
    assert "backend down" not in ctx.feedback()


def test_results_reported_out_of_turn_are_refused():
    loop = loop_of(Regenerate())
    with pytest.raises(RuntimeError, match="not started"):
        loop.attempted(Attempt(number=1))
    action = loop.start()
    with pytest.raises(RuntimeError, match="already started"):
        loop.start()
    with pytest.raises(RuntimeError, match="RunAttempt, not of AskPolicy"):
        loop.stepped(Release(answer="x"))
    loop.attempted(checked(action, True))
    with pytest.raises(RuntimeError, match="finished"):
        loop.released("x")


def test_result_before_the_end_is_refused():
    loop = loop_of()
    loop.start()
    with pytest.raises(RuntimeError, match="not finished"):
        loop.result()


def test_after_a_check_refused_over_capacity_only_fallback_and_raise_are_asked():
    from typing import ClassVar

    from truthguard.guard import Filter, GuardPolicy, ReRetrieve

    class Mine(GuardPolicy):
        name: ClassVar[str] = "mine"

        async def astep(self, ctx: PolicyContext) -> Rerun:
            return Rerun(input=ctx.input)

    loop = loop_of(ReRetrieve(k=[4]), Regenerate(), Mine(), Filter(), Raise(), max_attempts=5)
    action = loop.start()
    refused = GuardVerdict(passing=False, combine="all", over_capacity=True, reason="rejected")
    step = asked(loop.attempted(checked(action, False, verdict=refused)))
    assert loop.over_capacity and isinstance(step.policy, Raise)

    # a real verdict still goes through every policy in order
    loop = loop_of(ReRetrieve(k=[4]), Regenerate(), Raise())
    assert isinstance(asked(loop.attempted(checked(loop.start(), False))).policy, ReRetrieve)

    # without a terminal policy the request ends rejected, the refused answer kept
    loop = loop_of(Regenerate(), Mine())
    assert loop.attempted(checked(loop.start(), False, verdict=refused)) == Finish("rejected")
    result = loop.result()
    assert result.answer is None and result.last_answer == "Mars." and result.over_capacity


async def test_a_fallback_after_over_capacity_keeps_the_refusal_as_the_reason():
    loop = loop_of(Regenerate(), Fallback(answer="unsure"))
    refused = GuardVerdict(
        passing=False, combine="all", over_capacity=True, reason="rejected: over capacity: x"
    )
    step = asked(loop.attempted(checked(loop.start(), False, verdict=refused)))
    assert isinstance(step.policy, Fallback)
    release = loop.stepped(await step.policy.astep(step.context))
    assert loop.released(release.answer) == Finish("fallback")  # type: ignore[union-attr]
    result = loop.result()
    assert result.verdict is refused and result.answer == "unsure"
    assert result.over_capacity and result.reason == "rejected: over capacity: x"
