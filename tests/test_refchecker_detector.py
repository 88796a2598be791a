"""The RefChecker detector: LLM and local pipelines, joint checking, abstain, unverifiable."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ValidationError

from truthguard.errors import ConfigurationError, InvalidInputError
from truthguard.refchecker import (
    LLMChecker,
    LLMExtractor,
    LocalChecker,
    LocalExtractor,
    RefChecker,
)
from truthguard.refchecker.segment import segment_references
from truthguard.result import Label
from truthguard.similarity import EmbeddingSimilarity
from truthguard.testing import ScriptedChatModel

REFS = [
    "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair.",
    "Gustave Eiffel's company designed and built the tower.",
]
TRIPLETS = (
    '("Eiffel Tower", "located in", "Paris")\n("Eiffel Tower", "completed in", "1925")\n'
    '("Eiffel Tower", "painted", "blue")'
)
Q = "Tell me about the Eiffel Tower."
A = "The Eiffel Tower is in Paris. It was finished in 1925 and is painted blue."


def _label_for(prompt: str) -> str:
    if '"Paris"' in prompt:
        return "Entailment"
    if '"1925"' in prompt:
        return "Contradiction"
    return "Neutral"


@pytest.fixture()
def extractor_llm():
    return ScriptedChatModel(model_name="extractor", default=TRIPLETS)


def test_no_reference_is_unverifiable_without_any_call(extractor_llm):
    checker_llm = ScriptedChatModel(model_name="checker", default="Entailment")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm), checker=LLMChecker(model=checker_llm)
    )
    r = rc.invoke({"question": Q, "answer": A})
    assert r.label == Label.UNVERIFIABLE and r.score is None
    assert "references" in r.explanation and r.details["reason"] == "no_references"
    assert extractor_llm.call_count == 0 and checker_llm.call_count == 0
    assert rc.invoke({"question": Q, "answer": A, "references": ["  "]}).label == "unverifiable"


def test_no_claim_abstains(embedder):
    checker_llm = ScriptedChatModel(default="Entailment")
    rc = RefChecker(
        extractor=LLMExtractor(model=ScriptedChatModel(default="NONE")),
        checker=LLMChecker(model=checker_llm),
    )
    r = rc.invoke({"question": Q, "answer": "Hmm.", "references": REFS})
    assert r.label == Label.UNVERIFIABLE and r.score is None
    assert r.details["reason"] == "abstain"
    assert r.details["aggregate"]["strict"] == "Abstain"
    assert r.details["aggregate"]["soft"]["Abstain"] == 1.0
    assert checker_llm.call_count == 0
    # an answer with nothing in it is not even extracted: no content, no verdict
    local = RefChecker().invoke({"question": Q, "answer": " ... ", "references": REFS})
    assert local.label == Label.UNVERIFIABLE and local.details["reason"] == "no_content"


@pytest.mark.parametrize("answer", ["", "   ", "...", "N/A"])
def test_an_answer_without_content_gets_no_verdict_and_no_model_call(answer):
    extractor_llm = ScriptedChatModel(default='("Dubai", "is in", "UAE")')
    checker_llm = ScriptedChatModel(default="Entailment")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm), checker=LLMChecker(model=checker_llm)
    )
    r = rc.invoke({"question": Q, "answer": answer, "references": REFS})
    assert r.label == Label.UNVERIFIABLE and r.passing is None
    assert r.details["reason"] == "no_content" and r.usage.llm_calls == 0
    assert extractor_llm.call_count == checker_llm.call_count == 0


def test_llm_pipeline_per_claim(embedder, extractor_llm):
    checker_llm = ScriptedChatModel(model_name="checker", script=_label_for)
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm), checker=LLMChecker(model=checker_llm)
    )
    r = rc.invoke(
        {
            "question": Q,
            "answer": A,
            "contexts": [Document(page_content=REFS[0])],
            "references": [REFS[1]],
        }
    )
    labels = [c["label"] for c in r.details["claims"]]
    assert labels == ["Entailment", "Contradiction", "Neutral"]
    assert r.score == pytest.approx(1 / 3)
    assert r.label == Label.HALLUCINATED
    assert r.details["aggregate"]["strict"] == "Contradiction"
    assert r.details["aggregate"]["major"] == "Entailment"  # three-way tie: first seen
    assert checker_llm.call_count == 3 and r.usage.llm_calls == 4
    assert r.usage.prompt_tokens > 0
    first = r.details["claims"][0]
    assert first["triplet"] == ["Eiffel Tower", "located in", "Paris"]
    assert first["checker_output"] == "Entailment" and first["mode"] == "single"
    ev = first["evidence"]  # explicit references come first, then contexts
    assert ev["reference"] == 1 and ev["text"] == "The Eiffel Tower is in Paris."
    assert REFS[0][ev["start"] : ev["end"]] == ev["text"]
    assert "1925" in r.explanation


def test_joint_mode_one_call_when_aligned(embedder, extractor_llm):
    checker_llm = ScriptedChatModel(default="1. Entailment\n2. Contradiction\n3. Neutral")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm),
        checker=LLMChecker(model=checker_llm, joint=True),
    )
    r = rc.invoke({"question": Q, "answer": A, "references": REFS})
    assert checker_llm.call_count == 1
    assert [c["label"] for c in r.details["claims"]] == ["Entailment", "Contradiction", "Neutral"]
    assert {c["mode"] for c in r.details["claims"]} == {"joint"}
    assert "There are 3 claims" in checker_llm.calls[0]


def test_joint_misalignment_re_asks_claim_by_claim(embedder, extractor_llm):
    def script(prompt: str) -> str:
        if "numbered claims" in prompt:
            return "1. Entailment\n2. Neutral"  # claim 3 missing: misaligned
        return _label_for(prompt)

    checker_llm = ScriptedChatModel(script=script)
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm),
        checker=LLMChecker(model=checker_llm, joint=True, joint_size=3),
    )
    r = rc.invoke({"question": Q, "answer": A, "references": REFS})
    assert checker_llm.call_count == 1 + 3
    claims = r.details["claims"]
    assert [c["label"] for c in claims] == ["Entailment", "Contradiction", "Neutral"]
    assert {c["mode"] for c in claims} == {"joint-fallback"}
    assert r.usage.llm_calls == 1 + 1 + 3


def test_garbage_outputs_give_invalid_results_keeping_raw(embedder, extractor_llm):
    bad_extractor = RefChecker(
        extractor=LLMExtractor(model=ScriptedChatModel(default="Sorry, I can't.")),
        checker=LLMChecker(model=ScriptedChatModel(default="Entailment")),
    )
    r = bad_extractor.invoke({"question": Q, "answer": A, "references": REFS})
    assert r.label == Label.INVALID and r.raw_output == "Sorry, I can't."
    assert r.details["stage"] == "refchecker.extract"

    bad_checker = RefChecker(
        extractor=LLMExtractor(model=extractor_llm),
        checker=LLMChecker(model=ScriptedChatModel(default="I think so")),
    )
    r = bad_checker.invoke({"question": Q, "answer": A, "references": REFS})
    assert r.label == Label.INVALID and r.raw_output == "I think so"
    assert r.score is None


def test_checker_calls_run_concurrently(embedder, extractor_llm):
    state = {"now": 0, "max": 0}

    async def slow_checker(prompt) -> str:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.05)
        state["now"] -= 1
        return "Entailment"

    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm), checker=LLMChecker(model=slow_checker)
    )
    r = asyncio.run(rc.ainvoke({"question": Q, "answer": A, "references": REFS}))
    assert r.score == 1.0 and r.label == Label.FACTUAL
    assert state["max"] == 3


def test_long_reference_checks_only_top_k_segments(embedder):
    filler = [
        f"Item {i} of the list concerns river number {i} in a far away land." for i in range(40)
    ]
    ref = " ".join([*filler[:20], "The Eiffel Tower was completed in 1889.", *filler[20:]])
    checker_llm = ScriptedChatModel(default="Entailment")
    rc = RefChecker(
        extractor=LLMExtractor(
            model=ScriptedChatModel(default='("Eiffel Tower", "completed in", "1889")')
        ),
        checker=LLMChecker(model=checker_llm),
        segment_size=30,
        top_k=2,
    )
    r = rc.invoke({"question": Q, "answer": "It was completed in 1889.", "references": [ref]})
    assert r.details["n_segments"] > 10
    prompt = checker_llm.calls[0]
    assert "completed in 1889." in prompt
    assert "[2]" in prompt and "[3]" not in prompt
    assert r.details["claims"][0]["evidence"]["text"] == "The Eiffel Tower was completed in 1889."


def test_local_pipeline_flags_the_unsupported_sentence(embedder):
    rc = RefChecker(score="min_support")
    answer = "The Eiffel Tower is in Paris. Bananas are an excellent source of potassium."
    r = rc.invoke({"question": Q, "answer": answer, "references": REFS})
    claims = r.details["claims"]
    assert [c["label"] for c in claims] == ["Entailment", "Neutral"]
    # a Neutral claim's support is at most 0.5 (see LocalChecker)
    assert r.score == pytest.approx(claims[1]["support"], abs=1e-4) and r.score <= 0.5
    assert r.label == Label.HALLUCINATED
    assert claims[0]["evidence"]["text"] == "The Eiffel Tower is in Paris."
    assert r.usage.llm_calls == 0
    good = rc.invoke({"question": Q, "answer": "The Eiffel Tower is in Paris.", "references": REFS})
    assert good.label == Label.FACTUAL and good.score > r.score


def test_local_extractor_question_context():
    ex = LocalExtractor(question_context_words=3)
    claims = ex.extract("Where is Dubai?", "Persian Gulf. It is a large city in the UAE.")
    assert [c.text for c in claims] == [
        "Where is Dubai: Persian Gulf.",
        "It is a large city in the UAE.",
    ]
    assert [c.text for c in LocalExtractor().extract("Q?", "Persian Gulf.")] == ["Persian Gulf."]


class _FakeNLI:
    """Scores (premise, hypothesis) pairs: entails when the hypothesis' year is in the premise."""

    def __init__(self) -> None:
        self.calls = 0

    def label_index(self, name: str) -> int:
        return {"contradiction": 0, "entailment": 1, "neutral": 2}[name]

    def probabilities(self, pairs):
        self.calls += 1
        rows = []
        for premise, hypothesis in pairs:
            if "1889" in hypothesis and "1889" in premise:
                rows.append([0.05, 0.9, 0.05])
            elif "1925" in hypothesis and "1889" in premise:
                rows.append([0.8, 0.1, 0.1])
            else:
                rows.append([0.1, 0.1, 0.8])
        return np.array(rows)


