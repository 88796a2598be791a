"""Use a truthguard detector as a LangSmith or LangChain evaluator.

:class:`DetectorEvaluator` wraps any detector and speaks three evaluator dialects:

* LangSmith ``evaluate`` / ``aevaluate``: it is a ``langsmith.evaluation.RunEvaluator``
  (``evaluate_run`` / ``aevaluate_run``) and a plain function of ``(inputs, outputs,
  reference_outputs)``; both give ``{key, score, comment}`` feedback.
* LangChain's string-evaluator interface (``evaluate_strings`` / ``aevaluate_strings`` and the
  ``_evaluate_strings`` / ``_aevaluate_strings`` hooks), returning ``{score, value, reasoning}``.
  That base class lives in ``langchain-classic``; the interface is implemented here without it,
  so nothing beyond ``langchain-core`` / ``langsmith`` is needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable
from langsmith.evaluation import EvaluationResult, RunEvaluator

from truthguard.errors import InvalidInputError
from truthguard.guard.check import base_detector
from truthguard.guard.extract import (
    ANSWER_KEYS,
    CONTEXT_KEYS,
    QUESTION_KEYS,
    answer_of,
    check_input,
    contexts_of,
    history_of,
    question_of,
)
from truthguard.result import DetectionResult

__all__ = ["DetectorEvaluator"]


class DetectorEvaluator(RunEvaluator):
    """A detector as a LangSmith run evaluator and a LangChain string evaluator.

    Args:
        detector: Any truthguard detector (or one wrapped by ``configurable_fields``).
        key: Feedback key in LangSmith (default: the detector's name).
        question_key: Key of the question in the run inputs (default: question, input, query).
        answer_key: Key of the answer in the run outputs (default: answer, output, result, ...).
        context_key: Key of the contexts in the run outputs (default: context, contexts, ...).
        reference_key: Key of reference passages in the example outputs (default: the contexts
            keys, then ``reference``); they are checked together with the output's contexts.
        history_key: Key of the chat history in the run inputs (default: chat_history, history,
            messages; ``""`` passes none); the detector reads it as ``history``, so a reply
            restating what the user said is not flagged.

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> ev = DetectorEvaluator(FakeDetector(score=0.9, threshold=0.5), key="grounded")
        >>> ev({"question": "Q?"}, {"answer": "A."})["score"]
        0.9
        >>> ev.evaluate_strings(prediction="A.", input="Q?")["value"]
        'factual'
    """

    requires_input: bool = True
    """String-evaluator flag: the question is needed."""
    requires_reference: bool = False
    """String-evaluator flag: references are optional (contexts may come with the output)."""

    def __init__(
        self,
        detector: Runnable[Any, Any],
        *,
        key: str | None = None,
        question_key: str | None = None,
        answer_key: str | None = None,
        context_key: str | None = None,
        reference_key: str | None = None,
        history_key: str | None = None,
    ) -> None:
        inner = base_detector(detector)
        if inner is None:
            raise InvalidInputError(
                "detector", f"expected a truthguard detector, got {type(detector).__name__}"
            )
        if key is not None and (not isinstance(key, str) or not key.strip()):
            raise InvalidInputError("key", "must be a non-blank string")
        self.detector = detector
        self.key = key or inner.detector_name
        self.question_key = question_key
        self.answer_key = answer_key
        self.context_key = context_key
        self.reference_key = reference_key
        self.history_key = history_key

    @property
    def evaluation_name(self) -> str:
        """String-evaluator name (the feedback key)."""
        return self.key

    @property
    def feedback_keys(self) -> list[str]:
        return [self.key]

    # -- LangSmith --------------------------------------------------------------------------------

    def __call__(
        self,
        inputs: Mapping[str, Any],
        outputs: Mapping[str, Any] | Any,
        reference_outputs: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Evaluate one run given its inputs, outputs and the example's reference outputs."""
        payload = self._payload(inputs, outputs, reference_outputs)
        return self.detector.invoke(payload).to_langsmith(self.key)

    def evaluate_run(
        self, run: Any, example: Any = None, evaluator_run_id: Any = None
    ) -> EvaluationResult:
        payload = self._payload(
            run.inputs or {}, run.outputs or {}, getattr(example, "outputs", None)
        )
        return EvaluationResult(**self.detector.invoke(payload).to_langsmith(self.key))

    async def aevaluate_run(
        self, run: Any, example: Any = None, evaluator_run_id: Any = None
    ) -> EvaluationResult:
        payload = self._payload(
            run.inputs or {}, run.outputs or {}, getattr(example, "outputs", None)
        )
        result = await self.detector.ainvoke(payload)
        return EvaluationResult(**result.to_langsmith(self.key))

    # -- LangChain string evaluator ---------------------------------------------------------------

    def evaluate_strings(
        self,
        *,
        prediction: str,
        reference: str | Sequence[str] | None = None,
        input: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Check ``prediction`` (the answer) to ``input`` against ``reference`` passages."""
        return self._evaluate_strings(
            prediction=prediction, reference=reference, input=input, **kwargs
        )

    async def aevaluate_strings(
        self,
        *,
        prediction: str,
        reference: str | Sequence[str] | None = None,
        input: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Async twin of :meth:`evaluate_strings`."""
        return await self._aevaluate_strings(
            prediction=prediction, reference=reference, input=input, **kwargs
        )

    def _evaluate_strings(
        self,
        *,
        prediction: str,
        reference: str | Sequence[str] | None = None,
        input: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        payload = self._string_payload(prediction, reference, input)
        return self.detector.invoke(payload, kwargs.get("config")).to_langchain()

    async def _aevaluate_strings(
        self,
        *,
        prediction: str,
        reference: str | Sequence[str] | None = None,
        input: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        payload = self._string_payload(prediction, reference, input)
        result: DetectionResult = await self.detector.ainvoke(payload, kwargs.get("config"))
        return result.to_langchain()

    # -- mapping ----------------------------------------------------------------------------------

    def _string_payload(
        self, prediction: Any, reference: str | Sequence[str] | None, input: Any
    ) -> dict[str, Any]:
        if input is None:
            raise InvalidInputError("input", "the question is required (requires_input=True)")
        if not isinstance(prediction, str):
            raise InvalidInputError("prediction", f"must be a string, got {type(prediction)}")
        refs = [reference] if isinstance(reference, str) else list(reference or [])
        return {"question": question_of(input), "answer": prediction, "contexts": refs}

    def _payload(
        self, inputs: Any, outputs: Any, reference_outputs: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if isinstance(inputs, Mapping) and self.question_key is None:
            # A single-input run: take its only value as the question.
            known = [k for k in QUESTION_KEYS if k in inputs]
            if not known and len(inputs) == 1:
                inputs = {"question": next(iter(inputs.values()))}
        question = question_of(inputs, self.question_key)
        single = isinstance(outputs, Mapping) and len(outputs) == 1
        if single and self.answer_key is None and not any(k in outputs for k in ANSWER_KEYS):
            outputs = {"answer": next(iter(outputs.values()))}
        answer = answer_of(outputs, self.answer_key)
        contexts = contexts_of(outputs, self.context_key)
        if reference_outputs:
            keys = (self.reference_key,) if self.reference_key else (*CONTEXT_KEYS, "reference")
            found = next((k for k in keys if k in reference_outputs), None)
            if found is not None:
                contexts += contexts_of({found: reference_outputs[found]}, found)
        history = history_of(inputs, self.history_key, question=question)
        return check_input(question, answer, contexts, history)
