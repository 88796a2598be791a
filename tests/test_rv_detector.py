"""The ReverseValidation detector end to end with scripted chat models."""

from __future__ import annotations

import asyncio

import pytest

from truthguard.errors import InvalidInputError, LLMCallError
from truthguard.llm import LLMSettings
from truthguard.result import Label
from truthguard.rv import EntityMatcher, MatchOutcome, ReverseValidation
from truthguard.rv._parse import parse_entity
from truthguard.testing import ScriptedChatModel

PASSAGE = (
    "Ailanthus is a genus of trees in the Simaroubaceae family. The best-known species is the "
    "tree of heaven, an invasive species grown for silkworms."
)
FEATURES = "1. Genus of trees\n2. Simaroubaceae family\n3. Known as the tree of heaven"

# Substrings of our prompt templates, most specific first.
EM_REBUILD, EM_QUERY, EM_ANSWER = "gave the name away", "numbered list", "Which entity fits"
QG_REBUILD, QG_QUERY, QG_ANSWER = (
    "gave away the answer",
    "Write one question",
    "Answer the question",
)
EXTRACT = "which single entity"


def em_model(answer: str, features: str = FEATURES, **kw) -> ScriptedChatModel:
    return ScriptedChatModel(script={EM_QUERY: features, EM_ANSWER: answer}, **kw)


def test_em_entity_comes_back_factual():
    model = em_model("The entity is Ailanthus, which meets 100% of the requirements.")
    r = ReverseValidation(model=model, variant="em").invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.label is Label.FACTUAL and r.score == 1.0 and r.passing is True
    d = r.details
    assert d["requirements"] == [
        "Genus of trees",
        "Simaroubaceae family",
        "Known as the tree of heaven",
    ]
    assert d["answer_stage2"].startswith("The entity is Ailanthus")
    assert d["percentage"] == 100.0 and d["entity_source"] == "input"
    assert d["leak"] == {"detected": False, "rebuilt": False, "still_leaking": False}
    assert d["match"]["matcher"] == "paper"
    assert "'Ailanthus' came back" in r.explanation
    assert r.usage.llm_calls == 2 and r.usage.total_tokens > 0
    assert r.answer == PASSAGE and r.question is None
    # stage 2 is asked with the stage-1 output, and never sees the entity
    assert FEATURES in model.calls[1] and "Ailanthus" not in model.calls[1]


def test_em_low_percentage_is_hallucinated_with_unmet_requirements():
    answer = (
        "Ailanthus meets 60% of the requirements. It is not known as a food for silkworms. "
        "Requirement 2 is not met."
    )
    r = ReverseValidation(model=em_model(answer), variant="em", matcher="robust").invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.label is Label.HALLUCINATED and r.score == 0.0 and r.passing is False
    assert r.details["percentage"] == 60.0
    assert r.details["unmet_requirements"] == [
        "It is not known as a food for silkworms.",
        "Requirement 2 is not met.",
    ]
    assert "did not come back" in r.explanation and "pointed out" in r.explanation


def test_qg_unsure_answer_is_hallucinated():
    model = ScriptedChatModel(
        script={
            QG_QUERY: "Question: Which tree genus is called the tree of heaven?",
            QG_ANSWER: "I'm not sure.",
        }
    )
    r = ReverseValidation(model=model, variant="qg", matcher="robust").invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.label is Label.HALLUCINATED
    assert r.details["query"] == "Which tree genus is called the tree of heaven?"
    assert r.details["match"]["hedged"] is True
    assert "requirements" not in r.details


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"entity": "Ailanthus"}, "answer"),
        ({"answer": "   ", "entity": "Ailanthus"}, "answer"),
        ({"answer": PASSAGE, "entity": " "}, "entity"),
        ({"answer": PASSAGE, "colour": "red"}, "colour"),
    ],
)
def test_bad_input_names_the_field(payload, field):
    rv = ReverseValidation(model=em_model("x"))
    with pytest.raises(InvalidInputError) as e:
        rv.invoke(payload)
    assert e.value.field == field


