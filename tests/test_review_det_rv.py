"""Review fixes: Reverse Validation entity extraction (caching, chatty replies)."""

from __future__ import annotations

import pytest

from truthguard.result import Label
from truthguard.rv import ReverseValidation
from truthguard.rv._parse import parse_entity
from truthguard.testing import ScriptedChatModel

PASSAGE = (
    "Ailanthus is a genus of trees in the Simaroubaceae family. The best-known species is the "
    "tree of heaven, an invasive species grown for silkworms."
)
FEATURES = "1. Genus of trees\n2. Simaroubaceae family\n3. Known as the tree of heaven"
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
