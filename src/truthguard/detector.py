"""The detector base class: a langchain-core ``Runnable`` from an input dict to a result."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import patch_config
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from truthguard._clean import clean_text
from truthguard._config import with_default_concurrency
from truthguard._sync import run_sync
from truthguard._text import has_content
from truthguard.errors import InvalidInputError, InvalidLLMOutput, LLMCallError
from truthguard.llm import LLMSession, LLMSettings
from truthguard.result import NEVER_OPEN, DetectionResult, Label

__all__ = ["BaseDetector", "DetectorInput", "clean_text", "context_text"]


def _clean_value(value: Any) -> Any:
    """Strings cleaned, in lists and tuples too; anything else (Documents, None) untouched."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list | tuple):
        return [clean_text(v) if isinstance(v, str) else v for v in value]
    return value


def context_text(item: Any, *, field: str = "contexts") -> str:
    """Text of one context: a string, a LangChain ``Document`` or a LlamaIndex node (cleaned).

    A LlamaIndex node of any kind (``TextNode``, ``Document``, ``NodeWithScore`` around either)
    is read with ``get_content()``: ``NodeWithScore.text`` raises for every node that is not a
    ``TextNode``.
    """
    if isinstance(item, str):
        return clean_text(item)
    value = getattr(item, "page_content", None)  # LangChain Document
    if isinstance(value, str):
        return clean_text(value)
    get_content = getattr(item, "get_content", None)  # any LlamaIndex node
    if callable(get_content):
        value = get_content()
        if not isinstance(value, str):
            raise InvalidInputError(
                field, f"get_content() returned {type(value).__name__}, expected str"
            )
        return clean_text(value)
    value = getattr(item, "text", None)
    if isinstance(value, str):
        return clean_text(value)
    raise InvalidInputError(field, f"expected str or Document, got {type(item).__name__}")


_LONG_INPUT = 100_000
"""Characters of answer (plus contexts) above which ``ainvoke`` validates on a worker thread."""


def _long_input(input: Any) -> bool:
    if not isinstance(input, Mapping):
        return False
    answer, contexts = input.get("answer"), input.get("contexts")
    size = len(answer) if isinstance(answer, str) else 0
    if isinstance(contexts, list):
        size += sum(len(c) for c in contexts if isinstance(c, str))
    return size > _LONG_INPUT


def _turn_text(item: Any, i: int) -> str:
    """Text of one chat turn: a string, a LangChain message, a (role, text) pair or a dict."""
    if isinstance(item, str):
        return clean_text(item)
    if isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[1], str):
        return clean_text(item[1])
    if isinstance(item, Mapping) and isinstance(item.get("content"), str):
        return clean_text(item["content"])
    content = getattr(item, "content", None)
    if isinstance(content, str):
        return clean_text(content)
    if isinstance(content, list):  # multi-part message content: its text parts
        parts = [
            p if isinstance(p, str) else p.get("text", "")
            for p in content
            if isinstance(p, str | dict)
        ]
        return clean_text(" ".join(x for x in parts if isinstance(x, str)))
    raise InvalidInputError(
        f"history[{i}]",
        f"expected str, a message or a (role, text) pair, got {type(item).__name__}",
    )


