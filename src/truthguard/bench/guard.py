"""``truthguard bench guard``: the guard's and the callback handler's added wall time.

A scripted chat model with a fixed latency stands in for the LLM, so the numbers isolate what
truthguard adds. Every figure is a wall-time ratio against the same chain, unguarded and
unobserved, measured in the same run (variants interleaved, median over repeats).

Streaming: a scripted model that streams word by word with a per-token delay (a hosted model's
pace) answers a grounded four-sentence answer; the :class:`StreamingGuard` checks every sentence
with the local RefChecker. Reported: the time to the first released (checked) sentence against
the time the first sentence is complete in the unguarded stream, and the total overhead.

Agents: a ``create_agent`` agent whose scripted model calls a search tool, then answers; with
and without :class:`~truthguard.agents.GroundingMiddleware`. Reported per answer: the agent's
time, the guarded agent's time, the detector's own time on the same answer (run alone), and the
middleware's overhead (guarded - unguarded - detector). Burst: 1, 30 and 300 concurrent guarded
runs of a ``ChatOpenAI`` chain over HTTP with the callback handler attached: answers/s, CPU ms
per answer (and, with checks on the caller's loop, the share of it in truthguard and in the
HTTP client stack), requests per answer, and how late each deadline was decided, with checks on
the caller's loop and on truthguard's. Load: client CPU per call over ``--load`` calls (1,000)
with ``--load-faults`` (5%) of the requests failing once, async and sync: the bare chain, a
guard whose check makes no model call, and one whose check makes one ``ChatOpenAI`` call (the
server runs in another process, so the CPU is the client's). Emission: the cost of one
``gen_ai.evaluation.result`` event on a recording span (OpenTelemetry SDK, in-memory export),
and of the call when emission is off.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import time
from collections.abc import Callable
from typing import Any

from truthguard.errors import InvalidInputError

__all__ = ["HELP", "add_arguments", "format_table", "run"]

HELP = "added latency of HallucinationGuard and TruthGuardCallbackHandler (scripted model)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--latency", type=float, default=0.05, help="seconds per model call (default 0.05)"
    )
    parser.add_argument("--n", type=int, default=20, help="chain calls per variant and repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (median is reported)")
    parser.add_argument(
        "--token-latency",
        type=float,
        default=0.02,
        help="streaming: seconds per streamed token (default 0.02, about 50 tokens/s)",
    )
    parser.add_argument(
        "--first-token-latency",
        type=float,
        default=0.3,
        help="streaming: seconds before the first token (default 0.3)",
    )
    parser.add_argument(
        "--stream-n", type=int, default=3, help="streaming: answers per variant and repeat"
    )
    parser.add_argument(
        "--stream-detector",
        choices=["refchecker", "fake"],
        default="refchecker",
        help="streaming: sentence checker (local RefChecker, or an instant fake)",
    )
    parser.add_argument(
        "--agent-detector",
        choices=["refchecker", "fake", "none"],
        default="refchecker",
        help="agents: the middleware's detector (local RefChecker, an instant fake, or skip)",
    )
    parser.add_argument(
        "--agent-n", type=int, default=10, help="agents: answers per variant and repeat"
    )
    parser.add_argument(
        "--burst",
        default="1,30,300",
        help="burst: concurrent guarded runs over HTTP, comma-separated ('' to skip)",
    )
    parser.add_argument(
        "--burst-latency", type=float, default=0.02, help="burst: seconds per server reply"
    )
    parser.add_argument(
        "--burst-timeout", type=float, default=2.0, help="burst: the guard's check_timeout (2)"
    )
    parser.add_argument(
        "--burst-limit",
        type=int,
        default=None,
        help="burst: the guard's max_concurrent_checks (default: the guards' own, 64; 0 for no "
        "bound)",
    )
    parser.add_argument(
        "--burst-rescore",
        action="store_true",
        help="burst: the callback handler scores every run again (recheck=True) with the same "
        "LLM RefChecker over the same ChatOpenAI, in the background (default: it records the "
        "guard's verdict)",
    )
    parser.add_argument(
        "--burst-pool",
        type=int,
        default=0,
        help="burst: most HTTP connections of the ChatOpenAI client (0, the default: the "
        "openai client's own limits)",
    )
    parser.add_argument(
        "--load",
        type=int,
        default=1000,
        help="load: guarded calls over HTTP, async and sync, for client CPU per call (0 to skip)",
    )
    parser.add_argument(
        "--load-faults",
        type=_share,
        default=0.05,
        help="load and burst: share of chain and of checker requests failing once (500; 0.05)",
    )
    parser.add_argument(
        "--load-concurrency", type=int, default=50, help="load: calls in flight at once (50)"
    )
    parser.add_argument(
        "--detector-latency",
        type=float,
        default=0.0,
        help="seconds each guard check takes (default 0: measure truthguard's own overhead)",
    )


def _share(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}")
    return value


def _timed(fn: Callable[[int], Any], n: int) -> float:
    started = time.perf_counter()
    for i in range(n):
        fn(i)
    return time.perf_counter() - started


_PASSAGES = [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
    "It was designed by the engineering company of Gustave Eiffel and built from 1887 to 1889.",
    "The tower is 330 metres tall and was the tallest man-made structure for 41 years.",
    "It was the entrance arch to the 1889 World's Fair and is among the most visited monuments.",
]
_ANSWER = (
    "The Eiffel Tower stands on the Champ de Mars in Paris, France. "
    "It was built from 1887 to 1889 by the engineering company of Gustave Eiffel. "
    "The tower is 330 metres tall. "
    "It served as the entrance arch to the 1889 World's Fair."
)


def _paced_model(first_token: float, per_token: float) -> Any:
    from truthguard.testing import ScriptedChatModel

    class PacedChatModel(ScriptedChatModel):
        """Streams word by word: ``latency`` before the first token, then a delay per token."""

        token_latency: float = 0.0

        async def _astream(self, messages, stop=None, run_manager=None, **kw):  # type: ignore[no-untyped-def]
            async for chunk in super()._astream(messages, stop, run_manager, **kw):
                await asyncio.sleep(self.token_latency)
                yield chunk

        # A sync guard streams the chain through its sync API (on a worker thread): same pace.
        def _stream(self, messages, stop=None, run_manager=None, **kw):  # type: ignore[no-untyped-def]
            for chunk in super()._stream(messages, stop, run_manager, **kw):
                time.sleep(self.token_latency)
                yield chunk

    return PacedChatModel(script=lambda p: _ANSWER, latency=first_token, token_latency=per_token)


async def _stream_once(runnable: Any, question: str, guarded: bool) -> tuple[float, float]:
    """Seconds to the first complete sentence and to the end of the stream."""
    started = time.perf_counter()
    first: float | None = None
    text = ""
    async for chunk in runnable.astream(question):
        if guarded:
            if first is None and chunk.kind == "sentence":
                first = time.perf_counter() - started
        else:
            text += chunk
            if first is None and ". " in text:  # the first sentence's last token has arrived
                first = time.perf_counter() - started
    total = time.perf_counter() - started
    return (total if first is None else first), total


def _streaming(args: argparse.Namespace) -> dict[str, Any]:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    from truthguard._sync import run_sync
    from truthguard.guard import StreamingGuard
    from truthguard.testing import FakeDetector

    model = _paced_model(args.first_token_latency, args.token_latency)
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    plain = prompt | model | StrOutputParser()
    if args.stream_detector == "refchecker":
        from truthguard.refchecker import RefChecker

        detector: Any = RefChecker()
    else:
        detector = FakeDetector(score=1.0)
    guarded_chain = _with_contexts(plain)
    guard = StreamingGuard(chain=guarded_chain, detector=detector)

    async def measure() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {k: [] for k in ("u_first", "u_total", "g_first", "g_total")}
        await _stream_once(guard, "Where is the Eiffel Tower?", True)  # warm-up: model load
        for _ in range(args.repeats):
            for i in range(args.stream_n):
                q = f"Where is the Eiffel Tower? ({i})"
                f, t = await _stream_once(plain, q, False)
                out["u_first"].append(f)
                out["u_total"].append(t)
                f, t = await _stream_once(guard, q, True)
                out["g_first"].append(f)
                out["g_total"].append(t)
        return out

    m = run_sync(measure())
    med = {k: statistics.median(v) for k, v in m.items()}
    last = run_sync(guard.ainvoke("Where is the Eiffel Tower?"))
    return {
        "detector": args.stream_detector,
        "token_latency": args.token_latency,
        "first_token_latency": args.first_token_latency,
        "n": args.stream_n * args.repeats,
        "first_sentence_unguarded_s": med["u_first"],
        "first_checked_sentence_s": med["g_first"],
        # Paired: each guarded answer against the unguarded one measured just before it, so a
        # machine that gets busier or quieter during the run moves both sides alike.
        "first_sentence_added_s": statistics.median(
            g - u for u, g in zip(m["u_first"], m["g_first"], strict=True)
        ),
        "total_unguarded_s": med["u_total"],
        "total_guarded_s": med["g_total"],
        "overhead_ratio": med["g_total"] / med["u_total"],
        "overhead_pct": 100.0 * (med["g_total"] / med["u_total"] - 1.0),
        "answer_passed": last.passing,
        "sentences_checked": len(last.attempts[0].results),
    }


def _with_contexts(answer_chain: Any) -> Any:
    """A chain streaming ``{"context": passages}`` first, then ``{"answer": token}`` chunks."""
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    return (
        RunnableLambda(lambda q: {"question": q, "context": _PASSAGES})
        | RunnablePassthrough.assign(answer=(lambda x: x["question"]) | answer_chain)
    ).pick(["context", "answer"])


def _tool_model(latency: float) -> Any:
    """A scripted chat model that calls ``search`` once, then answers from its result."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ToolLoopModel(BaseChatModel):
        latency: float = 0.0

        @property
        def _llm_type(self) -> str:
            return "bench-tool-loop"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _reply(self, messages: list[Any]) -> AIMessage:
            if isinstance(messages[-1], ToolMessage):
                return AIMessage(content=_ANSWER)
            call = {"name": "search", "args": {"query": "Eiffel Tower"}, "id": "call_1"}
            return AIMessage(content="", tool_calls=[call])

        def _generate(self, messages, stop=None, run_manager=None, **kw):  # type: ignore[no-untyped-def]
            time.sleep(self.latency)
            return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

        async def _agenerate(self, messages, stop=None, run_manager=None, **kw):  # type: ignore[no-untyped-def]
            await asyncio.sleep(self.latency)
            return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    return ToolLoopModel(latency=latency)


