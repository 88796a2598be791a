"""LangGraph helpers: a check node and a router for ``add_conditional_edges``.

:func:`check_node` checks the answer in a graph's state with any detectors and writes an
:class:`~truthguard.guard.Attempt` (numbered per thread, with the verdict and every detector's
result) under ``truthguard``; :func:`route_on_verdict` sends the graph on by that verdict;
:func:`feedback` is the checker's notes for a regenerate node. Results are truthguard models that
LangGraph checkpoints keep with ``serde=checkpoint_serializer()``.

Example:
    >>> from langgraph.graph import END, START, StateGraph
    >>> from truthguard.testing import FakeDetector
    >>> class State(GroundingKeys):
    ...     question: str
    ...     answer: str
    ...     documents: list[str]
    >>> g = StateGraph(State)
    >>> _ = g.add_node("answer", lambda s: {"answer": "Paris.", "documents": ["Paris."]})
    >>> _ = g.add_node("check", check_node(FakeDetector(score=0.9)))
    >>> _ = g.add_edge(START, "answer")
    >>> _ = g.add_edge("answer", "check")
    >>> _ = g.add_conditional_edges("check", route_on_verdict(passed=END, failed="answer"))
    >>> g.compile().invoke({"question": "Capital of France?"})["truthguard"].passing
    True
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from typing_extensions import TypedDict  # the flavour LangGraph's MessagesState uses

from truthguard._clean import clean_text
from truthguard._sync import run_sync
from truthguard.detector import context_text
from truthguard.errors import InvalidInputError
from truthguard.guard._models import Attempt, GuardVerdict
from truthguard.guard.check import base_detector, run_detector, score_bounds, verdict_for
from truthguard.guard.extract import check_input, history_of
from truthguard.guard.policies import PolicyContext
from truthguard.guard.validation import input_errors
from truthguard.guard.verdict import check_detector_options, unique_keys
from truthguard.llm import message_text
from truthguard.result import DetectionResult, Usage

__all__ = [
    "STATE_KEY",
    "CheckSettings",
    "GroundingKeys",
    "check_node",
    "feedback",
    "route_on_verdict",
]

STATE_KEY = "truthguard"
"""State key the check node writes its :class:`~truthguard.guard.Attempt` to."""


class GroundingKeys(TypedDict, total=False):
    """The state key the check node writes; mix it into your graph's state."""

    truthguard: Attempt | None
    """The last check: ``number`` (1, then one more per failed check in a row), ``answer``,
    ``contexts``, ``results`` and ``verdict`` (``.passing``). A graph that answers several
    questions in one thread writes None here with each new question."""


