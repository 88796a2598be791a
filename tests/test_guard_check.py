"""What every guard shares (guard/check.py): the detector behind a wrapper, the deadline, the
threshold rule."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.runnables import ConfigurableField, RunnableLambda

from truthguard.errors import LLMCallError
from truthguard.guard.check import base_detector, run_detector, thresholds_for, verdict_for
from truthguard.result import NEVER_OPEN, DetectionResult, Label
from truthguard.testing import FakeDetector

PAYLOAD = {"question": "Where is Paris?", "answer": "In France.", "contexts": []}


def test_base_detector_sees_through_configurable_and_bound_wrappers():
    det = FakeDetector(score=0.7, threshold=0.5)
    configurable = det.configurable_fields(threshold=ConfigurableField(id="threshold"))
    assert base_detector(det) is det
    assert base_detector(configurable) is det
    assert base_detector(configurable.with_config(tags=["x"])) is det
    assert base_detector(RunnableLambda(lambda x: x)) is None


def _result(threshold: float | None) -> DetectionResult:
    return DetectionResult(detector="fake", score=0.7, label=Label.FACTUAL, threshold=threshold)


def test_thresholds_come_from_the_guard_then_the_result_then_the_detector():
    dets = [FakeDetector(threshold=0.5), FakeDetector(threshold=0.5), FakeDetector()]
    keys = ["a", "b", "c"]
    results = [_result(0.9), _result(None), _result(None)]
    assert thresholds_for(keys, dets, results, {}) == {"a": 0.9, "b": 0.5}
    assert thresholds_for(keys, dets, results, {"a": 0.1, "c": 0.2}) == {
        "a": 0.1,
        "b": 0.5,
        "c": 0.2,
    }


@dataclass
class Options:
    thresholds: dict[str, float] = field(default_factory=dict)
    combine: str = "all"
    score_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    mean_threshold: float = 0.5
    on_error: str = "closed"


def test_verdict_for_decides_with_the_guards_options():
    det = FakeDetector(threshold=0.5)
    verdict = verdict_for(Options({"fake": 0.8}), ["fake"], [det], [_result(0.5)])
    assert not verdict.passing and verdict.passes == {"fake": False}  # 0.7 < the guard's 0.8
    assert verdict_for(Options(), ["fake"], [det], [_result(0.5)]).passing


class _Raises(FakeDetector):
    """Raises ``exc`` from ``ainvoke`` itself, past the base class's own handling."""

    exc: Any = None

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        raise self.exc


class _NotAResult(FakeDetector):
    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return "passed"


async def test_a_result_passes_through():
    result = await run_detector(FakeDetector(score=0.9), PAYLOAD, None, timeout=5)
    assert result.score == 0.9 and result.label is Label.FACTUAL


async def test_a_time_out_is_invalid_and_may_fail_open():
    result = await run_detector(FakeDetector(latency=5.0), PAYLOAD, None, timeout=0.05)
    assert result.label is Label.INVALID and "timed out after 0.05s" in result.invalid_reason
    assert NEVER_OPEN not in result.details


@pytest.mark.parametrize(
    ("exc", "never_open"),
    [
        (LLMCallError("fake", "upstream 500"), False),
        (ConnectionError("refused"), False),
        (ValueError("bad input"), True),
        (asyncio.CancelledError(), True),
    ],
)
async def test_a_raising_detector_is_invalid_and_only_outages_may_fail_open(exc, never_open):
    result = await run_detector(_Raises(exc=exc), PAYLOAD, None, timeout=5)
    assert result.label is Label.INVALID and result.detector == "fake"
    assert bool(result.details.get(NEVER_OPEN)) is never_open


async def test_something_other_than_a_result_never_passes():
    result = await run_detector(_NotAResult(), PAYLOAD, None, timeout=5)
    assert result.label is Label.INVALID and result.details[NEVER_OPEN]
    assert result.details["error"] == "bad_result"


async def test_a_checks_cut_off_comes_early_by_the_loops_lag_and_the_cancel_grace(monkeypatch):
    from truthguard.guard import admission
    from truthguard.guard.check import run_checks

    # twice the lag for the cut-off's timer, 50 ms for the cancelled detector to stop
    monkeypatch.setattr(admission, "loop_lag", lambda: 0.05)
    (result,) = await run_checks([FakeDetector(latency=5.0)], PAYLOAD, None, timeout=1.0)
    assert "timed out after 0.85s" in result.invalid_reason
    monkeypatch.setattr(admission, "loop_lag", lambda: 1.0)  # at most a fifth of the check
    (result,) = await run_checks([FakeDetector(latency=5.0)], PAYLOAD, None, timeout=1.0)
    assert "timed out after 0.8s" in result.invalid_reason


async def test_a_check_that_would_end_within_its_margin_of_its_deadline_is_refused(monkeypatch):
    from truthguard.guard import admission
    from truthguard.guard.admission import CheckGate
    from truthguard.guard.check import run_checks

    gate = CheckGate(limit=10)
    for _ in range(10):
        assert await gate.enter(deadline=None) is None
    gate.leave(0.75)  # checks take 0.75 s
    assert await gate.enter(deadline=None) is None  # full again
    # queued now it would wait 0.075 s, then check for 0.75 s: within a 1 s deadline
    assert gate.expected_wait(0) + gate.check_seconds <= 1.0
    monkeypatch.setattr(admission, "loop_lag", lambda: 0.1)  # but 0.2 s of it is its margin
    detector = FakeDetector(latency=0.0)
    (result,) = await run_checks([detector], PAYLOAD, None, timeout=1.0, gate=gate)
    assert result.invalid_reason.startswith("over capacity") and gate.queued == 0


async def test_a_peak_of_the_loops_lag_takes_no_more_from_admission_than_from_the_cut_off(
    monkeypatch,
):
    from truthguard.guard import admission
    from truthguard.guard.admission import CheckGate
    from truthguard.guard.check import run_checks

    gate = CheckGate(limit=1)
    assert await gate.enter(deadline=None) is None
    gate.leave(0.3)  # checks take 0.3 s
    assert await gate.enter(deadline=None) is None  # the slot is taken
    # the loop stalled for a second just now: twice that would leave a 1 s check nothing, but
    # its cut-off takes at most a fifth; 0.3 s to wait and 0.3 s to check fit in the rest
    monkeypatch.setattr(admission, "loop_lag", lambda: 1.0)
    check = asyncio.ensure_future(
        run_checks([FakeDetector(latency=0.0)], PAYLOAD, None, timeout=1.0, gate=gate)
    )
    await asyncio.sleep(0.01)
    assert gate.queued == 1  # queued, not refused
    gate.leave(0.3)
    (result,) = await check
    assert result.passing and gate.active == 0
