"""Admission of checks (guard/admission.py): a bound, arrival order, and refusals that say why.

The gate's own rules are driven by hand (the estimate of a check's duration is set by what
``leave`` reports); the guard's use of it runs through ``HallucinationGuard`` over
``ChatOpenAI`` and ``OpenAIServer``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate

from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.guard import HallucinationGuard
from truthguard.guard.admission import CheckGate
from truthguard.result import DetectionResult

# -- the gate, driven by hand ------------------------------------------------------------------


async def test_the_gate_admits_up_to_its_limit_then_in_arrival_order():
    gate = CheckGate(limit=2)
    assert await gate.enter(None) is None
    assert await gate.enter(None) is None
    admitted: list[int] = []

    async def queued(i: int) -> None:
        assert await gate.enter(None) is None
        admitted.append(i)

    tasks = [asyncio.ensure_future(queued(i)) for i in range(3)]
    await asyncio.sleep(0)
    assert gate.active == 2 and gate.queued == 3 and admitted == []
    for _ in range(3):
        gate.leave(0.1)
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    assert admitted == [0, 1, 2] and gate.active == 2 and gate.queued == 0


async def test_a_check_that_could_not_finish_in_time_is_refused_on_arrival():
    gate = CheckGate(limit=1)
    assert await gate.enter(None) is None
    gate.leave(1.0)  # checks take about a second
    assert await gate.enter(None) is None  # the slot is taken
    refusal = await gate.enter(deadline=time.monotonic() + 1.5)  # 1 s wait + 1 s check > 1.5 s
    assert refusal is not None and refusal.reason.startswith("over capacity")
    assert "queued ahead" in refusal.reason and refusal.queued == 0
    assert gate.queued == 0  # refused before it queued: nothing to clean up


async def test_a_slot_that_frees_too_late_is_refused_and_passed_on():
    gate = CheckGate(limit=1)
    assert await gate.enter(None) is None
    gate.leave(0.05)
    assert await gate.enter(None) is None
    late = asyncio.ensure_future(gate.enter(deadline=time.monotonic() + 0.2))
    patient = asyncio.ensure_future(gate.enter(deadline=None))
    await asyncio.sleep(0.15)  # 0.05 s left of the first one's deadline when the slot frees
    gate.leave(0.1)
    refusal = await late
    assert refusal is not None and refusal.reason.startswith("over capacity: a check slot came")
    assert await patient is None  # the slot went on to the next in line
    assert gate.active == 1 and gate.queued == 0


async def test_a_check_still_queued_at_its_deadline_is_refused_as_over_capacity():
    gate = CheckGate(limit=1)
    assert await gate.enter(None) is None  # no estimate yet: nothing refused on arrival
    refusal = await gate.enter(deadline=time.monotonic() + 0.05)
    assert refusal is not None and "no check slot came free within the deadline" in refusal.reason
    assert gate.queued == 0 and gate.active == 1


async def test_a_cancelled_waiter_leaves_the_queue():
    gate = CheckGate(limit=1)
    assert await gate.enter(None) is None
    waiting = asyncio.ensure_future(gate.enter(None))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert gate.queued == 0
    gate.leave(None)
    assert gate.active == 0


# -- through the guard over HTTP ---------------------------------------------------------------


class YesChecker(BaseDetector):
    """Asks a model "Check: <answer>"; "yes" passes."""

    detector_name = "yes"
    model: Any = None

    async def _acheck(self, inp: DetectorInput, session: Any) -> DetectionResult:
        text = (await session.acall(self.model, f"Check: {inp.answer}", stage="yes")).strip()
        ok = text.lower() == "yes"
        return DetectionResult(
            detector="yes", score=float(ok), label="factual" if ok else "hallucinated"
        )


def _reply(messages: list[dict[str, Any]]) -> str:
    text = str(messages[-1]["content"])
    return "yes" if text.startswith("Check:") else f"Answer to {text[3:]}"


def _guard(server: Any, then: Any = None, **kw: Any) -> HallucinationGuard:
    prompt = ChatPromptTemplate.from_messages([("human", "Q: {question}")])
    chain = prompt | server.chat_model(max_retries=0, timeout=5) | StrOutputParser()
    if then is not None:
        chain = chain | then
    checker = YesChecker(model=server.chat_model(max_retries=0, timeout=5))
    return HallucinationGuard(chain=chain, detectors=checker, **kw)


def _checks(server: Any) -> list[Any]:
    return [r for r in server.requests if str(r.messages[-1]["content"]).startswith("Check:")]


async def test_the_guard_admits_checks_in_the_order_its_chains_end():
    from langchain_core.runnables import RunnableLambda

    from truthguard.testing import OpenAIServer

    ended: list[str] = []

    def note(answer: str) -> str:
        ended.append(answer)
        return answer

    async with OpenAIServer(reply=_reply, latency=0.05) as server:
        guard = _guard(server, RunnableLambda(note), max_concurrent_checks=1, check_timeout=None)
        results = await asyncio.gather(*(guard.ainvoke({"question": f"q{i}?"}) for i in range(6)))
    assert all(r.status == "passed" for r in results)
    checks = sorted(_checks(server), key=lambda r: r.received_at)
    assert [r.messages[-1]["content"] for r in checks] == [f"Check: {a}" for a in ended]


async def test_the_guard_never_checks_more_than_its_bound_at_once():
    from truthguard.testing import OpenAIServer

    latency = 0.1
    async with OpenAIServer(reply=_reply, latency=latency) as server:
        guard = _guard(server, max_concurrent_checks=2, check_timeout=None)
        results = await asyncio.gather(*(guard.ainvoke({"question": f"q{i}?"}) for i in range(6)))
    assert all(r.status == "passed" for r in results)
    checks = _checks(server)
    assert len(checks) == 6
    # a check holds its slot for at least its reply's latency: no more than 2 replies overlap
    for r in checks:
        overlapping = [o for o in checks if o.received_at <= r.received_at < o.received_at
                       + latency]  # fmt: skip
        assert len(overlapping) <= 2


async def test_checks_over_capacity_are_refused_without_work_and_say_why():
    from truthguard.testing import OpenAIServer

    # each check's reply; one slot; 1.8 s deadline: at most 3 checks fit (the reply's latency
    # dwarfs what a loaded machine adds to a check, so an admitted check never times out)
    latency = 0.5
    async with OpenAIServer(reply=_reply, latency=latency) as server:
        guard = _guard(server, max_concurrent_checks=1, check_timeout=1.8)
        results = await asyncio.gather(*(guard.ainvoke({"question": f"q{i}?"}) for i in range(6)))
        server.wait_idle()
    passed = [r for r in results if r.status == "passed"]
    refused = [r for r in results if r.status == "rejected"]
    assert passed and refused and len(passed) + len(refused) == 6
    for r in refused:
        (result,) = r.attempts[0].results
        assert result.invalid_reason.startswith("over capacity")
        assert result.details["error"] == "over_capacity"
        assert "over capacity" in r.verdict.errors["yes"]
        assert r.last_answer is not None  # the user's answer is kept
    # no work was spent on a refused check: one check request per admitted one
    assert len(_checks(server)) == len(passed)


async def test_over_capacity_passes_when_the_guard_fails_open():
    from truthguard.testing import OpenAIServer

    # the one slot is held for the whole test, so every run is refused at its deadline whatever
    # the machine's speed (a check that was admitted and then ran slow would time out instead)
    async with OpenAIServer(reply=_reply, latency=0.01) as server:
        guard = _guard(server, max_concurrent_checks=1, check_timeout=0.3, on_error="open")
        results = await _refused(guard, 3)
        server.wait_idle()
    assert len(results) == 3
    assert all(r.status == "passed" and r.verdict.failed_open for r in results)
    assert all(r.verdict.over_capacity and r.over_capacity for r in results)
    assert all("over capacity" in r.verdict.errors["yes"] for r in results)
    assert all(r.last_answer is not None for r in results)  # the user's answer is released
    assert _checks(server) == []  # no check work was spent on a refused run


# -- a refusal goes to the terminal outcome: nothing is redone under load ---------------------


def _config_reader(x: Any, config: Any) -> Any:
    return x  # a step that takes the run config, so ReRetrieve may re-retrieve through it


def _chains(server: Any) -> list[Any]:
    return [r for r in server.requests if str(r.messages[-1]["content"]).startswith("Q:")]


async def _refused(guard: HallucinationGuard, n: int, **kw: Any) -> list[Any]:
    """``n`` runs while the guard's one check slot is held by a check that never ends."""
    assert guard._gate is not None and await guard._gate.enter(None) is None
    try:
        return await asyncio.gather(
            *(guard.ainvoke({"question": f"q{i}?"}, **kw) for i in range(n)),
            return_exceptions=True,
        )
    finally:
        guard._gate.leave(None)


