"""Follow runs from callback events and assemble (question, answer, contexts) captures.

A *capture root* is the top-most run this handler sees: a run with no parent, or whose parent
the handler never saw (it was attached below the top). Retriever results anywhere under a root
become its contexts; when the root ends, its input and output give the question and answer,
and its input the chat history (the turns before the question: a ``chat_history`` key, or the
earlier messages of a chat model's input).
A root that is a ``HallucinationGuard`` gives its :class:`~truthguard.guard.GuardResult`: the
answer it checked, that attempt's contexts and the guard's own verdict.
Pure bookkeeping, no I/O; callers hold no lock (this class has its own).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from truthguard._clean import clean_text
from truthguard.callbacks.records import json_safe
from truthguard.detector import context_text
from truthguard.errors import InvalidInputError
from truthguard.guard._models import GuardResult
from truthguard.guard.extract import answer_of, contexts_of, history_of, question_of
from truthguard.llm import message_text
from truthguard.otel import current_span_context

__all__ = ["Capture", "RunTracker"]


@dataclass
class Capture:
    """One answer ready to be scored."""

    run_id: UUID
    parent_run_id: UUID | None
    question: str
    answer: str
    contexts: list[str]
    tags: list[str]
    metadata: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    """Input fields forwarded to the detector (``detector_fields``)."""
    history: list[Any] = field(default_factory=list)
    """The chat turns before the question, passed to the detector as ``history``."""
    captured_at: float = field(default_factory=time.time)
    span_context: Any = None
    """The OpenTelemetry span of the answer: the one current when it was captured, or the one
    a LangChain tracer keeps for its run (None when OpenTelemetry is not in use)."""
    guard_attempt: Any = None
    """The guard's :class:`~truthguard.guard.Attempt` this answer came from, when the run was a
    ``HallucinationGuard`` (its results and verdict may be recorded instead of a new check)."""
    guard_status: str | None = None
    """The guard's status (passed / fallback / filtered / rejected), when the run was a guard."""
    guard_released: str | None = None
    """The text the guard released when it is not ``answer`` (a fallback's), else None."""
    guard_attempts: list[Any] = field(default_factory=list)
    """Every :class:`~truthguard.guard.Attempt` of the guarded run, in order."""

    def __post_init__(self) -> None:
        if self.span_context is None:
            self.span_context = current_span_context(self.run_id)


@dataclass
class _Root:
    parent_run_id: UUID | None
    inputs: Any
    tags: list[str]
    metadata: dict[str, Any]
    contexts: list[str] = field(default_factory=list)
    question: str | None = None  # set for model roots (last human message)
    history: list[Any] = field(default_factory=list)  # model roots: the messages before it
    verdicts: list[Any] = field(default_factory=list)  # a guard's truthguard_verdict events
    # a guard's answer per attempt, from its attempt runs: its verdict events carry only the
    # released ones unless the guard's rejected_text_in_events asks
    attempt_answers: dict[int, str] = field(default_factory=dict)


def _attempt_number(tags: list[str] | None) -> int | None:
    """N of a ``guard:attempt:N`` tag, if any."""
    for tag in tags or ():
        if tag.startswith("guard:attempt:"):
            try:
                return int(tag.rsplit(":", 1)[1])
            except ValueError:
                return None
    return None


def _last_human(messages: Any) -> str | None:
    flat = [m for batch in messages for m in batch] if messages else []
    humans = [m for m in flat if getattr(m, "type", None) == "human"]
    if humans:
        return message_text(humans[-1])
    return message_text(flat[-1]) if flat else None


def _generation_text(response: Any) -> str | None:
    gens = getattr(response, "generations", None) or []
    if not gens or not gens[0]:
        return None
    g = gens[0][0]
    msg = getattr(g, "message", None)
    return message_text(msg) if msg is not None else getattr(g, "text", None)


