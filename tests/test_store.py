"""The Chroma-backed artifact store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from truthguard import DetectionResult, Label
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidInputError
from truthguard.store import ArtifactStore, cached_call
from truthguard.testing import ScriptedChatModel

QUESTIONS = [
    "What is the capital of France?",
    "Which city is the capital of France?",
    "Who wrote the play Hamlet?",
    "How many moons does Mars have?",
    "What is the boiling point of water at sea level?",
    "Who painted the Mona Lisa?",
]


def test_artifacts_round_trip_and_keys_are_distinct(store):
    store.put_artifact("Q?", "reference", "m1", "v1", {"answers": ["a", "b"]})
    assert store.get_artifact("Q?", "reference", "m1", "v1") == {"answers": ["a", "b"]}
    assert store.get_artifact("Q?", "reference", "m2", "v1") is None
    assert store.get_artifact("Q?", "reference", "m1", "v2") is None
    assert store.get_artifact("Q?", "reference", "m1", "v1", extra="sample-2") is None
    # whitespace does not make a new question
    assert store.get_artifact("  Q? ", "reference", "m1", "v1") == {"answers": ["a", "b"]}
    assert store.get_artifacts(["Q?", "other"], "reference", "m1", "v1") == [
        {"answers": ["a", "b"]},
        None,
    ]


def test_artifact_must_be_json(store):
    with pytest.raises(InvalidInputError, match="value"):
        store.put_artifact("Q?", "x", "m", "v", object())


def test_nearest_skips_self_and_near_duplicates(store):
    store.add_questions(QUESTIONS)
    store.add_questions(QUESTIONS[:2])  # idempotent
    assert store.count_questions() == len(QUESTIONS)
    near = store.nearest(QUESTIONS[0], k=3, max_similarity=0.8)
    texts = [n.question for n in near]
    assert QUESTIONS[0] not in texts
    assert QUESTIONS[1] not in texts  # a paraphrase, above the cut-off
    assert len(near) == 3
    assert all(n.similarity <= 0.8 for n in near)
    assert [n.similarity for n in near] == sorted((n.similarity for n in near), reverse=True)
    with_dup = store.nearest(QUESTIONS[0], k=1, max_similarity=None)
    assert with_dup[0].question == QUESTIONS[1]


def test_nearest_on_empty_store_and_bad_k(store):
    assert store.nearest("anything", k=5) == []
    with pytest.raises(InvalidInputError, match="k"):
        store.nearest("anything", k=0)


def test_random_questions_are_seeded(store):
    store.add_questions(QUESTIONS)
    a = store.random_questions(3, exclude=QUESTIONS[0])
    b = store.random_questions(3, exclude=QUESTIONS[0])
    assert a == b and QUESTIONS[0] not in a and len(a) == 3


def test_store_persists_across_processes(tmp_path):
    path = tmp_path / "persist"
    script = textwrap.dedent(
        f"""
        from truthguard.store import ArtifactStore
        s = ArtifactStore({str(path)!r})
        s.add_questions(["Who wrote Hamlet?", "What is the capital of Peru?"])
        s.put_artifact("Who wrote Hamlet?", "reference", "m", "v1", "Shakespeare")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=240)
    again = ArtifactStore(path)
    assert again.count_questions() == 2
    assert again.get_artifact("Who wrote Hamlet?", "reference", "m", "v1") == "Shakespeare"


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


def test_in_memory_stores_are_isolated(embedder):
    a = ArtifactStore.in_memory(embedder=embedder)
    b = ArtifactStore.in_memory(embedder=embedder)
    a.add_questions(["only in a"])
    assert a.count_questions() == 1 and b.count_questions() == 0


def test_bad_url_names_the_field(embedder):
    with pytest.raises(InvalidInputError, match="url"):
        ArtifactStore(url="not a url", embedder=embedder)


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
