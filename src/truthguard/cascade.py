"""A local-first cascade: the zero-LLM check decides the clear answers, an LLM check the rest.

Checking every answer with a second LLM call doubles what a RAG app pays per answer, while the
local check is fast but unsure on some answers. :class:`CascadeChecker` runs the local check
first and sends an answer to a second detector only when the local verdict is uncertain: its
score falls in the uncertainty ``band``, or the local check says it cannot judge the answer
(:func:`escalation_reasons`). The result says which stage decided (``details["decided_by"]``),
both stages' scores and what the check cost.

Any number of stages works the same way (``stages=[CascadeStage(...), ...]``): the local check,
say, then an open checker (``RefChecker(checker="minicheck-flan-t5-large")``), an LLM last; each
stage decides the answers its own band and signals leave alone, the next one gets the rest, and
``decided_by`` names the stage that decided (``local`` and ``llm`` in the two-stage form).

Everything the cascade reads from the local stage is on its public result, so it works with any
local detector: the ``score`` (for ``RefChecker()``, ``1 - P(hallucinated)`` of its calibrated
decision), the ``label`` and, where a RefChecker gives them, ``details["reason"]``,
``details["claims"][i]["label"]`` and ``details["decision"]["form"]``. A signal whose keys a
local detector does not give simply never fires.

Outcomes (``details["decided_by"]``):

* ``local``: no reason to escalate; the local verdict stands, no model is called;
* ``llm``: the second stage decided (its verdict, score and details are the result's);
* ``local:escalation_timed_out``: the second stage was still running at ``deadline``;
* ``local:escalation_failed``: the second stage gave no verdict (an ``invalid`` result: a model
  error after its retries, an unparseable reply) or raised.

In the last two cases ``on_escalation_failure="local"`` (the default) returns the local verdict,
marked so; ``"invalid"`` returns an ``invalid`` result instead, which a guard treats by its
``on_error`` (fail closed by default).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import patch_config
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from truthguard._sync import run_sync
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.llm import LLMSession
from truthguard.refchecker import RefChecker, RefCheckerInput
from truthguard.result import DetectionResult, Label, Usage

__all__ = [
    "DEFAULT_BAND",
    "OPTIONAL_SIGNALS",
    "SIGNALS",
    "CascadeChecker",
    "CascadeStage",
    "Signal",
    "escalation_reasons",
]

Signal = Literal[
    "band", "no_evidence", "undecided_claims", "chat_reply", "second_opinion", "meaning", "invalid"
]
SIGNALS: tuple[str, ...] = (
    "band",
    "no_evidence",
    "undecided_claims",
    "chat_reply",
    "second_opinion",
    "meaning",
    "invalid",
)
"""Why an answer may be escalated (see :func:`escalation_reasons`)."""
OPTIONAL_SIGNALS: tuple[str, ...] = (
    "undecided_claims",
    "chat_reply",
    "second_opinion",
    "meaning",
)
"""Signals whose worth depends on the data (on HaluEval QA the answers ``undecided_claims``
escalates were all rightly rejected, on rag-answers nine in ten wrongly; ``second_opinion``
fires on four in ten rag-answers, where the answer-level model rejects paraphrases): off by
default; ``truthguard calibrate`` tries them and keeps those that help."""

DEFAULT_BAND: tuple[float, float] = (0.2234, 0.5398)
"""The default uncertainty band on ``RefChecker()``'s calibrated score (``1 - P(hallucinated)``
of the support model), as ``truthguard bench cascade`` fits one band on the fitting rows of
HaluEval's three tasks and rag-answers together for 70% of the answers decided locally. Choose
your own on your labelled answers with ``truthguard calibrate --cascade-coverage`` or
``--cascade-accuracy``."""

_NO_EVIDENCE = ("no_references", "abstain")
"""Reasons of an ``unverifiable`` local result that mean it found nothing to judge by: no
reference at all, or no claim it could check (an LLM extractor may find some)."""

_CANCEL_GRACE = 0.05
"""Seconds a cancelled second stage gets to stop before it is abandoned."""


def _in_band(score: float | None, band: tuple[float, float] | None) -> bool:
    return band is not None and score is not None and band[0] <= score <= band[1]


def escalation_reasons(
    result: DetectionResult,
    *,
    band: tuple[float, float] | None,
    escalate_on: Sequence[str] = SIGNALS,
) -> list[str]:
    """Why the local ``result`` should go to the second stage (empty: it decides alone).

    Signals, each counted only when named in ``escalate_on``:

    * ``band``: the score lies in ``band`` (both ends included);
    * ``no_evidence``: the result is ``unverifiable`` because the check found nothing to judge
      by (``details["reason"]`` ``no_references`` or ``abstain``); a refusal, an answer without
      facts or without content is not escalated;
    * ``undecided_claims``: the answer is rejected on claims the local check neither supports
      nor contradicts (``Neutral``, none ``Contradiction``): a paraphrase it could not align
      and an unsupported fact look alike to it;
    * ``chat_reply``: a reply in a chat (``details["decision"]["form"] == "reply"``) passed
      with a claim not entailed: world knowledge no source holds, which only a model can judge;
    * ``second_opinion``: the local check's two decisions part ways on the answer: the verdict
      it gives (``RefChecker()``'s support model, each claim read alone) and the answer-level
      model fitted on HaluEval (``decide="fitted"``) reading the same claims, which it records
      as ``details["decision"]["second_opinion"]``. Two models fitted on different answers that
      disagree mark an answer of a kind one of them was not fitted on; the check costs nothing
      more, as both read the same grounding;
    * ``meaning``: the local check passes the answer, but the meaning model reads one of its
      fact sentences as more likely unsupported than not (``details["decision"]["meaning"]``,
      log-odds under 0; :mod:`~truthguard.refchecker.meaning`): the word-level reading and the
      reading of what the sentences mean part ways;
    * ``invalid``: the local check gave no verdict (a local model failed to load, say).

    Example:
        >>> r = DetectionResult(detector="x", score=0.4, label="factual")
        >>> escalation_reasons(r, band=(0.2, 0.6))
        ['band']
    """
    wanted = set(escalate_on)
    unknown = wanted - set(SIGNALS)
    if unknown:
        raise InvalidInputError("escalate_on", f"unknown signals {sorted(unknown)}")
    details: Mapping[str, Any] = result.details or {}
    reasons: list[str] = []
    if result.label == Label.INVALID:
        return ["invalid"] if "invalid" in wanted else []
    if result.label == Label.UNVERIFIABLE:
        no_evidence = details.get("reason") in _NO_EVIDENCE
        return ["no_evidence"] if no_evidence and "no_evidence" in wanted else []
    if "band" in wanted and _in_band(result.score, band):
        reasons.append("band")
    claims = details.get("claims")
    labels = [c.get("label") for c in claims if isinstance(c, Mapping)] if claims else []
    open_claims = any(x not in ("Entailment", "Contradiction") for x in labels)
    rejected = result.passing is False or (
        result.passing is None and result.label == Label.HALLUCINATED
    )
    if "undecided_claims" in wanted and rejected and open_claims and "Contradiction" not in labels:
        reasons.append("undecided_claims")
    decision = details.get("decision")
    form = decision.get("form") if isinstance(decision, Mapping) else None
    if "chat_reply" in wanted and form == "reply" and open_claims and not rejected:
        reasons.append("chat_reply")
    other = decision.get("second_opinion") if isinstance(decision, Mapping) else None
    if (
        "second_opinion" in wanted
        and isinstance(other, Mapping)
        and isinstance(other.get("passing"), bool)
        and other["passing"] == rejected
    ):
        reasons.append("second_opinion")
    meant = decision.get("meaning") if isinstance(decision, Mapping) else None
    if (
        "meaning" in wanted
        and isinstance(meant, Mapping)
        and isinstance(meant.get("log_odds"), int | float)
        and meant["log_odds"] < 0
        and result.passing is True
    ):
        reasons.append("meaning")
    return reasons


def _stage_input(detector: BaseDetector, inp: RefCheckerInput) -> dict[str, Any]:
    """The fields of ``inp`` that ``detector`` accepts; references join the contexts of a
    detector that takes no ``references``."""
    accepted = detector.input_model.model_fields
    out: dict[str, Any] = {"question": inp.question, "answer": inp.answer}
    contexts = list(inp.contexts)
    if inp.references:
        if "references" in accepted:
            out["references"] = list(inp.references)
        else:
            contexts = [*inp.references, *contexts]
    if contexts:
        out["contexts"] = contexts
    if inp.history and "history" in accepted:
        out["history"] = list(inp.history)
    return out


def _stage(result: DetectionResult) -> dict[str, Any]:
    """What a cascade result keeps of one stage's result."""
    return {
        "detector": result.detector,
        "score": result.score,
        "label": result.label.value,
        "passing": result.passing,
        "explanation": result.explanation,
        "invalid_reason": result.invalid_reason,
        "usage": result.usage.model_dump(),
    }


class CascadeStage(BaseModel):
    """One stage of a :class:`CascadeChecker`: a detector and what it escalates.

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> CascadeStage(name="open", detector=FakeDetector(score=0.5), band=(0.3, 0.7)).name
        'open'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = Field(min_length=1)
    """What ``details["decided_by"]`` says when this stage decides."""
    detector: BaseDetector
    """The stage's detector; its scores lie in [0, 1], higher meaning more factual."""
    band: tuple[float, float] | None = None
    """Scores of this stage in ``[lo, hi]`` go to the next stage (ignored on the last)."""
    escalate_on: tuple[Signal, ...] = ("band", "no_evidence", "invalid")
    """Which signals send an answer on (see :func:`escalation_reasons`)."""

    @field_validator("band")
    @classmethod
    def _band_ordered(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and not 0.0 <= v[0] <= v[1] <= 1.0:
            raise ValueError("must be (lo, hi) with 0 <= lo <= hi <= 1")
        return v


class CascadeChecker(BaseDetector):
    """Local check first; only the answers it is unsure of go to a second (LLM) detector.

    Any detector works in either stage; both must score in [0, 1], higher meaning more factual.
    The ``band`` is on the local stage's score (``RefChecker()``: ``1 - P(hallucinated)``).
    A guard given a cascade keeps its own ``check_timeout``; set ``deadline`` a little below
    it so that an answer whose second stage is slow still gets the local verdict in time.

    Example:
        >>> from truthguard.testing import FakeDetector
        >>> cascade = CascadeChecker(
        ...     local=FakeDetector(score=lambda inp: 0.5 if "maybe" in inp.answer else 0.9),
        ...     escalate_to=FakeDetector(score=0.1),
        ...     band=(0.3, 0.7),
        ... )
        >>> r = cascade.check("Where is Dubai?", "It is maybe in the UAE.", contexts=["Dubai..."])
        >>> r.details["decided_by"], r.label.value
        ('llm', 'hallucinated')
    """

    detector_name = "cascade"
    input_model = RefCheckerInput
    score_bounds = (0.0, 1.0)

    local: BaseDetector = Field(default_factory=RefChecker)
    """The first stage, run on every answer (default: the zero-LLM ``RefChecker()``)."""
    escalate_to: BaseDetector | None = None
    """The second stage, run only on escalated answers: say ``RefChecker(extractor=
    LLMExtractor(model=llm), checker=LLMChecker(model=llm))``, or any detector. Give either
    this or :attr:`stages`."""
    stages: list[CascadeStage] | None = None
    """Any number of stages instead of ``local`` / ``escalate_to`` / ``band`` /
    ``escalate_on``: each decides the answers its band and signals do not escalate, the last
    decides the rest; ``decided_by`` is the deciding stage's name."""
    band: tuple[float, float] | None = DEFAULT_BAND
    """Local scores in ``[lo, hi]`` are escalated (None: only the other signals escalate).
    Choose it on labelled rows with :func:`~truthguard.evaluation.band.choose_band` or
    ``truthguard calibrate --cascade-coverage / --cascade-accuracy``."""
    escalate_on: tuple[Signal, ...] = ("band", "no_evidence", "invalid")
    """Which signals escalate an answer (see :func:`escalation_reasons`): ``band``,
    ``no_evidence``, ``undecided_claims``, ``chat_reply``, ``second_opinion``, ``invalid``."""
    deadline: float | None = Field(default=None, gt=0)
    """Seconds the whole check may take; a second stage still running then is cancelled and
    ``on_escalation_failure`` applies. None: the second stage takes as long as it takes."""
    on_escalation_failure: Literal["local", "invalid"] = "local"
    """When the second stage times out or gives no verdict: ``local`` returns the local
    verdict (``decided_by`` ``local:escalation_timed_out`` / ``local:escalation_failed``),
    ``invalid`` an ``invalid`` result (a guard then applies its ``on_error``)."""

    @field_validator("band")
    @classmethod
    def _band_ordered(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and not 0.0 <= v[0] <= v[1] <= 1.0:
            raise ValueError("must be (lo, hi) with 0 <= lo <= hi <= 1")
        return v

    @model_validator(mode="after")
    def _stages_in_unit_range(self) -> CascadeChecker:
        if self.stages is not None:
            given = self.model_fields_set & {"local", "escalate_to", "band", "escalate_on"}
            if given:
                raise ValueError(
                    f"stages: give either stages or {', '.join(sorted(given))}, not both"
                )
            if len(self.stages) < 2:
                raise ValueError("stages: a cascade has at least two stages")
            names = [s.name for s in self.stages]
            if len(set(names)) < len(names):
                raise ValueError(f"stages: each stage needs a name of its own, got {names}")
        elif self.escalate_to is None:
            raise ValueError("escalate_to: give the second stage (or stages=[...])")
        for stage in self.chain():
            bounds = type(stage.detector).score_bounds
            if bounds is not None and (bounds[0] < 0.0 or bounds[1] > 1.0):
                name = (
                    stage.name
                    if self.stages is not None
                    else ("local" if stage.name == "local" else "escalate_to")
                )
                raise ValueError(f"{name}: scores must lie in [0, 1], this one's lie in {bounds}")
        return self

    def batch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[DetectionResult]:
        run_sync(self._prefetch_local(inputs, config))
        return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)

    async def abatch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[DetectionResult]:
        await self._prefetch_local(inputs, config)
        return await super().abatch(inputs, config, return_exceptions=return_exceptions, **kwargs)

    async def _prefetch_local(
        self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None
    ) -> None:
        """Let a local stage that prepares a batch up front (``RefChecker.aprefetch`` embeds
        the texts its checks will need in one pass) do so for this batch."""
        first = self.chain()[0].detector
        prefetch = getattr(first, "aprefetch", None)
        if prefetch is None:
            return
        staged = []
        for raw in inputs:
            try:
                inp = self.validate_input(raw)
            except InvalidInputError:
                continue  # its own check reports it
            assert isinstance(inp, RefCheckerInput)
            staged.append(_stage_input(first, inp))
        await prefetch(staged, config)

    def chain(self) -> list[CascadeStage]:
        """The stages in order: :attr:`stages`, or ``local`` then ``escalate_to`` named
        ``local`` and ``llm``."""
        if self.stages is not None:
            return list(self.stages)
        assert self.escalate_to is not None
        return [
            CascadeStage(
                name="local", detector=self.local, band=self.band, escalate_on=self.escalate_on
            ),
            CascadeStage(name="llm", detector=self.escalate_to),
        ]

    async def _acheck(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        assert isinstance(inp, RefCheckerInput)
        started = time.monotonic()
        config: RunnableConfig = session.config
        stages = self.chain()
        first = stages[0]
        result = await first.detector.ainvoke(
            _stage_input(first.detector, inp),
            patch_config(config, run_name=f"cascade:{first.name}"),
        )
        ran: list[tuple[CascadeStage, DetectionResult, list[str]]] = []
        for stage, nxt in itertools.pairwise(stages):
            reasons = escalation_reasons(result, band=stage.band, escalate_on=stage.escalate_on)
            ran.append((stage, result, reasons))
            if not reasons:
                return self._decided(ran)
            what = "the second stage" if len(stages) == 2 else f"the stage {nxt.name!r}"
            left = None if self.deadline is None else self.deadline - (time.monotonic() - started)
            if left is not None and left <= 0:  # the stages so far used the whole deadline
                why = f"no time left for {what} within the {self.deadline}s deadline"
                return self._fallback(ran, "escalation_timed_out", why)
            task = asyncio.ensure_future(
                nxt.detector.ainvoke(
                    _stage_input(nxt.detector, inp),
                    patch_config(config, run_name=f"cascade:{nxt.name}"),
                )
            )
            try:
                done, _ = await asyncio.wait({task}, timeout=left)
            except asyncio.CancelledError:
                task.cancel()
                raise
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=_CANCEL_GRACE)
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
                why = f"{what} did not finish within the {self.deadline}s deadline"
                return self._fallback(ran, "escalation_timed_out", why)
            error = task.exception() if not task.cancelled() else asyncio.CancelledError()
            if error is not None:
                if self.llm_settings.raise_on_error:
                    raise error
                why = f"{what} raised {type(error).__name__}: {error}"
                return self._fallback(ran, "escalation_failed", why, error=error)
            result = task.result()
            if result.label == Label.INVALID:
                why = f"{what} gave no verdict: {result.invalid_reason}"
                return self._fallback(ran, "escalation_failed", why, escalated=(nxt, result))
        ran.append((stages[-1], result, []))
        return self._decided(ran)

    def _decided(
        self,
        ran: list[tuple[CascadeStage, DetectionResult, list[str]]],
        *,
        outcome: str = "",
        note: str = "",
        escalated: tuple[CascadeStage, DetectionResult] | None = None,
    ) -> DetectionResult:
        """The last stage that ran decides (``outcome``: it decides because the next failed)."""
        stage, deciding, _ = ran[-1]
        summary, cost = self._summary(ran, escalated)
        if outcome:
            decided_by = f"{stage.name}:{outcome}"
            by = "locally" if len(ran) == 1 else f"by {stage.name}"
            prefix = f"Decided {by} ({note})"
        elif len(ran) == 1:
            decided_by, prefix = stage.name, "Decided locally"
        else:
            decided_by = stage.name
            prefix = f"Escalated ({', '.join(ran[-2][2])}); decided by {deciding.detector}"
        return deciding.model_copy(
            update={
                "detector": self.detector_name,
                "explanation": f"{prefix}: {deciding.explanation}".strip(),
                "details": {**deciding.details, "decided_by": decided_by, "cascade": summary},
                "usage": cost,
            }
        )

    def _summary(
        self,
        ran: list[tuple[CascadeStage, DetectionResult, list[str]]],
        escalated: tuple[CascadeStage, DetectionResult] | None,
    ) -> tuple[dict[str, Any], Usage]:
        """``details["cascade"]`` (why, every stage that ran, the cost) and their usage summed.
        ``local`` is the first stage's result, ``llm`` the last stage's when it ran."""
        runs = [(s, r, why) for s, r, why in ran]
        if escalated is not None:
            runs.append((escalated[0], escalated[1], []))
        cost = sum((r.usage for _, r, _ in runs), Usage())
        stages = self.chain()
        first, last = runs[0][1], runs[-1][1] if runs[-1][0].name == stages[-1].name else None
        later = [r.usage.wall_seconds for _, r, _ in runs[1:]]
        summary = {
            "escalated": bool(runs[0][2]),
            "reasons": runs[0][2],
            "band": list(stages[0].band) if stages[0].band is not None else None,
            "local": _stage(first),
            "llm": None if last is None or len(runs) == 1 else _stage(last),
            "stages": [
                {
                    "name": s.name,
                    **_stage(r),
                    "band": list(s.band) if s.band is not None else None,
                    "escalated_for": why,
                }
                for s, r, why in runs
            ],
            "cost": {
                "llm_calls": cost.llm_calls,
                "prompt_tokens": cost.prompt_tokens,
                "completion_tokens": cost.completion_tokens,
                "local_seconds": round(first.usage.wall_seconds, 4),
                "llm_seconds": round(sum(later), 4) if later else None,
            },
        }
        return summary, cost

    def _fallback(
        self,
        ran: list[tuple[CascadeStage, DetectionResult, list[str]]],
        outcome: str,
        why: str,
        *,
        escalated: tuple[CascadeStage, DetectionResult] | None = None,
        error: BaseException | None = None,
    ) -> DetectionResult:
        if self.on_escalation_failure == "local":
            out = self._decided(ran, outcome=outcome, note=why, escalated=escalated)
            if error is not None:
                out.details["cascade"]["error"] = f"{type(error).__name__}: {error}"
            return out
        summary, usage = self._summary(ran, escalated)
        if error is not None:
            summary["error"] = f"{type(error).__name__}: {error}"
        failed = escalated[1] if escalated is not None else None
        return DetectionResult.invalid(
            self.detector_name,
            why,
            usage=usage,
            raw_output=failed.raw_output if failed is not None else None,
            details={
                **(failed.details if failed is not None else {}),
                "error": outcome,
                "decided_by": outcome,  # no stage decided
                "cascade": summary,
            },
        )

    def _finalize(
        self,
        result: DetectionResult,
        inp: DetectorInput,
        session: LLMSession,
        started: float,
    ) -> DetectionResult:
        # The stages ran as detectors of their own: their cost is theirs, not this session's.
        stages = result.usage
        out = super()._finalize(result, inp, session, started)
        usage = stages + out.usage
        usage.wall_seconds = out.usage.wall_seconds
        return out.model_copy(update={"usage": usage})