def test_local_nli_checker_uses_upstream_label_rule(embedder):
    nli = _FakeNLI()
    rc = RefChecker(checker=LocalChecker(nli=nli))
    answer = "It was completed in 1889. It was finished in 1925. Gustave liked cheese a lot."
    r = rc.invoke({"question": Q, "answer": answer, "references": REFS})
    assert [c["label"] for c in r.details["claims"]] == ["Entailment", "Contradiction", "Neutral"]
    assert nli.calls == 1  # one predict call for the whole check
    assert r.details["claims"][0]["support"] == pytest.approx(0.9)
    assert r.details["aggregate"]["strict"] == "Contradiction"
    with pytest.raises(ValueError):
        LocalChecker(nli=42)


def test_threshold_decides_the_label_and_bad_references_name_the_field(embedder):
    rc = RefChecker(threshold=0.4, score="entailment_ratio")
    r = rc.invoke(
        {"question": Q, "answer": "The Eiffel Tower is in Paris. Moon.", "references": REFS}
    )
    assert r.score == 0.5 and r.passing is True and r.label == Label.FACTUAL
    with pytest.raises(InvalidInputError) as e:
        rc.invoke({"question": Q, "answer": A, "references": ["ok", 3]})
    assert e.value.field == "references[1]"
    with pytest.raises(InvalidInputError) as e:
        rc.invoke({"question": Q, "answer": A, "references": "not a list"})
    assert e.value.field == "references"


def test_store_caches_llm_artifacts(store, extractor_llm):
    checker_llm = ScriptedChatModel(script=_label_for)
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm),
        checker=LLMChecker(model=checker_llm),
        store=store,
    )
    first = rc.invoke({"question": Q, "answer": A, "references": REFS})
    second = rc.invoke({"question": Q, "answer": A, "references": REFS})
    assert first.usage.llm_calls == 4 and second.usage.llm_calls == 0
    assert second.usage.cached_calls == 4
    assert second.details["claims"] == first.details["claims"]


def test_content_recall_and_lexical_weight(embedder):
    from truthguard.refchecker.lexical import content_recall

    assert content_recall("The Persian Gulf.", "on the coast of the Persian Gulf") == 1.0
    assert content_recall("Gulf of Mexico", "on the coast of the Persian Gulf") == 0.5
    assert content_recall("It is.", "anything") == 1.0  # no content word: nothing to miss
    ref = ["Dubai is located on the southeast coast of the Persian Gulf."]
    # the similarity-only mode of LocalChecker (grounding=False)
    plain = RefChecker(
        score="mean_support", checker=LocalChecker(grounding=False, lexical_weight=0.0)
    )
    lexical = RefChecker(score="mean_support", checker=LocalChecker(grounding=False))
    wrong = {"question": "Which sea is Dubai on?", "answer": "Dubai lies on the Gulf of Mexico."}
    right = {**wrong, "answer": "Dubai lies on the Persian Gulf."}
    for rc in (plain, lexical):
        assert (
            rc.invoke({**right, "references": ref}).score
            > rc.invoke({**wrong, "references": ref}).score
        )
    plain_raw = plain.invoke({**wrong, "references": ref}).details["claims"][0]["checker_output"]
    assert set(json.loads(plain_raw)) == {"cosine"}
    raw = json.loads(
        lexical.invoke({**wrong, "references": ref}).details["claims"][0]["checker_output"]
    )
    assert set(raw) == {"cosine", "recall"} and raw["recall"] < 1.0


@pytest.mark.parametrize("cls", [LLMChecker, LLMExtractor])
def test_refchecker_llm_stages_check_their_model_at_construction(cls):
    with pytest.raises(ValidationError, match="model"):
        cls(model="gpt-4o")
    cls(model=lambda prompt: "Entailment")  # callables are accepted


# -- a batch embeds its texts once ----------------------------------------------------------------

_NAMESPACES = itertools.count()