def _agents(args: argparse.Namespace) -> dict[str, Any] | None:
    """Per answer: the agent, the guarded agent, the detector alone; the middleware's share."""
    try:
        from langchain.agents import create_agent
    except ImportError:  # LangChain 1.x is optional
        return None
    from langchain_core.tools import tool

    from truthguard.agents import GroundingMiddleware
    from truthguard.testing import FakeDetector

    @tool
    def search(query: str) -> str:
        """Search the encyclopedia."""
        return "\n\n".join(_PASSAGES)

    if args.agent_detector == "refchecker":
        from truthguard.refchecker import RefChecker

        detector: Any = RefChecker()
    else:
        detector = FakeDetector(score=1.0, threshold=0.5)
    model = _tool_model(args.latency)
    plain = create_agent(model, tools=[search])
    guarded = create_agent(
        model, tools=[search], middleware=[GroundingMiddleware(detectors=[detector])]
    )
    question = "Where and when was the Eiffel Tower built?"
    payload = {"question": question, "answer": _ANSWER, "contexts": ["\n\n".join(_PASSAGES)]}

    def ask(agent: Any) -> Callable[[int], Any]:
        return lambda i: agent.invoke({"messages": [("user", f"{question} ({i})")]})

    variants: dict[str, Callable[[int], Any]] = {
        "agent": ask(plain),
        "agent_guarded": ask(guarded),
        "detector": lambda i: detector.invoke(payload),
    }
    last = guarded.invoke({"messages": [("user", question)]})  # warm-up: model load, schemas
    for fn in variants.values():
        fn(0)
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            times[name].append(_timed(fn, args.agent_n) / args.agent_n)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "detector": args.agent_detector,
        "n": args.agent_n * args.repeats,
        "agent_s": med["agent"],
        "agent_guarded_s": med["agent_guarded"],
        "detector_s": med["detector"],
        "middleware_overhead_s": med["agent_guarded"] - med["agent"] - med["detector"],
        "answer_status": last["truthguard"].status,
    }


