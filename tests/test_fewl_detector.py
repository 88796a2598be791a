"""End-to-end tests of the FEWL detector with scripted models (offline, deterministic)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time

import numpy as np
import pytest

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
    assert right.passing is True  # no threshold: the label decides


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
    with pytest.raises(InvalidInputError, match=field):
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


def test_every_call_of_a_check_is_in_flight_at_once(seeded):
    expected = 2 * (1 + 3) + 1
    in_flight, peak = 0, 0
    all_out = asyncio.Event()

    def tracking(name: str):
        async def call(prompt: str) -> str:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight == expected:
                all_out.set()
            # Each call stays open until all are out (or 10 s pass: then the check fails).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(all_out.wait(), 10)
            in_flight -= 1
            if "deliberately false" in prompt:
                return PAIRS
            return GOOD[_question(prompt)]

        call.__qualname__ = f"tracking_{name}"  # distinct model ids, distinct cache keys
        return call

    detector = _detector([tracking("a"), tracking("b")], seeded, max_neighbor_similarity=None)
    result = detector.check(QUESTION, "Hamlet was written by William Shakespeare.")
    assert result.usage.llm_calls == expected
    assert peak == expected  # the default bound lets them all out together
    assert LLMSettings().max_concurrency >= 3 * (1 + 25) + 1  # a default panel check fits


def test_own_calls_go_out_before_the_neighbour_search(seeded, monkeypatch):
    model = _model("good", GOOD)
    detector = _detector([model], seeded, mode="single", max_neighbor_similarity=None)
    real = seeded.nearest
    seen_calls: list[int] = []

    def slow_nearest(*args, **kwargs):
        # Wait until the question's own reference call and the IW/CO call have been sent.
        for _ in range(500):
            if model.call_count >= 2:
                break
            time.sleep(0.01)
        seen_calls.append(model.call_count)
        return real(*args, **kwargs)

    monkeypatch.setattr(seeded, "nearest", slow_nearest)
    result = detector.check(QUESTION, "Hamlet was written by William Shakespeare.")
    assert seen_calls == [2]
    assert result.usage.llm_calls == 1 + 3 + 1


def test_stored_neighbour_answers_are_read_in_one_query_per_model(seeded, monkeypatch):
    models = [_model("a", GOOD), _model("b", GOOD)]
    detector = _detector(models, seeded, max_neighbor_similarity=None)
    detector.check(QUESTION, "Hamlet was written by William Shakespeare.")
    single, batched = [], []
    monkeypatch.setattr(
        seeded, "get_artifact", _counting(seeded.get_artifact, single), raising=True
    )
    monkeypatch.setattr(
        seeded, "get_artifacts", _counting(seeded.get_artifacts, batched), raising=True
    )
    again = detector.check(QUESTION, "Shakespeare wrote it.")
    assert again.usage.llm_calls == 0 and again.usage.cached_calls == 2 * (1 + 3) + 1
    assert len(batched) == 2  # one read per reference model for the three neighbours
    assert len(single) == 2 + 1  # the question's own answers and the IW/CO pairs


def _counting(fn, log):
    def wrapper(*args, **kwargs):
        log.append(args)
        return fn(*args, **kwargs)

    return wrapper


def test_warm_up_loads_the_embedding_model(monkeypatch, store):
    from truthguard.similarity import EmbeddingSimilarity

    loaded = []
    monkeypatch.setattr(EmbeddingSimilarity, "warm_up", lambda self: loaded.append(self))
    emb = EmbeddingSimilarity()
    detector = FEWL(reference_models=[_model("a", GOOD)], similarity=emb, store=store)
    assert detector.warm_up() is detector
    assert emb in loaded and store.embedder in loaded
    lexical = _detector([_model("a", GOOD)], None)
    loaded.clear()
    lexical.warm_up()  # a lexical backend and no store: nothing to load
    assert loaded == []


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
    with pytest.raises(InvalidInputError, match=field):
        FEWL(similarity=LexicalSimilarity(), **kwargs)


@pytest.mark.parametrize("weights", [[-1.0, 2.0], [0.0, 0.0], [float("nan"), 1.0]])
def test_unusable_given_weights_fail_at_construction_before_any_call(weights):
    models = [ScriptedChatModel(model_name="a"), ScriptedChatModel(model_name="b")]
    with pytest.raises(InvalidInputError, match="weights"):
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


def test_checks_on_two_event_loops_make_one_private_store(monkeypatch):
    import threading

    from truthguard.store import ArtifactStore

    # Checks run on two event loops at once (two threads, each with its own loop) both ask for
    # the private store before either has made it: two stores would split the artifacts, and
    # the ones kept in the store that is not kept would be asked of the models again. The store
    # is made slowly here so that both threads reach it before either has made it.
    made = []
    in_memory = ArtifactStore.in_memory

    def slow(**kwargs):
        made.append(1)
        time.sleep(0.3)
        return in_memory(**kwargs)

    monkeypatch.setattr(ArtifactStore, "in_memory", slow)
    detector = FEWL(
        reference_models=[ScriptedChatModel(model_name="a", default="Paris.")],
        mode="single",
        similarity=LexicalSimilarity(),
    )
    got = []
    threads = [threading.Thread(target=lambda: got.append(detector.get_store())) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1
    assert got[0] is got[1] is detector.get_store()


# -- streamed IW/CO replies ----------------------------------------------------------------------


def test_settled_pair_halves_are_embedded_while_the_reply_streams(embedder, monkeypatch):
    from truthguard.fewl._parse import settled_halves

    detector = FEWL(reference_models=[_model("a", GOOD)], mode="single", similarity=embedder)
    asked: list[str] = []
    monkeypatch.setattr(embedder, "prefetch", lambda texts: asked.extend(texts))
    on_text = detector._pair_prefetcher()
    for cut in range(1, len(PAIRS) + 1):
        on_text(PAIRS[:cut])  # a stream that delivers one character at a time
    assert asked == settled_halves(PAIRS)  # each half once, in order, as soon as it settled
    assert len(asked) == 5  # the sixth half is the last one: it settles only at the end
    assert (
        FEWL(
            reference_models=[_model("a", GOOD)], mode="single", similarity=LexicalSimilarity()
        )._pair_prefetcher()
        is None
    )  # nothing to embed ahead of time


def test_streamed_iwco_over_http_scores_as_an_invoked_one(embedder):
    from truthguard.store import ArtifactStore
    from truthguard.testing import OpenAIServer

    def reply(messages):
        prompt = messages[-1]["content"]
        return PAIRS if "deliberately false" in prompt else GOOD[_question(prompt)]

    results = {}
    with OpenAIServer(reply=reply) as server:
        for streamed in (True, False):
            model = server.chat_model(max_retries=0, timeout=10, disable_streaming=not streamed)
            detector = FEWL(
                reference_models=[model],
                mode="single",
                penalty=False,
                min_pairs=3,
                similarity=embedder,
                store=ArtifactStore.in_memory(),
            )
            results[streamed] = detector.check(QUESTION, "Shakespeare wrote Hamlet.")
        requests = list(server.requests)
    assert sorted(r.stream for r in requests) == [False, False, False, True]
    a, b = results[True], results[False]
    assert a.score == pytest.approx(b.score, abs=1e-6) and a.label == b.label
    assert a.details["iwco_pairs"] == b.details["iwco_pairs"]
    assert not a.usage.estimated_tokens
    assert a.usage.total_tokens == sum(r.usage.total_tokens for r in requests[:2] if r.usage)