async def test_a_refused_check_skips_the_policies_that_redo_work_and_falls_back(tmp_path):
    import json

    from langchain_core.runnables import RunnableLambda

    from truthguard.callbacks import AsyncTruthGuardCallbackHandler, JSONLSink
    from truthguard.guard import Fallback, Filter, Regenerate, ReRetrieve
    from truthguard.testing import FakeDetector, OpenAIServer

    path = tmp_path / "records.jsonl"
    handler = AsyncTruthGuardCallbackHandler(FakeDetector(score=1.0), sinks=[JSONLSink(path)])
    async with OpenAIServer(reply=_reply) as server:
        guard = _guard(
            server,
            RunnableLambda(_config_reader),
            policies=[ReRetrieve(k=[4]), Regenerate(), Filter(), Fallback(answer="Not now.")],
            max_concurrent_checks=1,
            check_timeout=0.2,
        )
        results = await _refused(guard, 3, config={"callbacks": [handler]})
        server.wait_idle()
    handler.close(timeout=10)
    for r in results:
        assert r.status == "fallback" and r.answer == "Not now." and not r.passing
        assert [a.policy for a in r.attempts] == [None, "fallback"]  # nothing re-run
        assert r.over_capacity and r.reason.startswith("rejected: over capacity")
        assert r.attempts[0].answer is not None  # the refused answer is kept
    # one chain request per run, and no check request at all
    assert len(_chains(server)) == 3 and _checks(server) == []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 3
    for rec in records:
        assert rec["status"] == "failed" and rec["failure"] == "over_capacity"
        assert rec["error"].startswith("over capacity") and rec["passing"] is None
        assert rec["answer"].startswith("Answer to")  # the refused answer, not the fallback
        assert rec["metadata"]["guard_status"] == "fallback"
        assert rec["metadata"]["guard_released"] == "Not now."
    summary = handler.summary()
    assert summary["failures"] == {"over_capacity": 3} and summary["pass_rate"] is None


