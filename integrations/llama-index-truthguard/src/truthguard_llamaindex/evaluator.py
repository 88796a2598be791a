"""A LlamaIndex ``BaseEvaluator`` backed by a truthguard detector."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from truthguard.detector import BaseDetector
from truthguard.errors import InvalidInputError

__all__ = ["TruthGuardEvaluator"]


class TruthGuardEvaluator(BaseEvaluator):
    """Evaluate LlamaIndex responses with a truthguard detector.

    Args:
        detector: Any truthguard detector (FEWL, ReverseValidation, RefChecker, ...).

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> ev = TruthGuardEvaluator(detector=FakeDetector(score=0.9, threshold=0.5))
        >>> ev.evaluate(query="q", response="a").passing
        True
    """

    def __init__(self, detector: BaseDetector) -> None:
        if not isinstance(detector, BaseDetector):
            raise InvalidInputError(
                "detector", f"expected a truthguard detector, got {type(detector).__name__}"
            )
        self.detector = detector

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        return None

    @staticmethod
    def _payload(
        query: str | None, response: str | None, contexts: Sequence[str] | None, kwargs: Any
    ) -> dict[str, Any]:
        if response is None:
            raise InvalidInputError("response", "is required")
        payload: dict[str, Any] = {"answer": response, **kwargs}
        if query is not None:
            payload["question"] = query
        if contexts:
            payload["contexts"] = list(contexts)
        return payload

    def evaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        # The detector's own sync path: no nested event loop (works in notebooks).
        result = self.detector.invoke(self._payload(query, response, contexts, kwargs))
        return result.to_llama_index()

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        result = await self.detector.ainvoke(self._payload(query, response, contexts, kwargs))
        return result.to_llama_index()
