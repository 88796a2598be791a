"""``truthguard bench llamaindex``: what GuardedQueryEngine and the event handler add per query.

A LlamaIndex ``VectorStoreIndex`` over the shipped corpus (keyword embedding) answers through a
scripted LLM with a fixed latency, so the numbers isolate what truthguard adds. Each variant is
timed against the same query engine, unguarded and unobserved, in the same run (variants
interleaved, median over repeats); the ``aquery`` variants against the engine's own ``aquery``.
Needs the ``llama-index-truthguard`` integration.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["HELP", "add_arguments", "format_table", "run"]

HELP = "added latency per query of GuardedQueryEngine and TruthGuardEventHandler (LlamaIndex)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--latency", type=float, default=0.05, help="seconds per LLM call (default 0.05)"
    )
    parser.add_argument("--n", type=int, default=20, help="queries per variant and repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (median is reported)")
    parser.add_argument(
        "--detector-latency",
        type=float,
        default=0.0,
        help="seconds each guard check takes (default 0: measure truthguard's own overhead)",
    )


Timing = tuple[float, float]


def _timed(fn: Callable[[int], Any], n: int) -> Timing:
    """Wall seconds, and CPU seconds of the calling thread (background threads excluded)."""
    started, cpu = time.perf_counter(), time.thread_time()
    for i in range(n):
        fn(i)
    return time.perf_counter() - started, time.thread_time() - cpu


def _timed_async(fn: Callable[[int], Any], n: int) -> Timing:
    async def sequential() -> Timing:
        started, cpu = time.perf_counter(), time.thread_time()
        for i in range(n):
            await fn(i)
        return time.perf_counter() - started, time.thread_time() - cpu

    return asyncio.run(sequential())  # one loop per batch: its set-up is not in the figure


def run(args: argparse.Namespace) -> dict[str, Any]:
    try:
        from truthguard_llamaindex import GuardedQueryEngine, TruthGuardEventHandler
        from truthguard_llamaindex.testing import ChatModelLLM, KeywordEmbedding, corpus_nodes
    except ImportError as e:
        from truthguard.errors import ConfigurationError

        hint = "pip install -e integrations/llama-index-truthguard"
        raise ConfigurationError(f"bench llamaindex needs the integration: {hint}") from e
    from llama_index.core import VectorStoreIndex

    from truthguard._progress import progress
    from truthguard.guard import Regenerate
    from truthguard.testing import FakeDetector, ScriptedChatModel

    index = VectorStoreIndex(corpus_nodes(), embed_model=KeywordEmbedding())

    def engine(script: Callable[[str], str]) -> Any:
        llm = ChatModelLLM(model=ScriptedChatModel(script=script, latency=args.latency))
        return index.as_query_engine(llm=llm, similarity_top_k=2)

    plain = engine(lambda p: "a fixed answer")
    passing = FakeDetector(score=1.0, threshold=0.5, latency=args.detector_latency)
    guard_pass = GuardedQueryEngine(query_engine=plain, detectors=passing)
    # Fails every first answer, passes the regenerated one.
    first_fails = FakeDetector(
        score=lambda inp: 0.0 if inp.answer == "first answer" else 1.0,
        threshold=0.5,
        latency=args.detector_latency,
    )
    regen_calls = [0]  # the model calls of the regenerating engine, for calls per query

    def regen_script(prompt: str) -> str:
        regen_calls[0] += 1
        return "revised answer" if "fact-checker" in prompt else "first answer"

    guard_regen = GuardedQueryEngine(
        query_engine=engine(regen_script),
        detectors=first_fails,
        policies=[Regenerate()],
    )
    handler = TruthGuardEventHandler(FakeDetector(score=1.0, threshold=0.5), sinks=[])

    def q(i: int) -> str:
        return f"What is benchmark question {i} about Mars?"

    def observed(i: int) -> Any:
        handler.register()  # only while this variant runs: the root dispatcher is global
        try:
            return plain.query(q(i))
        finally:
            handler.unregister()

    variants: dict[str, Callable[[int], Timing]] = {
        "plain": lambda n: _timed(lambda i: plain.query(q(i)), n),
        "guard_pass": lambda n: _timed(lambda i: guard_pass.query(q(i)), n),
        "guard_regenerate": lambda n: _timed(lambda i: guard_regen.query(q(i)), n),
        "instrumented": lambda n: _timed(observed, n),
        "plain_async": lambda n: _timed_async(lambda i: plain.aquery(q(i)), n),
        "guard_pass_async": lambda n: _timed_async(lambda i: guard_pass.aquery(q(i)), n),
    }
    for run_n in variants.values():  # warm-up: imports, the sync portal loop, tokenizers
        run_n(1)
    times: dict[str, list[Timing]] = {k: [] for k in variants}
    for _ in progress(range(args.repeats), desc="bench llamaindex", enabled=not args.no_progress):
        for name, run_n in variants.items():
            times[name].append(run_n(args.n))
    handler.close(timeout=60)
    summary = handler.summary()
    per = {k: statistics.median(w for w, _ in v) / args.n for k, v in times.items()}
    cpu = {k: statistics.median(c for _, c in v) / args.n for k, v in times.items()}
    base = per["plain"]
    return {
        "guard_pass_ratio": per["guard_pass"] / base,
        "guard_regenerate_ratio": per["guard_regenerate"] / base,
        # warm-up (one query) and the timed runs: the first answer and the regenerated one
        "guard_regenerate_model_calls": regen_calls[0] / (1 + args.repeats * args.n),
        "instrumented_ratio": per["instrumented"] / base,
        "guard_pass_async_ratio": per["guard_pass_async"] / per["plain_async"],
        "guard_overhead_ms": 1000.0 * (per["guard_pass"] - base),
        "guard_async_overhead_ms": 1000.0 * (per["guard_pass_async"] - per["plain_async"]),
        "instrumented_overhead_ms": 1000.0 * (per["instrumented"] - base),
        # The handler's cost on the query's own thread; scoring runs on its own thread.
        "instrumented_caller_cpu_ms": 1000.0 * (cpu["instrumented"] - cpu["plain"]),
        "model_latency": args.latency,
        "detector_latency": args.detector_latency,
        "n": args.n,
        "repeats": args.repeats,
        "seconds_per_query": per,
        "caller_cpu_seconds_per_query": cpu,
        "handler_records": summary["count"],
        "handler_failed": summary["failed"],
    }


def format_table(result: dict[str, Any]) -> str:
    per, cpu = result["seconds_per_query"], result["caller_cpu_seconds_per_query"]
    rows = [
        ("query engine", "plain", 1.0),
        ("guarded, answer passes", "guard_pass", result["guard_pass_ratio"]),
        ("guarded, one regeneration", "guard_regenerate", result["guard_regenerate_ratio"]),
        ("engine + event handler", "instrumented", result["instrumented_ratio"]),
        ("query engine, aquery", "plain_async", 1.0),
        ("guarded, aquery, passes", "guard_pass_async", result["guard_pass_async_ratio"]),
    ]
    lines = [
        f"Scripted LLM latency {result['model_latency'] * 1000:.0f} ms, detector latency "
        f"{result['detector_latency'] * 1000:.0f} ms; {result['n']} queries x "
        f"{result['repeats']} repeats (median)",
        "",
        f"{'variant':<28}{'ms / query':>12}{'ratio':>10}{'caller CPU ms':>15}",
    ]
    lines += [
        f"{name:<28}{per[k] * 1000:>12.1f}{r:>10.3f}{cpu[k] * 1000:>15.2f}" for name, k, r in rows
    ]
    lines += [
        "",
        f"guarded engine overhead (answer passes): {result['guard_overhead_ms']:+.2f} ms / query "
        f"(query), {result['guard_async_overhead_ms']:+.2f} ms / query (aquery)",
        f"event handler overhead: {result['instrumented_overhead_ms']:+.2f} ms / query wall, "
        f"{result['instrumented_caller_cpu_ms']:+.2f} ms CPU on the query's thread; "
        f"{result['handler_records']} records written, {result['handler_failed']} failed",
    ]
    return "\n".join(lines)
