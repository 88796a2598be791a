"""``truthguard bench guard``: the guard's and the callback handler's added wall time.

A scripted chat model with a fixed latency stands in for the LLM, so the numbers isolate what
truthguard adds. Every figure is a wall-time ratio against the same chain, unguarded and
unobserved, measured in the same run (variants interleaved, median over repeats).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["HELP", "add_arguments", "format_table", "run"]

HELP = "added latency of HallucinationGuard and TruthGuardCallbackHandler (scripted model)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--latency", type=float, default=0.05, help="seconds per model call (default 0.05)"
    )
    parser.add_argument("--n", type=int, default=20, help="chain calls per variant and repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (median is reported)")
    parser.add_argument(
        "--detector-latency",
        type=float,
        default=0.0,
        help="seconds each guard check takes (default 0: measure truthguard's own overhead)",
    )


def _timed(fn: Callable[[int], Any], n: int) -> float:
    started = time.perf_counter()
    for i in range(n):
        fn(i)
    return time.perf_counter() - started


def run(args: argparse.Namespace) -> dict[str, Any]:
    from langchain_core.prompts import ChatPromptTemplate

    from truthguard._progress import progress
    from truthguard.callbacks import TruthGuardCallbackHandler
    from truthguard.guard import HallucinationGuard, Regenerate
    from truthguard.testing import FakeDetector, ScriptedChatModel

    model = ScriptedChatModel(script=lambda p: "a fixed answer", latency=args.latency)
    prompt = ChatPromptTemplate.from_template("{question}\n{feedback}").partial(feedback="")
    chain = prompt | model
    passing = FakeDetector(score=1.0, threshold=0.5, latency=args.detector_latency)
    guard_pass = HallucinationGuard(chain=chain, detectors=passing)
    regen_chain = prompt | ScriptedChatModel(
        script=lambda p: "revised answer" if "fact-checker" in p else "first answer",
        latency=args.latency,
    )
    # Fails every first answer, passes the regenerated one.
    first_fails = FakeDetector(
        score=lambda inp: 0.0 if inp.answer == "first answer" else 1.0,
        threshold=0.5,
        latency=args.detector_latency,
    )
    guard_regen = HallucinationGuard(
        chain=regen_chain, detectors=first_fails, policies=[Regenerate()]
    )
    handler = TruthGuardCallbackHandler(FakeDetector(score=1.0, threshold=0.5), sinks=[])

    def q(i: int) -> dict[str, str]:
        return {"question": f"benchmark question {i}?"}

    variants: dict[str, Callable[[int], Any]] = {
        "plain": lambda i: chain.invoke(q(i)),
        "guard_pass": lambda i: guard_pass.invoke(q(i)),
        "guard_regenerate": lambda i: guard_regen.invoke(q(i)),
        "callback": lambda i: chain.invoke(q(i), {"callbacks": [handler]}),
    }
    for fn in variants.values():  # warm-up: imports, the sync portal loop, pydantic schemas
        fn(0)
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in progress(range(args.repeats), desc="bench guard", enabled=not args.no_progress):
        for name, fn in variants.items():
            times[name].append(_timed(fn, args.n))
    handler.close(timeout=60)
    summary = handler.summary()
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["plain"]
    return {
        "guard_pass_ratio": med["guard_pass"] / base,
        "guard_regenerate_ratio": med["guard_regenerate"] / base,
        "callback_overhead_ratio": med["callback"] / base,
        "callback_overhead_pct": 100.0 * (med["callback"] / base - 1.0),
        "model_latency": args.latency,
        "detector_latency": args.detector_latency,
        "n": args.n,
        "repeats": args.repeats,
        "seconds_per_call": {k: v / args.n for k, v in med.items()},
        "callback_records": summary["count"],
        "callback_failed": summary["failed"],
    }


def format_table(result: dict[str, Any]) -> str:
    per = result["seconds_per_call"]
    rows = [
        ("unguarded chain", per["plain"], 1.0),
        ("guard, answer passes", per["guard_pass"], result["guard_pass_ratio"]),
        ("guard, one regeneration", per["guard_regenerate"], result["guard_regenerate_ratio"]),
        ("chain + callback handler", per["callback"], result["callback_overhead_ratio"]),
    ]
    lines = [
        f"Scripted model latency {result['model_latency'] * 1000:.0f} ms, detector latency "
        f"{result['detector_latency'] * 1000:.0f} ms; {result['n']} calls x "
        f"{result['repeats']} repeats (median)",
        "",
        f"{'variant':<28}{'ms / call':>12}{'ratio':>10}",
    ]
    lines += [f"{name:<28}{s * 1000:>12.1f}{r:>10.3f}" for name, s, r in rows]
    lines += [
        "",
        f"callback handler overhead: {result['callback_overhead_pct']:+.2f}% (target < 5%); "
        f"{result['callback_records']} records written, {result['callback_failed']} failed",
    ]
    return "\n".join(lines)
