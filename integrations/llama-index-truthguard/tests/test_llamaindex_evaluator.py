from __future__ import annotations

import pytest
from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import EvaluationResult
from llama_index.core.schema import NodeWithScore, TextNode
from pydantic import Field

import truthguard_llamaindex
import truthguard_llamaindex.testing
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.result import DetectionResult, Label
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard_llamaindex import (
    FEWLEvaluator,
    RefCheckerEvaluator,
    ReverseValidationEvaluator,
    TruthGuardBatchEvalRunner,
    TruthGuardEvaluationResult,
    TruthGuardEvaluator,
)


class _RefsInput(DetectorInput):
    references: list[str] = Field(default_factory=list)
    """Reference passages."""


def test_exports_are_locked():
    assert sorted(truthguard_llamaindex.__all__) == sorted(
        [
            "DEFAULT_EXAMPLE_TEMPLATE",
            "METADATA_KEY",
            "ChatModelLLM",
            "FEWLEvaluator",
            "FEWLFewShot",
            "FallbackEngine",
            "GuardedQueryEngine",
            "MiniLMEmbedding",
            "RefCheckerEvaluator",
            "ReverseValidationEvaluator",
            "TruthGuardBatchEvalRunner",
            "TruthGuardEvaluationResult",
            "TruthGuardEvaluator",
            "TruthGuardEventHandler",
        ]
    )
    for name in truthguard_llamaindex.__all__:
        assert hasattr(truthguard_llamaindex, name), name
    assert sorted(truthguard_llamaindex.testing.__all__) == [
        "ChatModelLLM",
        "KeywordEmbedding",
        "corpus_nodes",
    ]


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


class _ClaimDetector(BaseDetector):
    """Returns a per-claim breakdown, as RefChecker does."""

    detector_name = "claims"

    async def _acheck(self, inp, session):
        claims = [
            {"claim": s.strip(), "label": "Contradiction" if "moon" in s else "Entailment"}
            for s in inp.answer.split(".")
            if s.strip()
        ]
        ok = sum(c["label"] == "Entailment" for c in claims)
        return DetectionResult(
            detector=self.detector_name,
            score=ok / len(claims),
            label=Label.FACTUAL if ok == len(claims) else Label.HALLUCINATED,
            explanation=f"{ok}/{len(claims)} claims supported",
            details={"claims": claims},
        )


def test_per_claim_detail_is_in_the_evaluation_result():
    r = TruthGuardEvaluator(_ClaimDetector()).evaluate(
        query="Tell me about Mars.", response="Mars is red. Mars has one moon."
    )
    assert isinstance(r, EvaluationResult) and isinstance(r, TruthGuardEvaluationResult)
    assert r.label == "hallucinated" and r.detector == "claims" and r.score == 0.5
    assert [c["label"] for c in r.claims] == ["Entailment", "Contradiction"]
    assert r.usage["llm_calls"] == 0


def _refchecker(model):
    from truthguard.refchecker import LLMChecker, LLMExtractor, RefChecker

    return RefChecker(extractor=LLMExtractor(model=model), checker=LLMChecker(model=model))


def test_fields_given_to_the_constructor_are_validated_at_once():
    model = ScriptedChatModel(script=lambda p: "x")
    with pytest.raises(InvalidInputError, match="references"):
        RefCheckerEvaluator(_refchecker(model), references="one flat string")
    with pytest.raises(InvalidInputError, match="references"):
        TruthGuardEvaluator(_refchecker(model), references=[1, 2])
    with pytest.raises(InvalidInputError, match="entity"):
        TruthGuardEvaluator(FakeDetector(), entity="Mars")
    assert model.call_count == 0


def test_a_per_row_field_of_the_wrong_shape_fails_before_any_model_call():
    model = ScriptedChatModel(script=lambda p: "x")
    ev = RefCheckerEvaluator(_refchecker(model))
    # What BatchEvalRunner hands one row when given a flat list instead of one list per row.
    with pytest.raises(InvalidInputError, match="one value per query") as e:
        ev.evaluate(query="q", response="a", references="Mars has two moons.")
    assert e.value.field == "references" and model.call_count == 0
    with pytest.raises(InvalidInputError, match="referencs"):
        ev.evaluate(query="q", response="a", referencs=["typo"])


def test_per_detector_evaluators_check_the_detector_type():
    with pytest.raises(InvalidInputError, match="expected a FEWL"):
        FEWLEvaluator(FakeDetector())
    with pytest.raises(InvalidInputError, match="expected a ReverseValidation"):
        ReverseValidationEvaluator(FakeDetector(), entity="Mars")
    with pytest.raises(InvalidInputError, match="expected a RefChecker"):
        RefCheckerEvaluator(FakeDetector())


