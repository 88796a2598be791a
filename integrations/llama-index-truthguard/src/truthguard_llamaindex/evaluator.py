"""LlamaIndex evaluators backed by truthguard detectors.

:class:`TruthGuardEvaluator` takes any detector; :class:`FEWLEvaluator`,
:class:`ReverseValidationEvaluator` and :class:`RefCheckerEvaluator` name their detector's extra
input fields (``entity``, ``references``) as arguments. Extra fields given to the constructor
are validated there; fields given per call (``BatchEvalRunner``'s per-row keyword lists) are
validated before any model call, so a wrong shape fails at once with the field's name.
:class:`TruthGuardBatchEvalRunner` checks every row that way before the first job starts (the
plain ``BatchEvalRunner`` retries a failing job with back-off first). Results are
:class:`TruthGuardEvaluationResult`: a LlamaIndex ``EvaluationResult`` that also
carries the detector's label and breakdown (RefChecker's per-claim labels, FEWL's weights).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, ClassVar

from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BaseEvaluator, BatchEvalRunner, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType
from pydantic import Field

from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.guard.extract import history_of
from truthguard.result import DetectionResult

__all__ = [
    "FEWLEvaluator",
    "RefCheckerEvaluator",
    "ReverseValidationEvaluator",
    "TruthGuardBatchEvalRunner",
    "TruthGuardEvaluationResult",
    "TruthGuardEvaluator",
]

_PER_ROW_HINT = (
    " (BatchEvalRunner passes one value per query: give a list with one value per query, "
    "or set the field once on the evaluator)"
)


class TruthGuardEvaluationResult(EvaluationResult):
    """An ``EvaluationResult`` with the detector's own verdict and breakdown."""

    detector: str | None = None
    """Name of the detector that produced the result."""
    label: str | None = None
    """factual / hallucinated / unverifiable / invalid."""
    details: dict[str, Any] = Field(default_factory=dict)
    """The detector's breakdown (RefChecker: ``claims`` with a label each; FEWL: weights)."""
    usage: dict[str, Any] = Field(default_factory=dict)
    """LLM calls, tokens and seconds the check cost."""
    raw_output: str | None = None
    """The model text that could not be parsed, when the result is invalid."""

    @property
    def claims(self) -> list[dict[str, Any]]:
        """Per-claim results when the detector has them (RefChecker), else an empty list."""
        claims = self.details.get("claims")
        return list(claims) if isinstance(claims, list) else []

    @classmethod
    def from_detection(cls, result: DetectionResult) -> TruthGuardEvaluationResult:
        return cls(
            query=result.question,
            contexts=result.contexts,
            response=result.answer,
            passing=result.passing,
            score=result.score,
            feedback=result.explanation,
            invalid_result=result.is_invalid,
            invalid_reason=result.invalid_reason,
            detector=result.detector,
            label=result.label.value,
            details=result.details,
            usage=result.usage.model_dump(),
            raw_output=result.raw_output,
        )


class TruthGuardEvaluator(BaseEvaluator):
    """Evaluate LlamaIndex responses with a truthguard detector.

    Args:
        detector: Any truthguard detector (FEWL, ReverseValidation, RefChecker, ...).
        **fields: Extra detector input fields used for every evaluation (validated now).

    A chat's earlier turns go in ``history`` (``evaluate(..., history=chat_engine.chat_history)``,
    or one list per query in ``BatchEvalRunner``): LlamaIndex ``ChatMessage`` objects, LangChain
    messages, strings or ``(role, text)`` pairs. System and tool messages are left out, and so is
    a last user message that is the query itself (see
    :func:`~truthguard.guard.extract.history_of`).

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> ev = TruthGuardEvaluator(detector=FakeDetector(score=0.9, threshold=0.5))
        >>> ev.evaluate(query="q", response="a").passing
        True
    """

    detector_class: ClassVar[str | None] = None
    """``module:Class`` the detector must be an instance of (None: any detector)."""

    def __init__(self, detector: BaseDetector, **fields: Any) -> None:
        expected: type[Any] = BaseDetector
        if self.detector_class is not None:
            module, name = self.detector_class.split(":")
            expected = getattr(importlib.import_module(module), name)
        if not isinstance(detector, expected):
            raise InvalidInputError(
                "detector", f"expected a {expected.__name__}, got {type(detector).__name__}"
            )
        self.detector = detector
        self.fields = {k: v for k, v in fields.items() if v is not None}
        if self.fields:  # a wrong shape fails here, before any evaluation
            detector.validate_input({"question": "q", "answer": "a", **self.fields})

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        return None

    def _input(
        self,
        query: str | None,
        response: str | None,
        contexts: Sequence[str] | None,
        kwargs: dict[str, Any],
    ) -> DetectorInput:
        """The validated detector input (raises naming the field, before any model call)."""
        if response is None:
            raise InvalidInputError("response", "is required")
        payload: dict[str, Any] = {"answer": response, **self.fields, **kwargs}
        if query is not None:
            payload["question"] = query
        if contexts:
            payload["contexts"] = list(contexts)
        try:
            if payload.get("history") is not None:
                payload["history"] = history_of(payload, "history", question=query)
            return self.detector.validate_input(payload)
        except InvalidInputError as e:
            if e.field.split("[")[0].split(".")[0] in kwargs:
                raise InvalidInputError(e.field, str(e).split(": ", 1)[-1] + _PER_ROW_HINT) from e
            raise

    def evaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> TruthGuardEvaluationResult:
        # The detector's own sync path: no nested event loop (works in notebooks).
        result = self.detector.invoke(self._input(query, response, contexts, kwargs))
        return TruthGuardEvaluationResult.from_detection(result)

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> TruthGuardEvaluationResult:
        result = await self.detector.ainvoke(self._input(query, response, contexts, kwargs))
        return TruthGuardEvaluationResult.from_detection(result)