def _emission(n: int = 2000) -> dict[str, Any] | None:
    """Seconds per verdict event on a recording span, and per call with emission off."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
    except ImportError:  # the otel extra is optional
        return None
    from truthguard import otel
    from truthguard.guard import GuardVerdict
    from truthguard.result import DetectionResult, Label

    result = DetectionResult(
        detector="refchecker", score=0.9, label=Label.FACTUAL, passing=True, explanation="ok"
    )
    verdict = GuardVerdict(passing=True, combine="all", passes={"refchecker": True})
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    tracer = provider.get_tracer("truthguard-bench")

    def emit_many() -> tuple[float, int]:
        # 100 events per span: the SDK keeps at most 128 events on one span.
        recorded, started = 0, time.perf_counter()
        for batch in range(n // 100):
            with tracer.start_as_current_span("answer") as span:
                for i in range(100):
                    otel.emit_verdict(
                        ["refchecker"], [result], verdict, attempt=1, response_id=f"{batch}-{i}"
                    )
            recorded += len(span.events)  # type: ignore[attr-defined]
        return (time.perf_counter() - started) / n, recorded

    on, events = emit_many()
    otel.configure(enabled=False)
    try:
        off, _ = emit_many()
    finally:
        otel.configure(enabled=None)
    provider.shutdown()
    return {"n": n, "event_s": on, "off_s": off, "events": events}


def run(args: argparse.Namespace) -> dict[str, Any]:
    for name in ("n", "repeats", "stream_n", "agent_n", "load"):
        if getattr(args, name, 0) < 0:
            raise InvalidInputError(
                f"--{name.replace('_', '-')}", f"expected 0 or more, got {getattr(args, name)}"
            )
    return {
        **_overhead(args),
        "streaming": _streaming(args) if args.stream_n else None,
        "agents": None if args.agent_detector == "none" or not args.agent_n else _agents(args),
        "emission": _emission(),
        "burst": _burst(args),
        "load": _load(args),
    }


def _overhead(args: argparse.Namespace) -> dict[str, Any]:
    """The guard's and the handler's own cost over a scripted chain (``--n 0`` skips it)."""
    if not args.n or not args.repeats:
        return {"seconds_per_call": None, "model_latency": args.latency, "n": 0}
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


def _format_overhead(result: dict[str, Any]) -> list[str]:
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
    return lines


def format_table(result: dict[str, Any]) -> str:
    per = result["seconds_per_call"]
    lines = _format_overhead(result) if per else ["chain overhead: skipped (--n 0)"]
    st = result.get("streaming")
    if st:
        lines += [
            "",
            f"Streaming guard ({st['detector']} per sentence), model "
            f"{st['first_token_latency']:.2f} s to first token + "
            f"{st['token_latency'] * 1000:.0f} ms/token, {st['n']} answers (median)",
            f"{'':<36}{'unguarded':>12}{'guarded':>12}",
            f"{'first (checked) sentence, s':<36}{st['first_sentence_unguarded_s']:>12.3f}"
            f"{st['first_checked_sentence_s']:>12.3f}",
            f"{'whole answer, s':<36}{st['total_unguarded_s']:>12.3f}"
            f"{st['total_guarded_s']:>12.3f}",
            f"first sentence {st['first_sentence_added_s'] * 1000:+.0f} ms; total overhead "
            f"{st['overhead_pct']:+.1f}%; {st['sentences_checked']} sentences checked, "
            f"answer passed: {st['answer_passed']}",
        ]
    ag = result.get("agents")
    if ag:
        lines += [
            "",
            f"Agent (create_agent: one tool call, then the answer; model "
            f"{result['model_latency'] * 1000:.0f} ms per call), GroundingMiddleware with "
            f"{ag['detector']}, {ag['n']} answers (median)",
            f"{'agent, ms / answer':<36}{ag['agent_s'] * 1000:>12.1f}",
            f"{'guarded agent, ms / answer':<36}{ag['agent_guarded_s'] * 1000:>12.1f}",
            f"{'detector alone, ms / check':<36}{ag['detector_s'] * 1000:>12.1f}",
            f"{'middleware overhead, ms / answer':<36}{ag['middleware_overhead_s'] * 1000:>12.1f}",
            f"answer status: {ag['answer_status']}",
        ]
    if result.get("burst"):
        lines += _format_burst(result["burst"])
    if result.get("load"):
        lines += _format_load(result["load"])
    em = result.get("emission")
    if em:
        lines += [
            "",
            f"OpenTelemetry gen_ai.evaluation.result: {em['event_s'] * 1e6:.1f} us per event on "
            f"a recording span; {em['off_s'] * 1e6:.2f} us per call with emission off",
        ]
    return "\n".join(lines)


# -- a burst of concurrent guarded runs over HTTP, checked by an LLM RefChecker -----------------

_BURST_PASSAGES = [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
    "It was designed by the engineering company of Gustave Eiffel and built from 1887 to 1889.",
]
_BURST_ANSWER = "The Eiffel Tower was built from 1887 to 1889."
_BURST_TRIPLET = '("Eiffel Tower", "was built from", "1887 to 1889")'


def _burst_levels(text: str) -> list[int]:
    levels = [int(x) for x in text.split(",") if x.strip()]
    if not levels or any(n < 1 for n in levels):
        raise ValueError(f"--burst needs positive integers, got {text!r}")
    return levels


def _burst_reply(messages: list[dict[str, Any]]) -> str:
    """The burst server's replies: the answer; its one claim; "Entailment" for the claim."""
    text = str(messages[-1]["content"])
    if "Triplets:" in text:
        return _BURST_TRIPLET
    if "Entailment, Neutral or Contradiction" in text:
        return "Entailment"
    return _BURST_ANSWER


