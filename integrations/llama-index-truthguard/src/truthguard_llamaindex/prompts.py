"""Few-shot examples chosen by FEWL in LlamaIndex prompts, through ``function_mappings``.

LlamaIndex computes a template's function mappings on every ``format`` call, and a query
formats its prompt several times: once with an empty ``query_str`` to measure the empty
prompt, then for real, on deep copies of the template. :class:`FEWLFewShot` returns nothing
for a blank query, survives the copies, and remembers its last selections so the
nearest-question search runs once per question.
"""

from __future__ import annotations

import string
import threading
from collections import OrderedDict
from typing import Any

from truthguard.errors import InvalidInputError
from truthguard.selectors import FEWLExampleSelector

__all__ = ["DEFAULT_EXAMPLE_TEMPLATE", "FEWLFewShot"]

DEFAULT_EXAMPLE_TEMPLATE = "Question: {question}\nAnswer: {answer}"
"""How one selected example is written (``{question}`` and ``{answer}``)."""


class FEWLFewShot:
    """A ``function_mappings`` entry that writes the FEWL-selected examples for the query.

    Args:
        selector: The example selector (each example's answer is its FEWL-best candidate).
        query_var: Template variable holding the question (LlamaIndex QA prompts: ``query_str``).
        example_template: Format of one example, with ``{question}`` and ``{answer}``.
        separator: Between examples.
        prefix: Written before the examples (only when there are some).
        cache_size: Selections remembered, by question.

    Example:
        >>> from llama_index.core import PromptTemplate
        >>> # few_shot = FEWLFewShot(selector)
        >>> # qa = PromptTemplate(
        >>> #     "{few_shot}\\n\\nContext:\\n{context_str}\\nQuestion: {query_str}\\nAnswer: ",
        >>> #     function_mappings={"few_shot": few_shot})
        >>> # query_engine.update_prompts({"response_synthesizer:text_qa_template": qa})
    """

    def __init__(
        self,
        selector: FEWLExampleSelector,
        *,
        query_var: str = "query_str",
        example_template: str = DEFAULT_EXAMPLE_TEMPLATE,
        separator: str = "\n\n",
        prefix: str = "",
        cache_size: int = 128,
    ) -> None:
        if not isinstance(selector, FEWLExampleSelector):
            raise InvalidInputError(
                "selector", f"expected a FEWLExampleSelector, got {type(selector).__name__}"
            )
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(example_template) if f}
        except ValueError as e:
            raise InvalidInputError("example_template", str(e)) from e
        unknown = sorted(names - {"question", "answer"})
        if unknown:
            raise InvalidInputError(
                "example_template", f"unknown fields {unknown}; use {{question}} and {{answer}}"
            )
        if cache_size < 0:
            raise InvalidInputError("cache_size", "must not be negative")
        self.selector = selector
        self.query_var = query_var
        self.example_template = example_template
        self.separator = separator
        self.prefix = prefix
        self.cache_size = cache_size
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.selections = 0
        """How many times the selector was actually asked (cache misses)."""

    # LlamaIndex deep-copies a template on every partial_format: copies share this mapping (and
    # its cache), as they would share a plain function.
    def __copy__(self) -> FEWLFewShot:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FEWLFewShot:
        return self

    def __call__(self, **kwargs: Any) -> str:
        query = kwargs.get(self.query_var)
        if not isinstance(query, str) or not query.strip():
            return ""  # LlamaIndex's measuring pass (or a prompt without the question yet)
        with self._lock:
            if query in self._cache:
                self._cache.move_to_end(query)
                return self._cache[query]
        text = self.render(query)
        with self._lock:
            self.selections += 1
            if self.cache_size:
                self._cache[query] = text
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return text

    def render(self, query: str) -> str:
        """The examples block for ``query`` (no cache)."""
        sel = self.selector
        examples = sel.select_examples({sel.question_key: query})
        if not examples:
            return ""
        blocks = [
            self.example_template.format(question=e[sel.question_key], answer=e[sel.answer_key])
            for e in examples
        ]
        return self.prefix + self.separator.join(blocks)
