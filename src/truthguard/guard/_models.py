"""What a guard returns: the verdict of one check, each attempt, and the final result."""

from __future__ import annotations

import warnings
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from truthguard.result import DetectionResult, Usage

__all__ = ["Attempt", "GuardResult", "GuardVerdict"]


class _RenamedPassing(BaseModel):
    """A model whose ``passing`` field was called ``passed``: the old name still loads (pickles,
    LangGraph checkpoints, verdict events, callers passing it) and reads, with a warning."""

    @model_validator(mode="before")
    @classmethod
    def _old_name(cls, data: Any) -> Any:
        return _passing(data)

    @property
    def passed(self) -> bool:
        """Deprecated alias of :attr:`passing`."""
        _renamed(type(self).__name__)
        return self.passing  # type: ignore[attr-defined,no-any-return]


class GuardVerdict(_RenamedPassing):
    """The combined decision of the guard's detectors on one answer."""

    model_config = ConfigDict(extra="forbid")

    passing: bool
    """Whether the answer may be released (``passed`` before, still accepted and readable,
    deprecated)."""
    combine: Literal["all", "any", "mean"]
    """The combination rule that decided ``passing``."""
    score: float | None = None
    """Mean of the normalised scores in [0, 1] (None when no detector gave a score)."""
    scores: dict[str, float | None] = Field(default_factory=dict)
    """Normalised score per detector key (None for errors, time-outs, unverifiable)."""
    passes: dict[str, bool | None] = Field(default_factory=dict)
    """Per-detector pass / fail against its threshold (None when it gave no verdict)."""
    errors: dict[str, str] = Field(default_factory=dict)
    """Detectors that errored, timed out or gave no verdict, with the reason."""
    failed_open: bool = False
    """True when a detector error was counted as a pass (``on_error="open"``)."""
    over_capacity: bool = False
    """True when the check was refused over capacity (``max_concurrent_checks``) before any
    detector ran: no verdict on the answer, so only policies that add no work apply after it
    (``GuardPolicy.after_over_capacity``)."""
    decided_by: dict[str, str] = Field(default_factory=dict)
    """Per cascade detector key, the stage that decided (``details["decided_by"]``)."""
    reason: str = ""
    """One readable sentence explaining the decision."""


class Attempt(BaseModel):
    """One answer the guard saw, and what it made of it."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    number: int
    """1 for the chain's own answer, then 2, 3, ..."""
    policy: str | None = None
    """Name of the policy that produced this attempt (None for the first)."""
    answer: str | None = None
    """The answer text (None when the chain raised)."""
    output: Any = None
    """The chain's raw output for this attempt."""
    contexts: list[str] = Field(default_factory=list)
    """Context passages the answer came with."""
    results: list[DetectionResult] = Field(default_factory=list)
    """Every detector's result on this answer (empty when not checked)."""
    verdict: GuardVerdict | None = None
    """The combined verdict (None when the answer was released unchecked)."""
    chain_usage: Usage = Field(default_factory=Usage)
    """LLM usage of the chain (or fallback runnable) in this attempt."""
    check_usage: Usage = Field(default_factory=Usage)
    """LLM usage of the detectors' own calls in this attempt."""
    error: str | None = None
    """The chain's exception, when it raised on a retry."""
    seconds: float = 0.0
    """Wall time of the attempt (chain plus check)."""

    @property
    def passing(self) -> bool:
        """True when this answer was checked and passed."""
        return self.verdict is not None and self.verdict.passing

    @property
    def passed(self) -> bool:
        """Deprecated alias of :attr:`passing`."""
        _renamed("Attempt")
        return self.passing


class GuardResult(_RenamedPassing):
    """The guard's output: the released answer plus everything that led to it.

    ``status`` is ``"passed"`` when a checked answer passed, ``"fallback"`` when a fallback answer
    was released unchecked, ``"filtered"`` when only the supported sentences of an answer were
    released (``Filter``, with a notice), and ``"rejected"`` when attempts ran out. A rejected
    result releases nothing: ``answer`` and ``output`` are None, and the answers the guard
    refused stay in ``attempts`` (:attr:`last_answer` is the last of them), so none is lost.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    question: str
    """The question the chain was asked."""
    answer: str | None
    """The released answer text (None when rejected: nothing was released)."""
    output: Any = None
    """The chain output the released answer came from (a string, message or dict)."""
    status: Literal["passed", "fallback", "filtered", "rejected"]
    """How the guard ended (see the class docstring)."""
    passing: bool
    """True only when the released answer passed a check (``passed`` before, still accepted
    and readable, deprecated)."""
    verdict: GuardVerdict | None = None
    """Verdict on the released answer; after a fallback or when rejected, the verdict on the
    last answer refused (when the chain gave no answer to check, one saying so), so its
    ``reason`` always says why the guard ended as it did."""
    attempts: list[Attempt]
    """Every attempt, in order."""
    usage: Usage
    """Total LLM usage over all attempts: the chain's calls and the detectors' calls."""

    @model_validator(mode="after")
    def _verdict_of_what_was_refused(self) -> GuardResult:
        if self.verdict is None and self.status in ("fallback", "rejected"):
            self.verdict = _refused_verdict(self.attempts, self.status)
        return self

    @property
    def n_attempts(self) -> int:
        return len(self.attempts)

    @property
    def reason(self) -> str:
        """One sentence on why the guard ended as it did: the verdict's reason (for a fallback,
        why the last answer was refused, or that the chain gave none to check)."""
        return self.verdict.reason if self.verdict is not None else ""

    @property
    def over_capacity(self) -> bool:
        """True when the last check of the request was refused over capacity (no detector ran
        on the answer): the guard's outcome says nothing about the answer's grounding."""
        checked = next((a.verdict for a in reversed(self.attempts) if a.verdict), None)
        return checked is not None and checked.over_capacity

    @property
    def last_answer(self) -> str | None:
        """The last answer any attempt produced, released or not (for inspection)."""
        return next((a.answer for a in reversed(self.attempts) if a.answer is not None), None)


def _refused_verdict(attempts: list[Attempt], status: str) -> GuardVerdict | None:
    """The verdict a fallback or rejection rests on: the last one given, or, when no answer was
    checked (the chain raised or gave an empty answer), one that says so."""
    refused = next((a.verdict for a in reversed(attempts) if a.verdict is not None), None)
    if refused is not None:
        return refused
    error = next((a.error for a in reversed(attempts) if a.error), None)
    if error is None:
        return None
    return GuardVerdict(
        passing=False,
        combine="all",
        errors={"chain": error},
        reason=f"{status}: no answer was checked: {error}",
    )


def _passing(data: Any) -> Any:
    """``data`` with the old field name ``passed`` read as ``passing``: records made before the
    rename (pickles, LangGraph checkpoints, verdict events) and callers still passing it."""
    if isinstance(data, dict) and "passed" in data and "passing" not in data:
        data = {**data, "passing": data["passed"]}
        del data["passed"]
    return data


def _renamed(owner: str) -> None:
    warnings.warn(
        f"{owner}.passed is deprecated: use {owner}.passing (as on every other result)",
        DeprecationWarning,
        stacklevel=3,
    )


# LangGraph checkpoints and pickles record a class by its ``__module__``: give them the public
# module, so saved records survive any move of this private one (``truthguard.serde``).
for _model in (GuardVerdict, Attempt, GuardResult):
    _model.__module__ = "truthguard.guard"
del _model
