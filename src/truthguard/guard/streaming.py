"""``StreamingGuard``: stream an answer sentence by sentence, each sentence checked first.

The chain's answer is streamed; every time a sentence is complete it is checked against the
contexts by a sentence-level detector (by default the local
:class:`~truthguard.refchecker.RefChecker`, no LLM call) while the next one streams in. A
sentence is released only once it passes. On the first failing sentence the chain's stream is
closed, the stream says so (a ``notice`` chunk) and the policies apply: ``Regenerate`` asks the
model to continue from the last released sentence without the withheld one (a repair),
``ReRetrieve`` answers again with more context (sentences already released are not repeated),
``Fallback`` releases its answer, ``Raise`` raises :class:`~truthguard.errors.GuardRejected`.
With ``Filter`` a failing sentence is dropped instead and the stream goes on; the guard ends
with status ``filtered`` and streams the filter's notice.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, Literal

from langchain_core.runnables import Runnable, RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import ensure_config
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from truthguard import otel
from truthguard._clean import clean_text
from truthguard._sync import run_sync, stream_user
from truthguard.errors import GuardRejected, InvalidInputError
from truthguard.guard._deadline import POLICY_GRACE, Deadline, before, within
from truthguard.guard._models import Attempt, GuardResult, GuardVerdict
from truthguard.guard._runs import (
    RetrieverCapture,
    attempt_chain,
    attempt_config,
    scoped_config,
    with_feedback_slot,
)
from truthguard.guard.admission import DEFAULT_MAX_CONCURRENT_CHECKS, CheckGate, running_chain
from truthguard.guard.attempts import Action, AskPolicy, Finish, RunAttempt
from truthguard.guard.check import (
    CheckLoop,
    attempt_loop,
    base_detector,
    deprecated_check_loop,
    run_checks,
    thresholds_for,
    we_are_cancelled,
)
from truthguard.guard.extract import (
    ANSWER_KEYS,
    CONTEXT_KEYS,
    check_input,
    contexts_of,
    history_of,
    question_of,
)
from truthguard.guard.policies import Filter, GuardPolicy
from truthguard.guard.usage import UsageCollector
from truthguard.guard.validation import input_errors
from truthguard.guard.verdict import check_threshold, decide
from truthguard.llm import message_text
from truthguard.result import DetectionResult, Usage

__all__ = ["GuardChunk", "StreamingGuard"]

logger = logging.getLogger("truthguard.guard")


class GuardChunk(BaseModel):
    """One piece of a streaming guard's output.

    ``kind`` is ``sentence`` (a checked sentence, ``text`` starts with a space after the first),
    ``notice`` (the guard says what it did), ``fallback`` (an unchecked fallback answer) or
    ``result`` (the last chunk: ``result`` holds the :class:`GuardResult`).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    kind: Literal["sentence", "notice", "fallback", "result"]
    """What this chunk is."""
    text: str = ""
    """Text to show (empty for the result chunk)."""
    attempt: int = 1
    """The attempt the chunk belongs to."""
    check: DetectionResult | None = None
    """The sentence's check (``sentence`` chunks)."""
    result: GuardResult | None = None
    """The final result (``result`` chunk only)."""

    def __str__(self) -> str:
        return self.text


class _Outcome:
    """What one streamed attempt ended with."""

    def __init__(self) -> None:
        self.released: list[str] = []
        self.failed: tuple[str, DetectionResult, GuardVerdict] | None = None
        self.error: BaseException | None = None
        self.contexts: list[str] = []
        self.results: list[DetectionResult] = []
        self.verdict: GuardVerdict | None = None
        self.streamed_text = ""
        self.withheld: list[str] = []  # failing sentences dropped by a Filter policy


_WITHHELD = GuardChunk(kind="notice")  # judge()'s "dropped, go on" (never yielded)


def _split_complete(buffer: str) -> tuple[list[str], str]:
    """Complete sentences at the start of ``buffer`` and the unfinished rest."""
    from truthguard.refchecker.segment import split_sentences

    spans = split_sentences(buffer)
    if len(spans) < 2:
        return [], buffer
    return [s.text for s in spans[:-1]], buffer[spans[-1].start :]


def _norm(sentence: str) -> str:
    return " ".join(sentence.lower().split())


