"""What a guard does when an answer fails: small policy objects, applied in order.

A policy receives a :class:`PolicyContext` (the question, the original input, every attempt so
far) and returns a step:

* :class:`Rerun`: invoke the chain (or another runnable) again with a new input and/or
  ``configurable`` values; the new answer is checked unless ``check=False``.
* :class:`Release`: hand out an answer and stop (a fixed fallback answer, unchecked, or the
  supported sentences of the last answer, each checked: :class:`Filter`).

or raises :class:`~truthguard.errors.GuardRejected`. Write your own by subclassing
:class:`GuardPolicy` and implementing ``astep``.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, model_validator

from truthguard._sync import invoke_user
from truthguard._text import FencedTemplate
from truthguard.errors import GuardRejected, InvalidInputError, TruthGuardError
from truthguard.guard._models import Attempt
from truthguard.guard._runs import (
    FEEDBACK_FIELD,
    config_ids,
    find_prompt_slot,
    reads_config,
    uses_retrieval_query,
)
from truthguard.guard.validation import input_errors
from truthguard.llm import message_text
from truthguard.result import DetectionResult, Label, Usage

__all__ = [
    "CONTINUE_TEMPLATE",
    "FEEDBACK_FIELD",
    "FEEDBACK_TEMPLATE",
    "FILTER_NOTICE",
    "RETRIEVAL_QUERY_KEY",
    "RETRIEVER_FIELD",
    "SEARCH_KWARGS_FIELD",
    "TEMPERATURE_FIELD",
    "Fallback",
    "Filter",
    "GuardPolicy",
    "PolicyContext",
    "Raise",
    "ReRetrieve",
    "Regenerate",
    "Release",
    "Rerun",
]

SEARCH_KWARGS_FIELD = "search_kwargs"
"""``configurable`` id of the retriever's search kwargs (set by the RAG helper)."""
RETRIEVER_FIELD = "retriever"
"""``configurable`` id that switches between retriever alternatives (set by the RAG helper)."""
TEMPERATURE_FIELD = "temperature"
"""``configurable`` id of the model temperature (set by the RAG helper when the model has one)."""
RETRIEVAL_QUERY_KEY = "retrieval_query"
"""Input key the RAG helper retrieves with instead of the question, when present."""

# Regeneration feedback (our wording). It carries the detector's explanation back to the model,
# as in the validate / re-ask loop of self-correcting pipelines.
FEEDBACK_TEMPLATE = FencedTemplate(
    "A fact-checker doubted your previous answer. {data_note}\n"
    "Previous answer:\n{answer}\n"
    "Checker's notes:\n{explanation}\n"
    "Answer again from the passages in the context. Keep only statements the passages support, "
    "leave out what they do not state, and say plainly what they do not say.",
    fenced=("answer", "explanation"),
)
# Re-ask when the checker gave no verdict (an outage): nothing about the checker's failure.
REASK_TEMPLATE = (
    "Answer again from the passages in the context. Keep only statements the passages support, "
    "leave out what they do not state, and say plainly what they do not say."
)
# The streaming guard's re-ask after a broken stream (our wording): nothing about the failure.
CONTINUE_AFTER_BREAK_TEMPLATE = FencedTemplate(
    "{data_note}\nYour answer so far was:\n{released}\n"
    "Continue the answer from where it stops, without repeating it. Keep only statements the "
    "context supports.",
    fenced=("released",),
)
# The streaming guard's repair (our wording): keep what was released, replace the bad sentence.
CONTINUE_TEMPLATE = FencedTemplate(
    "{data_note}\nYour answer so far was:\n{released}\n"
    "The next sentence you wrote was not supported by the sources and was withheld:\n{answer}\n"
    "Checker's notes:\n{explanation}\n"
    "Continue the answer from where it stops, without repeating it and without that sentence. "
    "Keep only statements the context supports; if nothing more can be said, reply with an empty "
    "message.",
    fenced=("released", "answer", "explanation"),
)


