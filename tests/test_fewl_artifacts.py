"""Fetching what FEWL needs about one question (fewl/_artifacts.py)."""

from __future__ import annotations

from truthguard.fewl._artifacts import ArtifactFetcher, Slot
from truthguard.llm import LLMSession
from truthguard.similarity import LexicalSimilarity
from truthguard.testing import ScriptedChatModel

QUESTION = "Who wrote the novel Middlemarch?"
REPLY = "Middlemarch was written by George Eliot."
TWO_PAIRS = """1. Wrong: Middlemarch was written by Jane Austen.
1. Corrected: George Eliot, not Jane Austen, wrote Middlemarch.
2. Wrong: Middlemarch is a poem by Lord Byron.
2. Corrected: Middlemarch is a novel by George Eliot, published 1871-72.
"""


def _fetcher(model: ScriptedChatModel) -> ArtifactFetcher:
    return ArtifactFetcher(
        similarity=LexicalSimilarity(),
        generator=model,
        n_pairs=2,
        min_pairs=2,
        k_neighbors=3,
        max_neighbor_similarity=None,
        neighbor_mode="knn",
        penalty=False,
    )


def test_slots_of_one_model_are_told_apart_in_cache_keys():
    model = ScriptedChatModel(model_name="ref")
    assert Slot(model, 2).extra == "sample=2"
    assert Slot(model, 0, position=1).extra == "sample=0;panel=1"
    assert Slot(model, 0, position=1).name.endswith("#0@1")


async def test_one_round_of_calls_then_everything_comes_from_the_store(store):
    model = ScriptedChatModel(
        model_name="ref", script=lambda p: TWO_PAIRS if "deliberately false" in p else REPLY
    )
    fetcher = _fetcher(model)
    slots = [Slot(model, 0), Slot(model, 1)]
    first = await fetcher.fetch(QUESTION, LLMSession(), store, slots, ["George Eliot."], pairs=True)
    assert first.references == [REPLY, REPLY] and first.neighbors == []
    assert len(first.pairs.pairs) == 2 and model.call_count == 3  # two samples, one pair call
    again = await fetcher.fetch(QUESTION, LLMSession(), store, slots, pairs=True)
    assert model.call_count == 3
    assert again.references == first.references and again.pairs.pairs == first.pairs.pairs
    without = await fetcher.fetch(QUESTION, LLMSession(), store, slots, pairs=False)
    assert without.pairs is None
