"""Verdicts as OpenTelemetry ``gen_ai.evaluation.result`` events.

The GenAI semantic conventions define one event for the result of evaluating a model's output,
parented to the span of the operation it evaluates. truthguard emits it for every guard
verdict (one event per detector), every callback-handler record and every LlamaIndex handler
record, with the conventions' attributes (``gen_ai.evaluation.name``,
``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label``,
``gen_ai.evaluation.explanation``, ``gen_ai.response.id``, ``error.type``) and the guard's own
under ``truthguard.*`` (``truthguard.decision``, ``truthguard.attempt``, ...).

Where it goes: an event on the current span when it is recording (the span around the call
being checked), else on the span a callback tracer such as OpenInference's LangChain
instrumentor keeps for the LangChain run being checked (those tracers never make their spans
current); otherwise a zero-length span of its own named
``gen_ai.evaluation.result`` carrying the event, child of the span context it was given (or of
the current context).

Nothing happens unless the process uses OpenTelemetry (``opentelemetry.trace`` is imported, as
any SDK or instrumentor set-up does) and a span is recording or a tracer provider is set;
truthguard never imports OpenTelemetry itself unless :func:`configure` turned emission on.
``configure(enabled=False)`` turns it off.

Example:
    >>> from truthguard.otel import evaluation_attributes
    >>> evaluation_attributes("refchecker", score=0.9, label="pass")["gen_ai.evaluation.name"]
    'refchecker'
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from truthguard.callbacks.records import ScoreRecord
    from truthguard.guard._models import GuardVerdict
    from truthguard.result import DetectionResult

__all__ = [
    "ATTEMPT",
    "DECIDED_BY",
    "DECISION",
    "ERROR_TYPE",
    "EVALUATION_EVENT",
    "EXPLANATION",
    "NAME",
    "RESPONSE_ID",
    "SCORE_LABEL",
    "SCORE_VALUE",
    "active",
    "configure",
    "current_span_context",
    "emit_evaluation",
    "emit_record",
    "emit_result",
    "emit_verdict",
    "evaluation_attributes",
    "langchain_span",
    "response_id",
]

EVALUATION_EVENT = "gen_ai.evaluation.result"
"""The GenAI semantic conventions' event name."""
NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
ERROR_TYPE = "error.type"
DECISION = "truthguard.decision"
"""``pass`` or ``fail``: what the guard decided about the answer (all detectors combined)."""
ATTEMPT = "truthguard.attempt"
"""The attempt number of the checked answer (1 for the first)."""
DECIDED_BY = "truthguard.decided_by"
"""Which stage of a cascade decided (``local``, ``llm``, ``local:escalation_timed_out``, ...);
absent for other detectors."""

_TRACER = "truthguard"
_MAX_TEXT = 4096  # an explanation is a sentence or two; never ship a whole document
_enabled: bool | None = None


def configure(*, enabled: bool | None) -> None:
    """Turn emission on (``True``: imports OpenTelemetry if it is installed), off (``False``),
    or back to automatic (``None``: on once the process uses OpenTelemetry)."""
    global _enabled
    _enabled = enabled


def active() -> bool:
    """True when OpenTelemetry is in use in this process (cheap; nothing is imported unless
    :func:`configure` asked for it)."""
    if _enabled is False:
        return False
    if "opentelemetry.trace" in sys.modules:
        return True
    if _enabled is None:
        return False
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def current_span_context(run_id: Any = None) -> Any:
    """The context of the span to parent a later event to (a record scored on another
    thread): the current OpenTelemetry span, else the span a LangChain tracer keeps for
    ``run_id`` (or for the current run); None when there is none or emission is off."""
    if not active():
        return None
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        return ctx
    span = langchain_span(run_id)
    return span.get_span_context() if span is not None else None


def langchain_span(run_id: Any = None) -> Any:
    """The span a callback-based tracer (OpenInference's LangChain instrumentor) keeps for
    ``run_id``, or for the LangChain run the caller is inside; None when there is none.

    Callback tracers do not make their spans current (a callback cannot be sure to detach
    it), so the current-span lookup alone would miss the run being checked. They are found by
    duck typing: a callback handler of the current run with ``get_span(run_id)``; for a
    ``run_id`` outside the current run, OpenInference's instrumentor if it is active.
    """
    langchain = sys.modules.get("langchain_core.runnables.config")
    if langchain is None:
        return None
    from langchain_core.callbacks import BaseCallbackManager

    config = langchain.var_child_runnable_config.get() or {}
    for manager in config.values():
        if not isinstance(manager, BaseCallbackManager):
            continue
        wanted = run_id or manager.parent_run_id
        if wanted is None:
            continue
        for handler in [*manager.handlers, *manager.inheritable_handlers]:
            get_span = getattr(handler, "get_span", None)
            span = get_span(wanted) if callable(get_span) else None
            if span is not None:
                return span
    instrumentor = sys.modules.get("openinference.instrumentation.langchain")
    if run_id is not None and instrumentor is not None:
        instance = getattr(instrumentor.LangChainInstrumentor, "_instance", None)
        tracer = getattr(instance, "_tracer", None)
        if tracer is not None:
            return tracer.get_span(run_id)
    return None