@dataclass
class PolicyContext:
    """What a policy sees when it is asked for the next step."""

    question: str
    """The question being answered."""
    input: Any
    """The chain input of the first attempt, unchanged."""
    attempts: list[Attempt]
    """Every attempt so far (the last one failed)."""
    uses: int
    """How many times this policy has been applied, counting this call (1, 2, ...)."""
    config: RunnableConfig | None = None
    """Config for the policy's own model calls: traced under the attempt, usage counted."""
    feedback_route: str = "input"
    """Where the chain takes feedback: ``"input"`` (a dict key / prompt slot) or ``"model"``
    (the guard appends it to the chat model's prompt through ``configurable``)."""
    released: str | None = None
    """Streaming guard: the text already released; feedback then asks for a continuation."""
    history: list[Any] = field(default_factory=list)
    """The chat turns before the question (:func:`~truthguard.guard.extract.history_of`), for a
    policy's own checks (``Filter``)."""

    @property
    def last(self) -> Attempt:
        return self.attempts[-1]

    def feedback(self) -> str:
        """The failed answer and the detectors' explanations, for a re-ask prompt.

        Only detectors that gave a verdict speak: an outage, a time-out or an unparseable
        checker reply is the checker's problem, not the answer's, and never reaches the model.
        """
        last = self.last
        notes = "; ".join(
            f"{r.detector}: {r.explanation}"
            for r in last.results
            if r.explanation and r.label not in (Label.INVALID, Label.UNVERIFIABLE)
        )
        if self.released is not None and (last.error or not notes):
            # The stream broke off (or the checker was unavailable): continue, claim nothing.
            return CONTINUE_AFTER_BREAK_TEMPLATE.format(released=self.released)
        if self.released is not None:
            return CONTINUE_TEMPLATE.format(
                released=self.released,
                answer=last.answer or "",
                explanation=notes or "not supported by the context",
            )
        if not notes or not last.answer:
            return REASK_TEMPLATE
        return FEEDBACK_TEMPLATE.format(answer=last.answer, explanation=notes)


@dataclass
class Rerun:
    """Invoke the chain (or ``runnable``) again."""

    input: Any
    """The input of the new attempt."""
    configurable: dict[str, Any] = field(default_factory=dict)
    """Values merged into ``config["configurable"]`` for this attempt."""
    runnable: Runnable[Any, Any] | None = None
    """Run this instead of the guarded chain (a fallback chain)."""
    check: bool = True
    """Check the new answer with the detectors."""


@dataclass
class Release:
    """Release this answer and stop."""

    answer: str
    """The answer to release."""
    status: Literal["fallback", "filtered"] = "fallback"
    """How the guard ends: ``fallback`` (an unchecked answer) or ``filtered`` (the supported
    sentences of an answer, each checked)."""
    contexts: list[str] = field(default_factory=list)
    """The contexts the released text was checked against (``filtered``)."""
    results: list[DetectionResult] = field(default_factory=list)
    """The checks behind the released text (``filtered``: one per sentence)."""


Step = Rerun | Release