async def test_a_refused_check_without_a_fallback_is_rejected_saying_over_capacity():
    from truthguard.guard import Regenerate
    from truthguard.testing import OpenAIServer

    async with OpenAIServer(reply=_reply) as server:
        guard = _guard(server, policies=[Regenerate()], max_concurrent_checks=1, check_timeout=0.2)
        (result,) = await _refused(guard, 1)
    assert result.status == "rejected" and result.n_attempts == 1
    assert result.verdict.over_capacity and result.reason.startswith("rejected: over capacity")
    assert "no detector ran" in result.reason and len(_chains(server)) == 1


async def test_a_refused_check_raises_with_the_raise_policy():
    from truthguard.errors import GuardRejected
    from truthguard.guard import Raise, Regenerate
    from truthguard.testing import OpenAIServer

    async with OpenAIServer(reply=_reply) as server:
        guard = _guard(
            server, policies=[Regenerate(), Raise()], max_concurrent_checks=1, check_timeout=0.2
        )
        (error,) = await _refused(guard, 1)
    assert isinstance(error, GuardRejected) and "over capacity" in str(error)
    assert len(error.attempts) == 1 and len(_chains(server)) == 1


def test_the_bound_is_checked_at_construction():
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=_reply) as server:
        with pytest.raises(InvalidInputError, match="max_concurrent_checks"):
            _guard(server, max_concurrent_checks=0)
        assert _guard(server, max_concurrent_checks=None)._gate is None