class CheckSettings(BaseModel):
    """The options of :func:`check_node` (validated when the node is built)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    detectors: list[Runnable[Any, Any]] = Field(min_length=1)
    """Detectors run on the answer (a single one is accepted)."""
    question_key: str = "question"
    """State key of the question; absent: the last human message in ``messages``."""
    answer_key: str = "answer"
    """State key of the answer (a string or a message); absent: the last AI message."""
    context_key: str = "documents"
    """State key of the evidence (strings or Documents); absent: the tool results in
    ``messages``."""
    history_key: str | None = None
    """State key of the chat history that goes to every check as ``history`` (see
    :func:`~truthguard.guard.extract.history_of`); None: the first of ``chat_history``,
    ``history`` and ``messages`` the state has (in ``messages``, the user and AI turns before
    the question's own); ``""``: none."""
    combine: Literal["all", "any", "mean"] = "all"
    """``all``: every detector passes; ``any``: one does; ``mean``: mean normalised score."""
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Native-scale threshold per detector key, overriding the detector's own."""
    score_ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Native ``(low, high)`` score range per detector key for normalising (default (0, 1))."""
    mean_threshold: float = Field(default=0.5, ge=0, le=1)
    """Pass mark of the mean normalised score when ``combine="mean"``."""
    on_error: Literal["open", "closed"] = "closed"
    """An unavailable checker counts as a pass (open) or a failure (closed)."""
    check_timeout: float | None = Field(default=60.0, gt=0)
    """Seconds one detector may spend on the answer; None for no limit."""

    @field_validator("detectors", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        items = v if isinstance(v, list | tuple) else [v]
        for i, d in enumerate(items):
            if base_detector(d) is None:
                raise InvalidInputError(
                    f"detectors[{i}]", f"expected a truthguard detector, got {type(d).__name__}"
                )
        return list(items)

    @model_validator(mode="after")
    def _check(self) -> CheckSettings:
        check_detector_options(
            self.keys, thresholds=self.thresholds, score_ranges=self.score_ranges,
            bounds=score_bounds(self.keys, self.detectors),
        )  # fmt: skip
        return self

    @property
    def keys(self) -> list[str]:
        """One key per detector (its name, suffixed ``#2``... when repeated)."""
        return unique_keys(base_detector(d).detector_name for d in self.detectors)  # type: ignore[union-attr]


def _messages(state: Mapping[str, Any]) -> list[BaseMessage]:
    value = state.get("messages")
    return list(value) if isinstance(value, Sequence) else []


def _inputs(s: CheckSettings, state: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    from truthguard.agents._evidence import evidence_of, last_question

    if not isinstance(state, Mapping):
        raise InvalidInputError("state", f"expected a dict state, got {type(state).__name__}")
    messages = _messages(state)
    if s.question_key in state:
        question = clean_text(message_text(state[s.question_key]))
    else:
        question = last_question(messages)
    if s.answer_key in state and state[s.answer_key] is not None:
        answer = clean_text(message_text(state[s.answer_key]))
    else:
        last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last_ai is None:
            raise InvalidInputError(s.answer_key, "the state has no answer and no AI message")
        answer = clean_text(message_text(last_ai))
    value = state.get(s.context_key)
    if value is None:
        contexts = evidence_of(messages)
    elif isinstance(value, str):
        contexts = [clean_text(value)]
    elif isinstance(value, Sequence):
        contexts = [context_text(v, field=f"{s.context_key}[{i}]") for i, v in enumerate(value)]
    else:
        raise InvalidInputError(s.context_key, "expected a list of strings or Documents")
    return question, answer, contexts


def check_node(
    detectors: Runnable[Any, Any] | Sequence[Runnable[Any, Any]], **options: Any
) -> Runnable[Mapping[str, Any], dict[str, Attempt]]:
    """A graph node that checks the state's answer and writes an ``Attempt`` under
    ``truthguard`` (see :class:`CheckSettings` for the options; sync and async both work).

    Raises:
        InvalidInputError: An option is wrong (at build time), or the state lacks the answer
            (when the node runs); the field is named.
    """
    with input_errors():
        s = CheckSettings(detectors=detectors, **options)

    async def acheck(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Attempt]:
        started = time.perf_counter()
        question, answer, contexts = _inputs(s, state)
        history = history_of(state, s.history_key, question=question)
        payload = check_input(question, answer, contexts, history)
        results: list[DetectionResult] = list(
            await asyncio.gather(
                *(run_detector(d, payload, config, timeout=s.check_timeout) for d in s.detectors)
            )
        )
        verdict = _decide(s, results)
        previous = state.get(STATE_KEY)
        # Failed checks count up; a pass (or a None written with a new question) starts over.
        number = 1
        if isinstance(previous, Attempt) and not previous.passing:
            number = previous.number + 1
        attempt = Attempt(
            number=number,
            answer=answer,
            contexts=contexts,
            results=results,
            verdict=verdict,
            check_usage=Usage.total([r.usage for r in results]),
            seconds=time.perf_counter() - started,
        )
        from truthguard import otel

        otel.emit_verdict(s.keys, results, verdict, attempt=number)
        return {STATE_KEY: attempt}

    def check(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Attempt]:
        return run_sync(acheck(state, config))

    return RunnableLambda(check, afunc=acheck, name="truthguard_check")


def _decide(s: CheckSettings, results: list[DetectionResult]) -> GuardVerdict:
    return verdict_for(s, s.keys, s.detectors, results)


def route_on_verdict(
    *,
    passed: Hashable,
    failed: Hashable,
    exhausted: Hashable | None = None,
    max_attempts: int = 3,
    key: str = STATE_KEY,
) -> Callable[[Mapping[str, Any]], Hashable]:
    """A router for ``add_conditional_edges`` after :func:`check_node`.

    Args:
        passed: Where a passing answer goes (``END``, a node name).
        failed: Where a failing answer goes while checks are left (a regenerate node).
        exhausted: Where a failing answer goes once ``max_attempts`` checks were made in this
            thread (a fallback node); None: where a passing one goes, so the graph always ends
            (the failed verdict stays in the state).
        max_attempts: Checks allowed before ``exhausted``.
        key: The state key the check node wrote.

    Raises:
        InvalidInputError: ``max_attempts`` below 1 (at build time), or the state has no check
            under ``key`` (when routing).
    """
    if max_attempts < 1:
        raise InvalidInputError("max_attempts", "must be >= 1")
    last = passed if exhausted is None else exhausted

    def route(state: Mapping[str, Any]) -> Hashable:
        attempt = state.get(key) if isinstance(state, Mapping) else None
        if not isinstance(attempt, Attempt):
            raise InvalidInputError(key, "no check in the state: route after check_node")
        if attempt.passing:
            return passed
        return failed if attempt.number < max_attempts else last

    return route


def feedback(state: Mapping[str, Any], key: str = STATE_KEY) -> str:
    """The checker's notes on the last answer, for a regenerate node's prompt (the guard's
    Regenerate wording)."""
    attempt = state.get(key)
    if not isinstance(attempt, Attempt):
        raise InvalidInputError(key, "no check in the state: call feedback after check_node")
    return PolicyContext(question="", input=None, attempts=[attempt], uses=1).feedback()
