"""``GroundingMiddleware``: check a LangChain agent's answers against what its tools returned.

For ``langchain.agents.create_agent`` (LangChain 1.x). The model call is wrapped
(``wrap_model_call``): a reply that calls tools goes on untouched; a final answer is checked
against the evidence in the request (tool results, documents in state), with the conversation
before the current user turn as the detectors' ``history``, and, when it fails, the policies
run: :class:`~truthguard.guard.Regenerate` calls the model again with the checker's notes,
:class:`~truthguard.guard.Fallback` answers instead, :class:`~truthguard.guard.Raise` raises
:class:`~truthguard.errors.GuardRejected`, :class:`EndRun` ends the run without an answer and
:class:`HumanReview` pauses it for a person (``interrupt()``).

Streaming: every model call under the middleware runs without the streaming consumers
(``stream_mode="messages"``, ``astream_events``) and with the ``nostream`` tag, so no token of
an unchecked answer is streamed; the released message reaches ``stream_mode="messages"`` whole,
once the model node ends. While a check runs, ``stream_mode="custom"`` gets
``{"truthguard": {"stage": "checking", "attempt": N}}`` and then the verdict.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    PrivateStateAttr,
)
from langchain_core.callbacks import (
    BaseCallbackManager,
    adispatch_custom_event,
    dispatch_custom_event,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import patch_config, var_child_runnable_config
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, interrupt
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from truthguard._flow import adrive, drive
from truthguard._sync import run_sync
from truthguard.agents._evidence import answer_text, evidence_of, final_message, last_question
from truthguard.agents.policies import AgentStop, HumanReview, review_decision
from truthguard.errors import InvalidInputError
from truthguard.guard._models import Attempt, GuardResult, GuardVerdict
from truthguard.guard._runs import FEEDBACK_FIELD, scoped_config
from truthguard.guard.attempts import AskPolicy, AttemptLoop, Finish, ReleaseAnswer, RunAttempt
from truthguard.guard.check import base_detector, run_detector, score_bounds, verdict_for
from truthguard.guard.extract import check_input, history_of
from truthguard.guard.guard import VERDICT_EVENT
from truthguard.guard.policies import (
    TEMPERATURE_FIELD,
    Fallback,
    GuardPolicy,
    PolicyContext,
    Regenerate,
    ReRetrieve,
)
from truthguard.guard.validation import input_errors
from truthguard.guard.verdict import check_detector_options, unique_keys
from truthguard.llm import message_text
from truthguard.result import DetectionResult, Usage

__all__ = [
    "DEFAULT_FALLBACK",
    "PENDING_KEY",
    "STATE_KEY",
    "GroundingMiddleware",
    "GroundingSettings",
    "GroundingState",
]

STATE_KEY = "truthguard"
"""State key of the :class:`~truthguard.guard.GuardResult` of the last checked answer."""
PENDING_KEY = "truthguard_pending"
"""Private state key: a rejected answer waiting for review, or a run to end."""

DEFAULT_FALLBACK = (
    "I could not find support for an answer in the sources I checked, so I would rather not guess."
)
"""The default fallback answer (our wording)."""

# Why a checked tool call did not run (our wording); the model reads it as the tool's result.
TOOL_REJECTED_TEMPLATE = (
    "Not run: the text in '{argument}' is not supported by the sources you found. "
    "Checker's notes: {notes}. Revise it using only what the tools returned, then call the "
    "tool again."
)
_NOSTREAM = "nostream"  # LangGraph's stream_mode="messages" skips chat-model runs tagged so


class GroundingState(AgentState):
    """Agent state with the middleware's keys."""

    truthguard: NotRequired[Annotated[GuardResult | None, OmitFromInput]]
    truthguard_pending: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]