def _burst_faults(n: int, share: float) -> list[Any]:
    """One 500 for a ``share`` of the runs' chain requests and of their checker requests."""
    from truthguard.testing import Fault

    every = round(1 / share) if share > 0 else 0
    picked = range(0, n, every) if every else range(0)
    chain = [Fault("500", match=f"Q: burst question #{i}?", times=1) for i in picked]
    # the checker's prompts fence the question on a line of its own (the chain's says "Q: ...")
    check = [
        Fault("500", match=f"\nburst question #{i + every // 2}?\n</question", times=1)
        for i in picked
    ]
    return chain + check


def _burst_server(conn: Any, latency: float, n: int, share: float) -> None:
    """The burst's server, in a process of its own (its CPU is not the client's)."""
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=_burst_reply, latency=latency) as server:
        conn.send(server.base_url)
        while (msg := conn.recv()) != "stop":
            server.wait_idle()
            server.reset()
            server.faults = _burst_faults(n, share) if msg == "faults" else []
            conn.send(None)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _burst(args: argparse.Namespace) -> dict[str, Any] | None:
    """Answers/s, passed within the deadline and the return time after the chain's end.

    ``n`` concurrent ``ainvoke`` calls of a guarded ``ChatOpenAI`` chain (the user's own model,
    default clients), checked by an LLM ``RefChecker`` (``LLMExtractor`` + ``LLMChecker``) over
    the same model, the callback handler attached; the server (:class:`OpenAIServer`, in
    another process) answers in ``--burst-latency`` and fails ``--load-faults`` of the chain
    requests and of the checker requests once with a 500. The answer states one fact, so a
    check is two requests: the extraction and one claim's label.
    """
    if not getattr(args, "burst", None):
        return None
    import multiprocessing

    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnableParallel
    from langchain_openai import ChatOpenAI

    from truthguard.callbacks import AsyncTruthGuardCallbackHandler
    from truthguard.guard import HallucinationGuard
    from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker
    from truthguard.testing import FakeDetector

    levels = _burst_levels(args.burst)
    timeout = args.burst_timeout
    share = getattr(args, "load_faults", 0.05)
    ctx = multiprocessing.get_context("spawn")
    conn, child = ctx.Pipe()
    proc = ctx.Process(
        target=_burst_server, args=(child, args.burst_latency, max(levels), share), daemon=True
    )
    proc.start()
    url = conn.recv()
    ended: dict[str, float] = {}

    def chain_end(out: dict[str, Any]) -> dict[str, Any]:
        ended[out["question"]] = time.perf_counter()
        return out

    pool = getattr(args, "burst_pool", 0) or 0
    llm = ChatOpenAI(base_url=url, api_key="test", model="gpt-test", **_bounded_client(pool))
    prompt = ChatPromptTemplate.from_messages([("human", "Q: {question}")])
    chain = RunnableParallel(
        question=lambda x: x["question"],
        context=lambda x: _BURST_PASSAGES,
        answer=prompt | llm | StrOutputParser(),
    ) | RunnableLambda(chain_end)
    checker = RefChecker(extractor=LLMExtractor(model=llm), checker=LLMChecker(model=llm))
    from truthguard.guard.admission import DEFAULT_MAX_CONCURRENT_CHECKS

    limit = getattr(args, "burst_limit", None)
    limit = DEFAULT_MAX_CONCURRENT_CHECKS if limit is None else (limit or None)
    guard = HallucinationGuard(
        chain=chain, detectors=checker, check_timeout=timeout, max_concurrent_checks=limit
    ).warm_up()  # as a service does at start-up: the local model is loaded before any run
    spare = FakeDetector(score=1.0)  # the handler's own detector: a guard's run needs none
    rescore = bool(getattr(args, "burst_rescore", False))
    records: list[Any] = []
    handler = AsyncTruthGuardCallbackHandler(
        checker if rescore else spare,
        sinks=[records.append],
        max_queue=10_000,
        recheck=rescore,
    )

    async def one(i: int) -> tuple[str, Any, float]:
        question = f"burst question #{i}?"
        try:
            out: Any = await guard.ainvoke({"question": question}, {"callbacks": [handler]})
        except Exception as e:  # counted, never expected: the guard keeps every answer
            out = e
        return question, out, time.perf_counter()

    Level = tuple[int, list[tuple[str, Any, float]], float, dict[str, float]]

    async def bursts() -> list[Level]:
        # One event loop for every level, as in a service: the user's ChatOpenAI keeps its
        # async HTTP client on the loop that made it (a second asyncio.run would break it).
        await one(10**6)  # warm-up: clients, imports
        done = []
        for n in levels:
            ended.clear()
            conn.send("faults")
            conn.recv()
            started = time.perf_counter()
            runs = await asyncio.gather(*(one(i) for i in range(n)))
            done.append((n, list(runs), time.perf_counter() - started, dict(ended)))
        return done

    rows: list[dict[str, Any]] = []
    try:
        for n, runs, wall, chain_ends in asyncio.run(bursts()):
            outs = [out for _, out, _ in runs]
            after = [t - chain_ends[q] for q, _, t in runs if q in chain_ends]
            whys = [_why_not_passed(out) for out in outs]
            counts = collections.Counter(why for why, _ in whys if why != "passed")
            examples = {}
            for why, text in whys:
                examples.setdefault(why, text)
            rows.append(
                {
                    "concurrency": n,
                    "answers_per_s": n / wall,
                    "passed": sum(why == "passed" for why, _ in whys),
                    "errors": sum(isinstance(out, BaseException) for out in outs),
                    # every run that did not pass, by the reason its result gives
                    "not_passed": {why: counts[why] for why in REASONS if counts[why]},
                    "reason_examples": {why: examples[why] for why in REASONS if counts[why]},
                    "refused_over_capacity": counts["over capacity"],
                    "timed_out": counts["timed out"],
                    "unexplained": counts["other"],
                    "after_chain_p50_s": _quantile(after, 0.5),
                    "after_chain_p99_s": _quantile(after, 0.99),
                    "overrun_p50_s": max(0.0, _quantile(after, 0.5) - timeout),
                    "overrun_p99_s": max(0.0, _quantile(after, 0.99) - timeout),
                }
            )
    finally:
        handler.close(timeout=120 if rescore else 10)
        conn.send("stop")
        proc.join(timeout=10)
    return {
        "latency": args.burst_latency,
        "check_timeout": timeout,
        "max_concurrent_checks": limit,
        "http_pool": pool or None,
        "fault_share": share,
        "rows": rows,
        "handler_checks": spare.check_count,
        "handler_rescored": rescore,
        "handler_records": len(records),
        "handler_failures": dict(collections.Counter(r.failure for r in records if r.failure)),
    }


