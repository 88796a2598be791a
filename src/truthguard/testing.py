"""Test doubles shipped with the package: scripted and replay chat models, a fake detector, and
an OpenAI-compatible HTTP server (:class:`OpenAIServer`) with faults on demand.

They behave like the real thing (async, streaming, callbacks, token usage, failures on demand), so
tests and offline demos exercise the same code paths as live runs.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from truthguard._openai_server import Fault, OpenAIServer, ServerRequest, ServerUsage, ToolCall
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import MissingRecordingError
from truthguard.llm import LLMSession, message_text
from truthguard.result import DetectionResult, Label

__all__ = [
    "FakeDetector",
    "Fault",
    "NotGrounded",
    "OpenAIServer",
    "ReplayChatModel",
    "ScriptedChatModel",
    "ServerRequest",
    "ServerUsage",
    "ToolCall",
    "assert_grounded",
    "prompt_of",
]

Responder = Callable[[str], str]


def prompt_of(messages: Sequence[BaseMessage]) -> str:
    """The text a scripted model reacts to: all message contents joined by newlines."""
    return "\n".join(message_text(m) for m in messages)


def _usage(prompt: str, text: str) -> dict[str, int]:
    i, o = len(prompt.split()), len(text.split())
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}


class _RecordingChatModel(BaseChatModel):
    """Shared bits: latency, failures on demand, a thread-safe call log, usage metadata."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_name: str = "scripted"
    """Name used in cache keys; give each fake reference model its own."""
    latency: float = 0.0
    """Seconds each call takes (``asyncio.sleep`` on the async path)."""
    first_token_latency: float | None = None
    """When set, a streamed reply starts after this many seconds and its words arrive evenly
    until ``latency``, like a model that streams while it generates; None streams the whole
    reply at once after ``latency``."""
    fail_first: int = 0
    """The first N calls raise ``error``."""
    fail_when: Callable[[str], bool] | None = None
    """Calls whose prompt satisfies this predicate raise ``error``."""
    error: type[Exception] = RuntimeError
    """Exception type raised for injected failures."""
    report_usage: bool = True
    """Attach ``usage_metadata`` (word counts) to answers; False exercises the tiktoken path."""

    _calls: list[str] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def calls(self) -> list[str]:
        """Prompts received so far, in arrival order."""
        with self._lock:
            return list(self._calls)

    @property
    def call_count(self) -> int:
        with self._lock:
            return len(self._calls)

    def reset(self) -> None:
        with self._lock:
            self._calls.clear()

    def _produce(self, prompt: str, metadata: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def _answer(self, messages: list[BaseMessage], metadata: Mapping[str, Any]) -> AIMessage:
        prompt = prompt_of(messages)
        with self._lock:
            n = len(self._calls)
            self._calls.append(prompt)
        if n < self.fail_first or (self.fail_when is not None and self.fail_when(prompt)):
            raise self.error(f"injected failure on call {n + 1}")
        text = self._produce(prompt, metadata)
        msg = AIMessage(content=text)
        if self.report_usage:
            msg.usage_metadata = _usage(prompt, text)  # type: ignore[assignment]
        return msg

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            time.sleep(self.latency)
        msg = self._answer(messages, getattr(run_manager, "metadata", None) or {})
        return ChatResult(generations=[ChatGeneration(message=msg)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            await asyncio.sleep(self.latency)
        msg = self._answer(messages, getattr(run_manager, "metadata", None) or {})
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _pace(self) -> tuple[float, float]:
        """Seconds before the first streamed word, and between words (see
        ``first_token_latency``)."""
        if self.first_token_latency is None:
            return self.latency, 0.0
        first = min(self.first_token_latency, self.latency)
        return first, self.latency - first

    @staticmethod
    def _chunks(msg: AIMessage) -> list[ChatGenerationChunk]:
        words = message_text(msg).split(" ")
        chunks = [
            ChatGenerationChunk(message=AIMessageChunk(content=w if i == 0 else " " + w))
            for i, w in enumerate(words)
        ]
        if msg.usage_metadata is not None:  # reported once, on the last chunk, as APIs do
            chunks[-1].message.usage_metadata = msg.usage_metadata  # type: ignore[union-attr]
        return chunks

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        first, spread = self._pace()
        started = time.monotonic()
        if first:
            time.sleep(first)
        msg = self._answer(messages, getattr(run_manager, "metadata", None) or {})
        chunks = self._chunks(msg)
        for i, chunk in enumerate(chunks):
            due = started + first + spread * (i + 1) / len(chunks)
            if spread and due > time.monotonic():
                time.sleep(due - time.monotonic())
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        first, spread = self._pace()
        started = time.monotonic()
        if first:
            await asyncio.sleep(first)
        msg = self._answer(messages, getattr(run_manager, "metadata", None) or {})
        chunks = self._chunks(msg)
        for i, chunk in enumerate(chunks):
            due = started + first + spread * (i + 1) / len(chunks)
            if spread and due > time.monotonic():
                await asyncio.sleep(due - time.monotonic())
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}


class ScriptedChatModel(_RecordingChatModel):
    """A chat model whose answer is a function of the prompt.

    ``script`` is either a callable ``prompt -> answer``, a mapping from a substring of the prompt
    to an answer (first match in insertion order wins), or a list of answers served in turn.

    Example:
        >>> model = ScriptedChatModel(script={"capital of France": "Paris"}, default="I don't know")
        >>> model.invoke("What is the capital of France?").content
        'Paris'
    """

    script: Responder | Mapping[str, str] | list[str] = Field(default_factory=list)
    """How to answer (callable, substring mapping or list served in turn)."""
    default: str | None = None
    """Answer when the mapping has no match or the list is exhausted; None raises instead."""

    _turn: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "truthguard-scripted"

    def _produce(self, prompt: str, metadata: Mapping[str, Any]) -> str:
        script = self.script
        if callable(script):
            return script(prompt)
        if isinstance(script, Mapping):
            for needle, answer in script.items():
                if needle in prompt:
                    return answer
        else:
            with self._lock:
                turn, self._turn = self._turn, self._turn + 1
            if turn < len(script):
                return script[turn]
        if self.default is None:
            raise ValueError(f"ScriptedChatModel has no answer for prompt: {prompt[:200]!r}")
        return self.default


class ReplayChatModel(_RecordingChatModel):
    """A chat model that serves recorded outputs from a table.

    The key of a call is ``key_fn(prompt, metadata)``; by default the ``replay_key`` entry of the
    run metadata that a detector passes with each call, or else the prompt text itself. Missing
    keys raise :class:`~truthguard.errors.MissingRecordingError` (never a made-up answer).

    Example:
        >>> model = ReplayChatModel(recordings={"hello": "world"})
        >>> model.invoke("hello").content
        'world'
    """

    recordings: Mapping[Any, str]
    """Recorded outputs by key."""
    key_fn: Callable[[str, Mapping[str, Any]], Any] | None = None
    """Computes the key of a call from its prompt and run metadata."""

    @property
    def _llm_type(self) -> str:
        return "truthguard-replay"

    def key_for(self, prompt: str, metadata: Mapping[str, Any]) -> Any:
        if self.key_fn is not None:
            return self.key_fn(prompt, metadata)
        return metadata.get("replay_key", prompt)

    def _produce(self, prompt: str, metadata: Mapping[str, Any]) -> str:
        key = self.key_for(prompt, metadata)
        try:
            return self.recordings[key]
        except (KeyError, TypeError):
            raise MissingRecordingError(
                key, f"{self.model_name}: no recorded output for key {key!r}"
            ) from None


class FakeDetector(BaseDetector):
    """A detector with scripted scores, for testing guards, handlers and selectors.

    ``score`` is a number or a function of the validated input. With a threshold the label follows
    it; without one, scores >= 0.5 are ``factual``.

    Example:
        >>> FakeDetector(score=lambda inp: 0.0 if "moon" in inp.answer else 1.0).check(
        ...     "Q?", "made of cheese on the moon").label.value
        'hallucinated'
    """

    detector_name = "fake"

    score: float | Callable[[DetectorInput], float | None] = 1.0
    """Fixed score or a function of the input (None gives ``unverifiable``)."""
    latency: float = 0.0
    """Seconds each check takes."""
    error: Exception | None = None
    """Raise this from every check (to test fail-open / fail-closed)."""
    model: Any = None
    """Optional model to call once per check with the answer (to test usage accounting)."""

    _checks: int = PrivateAttr(default=0)

    @property
    def check_count(self) -> int:
        return self._checks

    async def _acheck(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        self._checks += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.error is not None:
            raise self.error
        if self.model is not None:
            await session.acall(self.model, inp.answer, stage="fake.call")
        score = self.score(inp) if callable(self.score) else self.score
        if score is None:
            return DetectionResult(
                detector=self.detector_name, label=Label.UNVERIFIABLE, explanation="no score"
            )
        cut = 0.5 if self.threshold is None else self.threshold
        label = Label.FACTUAL if score >= cut else Label.HALLUCINATED
        return DetectionResult(
            detector=self.detector_name,
            score=float(score),
            label=label,
            explanation=f"fake score {score:.3f} against {cut:.3f}",
        )


class NotGrounded(AssertionError):
    """Raised by :func:`assert_grounded`: the answer is not grounded; ``result`` is the check."""

    def __init__(self, message: str, result: DetectionResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def assert_grounded(
    answer: str,
    contexts: Sequence[Any],
    *,
    question: str = "What do the sources say?",
    detector: BaseDetector | None = None,
    min_score: float | None = None,
) -> DetectionResult:
    """Assert, in a test, that ``answer`` is supported by ``contexts``; return the check.

    Put grounding checks in your own test suite (pytest or unittest): the check is the
    detector's (default: the local ``RefChecker``, no model call, so the test stays offline),
    and a failure says which statements the sources do not support. A check that gives no
    verdict (an outage, an unparseable reply, nothing to check against) fails too: an
    unverified answer is never reported grounded.

    Args:
        answer: The text to check.
        contexts: The passages it must be grounded in (strings or Documents).
        question: The question the answer responds to (some detectors read it).
        detector: The detector to check with (default: ``RefChecker()``).
        min_score: Also require ``score >= min_score`` (default: the detector's own verdict).

    Raises:
        NotGrounded: (an ``AssertionError``, carrying the ``result``) the answer is not
            grounded, or the check gave no verdict.

    Example:
        >>> assert_grounded("Mars has two moons.", ["Mars has two moons, Phobos and Deimos."])
        ... # doctest: +ELLIPSIS
        DetectionResult(detector='refchecker', ...)
    """
    if detector is None:
        from truthguard.refchecker import RefChecker

        detector = RefChecker()
    result = detector.invoke({"question": question, "answer": answer, "contexts": list(contexts)})
    problems = []
    if result.passing is not True:
        problems.append(f"{result.detector} says {result.label.value}")
    if min_score is not None and (result.score is None or result.score < min_score):
        problems.append(f"score {result.score} below {min_score}")
    if problems:
        raise NotGrounded(
            f"answer not grounded in its {len(contexts)} context(s) ({'; '.join(problems)}): "
            f"{result.explanation}\nanswer: {answer[:500]!r}",
            result,
        )
    return result
