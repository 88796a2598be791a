"""``cached_call``: stored answers, validation, in-flight sharing, deferred writes."""

from __future__ import annotations

import pytest

from store_doubles import QUESTIONS, _GatedEmbedder
from truthguard import DetectionResult, Label
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.store import ArtifactStore, cached_call
from truthguard.testing import ScriptedChatModel


class _Caching(BaseDetector):
    """Asks three models for reference answers, through the store."""

    detector_name = "caching"
    models: list[ScriptedChatModel]
    store: ArtifactStore

    async def _acheck(self, inp: DetectorInput, session) -> DetectionResult:
        refs = await session.gather(
            cached_call(
                session,
                m,
                inp.question,
                store=self.store,
                question=inp.question,
                kind="reference",
                prompt_version="t1",
                stage="caching.reference",
            )
            for m in self.models
        )
        score = sum(r == inp.answer for r in refs) / len(refs)
        return DetectionResult(detector="caching", score=score, label=Label.FACTUAL)


def test_second_check_of_same_question_makes_no_llm_call(store):
    models = [ScriptedChatModel(model_name=f"m{i}", script=lambda p: "Paris") for i in range(3)]
    det = _Caching(models=models, store=store)
    first = det.invoke({"question": QUESTIONS[0], "answer": "Paris"})
    second = det.invoke({"question": QUESTIONS[0], "answer": "Lyon"})
    assert first.usage.llm_calls == 3 and first.usage.cached_calls == 0
    assert second.usage.llm_calls == 0 and second.usage.cached_calls == 3
    assert sum(m.call_count for m in models) == 3
    assert (first.score, second.score) == (1.0, 0.0)


async def test_cached_call_stores_only_validated_outputs(store):
    from truthguard.errors import InvalidLLMOutput
    from truthguard.llm import LLMSession

    replies = iter(["garbage", "42"])
    model = ScriptedChatModel(script=lambda p: next(replies))

    def must_be_number(text: str) -> int:
        if not text.isdigit():
            raise InvalidLLMOutput("not a number", raw=text, stage="t")
        return int(text)

    kwargs = dict(store=store, question="Q?", kind="n", prompt_version="v", stage="t")
    session = LLMSession()
    with pytest.raises(InvalidLLMOutput):
        await cached_call(session, model, "x", validate=must_be_number, **kwargs)
    assert store.get_artifact("Q?", "n", "ScriptedChatModel:scripted", "v") is None
    assert await cached_call(session, model, "x", validate=must_be_number, **kwargs) == "42"
    assert await cached_call(session, model, "x", validate=must_be_number, **kwargs) == "42"
    assert model.call_count == 2 and session.usage().cached_calls == 1


async def test_cached_call_replaces_a_stored_output_the_parser_now_rejects(store):
    from truthguard.errors import InvalidLLMOutput
    from truthguard.llm import LLMSession, model_id

    model = ScriptedChatModel(script=lambda p: "42")
    store.put_artifact("Q?", "n", model_id(model), "v", "old garbage")

    def must_be_number(text: str) -> int:
        if not text.isdigit():
            raise InvalidLLMOutput("not a number", raw=text, stage="t")
        return int(text)

    session = LLMSession()
    kwargs = dict(store=store, question="Q?", kind="n", prompt_version="v", stage="t")
    assert await cached_call(session, model, "x", validate=must_be_number, **kwargs) == "42"
    assert model.call_count == 1
    assert store.get_artifact("Q?", "n", model_id(model), "v") == "42"


async def test_concurrent_checks_of_one_question_share_one_model_call(store):
    import asyncio

    from truthguard.llm import LLMSession

    model = ScriptedChatModel(model_name="slow", script=lambda p: "Paris", latency=0.2)
    sessions = [LLMSession() for _ in range(4)]
    kwargs = dict(store=store, question="Capital of France?", kind="ref", prompt_version="v")
    outs = await asyncio.gather(
        *(cached_call(s, model, "p", stage="t", **kwargs) for s in sessions)
    )
    assert outs == ["Paris"] * 4
    assert model.call_count == 1
    usages = [s.usage() for s in sessions]
    assert sum(u.llm_calls for u in usages) == 1 and sum(u.cached_calls for u in usages) == 3


async def test_a_failed_shared_call_lets_the_others_try_themselves(store):
    import asyncio

    from truthguard.errors import LLMCallError
    from truthguard.llm import LLMSession, LLMSettings

    model = ScriptedChatModel(script=lambda p: "ok", latency=0.1, fail_first=1)
    settings = LLMSettings(max_retries=0)
    kwargs = dict(store=store, question="Q?", kind="ref", prompt_version="v", stage="t")
    first, second = await asyncio.gather(
        cached_call(LLMSession(settings), model, "p", **kwargs),
        cached_call(LLMSession(settings), model, "p", **kwargs),
        return_exceptions=True,
    )
    assert isinstance(first, LLMCallError) and second == "ok"
    assert model.call_count == 2


async def test_deferred_writes_let_the_call_return_before_the_answer_is_stored(tmp_path):
    import asyncio

    from truthguard.llm import LLMSession, model_id

    emb = _GatedEmbedder()
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    model = ScriptedChatModel(default="42")
    name = model_id(model)
    key = {"store": store, "question": "Q?", "kind": "k", "prompt_version": "v", "stage": "s"}
    session = LLMSession(defer_writes=True)
    assert await cached_call(session, model, "x", **key) == "42"  # the write is still held
    assert await asyncio.to_thread(emb.entered.wait, 10)
    assert store.get_artifact("Q?", "k", name, "v") is None
    # A check starting meanwhile shares the answer in flight: no second model call.
    other = LLMSession(defer_writes=True)
    assert await cached_call(other, model, "x", **key) == "42"
    assert model.call_count == 1 and other.usage().cached_calls == 1
    emb.gate.set()
    await session.drain()
    assert store.get_artifact("Q?", "k", name, "v") == "42"
    # Without deferral the write is done when the call returns.
    plain = LLMSession()
    assert await cached_call(plain, model, "y", **{**key, "question": "Q2?"}) == "42"
    assert store.get_artifact("Q2?", "k", name, "v") == "42"


async def test_lookup_false_skips_the_store_read(store):
    from truthguard.llm import LLMSession, model_id

    model = ScriptedChatModel(default="fresh")
    store.put_artifact("Q?", "k", model_id(model), "v", "stored")
    key = {"store": store, "question": "Q?", "kind": "k", "prompt_version": "v", "stage": "s"}
    assert await cached_call(LLMSession(), model, "x", **key) == "stored"
    assert await cached_call(LLMSession(), model, "x", lookup=False, **key) == "fresh"
    assert model.call_count == 1