class RunTracker:
    """Maps every run to its capture root and builds a :class:`Capture` when a root ends."""

    def __init__(
        self,
        question_key: str | None = None,
        answer_key: str | None = None,
        detector_fields: tuple[str, ...] = (),
        history_key: str | None = None,
    ) -> None:
        self.question_key = question_key
        self.answer_key = answer_key
        self.detector_fields = detector_fields
        self.history_key = history_key
        self._lock = threading.Lock()
        self._root_of: dict[UUID, UUID] = {}
        self._roots: dict[UUID, _Root] = {}
        self._attempt_of: dict[UUID, int] = {}  # a root's own child runs tagged guard:attempt:N
        self.skipped = 0
        """Root runs that ended without a recognisable question or answer."""

    def _register(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        inputs: Any,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> _Root | None:
        with self._lock:
            if parent_run_id is not None and parent_run_id in self._root_of:
                self._root_of[run_id] = self._root_of[parent_run_id]
                if parent_run_id in self._roots:  # a guard's attempt is its root's own child
                    number = _attempt_number(tags)
                    if number is not None:
                        self._attempt_of[run_id] = number
                return None
            self._root_of[run_id] = run_id
            root = _Root(parent_run_id, inputs, list(tags or []), json_safe(metadata))
            self._roots[run_id] = root
            return root

    def start_chain(self, run_id: UUID, parent_run_id: UUID | None, inputs: Any, **kw: Any) -> None:
        self._register(run_id, parent_run_id, inputs, kw.get("tags"), kw.get("metadata"))

    def start_model(
        self, run_id: UUID, parent_run_id: UUID | None, messages: Any, **kw: Any
    ) -> None:
        root = self._register(run_id, parent_run_id, None, kw.get("tags"), kw.get("metadata"))
        if root is not None:
            root.question = _last_human(messages)
            if self.history_key != "":  # the model's own messages are the conversation
                flat = [m for batch in messages for m in batch] if messages else []
                root.history = history_of(flat, question=root.question)

    def start_llm(self, run_id: UUID, parent_run_id: UUID | None, prompts: Any, **kw: Any) -> None:
        root = self._register(run_id, parent_run_id, None, kw.get("tags"), kw.get("metadata"))
        if root is not None and prompts:
            root.question = str(prompts[-1])

    def start_other(self, run_id: UUID, parent_run_id: UUID | None, **kw: Any) -> None:
        self._register(run_id, parent_run_id, None, kw.get("tags"), kw.get("metadata"))

    def retrieved(self, run_id: UUID, documents: Any) -> None:
        with self._lock:
            root_id = self._root_of.pop(run_id, None)
            if root_id == run_id:  # a retriever run on its own: no answer to score, forget it
                self._roots.pop(run_id, None)
                return
            root = self._roots.get(root_id) if root_id is not None else None
            if root is None:
                return
            for d in documents or []:
                try:
                    root.contexts.append(context_text(d))
                except InvalidInputError:
                    continue  # an unknown document type carries no text we can use

    def end(self, run_id: UUID, output: Any, inputs: Any = None) -> Capture | None:
        """A run ended; returns a capture when it was a root with a question and an answer.

        ``inputs`` are the run's inputs as known at its end: a streamed chain
        (``stream`` / ``astream``) starts with a placeholder and reports them only then.
        """
        with self._lock:
            root_id = self._root_of.pop(run_id, None)
            number = self._attempt_of.pop(run_id, None)
            if root_id != run_id:
                root = self._roots.get(root_id) if root_id is not None else None
                if number is not None and root is not None:
                    # none in a policy's own model call
                    with contextlib.suppress(InvalidInputError):
                        root.attempt_answers[number] = clean_text(answer_of(output))
                return None
            root = self._roots.pop(run_id)
        if inputs is not None:
            root.inputs = inputs
        if isinstance(getattr(output, "result", None), GuardResult):  # StreamingGuard's last chunk
            output = output.result
        if isinstance(output, GuardResult):
            return self._guard_capture(run_id, root, output)
        if isinstance(output, str) and root.verdicts:  # a guard with output="answer"
            released = next((a for a in reversed(root.verdicts) if a.answer == output), None)
            last = root.verdicts[-1]
            head = output.split(". ", 1)[0][:40].strip()  # a Filter's first kept sentence
            if released is None and not last.passing and head not in (last.answer or ""):
                # Text no check was on, after a refusal: a fallback, recorded with the refusal
                # (a Filter's text starts with a sentence of the refused answer: checked below).
                released = last
            if released is not None:
                result = GuardResult(
                    question=question_of(root.inputs, self.question_key)
                    if root.inputs is not None
                    else released.answer,
                    answer=output,
                    status="passed" if released.passing else "fallback",
                    passing=released.passing,
                    verdict=released.verdict,
                    attempts=[released],
                    usage=released.check_usage,
                )
                return self._guard_capture(run_id, root, result, attempts=root.verdicts)
        try:
            if root.question is not None:  # a model run: output is an LLMResult
                question, answer = root.question, _generation_text(output)
                if answer is None:
                    raise InvalidInputError("output", "no generation")
                history = root.history
            else:
                question = question_of(root.inputs, self.question_key)
                answer = answer_of(output, self.answer_key)
                history = history_of(root.inputs, self.history_key, question=clean_text(question))
            contexts = root.contexts or contexts_of(output)
        except InvalidInputError:
            return self._skip()
        return Capture(
            run_id=run_id,
            parent_run_id=root.parent_run_id,
            question=clean_text(question),
            answer=clean_text(answer),
            contexts=[clean_text(c) for c in contexts],
            tags=root.tags,
            metadata=root.metadata,
            extra=self._extra(root),
            history=history,
        )

    def _skip(self) -> None:
        with self._lock:
            self.skipped += 1

    def _extra(self, root: _Root) -> dict[str, Any]:
        """The input fields forwarded to the detector (``detector_fields``)."""
        if not self.detector_fields or not isinstance(root.inputs, Mapping):
            return {}
        return {k: root.inputs[k] for k in self.detector_fields if k in root.inputs}

    def _guard_capture(
        self, run_id: UUID, root: _Root, result: GuardResult, attempts: list[Any] | None = None
    ) -> Capture | None:
        """A guard's run: the answer its verdict is on (the released one, or when rejected or
        replaced by a fallback the last one refused), with the contexts of that attempt, not of
        every attempt."""
        attempt = next((a for a in reversed(result.attempts) if a.answer is not None), None)
        if result.status == "fallback":  # the fallback text was never checked: the refusal was
            attempt = next((a for a in reversed(result.attempts) if a.verdict), attempt)
        if attempt is None:
            return self._skip()
        if attempt.verdict is None and result.verdict is not None and result.status == "fallback":
            # No answer was checked (the chain raised or gave an empty one): the result's verdict
            # says so, and the record carries it instead of checking the fallback text.
            attempt = attempt.model_copy(update={"verdict": result.verdict})
        question = clean_text(result.question)
        try:  # the guard read its input already; only this handler's own history_key may miss
            history = history_of(root.inputs, self.history_key, question=question)
        except InvalidInputError:
            return self._skip()
        return Capture(
            run_id=run_id,
            parent_run_id=root.parent_run_id,
            question=question,
            answer=clean_text(attempt.answer or ""),
            contexts=[clean_text(c) for c in attempt.contexts or dict.fromkeys(root.contexts)],
            tags=root.tags,
            metadata=root.metadata,
            extra=self._extra(root),
            history=history,
            guard_attempt=attempt,
            guard_status=result.status,
            guard_released=result.answer if result.answer != attempt.answer else None,
            guard_attempts=list(result.attempts if attempts is None else attempts),
        )

    def verdict(self, run_id: UUID, data: Any) -> None:
        """A guard's ``truthguard_verdict`` event: kept on the root, so a guard returning its
        answer as text (``output="answer"``) is recorded with its verdict too."""
        from truthguard.guard._models import Attempt, GuardVerdict

        if not isinstance(data, Mapping) or "verdict" not in data:
            return
        try:
            number = int(data.get("attempt") or 1)
            answer = data.get("answer")
            attempt = Attempt(
                number=number,
                policy=data.get("policy"),
                answer=answer,
                contexts=list(data.get("contexts") or []),
                verdict=GuardVerdict.model_validate(data["verdict"]),
            )
        except Exception:  # an event of another shape: nothing to keep
            return
        with self._lock:
            root_id = self._root_of.get(run_id)
            root = self._roots.get(root_id) if root_id is not None else None
            if root is not None:
                if answer is None:  # a withheld answer: the attempt run's own output
                    attempt.answer = root.attempt_answers.get(number)
                root.verdicts.append(attempt)

    def forget(self, run_id: UUID) -> None:
        """Drop a run that gives nothing to score: one that failed, or a tool / retriever run
        that was followed only to find its root."""
        with self._lock:
            self._attempt_of.pop(run_id, None)
            if self._root_of.pop(run_id, None) == run_id:
                self._roots.pop(run_id, None)

    @property
    def open_runs(self) -> int:
        with self._lock:
            return len(self._roots)
