"""DetectorEvaluator: LangSmith evaluate / RunEvaluator and LangChain's string-evaluator API."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from langchain_core.runnables import ConfigurableField
from langsmith.evaluation import EvaluationResult, RunEvaluator
from langsmith.schemas import Example, Run

from truthguard.errors import InvalidInputError
from truthguard.evaluators import DetectorEvaluator
from truthguard.testing import FakeDetector


def grounded() -> FakeDetector:
    """Scores 1 when the answer occurs in a context, 0 otherwise."""
    return FakeDetector(
        score=lambda i: 1.0 if any(i.answer.rstrip(".") in c for c in i.contexts) else 0.0,
        threshold=0.5,
    )


def run_and_example(answer: str) -> tuple[Run, Example]:
    now = datetime.now(UTC)
    run = Run(
        id=uuid.uuid4(),
        name="rag",
        start_time=now,
        run_type="chain",
        inputs={"question": "Where is Dubai?"},
        outputs={"answer": answer},
        trace_id=uuid.uuid4(),
    )
    example = Example(
        id=uuid.uuid4(),
        dataset_id=uuid.uuid4(),
        inputs={"question": "Where is Dubai?"},
        outputs={"contexts": ["Dubai is in the UAE."]},
        created_at=now,
    )
    return run, example


def test_plain_function_form_gives_key_score_comment():
    ev = DetectorEvaluator(grounded(), key="grounded")
    out = ev(
        {"question": "Where is Dubai?"},
        {"answer": "in the UAE"},
        {"contexts": ["Dubai is in the UAE."]},
    )
    assert out["key"] == "grounded" and out["score"] == 1.0 and "fake score" in out["comment"]
    assert ev({"question": "Q?"}, {"answer": "in France"}, {"contexts": ["x"]})["score"] == 0.0


async def test_run_evaluator_sync_and_async():
    ev = DetectorEvaluator(grounded())
    assert isinstance(ev, RunEvaluator) and ev.feedback_keys == ["fake"]
    run, example = run_and_example("in the UAE")
    res = ev.evaluate_run(run, example)
    assert isinstance(res, EvaluationResult) and res.key == "fake" and res.score == 1.0
    bad_run, _ = run_and_example("in Oman")
    assert (await ev.aevaluate_run(bad_run, example)).score == 0.0


@pytest.mark.filterwarnings("ignore:.upload_results. parameter is in beta")
def test_langsmith_evaluate_runs_it_locally(monkeypatch):
    from langsmith import Client, evaluate, tracing_context

    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    client = Client(api_url="http://127.0.0.1:9", api_key="offline")  # nothing is sent
    _, example = run_and_example("unused")
    with tracing_context(enabled=False):
        results = evaluate(
            lambda inputs: {"answer": "in the UAE"},
            data=[example],
            evaluators=[DetectorEvaluator(grounded(), key="grounded")],
            client=client,
            upload_results=False,
            disable_evaluator_tracing=True,
        )
        rows = list(results)
    feedback = rows[0]["evaluation_results"]["results"]
    assert [(f.key, f.score) for f in feedback] == [("grounded", 1.0)]


async def test_string_evaluator_interface_sync_and_async():
    ev = DetectorEvaluator(grounded(), key="grounded")
    assert ev.evaluation_name == "grounded"
    assert ev.requires_input and not ev.requires_reference
    out = ev.evaluate_strings(
        prediction="in the UAE", input="Where is Dubai?", reference="Dubai is in the UAE."
    )
    assert out == {"score": 1.0, "value": "factual", "reasoning": "fake score 1.000 against 0.500"}
    aout = await ev.aevaluate_strings(
        prediction="in Oman", input="Where is Dubai?", reference=["Dubai is in the UAE."]
    )
    assert aout["value"] == "hallucinated"
    assert (
        ev._evaluate_strings(prediction="in the UAE", input="Q?", reference="in the UAE")["score"]
        == 1.0
    )
    assert (await ev._aevaluate_strings(prediction="x", input="Q?", reference="y"))["score"] == 0


def test_configurable_detector_and_bad_arguments():
    det = grounded().configurable_fields(threshold=ConfigurableField(id="threshold"))
    assert DetectorEvaluator(det).key == "fake"
    with pytest.raises(InvalidInputError) as info:
        DetectorEvaluator("not a detector")  # type: ignore[arg-type]
    assert info.value.field == "detector"
    ev = DetectorEvaluator(grounded())
    with pytest.raises(InvalidInputError) as info:
        ev.evaluate_strings(prediction="x")
    assert info.value.field == "input"


@pytest.mark.filterwarnings("ignore:.upload_results. parameter is in beta")
def test_the_examples_chat_history_reaches_the_detector(monkeypatch):
    from langsmith import Client, evaluate, tracing_context

    seen: list[list[str]] = []
    detector = FakeDetector(score=lambda i: seen.append(list(i.history)) or 1.0)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    client = Client(api_url="http://127.0.0.1:9", api_key="offline")  # nothing is sent
    history = [  # as a dataset stores it: OpenAI-style dicts, the question appended last
        {"role": "user", "content": "I live in Dubai."},
        {"role": "assistant", "content": "Nice city!"},
        {"role": "user", "content": "Where do I live?"},
    ]
    _, example = run_and_example("unused")
    example = example.model_copy(
        update={"inputs": {"question": "Where do I live?", "chat_history": history}}
    )
    with tracing_context(enabled=False):
        for ev in (DetectorEvaluator(detector), DetectorEvaluator(detector, history_key="")):
            list(
                evaluate(
                    lambda inputs: {"answer": "You live in Dubai."},
                    data=[example],
                    evaluators=[ev],
                    client=client,
                    upload_results=False,
                    disable_evaluator_tracing=True,
                )
            )
    assert seen == [["I live in Dubai.", "Nice city!"], []]
    with pytest.raises(InvalidInputError) as info:
        DetectorEvaluator(detector)({"question": "Q?", "history": 5}, {"answer": "A."})
    assert info.value.field == "history"