class DetectorInput(BaseModel):
    """What every detector accepts: a question, an answer and optional contexts."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    question: str = Field(min_length=1)
    """The question the answer responds to."""
    answer: str
    """The answer to check."""
    contexts: list[str] = Field(default_factory=list)
    """Retrieved passages (strings or Documents); some detectors check against them."""
    history: list[str] = Field(default_factory=list)
    """The conversation before the answer, one text per turn: a string, a list of strings,
    LangChain messages or ``(role, text)`` pairs. Evidence of what was said: a reply that
    repeats the chat's own words is not a hallucination (RefChecker reads it; others ignore it)."""

    @field_validator("history", mode="before")
    @classmethod
    def _coerce_history(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [clean_text(v)] if v.strip() else []
        if isinstance(v, bytes) or not hasattr(v, "__iter__"):
            raise ValueError("must be a string, a list of strings, messages or (role, text) pairs")
        return [t for i, item in enumerate(v) if (t := _turn_text(item, i)).strip()]

    @model_validator(mode="before")
    @classmethod
    def _clean_strings(cls, data: Any) -> Any:
        # Every text field of every detector is cleaned here, before the field rules see it.
        if isinstance(data, Mapping):
            return {k: _clean_value(v) for k, v in data.items()}
        return data

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v

    @field_validator("contexts", mode="before")
    @classmethod
    def _coerce_contexts(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str | bytes | Mapping) or not hasattr(v, "__iter__"):
            # a dict would iterate over its keys: never silently check against those
            raise ValueError(f"must be a list of strings or Documents, got {type(v).__name__}")
        return [context_text(item, field=f"contexts[{i}]") for i, item in enumerate(v)]


def _validation_to_input_error(e: ValidationError) -> InvalidInputError:
    err = e.errors()[0]
    inner = (err.get("ctx") or {}).get("error")
    if isinstance(inner, InvalidInputError):  # raised by a validator: it already names the field
        return inner
    field = ".".join(str(p) for p in err.get("loc", ())) or "input"
    msg = err.get("msg", "invalid value")
    if err.get("type") == "missing":
        msg = "is required"
    elif err.get("type") == "extra_forbidden":
        msg = "is not an accepted field"
    return InvalidInputError(field, msg)


class BaseDetector(RunnableSerializable[dict[str, Any], DetectionResult], ABC):
    """Base class of every detector.

    Subclasses implement :meth:`_acheck`, an async function of the validated input and an
    :class:`~truthguard.llm.LLMSession`. The base class validates input, runs the check, turns
    model failures into ``invalid`` results, fills in usage and the threshold verdict, and gives
    ``invoke`` / ``ainvoke`` / ``batch`` / ``abatch`` with LangChain callbacks and tracing.

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> FakeDetector(score=0.8, threshold=0.5).invoke(
        ...     {"question": "Who wrote Hamlet?", "answer": "Shakespeare"}
        ... ).passing
        True
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    detector_name: ClassVar[str] = "detector"
    input_model: ClassVar[type[DetectorInput]] = DetectorInput
    score_bounds: ClassVar[tuple[float, float] | None] = None
    """The range every score of this detector lies in (None: unbounded); a ``threshold``
    outside it would pass or fail every answer, so it is refused."""

    threshold: float | None = None
    """Scores at or above this pass; None lets the label decide ``passing`` (factual passes)."""
    llm_settings: LLMSettings = Field(default_factory=LLMSettings)
    """Concurrency bound, retries, time-out and error policy for model calls."""
    batch_concurrency: int = Field(default=4, ge=1)
    """Default bound for ``batch`` / ``abatch`` when the config sets no ``max_concurrency``."""

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as e:  # a wrong option names its field, as bad input does
            raise _validation_to_input_error(e) from e

    @field_validator("threshold")
    @classmethod
    def _threshold_in_bounds(cls, v: float | None) -> float | None:
        from truthguard.guard.verdict import check_threshold

        if v is not None:
            check_threshold("threshold", v, cls.score_bounds)
        return v

    # -- public API ---------------------------------------------------------------------------

    def validate_input(self, input: Any) -> DetectorInput:
        """Validate a raw input dict; raises :class:`InvalidInputError` naming the field."""
        if isinstance(input, self.input_model):
            return input
        if isinstance(input, BaseModel):
            input = input.model_dump()
        if not isinstance(input, Mapping):
            raise InvalidInputError(
                "input", f"expected a dict with 'question' and 'answer', got {type(input).__name__}"
            )
        try:
            return self.input_model.model_validate(dict(input))
        except ValidationError as e:
            raise _validation_to_input_error(e) from e

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> DetectionResult:
        inp = self.validate_input(input)
        return self._call_with_config(self._invoke_sync, inp, config, run_type="chain", **kwargs)

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> DetectionResult:
        if _long_input(input):  # cleaning megabytes of text would hold the event loop
            inp = await asyncio.to_thread(self.validate_input, input)
        else:
            inp = self.validate_input(input)
        return await self._acall_with_config(
            self._invoke_async, inp, config, run_type="chain", **kwargs
        )

    def batch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[DetectionResult]:
        return super().batch(
            inputs, self._bounded(config), return_exceptions=return_exceptions, **kwargs
        )

    async def abatch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[DetectionResult]:
        return await super().abatch(
            inputs, self._bounded(config), return_exceptions=return_exceptions, **kwargs
        )

    def check(self, question: str, answer: str, **fields: Any) -> DetectionResult:
        """Shorthand for ``invoke({"question": ..., "answer": ..., **fields})``."""
        return self.invoke({"question": question, "answer": answer, **fields})

    async def acheck(self, question: str, answer: str, **fields: Any) -> DetectionResult:
        """Shorthand for ``ainvoke({"question": ..., "answer": ..., **fields})``."""
        return await self.ainvoke({"question": question, "answer": answer, **fields})

    def warm_up(self) -> BaseDetector:
        """Load the local models this detector uses now, not on its first check.

        Every similarity backend among the detector's fields (and their fields: checkers,
        stores, matchers) is loaded and run once, the ONNX export made if missing; a ``None``
        field typed ``EmbeddingSimilarity | None`` stands for the packaged default, which is
        loaded too. Servers call it at start-up; it makes no model (LLM) call. Returns the
        detector.
        """
        from typing import get_args

        from truthguard.similarity import (
            EmbeddingSimilarity,
            SimilarityBackend,
            get_default_similarity,
        )

        seen: set[int] = set()

        def visit(obj: Any, depth: int) -> None:
            if obj is None or id(obj) in seen or depth > 4:
                return
            seen.add(id(obj))
            if isinstance(obj, SimilarityBackend):
                obj.warm_up()
            elif isinstance(obj, BaseModel):
                for name, field in type(obj).model_fields.items():
                    value = getattr(obj, name, None)
                    if value is None and EmbeddingSimilarity in get_args(field.annotation):
                        value = get_default_similarity()  # None there means "the default"
                    visit(value, depth + 1)
            elif isinstance(obj, list | tuple):
                for item in obj:
                    visit(item, depth + 1)
            elif hasattr(obj, "embedder") or hasattr(obj, "similarity"):  # stores, matchers
                visit(getattr(obj, "embedder", None), depth + 1)
                visit(getattr(obj, "similarity", None), depth + 1)

        visit(self, 0)
        return self

    # -- pickling: by configuration (see truthguard._pickle) ----------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        from truthguard._pickle import dumps_portable, restore_detector

        state = self.__getstate__()
        private = {
            name: attr.get_default(call_default_factory=True, validated_data={})
            for name, attr in self.__private_attributes__.items()
        }  # per-process caches start afresh in the other process
        state["__pydantic_private__"] = private or None
        return (restore_detector, (type(self), dumps_portable(state)))

    # -- subclass hook ------------------------------------------------------------------------

    @abstractmethod
    async def _acheck(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        """Run the check. Raise ``InvalidLLMOutput`` / ``LLMCallError`` on model trouble."""

    # -- machinery ----------------------------------------------------------------------------

    def _bounded(
        self, config: RunnableConfig | list[RunnableConfig] | None
    ) -> RunnableConfig | list[RunnableConfig]:
        return with_default_concurrency(config, self.batch_concurrency)

    def _invoke_sync(
        self,
        inp: DetectorInput,
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> DetectionResult:
        child = patch_config(config, callbacks=run_manager.get_child())
        return run_sync(self._run(inp, child))

    async def _invoke_async(
        self,
        inp: DetectorInput,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> DetectionResult:
        child = patch_config(config, callbacks=run_manager.get_child())
        return await self._run(inp, child)

    async def _run(self, inp: DetectorInput, config: RunnableConfig) -> DetectionResult:
        child_config: RunnableConfig = {
            k: v for k, v in config.items() if k in ("callbacks", "tags", "metadata")
        }  # type: ignore[assignment]
        # Store writes finish in the background while the check goes on; drained below.
        session = LLMSession(self.llm_settings, config=child_config, defer_writes=True)
        started = time.perf_counter()
        try:
            result = await self._checked(inp, session)
        except BaseException:
            session.abandon()
            raise
        await session.drain()
        return self._finalize(result, inp, session, started)

    async def _checked(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        """:meth:`_acheck` with model failures turned into ``invalid`` results."""
        if not has_content(getattr(inp, "answer", None)):
            # One rule for every detector: an answer with nothing in it ('', '...', 'N/A') gets
            # no verdict, and no model is asked about it.
            return DetectionResult(
                detector=self.detector_name,
                label=Label.UNVERIFIABLE,
                explanation="Nothing to check: the answer has no content.",
                details={"reason": "no_content"},
            )
        try:
            result = await self._acheck(inp, session)
        except InvalidLLMOutput as e:
            result = DetectionResult.invalid(
                self.detector_name, str(e), raw_output=e.raw, details={"stage": e.stage}
            )
        except LLMCallError as e:
            if self.llm_settings.raise_on_error:
                raise
            result = DetectionResult.invalid(
                self.detector_name,
                str(e),
                details={"stage": e.stage, "error": str(e.__cause__), "failure": "llm_call"},
            )
        except asyncio.CancelledError as e:
            task = asyncio.current_task()
            if task is None or task.cancelling():  # our caller cancelled us: honour it
                raise
            # A model (or its HTTP client) raised CancelledError on its own: a failed call.
            if self.llm_settings.raise_on_error:
                raise LLMCallError("model", "cancelled by the model or its client") from e
            result = DetectionResult.invalid(
                self.detector_name,
                "a model call was cancelled by the model or its client, not by the caller",
                # We cannot tell a client's stray cancel from a bug in the check, so a fail-open
                # guard must not release the answer on it.
                details={"error": "CancelledError", "failure": "llm_call", NEVER_OPEN: True},
            )
        return result

    def _finalize(
        self,
        result: DetectionResult,
        inp: DetectorInput,
        session: LLMSession,
        started: float,
    ) -> DetectionResult:
        usage = session.usage()
        usage.wall_seconds = time.perf_counter() - started
        passing = result.passing
        decided = result.label in (Label.FACTUAL, Label.HALLUCINATED)
        if self.threshold is not None and result.score is not None and decided:
            passing = result.score >= self.threshold
        elif passing is None and decided:  # no threshold: the label says whether it passes
            passing = result.label == Label.FACTUAL
        return result.model_copy(
            update={
                "usage": usage,
                "threshold": self.threshold,
                "passing": passing,
                "question": getattr(inp, "question", None) or result.question,
                "answer": getattr(inp, "answer", None),
                "contexts": list(getattr(inp, "contexts", []) or []) or None,
            }
        )