class FEWLEvaluator(TruthGuardEvaluator):
    """Evaluate with :class:`~truthguard.fewl.FEWL` (needs the question; no extra field).

    ``details`` holds FEWL's per-reference weights and scores.
    """

    detector_class = "truthguard.fewl:FEWL"

    def __init__(self, detector: Any) -> None:
        super().__init__(detector)


class ReverseValidationEvaluator(TruthGuardEvaluator):
    """Evaluate with :class:`~truthguard.rv.ReverseValidation`.

    Args:
        detector: The Reverse Validation detector.
        entity: The entity every evaluated passage is about (else per call, or extracted).
    """

    detector_class = "truthguard.rv:ReverseValidation"

    def __init__(self, detector: Any, *, entity: str | None = None) -> None:
        super().__init__(detector, entity=entity)


class RefCheckerEvaluator(TruthGuardEvaluator):
    """Evaluate with :class:`~truthguard.refchecker.RefChecker`; ``claims`` has each claim's label.

    Args:
        detector: The RefChecker detector.
        references: Reference passages used for every evaluation, besides the contexts.
    """

    detector_class = "truthguard.refchecker:RefChecker"

    def __init__(self, detector: Any, *, references: Sequence[str] | None = None) -> None:
        if isinstance(references, str):
            raise InvalidInputError("references", "expected a list of passages, got one string")
        super().__init__(detector, references=None if references is None else list(references))


class TruthGuardBatchEvalRunner(BatchEvalRunner):
    """A ``BatchEvalRunner`` that checks every row for its truthguard evaluators before any job.

    ``BatchEvalRunner`` retries a failing job three times with back-off, so a row whose extra
    field has the wrong shape (a flat list where one value per query was expected) surfaces only
    after several seconds. This runner validates each row of each truthguard evaluator first and
    raises :class:`~truthguard.errors.InvalidInputError` naming the field, the row and the
    evaluator, before any model call. Other evaluators and everything else run unchanged.

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> runner = TruthGuardBatchEvalRunner({"fake": TruthGuardEvaluator(FakeDetector())})
        >>> runner.evaluate_response_strs(queries=["q"], response_strs=["a"])["fake"][0].score
        1.0
    """

    def _precheck(
        self, queries: list[str] | None, answers: list[str], eval_kwargs_lists: dict[str, Any]
    ) -> None:
        multi = bool(eval_kwargs_lists) and isinstance(next(iter(eval_kwargs_lists.values())), dict)
        for name, evaluator in self.evaluators.items():
            if not isinstance(evaluator, TruthGuardEvaluator):
                continue
            lists = (eval_kwargs_lists.get(name) or {}) if multi else eval_kwargs_lists
            for idx, query in enumerate(queries or []):
                # Shapes the base runner itself rejects (not a list, wrong length) are left to it.
                row = {k: v[idx] for k, v in lists.items() if isinstance(v, list) and idx < len(v)}
                answer = answers[idx] if idx < len(answers) else ""
                try:
                    evaluator._input(query, answer, None, row)
                except InvalidInputError as e:
                    detail = str(e).split(": ", 1)[-1]
                    raise InvalidInputError(
                        e.field, f"row {idx} for evaluator {name!r}: {detail}"
                    ) from e

    async def aevaluate_response_strs(
        self,
        queries: list[str] | None = None,
        response_strs: list[str] | None = None,
        contexts_list: list[list[str]] | None = None,
        **eval_kwargs_lists: Any,
    ) -> dict[str, list[EvaluationResult]]:
        self._precheck(queries, list(response_strs or []), eval_kwargs_lists)
        return await super().aevaluate_response_strs(
            queries, response_strs, contexts_list, **eval_kwargs_lists
        )

    async def aevaluate_responses(
        self,
        queries: list[str] | None = None,
        responses: list[Response] | None = None,
        **eval_kwargs_lists: Any,
    ) -> dict[str, list[EvaluationResult]]:
        answers = [str(getattr(r, "response", "") or "") for r in responses or []]
        self._precheck(queries, answers, eval_kwargs_lists)
        return await super().aevaluate_responses(queries, responses, **eval_kwargs_lists)