async def test_batch_eval_runner_with_fields_set_once():
    from llama_index.core.evaluation import BatchEvalRunner

    seen = []

    class _Refs(_ClaimDetector):
        input_model = _RefsInput

        async def _acheck(self, inp, session):
            seen.append(inp.references)
            return await super()._acheck(inp, session)

    ev = TruthGuardEvaluator(_Refs(), references=["Mars has two moons."])
    runner = BatchEvalRunner({"claims": ev}, workers=4)
    results = await runner.aevaluate_response_strs(
        queries=["Mars?", "Moon?"],
        response_strs=["Mars is red.", "Mars has one moon."],
        contexts_list=[["c1"], ["c2"]],
    )
    assert [r.passing for r in results["claims"]] == [True, False]  # the label decides
    assert [r.score for r in results["claims"]] == [1.0, 0.0]
    assert seen == [["Mars has two moons."]] * 2


def test_runner_rejects_a_flat_list_before_any_job():
    model = ScriptedChatModel(script=lambda p: "x")
    runner = TruthGuardBatchEvalRunner({"rc": RefCheckerEvaluator(_refchecker(model))})
    with pytest.raises(InvalidInputError, match="row 0 for evaluator 'rc'") as e:
        runner.evaluate_response_strs(
            queries=["q1", "q2"], response_strs=["a1", "a2"], references=["ref 1", "ref 2"]
        )
    # Raised by the pre-check (it names the row), not by a job the base runner retried.
    assert e.value.field == "references" and model.call_count == 0


async def test_runner_with_per_row_fields_and_responses():
    seen = []

    class _Refs(_ClaimDetector):
        input_model = _RefsInput

        async def _acheck(self, inp, session):
            seen.append((inp.question, inp.references, inp.contexts))
            return await super()._acheck(inp, session)

    runner = TruthGuardBatchEvalRunner({"claims": TruthGuardEvaluator(_Refs())}, workers=2)
    node = NodeWithScore(node=TextNode(text="Mars has two moons."), score=1.0)
    results = await runner.aevaluate_responses(
        queries=["Mars?", "Moon?"],
        responses=[Response("Mars is red.", source_nodes=[node]), Response("One moon.")],
        references=[["r1"], ["r2", "r3"]],
    )
    assert [r.score for r in results["claims"]] == [1.0, 0.0]
    assert sorted(seen) == [
        ("Mars?", ["r1"], ["Mars has two moons."]),
        ("Moon?", ["r2", "r3"], []),
    ]


def test_the_default_refchecker_evaluator_says_a_contradicted_answer_fails():
    from truthguard.refchecker import RefChecker

    ev = RefCheckerEvaluator(RefChecker())
    context = ["Dubai is a city in the United Arab Emirates."]
    bad = ev.evaluate(query="Where is Dubai?", response="Dubai is in France.", contexts=context)
    good = ev.evaluate(query="Where is Dubai?", response="Dubai is in the United Arab Emirates.",
                       contexts=context)  # fmt: skip
    assert (bad.passing, good.passing) == (False, True)


TRAM = "Tram 28 is a tram line in Lisbon. It runs from Martim Moniz through the Alfama district."
TRIP = "I visited Lisbon in 2019 with my sister and we stayed in Belem."
RESTATING = "You visited Lisbon in 2019 with your sister. Tram 28 runs through the Alfama district."


async def test_a_chat_engines_history_is_evidence_of_what_the_user_said():
    from llama_index.core.chat_engine import SimpleChatEngine

    from truthguard.refchecker import RefChecker
    from truthguard_llamaindex import ChatModelLLM

    question = "Which tram goes through Alfama?"
    model = ScriptedChatModel(script=["Lovely! How can I help?", RESTATING])
    engine = SimpleChatEngine.from_defaults(llm=ChatModelLLM(model=model))
    engine.chat(TRIP)
    answer = str(engine.chat(question))
    history = engine.chat_history  # ends with the question and this answer: both left out
    seen: list[list[str]] = []
    recorder = TruthGuardEvaluator(FakeDetector(score=lambda i: seen.append(i.history) or 1.0))
    recorder.evaluate(query=question, response=answer, contexts=[TRAM], history=history)
    assert seen == [[TRIP, "Lovely! How can I help?"]]

    checker = RefCheckerEvaluator(RefChecker(threshold=0.5))
    told = checker.evaluate(query=question, response=answer, contexts=[TRAM], history=history)
    untold = checker.evaluate(query=question, response=answer, contexts=[TRAM])
    assert told.passing and [c["evidence"]["source"] for c in told.claims] == [
        "history",
        "reference",
    ]
    assert not untold.passing
    # BatchEvalRunner: one history per query
    runner = TruthGuardBatchEvalRunner({"grounded": checker})
    rows = await runner.aevaluate_response_strs(
        queries=[question, question],
        response_strs=[answer, answer],
        contexts_list=[[TRAM], [TRAM]],
        history=[history, []],
    )
    assert [r.passing for r in rows["grounded"]] == [True, False]
    with pytest.raises(InvalidInputError) as info:
        checker.evaluate(query=question, response=answer, contexts=[TRAM], history=[5])
    assert info.value.field == "history[0]"