def _bounded_client(pool: int) -> dict[str, Any]:
    """``ChatOpenAI`` arguments for an async HTTP client of at most ``pool`` connections."""
    if pool < 0:
        raise InvalidInputError("--burst-pool", f"expected 0 or more, got {pool}")
    if not pool:
        return {}
    import openai

    limits = _http_limits()(max_connections=pool, max_keepalive_connections=pool)
    return {"http_async_client": openai.DefaultAsyncHttpxClient(limits=limits)}


def _http_limits() -> type[Any]:
    """The ``Limits`` class of the HTTP package the installed ``openai`` sends with.

    Not ``httpx.Limits``: openai 1.x sends with ``httpx``, openai 3.x with ``httpx2`` (a fork;
    ``httpx`` may still be installed for other packages, and its ``Limits`` is another class,
    which ``httpx2`` accepts only by duck typing). openai's own default limits are an instance
    of the right one, whichever it is.
    """
    import openai

    return type(openai.DEFAULT_CONNECTION_LIMITS)


REASONS = (
    "over capacity",
    "timed out",
    "LLM error",
    "invalid LLM output",
    "unsupported",
    "unverifiable",
    "detector raised",
    "chain error",
    "guard raised",
    "other",
)
"""Why a burst run did not pass, in the order the table shows them: refused by the guard's
admission before any work; admitted but not decided within ``check_timeout``; the checker's
model calls failed (an HTTP 500 after the retries, a connection error); its reply could not be
parsed; the checker judged the answer unsupported (a decided failure); nothing checkable in
it; the detector raised on the input; the guarded chain itself failed; the guard raised; none
of these (a reason the bench does not know yet: a defect to look at)."""


