"""``truthguard bench guard``: keys, counts and the shape of the measurement (small, fast run).

Timings are reported, never asserted against each other: on a busy machine any of them can
stretch, so only what is counted (records, requests, sentences, faults) is checked exactly.
"""

from __future__ import annotations

import importlib
import json

import pytest

from truthguard.cli import main


def test_bench_guard_json(capsys):
    assert (
        main(
            [
                "bench",
                "guard",
                "--json",
                "--no-progress",
                "--latency",
                "0.02",
                "--n",
                "3",
                "--repeats",
                "1",
                "--stream-detector",
                "fake",
                "--stream-n",
                "1",
                "--first-token-latency",
                "0.01",
                "--token-latency",
                "0.005",
                "--agent-detector",
                "fake",
                "--agent-n",
                "2",
                "--burst",
                "1,3",
                "--burst-timeout",
                "2",
                "--load",
                "20",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    for key in ("guard_pass_ratio", "guard_regenerate_ratio", "callback_overhead_ratio"):
        assert out[key] > 0
    # one regeneration means two model calls of 20 ms: never faster than 40 ms per call
    assert out["seconds_per_call"]["guard_regenerate"] >= 0.04
    assert out["callback_records"] == 4 and out["callback_failed"] == 0  # warm-up + 3 calls
    st = out["streaming"]
    assert st["answer_passed"] and st["sentences_checked"] == 4
    assert st["first_checked_sentence_s"] > 0 and st["first_sentence_unguarded_s"] > 0
    assert st["total_guarded_s"] > 0 and st["overhead_ratio"] > 0
    ag = out["agents"]
    assert ag["answer_status"] == "passed"
    # two model calls of 20 ms per answer, guarded or not (the middleware's own few ms are
    # within the noise of so short a run, so the two are not compared)
    assert ag["agent_s"] > 0.04 and ag["agent_guarded_s"] > 0.04
    assert ag["detector_s"] >= 0
    burst = out["burst"]
    rows = {r["concurrency"]: r for r in burst["rows"]}
    assert set(rows) == {1, 3} and burst["max_concurrent_checks"] == 64
    assert burst["http_pool"] is None  # the user's ChatOpenAI with the client's own limits
    for r in rows.values():
        assert r["answers_per_s"] > 0 and r["errors"] == 0
        assert r["after_chain_p99_s"] >= r["after_chain_p50_s"] > 0
        assert r["overrun_p99_s"] >= r["overrun_p50_s"] >= 0
        # every run that did not pass says why, with a reason the bench knows
        assert r["passed"] + sum(r["not_passed"].values()) == r["concurrency"]
        assert r["unexplained"] == 0 and "other" not in r["not_passed"]
        assert set(r["reason_examples"]) == set(r["not_passed"])
    assert burst["handler_checks"] == 0  # the handler records the guard's verdict
    em = out["emission"]
    assert em["events"] == em["n"] and em["event_s"] > 0 and em["off_s"] > 0
    load = out["load"]
    rows = {(r["mode"], r["variant"]): r for r in load["rows"]}
    assert len(rows) == 6 and load["calls"] == 20 and load["faults_armed"] == 2
    for (mode, variant), r in rows.items():
        # one chain request per call, one more per check that calls the model; 5% of each kind
        # failed once and was retried (the chain by ChatOpenAI, the check by the session)
        calls_model = "calls ChatOpenAI" in variant
        assert r["requests_per_call"] == (2.1 if calls_model else 1.05), (mode, variant)
        assert r["faults_served"] == (2 if calls_model else 1) and r["errors"] == 0
        assert r["cpu_ms_per_call"] > 0 and r["cpu_ratio"] > 0
        assert r["passed"] == (0 if variant == "bare chain" else 20)


def test_bench_guard_table():
    from argparse import Namespace

    from truthguard.bench import guard

    result = guard.run(
        Namespace(
            latency=0.01,
            n=2,
            repeats=1,
            detector_latency=0.0,
            no_progress=True,
            token_latency=0.002,
            first_token_latency=0.01,
            stream_n=1,
            stream_detector="fake",
            agent_detector="fake",
            agent_n=1,
            burst="2",
            burst_latency=0.01,
            burst_timeout=2.0,
            burst_limit=32,
        )
    )
    table = guard.format_table(result)
    assert "Burst over HTTP" in table and "overrun p50" in table
    assert "guard, one regeneration" in table and "target < 5%" in table
    assert "first (checked) sentence" in table
    assert "middleware overhead, ms / answer" in table and "us per event" in table
    assert "Load:" not in table  # --load not given: skipped


def test_bench_guard_load_faults_must_be_a_share():
    import pytest

    from truthguard.bench import guard
    from truthguard.errors import InvalidInputError

    for share in (1.5, -0.1, float("nan")):
        with pytest.raises(InvalidInputError, match="load-faults"):
            guard._load_faults(100, share)
    assert len(guard._load_faults(100, 0.05)) == 10  # 5 chain and 5 checker requests
    with pytest.raises(SystemExit) as e:  # the flag: a usage error, no traceback
        main(["bench", "guard", "--load-faults", "2"])
    assert e.value.code == 2
    assert guard._load_faults(100, 0.0) == []


def test_every_burst_run_that_did_not_pass_is_given_its_reason():
    from truthguard.bench.guard import REASONS, _why_not_passed
    from truthguard.guard import Attempt, GuardResult
    from truthguard.guard.verdict import decide
    from truthguard.result import NEVER_OPEN, DetectionResult, Label, Usage

    def run(*results: DetectionResult, error: str | None = None) -> GuardResult:
        verdict = None
        if results:
            verdict = decide(["c"], list(results), combine="all", thresholds={}, ranges={},
                             mean_threshold=0.5, on_error="closed")  # fmt: skip
        attempt = Attempt(number=1, answer=None if error else "A.", results=list(results),
                          verdict=verdict, error=error)  # fmt: skip
        passing = bool(verdict and verdict.passing)
        return GuardResult(question="Q?", answer="A." if passing else None, attempts=[attempt],
                           status="passed" if passing else "rejected", passing=passing,
                           verdict=verdict, usage=Usage())  # fmt: skip

    invalid = DetectionResult.invalid
    cases = {
        "passed": run(DetectionResult(detector="c", score=1.0, label=Label.FACTUAL)),
        "over capacity": run(
            invalid(
                "c", "over capacity: no check slot came free", details={"error": "over_capacity"}
            )
        ),
        "timed out": run(invalid("c", "check timed out after 2s", details={"error": "timeout"})),
        "LLM error": run(
            invalid("c", "checker failed", details={"failure": "llm_call", "error": "500"})
        ),
        "invalid LLM output": run(invalid("c", "no label in reply", details={"stage": "check"})),
        "unsupported": run(DetectionResult(detector="c", score=0.0, label=Label.HALLUCINATED)),
        "detector raised": run(
            invalid("c", "detector raised ValueError", details={NEVER_OPEN: True})
        ),
        "chain error": run(error="RuntimeError: down"),
        "guard raised": RuntimeError("boom"),
    }
    for expected, out in cases.items():
        why, text = _why_not_passed(out)
        assert why == expected, (expected, why, text)
        assert why == "passed" or (why in REASONS and text)


def test_a_count_of_zero_skips_its_section_and_a_negative_one_is_named(capsys):
    args = ["bench", "guard", "--no-progress", "--n", "0", "--stream-n", "0", "--agent-n", "0"]
    assert main([*args, "--burst", "", "--load", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["seconds_per_call"] is None and result["streaming"] is None
    assert result["agents"] is None and result["emission"]["events"] > 0
    assert main([*args, "--burst", "", "--load", "0"]) == 0
    assert "chain overhead: skipped (--n 0)" in capsys.readouterr().out
    assert main(["bench", "guard", "--no-progress", "--stream-n=-1"]) == 2
    assert "--stream-n: expected 0 or more, got -1" in capsys.readouterr().err


def test_the_burst_can_bound_the_http_pool_of_the_users_chat_model(capsys):
    from truthguard.bench import guard
    from truthguard.errors import InvalidInputError

    args = ["bench", "guard", "--no-progress", "--n", "0", "--stream-n", "0", "--agent-n", "0"]
    assert main([*args, "--load", "0", "--burst", "6", "--burst-pool", "2", "--json"]) == 0
    burst = json.loads(capsys.readouterr().out)["burst"]
    (row,) = burst["rows"]
    assert burst["http_pool"] == 2 and row["errors"] == 0 and row["unexplained"] == 0
    assert row["passed"] + sum(row["not_passed"].values()) == 6
    client = guard._bounded_client(2)["http_async_client"]
    assert client._transport._pool._max_connections == 2  # the client ChatOpenAI is given
    # the Limits of the package openai's client is built on (httpx2 for openai 3, else httpx)
    limits = guard._http_limits()
    assert isinstance(client, importlib.import_module(limits.__module__.split(".")[0]).AsyncClient)
    assert guard._bounded_client(0) == {}
    with pytest.raises(InvalidInputError, match="--burst-pool"):
        guard._bounded_client(-1)
