"""Review fixes: scores from a scoring function are checked before they are stored."""

from __future__ import annotations

import math

import numpy as np
import pytest
from langchain_core.vectorstores import InMemoryVectorStore

from truthguard.embeddings import SimilarityEmbeddings
from truthguard.errors import InvalidInputError
from truthguard.selectors import FEWLExampleSelector

EXAMPLES = [{"question": "Capital of France?", "answers": ["Lyon.", "Paris.", "Nice."]}]


def build(embedder, scorer, **kw):
    return FEWLExampleSelector.from_examples(
        EXAMPLES,
        SimilarityEmbeddings(embedder),
        scorer=scorer,
        vectorstore_cls=InMemoryVectorStore,
        include_score=True,
        k=1,
        **kw,
    )


def test_numpy_scores_are_stored(embedder):
    selector = build(embedder, lambda q, answers: np.array([0.1, 0.9, 0.5], dtype=np.float32))
    [example] = selector.select_examples({"question": "France's capital?"})
    assert example["answer"] == "Paris." and example["fewl_score"] == pytest.approx(0.9)


def test_nan_is_no_valid_score_not_the_best(embedder):
    selector = build(embedder, lambda q, answers: [math.nan, 0.2, None])
    [example] = selector.select_examples({"question": "France's capital?"})
    assert example["answer"] == "Paris." and example["fewl_score"] == 0.2


def test_non_numeric_score_names_the_scorer(embedder):
    with pytest.raises(InvalidInputError) as info:
        build(embedder, lambda q, answers: ["high", "low", "low"])
    assert info.value.field == "scorer"


async def test_async_add_checks_the_scores_too(embedder):
    selector = FEWLExampleSelector(
        vectorstore=InMemoryVectorStore(embedding=SimilarityEmbeddings(embedder)),
        scorer=lambda q, answers: [np.float32(0.3)] * len(answers),
    )
    await selector.aadd_example({"question": "Who wrote Hamlet?", "answers": ["Shakespeare."]})
    [example] = await selector.aselect_examples({"question": "Hamlet's author?"})
    assert example["answer"] == "Shakespeare."


BAD_LAST = [
    {"question": "Capital of France?", "answers": ["Paris."]},
    {"question": "Who wrote Hamlet?", "answers": "Shakespeare."},  # not a list
]


def counting_scorer(calls: list[str]):
    def score(question: str, answers: list[str]) -> list[float]:
        calls.append(question)
        return [1.0] * len(answers)

    return score


def test_from_examples_validates_every_example_before_scoring(embedder):
    calls: list[str] = []
    with pytest.raises(InvalidInputError) as info:
        FEWLExampleSelector.from_examples(
            BAD_LAST,
            SimilarityEmbeddings(embedder),
            scorer=counting_scorer(calls),
            vectorstore_cls=InMemoryVectorStore,
        )
    assert info.value.field == "answers" and calls == []


async def test_aadd_examples_validates_every_example_before_scoring(embedder):
    calls: list[str] = []
    selector = FEWLExampleSelector(
        vectorstore=InMemoryVectorStore(embedding=SimilarityEmbeddings(embedder)),
        scorer=counting_scorer(calls),
    )
    with pytest.raises(InvalidInputError):
        await selector.aadd_examples(BAD_LAST)
    assert calls == []
