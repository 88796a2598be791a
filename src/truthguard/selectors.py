"""``FEWLExampleSelector``: few-shot examples whose answer is the FEWL-best of its candidates.

FEWL's main use in the paper (appendix D.7) is picking in-context examples without gold answers:
for each pool question several candidate answers exist; the one FEWL scores highest becomes the
example's answer, and the k questions nearest to a new input are shown to the model.
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.example_selectors import BaseExampleSelector
from langchain_core.prompts import ChatPromptTemplate, FewShotChatMessagePromptTemplate
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
from pydantic import BaseModel, ConfigDict, Field

from truthguard._clean import clean_text
from truthguard._sync import run_sync
from truthguard.detector import BaseDetector
from truthguard.errors import InvalidInputError
from truthguard.guard.validation import input_errors

__all__ = ["ICL_SYSTEM_PROMPT", "FEWLExampleSelector", "ScoreFn", "icl_prompt"]

ScoreFn = Callable[[str, list[str]], Awaitable[list[float | None]] | list[float | None]]
"""A scorer as a function: (question, candidate answers) -> one score per candidate."""

# In-context answering prompt (our wording), after the few-shot QA setup of FEWL appendix D.7.
ICL_SYSTEM_PROMPT = (
    "You answer factual questions. Below are questions with answers that were checked for "
    "factual accuracy; follow their style and precision. If you do not know, say so instead "
    "of guessing."
)


async def _scores(scorer: Any, question: str, answers: list[str]) -> list[float | None]:
    """One score per answer, in order, from a detector (``arank`` if it has one) or a function."""
    if isinstance(scorer, BaseDetector):
        arank = getattr(scorer, "arank", None)
        if callable(arank):  # FEWL: all candidates share one set of artifacts
            ranked = await arank(question, answers)
            by_text: dict[str, float | None] = {}
            for text, result in ranked:
                by_text.setdefault(text, result.score)
            return [_score_value(by_text[a]) for a in answers]
        results = await scorer.abatch([{"question": question, "answer": a} for a in answers])
        return [_score_value(r.score) for r in results]
    if not callable(scorer):
        raise InvalidInputError("scorer", f"expected a detector or a function, got {scorer!r}")
    out = scorer(question, answers)
    if inspect.isawaitable(out):
        out = await out
    if isinstance(out, str | bytes) or not isinstance(out, Sequence | np.ndarray):
        raise InvalidInputError("scorer", f"returned {type(out).__name__}, expected a list")
    out = list(out)
    if len(out) != len(answers):
        raise InvalidInputError("scorer", f"returned {len(out)} scores for {len(answers)} answers")
    return [_score_value(s) for s in out]


def _score_value(score: Any) -> float | None:
    """A plain float (JSON-storable, comparable); NaN / inf count as no valid score."""
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise InvalidInputError("scorer", f"returned a non-numeric score {score!r}")
    value = float(score)
    return value if math.isfinite(value) else None


def _example_list(examples: Any) -> list[Any]:
    """``examples`` as a list; one dict or a string is a mistake, not a list of examples."""
    if isinstance(examples, str | bytes | Mapping) or not isinstance(examples, Sequence):
        raise InvalidInputError(
            "examples", f"expected a list of example dicts, got {type(examples).__name__}"
        )
    return list(examples)


def _best(scores: list[float | None]) -> int | None:
    valid = [(s, -i) for i, s in enumerate(scores) if s is not None]
    return -max(valid)[1] if valid else None


class FEWLExampleSelector(BaseExampleSelector, BaseModel):
    """Pick the k pool questions nearest to the input, each with its FEWL-best answer.

    Each example is a dict with the question (``question_key``) and a list of candidate answers
    (``answers_key``). When an example is added, every candidate is scored (FEWL's ``arank`` when
    the scorer has it, else one check per candidate) and the scores are cached in the vector
    store's metadata, so selection costs one similarity search. ``mode="baseline"`` returns the
    first candidate instead (plain similarity selection, for comparison).

    In ``fewl`` mode an example none of whose candidates got a valid score is skipped, so a
    selection may hold fewer than ``k`` examples. Selected examples are
    ``{question_key: ..., answer_key: ...}`` dicts, ready for ``FewShotPromptTemplate`` /
    ``FewShotChatMessagePromptTemplate``.

    Example:
        >>> from langchain_core.vectorstores import InMemoryVectorStore
        >>> from truthguard.embeddings import SimilarityEmbeddings
        >>> from truthguard.testing import FakeDetector
        >>> scorer = FakeDetector(score=lambda inp: len(inp.answer) / 100)
        >>> selector = FEWLExampleSelector.from_examples(
        ...     [{"question": "Capital of France?", "answers": ["Paris", "Paris, on the Seine"]}],
        ...     SimilarityEmbeddings(), scorer=scorer, vectorstore_cls=InMemoryVectorStore, k=1)
        >>> selector.select_examples({"question": "What is France's capital?"})[0]["answer"]
        'Paris, on the Seine'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    vectorstore: VectorStore
    """Holds one document per pool question (text = the question, metadata = the candidates)."""
    scorer: Any
    """A detector (FEWL by default in practice) or a :data:`ScoreFn`; higher = more factual."""
    k: int = Field(default=4, ge=1)
    """Examples returned per selection."""
    mode: Literal["fewl", "baseline"] = "fewl"
    """``fewl``: the best-scored candidate; ``baseline``: the first candidate."""
    use_mmr: bool = False
    """Use maximal marginal relevance for more diverse questions."""
    fetch_k: int = Field(default=20, ge=1)
    """Candidates fetched before MMR re-ranking."""
    lambda_mult: float = Field(default=0.5, ge=0, le=1)
    """MMR trade-off: 1 = pure similarity, 0 = pure diversity."""
    question_key: str = "question"
    """Key of the question in examples and in the selection input."""
    answers_key: str = "answers"
    """Key of the candidate answers in pool examples."""
    answer_key: str = "answer"
    """Key of the chosen answer in selected examples."""
    include_score: bool = False
    """Add ``fewl_score`` to each selected example."""

    def __init__(self, **kwargs: Any) -> None:
        with input_errors():
            super().__init__(**kwargs)

    # -- adding -----------------------------------------------------------------------------------

    def _parse(self, example: Any) -> tuple[str, list[str]]:
        if not isinstance(example, Mapping):
            raise InvalidInputError(
                "example",
                f"expected a dict with {self.question_key!r} and {self.answers_key!r}, "
                f"got {type(example).__name__}",
            )
        question = example.get(self.question_key)
        if not isinstance(question, str) or not clean_text(question).strip():
            raise InvalidInputError(self.question_key, "each example needs a non-blank question")
        answers = example.get(self.answers_key)
        if isinstance(answers, str) or not isinstance(answers, Sequence) or not answers:
            raise InvalidInputError(self.answers_key, "each example needs a list of answers")
        if not all(isinstance(a, str) for a in answers):
            raise InvalidInputError(self.answers_key, "answers must be strings")
        # Cleaned once here: the texts go to the embedder and the vector store as they are.
        return clean_text(question), [clean_text(a) for a in answers]

    async def _metadata(self, example: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        question, answers = self._parse(example)
        scores = await _scores(self.scorer, question, answers)
        best = _best(scores)
        meta = {
            "question": question,
            "answers": json.dumps(answers),
            "scores": json.dumps(scores),
            "best": -1 if best is None else best,
        }
        return question, meta

    async def aadd_example(self, example: dict[str, Any]) -> str:
        """Score the example's candidates and store it; returns its id."""
        question, meta = await self._metadata(example)
        ids = await self.vectorstore.aadd_texts([question], metadatas=[meta])
        return ids[0]

    def add_example(self, example: dict[str, Any]) -> str:
        """Score the example's candidates and store it; returns its id."""
        return run_sync(self.aadd_example(example))

    async def aadd_examples(self, examples: Sequence[dict[str, Any]]) -> list[str]:
        """Add several examples (scored one after the other; one vector-store write)."""
        examples = _example_list(examples)
        for e in examples:  # a malformed example fails before any (paid) scoring call
            self._parse(e)
        pairs = [await self._metadata(e) for e in examples]
        if not pairs:
            return []
        return await self.vectorstore.aadd_texts(
            [q for q, _ in pairs], metadatas=[m for _, m in pairs]
        )

    def add_examples(self, examples: Sequence[dict[str, Any]]) -> list[str]:
        """Sync twin of :meth:`aadd_examples`."""
        return run_sync(self.aadd_examples(examples))

    # -- selecting --------------------------------------------------------------------------------

    def _query(self, input_variables: dict[str, Any]) -> str:
        if not isinstance(input_variables, Mapping):
            raise InvalidInputError(
                "input_variables", f"expected a dict, got {type(input_variables).__name__}"
            )
        q = input_variables.get(self.question_key)
        if not isinstance(q, str) or not clean_text(q).strip():
            raise InvalidInputError(self.question_key, "the selection input needs a question")
        return clean_text(q)

    def _to_examples(self, docs: list[Any]) -> list[dict[str, Any]]:
        out = []
        for d in docs:
            try:
                meta = d.metadata
                answers = json.loads(meta["answers"])
                scores = json.loads(meta["scores"])
                best = int(meta["best"])
                question = meta["question"]
                idx = 0 if self.mode == "baseline" else best
                if idx >= 0:
                    answers[idx], scores[idx]
            except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
                raise InvalidInputError(
                    "vectorstore", f"holds a document this selector did not add ({e!r})"
                ) from e
            if self.mode == "fewl" and best < 0:
                continue  # no candidate got a valid score: never substitute a default
            ex = {self.question_key: question, self.answer_key: answers[idx]}
            if self.include_score:
                ex["fewl_score"] = scores[idx]
            out.append(ex)
        return out

    def select_examples(self, input_variables: dict[str, Any]) -> list[dict[str, Any]]:
        query = self._query(input_variables)
        if self.use_mmr:
            docs = self.vectorstore.max_marginal_relevance_search(
                query, k=self.k, fetch_k=self.fetch_k, lambda_mult=self.lambda_mult
            )
        else:
            docs = self.vectorstore.similarity_search(query, k=self.k)
        return self._to_examples(docs)

    async def aselect_examples(self, input_variables: dict[str, Any]) -> list[dict[str, Any]]:
        query = self._query(input_variables)
        if self.use_mmr:
            docs = await self.vectorstore.amax_marginal_relevance_search(
                query, k=self.k, fetch_k=self.fetch_k, lambda_mult=self.lambda_mult
            )
        else:
            docs = await self.vectorstore.asimilarity_search(query, k=self.k)
        return self._to_examples(docs)

    # -- construction -----------------------------------------------------------------------------

    @classmethod
    async def afrom_examples(
        cls,
        examples: Sequence[dict[str, Any]],
        embeddings: Embeddings,
        *,
        scorer: Any,
        vectorstore_cls: type[VectorStore] | None = None,
        vectorstore_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> FEWLExampleSelector:
        """Build a selector over a new vector store (Chroma by default) holding ``examples``.

        The store is made before any (paid) scoring call, so a store that cannot be made costs
        none: the default :class:`~truthguard.vectorstore.ChromaVectorStore` is created empty
        first. Any other class is built with the standard ``vectorstore_cls.afrom_texts(
        questions, embeddings, metadatas=..., **vectorstore_kwargs)`` (``InMemoryVectorStore``,
        ``langchain_chroma.Chroma``, FAISS, ...), which needs a first text: the first example is
        scored, the store built with it, then the others are scored and added.
        """
        examples = _example_list(examples)
        if not examples:
            raise InvalidInputError("examples", "needs at least one example")
        # Validate the options before any scoring, with a throw-away store.
        probe = cls(vectorstore=InMemoryVectorStore(embedding=embeddings), scorer=scorer, **kwargs)
        for e in examples:  # and every example, so a bad one wastes no scoring call
            probe._parse(e)
        if vectorstore_cls is None:
            from truthguard.vectorstore import ChromaVectorStore

            store: VectorStore = ChromaVectorStore(embeddings, **(vectorstore_kwargs or {}))
            rest = examples
        else:
            question, meta = await probe._metadata(examples[0])
            store = await vectorstore_cls.afrom_texts(
                [question], embeddings, metadatas=[meta], **(vectorstore_kwargs or {})
            )
            rest = examples[1:]
        selector = cls(vectorstore=store, scorer=scorer, **kwargs)
        await selector.aadd_examples(rest)
        return selector

    @classmethod
    def from_examples(
        cls,
        examples: Sequence[dict[str, Any]],
        embeddings: Embeddings,
        *,
        scorer: Any,
        vectorstore_cls: type[VectorStore] | None = None,
        vectorstore_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> FEWLExampleSelector:
        """Sync twin of :meth:`afrom_examples`."""
        return run_sync(
            cls.afrom_examples(
                examples,
                embeddings,
                scorer=scorer,
                vectorstore_cls=vectorstore_cls,
                vectorstore_kwargs=vectorstore_kwargs,
                **kwargs,
            )
        )


def icl_prompt(selector: FEWLExampleSelector) -> ChatPromptTemplate:
    """A ready chat prompt: system instructions, the selected examples, then the question.

    Example:
        >>> # prompt = icl_prompt(selector); (prompt | model).invoke({"question": "..."})
    """
    q, a = selector.question_key, selector.answer_key
    few_shot = FewShotChatMessagePromptTemplate(
        example_selector=selector,
        example_prompt=ChatPromptTemplate.from_messages(
            [("human", f"{{{q}}}"), ("ai", f"{{{a}}}")]
        ),
        input_variables=[q],
    )
    return ChatPromptTemplate.from_messages(
        [("system", ICL_SYSTEM_PROMPT), few_shot, ("human", f"{{{q}}}")]
    )