def _why_not_passed(out: Any) -> tuple[str, str]:
    """The :data:`REASONS` entry a burst run's output gives (or "passed"), and its message."""
    from truthguard.guard.verdict import NEVER_OPEN
    from truthguard.result import Label

    if isinstance(out, BaseException):
        return "guard raised", f"{type(out).__name__}: {out}"
    if out.passing:
        return "passed", ""
    attempt = out.attempts[0]
    verdict = attempt.verdict
    if verdict is None:
        return ("chain error" if attempt.error else "other"), attempt.error or out.status
    if verdict.over_capacity:
        return "over capacity", verdict.reason
    for r in attempt.results:
        details = r.details or {}
        text = r.invalid_reason or r.explanation or verdict.reason
        if details.get("error") == "timeout":
            return "timed out", text
        if details.get("failure") == "llm_call":
            return "LLM error", f"{text} ({details.get('error')})"
        if details.get(NEVER_OPEN):
            return "detector raised", text
        if r.label == Label.INVALID and "stage" in details:
            return "invalid LLM output", text
        if r.label == Label.HALLUCINATED:
            return "unsupported", text
        if r.label == Label.UNVERIFIABLE and r.passing is not True:
            return "unverifiable", text
    return "other", verdict.reason


def _format_burst(b: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Burst over HTTP: concurrent guarded ainvoke of a ChatOpenAI chain, checked by an LLM "
        f"RefChecker (extractor + checker, 2 requests per check) over the same ChatOpenAI; "
        f"server {b['latency'] * 1000:.0f} ms per reply, {b['fault_share']:.0%} of chain and of "
        f"checker requests fail once (500); handler attached; check_timeout "
        f"{b['check_timeout']:g} s, max_concurrent_checks {b['max_concurrent_checks']}; HTTP "
        f"connections: {b.get('http_pool') or 'the client default'}",
        f"{'runs':>6}{'answers/s':>11}{'passed':>8}{'after chain p50':>17}{'p99':>8}"
        f"{'overrun p50':>13}{'p99':>8}  not passed, by reason",
    ]
    for r in b["rows"]:
        why = ", ".join(f"{k} {v}" for k, v in r["not_passed"].items()) or "-"
        lines.append(
            f"{r['concurrency']:>6}{r['answers_per_s']:>11.1f}{r['passed']:>8}"
            f"{r['after_chain_p50_s']:>16.2f}s{r['after_chain_p99_s']:>7.2f}s"
            f"{r['overrun_p50_s']:>12.2f}s{r['overrun_p99_s']:>7.2f}s  {why}"
        )
    lines.append(
        "passed = decided and passing within the deadline; after chain = the guard's return after "
        "the chain's end; over capacity = refused by the guard's admission before any work; "
        "timed out = admitted, not decided in time; LLM error = the checker's calls failed after "
        "their retries; unsupported = the checker judged the answer unsupported; other = a "
        "reason the bench does not know (the JSON's reason_examples holds one message per "
        + (
            f"reason); the handler re-scored every run in the background: {b['handler_records']} "
            f"records, failed by kind {b['handler_failures'] or 'none'}"
            if b.get("handler_rescored")
            else f"reason); the handler's own detector ran {b['handler_checks']} time(s): it "
            "records the guard's verdict"
        )
    )
    return lines