class GroundingSettings(BaseModel):
    """The options of :class:`GroundingMiddleware` (validated at construction)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    detectors: list[Runnable[Any, Any]] = Field(default_factory=list)
    """Detectors run on every final answer (a single one is accepted; default
    ``RefChecker()``, which makes no model call)."""
    policies: list[GuardPolicy] = Field(
        default_factory=lambda: [Regenerate(), Fallback(answer=DEFAULT_FALLBACK)]
    )
    """What to do with a failing answer, in order; none releases it marked ``rejected``."""
    max_attempts: int = Field(default=3, ge=1)
    """Most model answers per turn, the first included (terminal policies still apply)."""
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
    """Seconds one detector may spend on one answer; None for no limit."""
    evidence_tools: list[str] | None = None
    """Only these tools' results are evidence (None: every tool's)."""
    state_keys: list[str] = Field(default_factory=list)
    """State keys holding documents that are evidence too (a custom ``state_schema``)."""
    pass_history: bool = True
    """Give the detectors the conversation before the current user turn (its user and AI
    messages) as ``history``: what the user said earlier is evidence of what was said. Tool
    results are evidence already and are not repeated there. Off: only the evidence counts."""
    no_evidence: Literal["check", "pass"] = "check"
    """An answer given without any evidence: checked anyway (a reference-based detector then
    gives no verdict, which fails closed), or released unchecked (greetings, clarifying
    questions)."""
    regenerate_tool_choice: Any = "none"
    """``tool_choice`` of a regeneration call (``"none"``: answer from the evidence already
    found; None keeps the agent's). A regenerated reply that calls tools is a failed attempt."""
    tool_checks: dict[str, str] = Field(default_factory=dict)
    """Tool name -> argument whose text must be supported by the evidence before the tool
    runs (a message sent, a report filed); a failing call does not run and the model gets the
    checker's notes as the tool's result."""
    emit_events: bool = True
    """Dispatch each verdict as the custom callback event ``truthguard_verdict`` and as
    ``stream_mode="custom"`` chunks."""
    rejected_text_in_events: bool = False
    """Let the ``truthguard_verdict`` event of a failing answer carry its text (``answer``);
    off, it has ``answer: None``, so no event carries text the middleware withheld."""

    @field_validator("detectors", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        items = v if isinstance(v, list | tuple) else [v]
        for i, d in enumerate(items):
            if base_detector(d) is None:
                raise InvalidInputError(
                    f"detectors[{i}]",
                    f"expected a truthguard detector, got {type(d).__name__}",
                )
        return list(items)

    @model_validator(mode="after")
    def _check(self) -> GroundingSettings:
        if not self.detectors:
            from truthguard.refchecker import RefChecker

            self.detectors = [RefChecker()]
        check_detector_options(
            self.keys, thresholds=self.thresholds, score_ranges=self.score_ranges,
            bounds=score_bounds(self.keys, self.detectors),
        )  # fmt: skip
        for i, p in enumerate(self.policies):
            if isinstance(p, ReRetrieve):
                raise InvalidInputError(
                    f"policies[{i}]",
                    "ReRetrieve changes a chain's retriever; an agent retrieves through its "
                    "tools, so use Regenerate (its feedback asks the model to answer again)",
                )
        if self.max_attempts == 1 and any(not p.terminal for p in self.policies):
            raise InvalidInputError(
                "max_attempts", "is 1, so the non-terminal policies could never run"
            )
        return self

    @property
    def keys(self) -> list[str]:
        """One key per detector (its name, suffixed ``#2``... when repeated)."""
        return unique_keys(base_detector(d).detector_name for d in self.detectors)  # type: ignore[union-attr]


# -- the operations a check flow asks its driver to carry out -----------------------------------


@dataclass
class _CallModel:
    request: ModelRequest
    number: int


@dataclass
class _Invoke:
    runnable: Runnable[Any, Any]
    input: Any
    number: int


@dataclass
class _Check:
    question: str
    answer: str
    contexts: list[str]
    number: int
    history: list[Any]


@dataclass
class _Step:
    policy: GuardPolicy
    context: PolicyContext
    number: int


@dataclass
class _Emit:
    attempt: Attempt
    response_id: str | None


_Op = _CallModel | _Invoke | _Check | _Step | _Emit
_Flow = Generator[_Op, Any, Any]


def _model_feedback(**kwargs: Any) -> PolicyContext:
    # An agent has no prompt slot: Regenerate's feedback goes to the model as a message.
    kwargs["feedback_route"] = "model"
    return PolicyContext(**kwargs)


def _as_message(output: Any) -> AIMessage:
    if isinstance(output, AIMessage):
        return output
    return AIMessage(content=message_text(output))


def _response_id(message: BaseMessage) -> str | None:
    meta = getattr(message, "response_metadata", None) or {}
    return meta.get("id") or message.id


class GroundingMiddleware(AgentMiddleware):
    """Agent middleware that checks final answers against the evidence the agent saw.

    Evidence is every tool result in the model's request (a retriever tool's documents one by
    one when it returns them as an artifact) plus the documents under ``state_keys``. A final
    answer (a reply without tool calls) is checked by every detector; a failing one goes
    through ``policies`` in order, as in :class:`~truthguard.guard.HallucinationGuard`. The
    result of the last check is in the state under ``truthguard`` (a
    :class:`~truthguard.guard.GuardResult`: status, verdict, every attempt); keep it in a
    checkpoint with ``checkpointer=InMemorySaver(serde=checkpoint_serializer())``.

    Both sync (``invoke`` / ``stream``) and async (``ainvoke`` / ``astream``) runs are
    supported. See the module docstring for what streaming consumers see.

    Example:
        >>> from langchain.agents import create_agent
        >>> from truthguard.testing import OpenAIServer
        >>> with OpenAIServer(reply="Hello!") as server:
        ...     agent = create_agent(
        ...         server.chat_model(), middleware=[GroundingMiddleware(no_evidence="pass")]
        ...     )
        ...     agent.invoke({"messages": [("user", "Hi")]})["messages"][-1].content
        'Hello!'
    """

    state_schema = GroundingState

    def __init__(self, **options: Any) -> None:
        with input_errors():
            self.settings = GroundingSettings(**options)
        self.tools = []

    @property
    def name(self) -> str:
        return "GroundingMiddleware"

    # -- model calls ----------------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse | ExtendedModelResponse:
        config = var_child_runnable_config.get() or {}
        run = partial(self._do, handler=handler, config=config, request=request)
        # GraphBubbleUp: an interrupt or a jump from inside is LangGraph's, not the flow's
        return drive(self._flow(request), run, passthrough=(GraphBubbleUp,))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | ExtendedModelResponse:
        config = var_child_runnable_config.get() or {}
        run = partial(self._ado, handler=handler, config=config, request=request)
        return await adrive(self._flow(request), run, passthrough=(GraphBubbleUp,))

    def _do(self, op: _Op, handler: Any, config: RunnableConfig, request: ModelRequest) -> Any:
        if isinstance(op, _CallModel):
            with scoped_config(self._hidden(config, op.number)):
                return handler(op.request)
        if isinstance(op, _Invoke):
            hidden = self._hidden(config, op.number)
            with scoped_config(hidden):
                return op.runnable.invoke(op.input, hidden)
        if isinstance(op, _Check):
            hidden = self._hidden(config, op.number)
            self._status(request, {"stage": "checking", "attempt": op.number})
            return run_sync(self._acheck(op, hidden))
        if isinstance(op, _Step):
            with scoped_config(self._hidden(config, op.number)):
                return run_sync(op.policy.astep(op.context))
        self._emit(op, request)
        if self.settings.emit_events:
            dispatch_custom_event(VERDICT_EVENT, self._event_data(op), config=config)
        return None

    async def _ado(
        self, op: _Op, handler: Any, config: RunnableConfig, request: ModelRequest
    ) -> Any:
        if isinstance(op, _CallModel):
            with scoped_config(self._hidden(config, op.number)):
                return await handler(op.request)
        if isinstance(op, _Invoke):
            hidden = self._hidden(config, op.number)
            with scoped_config(hidden):
                return await op.runnable.ainvoke(op.input, hidden)
        if isinstance(op, _Check):
            hidden = self._hidden(config, op.number)
            self._status(request, {"stage": "checking", "attempt": op.number})
            with scoped_config(hidden):
                return await self._acheck(op, hidden)
        if isinstance(op, _Step):
            with scoped_config(self._hidden(config, op.number)):
                return await op.policy.astep(op.context)
        self._emit(op, request)
        if self.settings.emit_events:
            await adispatch_custom_event(VERDICT_EVENT, self._event_data(op), config=config)
        return None

    # -- the check flow (no I/O: every call is an operation its driver carries out) -------------

    def _flow(self, request: ModelRequest) -> _Flow:
        settings = self.settings
        first: ModelResponse = yield _CallModel(request, 1)  # its errors are the agent's own
        message = final_message(first.result)
        if message is None or message.tool_calls:
            return first  # a step of the tool loop, not an answer
        messages = list(request.messages)
        contexts = evidence_of(
            messages,
            request.state,
            tools=settings.evidence_tools,
            state_keys=settings.state_keys,
        )
        if not contexts and settings.no_evidence == "pass":
            return first
        question = last_question(messages)
        history = self._history(messages, question)
        loop = AttemptLoop(
            question=question,
            input=messages,
            policies=settings.policies,
            max_attempts=settings.max_attempts,
            context=_model_feedback,
            history=history,
        )
        responses: dict[int, ModelResponse] = {}
        action: Any = loop.start()
        while not isinstance(action, Finish):
            if isinstance(action, RunAttempt):
                started = time.perf_counter()
                if action.number == 1:
                    response = first
                else:
                    try:
                        if action.runnable is not None:
                            out = yield _Invoke(action.runnable, action.input, action.number)
                            response = ModelResponse(result=[_as_message(out)])
                        else:
                            req = self._attempt_request(request, action)
                            response = yield _CallModel(req, action.number)
                    except Exception as e:
                        failed = Attempt(
                            number=action.number,
                            policy=action.policy,
                            error=f"{type(e).__name__}: {e}",
                            seconds=time.perf_counter() - started,
                        )
                        action = loop.attempted(failed, error=e)
                        continue
                responses[action.number] = response
                attempt = yield from self._attempt(
                    action, response, question, history, contexts, started
                )
                action = loop.attempted(attempt)
            elif isinstance(action, AskPolicy):
                if isinstance(action.policy, AgentStop):
                    return self._stop(action.policy, loop, contexts)
                try:
                    step = yield _Step(action.policy, action.context, action.number)
                except Exception as e:  # GuardRejected (the Raise policy) is re-raised here
                    action = loop.policy_failed(e)
                else:
                    action = loop.stepped(step)
            else:
                assert isinstance(action, ReleaseAnswer)
                released = AIMessage(content=action.answer)
                responses[action.number] = ModelResponse(result=[released])
                action = loop.released(released)
        result = loop.result()
        number = next(
            a.number
            for a in reversed(result.attempts)
            if a.answer is not None and a.number in responses
        )
        return ExtendedModelResponse(
            model_response=responses[number],
            command=Command(update={STATE_KEY: result, PENDING_KEY: None}),
        )

    def _attempt(
        self,
        action: RunAttempt,
        response: ModelResponse,
        question: str,
        history: list[Any],
        contexts: list[str],
        started: float,
    ) -> Generator[_Op, Any, Attempt]:
        message = final_message(response.result)
        base: dict[str, Any] = {"number": action.number, "policy": action.policy}
        if message is None or message.tool_calls:
            return Attempt(
                **base,
                output=message,
                error="the model called tools when asked to answer",
                seconds=time.perf_counter() - started,
            )
        answer = answer_text(message)
        if not answer.strip():
            return Attempt(
                **base,
                output=message,
                error="the model gave an empty answer",
                seconds=time.perf_counter() - started,
            )
        attempt = Attempt(**base, answer=answer, output=message, contexts=contexts)
        if not action.check:
            attempt.seconds = time.perf_counter() - started
            return attempt
        results = yield _Check(question, answer, contexts, action.number, history)
        attempt.results = results
        attempt.verdict = self._decide(results)
        attempt.check_usage = Usage.total([r.usage for r in results])
        attempt.seconds = time.perf_counter() - started
        yield _Emit(attempt, _response_id(message))
        return attempt

    def _attempt_request(self, request: ModelRequest, action: RunAttempt) -> ModelRequest:
        messages = list(action.input) if isinstance(action.input, list) else request.messages
        feedback = action.configurable.get(FEEDBACK_FIELD)
        if feedback:
            messages = [*messages, HumanMessage(content=feedback)]
        model_settings = dict(request.model_settings)
        if action.configurable.get(TEMPERATURE_FIELD) is not None:
            model_settings["temperature"] = action.configurable[TEMPERATURE_FIELD]
        tool_choice = request.tool_choice
        if self.settings.regenerate_tool_choice is not None and request.tools:
            tool_choice = self.settings.regenerate_tool_choice
        return request.override(
            messages=messages, model_settings=model_settings, tool_choice=tool_choice
        )

    def _stop(
        self, policy: AgentStop, loop: AttemptLoop, contexts: list[str]
    ) -> ExtendedModelResponse:
        """Withhold the answer: the after-model hook ends the run or asks for a review."""
        final = next((a for a in reversed(loop.attempts) if a.answer is not None), None)
        result = GuardResult(
            question=loop.question,
            answer=None,  # withheld: the refused answers stay in the attempts
            output=None,
            status="rejected",
            passing=False,
            verdict=final.verdict if final else None,
            attempts=loop.attempts,
            usage=loop.usage(),
        )
        pending: dict[str, Any] = {"action": "end"}
        if isinstance(policy, HumanReview) and final is not None:
            pending = {
                "action": "review",
                "answer": final.answer,
                "evidence": contexts,
                "reject_answer": policy.reject_answer,
            }
        return ExtendedModelResponse(
            model_response=ModelResponse(result=[]),
            command=Command(update={STATE_KEY: result, PENDING_KEY: pending}),
        )

    # -- checks ---------------------------------------------------------------------------------

    def _history(self, messages: list[BaseMessage], question: str) -> list[Any]:
        """The turns before the current user turn (the question's own message and the tool
        calls after it are not history)."""
        return history_of(messages, question=question) if self.settings.pass_history else []

    async def _acheck(self, op: _Check, config: RunnableConfig) -> list[DetectionResult]:
        payload = check_input(op.question, op.answer, op.contexts, op.history)
        return list(
            await asyncio.gather(
                *(
                    run_detector(d, payload, config, timeout=self.settings.check_timeout)
                    for d in self.settings.detectors
                )
            )
        )

    def _decide(self, results: list[DetectionResult]) -> GuardVerdict:
        s = self.settings
        return verdict_for(s, s.keys, s.detectors, results)

    # -- streaming and events -------------------------------------------------------------------

    @staticmethod
    def _hidden(config: Mapping[str, Any], number: int) -> RunnableConfig:
        """The config of runs under the middleware: no streaming consumer, tagged."""
        from langchain_core.tracers._streaming import _StreamingCallbackHandler

        tags = [f"guard:attempt:{number}", _NOSTREAM]
        callbacks = config.get("callbacks")
        if isinstance(callbacks, BaseCallbackManager):
            manager = callbacks.copy()
            for h in [*manager.handlers, *manager.inheritable_handlers]:
                if isinstance(h, _StreamingCallbackHandler):
                    manager.remove_handler(h)
            manager.add_tags(tags, inherit=True)
            return patch_config(config, callbacks=manager)  # type: ignore[arg-type]
        kept = [h for h in callbacks or [] if not isinstance(h, _StreamingCallbackHandler)]
        hidden = patch_config(config, callbacks=kept)  # type: ignore[arg-type]
        hidden["tags"] = [*config.get("tags", []), *tags]
        return hidden

    @staticmethod
    def _status(request: ModelRequest, data: dict[str, Any]) -> None:
        runtime = request.runtime
        writer = getattr(runtime, "stream_writer", None) if runtime is not None else None
        if writer is not None:
            writer({STATE_KEY: data})

    def _event_data(self, op: _Emit) -> dict[str, Any]:
        a = op.attempt
        return {
            "attempt": a.number,
            "policy": a.policy,
            "answer": a.answer
            if (a.verdict is not None and a.verdict.passing)
            or self.settings.rejected_text_in_events
            else None,
            "verdict": a.verdict.model_dump() if a.verdict else None,
        }

    def _emit(self, op: _Emit, request: ModelRequest) -> None:
        from truthguard import otel

        a = op.attempt
        assert a.verdict is not None
        if self.settings.emit_events:
            self._status(
                request,
                {
                    "stage": "verdict",
                    "attempt": a.number,
                    "passing": a.verdict.passing,
                    "reason": a.verdict.reason,
                },
            )
        otel.emit_verdict(
            self.settings.keys,
            a.results,
            a.verdict,
            attempt=a.number,
            policy=a.policy,
            response_id=op.response_id,
        )

    # -- review and end (after the model node, so nothing withheld is ever in the messages) -----

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: GroundingState, runtime: Any) -> dict[str, Any] | None:
        return self._after_model(state)

    @hook_config(can_jump_to=["end"])
    async def aafter_model(self, state: GroundingState, runtime: Any) -> dict[str, Any] | None:
        return self._after_model(state)

    def _after_model(self, state: Mapping[str, Any]) -> dict[str, Any] | None:
        pending = state.get(PENDING_KEY)
        if not pending:
            return None
        result: GuardResult = state[STATE_KEY]
        if pending["action"] == "end":
            return {"jump_to": "end", PENDING_KEY: None}
        decision = interrupt(
            {
                "question": result.question,
                "answer": pending["answer"],
                "evidence": pending["evidence"],
                "reason": result.verdict.reason if result.verdict else "",
                "verdict": result.verdict.model_dump() if result.verdict else None,
            }
        )
        action, edited = review_decision(decision)
        if action == "reject" and pending.get("reject_answer") is None:
            return {"jump_to": "end", PENDING_KEY: None}
        text = {
            "approve": pending["answer"],
            "edit": edited,
            "reject": pending.get("reject_answer"),
        }[action]
        message = AIMessage(content=text)
        review = Attempt(
            number=len(result.attempts) + 1, policy="human_review", answer=text, output=message
        )
        released = result.model_copy(
            update={
                "answer": text,
                "output": message,
                "status": "fallback",
                "verdict": None,
                "attempts": [*result.attempts, review],
            }
        )
        return {"messages": [message], STATE_KEY: released, PENDING_KEY: None}

    # -- checked tool calls ---------------------------------------------------------------------

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        text = self._checked_text(request)
        if text is None:
            return handler(request)
        op = self._tool_check(request, text)
        config = var_child_runnable_config.get() or {}
        results = run_sync(self._acheck(op, self._hidden(config, 1)))
        refused = self._tool_verdict(request, op, results)
        return refused if refused is not None else handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        text = self._checked_text(request)
        if text is None:
            return await handler(request)
        op = self._tool_check(request, text)
        config = var_child_runnable_config.get() or {}
        results = await self._acheck(op, self._hidden(config, 1))
        refused = self._tool_verdict(request, op, results)
        return refused if refused is not None else await handler(request)

    def _checked_text(self, request: Any) -> str | None:
        call = request.tool_call
        argument = self.settings.tool_checks.get(call["name"])
        if argument is None:
            return None
        text = (call.get("args") or {}).get(argument)
        # A missing or non-text argument is the tool's own validation error to report.
        return text if isinstance(text, str) and text.strip() else None

    def _tool_check(self, request: Any, text: str) -> _Check:
        messages = list((request.state or {}).get("messages", []))
        contexts = evidence_of(
            messages,
            request.state,
            tools=self.settings.evidence_tools,
            state_keys=self.settings.state_keys,
        )
        question = last_question(messages)
        return _Check(question, text, contexts, 1, self._history(messages, question))

    def _tool_verdict(
        self, request: Any, op: _Check, results: list[DetectionResult]
    ) -> ToolMessage | None:
        from truthguard import otel

        verdict = self._decide(results)
        otel.emit_verdict(
            self.settings.keys,
            results,
            verdict,
            attempt=1,
            policy=f"tool:{request.tool_call['name']}",
        )
        if verdict.passing:
            return None
        call = request.tool_call
        notes = "; ".join(r.explanation for r in results if r.explanation) or verdict.reason
        return ToolMessage(
            content=TOOL_REJECTED_TEMPLATE.format(
                argument=self.settings.tool_checks[call["name"]], notes=notes
            ),
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )
