"""Review fixes: Reverse Validation never stores an unusable entity extraction."""

from __future__ import annotations

from truthguard.result import Label
from truthguard.rv import ReverseValidation
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
