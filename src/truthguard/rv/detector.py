"""The Reverse Validation detector (Yang et al., 2023, sections 4 and 5)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError, InvalidLLMOutput
from truthguard.llm import LLMSession, as_runnable
from truthguard.result import DetectionResult, Label
from truthguard.rv import _prompts as P
from truthguard.rv._match import EntityMatcher, MatchOutcome, PaperMatcher, RobustMatcher, Variant
from truthguard.rv._parse import (
    heuristic_entity,
    leaks_entity,
    parse_answer,
    parse_entity,
    parse_query,
    parse_requirements,
    unmet_requirements,
)
from truthguard.similarity import SimilarityBackend
from truthguard.store import ArtifactStore, cached_call

__all__ = ["ReverseValidation", "ReverseValidationInput"]


class ReverseValidationInput(DetectorInput):
    """A passage to check; the entity it is about may be given or left to the detector."""

    question: str = ""
    """The question the passage answers (optional: Reverse Validation works on the passage)."""
    entity: str | None = None
    """The entity the passage is about; extracted from the passage when omitted."""

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, v: str) -> str:  # overrides the base rule: may be empty here
        return v

    @field_validator("answer")
    @classmethod
    def _answer_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank (it is the passage to check)")
        return v

    @field_validator("entity")
    @classmethod
    def _entity_not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("must not be blank (omit it to extract the entity from the passage)")
        return v.strip() if v is not None else None


class ReverseValidation(BaseDetector):
    """Passage-level hallucination check by reverse validation.

    Stage 1 turns the passage into a query that hides the entity (QG: a question whose answer is
    the entity; EM: a numbered list of the entity's features); stage 2 asks the model to answer
    it; stage 3 checks whether the entity comes back. If it does, the passage agrees with what
    the model knows (score 1.0, ``factual``); if not, the passage probably contains made-up
    details (score 0.0, ``hallucinated``).

    Example:
        >>> from truthguard.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(script={
        ...     "numbered list": "1. Tree genus\\n2. Called the tree of heaven",
        ...     "Which entity": "Ailanthus meets 100% of the points.",
        ... })
        >>> rv = ReverseValidation(model=model, variant="em", matcher="robust")
        >>> rv.invoke({"answer": "Ailanthus is a tree genus...", "entity": "Ailanthus"}).label.value
        'factual'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    detector_name: ClassVar[str] = "reverse_validation"
    input_model: ClassVar[type[DetectorInput]] = ReverseValidationInput
    score_bounds: ClassVar[tuple[float, float] | None] = (0.0, 1.0)

    model: Any
    """The chat model that builds the query and answers it (any LangChain chat model)."""
    variant: Literal["qg", "em"] = "em"
    """``qg``: question generation; ``em``: entity matching with a percentage of requirements."""
    matcher: Literal["paper", "robust"] | EntityMatcher = "paper"
    """Stage-3 rule: ``paper`` (published rules; the default, best F1 measured on PHD),
    ``robust`` (fewer false alarms, lower recall), or an :class:`EntityMatcher`."""
    similarity: SimilarityBackend | None = None
    """Embedding backend the ``robust`` matcher consults when no lexical rule fires."""
    judge: Any = None
    """Chat model the ``robust`` matcher asks as a last resort (yes / no)."""
    entity_extraction: Literal["llm", "heuristic"] = "llm"
    """How to find the entity when the input has none: ask the model, or take the first
    sentence's subject. The LLM path falls back to the heuristic on an unusable reply; the
    heuristic alone raises :class:`InvalidInputError` (field ``entity``) when it finds none."""
    rebuild_leaks: bool = True
    """Rebuild a stage-1 query that names the entity, once. Replays of recordings that hold no
    rebuilt query should turn this off (the leak is still detected and reported)."""
    trust_leaking_queries: bool = False
    """Count a match whose stage-1 query still names the entity (``leak.still_leaking``), as
    the paper's recorded runs did; only for reproducing them. By default such a match proves
    nothing (the query gave the entity away), so the result is ``invalid`` and a closed guard
    never passes it."""
    store: ArtifactStore | None = None
    """Cache of stage outputs (keyed by passage / query, entity, model and prompt version)."""
    threshold: float | None = Field(default=0.5)
    """Scores are 1.0 or 0.0; ``passing`` is ``score >= threshold``."""

    @field_validator("model", "judge")
    @classmethod
    def _model_like(cls, v: Any, info: Any) -> Any:
        if v is not None:
            as_runnable(v, field=info.field_name)
        elif info.field_name == "model":
            raise ValueError("a chat model is required")
        return v

    @field_validator("matcher", mode="before")
    @classmethod
    def _known_matcher(cls, v: Any) -> Any:
        if isinstance(v, str) and v not in ("paper", "robust"):
            raise ValueError(f"expected 'paper', 'robust' or an EntityMatcher, got {v!r}")
        return v

    @field_validator("similarity", "judge")
    @classmethod
    def _only_for_robust(cls, v: Any, info: Any) -> Any:
        if v is not None and info.data.get("matcher") != "robust":
            raise ValueError("is only used by matcher='robust'; configure your matcher instead")
        return v

    # -- configuration --------------------------------------------------------------------------

    @property
    def entity_matcher(self) -> EntityMatcher:
        """The stage-3 matcher this detector uses."""
        if isinstance(self.matcher, EntityMatcher):
            return self.matcher
        if self.matcher == "paper":
            return PaperMatcher()
        return RobustMatcher(similarity=self.similarity, judge=self.judge)

    # -- stages ---------------------------------------------------------------------------------

    async def _call(
        self,
        session: LLMSession,
        prompt: str,
        *,
        step: str,
        stage: str,
        key_text: str,
        entity: str | None,
        validate: Any = None,
    ) -> str:
        """One model call through the store, with the metadata a replay model keys on."""
        meta = {
            "entity": entity,
            "rv_variant": self.variant,
            "replay_key": f"{self.variant}:{step}",
        }
        return await cached_call(
            session,
            self.model,
            prompt,
            store=self.store,
            question=key_text,
            kind=f"rv.{self.variant}.{stage.removeprefix('rv.')}",
            prompt_version=P.PROMPT_VERSION,
            stage=stage,
            extra=entity or "",
            metadata=meta,
            validate=validate,
        )

    async def _entity(
        self, inp: ReverseValidationInput, session: LLMSession
    ) -> tuple[str, str, str | None]:
        """``(entity, source, raw extraction output)``."""
        if inp.entity:
            return inp.entity, "input", None
        if self.entity_extraction == "heuristic":
            found = heuristic_entity(inp.answer)
            if found is None:
                raise InvalidInputError(
                    "entity", "no entity given and none found in the passage's first sentence"
                )
            return found, "heuristic", None
        try:
            # Validated before caching: an unusable reply is asked again next time.
            raw = await self._call(
                session,
                P.ENTITY_EXTRACTION.format(passage=inp.answer.strip()),
                step="entity",
                stage="rv.entity",
                key_text=inp.answer,
                entity=None,
                validate=parse_entity,
            )
            return parse_entity(raw), "llm", raw
        except InvalidLLMOutput as e:
            found = heuristic_entity(inp.answer)
            if found is None:
                raise
            return found, "heuristic fallback", e.raw

    async def _query(
        self, passage: str, entity: str, session: LLMSession
    ) -> tuple[str, list[str] | None, dict[str, Any]]:
        """Stage 1 with the leak check: ``(query text, EM requirements, leak report)``."""
        first, rebuild = (
            (P.QG_QUERY, P.QG_QUERY_REBUILD)
            if self.variant == "qg"
            else (P.EM_QUERY, P.EM_QUERY_REBUILD)
        )
        raw = await self._call(
            session,
            first.format(entity=entity, passage=passage),
            step="query",
            stage="rv.query",
            key_text=passage,
            entity=entity,
            validate=lambda text: self._parse_query(text, "rv.query"),
        )
        query, items = self._parse_query(raw, "rv.query")
        leak: dict[str, Any] = {"detected": leaks_entity(query, entity), "rebuilt": False}
        if leak["detected"] and self.rebuild_leaks:
            leak["first_query"] = query
            raw = await self._call(
                session,
                rebuild.format(entity=entity, passage=passage),
                step="query",  # a replay serves the stage-1 recording again
                stage="rv.query_rebuild",
                key_text=passage,
                entity=entity,
                validate=lambda text: self._parse_query(text, "rv.query_rebuild"),
            )
            query, items = self._parse_query(raw, "rv.query_rebuild")
            leak["rebuilt"] = True
        leak["still_leaking"] = leak["detected"] and leaks_entity(query, entity)
        return query, items, leak

    def _parse_query(self, raw: str, stage: str) -> tuple[str, list[str] | None]:
        if self.variant == "qg":
            return parse_query(raw, stage=stage), None
        items = parse_requirements(raw, stage=stage)
        return raw.strip(), items

    async def _acheck(self, inp: DetectorInput, session: LLMSession) -> DetectionResult:
        if not isinstance(inp, ReverseValidationInput):  # validate_input always gives one
            raise InvalidInputError("input", f"expected ReverseValidationInput, got {inp!r}")
        passage = inp.answer.strip()
        entity, source, extraction_raw = await self._entity(inp, session)
        query, requirements, leak = await self._query(passage, entity, session)
        template = P.QG_ANSWER if self.variant == "qg" else P.EM_ANSWER
        answer = await self._call(
            session,
            template.format(query=query),
            step="answer",
            stage="rv.answer",
            key_text=query,
            entity=entity,
            validate=_require_text,
        )
        if not answer.strip():
            raise InvalidLLMOutput(
                "stage 2 returned an empty answer", raw=answer, stage="rv.answer"
            )
        matcher = self.entity_matcher
        outcome = await matcher.amatch(entity, answer, variant=self.variant, session=session)
        unmet = unmet_requirements(answer) if self.variant == "em" else []
        details: dict[str, Any] = {
            "variant": self.variant,
            "entity": entity,
            "entity_source": source,
            "query": query,
            "answer_stage2": answer,
            "percentage": outcome.percentage,
            "percentages": outcome.percentages,
            "unmet_requirements": unmet,
            "leak": leak,
            "match": {"matcher": matcher.name, **outcome.model_dump()},
        }
        if requirements is not None:
            details["requirements"] = requirements
        if extraction_raw is not None:
            details["entity_extraction_output"] = extraction_raw
        explanation = _explain(self.variant, entity, answer, outcome, leak, unmet)
        if outcome.matched and leak["still_leaking"] and not self.trust_leaking_queries:
            # The query named the entity, so finding it in the answer proves nothing.
            return DetectionResult.invalid(
                self.detector_name,
                f"the stage-1 query still names the entity {entity!r}, so its match is no "
                f"verdict. {explanation}",
                raw_output=query,
                details={**details, "stage": "rv.query"},
            )
        return DetectionResult(
            detector=self.detector_name,
            score=1.0 if outcome.matched else 0.0,
            label=Label.FACTUAL if outcome.matched else Label.HALLUCINATED,
            explanation=explanation,
            details=details,
        )


def _explain(
    variant: Variant,
    entity: str,
    answer: str,
    outcome: MatchOutcome,
    leak: dict[str, Any],
    unmet: list[str],
) -> str:
    asked = (
        "a question built from the passage"
        if variant == "qg"
        else "the list of features the passage gives"
    )
    short = " ".join(answer.split())
    short = short if len(short) <= 160 else short[:157] + "..."
    verdict = (
        f"{entity!r} came back, so the passage agrees with what the model knows."
        if outcome.matched
        else f"{entity!r} did not come back, so the passage likely contains hallucinated details."
    )
    parts = [f"Given {asked}, the model answered {short!r}: {outcome.reason}. {verdict}"]
    if unmet and not outcome.matched:
        parts.append(f"The model pointed out: {' '.join(unmet)[:300]}")
    if leak.get("still_leaking"):
        parts.append(
            f"Warning: the stage-1 query names {entity!r}"
            + (" even after a rebuild" if leak.get("rebuilt") else "")
            + ", so a match is weak evidence."
        )
    return " ".join(parts)


def _require_text(text: str) -> None:
    parse_answer(text)  # the shared "has content" rule: "..." is no answer
