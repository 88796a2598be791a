"""The detector base class: validation, invoke/batch (sync and async), error policy."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from pydantic import Field

from truthguard import DetectionResult, InvalidInputError, Label, LLMCallError, LLMSettings
from truthguard._clean import clean_text
from truthguard._text import has_content
from truthguard.detector import BaseDetector, DetectorInput
from truthguard.errors import InvalidLLMOutput
from truthguard.testing import FakeDetector, ScriptedChatModel

QA = {"question": "Who wrote Hamlet?", "answer": "Shakespeare"}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"answer": "x"}, "question"),
        ({"question": "   ", "answer": "x"}, "question"),
        ({"question": "q"}, "answer"),
        ({"question": "q", "answer": 3}, "answer"),
        ({"question": "q", "answer": "a", "contexts": "one string"}, "contexts"),
        ({"question": "q", "answer": "a", "contexts": ["ok", 7]}, "contexts[1]"),
        ({"question": "q", "answer": "a", "colour": "red"}, "colour"),
        ("just a string", "input"),
    ],
)
def test_bad_input_names_the_field(payload, field):
    with pytest.raises(InvalidInputError) as info:
        FakeDetector().invoke(payload)
    assert info.value.field == field
    assert str(info.value).startswith(field)


def test_documents_become_context_strings():
    r = FakeDetector().invoke({**QA, "contexts": [Document(page_content="doc text"), "plain"]})
    assert r.contexts == ["doc text", "plain"]


def test_threshold_sets_passing_and_result_echoes_input():
    r = FakeDetector(score=0.4, threshold=0.5).invoke(QA)
    assert r.passing is False and r.label == Label.HALLUCINATED and r.threshold == 0.5
    assert (r.question, r.answer) == (QA["question"], QA["answer"])
    # Without a threshold the label decides: a decided result always says whether it passes.
    assert FakeDetector(score=0.4).invoke(QA).passing is False
    assert FakeDetector(score=0.9).invoke(QA).passing is True
    assert FakeDetector(score=lambda i: None).invoke(QA).passing is None  # unverifiable


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), 2.0, -1.0, 1.0001])
def test_a_threshold_outside_the_score_range_is_refused(threshold):
    from truthguard.refchecker import RefChecker
    from truthguard.rv import ReverseValidation

    with pytest.raises(InvalidInputError) as info:
        RefChecker(threshold=threshold)
    assert info.value.field == "threshold"
    model = ScriptedChatModel(script=["x"])
    with pytest.raises(InvalidInputError) as info:
        ReverseValidation(model=model, threshold=threshold)
    assert info.value.field == "threshold"


def test_threshold_bounds_hold_only_for_bounded_scores():
    from truthguard.fewl import FEWL
    from truthguard.refchecker import RefChecker

    assert RefChecker(threshold=0.0).threshold == 0.0 and RefChecker(threshold=1).threshold == 1
    model = ScriptedChatModel(script=["x"])
    fewl = FEWL(reference_models=[model], threshold=-3.5)
    assert fewl.threshold == -3.5  # FEWL scores are unbounded
    with pytest.raises(InvalidInputError) as info:
        FEWL(reference_models=[model], threshold=float("nan"))
    assert info.value.field == "threshold"


def test_a_wrong_detector_option_names_the_field():
    from truthguard.refchecker import RefChecker

    with pytest.raises(InvalidInputError) as info:
        RefChecker(score="x")
    assert info.value.field == "score" and "entailment_ratio" in str(info.value)
    with pytest.raises(InvalidInputError) as info:
        FakeDetector(colour="red")
    assert info.value.field == "colour"


async def test_ainvoke_abatch_and_batch_agree():
    det = FakeDetector(score=lambda inp: len(inp.answer) / 10)
    inputs = [{"question": "q", "answer": "x" * n} for n in range(1, 6)]
    sync = [r.score for r in det.batch(inputs)]
    asy = [r.score for r in await det.abatch(inputs)]
    one = (await det.ainvoke(inputs[2])).score
    assert sync == asy == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert one == 0.3


async def test_abatch_is_bounded_by_batch_concurrency():
    # Waves of 0.5 s: two waves take at least 1 s; one wave stays well below it even on a
    # loaded machine (the margin is the whole second wave).
    det = FakeDetector(latency=0.5, batch_concurrency=2)
    started = time.perf_counter()
    await det.abatch([QA] * 4)
    assert time.perf_counter() - started >= 1.0  # two waves of two
    started = time.perf_counter()
    await det.abatch([QA] * 4, config={"max_concurrency": 4})
    assert time.perf_counter() - started < 1.0


def test_sync_batch_runs_concurrently():
    det = FakeDetector(latency=0.3, batch_concurrency=4)
    started = time.perf_counter()
    det.batch([QA] * 4)
    assert time.perf_counter() - started < 1.0


async def test_sync_invoke_works_inside_a_running_loop():
    # As in a notebook: a loop is running in this thread and the user calls invoke().
    assert FakeDetector(score=0.9).invoke(QA).score == 0.9


def test_failing_model_gives_invalid_result_not_an_exception():
    model = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    det = FakeDetector(model=model, llm_settings=LLMSettings(max_retries=0))
    r = det.invoke(QA)
    assert r.label == Label.INVALID
    assert "injected failure" in r.invalid_reason
    assert r.answer == QA["answer"]  # the user's answer is kept
    assert r.usage.failed_calls == 1


def test_raise_on_error_reraises():
    model = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    det = FakeDetector(model=model, llm_settings=LLMSettings(max_retries=0, raise_on_error=True))
    with pytest.raises(LLMCallError):
        det.invoke(QA)


class _Parsing(BaseDetector):
    detector_name = "parsing"
    model: ScriptedChatModel

    async def _acheck(self, inp: DetectorInput, session) -> DetectionResult:
        text = await session.acall(self.model, inp.answer, stage="parsing.verdict")
        if text not in ("yes", "no"):
            raise InvalidLLMOutput("expected yes or no", raw=text, stage="parsing.verdict")
        return DetectionResult(
            detector=self.detector_name,
            score=1.0 if text == "yes" else 0.0,
            label=Label.FACTUAL if text == "yes" else Label.HALLUCINATED,
        )


def test_garbage_output_is_invalid_with_raw_text_kept():
    r = _Parsing(model=ScriptedChatModel(script=lambda p: "¯\\_(ツ)_/¯")).invoke(QA)
    assert r.label == Label.INVALID
    assert r.raw_output == "¯\\_(ツ)_/¯"
    assert r.details["stage"] == "parsing.verdict"
    assert r.usage.llm_calls == 1


def test_usage_recorded_on_every_result():
    model = ScriptedChatModel(script=lambda p: "yes", latency=0.01)
    r = _Parsing(model=model).invoke(QA)
    assert r.usage.llm_calls == 1
    assert r.usage.prompt_tokens == 1 and r.usage.completion_tokens == 1
    assert r.usage.wall_seconds >= 0.01


class _Recorder(BaseCallbackHandler):
    def __init__(self):
        self.chains: list[str] = []
        self.llm_tags: list[list[str]] = []

    def on_chain_start(self, serialized, inputs, **kwargs):
        self.chains.append(kwargs.get("name") or "")

    def on_chat_model_start(self, serialized, messages, **kwargs):
        self.llm_tags.append(kwargs.get("tags") or [])


def test_model_calls_are_child_runs_of_the_detector_run():
    handler = _Recorder()
    _Parsing(model=ScriptedChatModel(script=lambda p: "yes")).invoke(
        QA, config={"callbacks": [handler]}
    )
    assert handler.chains and handler.chains[0] == "_Parsing"
    assert any("truthguard:parsing.verdict" in tags for tags in handler.llm_tags)


async def test_detector_is_a_runnable_in_a_chain():
    from langchain_core.runnables import RunnableLambda

    chain = RunnableLambda(lambda q: {"question": q, "answer": "42"}) | FakeDetector(score=0.7)
    assert (await chain.ainvoke("What is six times seven?")).score == 0.7


def test_construction_rejects_unknown_option():
    with pytest.raises(ValueError, match="threshhold"):
        FakeDetector(threshhold=0.5)


async def test_many_concurrent_checks_share_nothing():
    det = FakeDetector(score=lambda inp: float(inp.answer), latency=0.01)
    results = await asyncio.gather(
        *(det.ainvoke({"question": "q", "answer": str(i / 100)}) for i in range(50))
    )
    assert [r.score for r in results] == [i / 100 for i in range(50)]


class _FanOut(BaseDetector):
    """Eight independent model calls in one check."""

    detector_name = "fan_out"
    model: ScriptedChatModel

    async def _acheck(self, inp: DetectorInput, session) -> DetectionResult:
        outs = await session.gather(
            session.acall(self.model, f"{inp.question} #{i}", stage="fan_out.call")
            for i in range(8)
        )
        score = sum(o == "yes" for o in outs) / len(outs)
        return DetectionResult(detector=self.detector_name, score=score, label=Label.FACTUAL)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_one_check_with_eight_slow_calls_finishes_under_1_5_s(mode):
    det = _FanOut(model=ScriptedChatModel(script=lambda p: "yes", latency=0.5))
    started = time.perf_counter()
    r = det.invoke(QA) if mode == "sync" else await det.ainvoke(QA)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.5, elapsed  # eight sequential calls would take 4 s
    assert r.score == 1.0
    assert r.usage.llm_calls == 8
    assert r.usage.llm_seconds >= 8 * 0.5 > r.usage.wall_seconds


# -- text cleaning at the boundary ------------------------------------------------------------


class _Seen(FakeDetector):
    """Remembers the validated input it was given."""

    seen: list[DetectorInput] = Field(default_factory=list)

    async def _acheck(self, inp: DetectorInput, session) -> DetectionResult:
        self.seen.append(inp)
        return await super()._acheck(inp, session)


def test_clean_text_replaces_surrogates_and_drops_controls():
    from truthguard.detector import clean_text

    assert clean_text("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert clean_text("tab\tline\nret\r nul\x00 bell\x07 esc\x1b[0m del\x7f") == (
        "tab\tline\nret\r nul bell esc[0m del"
    )
    assert clean_text("Zürich 東京 🙂") == "Zürich 東京 🙂"
    text = "x" * 1_000_000 + "\ud800"
    assert clean_text(text).endswith("\ufffd") and len(clean_text(text)) == len(text)
    # A long text is cleaned piece by piece (bounded regex calls): the same result, pairs and
    # controls on a piece boundary included.
    from truthguard._clean import _PIECE

    long = "é" * (_PIECE - 1) + "\ud83d\ude00" + "\x00" * 3 + "a\ud800" * _PIECE
    expected = "é" * (_PIECE - 1) + "\U0001f600" + "a\ufffd" * _PIECE
    assert clean_text(long) == expected


def test_every_text_field_is_cleaned_once_at_the_boundary():
    det = _Seen(seen=[])
    r = det.invoke(
        {
            "question": "Who \ud800wrote Hamlet?\x00",
            "answer": "Shake\udfffspeare\x07",
            "contexts": ["ctx \ud83d", Document(page_content="doc \udc00\x00")],
        }
    )
    inp = det.seen[0]
    assert (inp.question, inp.answer) == ("Who \ufffdwrote Hamlet?", "Shake\ufffdspeare")
    assert inp.contexts == ["ctx \ufffd", "doc \ufffd"]
    assert r.answer == "Shake\ufffdspeare" and r.label == Label.FACTUAL
    r.model_dump_json()  # encodable: every sink and store can take it


def test_rv_and_refchecker_fields_are_cleaned_too():
    from truthguard.refchecker import RefCheckerInput
    from truthguard.rv import ReverseValidationInput

    rc = RefCheckerInput.model_validate(
        {
            "question": "Q?",
            "answer": "a",
            "references": ["ref \ud800", Document(page_content="\udc00")],
        }
    )
    assert rc.references == ["ref \ufffd", "\ufffd"]
    rv = ReverseValidationInput.model_validate({"answer": "passage\x00", "entity": " Ent\ud800 "})
    assert (rv.answer, rv.entity) == ("passage", "Ent\ufffd")


def test_text_blank_after_cleaning_is_an_input_error():
    with pytest.raises(InvalidInputError) as info:
        FakeDetector().invoke({"question": "\x00\x01\x02", "answer": "x"})
    assert info.value.field == "question"


# -- CancelledError from a model ----------------------------------------------------------------


def _cancelling_model(prompt):
    raise asyncio.CancelledError()  # what an HTTP client does when its own request is torn down


def test_cancelled_error_from_a_model_is_an_invalid_result_sync():
    det = FakeDetector(model=_cancelling_model, llm_settings=LLMSettings(max_retries=0))
    r = det.invoke(QA)
    assert r.label == Label.INVALID and r.passing is None
    assert r.details["failure"] == "llm_call" and "cancelled" in r.invalid_reason
    assert r.answer == QA["answer"]


async def test_cancelled_error_from_a_model_is_an_invalid_result_async():
    det = FakeDetector(
        model=_cancelling_model, threshold=0.5, llm_settings=LLMSettings(max_retries=0)
    )
    r = await det.ainvoke(QA)
    assert r.label == Label.INVALID and r.passing is None
    with pytest.raises(LLMCallError):
        await det.model_copy(
            update={"llm_settings": LLMSettings(max_retries=0, raise_on_error=True)}
        ).ainvoke(QA)


async def test_real_cancellation_of_the_caller_still_propagates():
    det = FakeDetector(latency=5.0)
    task = asyncio.create_task(det.ainvoke(QA))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_timeout_around_a_check_still_times_out():
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(FakeDetector(latency=5.0).ainvoke(QA), 0.05)


def test_model_call_failure_is_marked_as_an_outage():
    model = ScriptedChatModel(script=lambda p: "x", fail_first=99)
    r = FakeDetector(model=model, llm_settings=LLMSettings(max_retries=0)).invoke(QA)
    assert r.details["failure"] == "llm_call"
    bad = _Parsing(model=ScriptedChatModel(script=lambda p: "maybe")).invoke(QA)
    assert "failure" not in bad.details  # garbage output is not an outage


# -- property: arbitrary Unicode never escapes as an exception, never passes by error -----------

# Lone surrogates and control characters on purpose, mixed with any other character
# (st.characters() alone never yields a surrogate).
_ANY_CHAR = st.one_of(
    st.integers(0xD800, 0xDFFF).map(chr), st.characters(categories=["Cc"]), st.characters()
)
_TEXT = st.one_of(
    st.text(_ANY_CHAR, max_size=40),
    st.builds(
        lambda s: s * (1_000_000 // max(len(s), 1) + 1), st.text(_ANY_CHAR, min_size=1, max_size=3)
    ),
)


def _fields_ok(question: str) -> bool:
    from truthguard.detector import clean_text

    return bool(clean_text(question).strip())


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(question=_TEXT, answer=_TEXT, contexts=st.lists(_TEXT, max_size=3))
def test_any_text_gives_a_result_or_an_input_error(question, answer, contexts):
    det = FakeDetector(score=lambda inp: 0.0 if "\ufffd" in inp.answer else 1.0, threshold=0.5)
    payload = {"question": question, "answer": answer, "contexts": contexts}
    try:
        r = det.invoke(payload)
    except InvalidInputError as e:
        assert e.field == "question" and not _fields_ok(question)
        return
    assert _fields_ok(question)
    r.model_dump_json()
    if not has_content(clean_text(answer)):
        assert r.label == Label.UNVERIFIABLE and r.details["reason"] == "no_content"
    elif any("\ud800" <= c <= "\udfff" for c in answer):
        assert r.passing is False  # the scripted score saw the replacement character


_PAIRS = "".join(
    f"{i}. Wrong: A wrong claim number {i}.\n{i}. Corrected: The corrected claim number {i}.\n"
    for i in (1, 2, 3)
)


def _echo_script(prompt: str) -> str:
    if "numbered list" in prompt:
        return "1. A tree genus\n2. Called the tree of heaven"
    if "Which entity" in prompt:
        return "The entity is Ailanthus, which meets 100% of the points."
    if "deliberately false" in prompt:
        return _PAIRS
    return prompt[-80:]  # echo: the model sees (and returns) whatever text reached it


_REAL: dict[str, BaseDetector] = {}


def _real_detectors(embedder, tmp_path_factory) -> dict[str, BaseDetector]:
    if not _REAL:
        from truthguard.fewl import FEWL
        from truthguard.refchecker import RefChecker
        from truthguard.rv import ReverseValidation
        from truthguard.similarity import LexicalSimilarity
        from truthguard.store import ArtifactStore

        store = ArtifactStore(tmp_path_factory.mktemp("chroma"), embedder=embedder)
        store.add_questions(["Who painted the Mona Lisa?", "What is the capital of Peru?"])
        model = ScriptedChatModel(script=_echo_script)
        _REAL.update(
            rv=ReverseValidation(model=model, variant="em", threshold=0.5),
            refchecker=RefChecker(similarity=embedder, threshold=0.5),
            fewl=FEWL(
                reference_models=[model],
                store=store,
                similarity=LexicalSimilarity(),
                k_neighbors=2,
                min_pairs=2,
                threshold=0.0,
            ),
        )
    return _REAL


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    question=st.text(_ANY_CHAR, max_size=30),
    answer=st.text(_ANY_CHAR, max_size=60),
    ref=st.text(_ANY_CHAR, max_size=60),
)
@example(question="Q\ud800?", answer="Dubai \ud800 is in the UAE.", ref="Dubai is in the UAE.")
def test_any_text_through_every_detector(embedder, tmp_path_factory, question, answer, ref):
    for name, det in _real_detectors(embedder, tmp_path_factory).items():
        payload = {"question": question, "answer": answer, "contexts": [ref]}
        if name == "refchecker":
            payload["references"] = [ref]
        try:
            r = det.invoke(payload)
        except InvalidInputError as e:
            assert e.field in ("question", "answer"), (name, e)
            continue
        r.model_dump_json()  # encodable by every sink and store
        if r.label == Label.INVALID:
            assert r.passing is not True, (name, r)  # an error never passes


def test_warm_up_loads_the_similarity_backends_a_detector_uses(monkeypatch):
    from truthguard.refchecker import RefChecker
    from truthguard.rv import ReverseValidation
    from truthguard.similarity import EmbeddingSimilarity, get_default_similarity

    loaded = []
    monkeypatch.setattr(EmbeddingSimilarity, "warm_up", lambda self: loaded.append(self))
    rc = RefChecker()  # similarity=None stands for the packaged default
    assert rc.warm_up() is rc
    assert loaded == [get_default_similarity()]
    loaded.clear()
    ReverseValidation(model=ScriptedChatModel(default="x")).warm_up()  # None: no embedding
    FakeDetector(score=1.0).warm_up()
    assert loaded == []


# -- store writes: deferred while the check goes on, done before it returns -----------------------


class _Writer(BaseDetector):
    """Asks one model through the store, like the real detectors do."""

    detector_name = "writer"
    model: ScriptedChatModel
    store: object

    async def _acheck(self, inp: DetectorInput, session) -> DetectionResult:
        from truthguard.store import cached_call

        assert session.defer_writes  # detectors let writes finish in the background
        text = await cached_call(
            session,
            self.model,
            inp.question,
            store=self.store,
            question=inp.question,
            kind="answer",
            prompt_version="t",
            stage="writer.answer",
        )
        return DetectionResult(
            detector=self.detector_name, score=float(text == inp.answer), label=Label.FACTUAL
        )


class _Embedder:
    """Deterministic 4-dimensional vectors; ``fail`` makes every embed raise."""

    fail = False

    def embed(self, texts):
        import numpy as np

        if self.fail:
            raise RuntimeError("vector index unavailable")
        return np.array([[1.0, len(t) % 7, 0.5, 0.0] for t in texts], dtype=np.float32) / 2


def test_a_check_returns_with_its_answers_stored(tmp_path):
    from truthguard.llm import model_id
    from truthguard.store import ArtifactStore

    store = ArtifactStore(tmp_path / "s", embedder=_Embedder())
    det = _Writer(model=ScriptedChatModel(default="Shakespeare"), store=store)
    assert det.invoke(QA).score == 1.0
    assert store.get_artifact(QA["question"], "answer", model_id(det.model), "t") == "Shakespeare"


def test_a_failed_store_write_never_loses_the_result(tmp_path, caplog):
    from truthguard.store import ArtifactStore

    emb = _Embedder()
    store = ArtifactStore(tmp_path / "s", embedder=emb)
    emb.fail = True
    det = _Writer(model=ScriptedChatModel(default="Shakespeare"), store=store)
    with caplog.at_level("WARNING", logger="truthguard.llm"):
        result = det.invoke(QA)
    assert result.score == 1.0 and result.label == Label.FACTUAL
    assert "vector index unavailable" in caplog.text


def test_contexts_given_as_a_dict_are_refused_not_read_as_keys():
    from truthguard.refchecker import RefChecker

    with pytest.raises(InvalidInputError, match="contexts") as info:
        FakeDetector().invoke({"question": "q?", "answer": "a", "contexts": {"doc": "text"}})
    assert "dict" in str(info.value)
    with pytest.raises(InvalidInputError, match="references"):
        RefChecker().invoke({"question": "q?", "answer": "a", "references": {"doc": "text"}})