class StreamingGuard(RunnableSerializable[Any, GuardResult]):
    """Stream a chain's answer sentence by sentence, releasing only checked sentences.

    The chain may stream strings, message chunks or dict chunks (the answer under
    ``answer_key``, the documents under ``context_key``, as :func:`~truthguard.rag.build_rag_chain`
    does); when it streams no documents they are taken from its retriever runs. ``stream`` /
    ``astream`` yield :class:`GuardChunk` objects; ``invoke`` / ``ainvoke`` consume the stream and
    return the final :class:`GuardResult`.

    Example:
        >>> from truthguard.testing import FakeDetector, ScriptedChatModel
        >>> model = ScriptedChatModel(script=lambda p: "Paris is in France. It has a river.")
        >>> guard = StreamingGuard(chain=model, detector=FakeDetector(score=1.0))
        >>> [c.text for c in guard.stream("Where is Paris?") if c.kind == "sentence"]
        ['Paris is in France.', ' It has a river.']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    chain: Runnable[Any, Any]
    """The chain whose answer is streamed."""
    detector: Runnable[Any, Any] | None = None
    """Sentence-level detector (default: a local ``RefChecker``, no LLM call)."""
    threshold: float | None = None
    """Native-scale pass mark overriding the detector's own ``threshold``."""
    policies: list[GuardPolicy] = Field(default_factory=list)
    """What to do at a failing sentence, in order (``Regenerate`` repairs from there)."""
    max_attempts: int = Field(default=3, ge=1)
    """Most chain streams per request, the first included (terminal policies still apply)."""
    check_timeout: float | None = Field(default=30.0, gt=0)
    """Seconds one sentence check may take from the sentence's end, a wait for a check slot
    included; None for no limit."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds the whole run may take, streaming, sentence checks and policies together (None:
    no limit). A chain stream still open at the deadline is closed (a failed attempt with a
    ``TimeoutError``; the sentences released stay released), a sentence check runs under the
    earlier of ``check_timeout`` and the deadline, and past it no step starts, so the run ends
    at once as its attempts so far say. Kept by ``stream``, ``astream``, ``invoke`` and
    ``ainvoke``; the time a consumer takes between chunks counts too."""
    max_concurrent_checks: int | None = Field(default=DEFAULT_MAX_CONCURRENT_CHECKS, ge=1)
    """Most sentence checks this guard runs at once, over all its streams; the rest wait their
    turn in arrival order, and one that cannot finish within ``check_timeout`` is refused
    before any work ("over capacity"), as in ``HallucinationGuard``: the sentence is withheld
    and only ``Fallback`` / ``Raise`` apply. None for no bound."""
    check_loop: CheckLoop = "caller"
    """Deprecated, no effect: sentence checks run on the caller's event loop (``"truthguard"``
    warns)."""
    on_error: Literal["open", "closed"] = "closed"
    """An unavailable checker counts as a pass (open) or a failure (closed)."""
    refusals: Literal["release", "retry"] = "release"
    """An answer with nothing to check (a refusal such as "I don't know", or only greetings and
    opinions) is released as it is (``release``), or treated as failing so the policies try
    again (``retry``)."""
    question_key: str | None = None
    """Input key of the question (default: the first of question, input, query)."""
    answer_key: str | None = None
    """Key of the answer in dict chunks (default: the first of answer, output, result, ...)."""
    context_key: str | None = None
    """Key of the documents in dict chunks (default: context, contexts, ...)."""
    history_key: str | None = None
    """Input key of the chat history passed to every sentence check as ``history`` (default:
    the first of chat_history, history, messages); ``""`` passes none (as
    ``HallucinationGuard.history_key``)."""
    stream_nested: bool = False
    """Let streaming consumers see the chain's own runs, unchecked tokens included."""
    repair_notice: str = "[A sentence was withheld: the sources do not support it. Revising.]"
    """Streamed when a policy answers again after a failing sentence."""
    fallback_notice: str = "[The answer could not be verified against the sources.]"
    """Streamed before a fallback answer."""
    stop_notice: str = "[The rest of the answer was withheld: it could not be verified.]"
    """Streamed when the guard gives up."""

    _chain_for_attempts: Runnable[Any, Any] | None = PrivateAttr(default=None)
    _n_models: int = PrivateAttr(default=0)
    _gate: CheckGate | None = PrivateAttr(default=None)

    def __init__(self, **kwargs: Any) -> None:
        with input_errors():
            super().__init__(**kwargs)

    _check_loop = field_validator("check_loop")(deprecated_check_loop)

    @field_validator("detector")
    @classmethod
    def _a_detector(cls, v: Any) -> Any:
        if v is not None and base_detector(v) is None:
            raise InvalidInputError(
                "detector", f"expected a truthguard detector, got {type(v).__name__}"
            )
        return v

    @model_validator(mode="after")
    def _check_policies(self) -> StreamingGuard:
        if self.threshold is not None:
            found = base_detector(self.detector) if self.detector is not None else None
            bounds = (0.0, 1.0) if found is None else found.score_bounds  # default: RefChecker
            check_threshold("threshold", self.threshold, bounds)
        if self.max_attempts == 1 and any(not p.terminal for p in self.policies):
            raise InvalidInputError("max_attempts", "is 1, so the repair policies could never run")
        if self._filters and any(not p.terminal for p in self.policies):
            raise InvalidInputError(
                "policies",
                "Filter drops failing sentences as the answer streams, so no sentence would "
                "ever reach the repair policies: use Filter with Fallback / Raise only",
            )
        for p in self.policies:
            p.validate_chain(self.chain)
        self._chain_for_attempts, self._n_models = with_feedback_slot(self.chain)
        self._gate = CheckGate.bounding(self.max_concurrent_checks)
        return self

    @property
    def _filters(self) -> list[Filter]:
        return [p for p in self.policies if isinstance(p, Filter)]

    @property
    def OutputType(self) -> Any:  # LangChain's name
        return GuardChunk

    def _detector(self) -> Runnable[Any, Any]:
        if self.detector is None:
            from truthguard.refchecker import RefChecker

            self.detector = RefChecker()
        return self.detector

    # -- public API ---------------------------------------------------------------------------

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[GuardChunk]:
        question_of(input, self.question_key)  # fail fast, naming the field
        history_of(input, self.history_key)

        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in self._atransform_stream_with_config(
            one(), self._agenerate, config, **kwargs
        ):
            yield chunk

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[GuardChunk]:
        """Sync streaming: the async stream driven on the portal loop, chunk by chunk, every
        step in one context (as under one ``async for``). Closing this iterator closes the
        stream, the chain's model stream with it."""
        agen = self.astream(input, config, **kwargs).__aiter__()
        context = contextvars.copy_context()
        try:
            while True:
                try:
                    yield run_sync(agen.__anext__(), context=context)
                except StopAsyncIteration:
                    return
        finally:
            run_sync(agen.aclose(), context=context)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardResult:
        last: GuardChunk | None = None
        async for last in self.astream(input, config, **kwargs):  # noqa: B007
            pass
        assert last is not None and last.result is not None
        return last.result

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardResult:
        return run_sync(self.ainvoke(input, ensure_config(config), **kwargs))

    # -- machinery ----------------------------------------------------------------------------

    def _passes(self, result: DetectionResult) -> GuardVerdict:
        detector = self._detector()
        keys = [base_detector(detector).detector_name]  # type: ignore[union-attr]
        overrides = {keys[0]: self.threshold} if self.threshold is not None else {}
        return decide(
            keys,
            [result],
            combine="all",
            thresholds=thresholds_for(keys, [detector], [result], overrides),
            ranges={},
            mean_threshold=0.5,
            on_error=self.on_error,
            refusals=self.refusals,
        )

    async def _agenerate(
        self, inputs: AsyncIterator[Any], run_manager: Any, config: RunnableConfig
    ) -> AsyncIterator[GuardChunk]:
        input = None
        async for input in inputs:  # noqa: B007 - one input
            pass
        question = clean_text(question_of(input, self.question_key))
        history = history_of(input, self.history_key, question=question)
        released: list[str] = []
        withheld: list[str] = []  # sentences a Filter policy dropped
        deadline = Deadline.start(self.timeout)
        loop = attempt_loop(self, question, input, run_manager, config, history)
        verdict: GuardVerdict | None = None
        action: Action = loop.start()
        while not isinstance(action, Finish):
            if isinstance(action, RunAttempt):
                outcome = _Outcome()
                started = time.perf_counter()
                collector = UsageCollector()
                async for chunk in self._attempt(
                    action, question, history, released, outcome, collector, run_manager,
                    config, deadline,
                ):  # fmt: skip
                    yield chunk
                failed_text = outcome.failed[0] if outcome.failed else None
                attempt = Attempt(
                    number=action.number,
                    policy=action.policy,
                    answer=failed_text
                    if failed_text is not None
                    else outcome.streamed_text or None,
                    output=outcome.streamed_text,
                    contexts=outcome.contexts,
                    results=outcome.results,
                    verdict=outcome.verdict,
                    chain_usage=collector.usage(),
                    check_usage=Usage.total([r.usage for r in outcome.results]),
                    error=None if outcome.error is None else _describe(outcome.error),
                    seconds=time.perf_counter() - started,
                )
                verdict = outcome.verdict
                withheld.extend(outcome.withheld)
                action = loop.attempted(
                    attempt,
                    error=outcome.error,
                    passed=outcome.failed is None and outcome.error is None,
                    answered=outcome.error is None,
                    released=" ".join(released) if released else "(nothing yet)",
                )
            elif isinstance(action, AskPolicy):
                try:
                    with scoped_config(action.context.config):  # type: ignore[arg-type]
                        step = await before(
                            deadline, action.policy.astep(action.context), grace=POLICY_GRACE
                        )
                except GuardRejected:
                    yield self._notice(self.stop_notice, action.number - 1, released)
                    raise
                except Exception as e:  # recorded as a failed attempt; the next policy is asked
                    action = loop.policy_failed(e)
                    continue
                action = loop.stepped(step)
                if isinstance(action, RunAttempt):
                    notice = self.repair_notice if action.check else self.fallback_notice
                    yield self._notice(notice, action.number, released)
            else:
                yield self._notice(self.fallback_notice, action.number, released)
                yield GuardChunk(kind="fallback", text=action.answer, attempt=action.number)
                released.append(action.answer)
                action = loop.released(action.answer)
        if action.status == "rejected":
            yield self._notice(self.stop_notice, len(loop.attempts), released)
            error = loop.chain_error()
            if not released and error is not None:
                raise error  # nothing was produced at all: the chain's own error
        status = action.status
        if status == "passed" and withheld:  # a Filter dropped sentences: say so
            status = "filtered"
            notice = self._filters[0].notice
            if notice:
                yield self._notice(notice, len(loop.attempts), released)
                released.append(notice)
        answer = " ".join(released) if released else None
        result = GuardResult(
            question=question,
            answer=answer,
            output=answer,
            status=status,
            passing=status == "passed",
            verdict=verdict,
            attempts=loop.attempts,
            usage=loop.usage(),
        )
        yield GuardChunk(kind="result", attempt=len(loop.attempts), result=result)

    async def _attempt(
        self,
        action: RunAttempt,
        question: str,
        history: list[Any],
        released: list[str],
        outcome: _Outcome,
        collector: UsageCollector,
        run_manager: Any,
        config: RunnableConfig,
        deadline: Deadline | None = None,
    ) -> AsyncIterator[GuardChunk]:
        number, check = action.number, action.check
        tag = f"guard:attempt:{number}"
        capture = RetrieverCapture()
        child = attempt_config(
            config, run_manager, tag, stream_nested=self.stream_nested,
            extra=[collector, capture], configurable=action.configurable,
        )  # fmt: skip
        check_config = attempt_config(config, run_manager, tag, stream_nested=self.stream_nested)
        runnable = action.runnable or attempt_chain(self.chain, self._chain_for_attempts, child)
        seen = {_norm(s) for s in released}
        pending: deque[tuple[str, asyncio.Future[DetectionResult] | None]] = deque()
        buffer = ""
        contexts: list[str] = []

        def schedule(sentence: str) -> None:
            sentence = clean_text(sentence.strip())
            if not sentence or _norm(sentence) in seen:  # a repair repeating released text
                return
            seen.add(_norm(sentence))
            if not check or not any(ch.isalnum() for ch in sentence):
                pending.append((sentence, None))
                return
            ctx = contexts or [clean_text(c) for c in capture.contexts]
            outcome.contexts = ctx
            payload = check_input(question, sentence, ctx, history)
            with scoped_config(check_config):
                timeout = within(deadline, self.check_timeout)
                task = asyncio.ensure_future(self._check(payload, check_config, timeout))
            pending.append((sentence, task))

        def judge(sentence: str, task: asyncio.Future[DetectionResult] | None) -> GuardChunk | None:
            """The chunk to release; None to stop the stream (a failing sentence), or, when
            filtering, ``_WITHHELD`` (the sentence is dropped and the stream goes on)."""
            if task is None:
                kind: Literal["sentence", "fallback"] = "sentence" if check else "fallback"
                return self._release(sentence, kind, number, released, None)
            result = task.result()
            verdict = self._passes(result)
            otel.emit_verdict(list(verdict.passes), [result], verdict, attempt=number)
            outcome.results.append(result)
            outcome.verdict = verdict
            if not verdict.passing:
                if self._filters:
                    outcome.withheld.append(sentence)
                    return _WITHHELD
                outcome.failed = (sentence, result, verdict)
                return None
            return self._release(sentence, "sentence", number, released, result)

        stream = stream_user(runnable, action.input, child)
        try:
            try:
                with scoped_config(child), running_chain(self._gate):
                    while True:
                        try:  # a chunk not come by the deadline closes the stream
                            chunk = await before(deadline, anext(stream))
                        except StopAsyncIteration:
                            break
                        piece, found = self._piece(chunk)
                        if found:
                            contexts = found
                        if piece:
                            outcome.streamed_text += piece
                            buffer += piece
                            complete, buffer = _split_complete(buffer)
                            for s in complete:
                                schedule(s)
                        while pending and (pending[0][1] is None or pending[0][1].done()):
                            out = judge(*pending.popleft())
                            if out is None:
                                return
                            if out is not _WITHHELD:
                                yield out
            except asyncio.CancelledError as e:
                if we_are_cancelled():
                    raise
                outcome.error = RuntimeError(f"the chain raised CancelledError: {e}")
            except Exception as e:  # the released sentences stay; the policies decide
                logger.warning("truthguard: streamed attempt %d raised %s", number, _describe(e))
                outcome.error = e
            if outcome.error is None:
                schedule(buffer)
            if not contexts and capture.contexts:
                outcome.contexts = [clean_text(c) for c in capture.contexts]
            while pending:
                sentence, task = pending.popleft()
                if task is not None:
                    await asyncio.wait({task})
                out = judge(sentence, task)
                if out is None:
                    return
                if out is not _WITHHELD:
                    yield out
        finally:
            for _, task in pending:
                if task is not None:
                    task.cancel()
            await stream.aclose()  # type: ignore[attr-defined]

    async def _check(
        self, payload: dict[str, Any], config: RunnableConfig, timeout: float | None
    ) -> DetectionResult:
        """One sentence's check, admitted by the guard's gate (as every guard's checks are)."""
        detector = self._detector()
        (result,) = await run_checks([detector], payload, config, timeout=timeout, gate=self._gate)
        return result

    def _notice(self, text: str, attempt: int, released: list[str]) -> GuardChunk:
        return GuardChunk(kind="notice", text=(" " if released else "") + text, attempt=attempt)

    def _release(
        self,
        sentence: str,
        kind: Literal["sentence", "fallback"],
        number: int,
        released: list[str],
        result: DetectionResult | None,
    ) -> GuardChunk:
        text = (" " if released else "") + sentence
        released.append(sentence)
        return GuardChunk(kind=kind, text=text, attempt=number, check=result)

    def _piece(self, chunk: Any) -> tuple[str, list[str]]:
        """The answer text and any documents carried by one streamed chunk."""
        if isinstance(chunk, str):
            return chunk, []
        if isinstance(chunk, Mapping):
            keys = (self.answer_key,) if self.answer_key else ANSWER_KEYS
            text = ""
            found = next((k for k in keys if k in chunk), None)
            if found is not None and chunk[found] is not None:
                text = message_text(chunk[found])
            ckeys = (self.context_key,) if self.context_key else CONTEXT_KEYS
            docs: list[str] = []
            if any(k in chunk for k in ckeys):
                docs = [clean_text(c) for c in contexts_of(chunk, self.context_key)]
            return text, docs
        if hasattr(chunk, "content"):
            return message_text(chunk), []
        return "", []


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"
