"""The one result model every detector returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from truthguard._text import MAX_SCAN

__all__ = ["NEVER_OPEN", "RAW_OUTPUT_LIMIT", "DetectionResult", "Label", "Usage"]

NEVER_OPEN = "never_open"
"""``details`` flag of an invalid result that must fail even with ``on_error="open"``."""

RAW_OUTPUT_LIMIT = MAX_SCAN
"""Most characters of a model reply a result keeps in ``raw_output``: what the parsers read
(sinks and memory stay bounded; ``raw_output_chars`` then gives the reply's full length)."""


class Label(StrEnum):
    """Verdict of a detector on one answer."""

    FACTUAL = "factual"
    HALLUCINATED = "hallucinated"
    UNVERIFIABLE = "unverifiable"
    INVALID = "invalid"


class Usage(BaseModel):
    """LLM cost of one check (or of several, summed with ``+``)."""

    model_config = ConfigDict(extra="forbid")

    llm_calls: int = 0
    """Model calls actually sent (cache hits are not counted here)."""
    cached_calls: int = 0
    """Artifacts served from the store instead of a model call."""
    failed_calls: int = 0
    """Calls that failed after their retries."""
    prompt_tokens: int = 0
    """Prompt tokens, from the model's ``usage_metadata`` or counted with tiktoken."""
    completion_tokens: int = 0
    """Completion tokens, same sources as ``prompt_tokens``."""
    estimated_tokens: bool = False
    """True when any token count came from tiktoken rather than the model."""
    llm_seconds: float = 0.0
    """Sum of the latencies of the individual calls."""
    wall_seconds: float = 0.0
    """Elapsed time of the whole check (calls run concurrently, so usually < llm_seconds)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            cached_calls=self.cached_calls + other.cached_calls,
            failed_calls=self.failed_calls + other.failed_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            estimated_tokens=self.estimated_tokens or other.estimated_tokens,
            llm_seconds=self.llm_seconds + other.llm_seconds,
            wall_seconds=self.wall_seconds + other.wall_seconds,
        )

    @classmethod
    def total(cls, usages: list[Usage]) -> Usage:
        out = cls()
        for u in usages:
            out = out + u
        return out


class DetectionResult(BaseModel):
    """What a detector says about one answer.

    ``score`` is on the detector's native scale, higher meaning more factual:

    * FEWL: the FEWL score (unbounded; comparable between answers to one question).
    * ReverseValidation: 1.0 when the entity comes back, 0.0 when it does not.
    * RefChecker: the entailment ratio of the claims by default, in [0, 1].

    Example:
        >>> r = DetectionResult(detector="demo", score=0.9, label="factual")
        >>> r.to_langchain()["value"]
        'factual'
    """

    model_config = ConfigDict(extra="forbid")

    detector: str
    """Name of the detector that produced the result."""
    score: float | None = None
    """Native score, higher = more factual; None when invalid or unverifiable."""
    passing: bool | None = None
    """``score >= threshold``; None when the detector has no threshold or no score."""
    threshold: float | None = None
    """The threshold ``passing`` was decided against."""
    label: Label
    """factual / hallucinated / unverifiable / invalid."""
    explanation: str = ""
    """Human-readable reason for the label."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Detector-specific breakdown (stage outputs, per-claim labels, weights, ...)."""
    usage: Usage = Field(default_factory=Usage)
    """LLM calls, tokens and seconds spent on this check."""
    invalid_reason: str | None = None
    """Why the result is invalid (parse failure, model error)."""
    raw_output: str | None = None
    """The model text that could not be used, kept verbatim when invalid (its first
    :data:`RAW_OUTPUT_LIMIT` characters)."""
    raw_output_chars: int | None = None
    """Length of the model text when ``raw_output`` holds only its start; None when whole."""
    question: str | None = None
    """The question that was checked (for EvaluationResult.query)."""
    answer: str | None = None
    """The answer that was checked (for EvaluationResult.response)."""
    contexts: list[str] | None = None
    """The contexts the answer was checked against, if any."""

    @model_validator(mode="after")
    def _cap_raw_output(self) -> DetectionResult:
        raw = self.raw_output
        if raw is not None and len(raw) > RAW_OUTPUT_LIMIT:
            # A runaway reply (megabytes) must not ride along into every sink and log line.
            object.__setattr__(self, "raw_output", raw[:RAW_OUTPUT_LIMIT])
            object.__setattr__(self, "raw_output_chars", len(raw))
        return self

    @property
    def is_invalid(self) -> bool:
        return self.label == Label.INVALID

    def to_llama_index(self) -> Any:
        """Convert to a LlamaIndex ``EvaluationResult`` (requires ``llama-index-core``)."""
        try:
            from llama_index.core.evaluation import EvaluationResult
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "to_llama_index() needs llama-index-core: pip install 'truthguard[llamaindex]'"
            ) from e
        return EvaluationResult(
            query=self.question,
            contexts=self.contexts,
            response=self.answer,
            passing=self.passing,
            score=self.score,
            feedback=self.explanation,
            invalid_result=self.is_invalid,
            invalid_reason=self.invalid_reason,
        )

    def to_langchain(self) -> dict[str, Any]:
        """Convert to a LangChain evaluator dict (``score``, ``value``, ``reasoning``)."""
        return {"score": self.score, "value": self.label.value, "reasoning": self.explanation}

    def to_langsmith(self, key: str | None = None) -> dict[str, Any]:
        """Convert to LangSmith evaluator feedback: ``key``, ``score``, ``value``, ``comment``.

        ``key`` defaults to the detector's name. An invalid result keeps ``score`` None and
        says why in ``comment``, so it is never mistaken for a zero.

        Example:
            >>> DetectionResult(detector="demo", score=0.9, label="factual").to_langsmith("x")
            {'key': 'x', 'score': 0.9, 'value': 'factual', 'comment': ''}
        """
        if key is not None and (not isinstance(key, str) or not key.strip()):
            from truthguard.errors import InvalidInputError

            raise InvalidInputError("key", "must be a non-blank string")
        comment = self.explanation
        if self.is_invalid and self.invalid_reason and self.invalid_reason not in comment:
            comment = f"{comment} ({self.invalid_reason})".strip()
        return {
            "key": key or self.detector,
            "score": self.score,
            "value": self.label.value,
            "comment": comment,
        }

    @classmethod
    def invalid(
        cls,
        detector: str,
        reason: str,
        *,
        raw_output: str | None = None,
        usage: Usage | None = None,
        details: dict[str, Any] | None = None,
    ) -> DetectionResult:
        """An explicit ``invalid`` verdict; the raw text is kept."""
        return cls(
            detector=detector,
            label=Label.INVALID,
            explanation=f"Invalid result: {reason}",
            invalid_reason=reason,
            raw_output=raw_output,
            usage=usage or Usage(),
            details=details or {},
        )
