"""Detectors pickle by configuration, so they can be shipped to worker processes."""

from __future__ import annotations

import pickle

import pytest

from truthguard import FEWL, RefChecker, ReverseValidation
from truthguard.similarity import LexicalSimilarity
from truthguard.store import ArtifactStore
from truthguard.testing import FakeDetector, ScriptedChatModel


def test_a_fewl_with_its_private_store_pickles_and_still_checks():
    ref = ScriptedChatModel(model_name="ref", default="Paris is the capital of France.")
    det = FEWL(
        reference_models=[ref],
        mode="single",
        expertise="uniform",
        penalty=False,
        threshold=0.1,
        similarity=LexicalSimilarity(),
    )
    before = det.check("What is the capital of France?", "Paris.")
    assert det._own_store is not None  # holds an in-memory Chroma that cannot travel
    again = pickle.loads(pickle.dumps(det))
    assert again._own_store is None  # a fresh private store, made on first need
    after = again.check("What is the capital of France?", "Paris.")
    assert (after.score, after.label) == (before.score, before.label)


def test_an_openai_model_travels_as_configuration_without_its_key(monkeypatch):
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-worker-env")
    model = ChatOpenAI(model="gpt-4o-mini", api_key="sk-secret-123", base_url="http://127.0.0.1:9")
    det = ReverseValidation(model=model, variant="qg")
    data = pickle.dumps(det)
    assert b"sk-secret-123" not in data
    again = pickle.loads(data)
    assert again.model is not model and again.model.model_name == "gpt-4o-mini"
    assert again.model.openai_api_base == "http://127.0.0.1:9"
    assert again.model.openai_api_key.get_secret_value() == "sk-from-worker-env"
    assert again.variant == "qg"


def test_a_detector_with_a_path_store_reconnects_after_unpickling(tmp_path, embedder):
    store = ArtifactStore(tmp_path / "s", embedder=embedder)
    store.put_artifact("Q?", "k", "m", "v", "kept")
    again = pickle.loads(pickle.dumps(RefChecker(store=store, top_k=2)))
    assert again.top_k == 2 and again.store.get_artifact("Q?", "k", "m", "v") == "kept"


def test_test_doubles_with_locks_pickle():
    det = FakeDetector(score=0.3, threshold=0.5, model=ScriptedChatModel(default="x"))
    again = pickle.loads(pickle.dumps(det))
    result = again.check("Q?", "A")
    assert result.passing is False and result.usage.llm_calls == 1