def test_question_is_optional_but_kept():
    model = em_model("Ailanthus, 100%.")
    r = ReverseValidation(model=model).invoke(
        {"question": "Tell me about Ailanthus", "answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.question == "Tell me about Ailanthus" and r.label is Label.FACTUAL


def test_entity_extracted_by_the_model():
    model = ScriptedChatModel(
        script={EXTRACT: "Entity: Ailanthus.", EM_QUERY: FEATURES, EM_ANSWER: "Ailanthus, 100%."}
    )
    r = ReverseValidation(model=model).invoke({"answer": PASSAGE})
    assert r.details["entity"] == "Ailanthus" and r.details["entity_source"] == "llm"
    assert r.usage.llm_calls == 3 and r.label is Label.FACTUAL


def test_unusable_extraction_falls_back_to_the_heuristic():
    model = ScriptedChatModel(
        script={EXTRACT: "", EM_QUERY: FEATURES, EM_ANSWER: "Ailanthus, 100%."}
    )
    r = ReverseValidation(model=model).invoke({"answer": PASSAGE})
    assert r.details["entity"] == "Ailanthus"
    assert r.details["entity_source"] == "heuristic fallback"
    assert r.details["entity_extraction_output"] == ""


def test_unusable_extraction_without_fallback_is_invalid():
    passage = "Trees grow in many places and climates across the world, in every season."
    model = ScriptedChatModel(script={EXTRACT: ""})
    r = ReverseValidation(model=model).invoke({"answer": passage})
    assert r.label is Label.INVALID and r.details["stage"] == "rv.entity" and r.answer == passage


def test_heuristic_extraction_makes_no_model_call():
    model = em_model("Ailanthus, 100%.")
    r = ReverseValidation(model=model, entity_extraction="heuristic").invoke({"answer": PASSAGE})
    assert r.details["entity_source"] == "heuristic" and model.call_count == 2
    with pytest.raises(InvalidInputError) as e:
        ReverseValidation(model=model, entity_extraction="heuristic").invoke(
            {"answer": "Trees grow in many places and climates across the world."}
        )
    assert e.value.field == "entity"


# -- entity leak in stage 1 -----------------------------------------------------------------------


def test_leaking_question_is_rebuilt_once():
    model = ScriptedChatModel(
        script={
            QG_REBUILD: "Which genus contains the tree of heaven?",
            QG_QUERY: "Is Ailanthus the genus of the tree of heaven?",
            QG_ANSWER: "Ailanthus.",
        }
    )
    r = ReverseValidation(model=model, variant="qg").invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    leak = r.details["leak"]
    assert leak["detected"] and leak["rebuilt"] and not leak["still_leaking"]
    assert leak["first_query"] == "Is Ailanthus the genus of the tree of heaven?"
    assert r.details["query"] == "Which genus contains the tree of heaven?"
    assert model.call_count == 3 and "Which genus contains" in model.calls[2]
    assert r.label is Label.FACTUAL and "Warning" not in r.explanation


def test_leak_that_survives_the_rebuild_is_reported():
    leaky = "1. Ailanthus altissima is its best-known species\n2. Tree genus"
    model = ScriptedChatModel(
        script={EM_REBUILD: leaky, EM_QUERY: leaky, EM_ANSWER: "Ailanthus, 100%."}
    )
    r = ReverseValidation(model=model).invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert r.details["leak"]["rebuilt"] and r.details["leak"]["still_leaking"]
    assert model.call_count == 3
    assert "names 'Ailanthus' even after a rebuild" in r.explanation
    # ... so the match counts for nothing: no verdict, and a closed guard never passes it
    assert r.label is Label.INVALID and r.passing is None and r.raw_output.startswith("1.")


def test_leak_rebuild_can_be_turned_off():
    leaky = "1. Ailanthus altissima is its best-known species\n2. Tree genus"
    model = em_model("Ailanthus, 100%.", features=leaky)
    r = ReverseValidation(model=model, rebuild_leaks=False).invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.details["leak"] == {"detected": True, "rebuilt": False, "still_leaking": True}
    assert model.call_count == 2 and r.label is Label.INVALID


def test_a_leaking_match_is_no_verdict_and_a_closed_guard_never_passes_it():
    from truthguard.guard import HallucinationGuard

    leaky = "1. Ailanthus altissima is its best-known species\n2. Tree genus"
    rv = ReverseValidation(model=em_model("Ailanthus, 100%.", features=leaky))
    r = rv.invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert r.label is Label.INVALID and "still names the entity" in r.invalid_reason
    assert r.details["query"] == leaky and r.details["match"]["matched"]
    chain = ScriptedChatModel(script=[PASSAGE])
    guard = HallucinationGuard(chain=chain, detectors=rv, on_error="closed", max_attempts=1)
    out = guard.invoke("Tell me about Ailanthus.")
    assert out.status == "rejected" and out.answer is None
    # Replays of the paper's recorded runs count such a match, as the paper did.
    trusted = rv.model_copy(update={"trust_leaking_queries": True})
    r = trusted.invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert r.label is Label.FACTUAL and r.details["leak"]["still_leaking"]


def test_a_common_phrase_sharing_a_titles_words_is_no_leak():
    features = "1. Romantic comedy film\n2. A successful wedding planner falls in love"
    model = em_model("The Wedding Planner, 100%.", features=features)
    passage = "The Wedding Planner is a 2001 romantic comedy."
    r = ReverseValidation(model=model, rebuild_leaks=False).invoke(
        {"answer": passage, "entity": "The Wedding Planner"}
    )
    assert not r.details["leak"]["detected"] and r.label is Label.FACTUAL


# -- model trouble --------------------------------------------------------------------------------


def test_unparseable_stage1_is_invalid_and_keeps_the_raw_text():
    model = em_model("unused", features="Sorry, I can't help with that.")
    r = ReverseValidation(model=model).invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert r.label is Label.INVALID and r.score is None
    assert r.raw_output == "Sorry, I can't help with that." and r.details["stage"] == "rv.query"
    assert r.answer == PASSAGE


def test_empty_stage2_is_invalid():
    r = ReverseValidation(model=em_model("  ")).invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert r.label is Label.INVALID and r.details["stage"] == "rv.answer"


def test_failing_model_gives_invalid_or_raises_on_request():
    model = em_model("x", fail_first=10)
    settings = LLMSettings(max_retries=1, backoff_initial=0)
    r = ReverseValidation(model=model, llm_settings=settings).invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.label is Label.INVALID and r.answer == PASSAGE and r.usage.failed_calls == 1
    strict = LLMSettings(max_retries=0, backoff_initial=0, raise_on_error=True)
    with pytest.raises(LLMCallError):
        ReverseValidation(model=model, llm_settings=strict).invoke(
            {"answer": PASSAGE, "entity": "Ailanthus"}
        )


# -- batches, configuration, matchers, cache -------------------------------------------------------


def test_async_batch_of_passages_keeps_order():
    entities = ["Ailanthus", "Toona", "Melia", "Cedrela", "Azadirachta", "Swietenia"]

    def answer(prompt: str) -> str:
        if EM_QUERY in prompt:
            name = next(e for e in entities if e in prompt)
            return f"1. Tree genus number {entities.index(name)}"
        index = int(prompt.split("number ")[1].split()[0])
        return f"{entities[index]}, 100%." if index % 2 == 0 else "Quercus, 100%."

    model = ScriptedChatModel(script=answer, latency=0.01)
    rv = ReverseValidation(model=model, batch_concurrency=3)
    inputs = [{"answer": f"{e} is a genus of trees.", "entity": e} for e in entities]
    results = asyncio.run(rv.abatch(inputs))
    assert [r.details["entity"] for r in results] == entities
    assert [r.label for r in results] == [Label.FACTUAL, Label.HALLUCINATED] * 3
    assert model.call_count == 12


def test_configuration_errors_name_the_field():
    with pytest.raises(InvalidInputError, match="matcher"):
        ReverseValidation(model=em_model("x"), matcher="fuzzy")
    with pytest.raises(InvalidInputError, match="similarity"):
        ReverseValidation(model=em_model("x"), matcher="paper", similarity=object())
    with pytest.raises(InvalidInputError, match="judge"):
        ReverseValidation(model=em_model("x"), judge=em_model("y"))
    with pytest.raises(InvalidInputError, match="variant"):
        ReverseValidation(model=em_model("x"), variant="nli")
    with pytest.raises(InvalidInputError, match="model"):
        ReverseValidation(model=42)


def test_custom_matcher_object():
    class Never(EntityMatcher):
        name = "never"

        async def amatch(self, entity, answer, *, variant, session):
            return MatchOutcome(matched=False, mentioned=False, method="never", reason="never")

    r = ReverseValidation(model=em_model("Ailanthus, 100%."), matcher=Never()).invoke(
        {"answer": PASSAGE, "entity": "Ailanthus"}
    )
    assert r.label is Label.HALLUCINATED and r.details["match"]["matcher"] == "never"


@pytest.mark.model
def test_stage_outputs_are_cached_in_the_store(store):
    model = em_model("Ailanthus, 100%.")
    rv = ReverseValidation(model=model, store=store)
    first = rv.invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    second = rv.invoke({"answer": PASSAGE, "entity": "Ailanthus"})
    assert first.usage.llm_calls == 2 and second.usage.llm_calls == 0
    assert second.usage.cached_calls == 2 and model.call_count == 2
    assert second.details == first.details


def test_public_exports_are_locked():
    import truthguard.rv as rv

    assert sorted(rv.__all__) == sorted(
        [
            "PROMPT_VERSION",
            "EntityMatcher",
            "MatchOutcome",
            "PaperMatcher",
            "RVReplayChatModel",
            "ReverseValidation",
            "ReverseValidationInput",
            "RobustMatcher",
            "replay_key",
            "replay_model",
        ]
    )
    assert all(hasattr(rv, name) for name in rv.__all__)
    assert ReverseValidation.detector_name == "reverse_validation"


EXTRACT, EM_QUERY, EM_ANSWER = "which single entity", "numbered list", "Which entity fits"


def test_unusable_entity_extraction_is_not_served_from_the_store(store):
    replies = iter(["I am not sure.\nIt could be many things.\nSorry.", "Ailanthus"])

    def script(prompt: str) -> str:
        if EXTRACT in prompt:
            return next(replies)
        return FEATURES if EM_QUERY in prompt else "Ailanthus, 100%."

    model = ScriptedChatModel(model_name="rv", script=script)
    rv = ReverseValidation(model=model, store=store)
    first = rv.invoke({"answer": PASSAGE})
    assert first.details["entity_source"] == "heuristic fallback"
    assert first.details["entity_extraction_output"].startswith("I am not sure.")
    second = rv.invoke({"answer": PASSAGE})
    assert second.details["entity_source"] == "llm"  # asked again, not the stored garbage
    assert second.details["entity_extraction_output"] == "Ailanthus"
    third = rv.invoke({"answer": PASSAGE})  # the usable reply is stored and served
    assert third.details["entity_source"] == "llm" and third.usage.llm_calls == 0
    assert third.label is Label.FACTUAL


@pytest.mark.parametrize(
    "raw",
    [
        "The passage is mainly about Ailanthus.",
        "The passage is about **Ailanthus**.",
        "Sure! The entity is Ailanthus.",
        "Main entity: Ailanthus",
        "Name: Ailanthus",
    ],
)
def test_parse_entity_drops_common_lead_ins(raw):
    assert parse_entity(raw) == "Ailanthus"


def test_parse_entity_keeps_names_that_start_with_a_label_word():
    assert parse_entity("Entity Framework") == "Entity Framework"
    assert parse_entity("Topic modeling") == "Topic modeling"


def test_chatty_extraction_still_finds_the_entity_end_to_end():
    model = ScriptedChatModel(
        script={
            EXTRACT: "The passage is mainly about Ailanthus.",
            EM_QUERY: FEATURES,
            EM_ANSWER: "Ailanthus, 100%.",
        }
    )
    r = ReverseValidation(model=model).invoke({"answer": PASSAGE})
    assert r.details["entity"] == "Ailanthus" and r.details["entity_source"] == "llm"
    assert r.label is Label.FACTUAL
