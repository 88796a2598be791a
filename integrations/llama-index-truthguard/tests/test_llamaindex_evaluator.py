from __future__ import annotations

import pytest
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

import truthguard_llamaindex
from truthguard.errors import InvalidInputError
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard_llamaindex import TruthGuardEvaluator


def test_exports_are_locked():
    assert truthguard_llamaindex.__all__ == ["TruthGuardEvaluator"]


def test_sync_evaluate_maps_the_result():
    ev = TruthGuardEvaluator(detector=FakeDetector(score=0.3, threshold=0.5))
    r = ev.evaluate(query="Who wrote Hamlet?", response="Marlowe", contexts=["Shakespeare did."])
    assert (r.passing, r.score) == (False, 0.3)
    assert r.query == "Who wrote Hamlet?" and r.contexts == ["Shakespeare did."]
    assert "0.300" in r.feedback


async def test_async_evaluate_response_uses_source_nodes():
    seen = {}

    def score(inp):
        seen["contexts"] = inp.contexts
        return 1.0

    ev = TruthGuardEvaluator(detector=FakeDetector(score=score))
    resp = Response(
        response="Paris", source_nodes=[NodeWithScore(node=TextNode(text="Paris is..."), score=1)]
    )
    r = await ev.aevaluate_response(query="Capital of France?", response=resp)
    assert r.score == 1.0 and seen["contexts"] == ["Paris is..."]


def test_invalid_detector_result_is_an_invalid_evaluation():
    model = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    from truthguard import LLMSettings

    det = FakeDetector(model=model, llm_settings=LLMSettings(max_retries=0))
    r = TruthGuardEvaluator(detector=det).evaluate(query="q", response="a")
    assert r.invalid_result and "injected failure" in r.invalid_reason


def test_bad_arguments_name_the_field():
    with pytest.raises(InvalidInputError, match="detector"):
        TruthGuardEvaluator(detector="not a detector")
    with pytest.raises(InvalidInputError, match="response"):
        TruthGuardEvaluator(detector=FakeDetector()).evaluate(query="q")