class _RecordingSimilarity(EmbeddingSimilarity):
    """The packaged MiniLM under a cache namespace of its own; records every text it encodes."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded: list[str] = []
        self._namespace = next(_NAMESPACES)

    @property
    def cache_key(self) -> str:
        return f"recording-{self._namespace}:{super().cache_key}"

    @property
    def model(self):
        inner = super().model
        log = self.encoded

        class _Recorder:
            def encode(self, texts, **kwargs):
                log.extend(texts)
                return inner.encode(texts, **kwargs)

            def __getattr__(self, name):
                return getattr(inner, name)

        return _Recorder()


BATCH_REF = (
    "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair. "
    "Gustave Eiffel's company designed and built the tower. It is 330 metres tall."
)
BATCH_ANSWERS = [
    "The Eiffel Tower is in Paris.",
    "It was completed in 1925.",
    "Gustave Eiffel's company built the tower. It is 330 metres tall.",
    "The tower is painted blue.",
]


def _batch_inputs():
    return [{"question": Q, "answer": a, "references": [BATCH_REF]} for a in BATCH_ANSWERS]


def test_a_batch_encodes_each_shared_reference_sentence_once(embedder):
    sim = _RecordingSimilarity()
    rc = RefChecker(similarity=sim, batch_concurrency=4)
    results = asyncio.run(rc.abatch(_batch_inputs()))
    assert [r.label for r in results] == [
        Label.FACTUAL,
        Label.HALLUCINATED,
        Label.FACTUAL,
        Label.HALLUCINATED,
    ]
    # checks running at once would each have missed the cache and encoded the reference again
    assert sorted(sim.encoded) == sorted(set(sim.encoded))
    assert sim.encoded.count("It is 330 metres tall.") == 1
    sync_sim = _RecordingSimilarity()
    RefChecker(similarity=sync_sim, batch_concurrency=4).batch(_batch_inputs())
    assert sorted(sync_sim.encoded) == sorted(set(sync_sim.encoded))


def test_a_batch_decides_like_checks_one_by_one(embedder):
    rc = RefChecker(score="mean_support", similarity=_RecordingSimilarity())
    alone = [rc.invoke(inp) for inp in _batch_inputs()]
    batched = RefChecker(score="mean_support", similarity=_RecordingSimilarity()).batch(
        _batch_inputs()
    )
    assert [r.details["claims"] for r in batched] == [r.details["claims"] for r in alone]
    assert [r.score for r in batched] == [r.score for r in alone]


def test_a_batch_with_a_bad_input_still_checks_the_others(embedder, extractor_llm):
    rc = RefChecker(similarity=_RecordingSimilarity())
    inputs = [*_batch_inputs()[:1], {"question": Q, "answer": A, "references": "not a list"}]
    first, bad = rc.batch(inputs, return_exceptions=True)
    assert first.label == Label.FACTUAL
    assert isinstance(bad, InvalidInputError) and "references" in str(bad)
    # an LLM extractor's claims are unknown before its call: nothing is embedded up front
    llm = RefChecker(
        extractor=LLMExtractor(model=extractor_llm),
        checker=LLMChecker(model=ScriptedChatModel(default="Entailment")),
        similarity=_RecordingSimilarity(),
    )
    assert llm._batch_texts(_batch_inputs()) == []


class _BrokenSimilarity(EmbeddingSimilarity):
    @property
    def model(self):
        raise ConfigurationError("no model here")

    @property
    def cache_key(self) -> str:
        return "broken"  # vectors other tests cached for the packaged model must not answer


def test_a_batch_whose_model_fails_reports_it_per_input():
    rc = RefChecker(similarity=_BrokenSimilarity())
    results = rc.batch(_batch_inputs()[:2], return_exceptions=True)
    assert [type(r) for r in results] == [ConfigurationError, ConfigurationError]
    with pytest.raises(ConfigurationError, match="no model here"):
        asyncio.run(rc.abatch(_batch_inputs()[:2]))


def test_aprefetch_leaves_nothing_for_the_checks_to_encode(embedder):
    sim = _RecordingSimilarity()
    rc = RefChecker(similarity=sim)

    async def run():
        await rc.aprefetch(_batch_inputs())
        before = list(sim.encoded)
        results = await rc.abatch(_batch_inputs())
        return before, results

    before, results = asyncio.run(run())
    assert "It is 330 metres tall." in before and "The tower is painted blue." in before
    assert sim.encoded == before and len(results) == len(BATCH_ANSWERS)


_WAVE_TOWERS = [
    ("Alder", "Oslo", 1901, 120),
    ("Birch", "Bergen", 1912, 95),
    ("Cedar", "Tromso", 1923, 140),
    ("Elm", "Stavanger", 1934, 88),
    ("Fir", "Bodo", 1945, 101),
    ("Hazel", "Narvik", 1956, 77),
]


def _wave_inputs():
    return [
        {
            "question": f"When was the {name} tower built?",
            "answer": f"The {name} tower in {city} was erected in {year}.",
            "references": [
                f"The {name} tower in {city} was built in {year}. It is {height} metres tall."
            ],
        }
        for name, city, year, height in _WAVE_TOWERS
    ]


def test_a_batch_embeds_in_waves_whose_kept_states_its_checks_read(embedder, monkeypatch):
    from truthguard.embedding import _onnx
    from truthguard.refchecker import detector as module
    from truthguard.refchecker.softmatch import TOKEN_VECTORS

    inputs = _wave_inputs()
    sim = _RecordingSimilarity()
    rc = RefChecker(similarity=sim)
    per_input = max(module._KEPT_BYTES_PER_CHAR * sum(map(len, rc._input_texts(i))) for i in inputs)
    monkeypatch.setattr(_onnx.KEPT, "max_bytes", 3 * per_input)  # a third: one input's texts
    waves = rc._waves(inputs)
    assert [(lo, hi) for lo, hi, _ in waves] == [(k, k + 1) for k in range(len(inputs))]
    assert waves[1][2] == rc._batch_texts(inputs[1:2])
    model = embedder.model  # the loaded encoder every instance of these settings shares
    asked: list[str] = []
    token_vectors = type(model).token_vectors

    def counting(self, texts, **kw):
        asked.extend(texts)
        return token_vectors(self, texts, **kw)

    monkeypatch.setattr(type(model), "token_vectors", counting)
    _onnx.KEPT.clear()
    TOKEN_VECTORS.clear()
    hits = model.stats["kept_hits"]
    batched = rc.batch(inputs)
    # "erected" is matched softly: every check reads the token vectors of its claim and its
    # sentence, and finds them kept from its wave's encoding
    assert asked and model.stats["kept_hits"] - hits == len(asked)
    alone = [RefChecker(similarity=_RecordingSimilarity()).invoke(i) for i in inputs]
    assert [r.score for r in batched] == [r.score for r in alone]
    monkeypatch.setattr(_onnx.KEPT, "max_bytes", 0)
    assert [(lo, hi) for lo, hi, _ in rc._waves(inputs)] == [(0, len(inputs))]


def test_a_batch_cuts_each_reference_into_segments_once(embedder, monkeypatch):
    from truthguard.refchecker import detector as module

    cut: list[tuple[str, ...]] = []

    def counting(texts, *, size):
        cut.append(tuple(texts))
        return segment_references(texts, size=size)

    module._segmented.cache_clear()
    monkeypatch.setattr(module, "segment_references", counting)
    inputs = _batch_inputs()
    expected = RefChecker().batch(inputs)  # the prefetch and every check segment
    distinct = {tuple(i["references"]) for i in inputs}
    assert len(cut) == len(distinct) < 2 * len(inputs)
    again = RefChecker().batch(inputs)
    assert len(cut) == len(distinct)  # memoised across batches too
    assert [r.score for r in again] == [r.score for r in expected]


def test_a_batch_validates_each_input_once(embedder, monkeypatch):
    from truthguard.detector import BaseDetector

    seen: list[object] = []
    validate = BaseDetector.validate_input

    def counting(self, input):
        if not isinstance(input, self.input_model):
            seen.append(input)
        return validate(self, input)

    monkeypatch.setattr(BaseDetector, "validate_input", counting)
    inputs = _batch_inputs()
    RefChecker(similarity=_RecordingSimilarity()).batch(inputs)
    asyncio.run(RefChecker(similarity=_RecordingSimilarity()).abatch(inputs))
    assert len(seen) == 2 * len(inputs)  # the prefetch and the checks share the validated inputs


# -- size: bounded by default, and a huge answer never holds the event loop --------------------


def _towers(n_chars: int) -> str:
    sents = (
        f"The tower number {i} was built in {1800 + i % 200} by Alpha {i}." for i in range(10**6)
    )
    out, size = [], 0
    for s in sents:
        if size >= n_chars:
            break
        out.append(s)
        size += len(s) + 1
    return " ".join(out)


def test_an_answer_or_context_over_the_limit_is_unverifiable_too_large():
    big = _towers(60_000)
    r = RefChecker().invoke({"question": "Which towers?", "answer": big, "contexts": ["x"]})
    assert r.label == Label.UNVERIFIABLE and r.details["reason"] == "too_large"
    assert r.details["answer_chars"] == len(big) and "max_answer_chars" in r.explanation
    ctx = [_towers(3_000)] * 200
    small = RefChecker(max_context_chars=100_000)
    r = small.invoke({"question": "Which towers?", "answer": "The tower is old.", "contexts": ctx})
    assert r.details["reason"] == "too_large" and "max_context_chars" in r.explanation
    with pytest.raises(InvalidInputError, match="max_answer_chars"):
        RefChecker(max_answer_chars=0)


def test_claims_are_placed_in_linear_time_in_a_long_answer():
    import time

    from truthguard.refchecker.detector import _place_claims

    answer = _towers(1_000_000)
    # Not verbatim (an LLM extractor's rewording): each is aligned near the previous claim.
    claims = [f"Tower number {i} was built in {1800 + i % 200} by Alpha {i}" for i in range(0, 100)]
    started = time.perf_counter()
    placed = _place_claims(answer, claims)
    assert time.perf_counter() - started < 5  # a whole-answer alignment takes ~2.5 s per claim
    start, end, _ = placed[7]
    assert "number 7 was built in 1807 by Alpha 7" in answer[start:end]


async def test_a_5_mb_answer_keeps_the_guards_deadline_and_never_stalls_the_loop():
    import time

    from langchain_core.runnables import RunnableLambda

    from truthguard.guard import HallucinationGuard

    big = _towers(5_000_000)
    answers = [_towers(2_000)]
    chain = RunnableLambda(
        lambda q: {"answer": answers.pop(0) if answers else big, "context": ["Tower 1 is old."]}
    )
    guard = HallucinationGuard(
        chain=chain, detectors=RefChecker(max_answer_chars=None), check_timeout=1.0
    )
    await guard.ainvoke("Which towers?")  # first-use imports and model loading

    async def ticking(work: Any) -> tuple[float, float, float, Any]:
        """``work`` awaited while a ticker on the loop wakes every 10 ms: the seconds it took,
        the longest a tick came late, the most CPU time the loop's thread spent between two
        ticks (work done on the loop itself, which a loaded machine does not inflate) and what
        ``work`` gave."""
        stall, busy, done = 0.0, 0.0, asyncio.Event()

        async def ticker() -> None:
            nonlocal stall, busy
            last, cpu = time.perf_counter(), time.thread_time()
            while not done.is_set():
                await asyncio.sleep(0.01)
                now, now_cpu = time.perf_counter(), time.thread_time()
                stall, busy = max(stall, now - last - 0.01), max(busy, now_cpu - cpu)
                last, cpu = now, now_cpu

        ticks = asyncio.ensure_future(ticker())
        started = time.perf_counter()
        out = await work()
        elapsed = time.perf_counter() - started
        done.set()
        await ticks
        return elapsed, stall, busy, out

    # A blocked loop stalls for seconds every time; on a busy machine the OS alone can hold the
    # process for 100 ms now and then, so the best of three runs is what is compared.
    runs = []
    for _ in range(3):
        runs.append(await ticking(lambda: guard.ainvoke("Which towers?")))
        if runs[-1][1] < 0.1:
            break
    elapsed, stall, _, out = min(runs, key=lambda r: r[1])
    assert out.attempts[0].results[0].label == Label.INVALID  # the check ran out of time
    assert elapsed < 1.1 + 0.3  # check_timeout within 10 %, plus the chain and the cleaning
    # the loop's own thread never works for long at a stretch, however loaded the machine
    busy = max(r[2] for r in runs)
    assert busy < 0.1, f"the event loop worked {busy * 1000:.0f} ms at a stretch"
    bound = 0.1
    if stall >= bound:  # held back every time: by what the machine does to an idle loop now?
        idle = min([(await ticking(lambda: asyncio.sleep(elapsed)))[1] for _ in range(3)])
        bound += idle
    assert stall < bound, f"the event loop stalled {stall * 1000:.0f} ms (bound {bound:.2f} s)"


@pytest.mark.parametrize("joint", [False, True])
def test_a_checker_reply_echoing_the_claim_is_no_verdict(joint):
    from langchain_core.runnables import RunnableLambda

    from truthguard.guard import HallucinationGuard

    extractor = ScriptedChatModel(default="Mars has forty moons")
    checker = ScriptedChatModel(script=lambda p: "Mars has forty moons (Entailment).")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor, mode="subsentence"),
        checker=LLMChecker(model=checker, joint=joint),
    )
    payload = {"question": "How many moons has Mars?", "answer": "Mars has forty moons.",
               "contexts": ["Mars has two moons, Phobos and Deimos."]}  # fmt: skip
    r = rc.invoke(payload)
    assert r.label != Label.FACTUAL and r.passing is not True
    chain = RunnableLambda(lambda q: {"answer": payload["answer"], "context": payload["contexts"]})
    guard = HallucinationGuard(chain=chain, detectors=rc, on_error="closed")
    out = guard.invoke({"question": payload["question"]})
    assert out.status != "passed"


# -- answers as real models write them ---------------------------------------------------------

OBSERVATORY = [
    "The Kestrel Ridge Observatory was founded by Dr. Maria Okafor in 1987. The main telescope "
    "at the observatory has a mirror 4.2 metres in diameter. The observatory sits on a ridge "
    "1,900 metres above sea level.",
    "Redbridge Rovers won the Northern Cup in 1998 after beating Eastfield 2-1 in the final.",
    "Tom Ashworth captained Redbridge Rovers from 1995 to 2001.",
]
CORRECT_ANSWERS = [
    "Maria Okafor set it up in 1987; the main mirror is 4.2 m wide.",
    "It was founded by Dr. Okafor in nineteen eighty-seven.",
    "Redbridge Rovers won the 1998 Northern Cup, captained by Tom Ashworth.",
    "Based on the passages, the observatory was founded in 1987.",
    "Here is a summary: Dr. Maria Okafor founded the observatory in 1987, and its telescope has "
    "a 4.2-metre mirror.",
]
WRONG_ANSWERS = [
    "The Kestrel Ridge Observatory was founded by Dr. Maria Okafor in 1991.",
    "It was founded by John Smith in 1987.",
    "The main telescope has a mirror 6 metres in diameter.",
    "Redbridge Rovers won the Northern Cup in 1998, captained by Peter Hale.",
    "Redbridge Rovers lost the Northern Cup final in 1998.",
]
REFUSALS = [
    "I don't know.",
    "I cannot tell from the passages.",
    "Not mentioned in the context.",
    "I'm not sure. Do you like sci-fi?",
    "No, I don't think I know anything else",
]
# A refusal that goes on to state facts: its facts are checked.
REFUSING_THEN_STATING = [
    ("I don't know who built it, but it was founded by John Smith in 1987.", Label.HALLUCINATED),
    (
        "I'm not sure about the mirror, but it was founded by Dr. Maria Okafor in 1987.",
        Label.FACTUAL,
    ),
]


def _check(answer, **extra):
    return RefChecker().invoke(
        {"question": "Tell me about it.", "answer": answer, "contexts": OBSERVATORY, **extra}
    )


@pytest.mark.parametrize("answer", CORRECT_ANSWERS)
def test_correct_paraphrases_pass(embedder, answer):
    r = _check(answer)
    assert r.label == Label.FACTUAL and r.passing is True, r.explanation


@pytest.mark.parametrize("answer", WRONG_ANSWERS)
def test_invented_facts_fail(embedder, answer):
    r = _check(answer)
    assert r.label == Label.HALLUCINATED and r.passing is False, r.explanation
    assert any(c["label"] != "Entailment" for c in r.details["claims"])


# Answers of two sentences, as a RAG chain writes them: one retelling, three with one fact wrong.
PASSAGES = [
    (
        "Maria Okafor set it up in 1987. The main mirror is 4.2 metres wide, and the observatory "
        "sits 1,900 metres above sea level.",
        True,
    ),
    (
        "Dr. Maria Okafor founded the observatory in 1978. The main telescope has a mirror 4.2 "
        "metres in diameter.",
        False,
    ),
    (
        "The observatory was founded by Dr. James Whitfield in 1987. Its main mirror is 4.2 "
        "metres wide.",
        False,
    ),
    (
        "Dr. Maria Okafor founded the observatory in 1987. It discovered three comets in 2004 and "
        "won a Nobel Prize.",
        False,
    ),
]


@pytest.mark.parametrize("history", [None, "User: Tell me about the observatory."])
@pytest.mark.parametrize(("answer", "right"), PASSAGES)
def test_a_passage_with_one_wrong_fact_fails_in_a_chat_too(embedder, answer, right, history):
    r = _check(answer, **({"history": history} if history else {}))
    assert r.passing is right and r.label == (Label.FACTUAL if right else Label.HALLUCINATED), (
        r.explanation
    )
    # outside an open chat the support model decides; a chat reply is weighed on its own scale
    assert r.details["decision"]["form"] == ("reply" if history else "support")


@pytest.mark.parametrize("year", ["1987", "1991"])
def test_one_fact_changed_in_a_copied_sentence_of_a_long_answer_fails(embedder, year):
    answer = " ".join(
        [
            f"The Kestrel Ridge Observatory was founded by Dr. Maria Okafor in {year}.",
            "The main telescope at the observatory has a mirror 4.2 metres in diameter.",
            "The observatory sits on a ridge 1,900 metres above sea level.",
            "Redbridge Rovers won the Northern Cup in 1998 after beating Eastfield 2-1 in the "
            "final.",
        ]
    )
    r = _check(answer)
    assert r.details["decision"]["form"] == "support"
    assert r.passing is (year == "1987"), r.explanation
    if year == "1991":
        assert r.details["decision"]["decided_by"] == "claim"


# A reply that answers the question first, then retells the passages: asked in a chat (the
# question as the history), a wrong direct answer fails as it does outside one.
DIRECT_ANSWERS = [
    (
        "Dr. Maria Okafor. She founded the observatory in 1987 on a ridge 1,900 metres above "
        "sea level.",
        True,
    ),
    (
        "Dr. James Whitfield. He founded the observatory in 1987 on a ridge 1,900 metres above "
        "sea level.",
        False,
    ),
    (
        "It was 1991. She founded the observatory on a ridge 1,900 metres above sea level, and its "
        "main mirror is 4.2 metres in diameter.",
        False,
    ),
]


@pytest.mark.parametrize("history", [None, ["Who founded the observatory, and when?"]])
@pytest.mark.parametrize(("answer", "right"), DIRECT_ANSWERS)
def test_a_wrong_direct_answer_first_fails_in_a_chat_too(embedder, answer, right, history):
    r = _check(answer, **({"history": history} if history else {}))
    assert r.passing is right, r.explanation
    if not right:  # the least supported claim decides; an open chat's reply, its lead answer
        assert r.details["decision"]["decided_by"] == ("lead_answer" if history else "claim")


LIGHTHOUSE = ["The Marlow lighthouse was built in 1881 by the harbour board."]


@pytest.mark.parametrize(
    ("answer", "open_passes", "grounded_passes"),
    [
        ("The harbour board.", True, True),
        ("Thomas Stevenson.", True, False),  # a name no source holds, given as the answer
        ("It was built by Thomas Stevenson.", True, False),
    ],
)
def test_grounded_chat_replies_are_held_to_the_sources_as_answers_are(
    embedder, answer, open_passes, grounded_passes
):
    question = "Who built the Marlow lighthouse?"
    inp = {"question": question, "answer": answer, "contexts": LIGHTHOUSE}
    alone = RefChecker().invoke(inp)
    assert alone.passing is grounded_passes  # without a history the reply is an answer
    assert RefChecker().invoke({**inp, "history": [question]}).passing is open_passes
    grounded = RefChecker(chat_replies="grounded").invoke({**inp, "history": [question]})
    assert grounded.passing is grounded_passes, grounded.explanation
    if not grounded_passes:  # held to the sources as an answer is: its claim decides
        assert grounded.details["decision"]["decided_by"] == "claim"


def test_a_grounded_chat_still_reads_the_history_as_evidence(embedder):
    said = ["I heard the Marlow lighthouse was painted red in 1990. Who built it?"]
    rc = RefChecker(chat_replies="grounded")

    def check(answer):
        return rc.invoke(
            {"question": said[0], "answer": answer, "contexts": LIGHTHOUSE, "history": said}
        )

    repeated = check("The harbour board built it in 1881, and it was painted red in 1990.")
    assert repeated.passing is True and repeated.details["decision"]["form"] == "support"
    assert [c["evidence"]["source"] for c in repeated.details["claims"]] == [
        "reference",
        "history",
    ]
    assert (
        check("The harbour board built it in 1881, and it was painted red in 1995.").passing
        is False
    )


def test_in_a_grounded_chat_a_question_is_no_evidence_of_its_premise(embedder):
    rc = RefChecker(chat_replies="grounded")

    def check(asked, answer):
        return rc.invoke(
            {"question": asked, "answer": answer, "contexts": LIGHTHOUSE, "history": [asked]}
        )

    # agreeing with a wrong premise the user only asked about is not supported by it
    agreed = check("Was the Marlow lighthouse built in 1902?", "Yes, it was built in 1902.")
    assert agreed.passing is False, agreed.explanation
    assert check("Was the Marlow lighthouse built in 1881?", "Yes, it was built in 1881.").passing
    # what a turn states is still evidence, beside the question that follows it
    said = "My grandfather painted it red in 1950. Who built it?"
    repeated = check(said, "The harbour board built it in 1881; your grandfather painted it red.")
    assert repeated.passing is True, repeated.explanation


@pytest.mark.parametrize("answer", REFUSALS)
def test_a_refusal_is_unverifiable_never_hallucinated(embedder, answer):
    r = _check(answer)
    assert r.label == Label.UNVERIFIABLE and r.details["reason"] == "refusal"
    assert r.passing is True and r.score is None


@pytest.mark.parametrize(("answer", "label"), REFUSING_THEN_STATING)
def test_the_facts_after_a_refusal_are_checked(embedder, answer, label):
    r = _check(answer)
    assert r.label == label and "reason" not in r.details, r.explanation
    [skipped] = r.details["skipped"]
    assert skipped["kind"] == "refusal" and answer.startswith(skipped["claim"])
    [claim] = r.details["claims"]
    assert claim["claim"].endswith("in 1987.") and claim["start"] is not None


def test_an_llm_pipeline_asks_no_model_about_a_refusal_but_extracts_the_facts_after_one(embedder):
    extractor_llm = ScriptedChatModel(default='("observatory", "founded by", "John Smith")')
    checker_llm = ScriptedChatModel(default="Contradiction")
    rc = RefChecker(
        extractor=LLMExtractor(model=extractor_llm), checker=LLMChecker(model=checker_llm)
    )
    refusal = rc.invoke({"question": "Who?", "answer": REFUSALS[3], "contexts": OBSERVATORY})
    assert refusal.details["reason"] == "refusal" and refusal.passing is True
    assert extractor_llm.call_count == checker_llm.call_count == 0
    answer = REFUSING_THEN_STATING[0][0]
    r = rc.invoke({"question": "Who?", "answer": answer, "contexts": OBSERVATORY})
    assert r.label == Label.HALLUCINATED and extractor_llm.call_count == 1


NOVELS = [
    "Twisted is a 2007 novel by Laurie Halse Anderson about a high school senior. Wintergirls is "
    "a 2009 young adult novel by Laurie Halse Anderson about two girls with eating disorders."
]


@pytest.mark.parametrize(
    ("answer", "facts"),
    [
        (
            "I don't have any additional information on Twisted just that it was written by "
            "Laurie.  Wintergirls however is a 2012 romance novel.",
            ["it was written by Laurie.", "Wintergirls however is a 2012 romance novel."],
        ),
        (
            "Not sure when it was released, but it is a sci-fi produced by Adam Schroeder. Do "
            "you enjoy watch Sci-Fi movies?",
            ["but it is a sci-fi produced by Adam Schroeder."],
        ),
        (
            "Not that I can see but I can recommend Gone Girl and Fifty Shades of Grey, which "
            "were released in the same year.",
            [
                "I can recommend Gone Girl and Fifty Shades of Grey",
                "which were released in the same year.",
            ],
        ),
    ],
)
def test_a_chat_reply_that_opens_with_a_refusal_is_checked_on_its_facts(embedder, answer, facts):
    r = RefChecker().invoke({"question": "Tell me more.", "answer": answer, "contexts": NOVELS})
    assert r.details.get("reason") != "refusal" and r.label == Label.HALLUCINATED
    checked = {c["claim"]: c for c in r.details["claims"]}
    assert set(facts) <= set(checked)
    assert all(checked[f]["kind"] == "fact" for f in facts)
    assert "refusal" in {s["kind"] for s in r.details["skipped"]}


def test_talk_around_facts_is_not_counted_but_the_facts_in_it_are(embedder):
    chat = _check("Great question! I love this observatory. Have you been there?")
    assert chat.label == Label.UNVERIFIABLE and chat.details["reason"] == "no_facts"
    kinds = {s["kind"] for s in chat.details["skipped"]}
    assert {"greeting", "opinion", "question"} <= kinds
    wrong = _check("I love how Dr. Okafor founded it in 1987 with John Smith.")
    assert wrong.label == Label.HALLUCINATED
    [claim] = wrong.details["claims"]
    assert claim["kind"] == "opinion" and [i["text"] for i in claim["issues"]] == ["John", "Smith"]


def test_the_chat_history_is_evidence_of_what_was_said(embedder):
    answer = "Yes, the one you visited with Ana Lima is the Kestrel Ridge Observatory."
    without = _check(answer)
    assert any(i["text"] == "Ana" for c in without.details["claims"] for i in c["issues"])
    history = [
        ("human", "I visited an observatory on a ridge with my friend Ana Lima last summer."),
        ("ai", "That sounds lovely."),
    ]
    r = _check(answer, history=history)
    assert not any(i["text"] == "Ana" for c in r.details["claims"] for i in c["issues"])
    sources = {c["evidence"]["source"] for c in r.details["claims"]}
    assert sources <= {"history", "reference"}


def test_history_accepts_text_messages_and_pairs_and_names_a_bad_turn():
    from langchain_core.messages import AIMessage, HumanMessage

    from truthguard.detector import DetectorInput

    inp = DetectorInput(
        question="q", answer="a", history=[HumanMessage("hi"), AIMessage("hello"), ("user", "x")]
    )
    assert inp.history == ["hi", "hello", "x"]
    assert DetectorInput(question="q", answer="a", history="one turn").history == ["one turn"]
    with pytest.raises(InvalidInputError, match=r"history\[1\]"):
        RefChecker().validate_input({"question": "q", "answer": "a", "history": ["ok", 3]})


def test_every_claim_keeps_its_label_span_and_evidence_with_the_decision(embedder):
    r = _check("Dr. Maria Okafor founded the observatory in 1987. Its mirror is 6 metres wide.")
    decision = r.details["decision"]
    assert 0.0 <= decision["p_hallucinated"] <= 1.0 and r.score == pytest.approx(
        1 - decision["p_hallucinated"], abs=1e-3
    )
    labels = [c["label"] for c in r.details["claims"]]
    assert labels[0] == "Entailment" and labels[1] != "Entailment"
    bad = r.details["claims"][1]
    assert bad["start"] is not None and bad["evidence"]["source"] == "reference"
    assert r.label == Label.HALLUCINATED


def test_strict_verdict_is_still_available(embedder):
    rc = RefChecker(verdict="strict", score="entailment_ratio")
    r = rc.invoke({"question": "q", "answer": CORRECT_ANSWERS[0], "contexts": OBSERVATORY})
    assert r.details["aggregate"]["strict"] != "Entailment" or r.label == Label.FACTUAL
    assert r.passing == (r.label == Label.FACTUAL)


# -- the same answers through the guard, as a new user runs it: ChatOpenAI over HTTP -----------


def _guarded(reply: str, **guard_options):
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.testing import OpenAIServer

    class Passages(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            return [Document(page_content=p) for p in OBSERVATORY]

    server = OpenAIServer(reply=reply)
    server.start()
    model = ChatOpenAI(base_url=server.base_url, api_key="k", model="m", max_retries=0)
    guard = HallucinationGuard(
        chain=build_rag_chain(Passages(), model), detectors=[RefChecker()], **guard_options
    )
    return guard, server


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (CORRECT_ANSWERS[0], "passed"),
        (CORRECT_ANSWERS[2], "passed"),
        (CORRECT_ANSWERS[3], "passed"),
        (WRONG_ANSWERS[0], "rejected"),
        (WRONG_ANSWERS[3], "rejected"),
        (REFUSALS[1], "passed"),
        (REFUSALS[3], "passed"),
        (REFUSING_THEN_STATING[0][0], "rejected"),
    ],
)
def test_the_guard_releases_correct_answers_and_refusals_and_rejects_invented_facts(
    embedder, reply, status
):
    guard, server = _guarded(reply)
    try:
        result = guard.invoke({"question": "Who founded the observatory, and when?"})
    finally:
        server.close()
    assert result.status == status, result.verdict
    assert len(result.attempts) == 1  # no retry spent on a refusal or a correct paraphrase


def test_a_refusal_can_be_retried_when_asked(embedder):
    from truthguard.guard import Fallback

    guard, server = _guarded(
        REFUSALS[0], refusals="retry", policies=[Fallback(answer="Please ask the front desk.")]
    )
    try:
        result = guard.invoke({"question": "Who founded the observatory?"})
    finally:
        server.close()
    assert result.status == "fallback" and len(result.attempts) == 2


def test_a_chat_reply_is_weighed_on_the_chat_scale_and_a_passage_by_its_own_model():
    from truthguard.refchecker.decision import GroundingDecision

    ref = (
        "The Kell bridge was closed by the council on Monday. It will reopen in May. Drivers "
        "are sent through Hallam Street. Buses keep their usual stops."
    )
    answer = "The council shut the Kell bridge on Monday, and drivers face a detour until May."
    ask = {"question": "Is the bridge open?", "answer": answer, "references": [ref]}
    in_chat = {**ask, "history": "User: Is the Kell bridge open?"}
    decision = GroundingDecision.default().model_copy(update={"chat_offset": 0.0})
    plain = RefChecker(decision=decision, decide="fitted").invoke(ask).details["decision"]
    chat = RefChecker(decision=decision, decide="fitted").invoke(in_chat).details["decision"]
    assert (plain["form"], chat["form"]) == ("answer", "reply")
    assert plain["decided_by"] == chat["decided_by"] == "answer"
    assert math.isclose(plain["p_hallucinated"], chat["p_hallucinated"], abs_tol=1e-4)
    shifted = RefChecker(decision=decision.model_copy(update={"chat_offset": 1.0}), decide="fitted")
    p = shifted.invoke(in_chat).details["decision"]
    assert p["p_hallucinated"] > chat["p_hallucinated"] + 0.05
    # three sentences outside a chat: a passage, weighed by the passage model
    longer = {**ask, "answer": answer + " Cars go by Hallam Street. The buses still stop."}
    passage = RefChecker(decision=decision, decide="fitted").invoke(longer).details["decision"]
    assert passage["form"] == "passage"
    if passage["decided_by"] == "answer":
        z = decision.forms["passage"].logit(passage["features"])
        assert math.isclose(passage["p_hallucinated"], 1 / (1 + math.exp(-z)), abs_tol=1e-3)


# -- RAG answers as chat models write them, through the real guard over HTTP ------------------

# (question, passages, answer, passes): paraphrase, units, number words, a fact joined from two
# passages and a subject named by the question pass; a swapped doer, another ordinal and another
# year in a second sentence fail.
RAG_ANSWERS = [
    (
        "When did the Varne Tunnel open, and how long is it?",
        ["The Varne Tunnel is 14.6 kilometres long and opened to rail traffic on 2 June 2004."],
        "It opened to trains on 2 June 2004 and runs for 14.6 km.",
        True,
    ),
    (
        "How tall is the Selwyn Tower?",
        ["The Selwyn Tower is 312 metres tall and has 78 floors."],
        "With 78 storeys, the Selwyn Tower reaches a height of 312 m.",
        True,
    ),
    (
        "Who wrote the symphony, and how many movements has it?",
        ["Clara Vossberg wrote the symphony in 1911. The symphony has four movements."],
        "The symphony, written by Clara Vossberg, is in 4 movements.",
        True,
    ),
    (
        "Who captained the 1998 Northern Cup winners?",
        [
            "Redbridge Rovers won the Northern Cup in 1998 after beating Eastfield 2-1 in the "
            "final.",
            "Tom Ashworth captained Redbridge Rovers from 1995 to 2001.",
        ],
        "Tom Ashworth captained Redbridge Rovers to the Northern Cup title in 1998.",
        True,
    ),
    (
        "When did the Panama Canal open?",
        [
            "The United States took over the canal project in 1904, and the canal opened on 15 "
            "August 1914."
        ],
        "The Panama Canal opened on 15 August 1914, after the United States took over in 1904.",
        True,
    ),
    (
        # an option the answer picks is its claim, not the subject the sources speak of
        "Which tennis player won more Grand Slam titles, Henri Leconte or Jonathan Stark?",
        ["Jonathan Stark won two Grand Slam doubles titles during his career."],
        "Henri Leconte won more Grand Slam titles.",
        False,
    ),
    (
        "Who designed the locks?",
        ["George Goethals designed the locks, and John Wallace was the first chief engineer."],
        "John Wallace designed the locks.",
        False,
    ),
    (
        "Tell me about the canal.",
        ["The canal opened in 1914. It was the third attempt to cross the isthmus."],
        "The canal opened in 1914. It was the fourth attempt to cross the isthmus.",
        False,
    ),
    (
        "Tell me about the canal.",
        ["The canal opened in 1914. The United States took over the project in 1904."],
        "The canal opened in 1914. The United States took over the project in 1906.",
        False,
    ),
    # a count the answer works out itself passes when it agrees with what it lists or spans
    (
        "When were the bombs dropped?",
        ["Hiroshima was bombed on 6 August 1945. Nagasaki was bombed on 9 August 1945."],
        "Hiroshima was bombed on 6 August 1945 and Nagasaki three days later, on 9 August.",
        True,
    ),
    (
        "When were the bombs dropped?",
        ["Hiroshima was bombed on 6 August 1945. Nagasaki was bombed on 9 August 1945."],
        "Hiroshima was bombed on 6 August 1945 and Nagasaki four days later, on 9 August.",
        False,
    ),
    (
        "Who was elected?",
        ["Baleka Mbete was elected Speaker.", "Thandi Modise was elected Chairperson."],
        "Two members were elected, Baleka Mbete and Thandi Modise.",
        True,
    ),
    # number formats: a figure rounded to fewer decimals, "pounds" as lb, "and a half", a
    # year range written with the last two digits
    (
        "How heavy is a Cornish hen?",
        ["Rock Cornish game hens weigh about 2.5 pounds (1.1 kilograms) after four weeks."],
        "It weighs roughly two and a half pounds (about 1.1 kg) at four weeks.",
        True,
    ),
    (
        "How fast is the bullet?",
        ["The .243 produces a velocity of 2,960 feet (902.21 m) per second."],
        "About 2,960 feet per second (roughly 902 m/s).",
        True,
    ),
    (
        "When did Louis XV reign?",
        ["The style flourished under Louis XIV (1643–1715) and Louis XV (1715–74)."],
        "It flourished under Louis XIV (1643–1715) and Louis XV (1715–1774).",
        True,
    ),
    (
        "When did Louis XV reign?",
        ["The style flourished under Louis XIV (1643–1715) and Louis XV (1715–74)."],
        "It flourished under Louis XIV (1643–1715) and Louis XV (1715–1784).",
        False,
    ),
    # a value the sources state about something else, put in this slot; joined from its own
    # sentence, the same value is supported
    (
        "When was the second season broadcast?",
        [
            "The first season of the show aired on the BBC in 2009 to strong reviews. Its "
            "second season was broadcast in 2011, after a long delay in filming."
        ],
        "Its second season reached viewers in 2009, following a long filming delay.",
        False,
    ),
    (
        "When was the second season broadcast?",
        [
            "The first season of the show aired on the BBC in 2009 to strong reviews. Its "
            "second season was broadcast in 2011, after a long delay in filming."
        ],
        "The second season came out in 2011, two years after the BBC aired the first in 2009.",
        True,
    ),
    # who a statement is attributed to (an op-ed's author) is no fact of the sources; what
    # the statement says still is, and a name the answer makes act is
    (
        "Summarize the op-ed.",
        [
            "Countries that still use the death penalty executed 1,634 people in 2015, the "
            "most in 25 years."
        ],
        "Salil Shetty: countries that still use the death penalty executed 1,634 people in "
        "2015, the most in 25 years.",
        True,
    ),
    (
        "Summarize the op-ed.",
        [
            "Countries that still use the death penalty executed 1,634 people in 2015, the "
            "most in 25 years."
        ],
        "Countries that still use the death penalty executed 1,834 people in 2015, writes "
        "Salil Shetty.",
        False,
    ),
    (
        "Summarize the op-ed.",
        [
            "Countries that still use the death penalty executed 1,634 people in 2015, the "
            "most in 25 years."
        ],
        "Salil Shetty counted 1,634 executions in 2015, the most in 25 years.",
        False,
    ),
    (
        "Who fell in love with Hermaphroditus?",
        ["According to Ovid, the water nymph Salmacis fell in love with Hermaphroditus."],
        "As Hesiod tells it, the water nymph Salmacis fell in love with Hermaphroditus.",
        False,
    ),
    # a name the sources state about something else, put after the words that frame the
    # evidence sentence's own name; and the same name joined from the sentence that states it
    (
        "Where was the charter sealed?",
        [
            "The charter was sealed at Wexford in 1204 by the abbot. Its only surviving copy "
            "was found at Kilmore in 1911."
        ],
        "In 1204 the abbot had his charter sealed at Kilmore.",
        False,
    ),
    (
        "Where was the charter sealed, and where was its copy found?",
        [
            "The charter was sealed at Wexford in 1204 by the abbot. Its only surviving copy "
            "was found at Kilmore in 1911."
        ],
        "The abbot had it sealed at Wexford in 1204; the only copy left turned up at Kilmore.",
        True,
    ),
    # the order of two names, held against the years the sources give each
    (
        "Which ferry was launched first, the Skylark or the Petrel?",
        [
            "The Skylark (launched 1998) is a roll-on ferry of the Orkney line.",
            "The Petrel, a smaller ship built at Leith in 1974, served the same crossing.",
        ],
        "The Skylark was launched first.",
        False,
    ),
    (
        "Which ferry was launched first, the Skylark or the Petrel?",
        [
            "The Skylark (launched 1998) is a roll-on ferry of the Orkney line.",
            "The Petrel, a smaller ship built at Leith in 1974, served the same crossing.",
        ],
        "The Petrel, built in 1974, is older than the Skylark.",
        True,
    ),
    # two people who trade what the sources say of each, in a reworded sentence
    (
        "Who led the 1908 expedition?",
        [
            "The expedition of 1908 was commanded by Halvard Lunde, a naval officer from "
            "Bergen. Archibald Murray, a geologist from Leith, served as its chief scientist."
        ],
        "Archibald Murray commanded the expedition, and Halvard Lunde served as its chief "
        "scientist.",
        False,
    ),
    (
        "Who led the 1908 expedition?",
        [
            "The expedition of 1908 was commanded by Halvard Lunde, a naval officer from "
            "Bergen. Archibald Murray, a geologist from Leith, served as its chief scientist."
        ],
        "Halvard Lunde commanded the expedition, and Archibald Murray was its chief scientist.",
        True,
    ),
    # a term no vector knows must be stated: its word pieces match another's
    (
        "Which drugs are protease inhibitors?",
        [
            "Examples include the influenza drug oseltamivir and the HIV protease inhibitor "
            "saquinavir, both designed as transition state analogues."
        ],
        "The HIV drug ritonavir is one of the protease inhibitors designed this way.",
        False,
    ),
    (
        "Which drugs are protease inhibitors?",
        [
            "Examples include the influenza drug oseltamivir and the HIV protease inhibitor "
            "saquinavir, both designed as transition state analogues."
        ],
        "Saquinavir, an HIV drug, is a protease inhibitor designed as a transition-state "
        "analogue; the flu medicine oseltamivir was designed the same way.",
        True,
    ),
    # a claim that restates the question must add what the sources state: that is its answer
    (
        "Who was the Simpsons character Milhouse named after?",
        [
            "Milhouse Van Houten is a character in The Simpsons, created by Matt Groening, who "
            "named him after President Richard Nixon's middle name."
        ],
        "The Simpsons character Milhouse was named after a famous historical person.",
        False,
    ),
    (
        "Who was the Simpsons character Milhouse named after?",
        [
            "Milhouse Van Houten is a character in The Simpsons, created by Matt Groening, who "
            "named him after President Richard Nixon's middle name."
        ],
        "The Simpsons character Milhouse was named after Nixon.",
        True,
    ),
    # a word denied by the prefix "non" is set against the word; denied in the claim, it agrees
    (
        "Can I get my money back if I cancel a Saver booking?",
        ["Saver bookings are non-refundable, but the dates can be changed once for a £15 fee."],
        "Yes, a Saver booking can be refunded if you cancel.",
        False,
    ),
    (
        "Can I get my money back if I cancel a Saver booking?",
        ["Saver bookings are non-refundable, but the dates can be changed once for a £15 fee."],
        "No, a Saver booking can't be refunded, though you can change the dates once for £15.",
        True,
    ),
    # a restatement that adds a word the sources deny with "non" adds what they state
    (
        "I booked the Saver rate for two nights. Would I get anything back if I cancelled the "
        "Saver booking?",
        ["Saver bookings are non-refundable, but the dates can be changed once for a £15 fee."],
        "The Saver booking can't be refunded.",
        True,
    ),
    # a long question restated in part: the question's words are most of the claim's, and
    # what it adds is its answer; the same with the answer the sources give
    (
        "The Salt Road is the third novel by Maren Holt, who was born on 3 May 1961 in Bergen "
        "and is a Norwegian novelist and what?",
        [
            "The Salt Road is the third novel by Maren Holt. Maren Holt (born 3 May 1961 in "
            "Bergen) is a Norwegian novelist and translator."
        ],
        "Maren Holt is a Norwegian novelist and a surgeon.",
        False,
    ),
    (
        "The Salt Road is the third novel by Maren Holt, who was born on 3 May 1961 in Bergen "
        "and is a Norwegian novelist and what?",
        [
            "The Salt Road is the third novel by Maren Holt. Maren Holt (born 3 May 1961 in "
            "Bergen) is a Norwegian novelist and translator."
        ],
        "Maren Holt is a Norwegian novelist and a translator.",
        True,
    ),
    # a whole sentence restating the question, half of whose additions no source states: what
    # it adds is its answer ("store" is theirs, "clothing" is not); the same with their answer
    (
        "Mira Tesk is a businesswoman who co-founded a retail chain that specialises in which "
        "products?",
        [
            "Mira Tesk co-founded the Harlow chain of stores with her brother in 1981. Harlow is "
            "a chain of superstores specialising in garden tools and outdoor furniture."
        ],
        "Mira Tesk co-founded a clothing store.",
        False,
    ),
    (
        "Mira Tesk is a businesswoman who co-founded a retail chain that specialises in which "
        "products?",
        [
            "Mira Tesk co-founded the Harlow chain of stores with her brother in 1981. Harlow is "
            "a chain of superstores specialising in garden tools and outdoor furniture."
        ],
        "Mira Tesk co-founded a chain of stores that specialises in garden tools.",
        True,
    ),
    # one of two options picked, with a word of its own: an answer
    (
        "Is Guyana part of the Caribbean or South America?",
        [
            "Guyana is a sovereign state on the northern mainland of South America. It is often "
            "considered part of the Caribbean region because of its cultural ties."
        ],
        "Geographically, Guyana is part of South America.",
        True,
    ),
    # a span the answer works out from its own date and one another passage gives, and a
    # century that holds the year the sources give; the same with a span that does not add up
    (
        "When was the Monument finished?",
        [
            "The Great Fire of London broke out on 2 September 1666.",
            "The Monument to the fire, designed by Christopher Wren, was completed in 1677.",
        ],
        "Wren's Monument was completed in 1677, eleven years after the Great Fire of London.",
        True,
    ),
    (
        "When was the Monument finished?",
        [
            "The Great Fire of London broke out on 2 September 1666.",
            "The Monument to the fire, designed by Christopher Wren, was completed in 1677.",
        ],
        "Wren's Monument was completed in 1677, fifteen years after the Great Fire of London.",
        False,
    ),
    # a temperature in the other notation, "not ... any" for "no"; and the same with the value
    # or the polarity changed, or a share in words the sources do not give
    (
        "How hot is the oil for frying?",
        ["The oil is heated to 178 °C before the batter goes in."],
        "The oil should be at 178 degrees Celsius.",
        True,
    ),
    (
        "How hot is the oil for frying?",
        ["The oil is heated to 178 °C before the batter goes in."],
        "The oil should be at 178 degrees Fahrenheit.",
        False,
    ),
    (
        "How much of the Earth's ice is in Antarctica?",
        ["Around 90% of the Earth's ice mass is in Antarctica."],
        "Antarctica holds roughly two-thirds of the Earth's ice.",
        False,
    ),
    (
        "What do basal species eat?",
        ["Basal species, such as plants, feed on no other living creature in the web."],
        "Basal species such as plants don't feed on any other living creature in the web.",
        True,
    ),
    (
        "Who built the Varne Tunnel?",
        ["The Varne Tunnel is 14.6 kilometres long and opened to rail traffic on 2 June 2004."],
        "It opened to trains on 2 June 2004 and is 14.6 km long. Who designed it, the passage "
        "leaves unsaid.",
        True,
    ),
    (
        "When did Comte develop positivism?",
        ["Auguste Comte developed his positivist philosophy in Paris in the 1830s and 1840s."],
        "Comte developed positivism in Paris in the 1800s.",
        True,
    ),
    (
        "Where is the heart's natural pacemaker?",
        [
            "The sinoatrial node is a cluster of pacemaker cells that sets the rhythm of the "
            "heart. Its cells fire about seventy times a minute at rest."
        ],
        "It's the sinoatrial node, a cluster of pacemaker cells that sets the heart's rhythm. "
        "The passage doesn't say where the node sits (for example, which chamber holds it).",
        True,
    ),
    (
        "When did the first programme go out?",
        ["The opening programme of the new service was broadcast at 15:00 from the studios."],
        "It went out at 3 pm, from the studios.",
        True,
    ),
    (
        "When did the first programme go out?",
        ["The opening programme of the new service was broadcast at 15:00 from the studios."],
        "It went out at 5 pm, from the studios.",
        False,
    ),
    (
        "Why were dugouts made of linden wood?",
        [
            "Many dugouts were made from linden wood. Boats made from it have a better cargo "
            "capacity and are easier to carry than boats made from most other trees."
        ],
        "Linden wood gave dugouts two advantages over most other trees: they could take more "
        "cargo, and they were easier to carry.",
        True,
    ),
]


ON_CALL = [
    "Engineers on the primary on-call rotation receive a flat stipend of $400 per week, and "
    "secondary engineers receive $200 per week. On-call weeks run from Monday 10:00 to the "
    "following Monday 10:00.",
    "Time spent responding to pages outside working hours is paid at 1.5 times the hourly rate, "
    "with a minimum of 30 minutes per page.",
    "Compensation claims are submitted each month and approved by the engineering manager.",
]
RAG_ANSWERS += [
    # made of the passages' words, each used there of something else
    (
        "How is on-call work paid?",
        ON_CALL,
        "Primary on-call engineers get a flat $400 a week. Stipends are paid out with the "
        "following month's salary.",
        False,
    ),
    (
        "How is on-call work paid?",
        ON_CALL,
        "Primary on-call engineers get a flat $400 a week, and pages outside working hours are "
        "paid at 1.5 times the hourly rate.",
        True,
    ),
]


def test_a_word_the_passages_use_only_of_something_else_is_named_so(embedder):
    answer = "Stipends are paid out with the following month's salary."
    result = RefChecker().invoke(
        {"question": "How is on-call work paid?", "answer": answer, "contexts": ON_CALL}
    )
    assert not result.passing
    assert "the sources use 'paid' only of something else" in result.explanation


@pytest.mark.parametrize(("question", "passages", "answer", "passes"), RAG_ANSWERS)
def test_rag_answers_pass_by_meaning_through_the_guard_over_http(
    embedder, question, passages, answer, passes
):
    from doubles import ListRetriever
    from truthguard.guard import HallucinationGuard
    from truthguard.rag import build_rag_chain
    from truthguard.testing import OpenAIServer

    with OpenAIServer(reply=lambda messages: answer) as server:
        chain = build_rag_chain(
            ListRetriever(passages=passages, search_kwargs={"k": len(passages)}),
            server.chat_model(max_retries=0, timeout=10),
        )
        out = HallucinationGuard(chain=chain, detectors=RefChecker()).invoke({"question": question})
    result = out.attempts[0].results[0]
    assert result.usage.llm_calls == 0
    assert (out.status == "passed") is passes, result.explanation
    if not passes:
        # the verdict names the claim, the span that decided it and the evidence sentence
        assert "Not supported:" in result.explanation and "held against" in result.explanation


def test_the_support_decision_records_the_answer_level_models_verdict_beside_it():
    ask = {
        "question": "Which country is Dubai in?",
        "contexts": ["Dubai is a city in the United Arab Emirates (UAE)."],
    }
    for answer, parts in [("Dubai is in the UAE.", False), ("Dubai is in the Arab world.", True)]:
        result = RefChecker().invoke({**ask, "answer": answer})
        other = result.details["decision"]["second_opinion"]
        fitted = RefChecker(decide="fitted").invoke({**ask, "answer": answer}).details["decision"]
        assert other["p_hallucinated"] == fitted["p_hallucinated"]
        assert other["threshold"] == fitted["threshold"]
        assert other["passing"] is (fitted["p_hallucinated"] < fitted["threshold"])
        assert (other["passing"] != result.passing) is parts


def test_more_passages_from_a_retriever_do_not_turn_a_caught_error_into_a_pass():
    own = (
        "Nordvik Freight cut its diesel use by 20 percent in 2023 by moving long routes to "
        "rail. The company runs 140 trucks from its depot in Aberdeen."
    )
    others = [
        "Staff who cycle to work get a 30 percent discount on bicycle repairs. The canteen is "
        "open from 11:00 to 14:00 on weekdays.",
        "Expense claims must be filed within 60 days. Hotel stays are reimbursed up to 1,500 "
        "kroner a night.",
    ]
    detector = RefChecker()
    question = "How did Nordvik Freight change its diesel use?"
    wrong = (
        "Nordvik Freight reduced its diesel use by 30 percent in 2023 by shifting routes to rail."
    )
    right = wrong.replace("30", "20")
    for contexts in ([own], [own, *others], [*others, own]):
        bad = detector.invoke({"question": question, "answer": wrong, "contexts": contexts})
        good = detector.invoke({"question": question, "answer": right, "contexts": contexts})
        assert not bad.passing and good.passing, (len(contexts), bad.explanation)


# -- the default check inside a guarded RAG app: more passages never release a wrong answer ---

KNOWLEDGE_BASE = [
    "Norrfjord Shipping reported revenue of NOK 1.2 billion for the fourth quarter, up 8 "
    "percent from a year earlier.",
    "Norrfjord Shipping cut its diesel use by 20 percent in 2023 by moving long routes to rail.",
    "Rail is required for business journeys under 300 kilometres.",
    "The Aberdeen office books all staff travel through Nordreise.",
    "Staff who cycle to work get a 30 percent discount on bicycle repairs.",
    "Norrfjord Shipping was founded in 1987 by Tomas Berg. Its Tromso office opened in 2015.",
    "Phobos orbits Mars closer than any other known moon. Deimos is the smaller of the two "
    "moons of Mars.",
    "The solar system has eight planets and more than two hundred known moons.",
    *ON_CALL,
]

# (question, a reply the sources contradict or do not support, the right reply)
GUARDED_CASES = [
    (
        "By how much did Norrfjord cut its diesel use?",
        "Norrfjord Shipping cut its diesel use by 30 percent in 2023 by moving routes to rail.",
        "Norrfjord Shipping cut its diesel use by 20 percent in 2023 by moving routes to rail.",
    ),
    (
        "How did fourth-quarter revenue change?",
        "Revenue fell 8 percent in the fourth quarter, to NOK 1.2 billion.",
        "Revenue rose 8 percent in Q4, to 1.2 billion kroner.",
    ),
    (
        "When is rail required?",
        "Rail is required for business journeys of more than 300 kilometres.",
        "Rail is required for business journeys of less than 300 kilometres.",
    ),
    (
        "Which office books staff travel through Nordreise?",
        "The Tromso office books all staff travel through Nordreise.",
        "The Aberdeen office books all staff travel through Nordreise.",
    ),
    (
        "Tell me about Phobos.",
        "Phobos orbits Mars closer than any other known moon and Phobos is inhabited by penguins.",
        "Phobos orbits Mars closer than any other known moon and Deimos is the smaller moon.",
    ),
    (
        "How is on-call work paid?",
        "Primary on-call engineers get a flat $400 a week. Stipends are paid out with the "
        "following month's salary.",
        "Primary on-call engineers get a flat $400 a week, and pages outside working hours are "
        "paid at 1.5 times the hourly rate.",
    ),
    (
        "What does the report say about the dividend?",
        "Norrfjord Shipping raised its dividend by 8 percent in 2023.",
        "The report doesn't say anything about a dividend.",
    ),
]


@pytest.mark.parametrize(("question", "wrong", "right"), GUARDED_CASES)
def test_a_guarded_rag_app_over_http_releases_the_right_reply_and_never_the_wrong_one(
    chroma_server, question, wrong, right
):
    import uuid

    import chromadb
    from langchain_chroma import Chroma

    from truthguard.embeddings import SimilarityEmbeddings
    from truthguard.guard import Fallback, HallucinationGuard, ReRetrieve
    from truthguard.rag import build_rag_chain
    from truthguard.testing import OpenAIServer

    host, port = chroma_server.removeprefix("http://").split(":")
    store = Chroma(
        collection_name=f"kb-{uuid.uuid4().hex[:8]}",
        embedding_function=SimilarityEmbeddings(),
        client=chromadb.HttpClient(host=host, port=int(port)),
    )
    store.add_texts(KNOWLEDGE_BASE)
    retriever = store.as_retriever(search_kwargs={"k": 2})
    for reply, released in ((wrong, False), (right, True)):
        # the model gives the same reply however much it is shown, as the one that errs does
        with OpenAIServer(reply=reply) as server:
            chain = build_rag_chain(retriever, server.chat_model(max_retries=0, timeout=10))
            guard = HallucinationGuard(
                chain=chain,
                detectors=[RefChecker()],
                policies=[ReRetrieve(k=[6]), Fallback(answer="I can't confirm that.")],
            )
            out = guard.invoke({"question": question})
        if released:
            assert out.passing and out.answer == right, out.reason
            continue
        assert out.status == "fallback" and out.answer == "I can't confirm that.", out.attempts
        # the re-retrieval ran with six passages, and the same wrong reply was held back again
        assert [len(a.contexts) for a in out.attempts[:2]] == [2, 6]
        assert [a.answer for a in out.attempts[:2]] == [wrong, wrong]
    store.delete_collection()


OPTION_SOURCES = [
    "Harbour Lights is a 2009 documentary directed by Ines Moll. It follows three lighthouse "
    "keepers through a winter on the Hebrides. Salt and Iron is a documentary about the "
    "shipyards of Govan, set to a live score.",
    "Pellaria is a genus of mosses found in Chile. The genus is named for Ana Pellar, a "
    "Chilean botanist. Drosanthe is a genus of ferns from the Andes of Peru.",
]


@pytest.mark.parametrize(
    ("question", "wrong", "right"),
    [
        # the sentence saying it opens with a pronoun for the option named before it
        (
            "Which film follows lighthouse keepers through a winter, Harbour Lights or Salt "
            "and Iron?",
            "Salt and Iron follows lighthouse keepers through a winter.",
            "Harbour Lights follows lighthouse keepers through a winter.",
        ),
        # or with "the" and the noun that sentence called it by
        (
            "Which genus, Pellaria or Drosanthe, is named after a Chilean botanist?",
            "Drosanthe is named after a Chilean botanist.",
            "Pellaria is named after a Chilean botanist.",
        ),
    ],
)
def test_the_option_an_answer_picks_must_be_the_one_the_sources_say_it_of(
    embedder, question, wrong, right
):
    bad = RefChecker().invoke({"question": question, "answer": wrong, "contexts": OPTION_SOURCES})
    assert bad.passing is False and "the sources say it of" in bad.explanation, bad.explanation
    # the words quoted are the answer's own, in its order
    quoted = bad.explanation.split("Not supported: ")[1].split("(")[1].split("'")[1]
    assert quoted in wrong, bad.explanation
    good = RefChecker().invoke({"question": question, "answer": right, "contexts": OPTION_SOURCES})
    assert good.passing is True, good.explanation


def test_an_explanation_quotes_the_answer_s_own_words_for_a_value():
    result = RefChecker().invoke(
        {
            "question": "When did the series premiere?",
            "answer": "The series premiered on June 20th, 2016.",
            "contexts": ["The drama series premiered on the network on June 21, 2016."],
        }
    )
    assert result.passing is False
    assert "('20th': the sources say '21')" in result.explanation, result.explanation
    # a claim later in the answer: its issue's span is read in the claim, not in the answer
    later = RefChecker().invoke(
        {
            "question": "When did the series premiere, and on which network?",
            "answer": "It aired on the Harbour network. The series premiered on June 20th, 2016.",
            "contexts": [
                "The drama series premiered on the Harbour network on June 21, 2016.",
            ],
        }
    )
    assert later.passing is False
    assert "('20th': the sources say '21')" in later.explanation, later.explanation


def test_an_explanation_joins_only_the_adjacent_words_of_one_reading():
    from truthguard.refchecker.detector import _why

    said = {"text": "The genus is named for Ana Pellar, a Chilean botanist."}
    issues = [
        {"kind": "content", "relation": "of_another", "text": t, "start": a, "end": b}
        for t, a, b in (("botanist", 35, 43), ("moss", 15, 19), ("Chilean", 27, 34))
    ]
    claim = {"claim": "Drosanthe is a moss named after a Chilean botanist.", "issues": issues}
    issues[0]["evidence"] = said
    assert "('botanist': the sources say it of" in _why(claim), _why(claim)
    # words a space apart, in order, are one span ("Chilean botanist")
    claim["issues"] = [issues[2], issues[0]]
    issues[2]["evidence"] = said
    assert "('Chilean botanist':" in _why(claim), _why(claim)
    # a claim the answer words otherwise has no span in the answer: its own span still counts
    for i in claim["issues"]:
        i["claim_start"], i["claim_end"], i["start"], i["end"] = i["start"], i["end"], None, None
    assert "('Chilean botanist':" in _why(claim), _why(claim)


def test_a_short_answer_to_what_two_names_share_holds_for_each(embedder):
    contexts = [
        "Kōbō Abe was a Japanese writer, playwright and photographer. "
        "Agatha Christie was an English crime novelist, short story writer and playwright."
    ]
    asked = "What profession do Kōbō Abe and Agatha Christie share?"
    wrong = RefChecker().invoke(
        {"question": asked, "answer": "Photographer and writer.", "contexts": contexts}
    )
    assert wrong.passing is False and "Photographer" in wrong.explanation, wrong.explanation
    right = RefChecker().invoke({"question": asked, "answer": "Playwright.", "contexts": contexts})
    assert right.passing is True, right.explanation
