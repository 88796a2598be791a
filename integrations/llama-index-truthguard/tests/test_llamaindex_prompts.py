from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import PromptTemplate, VectorStoreIndex
from llama_index.core.prompts import RichPromptTemplate

from truthguard.errors import InvalidInputError
from truthguard.selectors import FEWLExampleSelector
from truthguard.testing import FakeDetector, ScriptedChatModel
from truthguard_llamaindex import FEWLFewShot
from truthguard_llamaindex.testing import ChatModelLLM, KeywordEmbedding, corpus_nodes

POOL = [
    {
        "question": "How many moons does Mars have?",
        "answers": ["Mars has five moons.", "Mars has two moons, Phobos and Deimos."],
    },
    {
        "question": "Who invented movable type?",
        "answers": ["Gutenberg alone.", "Bi Sheng, in China, around 1040."],
    },
]


class _KeywordEmbeddings(Embeddings):
    """KeywordEmbedding for LangChain's vector store (the selector's side)."""

    def __init__(self) -> None:
        self.inner = KeywordEmbedding()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.inner.get_text_embedding(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.get_query_embedding(text)


class _CountingSelector(FEWLExampleSelector):
    def select_examples(self, input_variables):
        if not input_variables.get(self.question_key, "").strip():
            raise AssertionError("the selector was asked with a blank question")
        return super().select_examples(input_variables)


@pytest.fixture(scope="module")
def selector():
    # The longer candidate is the better one here: FEWL's role is played by a scripted scorer.
    scorer = FakeDetector(score=lambda inp: len(inp.answer) / 100)
    return _CountingSelector.from_examples(
        POOL, _KeywordEmbeddings(), scorer=scorer, vectorstore_cls=InMemoryVectorStore, k=1
    )


class _Recording(FEWLFewShot):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked = []

    def __call__(self, **kwargs):
        self.asked.append(kwargs.get("query_str"))
        return super().__call__(**kwargs)


QA = "Examples:\n{few_shot}\n---\nContext:\n{context_str}\n---\nQuestion: {query_str}\nAnswer: "


def test_blank_query_gives_no_examples_and_asks_nothing(selector):
    few_shot = FEWLFewShot(selector)
    assert few_shot(query_str="", context_str="") == ""
    assert few_shot(context_str="no question yet") == ""
    assert few_shot.selections == 0


def test_the_mapping_runs_inside_a_real_query(selector):
    few_shot = _Recording(selector)
    model = ScriptedChatModel(script=lambda p: "Two.")
    index = VectorStoreIndex(corpus_nodes(), embed_model=KeywordEmbedding())
    engine = index.as_query_engine(llm=ChatModelLLM(model=model), similarity_top_k=2)
    engine.update_prompts(
        {
            "response_synthesizer:text_qa_template": PromptTemplate(
                QA, function_mappings={"few_shot": few_shot}
            )
        }
    )
    assert str(engine.query("How many moons has Mars got?")) == "Two."
    prompt = model.calls[0]
    assert "Question: How many moons does Mars have?\nAnswer: Mars has two moons" in prompt
    assert "five moons" not in prompt  # the FEWL-best candidate, not the first one
    # LlamaIndex calls the mapping several times, once with a blank question; one search.
    assert "" in few_shot.asked and few_shot.asked.count("How many moons has Mars got?") >= 1
    assert len(few_shot.asked) >= 3 and few_shot.selections == 1
    engine.query("Who invented movable type?")
    assert "Bi Sheng, in China" in model.calls[1] and few_shot.selections == 2


def test_rich_prompt_template_uses_the_mapping(selector):
    few_shot = FEWLFewShot(selector, example_template="Q: {question} A: {answer}", prefix="> ")
    template = RichPromptTemplate(
        "{{ few_shot }}\nQuestion: {{ query_str }}", function_mappings={"few_shot": few_shot}
    )
    text = template.format(query_str="Who made movable type first?")
    assert text.startswith("> Q: Who invented movable type? A: Bi Sheng")
    assert template.format(query_str="").startswith("\nQuestion:")


def test_the_cache_is_bounded(selector):
    few_shot = FEWLFewShot(selector, cache_size=1)
    for q in ("Mars moons?", "movable type?", "Mars moons?"):
        few_shot(query_str=q)
    assert few_shot.selections == 3


def test_bad_arguments_name_the_field(selector):
    with pytest.raises(InvalidInputError, match="selector"):
        FEWLFewShot("not a selector")
    with pytest.raises(InvalidInputError, match="example_template"):
        FEWLFewShot(selector, example_template="{question} {gold}")
    with pytest.raises(InvalidInputError, match="example_template"):
        FEWLFewShot(selector, example_template="{question")
