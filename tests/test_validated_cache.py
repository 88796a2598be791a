"""Detectors never cache an output they could not use: the next check asks again."""

from __future__ import annotations

from truthguard import Label
from truthguard.refchecker import LLMChecker, LocalExtractor, RefChecker
from truthguard.rv import ReverseValidation
from truthguard.testing import ScriptedChatModel


def test_rv_garbage_stage1_is_not_cached(store):
    queries = iter(["   ", "Which Orkney island is the second largest?"])

    def reply(prompt: str) -> str:
        if "Write one question" in prompt:
            return next(queries)
        return "Hoy."

    model = ScriptedChatModel(script=reply)
    rv = ReverseValidation(model=model, variant="qg", store=store)
    payload = {"answer": "Hoy is the second largest island of Orkney.", "entity": "Hoy"}
    first = rv.invoke(payload)
    assert first.label == Label.INVALID and first.raw_output == "   "
    second = rv.invoke(payload)
    assert second.label == Label.FACTUAL
    assert second.usage.llm_calls == 2  # stage 1 asked again, then stage 2
    third = rv.invoke(payload)
    assert third.usage.llm_calls == 0 and third.usage.cached_calls == 2


def test_refchecker_garbage_label_is_not_cached(store):
    labels = iter(["no idea, sorry", "Entailment"])
    model = ScriptedChatModel(script=lambda p: next(labels))
    checker = RefChecker(
        extractor=LocalExtractor(), checker=LLMChecker(model=model, joint=False), store=store
    )
    payload = {
        "question": "Which sea is Dubai on?",
        "answer": "Dubai lies on the Persian Gulf.",
        "references": ["Dubai is on the southeast coast of the Persian Gulf."],
    }
    first = checker.invoke(payload)
    assert first.label == Label.INVALID and "no idea" in first.raw_output
    second = checker.invoke(payload)
    assert second.label == Label.FACTUAL and second.usage.llm_calls == 1
