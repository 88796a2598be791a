"""End-to-end tests of the FEWL detector with scripted models (offline, deterministic)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pydantic import ValidationError

from truthguard.errors import InvalidInputError
from truthguard.fewl import FEWL, fewl_formula
from truthguard.llm import LLMSettings
from truthguard.result import Label
from truthguard.similarity import LexicalSimilarity
from truthguard.testing import ScriptedChatModel

QUESTION = "Who wrote the play Hamlet?"
NEIGHBORS = [
    "Who painted the Mona Lisa?",
    "What is the capital city of Peru?",
    "Which planet is closest to the sun?",
]
GOOD = {
    QUESTION: "William Shakespeare wrote Hamlet around 1600.",
    NEIGHBORS[0]: "Leonardo da Vinci painted the Mona Lisa.",
    NEIGHBORS[1]: "Lima is the capital city of Peru.",
    NEIGHBORS[2]: "Mercury is the planet closest to the sun.",
}
PAIRS = """Here you go.

1. Wrong: Christopher Marlowe wrote Hamlet.
1. Corrected: Hamlet was written by Shakespeare, not by Marlowe's hand.
2. Wrong: Hamlet was written by Charles Dickens in 1850.
2. Corrected: Dickens had no part in Hamlet; Shakespeare wrote it about 1600.
3. Wrong: Hamlet is an anonymous medieval poem.
3. Corrected: Hamlet is a play with a known author, William Shakespeare.
"""


def _question(prompt: str) -> str:
    return re.search(r"<question-\w+>\n(.*)\n</question-", prompt).group(1).strip()


def _model(name: str, answers: dict[str, str], *, lazy: str | None = None, **kw):
    def script(prompt: str) -> str:
        if "deliberately false" in prompt:
            return PAIRS
        return lazy if lazy is not None else answers[_question(prompt)]

    return ScriptedChatModel(model_name=name, script=script, **kw)


@pytest.fixture()
def seeded(store):
    store.add_questions(NEIGHBORS)
    return store


def _detector(models, store, **kw):
    kw.setdefault("similarity", LexicalSimilarity())
    kw.setdefault("k_neighbors", 3)
    kw.setdefault("min_pairs", 2)
    return FEWL(reference_models=models, store=store, **kw)


def test_end_to_end_score_matches_formula(seeded):
    good = _model("good", GOOD)
    lazy = _model("lazy", GOOD, lazy="Shakespeare wrote it.")
    detector = _detector([good, lazy], seeded, max_neighbor_similarity=None)
    answer = "Hamlet was written by William Shakespeare."
    result = detector.check(QUESTION, answer)

    assert result.label in (Label.FACTUAL, Label.HALLUCINATED)
    # each model answered the question and the three neighbours; one generator call
    assert good.call_count == 1 + 3 + 1  # the generator defaults to the first model
    assert lazy.call_count == 1 + 3
    assert result.usage.llm_calls == 9
    neighbours = [n["question"] for n in result.details["neighbors"]]
    assert sorted(neighbours) == sorted(NEIGHBORS)

    sim = LexicalSimilarity()
    refs = [GOOD[QUESTION], "Shakespeare wrote it."]
    nb_answers = [[GOOD[q] for q in neighbours], ["Shakespeare wrote it."] * 3]
    wrong = [
        "Christopher Marlowe wrote Hamlet.",
        "Hamlet was written by Charles Dickens in 1850.",
        "Hamlet is an anonymous medieval poem.",
    ]
    corrected = [
        "Hamlet was written by Shakespeare, not by Marlowe's hand.",
        "Dickens had no part in Hamlet; Shakespeare wrote it about 1600.",
        "Hamlet is a play with a known author, William Shakespeare.",
    ]
    expected = fewl_formula(
        sim.matrix([answer], refs)[0],
        sim.matrix(refs, corrected),
        sim.matrix(refs, wrong),
        np.stack([sim.matrix([answer], row)[0] for row in nb_answers]),
    )
    assert result.score == pytest.approx(expected.score, abs=1e-6)
    assert result.details["breakdown"]["weights"] == pytest.approx(list(expected.weights))
    assert [r["answer"] for r in result.details["references"]] == refs
    assert len(result.details["iwco_pairs"]) == 3
    # the question itself is now in the store, for later neighbour searches
    assert seeded.has_question(QUESTION)


def test_second_answer_costs_no_llm_call(seeded):
    good = _model("good", GOOD)
    other = _model("other", GOOD)
    detector = _detector([good, other], seeded)
    first = detector.check(QUESTION, "Shakespeare.")
    calls = good.call_count + other.call_count
    second = detector.check(QUESTION, "Charles Dickens wrote Hamlet.")
    assert first.usage.llm_calls > 0
    assert second.usage.llm_calls == 0
    assert second.usage.cached_calls == first.usage.llm_calls
    assert good.call_count + other.call_count == calls
    # a new detector on the same store reuses the stored artifacts too
    again = _detector([good, other], seeded).check(QUESTION, "Marlowe.")
    assert again.usage.llm_calls == 0


def test_calls_of_one_check_run_concurrently(seeded):
    models = [_model(f"m{i}", GOOD, latency=0.3) for i in range(3)]
    detector = _detector(models, seeded, llm_settings=LLMSettings(max_concurrency=16))
    result = detector.check(QUESTION, "Shakespeare wrote Hamlet.")
    assert result.usage.llm_calls == 3 * 4 + 1
    # 13 calls of 0.3 s: one after the other, the wall time would exceed the summed latencies
    assert result.usage.llm_seconds > 2 * result.usage.wall_seconds


def test_rank_orders_candidates_and_shares_artifacts(seeded):
    good = _model("good", GOOD)
    other = _model("other", GOOD)
    detector = _detector([good, other], seeded, penalty=False)
    answers = [
        "Charles Dickens wrote Hamlet in 1850.",
        "William Shakespeare wrote Hamlet around 1600.",
        "Hamlet is an anonymous poem.",
    ]
    ranked = detector.rank(QUESTION, answers)
    assert ranked[0][0] == answers[1]
    scores = [r.score for _, r in ranked]
    assert scores == sorted(scores, reverse=True)
    assert good.call_count == 2  # its answer and the IW/CO generation, once for all three
    assert other.call_count == 1
    assert ranked[0][1].label == Label.FACTUAL


def test_garbled_pairs_give_invalid_and_are_not_stored(seeded):
    calls = {"n": 0}

    def script(prompt: str) -> str:
        if "deliberately false" in prompt:
            calls["n"] += 1
            return "I cannot help with generating false statements."
        return GOOD[_question(prompt)]

    model = ScriptedChatModel(model_name="m", script=script)
    detector = _detector([model], seeded, mode="single")
    result = detector.check(QUESTION, "Shakespeare.")
    assert result.label == Label.INVALID
    assert result.score is None
    assert result.raw_output == "I cannot help with generating false statements."
    assert result.details["stage"] == "fewl.iwco"
    assert result.answer == "Shakespeare."
    detector.check(QUESTION, "Shakespeare.")
    assert calls["n"] == 2  # garbage was not cached


def test_model_failure_gives_invalid_result_keeping_the_answer(seeded):
    model = _model("m", GOOD, fail_when=lambda p: "Hamlet" in p)
    detector = _detector([model], seeded, mode="single")
    detector.llm_settings.max_retries = 0
    result = detector.check(QUESTION, "Shakespeare.")
    assert result.label == Label.INVALID
    assert result.answer == "Shakespeare."
    assert "fewl." in result.invalid_reason


def test_multi_mode_samples_one_model(seeded):
    model = _model("solo", GOOD)
    detector = _detector([model], seeded, n_samples=3, penalty=False, expertise="uniform")
    assert detector.effective_mode == "multi"
    result = detector.check(QUESTION, "Shakespeare.")
    assert len(result.details["references"]) == 3
    assert result.details["breakdown"]["weights"] == pytest.approx([1 / 3] * 3)
    reference_prompts = [p for p in model.calls if "deliberately false" not in p]
    assert len(set(reference_prompts)) == 3  # distinct prompts, distinct cache keys


def test_random_neighbour_mode_respects_cut_off(seeded):
    seeded.add_questions(["Who was the author of the play Hamlet?"])  # a near-duplicate
    model = _model("m", {**GOOD, "Who was the author of the play Hamlet?": "Shakespeare."})
    detector = _detector(
        [model], seeded, mode="single", neighbor_mode="random", max_neighbor_similarity=0.8
    )
    result = detector.check(QUESTION, "Shakespeare.")
    found = result.details["neighbors"]
    assert {n["question"] for n in found} <= set(NEIGHBORS)
    assert all(n["similarity"] <= 0.8 for n in found)
    assert result.details["neighbor_mode"] == "random"


def test_no_neighbours_skips_the_penalty_explicitly(store):
    model = _model("m", GOOD)
    result = _detector([model], store, mode="single").check(QUESTION, "Shakespeare.")
    assert result.details["penalty_applied"] is False
    assert result.details["breakdown"]["laziness"] is None
    assert "penalty skipped" in result.explanation


def test_threshold_label_rule_and_no_generator_call(seeded):
    model = _model("m", GOOD)
    detector = _detector([model], seeded, mode="single", expertise="uniform", threshold=-10.0)
    result = detector.check(QUESTION, "Shakespeare.")
    assert result.label == Label.FACTUAL and result.passing is True
    assert result.details["label_rule"] == "threshold"
    assert not any("deliberately false" in p for p in model.calls)


def test_default_label_rule_uses_wrong_answers(seeded):
    detector = _detector([_model("a", GOOD), _model("b", GOOD)], seeded)
    right = detector.check(QUESTION, GOOD[QUESTION])
    wrong = detector.check(QUESTION, "Hamlet was written by Charles Dickens in 1850.")
    assert right.label == Label.FACTUAL
    assert wrong.label == Label.HALLUCINATED
    assert len(right.details["wrong_answer_scores"]) == 3
    assert "median" in right.explanation
    assert right.passing is None


def test_given_weights(seeded):
    detector = _detector(
        [_model("a", GOOD), _model("b", GOOD)],
        seeded,
        expertise="given",
        weights=[3, 1],
        threshold=0.0,
    )
    result = detector.check(QUESTION, "Shakespeare.")
    assert result.details["breakdown"]["weights"] == pytest.approx([0.75, 0.25])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mode": "multi", "reference_models": ["a", "b"]}, "mode"),
        ({"expertise": "given", "weights": [1.0]}, "weights"),
        ({"expertise": "given"}, "weights"),
        ({"min_pairs": 30}, "min_pairs"),
        ({"divergence": "hellinger"}, "divergence"),
        ({"k_neighbors": 0}, "k_neighbors"),
        ({"reference_models": []}, "reference_models"),
        ({"temperature": 1.0}, "temperature"),
    ],
)
def test_bad_options_fail_at_construction(kwargs, field):
    kwargs = {"reference_models": ["a", "b"], "similarity": LexicalSimilarity(), **kwargs}
    with pytest.raises(ValidationError, match=field):
        FEWL(**kwargs)


def test_rank_checks_its_arguments(store):
    detector = _detector([_model("m", GOOD)], store, mode="single")
    with pytest.raises(InvalidInputError, match="answers"):
        detector.rank(QUESTION, [])
    with pytest.raises(InvalidInputError, match="answers"):
        detector.rank(QUESTION, "one answer")
    with pytest.raises(InvalidInputError, match="question"):
        detector.rank("  ", ["x"])


def test_default_similarity_is_the_packaged_embedder(seeded, embedder):
    models = [_model("a", GOOD), _model("b", GOOD)]
    detector = FEWL(reference_models=models, store=seeded, min_pairs=3)
    assert detector.similarity is embedder
    assert detector.n_references == 2 and detector.effective_mode == "panel"
    right = detector.check(QUESTION, "Shakespeare wrote Hamlet.")
    wrong = detector.check(QUESTION, "Leonardo da Vinci painted the Mona Lisa.")
    assert right.score > wrong.score  # the lazy, off-question answer is penalised
    assert right.details["penalty_applied"] is True