class GuardPolicy(BaseModel, ABC):
    """Base class of guard policies.

    Example:
        >>> class AskToCite(GuardPolicy):
        ...     name: ClassVar[str] = "ask_to_cite"
        ...     async def astep(self, ctx):
        ...         return Rerun(input={**ctx.input, "feedback": "Cite your sources."})
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: ClassVar[str] = "policy"
    terminal: ClassVar[bool] = False
    """Terminal policies end the loop (fallback, raise) and still apply once attempts run out."""
    after_over_capacity: ClassVar[bool] = False
    """Asked after a check refused over capacity (``max_concurrent_checks``). Such a refusal is
    no verdict on the answer, and another chain run or check would only add to the overload, so
    the guard goes to its terminal outcome: ``Fallback`` and ``Raise`` set this; ``ReRetrieve``,
    ``Regenerate``, ``Filter`` (a check per sentence) and your own policies, unless they set it,
    are skipped."""

    max_uses: int = Field(default=1, ge=1)
    """How many times the guard may apply this policy to one request."""

    def __init__(self, **kwargs: Any) -> None:
        with input_errors():
            super().__init__(**kwargs)

    @abstractmethod
    async def astep(self, ctx: PolicyContext) -> Step:
        """Return the next step, or raise :class:`GuardRejected`."""

    def validate_chain(self, chain: Runnable[Any, Any]) -> None:
        """Raise :class:`InvalidInputError` when this policy could not change anything on
        ``chain`` (called by the guard at construction)."""


def _dict_input(ctx: PolicyContext, field_name: str) -> dict[str, Any]:
    if isinstance(ctx.input, Mapping):
        return dict(ctx.input)
    raise InvalidInputError(field_name, "needs a dict chain input to add keys to")


class ReRetrieve(GuardPolicy):
    """Fetch more or different context and answer again.

    Works on chains built with :func:`truthguard.rag.build_rag_chain`, or any chain whose
    retriever exposes the ``configurable`` ids ``search_kwargs`` / ``retriever``.

    Example:
        >>> ReRetrieve(k=[8, 16], max_uses=2)
        ReRetrieve(max_uses=2, k=[8, 16], rewrite=None, alternative=None)
    """

    name: ClassVar[str] = "re_retrieve"

    k: list[int] = Field(default_factory=lambda: [8])
    """Number of documents to fetch on the 1st, 2nd, ... use (the last value repeats)."""
    rewrite: Runnable[Any, Any] | Callable[[str], Any] | None = None
    """Rewrites the question into a retrieval query (a Runnable or a function, sync or async)."""
    alternative: str | None = None
    """Switch the retriever to this configurable alternative (a fallback retriever)."""

    @model_validator(mode="after")
    def _check_k(self) -> ReRetrieve:
        if not self.k or any(v < 1 for v in self.k):
            raise InvalidInputError("k", "must be a non-empty list of positive integers")
        return self

    async def astep(self, ctx: PolicyContext) -> Step:
        k = self.k[min(ctx.uses, len(self.k)) - 1]
        configurable: dict[str, Any] = {SEARCH_KWARGS_FIELD: {"k": k}}
        if self.alternative is not None:
            configurable[RETRIEVER_FIELD] = self.alternative
        if self.rewrite is None:
            return Rerun(input=ctx.input, configurable=configurable)
        new_input = _dict_input(ctx, "rewrite")
        if isinstance(self.rewrite, Runnable):
            query = await invoke_user(self.rewrite, ctx.question, ctx.config)
        else:
            query = self.rewrite(ctx.question)
            if inspect.isawaitable(query):
                query = await query
        text = None if query is None else message_text(query)
        if not text or not text.strip():  # never retrieve on "None" or on nothing
            raise InvalidInputError("rewrite", f"returned no retrieval query: {query!r}")
        new_input[RETRIEVAL_QUERY_KEY] = text
        return Rerun(input=new_input, configurable=configurable)

    def validate_chain(self, chain: Runnable[Any, Any]) -> None:
        ids = config_ids(chain)
        if reads_config(chain):  # a function reading the config may honour the ids itself
            return
        if SEARCH_KWARGS_FIELD not in ids:
            raise InvalidInputError(
                "policies",
                "ReRetrieve cannot change the retrieval of this chain: it exposes no configurable "
                f"{SEARCH_KWARGS_FIELD!r}, so a retry would fetch the same documents. Build the "
                "chain with truthguard.rag.build_rag_chain(retriever, model), or make the "
                "retriever configurable: retriever.configurable_fields(search_kwargs="
                f"ConfigurableField(id={SEARCH_KWARGS_FIELD!r})).",
            )
        if self.rewrite is not None and not uses_retrieval_query(chain):
            raise InvalidInputError(
                "rewrite",
                f"the chain does not retrieve with a {RETRIEVAL_QUERY_KEY!r} input key, so the "
                "rewritten query would be ignored: build it with truthguard.rag.build_rag_chain",
            )
        if self.alternative is not None and RETRIEVER_FIELD not in ids:
            raise InvalidInputError(
                "alternative",
                f"the chain has no configurable {RETRIEVER_FIELD!r} to switch to "
                f"{self.alternative!r}: pass fallback_retriever= to build_rag_chain, or use "
                f"configurable_alternatives(ConfigurableField(id={RETRIEVER_FIELD!r}), ...).",
            )


class Regenerate(GuardPolicy):
    """Ask the chain again, with the detectors' explanation as feedback.

    The feedback goes into the input under ``feedback_key`` (the RAG helper's prompt has a slot
    for it); a string input gets the feedback appended instead. ``temperature`` is passed as the
    ``configurable`` value ``temperature``.

    Example:
        >>> Regenerate(temperature=0.7, max_uses=2).max_uses
        2
    """

    name: ClassVar[str] = "regenerate"

    feedback_key: str | None = "feedback"
    """Input key for the feedback text; None re-asks with the original input."""
    temperature: float | None = Field(default=None, ge=0)
    """Temperature for the new attempt (None leaves the model's own)."""

    async def astep(self, ctx: PolicyContext) -> Step:
        configurable: dict[str, Any] = (
            {} if self.temperature is None else {TEMPERATURE_FIELD: self.temperature}
        )
        if self.feedback_key is None:
            return Rerun(input=ctx.input, configurable=configurable)
        if ctx.feedback_route == "model":
            configurable[FEEDBACK_FIELD] = ctx.feedback()
            return Rerun(input=ctx.input, configurable=configurable)
        if not isinstance(ctx.input, Mapping):  # appending to a string would change the query
            raise InvalidInputError(
                "feedback_key",
                "the chain takes a string and has no chat model or prompt slot the guard can "
                "reach to place the feedback; pass a dict input with a prompt slot "
                f"{{{self.feedback_key}}}, or Regenerate(feedback_key=None) for a plain re-ask",
            )
        new_input = _dict_input(ctx, "feedback_key")
        new_input[self.feedback_key] = ctx.feedback()
        return Rerun(input=new_input, configurable=configurable)

    def validate_chain(self, chain: Runnable[Any, Any]) -> None:
        if (
            self.temperature is not None
            and TEMPERATURE_FIELD not in config_ids(chain)
            and not reads_config(chain)  # a function reading the config may honour it itself
        ):
            raise InvalidInputError(
                "temperature",
                f"the chain exposes no configurable {TEMPERATURE_FIELD!r}, so the temperature "
                "would be ignored: build it with truthguard.rag.build_rag_chain, or use "
                f"model.configurable_fields(temperature=ConfigurableField(id="
                f"{TEMPERATURE_FIELD!r})), or leave temperature=None",
            )

    def feedback_route(self, chain: Runnable[Any, Any], n_models: int) -> str:
        """``"input"`` when a prompt of the chain has a ``{feedback_key}`` slot or no model is
        reachable; ``"model"`` when the guard appends the feedback to the model's prompt."""
        if self.feedback_key is None or find_prompt_slot(chain, self.feedback_key):
            return "input"
        return "model" if n_models else "input"


class Fallback(GuardPolicy):
    """Give a fixed answer, or the answer of another runnable (terminal).

    A fixed ``answer`` is released unchecked. A ``runnable`` is invoked with the original input;
    its answer is checked when ``check`` is true.

    Example:
        >>> Fallback(answer="I don't know.").answer
        "I don't know."
    """

    name: ClassVar[str] = "fallback"
    terminal: ClassVar[bool] = True
    after_over_capacity: ClassVar[bool] = True

    answer: str | None = None
    """A fixed answer to release."""
    runnable: Runnable[Any, Any] | None = None
    """Another chain to answer instead (same input as the guarded chain)."""
    check: bool = False
    """Check the fallback runnable's answer too (a fixed answer is never checked)."""

    @model_validator(mode="after")
    def _one_source(self) -> Fallback:
        if (self.answer is None) == (self.runnable is None):
            raise InvalidInputError("answer", "give exactly one of answer= or runnable=")
        return self

    async def astep(self, ctx: PolicyContext) -> Step:
        if self.answer is not None:
            return Release(answer=self.answer)
        return Rerun(input=ctx.input, runnable=self.runnable, check=self.check)


FILTER_NOTICE = "[Some statements were removed: the sources do not support them.]"
"""What :class:`Filter` appends to the sentences it releases (our wording)."""


class Filter(GuardPolicy):
    """Release only the sentences of the last answer that the sources support (terminal).

    Each sentence of the last checked answer is checked on its own against that attempt's
    contexts by ``detector`` (default: the local ``RefChecker``, no model call); the sentences
    that pass are released, in order, followed by ``notice``, and the guard ends with status
    ``filtered``. When no sentence passes the policy fails and the next one is asked (put a
    ``Fallback`` after it). Sentences are checked concurrently; a sentence whose check gives no
    verdict (an outage, nothing to check against) is left out.

    Example:
        >>> Filter().notice == FILTER_NOTICE
        True
    """

    name: ClassVar[str] = "filter"
    terminal: ClassVar[bool] = True

    detector: Runnable[Any, Any] | None = None
    """Checks one sentence against the contexts (default: a local ``RefChecker``)."""
    notice: str = FILTER_NOTICE
    """Appended to the released sentences (an empty string appends nothing)."""

    async def astep(self, ctx: PolicyContext) -> Step:
        import asyncio

        from truthguard.refchecker.segment import split_sentences

        last = next((a for a in reversed(ctx.attempts) if a.answer and a.verdict), None)
        if last is None or not last.answer:
            raise TruthGuardError("filter: no checked answer to filter")
        sentences = [s.text.strip() for s in split_sentences(last.answer) if s.text.strip()]
        base: dict[str, Any] = {"question": ctx.question, "contexts": last.contexts}
        if ctx.history:
            base["history"] = ctx.history
        detector = self.detector
        if detector is None:
            from truthguard.refchecker import RefChecker

            detector = RefChecker()
        results: list[DetectionResult] = list(
            await asyncio.gather(
                *(detector.ainvoke({**base, "answer": s}, ctx.config) for s in sentences)
            )
        )
        kept = [s for s, r in zip(sentences, results, strict=True) if r.passing is True]
        if not kept:
            raise TruthGuardError("filter: no sentence of the answer is supported by the sources")
        text = " ".join(kept)
        if self.notice and len(kept) < len(sentences):
            text = f"{text} {self.notice}"
        return Release(answer=text, status="filtered", contexts=list(last.contexts),
                       results=results)  # fmt: skip


class Raise(GuardPolicy):
    """Raise :class:`~truthguard.errors.GuardRejected` carrying every attempt (terminal)."""

    name: ClassVar[str] = "raise"
    terminal: ClassVar[bool] = True
    after_over_capacity: ClassVar[bool] = True

    async def astep(self, ctx: PolicyContext) -> Step:
        last = ctx.last
        reason = last.verdict.reason if last.verdict else (last.error or "no passing answer")
        raise GuardRejected(
            f"no passing answer after {len(ctx.attempts)} attempt(s): {reason}",
            attempts=list(ctx.attempts),
            result=last.verdict,
            usage=Usage.total([a.chain_usage + a.check_usage for a in ctx.attempts]),
        )
