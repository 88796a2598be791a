"""Review fixes: the guard keeps earlier answers and rejects None questions / answers."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableLambda

from truthguard.errors import InvalidInputError
from truthguard.guard import Fallback, HallucinationGuard, Regenerate, ReRetrieve
from truthguard.testing import FakeDetector, ScriptedChatModel


def moon_detector() -> FakeDetector:
    return FakeDetector(score=lambda i: 0.0 if "moon" in i.answer else 1.0, threshold=0.5)


def test_retry_output_without_an_answer_keeps_the_first_answer():
    calls = {"n": 0}

    def chain(inp: dict[str, Any]) -> Any:
        calls["n"] += 1
        return "the moon" if calls["n"] == 1 else {"unexpected": "shape"}

    guard = HallucinationGuard(
        chain=RunnableLambda(chain), detectors=moon_detector(), policies=[Regenerate()]
    )
    out = guard.invoke({"question": "Q?"})
    assert out.status == "rejected" and out.answer == "the moon"
    assert out.attempts[1].answer is None
    assert "none of the keys" in out.attempts[1].error
    assert out.attempts[1].output == {"unexpected": "shape"}


async def test_fallback_runnable_with_a_bad_output_goes_on_to_the_next_policy():
    guard = HallucinationGuard(
        chain=RunnableLambda(lambda q: "the moon"),
        detectors=moon_detector(),
        policies=[
            Fallback(runnable=RunnableLambda(lambda q: 42)),
            Fallback(answer="I don't know."),
        ],
    )
    out = await guard.ainvoke("Q?")
    assert out.status == "fallback" and out.answer == "I don't know."
    assert "expected a string" in out.attempts[1].error


def test_none_question_is_rejected_not_checked_as_the_text_none():
    guard = HallucinationGuard(chain=RunnableLambda(lambda q: "sun"), detectors=moon_detector())
    with pytest.raises(InvalidInputError) as info:
        guard.invoke({"question": None})
    assert info.value.field == "question"


def test_none_answer_is_not_checked_as_the_text_none():
    seen: list[str] = []

    def score(inp: Any) -> float:
        seen.append(inp.answer)
        return 1.0

    calls = {"n": 0}

    def chain(q: Any) -> dict[str, Any]:
        calls["n"] += 1
        return {"answer": "the moon" if calls["n"] == 1 else None}

    guard = HallucinationGuard(
        chain=RunnableLambda(chain),
        detectors=FakeDetector(
            score=lambda i: score(i) if "moon" not in i.answer else 0.0, threshold=0.5
        ),
        policies=[Regenerate()],
    )
    out = guard.invoke({"question": "Q?"})
    assert "None" not in seen
    assert out.status == "rejected" and out.answer == "the moon"
    assert "None" in out.attempts[1].error
    with pytest.raises(InvalidInputError):
        HallucinationGuard(
            chain=RunnableLambda(lambda q: {"answer": None}), detectors=moon_detector()
        ).invoke("Q?")


class TagRecorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.model_tags: list[list[str]] = []

    def on_chat_model_start(self, serialized, messages, *, run_id, tags=None, **kw):
        self.model_tags.append(list(tags or []))


async def test_reretrieve_rewriter_calls_are_traced_and_counted():
    rewriter = ScriptedChatModel(script=lambda p: "WHAT SHINES?")
    calls = {"n": 0}

    def chain(inp: dict[str, Any], config: Any) -> str:  # reads its config: may re-retrieve
        calls["n"] += 1
        return "the moon" if calls["n"] == 1 else "the sun"

    guard = HallucinationGuard(
        chain=RunnableLambda(chain),
        detectors=moon_detector(),
        policies=[ReRetrieve(rewrite=rewriter)],
    )
    rec = TagRecorder()
    out = await guard.ainvoke({"question": "what shines?"}, {"callbacks": [rec]})
    assert out.status == "passed" and rewriter.call_count == 1
    assert out.attempts[1].chain_usage.llm_calls == 1
    assert out.usage.llm_calls == 1  # the chain itself calls no model
    assert any("guard:attempt:2" in tags for tags in rec.model_tags)


@pytest.mark.parametrize("rewritten", [None, "   "])
def test_rewriter_without_a_query_is_a_visible_policy_failure(rewritten):
    seen: list[Any] = []

    def chain(inp: dict[str, Any], config: Any) -> str:  # reads its config: may re-retrieve
        seen.append(inp.get("retrieval_query"))
        return "the moon"

    guard = HallucinationGuard(
        chain=RunnableLambda(chain),
        detectors=moon_detector(),
        policies=[ReRetrieve(rewrite=lambda q: rewritten)],
    )
    out = guard.invoke({"question": "what shines?"})
    assert seen == [None]  # no retrieval on the text "None" or on a blank query
    assert out.status == "rejected" and out.answer == "the moon"
    assert "returned no retrieval query" in out.attempts[1].error