def test_check_loop_truthguard_is_deprecated():
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=_reply) as server:
        with pytest.warns(DeprecationWarning, match="check_loop"):
            guard = _guard(server, check_loop="truthguard")
        assert guard.invoke({"question": "q?"}).status == "passed"


async def test_one_slow_check_does_not_raise_the_estimate_that_refuses_the_queue():
    gate = CheckGate(limit=1)
    assert await gate.enter(None) is None
    for seconds in (0.1, 0.1, 0.1, 5.0):  # one check held its slot for 5 s (a retried request)
        gate.leave(seconds)
        assert await gate.enter(None) is None
    assert gate.check_seconds == pytest.approx(0.1)  # the median: a mean would say 1.3 s
    # so a check with half a second left is still admitted when the slot frees
    waiting = asyncio.ensure_future(gate.enter(deadline=time.monotonic() + 0.5))
    await asyncio.sleep(0)
    gate.leave(0.1)
    assert await waiting is None


# -- the estimate follows the load the loop has now --------------------------------------------


class _Clock:
    """A hand-driven ``time.monotonic``: the gate's durations and loads without timing."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _checks_under(gate: CheckGate, clock: _Clock, seconds: float, n: int) -> None:
    for _ in range(n):
        assert await gate.enter(None) is None
        clock.now += seconds
        gate.leave(seconds)


async def test_checks_slowed_by_chains_are_expected_faster_once_the_chains_end():
    clock = _Clock()
    gate = CheckGate(limit=1, clock=clock)
    await _checks_under(gate, clock, 0.1, 1)  # alone, a check takes 0.1 s
    for _ in range(40):  # a burst's chains run on the loop the checks share
        gate.chain_started()
    await _checks_under(gate, clock, 1.0, 3)
    assert gate.chains == 40 and gate.check_seconds == pytest.approx(1.0)  # as measured
    for _ in range(40):
        gate.chain_ended()
    # 40 chains are 10 checks' worth: each 1 s check shared the loop with 11, and shares it
    # with none now; its 0.9 s above the floor scales by 1 / 11
    assert gate.check_seconds == pytest.approx(0.1 + 0.9 / 11)
    assert await gate.enter(None) is None  # the slot is taken again: the next one queues
    assert gate.load == 1
    # 0.5 s left: one check to wait for and its own (each about 0.18 s) fit, so it queues
    # (by the 1 s the checks took under the chains, 2 s were needed: refused on arrival)
    waiting = asyncio.ensure_future(gate.enter(deadline=clock.now + 0.5))
    await asyncio.sleep(0)
    assert gate.queued == 1
    clock.now += 0.2
    gate.leave(0.2)
    assert await waiting is None  # 0.3 s left when the slot freed: admitted, not refused


async def test_checks_measured_under_less_load_are_not_expected_slower_under_more():
    clock = _Clock()
    gate = CheckGate(limit=1, clock=clock)
    await _checks_under(gate, clock, 0.1, 1)
    await _checks_under(gate, clock, 0.3, 3)
    for _ in range(400):
        gate.chain_started()
    assert gate.load == 100  # 400 chains are 100 checks' worth
    # the gate expects what the latest checks took, never more: it refuses on what it saw
    assert gate.check_seconds == pytest.approx(0.3)


async def test_checks_running_longer_than_checks_took_are_what_a_check_is_expected_to_take():
    clock = _Clock()
    gate = CheckGate(limit=2, clock=clock)
    await _checks_under(gate, clock, 0.1, 1)  # measured alone: 0.1 s
    assert await gate.enter(None) is None  # a burst's first checks
    clock.now += 0.5
    assert await gate.enter(None) is None
    clock.now += 0.5
    # still running: the older for 1 s, the newer for 0.5 s; the median of the two is what
    # they take at least, not the 0.1 s a check took alone
    assert gate.check_seconds == pytest.approx(0.75)
    # by 0.1 s, a check with 1 s left would fit (0.05 s to wait, 0.1 s to check); by what runs
    # now it would not (0.375 s to wait, 0.75 s to check): refused on arrival
    refusal = await gate.enter(deadline=clock.now + 1.0)
    assert refusal is not None and "about 0.38s to wait plus 0.75s to check" in refusal.reason
    gate.leave(0.5)  # the newer one ended: the older is still running, for 1 s now
    assert gate.check_seconds == pytest.approx(1.0)
    clock.now += 0.1
    gate.leave(1.1)
    # none in flight: the checks measured, brought to the present load; the median is the
    # newer one's, which shared the loop with the older all its 0.5 s: 0.1 + 0.4 / 2
    assert gate.active == 0 and gate.check_seconds == pytest.approx(0.3)


async def test_a_check_older_than_the_load_kept_is_averaged_over_what_is_kept():
    clock = _Clock()
    gate = CheckGate(limit=1, clock=clock)
    await _checks_under(gate, clock, 0.1, 1)
    assert await gate.enter(None) is None
    for _ in range(5_000):  # more load changes than the gate keeps: the oldest are dropped
        gate.chain_started()
        clock.now += 0.001
        gate.chain_ended()
    clock.now += 1.0
    gate.leave(6.0)  # it ran beside one chain at most: a load of 1.25 checks at most
    # so it counts as at least 1 / 1.25 of its 5.9 s above the floor (a load taken as 0 before
    # the changes kept would make its average huge, and it would count as the floor); the
    # estimate is the median of it and the first check's 0.1 s
    assert (0.1 + 0.1 + 5.9 / 1.25) / 2 <= gate.check_seconds <= (0.1 + 6.0) / 2


@pytest.mark.parametrize("streaming", [False, True])
async def test_the_guards_runs_count_as_load_in_their_chain_phase(streaming):
    from langchain_core.runnables import RunnableLambda

    from truthguard.guard import StreamingGuard
    from truthguard.testing import OpenAIServer

    release = asyncio.Event()
    seen: list[int] = []

    async def hold(answer: str) -> str:
        await release.wait()
        return answer

    async with OpenAIServer(reply=_reply) as server:
        guard = _guard(server, RunnableLambda(hold), max_concurrent_checks=1, check_timeout=None)
        if streaming:
            guard = StreamingGuard(
                chain=guard.chain, detector=guard.detectors[0], max_concurrent_checks=1
            )

        async def one(i: int) -> Any:
            if streaming:
                return [c async for c in guard.astream({"question": f"q{i}?"})]
            return await guard.ainvoke({"question": f"q{i}?"})

        runs = [asyncio.ensure_future(one(i)) for i in range(3)]
        while len(server.requests) < 3:  # every chain has its answer and waits in ``hold``
            await asyncio.sleep(0.01)
        seen.append(guard._gate.chains)
        release.set()
        await asyncio.gather(*runs)
    assert seen == [3] and guard._gate.chains == 0


# -- the loop's lag ----------------------------------------------------------------------------


async def test_the_loops_lag_is_how_late_its_heartbeat_fires(monkeypatch):
    from truthguard.guard import admission

    monkeypatch.setattr(admission, "_LAG_WINDOW", 0.2)
    monkeypatch.setattr(admission, "_IDLE_STOP", 0.5)
    admission.loop_lag()  # starts the heartbeat
    await asyncio.sleep(0.1)
    time.sleep(0.3)  # the loop is blocked: the next beat fires about 0.3 s late
    await asyncio.sleep(0.03)
    assert admission.loop_lag() >= 0.25
    assert admission.lag_margin() >= 0.5 and admission.lag_margin(1.0) == pytest.approx(0.2)
    await asyncio.sleep(0.3)  # the late beat is older than the window now
    assert admission.loop_lag() < 0.25
    beat = admission._heartbeats[asyncio.get_running_loop()]
    await asyncio.sleep(0.8)  # unread for longer than _IDLE_STOP: the heartbeat stops
    assert not beat.running
    admission.loop_lag()
    assert beat.running