# -- client CPU per guarded call under load, with faults ---------------------------------------


def _load_reply(messages: list[dict[str, Any]]) -> str:
    """The load server's replies: an answer carrying the question's number; "yes" to a check."""
    text = str(messages[-1]["content"])
    if text.startswith("Q: "):
        return f"A load answer (#{text.rsplit('#', 1)[-1].rstrip('?')})."
    return "yes"


def _load_input(i: int) -> dict[str, str]:
    return {"question": f"load question #{i}?"}


def _load_faults(n: int, share: float) -> list[Any]:
    """One 500 for a ``share`` of the chain requests and of the checker requests (each then
    succeeds on its retry)."""
    from truthguard.testing import Fault

    if not 0 <= share <= 1:  # NaN too
        raise InvalidInputError("--load-faults", f"expected a share from 0 to 1, got {share!r}")
    every = round(1 / share) if share > 0 else 0
    picked = range(0, n, every) if every else range(0)
    chain = [Fault("500", match=f"question #{i}?", times=1) for i in picked]
    check = [Fault("500", match=f"answer (#{i + every // 2}).", times=1) for i in picked]
    return chain + check


def _load_server(conn: Any, latency: float, faults: list[Any]) -> None:
    """The load benchmark's server, in a process of its own, so its CPU is not the client's."""
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=_load_reply, latency=latency, faults=faults) as server:
        conn.send(server.base_url)
        while (msg := conn.recv()) != "stop":
            if msg == "reset":
                server.wait_idle()
                server.reset()
                conn.send(None)
            else:  # "statuses"
                server.wait_idle()
                conn.send([r.status for r in server.requests])


