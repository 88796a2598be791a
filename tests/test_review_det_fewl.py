"""Review fixes: FEWL cache keys of look-alike panel models, and models checked at construction."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from truthguard.errors import InvalidInputError
from truthguard.fewl import FEWL
from truthguard.similarity import LexicalSimilarity
from truthguard.testing import ScriptedChatModel

Q = "What is the capital of France?"


def _uniform(models, store):
    return FEWL(
        reference_models=models,
        expertise="uniform",
        penalty=False,
        threshold=0.0,
        similarity=LexicalSimilarity(),
        store=store,
    )


def test_panel_models_with_one_name_never_share_a_stored_answer(store):
    # Two distinct models whose model_id is the same (same class, same model name: for example
    # one model name served at two temperatures or by two endpoints).
    a = ScriptedChatModel(model_name="m", default="Paris is the capital of France.")
    b = ScriptedChatModel(model_name="m", default="Lyon is the capital of France.")
    detector = _uniform([a, b], store)
    first = detector.check(Q, "Paris.")
    second = detector.check(Q, "Lyon.")  # served from the store
    answers = [r["answer"] for r in second.details["references"]]
    assert answers == ["Paris is the capital of France.", "Lyon is the capital of France."]
    assert second.details["references"] == first.details["references"]
    assert second.usage.llm_calls == 0 and second.usage.cached_calls == 2
    assert len({r["model"] for r in second.details["references"]}) == 2


def test_distinct_model_names_keep_their_cache_keys(store):
    a = ScriptedChatModel(model_name="a", default="Paris.")
    b = ScriptedChatModel(model_name="b", default="Lyon.")
    result = _uniform([a, b], store).check(Q, "Paris.")
    assert [r["model"] for r in result.details["references"]] == [
        "ScriptedChatModel:a#0",
        "ScriptedChatModel:b#0",
    ]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"reference_models": ["gpt-4o"]}, r"reference_models\[0\]"),
        ({"reference_models": [ScriptedChatModel(), None]}, r"reference_models\[1\]"),
        ({"reference_models": [ScriptedChatModel()], "generator": "gpt-4o"}, "generator"),
    ],
)
def test_models_that_cannot_be_called_fail_at_construction(kwargs, field):
    with pytest.raises(ValidationError, match=field):
        FEWL(similarity=LexicalSimilarity(), **kwargs)


@pytest.mark.parametrize("weights", [[-1.0, 2.0], [0.0, 0.0], [float("nan"), 1.0]])
def test_unusable_given_weights_fail_at_construction_before_any_call(weights):
    models = [ScriptedChatModel(model_name="a"), ScriptedChatModel(model_name="b")]
    with pytest.raises(ValidationError, match="weights"):
        FEWL(
            reference_models=models,
            expertise="given",
            weights=weights,
            similarity=LexicalSimilarity(),
        )
    assert all(m.call_count == 0 for m in models)


def test_rank_names_the_bad_candidate(store):
    model = ScriptedChatModel(model_name="a", default="Paris.")
    with pytest.raises(InvalidInputError) as e:
        _uniform([model], store).rank(Q, ["Paris.", None])
    assert e.value.field == "answers[1]"
    assert model.call_count == 0


def _pairs(n: int) -> str:
    return "\n".join(
        f"{i}. Wrong: Lyon is the capital, says source {i}.\n"
        f"{i}. Corrected: Paris, not Lyon, is the capital (source {i})."
        for i in range(1, n + 1)
    )


def test_stored_pairs_too_few_for_a_stricter_detector_are_asked_again(store):
    replies = iter([_pairs(3), _pairs(6)])

    def script(prompt: str) -> str:
        return next(replies) if "deliberately false" in prompt else "Paris is the capital."

    model = ScriptedChatModel(model_name="gen", script=script)

    def detector(min_pairs: int) -> FEWL:
        return FEWL(
            reference_models=[model],
            mode="single",
            min_pairs=min_pairs,
            penalty=False,
            similarity=LexicalSimilarity(),
            store=store,
        )

    lax = detector(2).check(Q, "Paris.")
    assert len(lax.details["iwco_pairs"]) == 3
    strict = detector(5).check(Q, "Paris.")  # the stored 3 pairs are not enough for it
    assert not strict.is_invalid and len(strict.details["iwco_pairs"]) == 6
    again = detector(5).check(Q, "Paris.")  # the 6 pairs replaced the stored reply
    assert again.usage.llm_calls == 0 and len(again.details["iwco_pairs"]) == 6


def _collection_names(client) -> set[str]:
    return {getattr(c, "name", c) for c in client.list_collections()}


def test_private_store_is_dropped_with_the_detector():
    import gc

    detector = FEWL(
        reference_models=[ScriptedChatModel(model_name="a", default="Paris.")],
        mode="single",
        expertise="uniform",
        penalty=False,
        threshold=0.0,
        similarity=LexicalSimilarity(),
    )
    detector.check(Q, "Paris.")
    namespace = detector.get_store().namespace
    client = detector.get_store().client
    assert {f"{namespace}_questions", f"{namespace}_artifacts"} <= _collection_names(client)
    del detector
    gc.collect()
    assert not {n for n in _collection_names(client) if n.startswith(namespace)}