def _text(value: str) -> str:
    return value if len(value) <= _MAX_TEXT else value[: _MAX_TEXT - 1] + "…"


def evaluation_attributes(
    name: str,
    *,
    score: float | None = None,
    label: str | None = None,
    explanation: str | None = None,
    response_id: str | None = None,
    error_type: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The event's attributes (pure): conventions' names, unset values left out."""
    attrs: dict[str, Any] = {NAME: name}
    if score is not None:
        attrs[SCORE_VALUE] = float(score)
    if label is not None:
        attrs[SCORE_LABEL] = label
    if explanation:
        attrs[EXPLANATION] = _text(explanation)
    if response_id:
        attrs[RESPONSE_ID] = response_id
    if error_type:
        attrs[ERROR_TYPE] = error_type
    for key, value in (extra or {}).items():
        if value is not None:
            attrs[key] = value
    return attrs


def emit_evaluation(attributes: Mapping[str, Any], *, span_context: Any = None) -> None:
    """Emit one ``gen_ai.evaluation.result`` event with ``attributes`` (see the module doc)."""
    if not active():
        return
    from opentelemetry import trace

    current = trace.get_current_span()
    if span_context is None and current.is_recording():
        current.add_event(EVALUATION_EVENT, dict(attributes))
        return
    if span_context is None and (run_span := langchain_span()) is not None:
        if run_span.is_recording():  # the LangChain run being checked, traced by callbacks
            run_span.add_event(EVALUATION_EVENT, dict(attributes))
            return
        span_context = run_span.get_span_context()
    if span_context is None and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return  # no span to attach to and no SDK set up: nowhere to send it
    context = None
    if span_context is not None:
        context = trace.set_span_in_context(trace.NonRecordingSpan(span_context))
    tracer = trace.get_tracer(_TRACER)
    span = tracer.start_span(
        EVALUATION_EVENT,
        context=context,
        attributes={NAME: attributes[NAME]},
    )
    span.add_event(EVALUATION_EVENT, dict(attributes))
    span.end()


def _label(passed: bool | None) -> str | None:
    return None if passed is None else ("pass" if passed else "fail")


def _error_type(result: DetectionResult) -> str | None:
    from truthguard.result import Label

    if result.label is not Label.INVALID:
        return None
    error = (result.details or {}).get("error")
    return str(error) if error else "invalid"


def _decided_by(result: DetectionResult) -> str | None:
    value = (result.details or {}).get("decided_by")
    return value if isinstance(value, str) else None


def emit_result(
    result: DetectionResult,
    *,
    name: str | None = None,
    response_id: str | None = None,
    extra: Mapping[str, Any] | None = None,
    span_context: Any = None,
) -> None:
    """Emit one detector result (a callback-handler or LlamaIndex-handler record)."""
    if not active():
        return
    attrs = evaluation_attributes(
        name or result.detector,
        score=result.score,
        label=_label(result.passing),
        explanation=result.explanation or result.invalid_reason,
        response_id=response_id,
        error_type=_error_type(result),
        extra={
            "truthguard.label": result.label.value,
            DECIDED_BY: _decided_by(result),
            **(extra or {}),
        },
    )
    emit_evaluation(attrs, span_context=span_context)


def emit_verdict(
    keys: Sequence[str],
    results: Sequence[DetectionResult],
    verdict: GuardVerdict,
    *,
    attempt: int,
    policy: str | None = None,
    response_id: str | None = None,
    span_context: Any = None,
) -> None:
    """Emit a guard verdict: one event per detector, each with the guard's decision."""
    if not active():
        return
    for key, result in zip(keys, results, strict=True):
        attrs = evaluation_attributes(
            key,
            score=result.score,
            label=_label(verdict.passes.get(key)),
            explanation=result.explanation or result.invalid_reason,
            response_id=response_id,
            error_type=_error_type(result),
            extra={
                DECISION: "pass" if verdict.passing else "fail",
                ATTEMPT: attempt,
                "truthguard.policy": policy,
                "truthguard.label": result.label.value,
                "truthguard.reason": verdict.reason,
                DECIDED_BY: _decided_by(result),
            },
        )
        emit_evaluation(attrs, span_context=span_context)


def emit_record(record: ScoreRecord, *, span_context: Any = None) -> None:
    """Emit a callback-handler (or LlamaIndex-handler) record, under the span that was current
    when its answer was captured."""
    if not active():
        return
    attrs = evaluation_attributes(
        record.detector,
        score=record.score,
        label=_label(record.passing),
        explanation=record.explanation or record.error,
        error_type=record.failure if record.status == "failed" else None,
        extra={
            "truthguard.label": record.label,
            "truthguard.run_id": record.run_id,
            DECIDED_BY: record.decided_by,
        },
    )
    emit_evaluation(attrs, span_context=span_context)


def response_id(output: Any) -> str | None:
    """The provider's id of the completion in a chain output (a message, or a dict holding
    one), for ``gen_ai.response.id``; None when there is none."""
    if isinstance(output, Mapping):
        output = next((v for v in output.values() if hasattr(v, "response_metadata")), None)
    meta = getattr(output, "response_metadata", None)
    if isinstance(meta, Mapping) and isinstance(meta.get("id"), str):
        return meta["id"]
    return None