def _load(args: argparse.Namespace) -> dict[str, Any] | None:
    """Client CPU per call: the bare chain, a guard whose check makes no call, and a guard whose
    check makes one ``ChatOpenAI`` call, ``--load`` calls each, async and sync.

    The server runs in another process, so process CPU is the client's alone: the chain's and
    checker's HTTP clients and everything truthguard does. ``--load-faults`` of the chain
    requests and of the checker requests fail once with a 500 and succeed on their retry
    (``ChatOpenAI``'s own for the chain, the session's for the check).
    """
    n = getattr(args, "load", 0) or 0
    if n <= 0:
        return None
    import concurrent.futures
    import multiprocessing
    import threading

    import httpx
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_openai import ChatOpenAI

    from truthguard.guard import HallucinationGuard
    from truthguard.testing import FakeDetector

    ctx = multiprocessing.get_context("spawn")
    conn, child = ctx.Pipe()
    faults = _load_faults(n, args.load_faults)
    proc = ctx.Process(target=_load_server, args=(child, args.burst_latency, faults), daemon=True)
    proc.start()
    url = conn.recv()
    width = max(1, args.load_concurrency)

    def model() -> Any:  # ChatOpenAI's defaults (2 retries of its own), a pool for the burst
        limits = httpx.Limits(max_connections=2 * width, max_keepalive_connections=2 * width)
        return ChatOpenAI(
            base_url=url,
            api_key="test",
            model="gpt-test",
            timeout=30,
            http_client=httpx.Client(limits=limits),
            http_async_client=httpx.AsyncClient(limits=limits),
        )

    prompt = ChatPromptTemplate.from_messages([("human", "Q: {question}")])
    chain = prompt | model() | StrOutputParser()
    guards = {
        "guard, check makes no call": HallucinationGuard(
            chain=chain, detectors=FakeDetector(score=1.0), check_timeout=30
        ),
        "guard, check calls ChatOpenAI": HallucinationGuard(
            chain=chain, detectors=FakeDetector(score=1.0, model=model()), check_timeout=30
        ),
    }
    variants: dict[str, Any] = {"bare chain": chain, **guards}
    loop = asyncio.new_event_loop()  # the user's loop, in a thread of its own
    thread = threading.Thread(target=loop.run_forever, name="bench-load", daemon=True)
    thread.start()
    pool = concurrent.futures.ThreadPoolExecutor(width, thread_name_prefix="bench-load")

    def run_async(runnable: Any, count: int) -> list[Any]:
        async def go() -> list[Any]:
            gate = asyncio.Semaphore(width)

            async def one(i: int) -> Any:
                async with gate:
                    return await runnable.ainvoke(_load_input(i))

            return await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)

        return asyncio.run_coroutine_threadsafe(go(), loop).result()

    def run_sync(runnable: Any, count: int) -> list[Any]:
        def one(i: int) -> Any:
            try:
                return runnable.invoke(_load_input(i))
            except Exception as e:  # counted, as the async run's
                return e

        return list(pool.map(one, range(count)))

    rows: list[dict[str, Any]] = []
    try:
        for mode, drive in (("async", run_async), ("sync", run_sync)):
            for name, runnable in variants.items():
                drive(runnable, min(n, width))  # warm-up: clients, pools, imports
                conn.send("reset")
                conn.recv()
                cpu, wall = time.process_time(), time.perf_counter()
                results = drive(runnable, n)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                conn.send("statuses")
                statuses = conn.recv()
                rows.append(
                    {
                        "mode": mode,
                        "variant": name,
                        "calls": n,
                        "cpu_ms_per_call": 1000 * cpu / n,
                        "wall_s": wall,
                        "requests_per_call": len(statuses) / n,
                        "faults_served": sum(s == 500 for s in statuses),
                        "errors": sum(isinstance(r, BaseException) for r in results),
                        "passed": sum(
                            bool(getattr(r, "passing", False))
                            for r in results
                            if not isinstance(r, BaseException)
                        ),
                    }
                )
    finally:
        pool.shutdown(wait=False)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        conn.send("stop")
        proc.join(timeout=10)
    for row in rows:  # each variant against the bare chain in the same mode
        bare = next(r for r in rows if r["mode"] == row["mode"] and r["variant"] == "bare chain")
        row["cpu_ratio"] = row["cpu_ms_per_call"] / bare["cpu_ms_per_call"]
    return {
        "calls": n,
        "fault_share": args.load_faults,
        "concurrency": width,
        "latency": args.burst_latency,
        "faults_armed": len(faults),
        "rows": rows,
    }


def _format_load(ld: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Load: {ld['calls']} calls per row, {ld['concurrency']} in flight, "
        f"{ld['fault_share']:.0%} of chain and of checker requests fail once (500); "
        f"server in another process ({ld['latency'] * 1000:.0f} ms per reply), so CPU is the "
        "client's",
        f"{'mode':<7}{'variant':<32}{'CPU ms/call':>12}{'x bare':>8}{'req/call':>10}"
        f"{'500s':>6}{'errors':>8}{'wall s':>8}",
    ]
    for r in ld["rows"]:
        lines.append(
            f"{r['mode']:<7}{r['variant']:<32}{r['cpu_ms_per_call']:>12.2f}"
            f"{r['cpu_ratio']:>8.2f}{r['requests_per_call']:>10.3f}{r['faults_served']:>6}"
            f"{r['errors']:>8}{r['wall_s']:>8.1f}"
        )
    return lines
