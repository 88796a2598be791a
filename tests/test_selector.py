"""FEWLExampleSelector: picks the best-scored candidate, works in few-shot prompt templates."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from langchain_core.prompts import FewShotPromptTemplate, PromptTemplate
from langchain_core.vectorstores import InMemoryVectorStore

from truthguard.embeddings import SimilarityEmbeddings
from truthguard.errors import InvalidInputError
from truthguard.selectors import FEWLExampleSelector, icl_prompt
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard.vectorstore import ChromaVectorStore

POOL = [
    {
        "question": "What is the capital of France?",
        "answers": ["Lyon is the capital.", "Paris is the capital of France."],
    },
    {
        "question": "Who wrote the play Hamlet?",
        "answers": ["Christopher Marlowe.", "William Shakespeare wrote Hamlet."],
    },
    {
        "question": "What is the boiling point of water at sea level?",
        "answers": ["50 degrees Celsius.", "100 degrees Celsius at sea level."],
    },
]
TRUE = {"Paris is the capital of France.", "William Shakespeare wrote Hamlet.",
        "100 degrees Celsius at sea level."}  # fmt: skip


def truth_scorer() -> FakeDetector:
    return FakeDetector(score=lambda inp: 1.0 if inp.answer in TRUE else 0.1)


@pytest.fixture()
def embeddings(embedder):
    return SimilarityEmbeddings(embedder)


def test_selects_nearest_question_with_best_answer(embeddings):
    selector = FEWLExampleSelector.from_examples(
        POOL, embeddings, scorer=truth_scorer(), vectorstore_cls=InMemoryVectorStore, k=1
    )
    picked = selector.select_examples({"question": "Which city is France's capital?"})
    assert picked == [
        {"question": "What is the capital of France?", "answer": "Paris is the capital of France."}
    ]
    baseline = selector.model_copy(update={"mode": "baseline"})
    assert (
        baseline.select_examples({"question": "Which city is France's capital?"})[0]["answer"]
        == "Lyon is the capital."
    )


def test_scores_are_cached_at_add_time(embeddings):
    scorer = truth_scorer()
    selector = FEWLExampleSelector.from_examples(
        POOL, embeddings, scorer=scorer, vectorstore_cls=InMemoryVectorStore, k=2
    )
    assert scorer.check_count == 6
    for _ in range(3):
        selector.select_examples({"question": "Who is the author of Hamlet?"})
    assert scorer.check_count == 6  # selection costs no check
    doc = selector.vectorstore.similarity_search("Hamlet", k=1)[0]
    assert json.loads(doc.metadata["scores"]) == [0.1, 1.0]


def test_works_inside_few_shot_prompt_template(embeddings):
    selector = FEWLExampleSelector.from_examples(
        POOL, embeddings, scorer=truth_scorer(), vectorstore_cls=InMemoryVectorStore, k=2
    )
    prompt = FewShotPromptTemplate(
        example_selector=selector,
        example_prompt=PromptTemplate.from_template("Q: {question}\nA: {answer}"),
        suffix="Q: {question}\nA:",
        input_variables=["question"],
    )
    text = prompt.format(question="Who authored Hamlet?")
    assert "William Shakespeare wrote Hamlet." in text and "Marlowe" not in text
    assert text.endswith("Q: Who authored Hamlet?\nA:")


async def test_icl_chat_prompt_with_a_model(embeddings):
    selector = await FEWLExampleSelector.afrom_examples(
        POOL, embeddings, scorer=truth_scorer(), vectorstore_cls=InMemoryVectorStore, k=1
    )
    model = ScriptedChatModel(script=lambda p: "ok")
    await (icl_prompt(selector) | model).ainvoke({"question": "Capital city of France?"})
    sent = model.calls[0]
    assert "Paris is the capital of France." in sent and "Lyon" not in sent
    assert sent.rstrip().endswith("Capital city of France?")


def test_default_store_is_chroma_and_mmr_diversifies(embeddings):
    pool = [
        *POOL,
        {"question": "What is the capital city of France?", "answers": ["Paris."]},
    ]
    selector = FEWLExampleSelector.from_examples(
        pool, embeddings, scorer=truth_scorer(), k=2, use_mmr=True, lambda_mult=0.1
    )
    assert isinstance(selector.vectorstore, ChromaVectorStore)
    questions = [e["question"] for e in selector.select_examples({"question": "France capital?"})]
    assert len(questions) == 2
    assert not {"What is the capital of France?", "What is the capital city of France?"} <= set(
        questions
    )  # the near-duplicate is not picked twice


def test_score_function_and_invalid_scores(embeddings):
    def scorer(question, answers):
        return [None for _ in answers] if "Hamlet" in question else [len(a) for a in answers]

    selector = FEWLExampleSelector.from_examples(
        POOL, embeddings, scorer=scorer, vectorstore_cls=InMemoryVectorStore, k=3
    )
    picked = selector.select_examples({"question": "Who wrote Hamlet?"})
    assert "Who wrote the play Hamlet?" not in [p["question"] for p in picked]  # no valid score
    assert len(picked) == 2


def test_fewl_rank_is_used_when_available(embeddings, embedder):
    from truthguard.fewl import FEWL

    ref = ScriptedChatModel(model_name="ref", default="Paris is the capital of France.")
    fewl = FEWL(
        reference_models=[ref],
        mode="single",
        expertise="uniform",
        penalty=False,
        threshold=0.0,
        similarity=embedder,
    )
    selector = FEWLExampleSelector.from_examples(
        POOL[:1], embeddings, scorer=fewl, vectorstore_cls=InMemoryVectorStore, k=1
    )
    assert selector.select_examples({"question": "France's capital?"})[0]["answer"] == (
        "Paris is the capital of France."
    )
    assert ref.call_count == 1  # both candidates ranked on one set of reference answers


def test_bad_examples_name_the_field(embeddings):
    selector = FEWLExampleSelector(
        vectorstore=InMemoryVectorStore(embedding=embeddings), scorer=truth_scorer()
    )
    with pytest.raises(InvalidInputError, match="answers"):
        selector.add_example({"question": "Q?", "answers": "just one string"})
    with pytest.raises(InvalidInputError, match="question"):
        selector.select_examples({"query": "Q?"})


def test_bad_options_fail_before_any_scoring(embeddings):
    scorer = truth_scorer()
    with pytest.raises(InvalidInputError, match="k"):
        FEWLExampleSelector.from_examples(POOL, embeddings, scorer=scorer, k=0)
    assert scorer.check_count == 0
    with pytest.raises(InvalidInputError, match="examples"):
        FEWLExampleSelector.from_examples([], embeddings, scorer=scorer)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.add_example("not a dict"), "example"),
        (lambda s: s.add_example(None), "example"),
        (lambda s: s.add_examples("ab"), "examples"),
        (lambda s: s.add_examples(5), "examples"),
        (lambda s: s.add_examples({"question": "Q?", "answers": ["a"]}), "examples"),
        (lambda s: s.select_examples(None), "input_variables"),
        (lambda s: s.select_examples("What is the capital of France?"), "input_variables"),
        (lambda s: s.select_examples({"question": 5}), "question"),
        (lambda s: s.select_examples({"question": "\x00\x01 "}), "question"),
    ],
)
def test_wrong_input_types_raise_invalid_input_naming_the_field(embeddings, call, field):
    selector = FEWLExampleSelector(
        vectorstore=InMemoryVectorStore(embedding=embeddings), scorer=truth_scorer()
    )
    with pytest.raises(InvalidInputError) as e:
        call(selector)
    assert e.value.field == field


def test_wrong_collections_and_scorers_name_the_field(embeddings):
    with pytest.raises(InvalidInputError) as e:
        FEWLExampleSelector.from_examples(5, embeddings, scorer=truth_scorer())
    assert e.value.field == "examples"
    for scorer in (42, lambda q, answers: 0.5):
        selector = FEWLExampleSelector(
            vectorstore=InMemoryVectorStore(embedding=embeddings), scorer=scorer
        )
        with pytest.raises(InvalidInputError) as e:
            selector.add_example(POOL[0])
        assert e.value.field == "scorer"


def test_foreign_documents_in_the_store_name_the_vectorstore(embeddings):
    store = InMemoryVectorStore(embedding=embeddings)
    store.add_texts(["What is the capital of France?"], metadatas=[{"source": "elsewhere"}])
    selector = FEWLExampleSelector(vectorstore=store, scorer=truth_scorer(), k=1)
    with pytest.raises(InvalidInputError) as e:
        selector.select_examples({"question": "France's capital?"})
    assert e.value.field == "vectorstore"


def test_lone_surrogates_and_controls_are_cleaned_before_embedding(embeddings):
    pool = [{"question": "Capital of \ud800France?\x00", "answers": ["Lyon\udfff", "Paris"]}]
    selector = FEWLExampleSelector.from_examples(
        pool,
        embeddings,
        scorer=FakeDetector(score=lambda inp: float(inp.answer == "Paris")),
        vectorstore_cls=InMemoryVectorStore,
        k=1,
        include_score=True,
    )
    picked = selector.select_examples({"question": "France's capital \udc00?"})
    assert picked == [
        {"question": "Capital of \ufffdFrance?", "answer": "Paris", "fewl_score": 1.0}
    ]


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


def test_the_default_store_is_made_before_any_scoring(embeddings, tmp_path):
    scorer = truth_scorer()
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(Exception):  # noqa: B017 - Chroma's own error for a bad directory
        FEWLExampleSelector.from_examples(
            POOL,
            embeddings,
            scorer=scorer,
            vectorstore_kwargs={"persist_directory": not_a_dir / "chroma"},
        )
    assert scorer.check_count == 0


def test_another_store_class_costs_at_most_the_first_example_when_it_fails(embeddings):
    class Broken(InMemoryVectorStore):
        @classmethod
        async def afrom_texts(cls, *args, **kwargs):
            raise RuntimeError("cannot make the store")

    scorer = truth_scorer()
    with pytest.raises(RuntimeError, match="cannot make the store"):
        FEWLExampleSelector.from_examples(POOL, embeddings, scorer=scorer, vectorstore_cls=Broken)
    assert scorer.check_count == len(POOL[0]["answers"])


def test_built_over_langchain_chroma(embeddings):
    chroma = pytest.importorskip("langchain_chroma")
    selector = FEWLExampleSelector.from_examples(
        POOL, embeddings, scorer=truth_scorer(), vectorstore_cls=chroma.Chroma, k=1
    )
    picked = selector.select_examples({"question": "Which city is the capital of France?"})
    assert picked == [
        {"question": "What is the capital of France?", "answer": "Paris is the capital of France."}
    ]
